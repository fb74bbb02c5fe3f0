package engine_test

import (
	"context"
	"flag"
	"fmt"
	"sync"
	"testing"
	"testing/cryptotest"
	"time"

	"github.com/crashstudio/crashgame/internal/engine"
	"github.com/crashstudio/crashgame/internal/movements"
	"github.com/crashstudio/crashgame/internal/round"
	"github.com/crashstudio/crashgame/internal/store"
)

// The fixed workload of `make cost` (docs/performance.md, "Instructions per
// bet and per cashout"): one round of a table on a SQLite file, its bets
// placed by 256 players at once (PlaceBet: the place in the loop, the
// intent's commit, /bet, the acceptance's commit) and some of them cashed
// out (Cashout: priced, then committed with its /win movement) through the
// table's own loop, group committer and store, against a wallet that
// answers every /bet at once, in process. `make cost` (loadgen cost) runs
// TestCost at three sizes under callgrind and takes the differences, so that
// what every run does once (the process, the schema, the chain, the table's
// start, the rounds around the measured one) cancels out.
//
// It is deterministic where the harness can make it so: the table's clock
// is the tests' manual clock, moved only here; the phases are awaited on
// the table's events, never by polling; crypto/rand is seeded
// (cryptotest.SetGlobalRandom), so that the chain, hence every crash point,
// and the set of the bets' ids are the same in every run; the lease is
// taken for an hour, so that no renewal (a real-time timer) falls inside a
// run, while every commit still checks its epoch. What stays to chance is
// how the goroutines interleave, hence how the committer batches.

var (
	costBets     = flag.Int("cost.bets", 0, "TestCost: bets placed in the measured round (0: TestCost is skipped)")
	costCashouts = flag.Int("cost.cashouts", 0, "TestCost: how many of those bets are cashed out (the others lose)")
)

const (
	// costSeed seeds crypto/rand for the workload.
	costSeed = 1
	// costStake is each bet's amount, in cents.
	costStake = 1000
	// costCashoutAfter is when, after the take-off, the bets are cashed out.
	costCashoutAfter = 500 * time.Millisecond
	// costCrashAbove is the least crash point (hundredths) of the measured
	// round: well above the multiplier at costCashoutAfter.
	costCrashAbove = 200
)

// costCounts is what one run of the workload did, as the table answered it.
type costCounts struct {
	roundID  string
	accepted int   // bets answered accepted
	paid     int   // cashouts answered with their payout
	payout   int64 // cents paid out in all
}

// costTable is a table that plays the workload's rounds; each phase is
// awaited on its events.
type costTable struct {
	t      *testing.T
	st     *store.Store
	table  *engine.Table
	clock  *manualClock
	events *engine.Subscription
	done   chan error
}

// TestCost is the workload as `make cost` runs it under callgrind: one
// round of -cost.bets bets, the first -cost.cashouts of them cashed out.
func TestCost(t *testing.T) {
	if *costBets == 0 {
		t.Skip("the workload of make cost: give -cost.bets (and -cost.cashouts)")
	}
	got := runCostWorkload(t, *costBets, *costCashouts)
	checkCostCounts(t, got, *costBets, *costCashouts)
	t.Logf("round %s: %d bets accepted, %d cashed out, %d cents paid out", got.roundID, got.accepted, got.paid, got.payout)
}

