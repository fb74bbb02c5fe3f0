package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/internal/engine"
	"github.com/crashstudio/crashgame/internal/leadership"
	"github.com/crashstudio/crashgame/internal/store"
)

// The contract of the tables' leases and their fencing epoch (leases.go), and
// of the epoch a round is opened under.
var leaseCases = []contractCase{
	{"LeaseAcquireRenewExpireRelease", testLeaseLifecycle},
	{"LeaseExpiredNotTakenOverRenews", testLeaseExpiredRenews},
	{"LeaseConcurrentAcquireOneWins", testLeaseConcurrentAcquire},
	{"LeaseCheckAfterTakeoverRollsBack", testLeaseCheckFenced},
	{"LeaseCheckedTransactionBlocksTakeover", testLeaseCheckBlocksTakeover},
	{"LeaseRenewalDoesNotWaitForCheckedTransactions", testLeaseRenewalUnblocked},
	{"LeaseRenewalDoesNotQueueForTheConnection", testLeaseRenewalOwnConnection},
	{"RoundStoresEpoch", testRoundEpoch},
	{"LeaseMigrationRerunKeepsData", testLeaseMigrationRerun},
}

const leaseTTL = time.Minute

func mustAcquire(t *testing.T, s *store.Store, gameID, holder string, ttl time.Duration, want int64) {
	t.Helper()
	epoch, ok, err := s.AcquireLease(t.Context(), gameID, holder, ttl)
	if err != nil || !ok || epoch != want {
		t.Fatalf("AcquireLease(%s, %s) = %d, %t, %v; want epoch %d", gameID, holder, epoch, ok, err, want)
	}
}

func mustBeRefused(t *testing.T, s *store.Store, gameID, holder string) {
	t.Helper()
	epoch, ok, err := s.AcquireLease(t.Context(), gameID, holder, leaseTTL)
	if err != nil || ok {
		t.Fatalf("AcquireLease(%s, %s) = %d, %t, %v; want refused without error", gameID, holder, epoch, ok, err)
	}
}

func mustRenew(t *testing.T, s *store.Store, gameID, holder string, epoch int64, ttl time.Duration, want bool) {
	t.Helper()
	ok, err := s.RenewLease(t.Context(), gameID, holder, epoch, ttl)
	if err != nil || ok != want {
		t.Fatalf("RenewLease(%s, %s, %d) = %t, %v; want %t", gameID, holder, epoch, ok, err, want)
	}
}

func mustLease(t *testing.T, s *store.Store, gameID string) store.LeaseRecord {
	t.Helper()
	rec, err := s.Lease(t.Context(), gameID)
	if err != nil {
		t.Fatalf("Lease(%s): %v", gameID, err)
	}
	return rec
}

