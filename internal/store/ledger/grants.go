package ledger

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"
)

// GrantRecord is a row of freebet_grants: a freebet granted to a player.
type GrantRecord struct {
	bun.BaseModel `bun:"table:freebet_grants"`

	PlayerID  string `bun:"player_id,pk"`
	GrantID   string `bun:"grant_id,pk"`
	Amount    int64  `bun:"amount"`
	Quantity  int    `bun:"quantity"`
	CreatedAt int64  `bun:"created_at"` // Unix ms
}

// InsertGrant inserts a grant. A grant with the same (player_id, grant_id) is
// kept as it is, whatever its amount, and the insert is a no-op.
func (s *Store) InsertGrant(ctx context.Context, g *GrantRecord) error {
	if _, err := s.conn(ctx).NewInsert().Model(g).On("CONFLICT (player_id, grant_id) DO NOTHING").Exec(ctx); err != nil {
		return fmt.Errorf("ledger: insert grant: %w", err)
	}
	return nil
}

// Grants lists a player's grants in the order they were made.
func (s *Store) Grants(ctx context.Context, playerID string) ([]GrantRecord, error) {
	var gs []GrantRecord
	if err := s.conn(ctx).NewSelect().Model(&gs).Where("player_id = ?", playerID).
		OrderExpr("created_at, rowid").Scan(ctx); err != nil {
		return nil, fmt.Errorf("ledger: read freebet grants: %w", err)
	}
	return gs, nil
}
