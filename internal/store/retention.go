package store

import (
	"context"
	"fmt"

	"github.com/crashstudio/crashgame/internal/engine"
	"github.com/uptrace/bun"
)

// PurgeSettled deletes, in one transaction, at most limit bets of rounds
// that ended before `before` and everything of them: their movements and
// those movements' re-deliveries. Only bets whose money is settled are
// purged: the bet is neither pending nor accepted, and none of its
// movements is pending or exhausted (a parked movement waits for its
// operator). The rounds themselves stay: their hash, crash point and times
// are the chain's public record, and hold no player's data. Back office
// links expired before `before` go too. It returns how many bets it purged.
func (s *Store) PurgeSettled(ctx context.Context, before Millis, limit int) (int, error) {
	var n int
	err := s.InTx(ctx, func(ctx context.Context) error {
		db := s.conn(ctx)
		ids := make([]string, 0, limit)
		err := db.NewSelect().TableExpr("bets AS b").Column("b.id").
			Join("JOIN rounds AS r ON r.id = b.round_id").
			Where("r.status IN (?)", bun.List([]string{engine.RoundFinished, engine.RoundVoid})).
			Where("COALESCE(r.crashed_at, r.betting_ends_at) < ?", before).
			Where("b.status NOT IN ('pending', 'accepted')").
			Where("NOT EXISTS (SELECT 1 FROM movements AS m WHERE m.bet_id = b.id AND m.status IN (?))",
				bun.List([]string{MovementPending, MovementExhausted})).
			OrderExpr("b.placed_at, b.id").Limit(int64(limit)).Scan(ctx, &ids)
		if err != nil {
			return fmt.Errorf("store: purge: select bets: %w", err)
		}
		n = len(ids)
		if n > 0 {
			for _, q := range []*bun.DeleteQuery{
				db.NewDelete().Table("movement_redeliveries").
					Where("transaction_id IN (SELECT transaction_id FROM movements WHERE bet_id IN (?))", bun.List(ids)),
				db.NewDelete().Table("movements").Where("bet_id IN (?)", bun.List(ids)),
				db.NewDelete().Table("bets").Where("id IN (?)", bun.List(ids)),
			} {
				if _, err := q.Exec(ctx); err != nil {
					return fmt.Errorf("store: purge %d bets: %w", n, err)
				}
			}
		}
		if _, err := db.NewDelete().Table("back_office_links").Where("expires_at < ?", before).Exec(ctx); err != nil {
			return fmt.Errorf("store: purge expired links: %w", err)
		}
		return nil
	})
	return n, err
}
