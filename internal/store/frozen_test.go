package store_test

import (
	"context"
	"errors"
	"net/url"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/integration/pgtest"
	"github.com/crashstudio/crashgame/internal/engine"
	"github.com/crashstudio/crashgame/internal/leadership"
	"github.com/crashstudio/crashgame/internal/store"
)

// openPostgresWith opens a new pgtest database with the DSN's query
// parameters params added, migrated.
func openPostgresWith(t *testing.T, params url.Values) *store.Store {
	t.Helper()
	u, err := url.Parse(pgtest.Start(t))
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	for k, vs := range params {
		q[k] = vs
	}
	u.RawQuery = q.Encode()
	s, err := store.Open(t.Context(), u.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if err := s.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	return s
}

// Every PostgreSQL connection the store opens, the lease's own included,
// ends a transaction left idle for 10 s (idle_in_transaction_session_timeout),
// unless the DSN says otherwise.
func TestPostgresIdleTransactionTimeout(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		params url.Values
		want   string
	}{
		{"the store's", nil, "10s"},
		{"the DSN's", url.Values{"idle_in_transaction_session_timeout": {"2500"}}, "2500ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := openPostgresWith(t, tc.params)
			pool, lease, err := store.Settings(t.Context(), s, "idle_in_transaction_session_timeout")
			if err != nil || pool != tc.want || lease != tc.want {
				t.Fatalf("idle_in_transaction_session_timeout: pool %q, lease's connection %q, %v; want %q", pool, lease, err, tc.want)
			}
		})
	}
}

// A replica frozen inside a fenced transaction (its lease checked, its lease
// row locked FOR KEY SHARE) holds up a takeover of its table only until the
// server ends its idle session: the takeover then gets the next epoch, and
// what the frozen transaction wrote never commits, not even when its process
// wakes up and carries on.
func TestFrozenCheckedTransactionEndsAtTheIdleTimeout(t *testing.T) {
	t.Parallel()
	s := openPostgresWith(t, url.Values{"idle_in_transaction_session_timeout": {"300"}})
	mustAcquire(t, s, "crash", "replica-a", leaseTTL, 1)
	expire(t, s, "crash") // replica-a is frozen: its lease ran out
	finish, txDone := openCheckedTx(t, s, 1, func(ctx context.Context) error {
		r := testRound("r-a", 1, engine.RoundBetting)
		r.Epoch = 1
		return s.InsertRound(ctx, r)
	})
	defer close(finish)

	takeover := startTakeover(s, "replica-b")
	start := time.Now()
	select {
	case got := <-takeover:
		t.Logf("takeover after %v", time.Since(start))
		if got.err != nil || !got.ok || got.epoch != 2 {
			t.Fatalf("takeover while replica-a is frozen = %+v; want epoch 2", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the takeover still waits for replica-a's frozen transaction 10 s on; want it ended by the server after 300 ms")
	}

	finish <- struct{}{} // replica-a wakes up and carries on
	start = time.Now()
	err := <-txDone
	t.Logf("frozen tx ended after %v: %v", time.Since(start), err)
	if err == nil {
		t.Fatal("replica-a's transaction committed after the server ended its session")
	}
	if _, err := s.Round(t.Context(), "crash", "r-a"); err == nil {
		t.Fatal("round r-a of replica-a's frozen transaction was stored")
	}
	if err := s.CheckLease(t.Context(), "crash", 1); !errors.Is(err, leadership.ErrFenced) {
		t.Fatalf("replica-a's next check = %v, want ErrFenced", err)
	}
}
