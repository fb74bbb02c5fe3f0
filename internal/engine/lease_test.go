package engine_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/internal/engine"
	"github.com/crashstudio/crashgame/internal/logtest"
	"github.com/crashstudio/crashgame/internal/movements"
	"github.com/crashstudio/crashgame/internal/round"
	"github.com/crashstudio/crashgame/internal/store"
)

// replica is a second table of h's game on h's database: another process of
// the cluster, with a clock of its own.
type replica struct {
	table  *engine.Table
	clock  *manualClock
	cancel context.CancelFunc
	done   chan error
}

func (h *harness) replica(holder string) *replica { return h.replicaAble(holder, nil) }

// replicaAble is a replica whose LeaseSettings.Able is able.
func (h *harness) replicaAble(holder string, able func() bool) *replica {
	h.t.Helper()
	return h.replicaOn(holder, h.st.Records(), able)
}

// replicaOn is a replica whose table reaches h's database through st.
func (h *harness) replicaOn(holder string, st engine.Store, able func() bool) *replica {
	h.t.Helper()
	return h.replicaAt(holder, st, able, time.Time{})
}

// replicaAt is replicaOn whose clock starts at start (zero: newClock's).
func (h *harness) replicaAt(holder string, st engine.Store, able func() bool, start time.Time) *replica {
	h.t.Helper()
	r := &replica{clock: newClock(), done: make(chan error, 1)}
	if !start.IsZero() {
		r.clock.Set(start)
	}
	var err error
	r.table, err = engine.New(context.Background(), engine.Config{
		Game: testGame, Operators: testOperators, Store: st, Chains: h.st.HashChains(), Outbox: movements.NewOutbox(h.st.Movements()),
		Wallets: func(string) (engine.BetWallet, bool) { return h.wallet, true },
		Clock:   r.clock, ChainLength: 1000, Sealer: engine.FixedSealer(), SeedingWindow: -1,
		Lease:  engine.LeaseSettings{Holder: holder, Retry: 50 * time.Millisecond, Able: able},
		Logger: logtest.New(h.t).With("replica", holder),
	})
	if err != nil {
		h.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go func() { r.done <- r.table.Run(ctx) }()
	h.t.Cleanup(func() {
		cancel()
		for {
			select {
			case err := <-r.done:
				if err != nil {
					h.t.Logf("Run: %v", err) // logged, not checked: these tests check the lease, not how Run ends
				}
				return
			default:
				r.clock.Set(r.clock.Now().Add(time.Second))
				time.Sleep(5 * time.Millisecond)
			}
		}
	})
	return r
}

// eventually waits for cond, failing after 10 s (a guard, not a speed check).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(stateWait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (h *harness) lease() store.LeaseRecord {
	h.t.Helper()
	l, err := h.st.Lease(context.Background(), testGame.ID)
	if err != nil {
		h.t.Fatal(err)
	}
	return l
}

func (h *harness) rounds() []store.RoundRecord {
	h.t.Helper()
	rs, err := h.st.RecentRounds(context.Background(), testGame.ID, 100)
	if err != nil {
		h.t.Fatal(err)
	}
	return rs
}

