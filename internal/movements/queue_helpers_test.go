package movements_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/integration/pgtest"
	"github.com/crashstudio/crashgame/internal/movements"
	"github.com/crashstudio/crashgame/internal/store"
	"github.com/crashstudio/crashgame/internal/store/storetest"
	"github.com/crashstudio/crashgame/internal/wallet"
	"github.com/crashstudio/crashgame/internal/wallet/wallettest"
)

// The helpers of the queue, movements and bet-loop tests. Their names start
// with mq so that they never collide with the client tests' helpers.

// mqBackend opens a fresh, migrated database of one dialect.
type mqBackend struct {
	name string
	dsn  func(t testing.TB) string
}

var mqBackends = []mqBackend{
	{name: store.DialectSQLite, dsn: func(t testing.TB) string {
		return storetest.SQLite(t)
	}},
	{name: store.DialectPostgres, dsn: pgtest.Start},
}

// mqOpen opens and migrates dsn, closed when t ends.
func mqOpen(t testing.TB, dsn string) *store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), dsn)
	if err != nil {
		t.Fatalf("store.Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if err := s.Migrate(context.Background()); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	return s
}

// mqEachBackend runs f, in parallel, on a fresh database of every dialect.
func mqEachBackend(t *testing.T, f func(t *testing.T, s *store.Store)) {
	t.Helper()
	for _, b := range mqBackends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			f(t, mqOpen(t, b.dsn(t)))
		})
	}
}

// mqClock is a clock that moves only when told.
type mqClock struct{ ms atomic.Int64 }

func newMQClock() *mqClock {
	c := &mqClock{}
	c.ms.Store(1795000000000)
	return c
}

func (c *mqClock) Now() time.Time { return time.UnixMilli(c.ms.Load()) }

// AdvanceTo moves the clock to t if t is later.
func (c *mqClock) AdvanceTo(t time.Time) {
	for {
		cur := c.ms.Load()
		if t.UnixMilli() <= cur || c.ms.CompareAndSwap(cur, t.UnixMilli()) {
			return
		}
	}
}

// mqQueue returns a Queue over s sending through c.
func mqQueue(t testing.TB, s *store.Store, c *wallet.Client, opts ...movements.QueueOption) *movements.Queue {
	t.Helper()
	clients := func(op string) (*wallet.Client, bool) { return c, op == wallettest.OperatorID }
	q, err := movements.NewQueue(s.Movements(), movements.NewOutbox(s.Movements()), clients, append([]movements.QueueOption{movements.WithQueueLogger(mqDiscard()),
		movements.WithPollInterval(20 * time.Millisecond)}, opts...)...)
	if err != nil {
		t.Fatalf("NewQueue: %v", err)
	}
	return q
}

// mqStart runs q until the returned stop is called (or t ends); stop waits
// for Run to return.
func mqStart(t testing.TB, q *movements.Queue) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- q.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// mqWin and mqRollback are sample movements.
func mqWin(txID string) movements.Movement {
	return movements.Movement{TransactionID: txID, Kind: movements.KindWin, Operator: wallettest.OperatorID, GameID: "crash-classic",
		Currency: "BRL", PlayerID: wallettest.Player, Token: wallettest.Token, RoundID: "round-1", BetID: "bet-" + txID,
		Amount: 2350, WinType: wallet.WinTypeWin}
}

func mqRollback(txID string) movements.Movement {
	return movements.Movement{TransactionID: txID, Kind: movements.KindRollback, Operator: wallettest.OperatorID, GameID: "crash-classic",
		Currency: "BRL", PlayerID: wallettest.Player, Token: wallettest.Token, RoundID: "round-1", BetID: "bet-" + txID,
		Amount: 1000, Reason: "cancelled_by_player"}
}

// mqEnqueue queues ms in one committed transaction.
func mqEnqueue(t testing.TB, s *store.Store, now time.Time, ms ...movements.Movement) {
	t.Helper()
	err := s.InTx(context.Background(), func(ctx context.Context) error {
		for _, m := range ms {
			if err := movements.Enqueue(ctx, s.Movements(), m, now); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("enqueue: %v", err)
	}
}

// mqGet reads one movement, token included.
func mqGet(t testing.TB, s *store.Store, txID string) movements.MovementRecord {
	t.Helper()
	rec, err := s.GetMovement(context.Background(), txID)
	if err != nil {
		t.Fatalf("read movement %s: %v", txID, err)
	}
	return store.MovementOf(&rec)
}

// mqDrive plays time for the queue: whenever the movement waits for a later
// attempt, it moves clock to that instant and wakes the queue, until the
// movement reaches a final status (or timeout).
func mqDrive(t testing.TB, s *store.Store, q *movements.Queue, clock *mqClock, txID string, timeout time.Duration) movements.MovementRecord {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		rec := mqGet(t, s, txID)
		if rec.Status != movements.StatusPending {
			return rec
		}
		if rec.ClaimedBy == "" && rec.NextAttemptAt.After(clock.Now()) {
			clock.AdvanceTo(rec.NextAttemptAt)
			q.Notify()
		}
		time.Sleep(2 * time.Millisecond)
	}
	rec := mqGet(t, s, txID)
	t.Fatalf("movement %s still %s after %s (attempts %d, last error %q)", txID, rec.Status, timeout, rec.Attempts, rec.LastError)
	return rec
}

// mqWaitFor polls cond until it holds or timeout passes.
func mqWaitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// mqCountStatus counts movements by status.
func mqCountStatus(t testing.TB, s *store.Store) map[movements.MovementStatus]int {
	t.Helper()
	n, err := s.CountMovements(context.Background(),
		string(movements.StatusPending), string(movements.StatusDone), string(movements.StatusRefused), string(movements.StatusExhausted))
	if err != nil {
		t.Fatalf("count: %v", err)
	}
	out := map[movements.MovementStatus]int{}
	for status, k := range n {
		if k > 0 { // a status without movements is absent, as with GROUP BY
			out[movements.MovementStatus(status)] = int(k)
		}
	}
	return out
}

// mqCountAll counts every movement.
func mqCountAll(t testing.TB, s *store.Store) int {
	t.Helper()
	var n int
	if err := s.QueryRowForTest(context.Background(), "SELECT COUNT(*) FROM movements").Scan(&n); err != nil {
		t.Fatalf("count: %v", err)
	}
	return n
}

func mqIDs(prefix string, n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s-%06d", prefix, i)
	}
	return ids
}

func mqDiscard() *slog.Logger { return slog.New(slog.DiscardHandler) }
