package wallet

import (
	"context"
	"fmt"
)

// Depth counts the pending, refused and exhausted movements (done ones, which
// only grow, are not counted), through the (status, next_attempt_at) index.
// It backs the queue-depth gauge.
func (q *Queue) Depth(ctx context.Context) (map[MovementStatus]int64, error) {
	var rows []struct {
		Status MovementStatus `bun:"status"`
		N      int64          `bun:"n"`
	}
	err := q.db.NewRaw("SELECT status, COUNT(*) AS n FROM movements WHERE status IN ('pending', 'refused', 'exhausted') GROUP BY status").
		Scan(ctx, &rows)
	if err != nil {
		return nil, fmt.Errorf("wallet queue: count movements: %w", err)
	}
	counts := map[MovementStatus]int64{StatusPending: 0, StatusRefused: 0, StatusExhausted: 0}
	for _, r := range rows {
		counts[r.Status] = r.N
	}
	return counts, nil
}
