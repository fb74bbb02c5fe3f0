package store_test

import (
	"context"
	"os"
	"testing"

	"github.com/crashstudio/crashgame/integration/pgtest"
	"github.com/crashstudio/crashgame/internal/store"
)

// BenchmarkOperatorMovementsPage10M: one page of 1,000 of an operator's
// movements over a day, all or of one status, from a table of 10 million
// movements of 20 operators over 100 days, on PostgreSQL, through the
// indexes of migration 0008 (the back office's target: under 50 ms a page).
// Filling the table takes a minute or two, so it runs only with
// CRASHGAME_BENCH_10M=1 (make bench-backoffice); -benchtime counts pages.
func BenchmarkOperatorMovementsPage10M(b *testing.B) {
	if os.Getenv("CRASHGAME_BENCH_10M") == "" {
		b.Skip("set CRASHGAME_BENCH_10M=1: it fills a table of 10 million movements first")
	}
	ctx := context.Background()
	s, err := store.Open(ctx, pgtest.Start(b))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	if err := s.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	const (
		rows = 10_000_000
		day  = int64(86_400_000)
		t0   = int64(1_790_000_000_000)
	)
	// 10 million movements, one every 0.864 s over 100 days, of 20
	// operators in turn (5,000 a day each), 1 in 50 exhausted (a fifth of
	// op-10's: 1,000 a day), 1 in 200 refused, the rest delivered.
	if _, err := s.ExecForTest(ctx, `INSERT INTO movements (transaction_id, kind, operator, game_id, currency, player_id, token,
		round_id, bet_id, amount, win_type, status, attempts, next_attempt_at, created_at, operator_tx_id)
		SELECT 'tx-' || i, 'win', 'op-' || (i % 20), 'crash', 'BRL', 'p-' || (i % 100000), 'tok', 'crash-' || (i / 50), 'bet-' || i,
			100 + i % 5000, 'win',
			CASE WHEN i % 50 = 0 THEN 'exhausted' WHEN i % 200 = 7 THEN 'refused' ELSE 'done' END,
			1, ?::bigint + i * 864, ?::bigint + i * 864, 'op-tx-' || i
		FROM generate_series(1, ?::bigint) AS i`, t0, t0, rows); err != nil {
		b.Fatal(err)
	}
	if _, err := s.ExecForTest(ctx, `ANALYZE movements`); err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct{ name, status string }{{"all", ""}, {"exhausted", store.MovementExhausted}} {
		b.Run(tc.name, func(b *testing.B) {
			day50 := t0 + 50*day
			f := store.OperatorMovementFilter{Operator: "op-10", From: store.Millis(day50), To: store.Millis(day50 + day),
				Status: tc.status, Limit: 1000}
			rows, pages := 0, 0
			for b.Loop() {
				page, err := s.OperatorMovements(ctx, f)
				if err != nil {
					b.Fatal(err)
				}
				rows, pages = rows+len(page), pages+1
				// The next page, as a client pages through the day.
				if len(page) == f.Limit {
					f.AfterCreated, f.AfterID = page[len(page)-1].CreatedAt, page[len(page)-1].TransactionID
				} else {
					f.AfterCreated, f.AfterID = 0, ""
				}
			}
			b.ReportMetric(float64(rows)/float64(pages), "rows/page")
		})
	}
}
