package movements_test

import (
	"context"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/internal/movements"
	"github.com/crashstudio/crashgame/internal/store"
	"github.com/crashstudio/crashgame/internal/wallet"
	"github.com/crashstudio/crashgame/internal/wallet/wallettest"
)

// restartBacklog is the backlog of the product target: a restart with 100,000
// queued movements serves again within 2 s.
const restartBacklog = 100_000

// mqFillBacklog writes n pending movements, due now, in one statement that
// generates the rows in the database (Enqueue one by one would measure the
// set-up, not the queue, and is very slow under the race detector).
func mqFillBacklog(t testing.TB, s *store.Store, n int, now time.Time) {
	t.Helper()
	m := mqWin("x")
	at := int64(store.MillisOf(now)) - int64(n)
	cols := "transaction_id, kind, operator, game_id, currency, player_id, token, round_id, bet_id, amount, " +
		"win_type, status, next_attempt_at, created_at"
	var query string
	if s.Dialect() == store.DialectPostgres {
		query = "INSERT INTO movements (" + cols + ") SELECT 'w-backlog-' || lpad(i::text, 7, '0'), 'win', ?, ?, ?, ?, ?, " +
			"'round-' || (i / 50), 'bet-backlog-' || i, ?, 'win', 'pending', ? + i, ? + i FROM generate_series(0, ? - 1) AS g(i)"
	} else {
		query = "WITH RECURSIVE seq(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM seq WHERE i + 1 < ?) " +
			"INSERT INTO movements (" + cols + ") SELECT printf('w-backlog-%07d', i), 'win', ?, ?, ?, ?, ?, " +
			"'round-' || (i / 50), 'bet-backlog-' || i, ?, 'win', 'pending', ? + i, ? + i FROM seq"
	}
	args := []any{m.Operator, m.GameID, m.Currency, m.PlayerID, m.Token, m.Amount, at, at}
	if s.Dialect() == store.DialectPostgres {
		args = append(args, n)
	} else {
		args = append([]any{n}, args...)
	}
	if _, err := s.ExecForTest(context.Background(), query, args...); err != nil {
		t.Fatalf("fill backlog: %v", err)
	}
}

// mqTimeToFirstSend starts a new Queue over the backlog and returns how long
// it took, from NewQueue to the operator receiving the first attempt, and the
// stop function.
func mqTimeToFirstSend(t testing.TB, s *store.Store, op *wallettest.Operator, c *wallet.Client) (time.Duration, func()) {
	t.Helper()
	first := make(chan time.Time, 1)
	start := time.Now()
	q := mqQueue(t, s, c)
	stop := mqStart(t, q)
	go func() {
		<-op.First()
		first <- time.Now()
	}()
	select {
	case at := <-first:
		return at.Sub(start), stop
	case <-time.After(60 * time.Second):
		t.Fatal("no attempt within 60 s of the start")
		return 0, stop
	}
}

// TestQueueRestart100k enqueues 100,000 movements (10,000 with -short, and on
// SQLite under -race), starts a Queue as a
// restarted process would, and logs the time to the first attempt and how
// many were delivered within 2 s. It asserts only that delivery begins and
// that nothing is sent twice; the figure is for the log (no timed assertion).
func TestQueueRestart100k(t *testing.T) {
	t.Parallel()
	mqEachBackend(t, func(t *testing.T, s *store.Store) {
		n := restartBacklog
		if testing.Short() || (mqRace && s.Dialect() == store.DialectSQLite) {
			n = 10_000 // the figure that matters is measured without -race and -short
		}
		fillStart := time.Now()
		mqFillBacklog(t, s, n, time.Now())
		t.Logf("backlog of %d movements written in %s", n, time.Since(fillStart).Round(time.Millisecond))

		op := wallettest.New(t, wallettest.Sequence(wallettest.OK))
		c := wallettest.Client(t, op)
		d, stop := mqTimeToFirstSend(t, s, op, c)
		time.Sleep(2*time.Second - d)
		stop()
		done := mqCountStatus(t, s)[movements.StatusDone]
		t.Logf("%s: time to first send with %d queued: %s; delivered within 2 s of the start: %d",
			s.Dialect(), n, d.Round(time.Microsecond), done)
		if done == 0 {
			t.Fatal("nothing delivered")
		}
		for id, k := range op.Counts() {
			if k != 1 {
				t.Errorf("%s sent %d times", id, k)
			}
		}
	})
}

// BenchmarkQueueRestart100k measures, on SQLite with 100,000 queued
// movements, the time from NewQueue to the first attempt received by the
// operator (ns/op is that time). Each iteration delivers a few movements of
// the backlog.
func BenchmarkQueueRestart100k(b *testing.B) {
	s := mqOpen(b, mqBackends[0].dsn(b))
	mqFillBacklog(b, s, restartBacklog, time.Now())
	var total time.Duration
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		op := wallettest.New(b, wallettest.Sequence(wallettest.OK))
		c := wallettest.Client(b, op)
		b.StartTimer()
		d, stop := mqTimeToFirstSend(b, s, op, c)
		b.StopTimer()
		stop()
		total += d
		b.StartTimer()
	}
	b.ReportMetric(float64(total.Microseconds())/float64(b.N)/1000, "ms-to-first-send")
}