// Two tables of one game on one database: one leads and plays, the other
// waits; when the leader stops it finishes its round and hands over, and the
// other goes on with the next round of the same chain, under the next epoch.
// No round is voided by the hand-over, but one whose flight outlasts the
// shutdown grace (the planned-stop rule).
func TestLeaseOneLeaderThenHandOver(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, h *harness) {
		h.run()
		b := h.replica("replica-b")
		first, _ := h.table.Round()
		if !h.table.Leadership().Leading() || h.table.Leadership().Epoch() != 1 || h.lease().Epoch != 1 {
			t.Fatalf("the first table leads: %t at epoch %d; lease %+v", h.table.Leadership().Leading(), h.table.Leadership().Epoch(), h.lease())
		}
		time.Sleep(100 * time.Millisecond) // b tries the lease a few times meanwhile
		if b.table.Leadership().Leading() {
			t.Fatal("two tables lead one game")
		}
		h.stop() // finishes the betting round: flight, crash, hand-over
		eventually(t, "the second table leads", b.table.Leadership().Leading)
		if b.table.Leadership().Epoch() != 2 || h.lease().Holder != "replica-b" {
			t.Fatalf("epoch %d, lease %+v", b.table.Leadership().Epoch(), h.lease())
		}
		eventually(t, "the second table opens a round", func() bool {
			v, _ := b.table.Round()
			return v.Phase == engine.PhaseBetting && v.Seq > first.Seq
		})
		v, _ := b.table.Round()
		if v.Seq != first.Seq+1 {
			t.Fatalf("the second leader opened round %d after %d", v.Seq, first.Seq)
		}
		for _, r := range h.rounds() {
			want := map[int64]int64{first.Seq: 1, v.Seq: 2}[r.Seq]
			// The stopping leader flies its round to the crash within the
			// shutdown grace (30 s by default); a round that would fly
			// longer is settled by the fail-over rule, void. No other round
			// is voided by the hand-over. The grace starts when the loop
			// sees the stop, at the take-off for a stop in betting; h.stop
			// moves the clock 1 s every 5 ms meanwhile, so on a loaded
			// machine the loop may see it seconds of the clock after the
			// take-off: a flight of 30 to 50 s may end either way.
			flight := round.TimeToReach(r.CrashPoint)
			outlasts := r.Seq == first.Seq && flight > 50*time.Second
			either := r.Seq == first.Seq && flight > 30*time.Second && !outlasts
			void := r.Status == engine.RoundVoid
			if r.Epoch != want || (void != outlasts && !either) {
				t.Errorf("round %d: epoch %d (want %d), %s (crash point %d, flight %v)", r.Seq, r.Epoch, want, r.Status, r.CrashPoint, flight)
			}
			if void && r.Seq == first.Seq && r.VoidRule != engine.VoidPlannedStop {
				t.Errorf("round %d voided past the shutdown grace by rule %q, want %q", r.Seq, r.VoidRule, engine.VoidPlannedStop)
			}
		}
	})
}

// A leader whose lease was taken over while it still believes it leads (a
// pause, a partition) commits nothing more: its next write is fenced, no bet
// of it is stored, and it steps down.
func TestLeaseFencedFormerLeader(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, h *harness) {
		h.run()
		ctx := context.Background()
		mustBet(t, h, alice, engine.BetRequest{Amount: 100})
		old := h.lease()
		// Another replica takes the lease over (the old one had expired).
		if err := h.st.ReleaseLease(ctx, testGame.ID, old.Holder, old.Epoch); err != nil {
			t.Fatal(err)
		}
		epoch, ok, err := h.st.AcquireLease(ctx, testGame.ID, "usurper", time.Minute)
		if err != nil || !ok || epoch != old.Epoch+1 {
			t.Fatalf("takeover: epoch %d, %t, %v", epoch, ok, err)
		}
		_, err = h.table.PlaceBet(ctx, playerOf("acme", "bob"), engine.BetRequest{Amount: 200})
		if err == nil {
			// The loss may have been noticed first: then betting is closed.
			t.Fatal("a bet was accepted by a table that no longer leads")
		}
		// The player is told the table changes hands, never a server error.
		if !errors.Is(err, engine.ErrTableUnavailable) && !errors.Is(err, round.ErrBettingClosed) {
			t.Fatalf("bet answered %v, want ErrTableUnavailable or ErrBettingClosed", err)
		}
		bets, err := h.st.Bets(ctx, store.BetFilter{GameID: testGame.ID})
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range bets {
			if b.PlayerID == "bob" {
				t.Fatalf("bob's bet was stored: %+v", b)
			}
		}
		eventually(t, "the former leader steps down", func() bool { return !h.table.Leadership().Leading() })
		if l := h.lease(); l.Holder != "usurper" || l.Epoch != old.Epoch+1 {
			t.Fatalf("lease %+v", l)
		}
	})
}

