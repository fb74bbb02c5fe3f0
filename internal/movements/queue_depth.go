package movements

import (
	"context"
	"fmt"
)

// Depth counts the pending, refused and exhausted movements (done ones, which
// only grow, are not counted), through the (status, next_attempt_at) index.
// It backs the queue-depth gauge.
func (q *Queue) Depth(ctx context.Context) (map[MovementStatus]int64, error) {
	n, err := q.st.CountMovements(ctx, string(StatusPending), string(StatusRefused), string(StatusExhausted))
	if err != nil {
		return nil, fmt.Errorf("wallet queue: count movements: %w", err)
	}
	return map[MovementStatus]int64{
		StatusPending:   n[string(StatusPending)],
		StatusRefused:   n[string(StatusRefused)],
		StatusExhausted: n[string(StatusExhausted)],
	}, nil
}