// acquireOnceExpired polls AcquireLease for holder until the lease, given a
// tiny ttl, has expired on the database's clock and holder gets it. It fails
// the test when that takes unreasonably long; it asserts nothing about speed.
func acquireOnceExpired(t *testing.T, s *store.Store, gameID, holder string) int64 {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		epoch, ok, err := s.AcquireLease(t.Context(), gameID, holder, leaseTTL)
		if err != nil {
			t.Fatalf("AcquireLease(%s, %s): %v", gameID, holder, err)
		}
		if ok {
			return epoch
		}
		if time.Now().After(deadline) {
			t.Fatalf("AcquireLease(%s, %s): still refused 10 s after the lease's 1 ms ttl", gameID, holder)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// expire makes the lease of gameID expired on the database's clock without
// changing its holder or epoch: a leader that stopped renewing.
func expire(t *testing.T, s *store.Store, gameID string) {
	t.Helper()
	if n, err := s.ExecForTest(t.Context(), "UPDATE leases SET expires_at = 1 WHERE game_id = ?", gameID); err != nil || n != 1 {
		t.Fatalf("expire the lease of %s: %d rows, %v", gameID, n, err)
	}
}

// testLeaseLifecycle: the first acquisition is epoch 1; nobody else, and not
// the holder itself, acquires a live lease; once it expired another holder
// takes it at the next epoch and the former holder can no longer renew; a
// released lease is acquired at once at the next epoch.
func testLeaseLifecycle(t *testing.T, s *store.Store, _ string) {
	ctx := t.Context()
	if _, err := s.Lease(ctx, "crash"); !errors.Is(err, store.ErrLeaseNotFound) {
		t.Fatalf("Lease before any acquisition = %v, want ErrLeaseNotFound", err)
	}
	mustAcquire(t, s, "crash", "replica-a", leaseTTL, 1)
	got := mustLease(t, s, "crash")
	if got.Holder != "replica-a" || got.Epoch != 1 || got.AcquiredAt == 0 ||
		got.ExpiresAt != got.AcquiredAt+store.Millis(leaseTTL.Milliseconds()) {
		t.Fatalf("Lease = %+v, want replica-a at epoch 1 until acquired_at + 60000 ms", got)
	}
	mustBeRefused(t, s, "crash", "replica-b")
	mustBeRefused(t, s, "crash", "replica-a") // a live holder renews, it does not acquire again
	mustAcquire(t, s, "other-game", "replica-b", leaseTTL, 1)

	mustRenew(t, s, "crash", "replica-a", 1, leaseTTL, true)
	mustRenew(t, s, "crash", "replica-b", 1, leaseTTL, false) // not its lease
	mustRenew(t, s, "crash", "replica-a", 2, leaseTTL, false) // not its epoch

	// replica-a stops renewing: its last renewal gives a 1 ms lease.
	mustRenew(t, s, "crash", "replica-a", 1, time.Millisecond, true)
	if epoch := acquireOnceExpired(t, s, "crash", "replica-b"); epoch != 2 {
		t.Fatalf("takeover after expiry: epoch %d, want 2", epoch)
	}
	mustRenew(t, s, "crash", "replica-a", 1, leaseTTL, false) // taken over
	if err := s.ReleaseLease(ctx, "crash", "replica-a", 1); err != nil {
		t.Fatalf("ReleaseLease by a holder taken over: %v, want no error", err)
	}
	if got := mustLease(t, s, "crash"); got.Holder != "replica-b" || got.Epoch != 2 || got.ExpiresAt == 0 {
		t.Fatalf("after the former holder's release, Lease = %+v; want replica-b's, live, at epoch 2", got)
	}
	mustBeRefused(t, s, "crash", "replica-a")

	if err := s.ReleaseLease(ctx, "crash", "replica-b", 2); err != nil {
		t.Fatalf("ReleaseLease: %v", err)
	}
	if got := mustLease(t, s, "crash"); got.Holder != "replica-b" || got.Epoch != 2 || got.ExpiresAt != 0 {
		t.Fatalf("after release, Lease = %+v; want replica-b at epoch 2, expires_at 0", got)
	}
	mustRenew(t, s, "crash", "replica-b", 2, leaseTTL, false) // a release is final
	mustAcquire(t, s, "crash", "replica-c", leaseTTL, 3)      // at once, no ttl to wait out
	mustBeRefused(t, s, "crash", "replica-b")
	if got := mustLease(t, s, "other-game"); got.Holder != "replica-b" || got.Epoch != 1 {
		t.Fatalf("another game's lease = %+v; want replica-b's at epoch 1, untouched", got)
	}
	for _, ttl := range []time.Duration{0, -time.Second, time.Microsecond} {
		if _, _, err := s.AcquireLease(ctx, "third-game", "replica-a", ttl); err == nil {
			t.Errorf("AcquireLease with ttl %s: no error, want one", ttl)
		}
	}
}

// testLeaseExpiredRenews: a lease that expired but that nobody took over is
// renewed, and is then live again; the fence checks the epoch, not the expiry.
func testLeaseExpiredRenews(t *testing.T, s *store.Store, _ string) {
	mustAcquire(t, s, "crash", "replica-a", leaseTTL, 1)
	expire(t, s, "crash")
	if err := s.CheckLease(t.Context(), "crash", 1); err != nil {
		t.Fatalf("CheckLease of an expired lease not taken over = %v, want nil", err)
	}
	mustRenew(t, s, "crash", "replica-a", 1, leaseTTL, true)
	mustBeRefused(t, s, "crash", "replica-b")
	if got := mustLease(t, s, "crash"); got.Epoch != 1 || got.Holder != "replica-a" {
		t.Fatalf("Lease = %+v, want replica-a at epoch 1", got)
	}
}

// testLeaseConcurrentAcquire: of many replicas (goroutines over two stores:
// two processes) acquiring a free lease at once, exactly one gets it, at the
// next epoch; the others are refused without an error. Free is: never taken,
// expired, released.
func testLeaseConcurrentAcquire(t *testing.T, s *store.Store, dsn string) {
	stores := []*store.Store{s, openMigrated(t, dsn)}
	const n = 16
	rounds := []struct {
		name      string
		free      func()
		wantEpoch int64
	}{
		{"never taken", func() {}, 1},
		{"expired", func() { expire(t, s, "crash") }, 2},
		{"released", func() {
			rec := mustLease(t, s, "crash")
			if err := s.ReleaseLease(t.Context(), "crash", rec.Holder, rec.Epoch); err != nil {
				t.Fatal(err)
			}
		}, 3},
	}
	for _, r := range rounds {
		r.free()
		var (
			wg     sync.WaitGroup
			start  = make(chan struct{})
			epochs = make([]int64, n)
			oks    = make([]bool, n)
			errs   = make([]error, n)
		)
		for i := range n {
			wg.Go(func() {
				<-start
				epochs[i], oks[i], errs[i] = stores[i%len(stores)].AcquireLease(context.Background(), "crash", fmt.Sprint("replica-", i), leaseTTL)
			})
		}
		close(start)
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatalf("%s: concurrent AcquireLease: %v", r.name, err)
		}
		winner := -1
		for i, ok := range oks {
			if !ok {
				continue
			}
			if winner >= 0 {
				t.Fatalf("%s: replica-%d and replica-%d both acquired the lease", r.name, winner, i)
			}
			winner = i
		}
		if winner < 0 {
			t.Fatalf("%s: nobody acquired the free lease", r.name)
		}
		if epochs[winner] != r.wantEpoch {
			t.Fatalf("%s: winner's epoch %d, want %d", r.name, epochs[winner], r.wantEpoch)
		}
		if got := mustLease(t, s, "crash"); got.Holder != fmt.Sprint("replica-", winner) || got.Epoch != r.wantEpoch {
			t.Fatalf("%s: Lease = %+v, want replica-%d at epoch %d", r.name, got, winner, r.wantEpoch)
		}
	}
}

// testLeaseCheckFenced: a former leader's transaction that checks its epoch
// after a takeover fails with ErrFenced, and what it wrote before the check
// is rolled back; the current leader's passes and commits.
func testLeaseCheckFenced(t *testing.T, s *store.Store, _ string) {
	ctx := t.Context()
	if err := s.CheckLease(ctx, "crash", 1); !errors.Is(err, leadership.ErrFenced) {
		t.Fatalf("CheckLease without any lease = %v, want ErrFenced", err)
	}
	mustAcquire(t, s, "crash", "replica-a", leaseTTL, 1)
	expire(t, s, "crash")
	mustAcquire(t, s, "crash", "replica-b", leaseTTL, 2)

	stale := testRound("r-stale", 1, engine.RoundBetting)
	stale.Epoch = 1
	err := s.InTx(ctx, func(ctx context.Context) error {
		if err := s.InsertRound(ctx, stale); err != nil {
			return err
		}
		return s.CheckLease(ctx, "crash", 1)
	})
	if !errors.Is(err, leadership.ErrFenced) {
		t.Fatalf("former leader's transaction = %v, want ErrFenced", err)
	}
	if _, err := s.Round(ctx, "crash", "r-stale"); !errors.Is(err, engine.ErrRoundNotFound) {
		t.Fatalf("round written by the fenced transaction: Round = %v, want ErrRoundNotFound (rolled back)", err)
	}

	current := testRound("r-current", 1, engine.RoundBetting)
	current.Epoch = 2
	err = s.InTx(ctx, func(ctx context.Context) error {
		if err := s.CheckLease(ctx, "crash", 2); err != nil {
			return err
		}
		return s.InsertRound(ctx, current)
	})
	if err != nil {
		t.Fatalf("current leader's transaction: %v", err)
	}
	if got, err := s.Round(ctx, "crash", "r-current"); err != nil || got.Epoch != 2 {
		t.Fatalf("Round(r-current) = %+v, %v; want it stored at epoch 2", got, err)
	}
}

// openCheckedTx opens a transaction of the leader at epoch on game "crash"
// that passes CheckLease and stays open until finish is closed; it then runs
// work and commits, and its outcome arrives on done.
func openCheckedTx(t *testing.T, s *store.Store, epoch int64, work func(ctx context.Context) error) (finish chan struct{}, done <-chan error) {
	t.Helper()
	checked := make(chan struct{})
	finish = make(chan struct{})
	txDone := make(chan error, 1)
	go func() {
		txDone <- s.InTx(t.Context(), func(ctx context.Context) error {
			if err := s.CheckLease(ctx, "crash", epoch); err != nil {
				return err
			}
			close(checked)
			<-finish
			return work(ctx)
		})
	}()
	select {
	case <-checked:
	case err := <-txDone:
		t.Fatalf("the checked transaction ended before its check passed: %v", err)
	}
	return finish, txDone
}

// acquired is what a takeover's AcquireLease returned.
type acquired struct {
	epoch int64
	ok    bool
	err   error
}

// startTakeover runs holder's AcquireLease of "crash" in the background;
// its answer arrives on the channel returned.
func startTakeover(s *store.Store, holder string) <-chan acquired {
	takeover := make(chan acquired, 1)
	go func() {
		epoch, ok, err := s.AcquireLease(context.Background(), "crash", holder, leaseTTL)
		takeover <- acquired{epoch, ok, err}
	}()
	return takeover
}

// testLeaseCheckBlocksTakeover: while a leader's transaction that passed
// CheckLease is open, a takeover of its (expired) lease waits; the
// transaction's writes commit under the epoch it checked, and the takeover
// then gets the next epoch. On PostgreSQL the lease row is locked FOR KEY
// SHARE and the takeover locks it FOR UPDATE; on SQLite the transaction holds
// the one writer.
func testLeaseCheckBlocksTakeover(t *testing.T, s *store.Store, _ string) {
	ctx := t.Context()
	mustAcquire(t, s, "crash", "replica-a", leaseTTL, 1)
	expire(t, s, "crash") // replica-a is paused: its lease ran out, nobody took it yet

	finish, txDone := openCheckedTx(t, s, 1, func(ctx context.Context) error {
		r := testRound("r-a", 1, engine.RoundBetting)
		r.Epoch = 1
		return s.InsertRound(ctx, r)
	})

	takeover := startTakeover(s, "replica-b")
	time.Sleep(100 * time.Millisecond) // room for the takeover to run, if it could (a "not yet" check only)
	select {
	case got := <-takeover:
		close(finish)
		t.Fatalf("takeover returned %+v while replica-a's checked transaction was open; want it to wait", got)
	default:
	}

	close(finish)
	if err := <-txDone; err != nil {
		t.Fatalf("replica-a's checked transaction: %v, want committed", err)
	}
	got := <-takeover
	if got.err != nil || !got.ok || got.epoch != 2 {
		t.Fatalf("takeover after the commit = %+v; want epoch 2", got)
	}
	if r, err := s.Round(ctx, "crash", "r-a"); err != nil || r.Epoch != 1 {
		t.Fatalf("round of the checked transaction = %+v, %v; want committed at epoch 1", r, err)
	}
	mustRenew(t, s, "crash", "replica-a", 1, leaseTTL, false)
	if err := s.CheckLease(ctx, "crash", 1); !errors.Is(err, leadership.ErrFenced) {
		t.Fatalf("replica-a's next check = %v, want ErrFenced", err)
	}
}

// testRoundEpoch: a round keeps the epoch of the leader that opened it.
func testRoundEpoch(t *testing.T, s *store.Store, _ string) {
	withEpoch := testRound("r-7", 1, engine.RoundBetting)
	withEpoch.Epoch = 7
	mustInsertRound(t, s, withEpoch)
	mustInsertRound(t, s, testRound("r-0", 2, engine.RoundBetting))
	for id, want := range map[string]int64{"r-7": 7, "r-0": 0} {
		got, err := s.Round(t.Context(), "crash", id)
		if err != nil || got.Epoch != want {
			t.Fatalf("Round(%s) = %+v, %v; want epoch %d", id, got, err, want)
		}
	}
}

// testLeaseMigrationRerun: when the process died after migration 0006
// committed and before it was recorded, the next Migrate runs it again and
// succeeds (SQLite has no ADD COLUMN IF NOT EXISTS: the store skips it), and
// the leases and the rounds' epochs written meanwhile are kept.
func testLeaseMigrationRerun(t *testing.T, s *store.Store, _ string) {
	ctx := t.Context()
	mustAcquire(t, s, "crash", "replica-a", leaseTTL, 1)
	r := testRound("r-1", 1, engine.RoundBetting)
	r.Epoch = 1
	mustInsertRound(t, s, r)
	if n, err := s.ExecForTest(ctx, "DELETE FROM bun_migrations WHERE name = '0006'"); err != nil || n != 1 {
		t.Fatalf("forget migration 0006: %d rows, %v", n, err)
	}
	if err := s.Migrate(ctx); err != nil {
		t.Fatalf("Migrate with 0006 applied but not recorded: %v", err)
	}
	if n := countRows(t, s, "SELECT count(*) FROM bun_migrations WHERE name = '0006'"); n != 1 {
		t.Fatalf("migration 0006 recorded %d times, want once", n)
	}
	if got := mustLease(t, s, "crash"); got.Holder != "replica-a" || got.Epoch != 1 {
		t.Fatalf("Lease after the re-run = %+v, want replica-a's at epoch 1", got)
	}
	if got, err := s.Round(ctx, "crash", "r-1"); err != nil || got.Epoch != 1 {
		t.Fatalf("Round after the re-run = %+v, %v; want epoch 1", got, err)
	}
}

// testLeaseRenewalDoesNotWaitForCheckedTransactions: on PostgreSQL the
// leader renews its lease while its own transactions that passed CheckLease
// are open (a busy table always has one): the renewal must not queue behind
// them, or a leader under load loses its lease to its own commits. SQLite has
// one writer: there the renewal waits for the transaction and then renews.
func testLeaseRenewalUnblocked(t *testing.T, s *store.Store, _ string) {
	ctx := t.Context()
	mustAcquire(t, s, "crash", "replica-a", leaseTTL, 1)
	finish, txDone := openCheckedTx(t, s, 1, func(context.Context) error { return nil })
	if s.Dialect() != store.DialectPostgres {
		renewed := make(chan error, 1)
		go func() {
			ok, err := s.RenewLease(ctx, "crash", "replica-a", 1, leaseTTL)
			if err == nil && !ok {
				err = errors.New("not renewed")
			}
			renewed <- err
		}()
		close(finish)
		if err := <-txDone; err != nil {
			t.Fatalf("the checked transaction: %v", err)
		}
		if err := <-renewed; err != nil {
			t.Fatalf("renewal once the checked transaction ended: %v; want renewed", err)
		}
		return
	}
	// A guard, not a speed check: a renewal that waits for the open
	// transaction never returns before it ends.
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	ok, err := s.RenewLease(rctx, "crash", "replica-a", 1, leaseTTL)
	cancel()
	close(finish)
	if err != nil || !ok {
		t.Fatalf("renewal while a checked transaction is open = %t, %v; want renewed without waiting", ok, err)
	}
	if err := <-txDone; err != nil {
		t.Fatalf("the checked transaction: %v", err)
	}
}

// testLeaseRenewalOwnConnection: a renewal does not queue for a connection
// that the process's other statements hold. On SQLite the pool has one
// connection, handed to a random waiter: a busy process has hundreds, and a
// renewal queued among them missed its deadline and lost the lease to the
// process's own load (the load tool's 2,000 players, issue 13). On PostgreSQL
// a renewal that found the pool's connections busy opened a new one, whose
// authentication took longer than the renewal's second on a saturated
// machine (27 November). Both give the renewal a connection of its own,
// kept open: here every connection of the pool is held.
func testLeaseRenewalOwnConnection(t *testing.T, s *store.Store, _ string) {
	mustAcquire(t, s, "crash", "replica-a", leaseTTL, 1)
	release, err := store.HoldConnection(s)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	// A guard, not a speed check: a renewal queued for the held connection
	// never returns before release.
	rctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	ok, err := s.RenewLease(rctx, "crash", "replica-a", 1, leaseTTL)
	if err != nil || !ok {
		t.Fatalf("renewal while the pool's connection is held = %t, %v; want renewed on the lease's own connection", ok, err)
	}
}