// A leader that dies in flight (its lease expires; here: released under it)
// leaves its round to the replica that takes the lease next: that one
// settles the round from the database and opens the next round of the same
// chain. The former leader commits nothing more of the round.
func TestLeaseFailOverSettlesTheInterruptedRound(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, h *harness) {
		h.run()
		ctx := context.Background()
		v := h.roundCrashingAbove(300)
		a := mustBet(t, h, alice, engine.BetRequest{Amount: 100, AutoCashout: 150})
		bob := mustBet(t, h, playerOf("acme", "bob"), engine.BetRequest{Amount: 200})
		f := h.fly()
		b := h.replica("replica-b")
		old := h.lease()
		if err := h.st.ReleaseLease(ctx, testGame.ID, old.Holder, old.Epoch); err != nil {
			t.Fatal(err)
		}
		eventually(t, "the second table leads", b.table.Leadership().Leading)
		eventually(t, "the second table opens the next round", func() bool {
			n, _ := b.table.Round()
			return n.Phase == engine.PhaseBetting && n.Seq == v.Seq+1
		})
		// The former leader's clock reaches the auto-cashout: too late.
		h.clock.Set(f.StartedAt.Add(10 * time.Second))
		eventually(t, "the former leader steps down", func() bool { return !h.table.Leadership().Leading() })
		rec, err := h.st.Round(ctx, testGame.ID, v.RoundID)
		if err != nil {
			t.Fatal(err)
		}
		if rec.Status == engine.RoundBetting || rec.Status == engine.RoundFlying {
			t.Fatalf("the interrupted round is still %s", rec.Status)
		}
		for _, id := range []string{a.Bet.BetID, bob.Bet.BetID} {
			if s := h.bet(id).Status; s == engine.StatusAccepted || s == engine.StatusPending {
				t.Errorf("bet %s is still %s", id, s)
			}
		}
		seen := map[string]bool{}
		for _, m := range h.movements() {
			if seen[m.TransactionID] {
				t.Errorf("movement %s twice", m.TransactionID)
			}
			seen[m.TransactionID] = true
		}
	})
}

// A leader that can no longer lead (cut off from the other replicas) stops
// renewing its lease and takes no other: within a TTL another replica leads.
func TestLeaseStepsDownWhenNotAble(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "")
	var able atomic.Bool
	able.Store(true)
	a := h.replicaAble("replica-a", able.Load)
	eventually(t, "a leads", a.table.Leadership().Leading)
	b := h.replica("replica-b")
	able.Store(false)
	eventually(t, "b leads", b.table.Leadership().Leading)
	if a.table.Leadership().Leading() {
		t.Fatal("two tables lead")
	}
	if l := h.lease(); l.Holder != "replica-b" || l.Epoch != 2 {
		t.Fatalf("lease %+v", l)
	}
}

