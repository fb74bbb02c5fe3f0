package movements_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/internal/movements"
	"github.com/crashstudio/crashgame/internal/store"
	"github.com/crashstudio/crashgame/internal/wallet/wallettest"
)

// Rule RB-6 ENV-13: EnqueueMany queues a batch with the checks of Enqueue: the
// debit's amount on a rollback, no transaction_id or bet twice.
func TestEnqueueMany(t *testing.T) {
	t.Parallel()
	mqEachBackend(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		if _, err := s.ExecForTest(ctx, `INSERT INTO rounds (id, game_id, seq, hash, crash_point, status, betting_ends_at, created_at)
			VALUES ('round-1', 'crash-classic', 1, 'h', 100, 'finished', 1, 1)`); err != nil {
			t.Fatal(err)
		}
		if _, err := s.ExecForTest(ctx, `INSERT INTO bets (id, round_id, game_id, session_hash, operator, currency, amount, status, placed_at)
			VALUES ('bet-rb-debit', 'round-1', 'crash-classic', ?, ?, 'BRL', 1000, 'accepted', 1)`, make([]byte, 32), wallettest.OperatorID); err != nil {
			t.Fatal(err)
		}
		many := func(ms ...movements.Movement) error {
			return s.InTx(ctx, func(ctx context.Context) error {
				return movements.EnqueueMany(ctx, s.Movements(), ms, time.UnixMilli(1795000000000))
			})
		}
		wrong := mqRollback("rb-debit")
		wrong.Amount = 999
		if err := many(mqWin("w-a"), wrong); !errors.Is(err, movements.ErrInvalidMovement) {
			t.Fatalf("a rollback of another amount than its debit's: %v", err)
		}
		if n := mqCountAll(t, s); n != 0 {
			t.Fatalf("%d movements after a refused batch", n)
		}
		if err := many(mqWin("w-a"), mqWin("w-b"), mqRollback("rb-debit")); err != nil {
			t.Fatal(err)
		}
		if n := mqCountAll(t, s); n != 3 {
			t.Fatalf("%d movements, want 3", n)
		}
		if got := mqGet(t, s, "w-b"); got.Status != movements.StatusPending || got.Amount != 2350 || got.NextAttemptAt.UnixMilli() != 1795000000000 {
			t.Fatalf("queued %+v", got)
		}
		if err := many(mqWin("w-c"), mqWin("w-a")); !errors.Is(err, movements.ErrDuplicateMovement) {
			t.Fatalf("a transaction_id queued twice: %v", err)
		}
	})
}