// TestCostWorkload runs make cost's workload at a small size and checks,
// in the store as well, that it placed and cashed out what it says: the
// figures of make cost are per bet and per cashout only while it does.
func TestCostWorkload(t *testing.T) {
	const bets, cashouts = 24, 8
	ct := startCostTable(t)
	got := ct.play(bets, cashouts)
	checkCostCounts(t, got, bets, cashouts)
	ctx := context.Background()
	recs, err := ct.st.Bets(ctx, store.BetFilter{RoundIDs: []string{got.roundID}})
	if err != nil {
		t.Fatal(err)
	}
	statuses := map[string]int{}
	var paid int64
	for _, r := range recs {
		statuses[r.Status]++
		if r.Payout != nil {
			paid += *r.Payout
		}
	}
	if len(recs) != bets || statuses[engine.StatusCashedOut] != cashouts || statuses[engine.StatusLost] != bets-cashouts {
		t.Errorf("round %s stored %d bets by status %v, want %d: %d cashed out, %d lost", got.roundID, len(recs), statuses, bets, cashouts, bets-cashouts)
	}
	if paid != got.payout {
		t.Errorf("stored payouts %d, answered %d", paid, got.payout)
	}
	moves, err := movements.ListMovements(ctx, ct.st.Movements(), movements.MovementFilter{RoundID: got.roundID, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var queued int64
	for _, m := range moves {
		if m.Kind != movements.KindWin {
			t.Errorf("a %s movement queued for bet %s", m.Kind, m.BetID)
		}
		queued += m.Amount
	}
	if len(moves) != cashouts || queued != got.payout {
		t.Errorf("%d movements queued for %d cents, want %d /win for %d", len(moves), queued, cashouts, got.payout)
	}
}

// checkCostCounts fails t unless every bet was accepted and every cashout
// paid at least the stake.
func checkCostCounts(t *testing.T, got costCounts, bets, cashouts int) {
	t.Helper()
	if got.accepted != bets || got.paid != cashouts || got.payout < int64(cashouts)*costStake {
		t.Fatalf("round %s: %d bets accepted, %d cashouts paid (%d cents), want %d and %d", got.roundID, got.accepted, got.paid, got.payout, bets, cashouts)
	}
}

// runCostWorkload plays the workload on a table of its own.
func runCostWorkload(t *testing.T, bets, cashouts int) costCounts {
	return startCostTable(t).play(bets, cashouts)
}

// startCostTable seeds crypto/rand, builds the table of the engine
// benchmarks with a lease of an hour, runs it and waits for its first
// betting phase.
func startCostTable(t *testing.T) *costTable {
	t.Helper()
	cryptotest.SetGlobalRandom(t, costSeed)
	st := openBenchStore(t, "")
	ct := &costTable{t: t, st: st, clock: newClock(), done: make(chan error, 1)}
	cfg := benchConfig(st, ct.clock)
	cfg.Lease = engine.LeaseSettings{TTL: time.Hour}
	var err error
	ct.table, err = engine.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ct.events = ct.table.Subscribe([]byte("cost-observer-000000000000000000"), 1024)
	t.Cleanup(ct.events.Close)
	go func() { ct.done <- ct.table.Run(context.Background()) }()
	return ct
}

// play places bets in a round that crashes above costCrashAbove, cashes out
// the first cashouts of them costCashoutAfter into its flight, lets the
// others lose, and stops the table after the next round.
func (ct *costTable) play(bets, cashouts int) costCounts {
	t := ct.t
	t.Helper()
	v := ct.await("", engine.PhaseBetting)
	for crashPointOf(ct.t, ct.table, v.RoundID) < costCrashAbove {
		v = ct.next(ct.finish(v))
	}
	out := costCounts{roundID: v.RoundID}
	ids := make([]string, bets)
	var (
		mu     sync.Mutex
		failed error
	)
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if failed == nil {
			failed = err
		}
	}
	concurrently(bets, benchWorkers, func(i int) {
		res, err := ct.table.PlaceBet(context.Background(), benchPlayer("acme", i), engine.BetRequest{Amount: costStake})
		switch {
		case err != nil:
			fail(fmt.Errorf("bet %d: %w", i, err))
		case res.Bet.Status != engine.StatusAccepted:
			fail(fmt.Errorf("bet %d answered %s", i, res.Bet.Status))
		default:
			ids[i] = res.Bet.BetID
			mu.Lock()
			out.accepted++
			mu.Unlock()
		}
	})
	ct.clock.Set(v.BettingEndsAt)
	v = ct.await(v.RoundID, engine.PhaseFlying)
	at := v.StartedAt.Add(costCashoutAfter)
	ct.clock.Set(at)
	concurrently(min(cashouts, bets), benchWorkers, func(i int) {
		if ids[i] == "" {
			return // its bet failed, and says so
		}
		res, err := ct.table.Cashout(context.Background(), benchPlayer("acme", i), ids[i], at)
		if err != nil {
			fail(fmt.Errorf("cashout %d: %w", i, err))
			return
		}
		mu.Lock()
		out.paid++
		out.payout += res.Payout
		mu.Unlock()
	})
	ct.clock.Set(v.StartedAt.Add(round.TimeToReach(crashPointOf(ct.t, ct.table, v.RoundID))))
	v = ct.await(v.RoundID, engine.PhaseCrashed)
	// The table stops at a round's end: the next round, with no bets.
	next := ct.next(v)
	ct.table.Stop()
	ct.finish(next)
	if err := <-ct.done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if failed != nil {
		t.Fatal(failed)
	}
	return out
}

// finish plays round v, in its betting phase, to its crash.
func (ct *costTable) finish(v engine.RoundView) engine.RoundView {
	ct.clock.Set(v.BettingEndsAt)
	// A round that crashes at 1.00x crashes at its take-off.
	v = ct.await(v.RoundID, engine.PhaseFlying, engine.PhaseCrashed)
	if v.Phase == engine.PhaseFlying {
		ct.clock.Set(v.StartedAt.Add(round.TimeToReach(crashPointOf(ct.t, ct.table, v.RoundID))))
		v = ct.await(v.RoundID, engine.PhaseCrashed)
	}
	return v
}

// next waits out the pause after round v's crash, to the next round's
// betting phase.
func (ct *costTable) next(v engine.RoundView) engine.RoundView {
	ct.clock.Set(v.CrashedAt.Add(testGame.Pause))
	return ct.await("", engine.PhaseBetting)
}

// await reads the table's events until one of the phases (of roundID, when
// it is not "").
func (ct *costTable) await(roundID string, phases ...string) engine.RoundView {
	ct.t.Helper()
	timeout := time.After(10 * time.Minute) // callgrind runs the table some 50 times slower
	for {
		select {
		case ev, ok := <-ct.events.C:
			if !ok {
				ct.t.Fatal("the table dropped the workload's subscription")
			}
			if isPhaseEvent(ev) && (roundID == "" || ev.Round.RoundID == roundID) {
				for _, p := range phases {
					if ev.Round.Phase == p {
						return ev.Round
					}
				}
			}
		case err := <-ct.done:
			ct.t.Fatalf("the table stopped awaiting %v of round %q: %v", phases, roundID, err)
		case <-timeout:
			ct.t.Fatalf("no %v of round %q", phases, roundID)
		}
	}
}

// isPhaseEvent reports whether ev announces a round's phase.
func isPhaseEvent(ev *engine.Event) bool {
	switch ev.Type {
	case engine.EventRoundBetting, engine.EventRoundFlying, engine.EventRoundCrashed:
		return true
	}
	return false
}