// A leader that loses its lease while a /bet is being attempted stops the
// attempts at once, without waiting for the end of the betting window: the
// next leader rolls a pending bet back (RB-5), and a debit attempted after
// that rollback could land on a transaction the operator already answered
// as nothing to undo (RB-13), taking a stake the game no longer holds.
func TestLeaseLostStopsTheDebitInFlight(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "")
	h.run()
	ctx := context.Background()
	h.wallet.mu.Lock()
	h.wallet.hold = true
	h.wallet.mu.Unlock()
	answered := make(chan error, 1)
	go func() {
		_, err := h.table.PlaceBet(ctx, alice, engine.BetRequest{Amount: 100})
		answered <- err
	}()
	eventually(t, "the /bet is attempted", func() bool {
		h.wallet.mu.Lock()
		defer h.wallet.mu.Unlock()
		return len(h.wallet.calls) == 1
	})
	old := h.lease()
	if err := h.st.ReleaseLease(ctx, testGame.ID, old.Holder, old.Epoch); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := h.st.AcquireLease(ctx, testGame.ID, "usurper", time.Minute); err != nil || !ok {
		t.Fatalf("takeover: %t, %v", ok, err)
	}
	// The betting window is still open on the table's clock, which the test
	// never moves: only the end of the term can end the attempt.
	var err error
	eventually(t, "the bet is answered", func() bool {
		select {
		case err = <-answered:
			return true
		default:
			return false
		}
	})
	if !errors.Is(err, engine.ErrTableUnavailable) {
		t.Fatalf("the bet answered %v, want ErrTableUnavailable (its outcome is the next leader's)", err)
	}
	bets, berr := h.st.Bets(ctx, store.BetFilter{GameID: testGame.ID})
	if berr != nil {
		t.Fatal(berr)
	}
	if len(bets) != 1 || bets[0].Status != engine.StatusPending {
		t.Fatalf("bets %+v: want the one bet left pending for the next leader", bets)
	}
}

// stallingStore is h's database as a table reaches it when the database
// stalls (a paused container): once armed, the next AcquireLease waits stall
// before its statement reaches the database, which then counts the lease
// from its own later now. It counts the fenced transactions begun
// (CheckLease) by epoch.
type stallingStore struct {
	engine.Store
	stall time.Duration
	armed atomic.Bool

	mu      sync.Mutex
	checked map[int64]int
}

func (s *stallingStore) AcquireLease(ctx context.Context, gameID, holder string, ttl time.Duration) (int64, bool, error) {
	if s.armed.CompareAndSwap(true, false) {
		time.Sleep(s.stall) // the statement's way to a stalled database, not a check of speed
	}
	return s.Store.AcquireLease(ctx, gameID, holder, ttl)
}

func (s *stallingStore) CheckLease(ctx context.Context, gameID string, epoch int64) error {
	s.mu.Lock()
	s.checked[epoch]++
	s.mu.Unlock()
	return s.Store.CheckLease(ctx, gameID, epoch)
}

func (s *stallingStore) fencedAt(epoch int64) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.checked[epoch]
}

