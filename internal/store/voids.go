package store

import (
	"context"
	"fmt"

	"github.com/crashstudio/crashgame/internal/engine"
)

// ChainVoids lists the void rounds of a chain by position, each with its
// revealed hash and crash point, when it took off (StartedAt, 0 when it never
// did), when and by which rule it was voided.
func (s *Store) ChainVoids(ctx context.Context, chainID string) ([]RoundRecord, error) {
	out := make([]RoundRecord, 0)
	err := s.conn(ctx).NewSelect().Model(&out).Where("chain_id = ?", chainID).Where("status = ?", engine.RoundVoid).
		OrderExpr("chain_position").Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("store: void rounds of chain %s: %w", chainID, err)
	}
	return out, nil
}