// A replica whose acquisition of the lease took longer than the lease's TTL
// (the database stalled while the statement was on its way) holds a term
// that is over when the answer arrives: it recovers nothing and opens no
// round in it, and releases the lease, so its next acquisition leads at
// once. The round the dead leader left is voided once, by the next term,
// which opens the next round: one void round in all (issue 27, item 3).
func TestLeaseSlowAcquireLeadsNoEndedTerm(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, h *harness) {
		ctx := context.Background()
		var able atomic.Bool
		able.Store(true)
		a := h.replicaAble("replica-a", able.Load)
		eventually(t, "a opens a round", func() bool {
			v, _ := a.table.Round()
			return a.table.Leadership().Leading() && v.Phase == engine.PhaseBetting
		})
		left, _ := a.table.Round()
		bet, err := a.table.PlaceBet(ctx, alice, engine.BetRequest{Amount: 100})
		if err != nil {
			t.Fatal(err)
		}
		// a dies in betting, as far as the lease goes: it renews nothing
		// and takes nothing from now on.
		able.Store(false)
		eventually(t, "a steps down", func() bool { return !a.table.Leadership().Leading() })
		dead := h.lease()

		// b's first acquisition reaches the database a full TTL later, when
		// a's lease has run out there too (a stepped down before it did).
		st := &stallingStore{Store: h.st.Records(), stall: 2 * time.Second, checked: map[int64]int{}}
		st.armed.Store(true)
		// b starts once the debits of a's betting window are over, so that
		// its recovery settles a's round at once.
		b := h.replicaAt("replica-b", st, nil, left.BettingEndsAt.Add(engine.DefaultDebitGrace+engine.DebitClockMargin))
		stale := dead.Epoch + 1
		eventually(t, "b leads the term after the stale one", func() bool { return b.table.Leadership().Epoch() == stale+1 })
		eventually(t, "b opens the next round", func() bool {
			v, _ := b.table.Round()
			return v.Phase == engine.PhaseBetting && v.Seq == left.Seq+1
		})
		if n := st.fencedAt(stale); n != 0 {
			t.Errorf("%d fenced transactions began in the stale term %d", n, stale)
		}
		if st.fencedAt(stale+1) == 0 {
			t.Errorf("no fenced transaction counted in term %d, which recovered and opened a round", stale+1)
		}
		voids := 0
		for _, r := range h.rounds() {
			if r.Epoch == stale {
				t.Errorf("round %d opened in the stale term %d", r.Seq, stale)
			}
			if r.Status != engine.RoundVoid {
				continue
			}
			voids++
			if r.Seq != left.Seq || r.VoidRule != engine.VoidFailoverBetting {
				t.Errorf("round %d void by rule %q; want only round %d, by %q", r.Seq, r.VoidRule, left.Seq, engine.VoidFailoverBetting)
			}
		}
		if voids != 1 {
			t.Errorf("%d void rounds, want 1 (the round a left)", voids)
		}
		if s := h.bet(bet.Bet.BetID).Status; s != engine.StatusVoid {
			t.Errorf("the bet of the round a left is %s, want %s (refunded)", s, engine.StatusVoid)
		}
		if l := h.lease(); l.Holder != "replica-b" || l.Epoch != stale+1 {
			t.Errorf("lease %+v, want replica-b's at epoch %d", l, stale+1)
		}
	})
}

// acceptedBeforeItsVoid is a table's store on which the replica that debited
// bet commits its acceptance (Accept) just as a recovery that read the bet
// pending moves it: between the read and the move.
type acceptedBeforeItsVoid struct {
	engine.Store
	bet  string
	once sync.Once
}

func (s *acceptedBeforeItsVoid) MoveBet(ctx context.Context, id, from, to string, ch engine.BetChange) (bool, error) {
	if id == s.bet && from == engine.StatusPending && to == engine.StatusVoid {
		var err error
		s.once.Do(func() {
			_, err = s.Store.MoveBet(ctx, id, engine.StatusPending, engine.StatusAccepted, engine.BetChange{OperatorTxID: "op-" + id})
		})
		if err != nil {
			return false, err
		}
	}
	return s.Store.MoveBet(ctx, id, from, to, ch)
}

// A new leader that settles an interrupted round finds a bet pending whose
// acceptance the replica that debited it commits before the recovery's move
// (the leader had decided it, and died): the recovery reads it again and
// settles it by the rule as accepted, rolled back once (RB-5), never leaving
// it accepted in a void round.
func TestRB5FailOverSettlesABetAcceptedBetweenItsReadAndItsMove(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "")
	h.run()
	ctx := context.Background()
	p := playerOf("acme", "between")
	adm, out := h.debited(p, engine.BetRequest{Amount: 400})
	if _, err := h.table.Decide(ctx, p.Session, adm, out); err != nil {
		t.Fatal(err)
	}
	st := &acceptedBeforeItsVoid{Store: h.st.Records(), bet: adm.BetID}
	b := h.replicaOn("replica-b", st, nil)
	old := h.lease()
	if err := h.st.ReleaseLease(ctx, testGame.ID, old.Holder, old.Epoch); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the second table leads", b.table.Leadership().Leading)
	eventually(t, "the interrupted round is settled", func() bool {
		b.clock.Set(b.clock.Now().Add(time.Second)) // past the debits' deadline the recovery waits for
		rec, err := h.st.Round(ctx, testGame.ID, adm.RoundID)
		return err == nil && rec.Status == engine.RoundVoid
	})
	if rec := h.bet(adm.BetID); rec.Status != engine.StatusVoid {
		t.Fatalf("the bet accepted between the recovery's read and its move = %s; want void", rec.Status)
	}
	rollbacks := 0
	for _, m := range h.movements() {
		if m.BetID == adm.BetID && m.Kind == movements.KindRollback {
			rollbacks++
		}
	}
	if rollbacks != 1 {
		t.Fatalf("rollbacks of the bet: %d; want 1", rollbacks)
	}
}

// slowTakeOffStore is a table's store whose take-off statement (the
// acceptances the round's replicas had not committed, MoveDecidedBets)
// reaches the database stall late, once armed: a loaded database.
type slowTakeOffStore struct {
	engine.Store
	stall time.Duration
	armed atomic.Bool
}

func (s *slowTakeOffStore) MoveDecidedBets(ctx context.Context, roundID, from, to string, txIDs map[string]string) (int, error) {
	if s.armed.CompareAndSwap(true, false) {
		time.Sleep(s.stall) // the statement's way to a loaded database, not a check of speed
	}
	return s.Store.MoveDecidedBets(ctx, roundID, from, to, txIDs)
}

// A take-off whose statement outlasts the term's deadline as it was when the
// statement began, while the lease is renewed meanwhile, flies the round:
// the term is not over, and the write is bounded by its renewed deadline.
// Before, it was cancelled at the deadline it began under and the round
// voided with every bet in it (seen in a cluster on a saturated machine: 827
// bets rolled back).
func TestTakeOffOutlastingItsDeadlineFliesWhileTheLeaseIsRenewed(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, h *harness) {
		ctx := context.Background()
		// The default lease: a 2 s TTL renewed every 500 ms, so a term's
		// deadline is 1.75 s after its last renewal; the stall outlasts it.
		st := &slowTakeOffStore{Store: h.st.Records(), stall: 2500 * time.Millisecond}
		a := h.replicaOn("replica-a", st, nil)
		eventually(t, "a opens a round", func() bool {
			v, _ := a.table.Round()
			return a.table.Leadership().Leading() && v.Phase == engine.PhaseBetting
		})
		v, _ := a.table.Round()
		bet, err := a.table.PlaceBet(ctx, alice, engine.BetRequest{Amount: 100})
		if err != nil {
			t.Fatal(err)
		}
		epoch := a.table.Leadership().Epoch()
		st.armed.Store(true)
		a.clock.Set(v.BettingEndsAt)
		eventually(t, "the round takes off", func() bool {
			now, _ := a.table.Round()
			return now.RoundID != v.RoundID || now.Phase != engine.PhaseBetting
		})
		// A round that crashes at 1.00x crashes at its take-off (about one
		// in 33): it flew, and is seen crashed.
		atOnce := crashPointOf(t, a.table, v.RoundID) == 100
		if now, _ := a.table.Round(); now.RoundID != v.RoundID || now.Phase != engine.PhaseFlying && !(atOnce && now.Phase == engine.PhaseCrashed) {
			t.Fatalf("after the slow take-off: round %s in %s, want %s flying (or crashed, at 1.00x: %t)", now.RoundID, now.Phase, v.RoundID, atOnce)
		}
		// Accepted by the take-off; lost when the round crashed at once
		// (a crash point of 1.00x, about one round in 33), which only an
		// accepted bet can be.
		if s := h.bet(bet.Bet.BetID).Status; s != engine.StatusAccepted && s != engine.StatusLost {
			t.Errorf("the bet is %s, want %s (or %s, by a crash at once)", s, engine.StatusAccepted, engine.StatusLost)
		}
		if got := a.table.Leadership().Epoch(); !a.table.Leadership().Leading() || got != epoch {
			t.Errorf("leading %t at epoch %d, want the same term (%d)", a.table.Leadership().Leading(), got, epoch)
		}
	})
}
