package engine_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/integration/pgtest"
	"github.com/crashstudio/crashgame/internal/engine"
	"github.com/crashstudio/crashgame/internal/groupcommit"
	"github.com/crashstudio/crashgame/internal/movements"
	"github.com/crashstudio/crashgame/internal/round"
	"github.com/crashstudio/crashgame/internal/store"
	"github.com/crashstudio/crashgame/internal/wallet"
)

// Rule WIN-3 WIN-1 WIN-17 ENV-16: a cashout just before the crash is priced at
// the receive time, committed with its /win movement (type win, the payout, the
// debit's id as bet_id, freebet_id null); one just at the crash is refused.
func TestCashoutAroundTheCrash(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, h *harness) {
		h.run()
		h.roundCrashingAbove(150)
		a := mustBet(t, h, alice, engine.BetRequest{Amount: 1000})
		bob := playerOf("acme", "bob")
		b := mustBet(t, h, bob, engine.BetRequest{Amount: 1000})
		f := h.fly()
		cp := h.crashPoint(f.RoundID)
		crashAt := f.StartedAt.Add(round.TimeToReach(cp))
		before := crashAt.Add(-time.Millisecond)
		h.clock.Set(before)
		res, err := h.table.Cashout(context.Background(), alice, a.Bet.BetID, before)
		if err != nil {
			t.Fatal(err)
		}
		m := round.Multiplier(before.Sub(f.StartedAt))
		if res.Multiplier != m || m >= cp || res.Payout != 1000*m/100 {
			t.Fatalf("cashout %+v, want multiplier %d (crash %d)", res, m, cp)
		}
		if _, err := h.table.Cashout(context.Background(), bob, b.Bet.BetID, crashAt); !errors.Is(err, round.ErrRoundCrashed) {
			t.Fatalf("cashout at the crash: %v", err)
		}
		if _, err := h.table.Cashout(context.Background(), alice, a.Bet.BetID, before); !errors.Is(err, round.ErrCashoutNotAllowed) {
			t.Fatalf("second cashout: %v", err)
		}
		if _, err := h.table.Cashout(context.Background(), bob, a.Bet.BetID, before); !errors.Is(err, round.ErrUnknownBet) {
			t.Fatalf("cashout of another's bet: %v", err)
		}
		h.clock.Set(crashAt)
		h.waitPhase(engine.PhaseCrashed)
		if rec := h.bet(a.Bet.BetID); rec.Status != engine.StatusCashedOut || rec.Multiplier != m || *rec.Payout != res.Payout {
			t.Fatalf("alice's bet %+v", rec)
		}
		if rec := h.bet(b.Bet.BetID); rec.Status != engine.StatusLost {
			t.Fatalf("bob's bet %+v", rec)
		}
		mv := h.movements()
		// Rule WIN-9: without zero_win, bob's lost bet makes no call.
		if len(mv) != 1 {
			t.Fatalf("movements %+v", mv)
		}
		w := mv[0]
		if w.Kind != movements.KindWin || w.WinType != wallet.WinTypeWin || w.Amount != res.Payout || w.BetID != a.Bet.BetID || w.FreebetID != nil || w.PlayerID != "alice" || w.RoundID != f.RoundID {
			t.Fatalf("win movement %+v", w)
		}
	})
}

// Rule LIM-14: auto-cashout pays exactly its target, capped at max_win; a
// target above the crash point loses.
func TestAutoCashout(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "")
	h.run()
	h.roundCrashingAbove(300)
	v, _ := h.table.Round()
	cp := h.crashPoint(v.RoundID)
	exact := mustBet(t, h, alice, engine.BetRequest{Amount: 333, AutoCashout: 153})
	big := mustBet(t, h, playerOf("acme", "carol"), engine.BetRequest{Amount: 100000, AutoCashout: 250})
	atCrash := mustBet(t, h, playerOf("acme", "dave"), engine.BetRequest{Amount: 100, AutoCashout: cp})
	above := mustBet(t, h, playerOf("acme", "erin"), engine.BetRequest{Amount: 100, AutoCashout: cp + 1})
	f := h.fly()
	for _, m := range []int64{153, 250, cp} {
		h.clock.Set(f.StartedAt.Add(round.TimeToReach(m)))
		time.Sleep(20 * time.Millisecond)
	}
	h.waitPhase(engine.PhaseCrashed)
	check := func(id string, status string, mult, payout int64) {
		t.Helper()
		rec := h.bet(id)
		if rec.Status != status || rec.Multiplier != mult || (rec.Payout != nil && *rec.Payout != payout) {
			t.Fatalf("bet %s: %s x%d payout %v, want %s x%d %d", id, rec.Status, rec.Multiplier, rec.Payout, status, mult, payout)
		}
	}
	check(exact.Bet.BetID, engine.StatusCashedOut, 153, 509)         // floor(333 * 1.53)
	check(big.Bet.BetID, engine.StatusCashedOut, 250, 250000)        // under max_win: TestMaxWinCap covers the cap
	check(atCrash.Bet.BetID, engine.StatusCashedOut, cp, 100*cp/100) // a target equal to the crash point wins
	check(above.Bet.BetID, engine.StatusLost, 0, 0)
}

// Rule WIN-5 WIN-8: with zero_win switched on, a lost bet is closed by a /win of
// type zero_win and amount 0.
func TestZeroWin(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "")
	h.run()
	zoe := playerOf("zero", "zoe")
	b := mustBet(t, h, zoe, engine.BetRequest{Amount: 500})
	h.nextRound()
	mv := h.movements()
	if len(mv) != 1 || mv[0].WinType != wallet.WinTypeZeroWin || mv[0].Amount != 0 || mv[0].BetID != b.Bet.BetID || mv[0].Operator != "zero" {
		t.Fatalf("movements %+v", mv)
	}
}

// Rule LIM-14: a prize above max_win is paid at max_win.
func TestMaxWinCap(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "")
	h.run()
	h.roundCrashingAbove(600)
	b := mustBet(t, h, alice, engine.BetRequest{Amount: 100000, AutoCashout: 600})
	h.nextRound()
	if rec := h.bet(b.Bet.BetID); *rec.Payout != 500000 {
		t.Fatalf("payout %d, want max_win 500000", *rec.Payout)
	}
}

// Rule RB-2 RB-6: a player cancels a bet during the betting phase: the bet is
// cancelled and its debit rolled back; while flying it cannot be cancelled.
func TestCancel(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "")
	h.run()
	b := mustBet(t, h, alice, engine.BetRequest{Amount: 250})
	v, err := h.table.Cancel(context.Background(), alice, b.Bet.BetID)
	if err != nil || v.Bet.Status != engine.StatusCancelled {
		t.Fatalf("cancel %+v %v", v, err)
	}
	if _, err := h.table.Cancel(context.Background(), playerOf("acme", "bob"), b.Bet.BetID); !errors.Is(err, round.ErrUnknownBet) {
		t.Fatalf("cancel of another's bet: %v", err)
	}
	mv := h.movements()
	if len(mv) != 1 || mv[0].Kind != movements.KindRollback || mv[0].Amount != 250 || mv[0].BetID != b.Bet.BetID {
		t.Fatalf("movements %+v", mv)
	}
	c := mustBet(t, h, alice, engine.BetRequest{Amount: 100})
	h.fly()
	if _, err := h.table.Cancel(context.Background(), alice, c.Bet.BetID); !errors.Is(err, round.ErrCancelNotAllowed) {
		t.Fatalf("cancel while flying: %v", err)
	}
}

// Rule RB-2 RB-1: cancels of one bet sent at once are one cancel: every one
// answers the first one's result (the balance expected once, from the mark
// read before it),
// and one rollback leaves; a cancel later in the round answers the same.
func TestCancelRepeatedConcurrently(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, h *harness) {
		h.run()
		b := mustBet(t, h, alice, engine.BetRequest{Amount: 250})
		h.balances.set(100000)
		const n = 10
		results := make([]engine.CancelResult, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[i], errs[i] = h.table.Cancel(context.Background(), alice, b.Bet.BetID)
			}()
		}
		wg.Wait()
		for i := range n {
			if errs[i] != nil || results[i] != results[0] {
				t.Fatalf("cancel %d: %+v %v; the first: %+v", i, results[i], errs[i], results[0])
			}
		}
		if got := h.balances.expected(); got != 1 || results[0].Balance != 101250 || results[0].Bet.Status != engine.StatusCancelled {
			t.Fatalf("balance expected %d times; result %+v", got, results[0])
		}
		again, err := h.table.Cancel(context.Background(), alice, b.Bet.BetID)
		if err != nil || again != results[0] {
			t.Fatalf("a later cancel: %+v %v", again, err)
		}
		if mv := h.movements(); len(mv) != 1 || mv[0].Kind != movements.KindRollback || mv[0].Amount != 250 {
			t.Fatalf("movements %+v, want one rollback of 250", mv)
		}
		if rec := h.bet(b.Bet.BetID); rec.Status != engine.StatusCancelled {
			t.Fatalf("stored %+v", rec)
		}
	})
}

// Rule RB-4: closing with bets in play: a flying round that does not crash
// within the grace is voided and its bets rolled back; a cashed-out bet keeps
// its win.
func TestStopVoidsTheFlyingRound(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "")
	h.run()
	h.roundCrashingAbove(1000)
	a := mustBet(t, h, alice, engine.BetRequest{Amount: 100})
	b := mustBet(t, h, playerOf("acme", "bob"), engine.BetRequest{Amount: 200})
	f := h.fly()
	at := f.StartedAt.Add(time.Second)
	h.clock.Set(at)
	if _, err := h.table.Cashout(context.Background(), alice, a.Bet.BetID, at); err != nil {
		t.Fatal(err)
	}
	h.stop() // pushes the clock past the 30 s grace; 10.00x is at 38 s
	rec, _ := h.st.Round(context.Background(), "crash", f.RoundID)
	if rec.Status != engine.RoundVoid {
		t.Fatalf("round %s is %s", f.RoundID, rec.Status)
	}
	if r := h.bet(b.Bet.BetID); r.Status != engine.StatusVoid {
		t.Fatalf("bob's bet %s", r.Status)
	}
	if r := h.bet(a.Bet.BetID); r.Status != engine.StatusCashedOut {
		t.Fatalf("alice's bet %s", r.Status)
	}
	kinds := map[movements.MovementKind]int{}
	for _, m := range h.movements() {
		kinds[m.Kind]++
		if m.Kind == movements.KindRollback && (m.BetID != b.Bet.BetID || m.Amount != 200) {
			t.Fatalf("rollback %+v", m)
		}
	}
	if kinds[movements.KindWin] != 1 || kinds[movements.KindRollback] != 1 {
		t.Fatalf("movements by kind %v", kinds)
	}
}

// A table asked to stop serves the round in play to its crash before it
// hands the lease over: bets in its window are admitted and cashouts priced
// as before the stop (a rolling deploy refuses nothing of the round in
// play), and its bets are settled by the crash, not voided.
func TestStopServesTheRoundInPlay(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "")
	h.run()
	// A round that takes off, flies past 1 s and crashes well within the
	// stop's 30 s grace.
	for range 200 {
		if v, _ := h.table.Round(); v.Phase == engine.PhaseBetting {
			if cp := h.crashPoint(v.RoundID); cp >= 150 && cp <= 400 {
				break
			}
		}
		h.nextRound()
	}
	h.table.Stop()
	players := make([]engine.Player, 20)
	bets := make([]engine.BetResult, len(players))
	for i := range players {
		players[i] = playerOf("acme", fmt.Sprintf("player%02d", i))
		bets[i] = mustBet(t, h, players[i], engine.BetRequest{Amount: 100})
	}
	f := h.fly()
	at := f.StartedAt.Add(time.Second)
	h.clock.Set(at)
	cashed, err := h.table.Cashout(context.Background(), players[0], bets[0].Bet.BetID, at)
	if err != nil {
		t.Fatalf("cashout in the stopping table's last round: %v", err)
	}
	h.clock.Set(f.StartedAt.Add(round.TimeToReach(h.crashPoint(f.RoundID))))
	select {
	case <-h.table.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the stopping table did not stop after its round crashed")
	}
	if rec, _ := h.st.Round(context.Background(), "crash", f.RoundID); rec.Status != engine.RoundFinished {
		t.Fatalf("the last round is %s, want %s", rec.Status, engine.RoundFinished)
	}
	if r := h.bet(bets[0].Bet.BetID); r.Status != engine.StatusCashedOut || r.Payout == nil || *r.Payout != cashed.Payout {
		t.Errorf("the bet cashed out: %s, payout %v; want cashed_out, %d", r.Status, r.Payout, cashed.Payout)
	}
	for _, b := range bets[1:] {
		if r := h.bet(b.Bet.BetID); r.Status != engine.StatusLost {
			t.Errorf("bet %s is %s, want lost", b.Bet.BetID, r.Status)
		}
	}
}

// A table alone on its database (one process on a SQLite file: a sole
// lease) asked to stop while its flying round holds no bet ends the round at
// once, without waiting for its crash or the shutdown grace: nothing is in
// play, and nobody would take the table over. The round is void by the
// planned-stop rule, its hash revealed as a crashed round's. (The clock never
// moves here: only this path can stop it.) A cluster's table flies such a
// round on to its crash and hands over (TestLeaseOneLeaderThenHandOver), so
// a rolling deploy voids no round.
func TestStopEndsAFlyingRoundWithoutBetsAtOnce(t *testing.T) {
	t.Parallel()
	h := newHarnessAdjusted(t, "", nil, nil, func(c *engine.Config) { c.Lease.Sole = true })
	h.run()
	h.roundCrashingAbove(200) // never at take-off
	f := h.fly()
	h.table.Stop()
	select {
	case <-h.table.Done():
	case <-time.After(stateWait):
		t.Fatal("the stopping table waited for the crash of a flying round that held no bet")
	}
	rec, err := h.st.Round(context.Background(), "crash", f.RoundID)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Status != engine.RoundVoid || rec.VoidRule != engine.VoidPlannedStop || rec.Hash == "" || rec.CrashPoint == 0 {
		t.Fatalf("the round stopped in flight: %s, rule %q, hash %q, crash point %d; want void by %q with its hash and crash point",
			rec.Status, rec.VoidRule, rec.Hash, rec.CrashPoint, engine.VoidPlannedStop)
	}
}

// Demo sessions play the same rounds with the game's play money and never
// touch a wallet.
func TestDemoBets(t *testing.T) {
	t.Parallel()
	bank := engine.NewDemoBank()
	h2 := newHarnessWithBank(t, bank)
	h2.run()
	demo := engine.Player{Session: []byte("demo-session-0000000000000000000"), Operator: "acme", Currency: "BRL", Name: "Guest", Demo: true}
	bank.Open(demo.Session, 1000)
	h2.roundCrashingAbove(200)
	res := mustBet(t, h2, demo, engine.BetRequest{Amount: 1000, AutoCashout: 200})
	if res.Balance != 0 {
		t.Fatalf("balance after the bet %d", res.Balance)
	}
	var refused *engine.RefusedError
	if _, err := h2.table.PlaceBet(context.Background(), demo, engine.BetRequest{Amount: 100}); !errors.As(err, &refused) || refused.Code != "INSUFFICIENT_FUNDS" {
		t.Fatalf("bet beyond the balance: %v", err)
	}
	h2.nextRound()
	if bal, _ := bank.Balance(demo.Session); bal != 2000 {
		t.Fatalf("balance after a 2.00x win: %d", bal)
	}
	if len(h2.callsSnapshot()) != 0 || len(h2.movements()) != 0 {
		t.Fatal("a demo bet touched the wallet")
	}
}

// Rule RB-3 RB-5: while the table runs, a bet left pending in an earlier round
// (its outcome unknown because a commit failed) is rolled back after the next
// crash, without waiting for a boot.
func TestSweepPendingBets(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "")
	ctx := context.Background()
	old := store.MillisOf(h.clock.Now().Add(-2 * time.Minute))
	round := store.RoundRecord{ID: "crash-0", GameID: "crash", Seq: 0 + 1000000, Hash: "h", CrashPoint: 200, Status: engine.RoundFinished, BettingEndsAt: old, CreatedAt: old}
	if err := h.st.InsertRound(ctx, round); err != nil {
		t.Fatal(err)
	}
	bet := store.BetRecord{ID: "b_stuck", RoundID: "crash-0", GameID: "crash", SessionHash: alice.Session, Operator: "acme", PlayerID: "alice", Token: alice.Token, Currency: "BRL", Amount: 400, Status: engine.StatusPending, PlacedAt: old}
	if err := h.st.InsertBet(ctx, &bet); err != nil {
		t.Fatal(err)
	}
	h.run()
	h.nextRound()
	deadline := time.Now().Add(stateWait)
	for h.bet("b_stuck").Status != engine.StatusVoid {
		if time.Now().After(deadline) {
			t.Fatalf("the stuck bet is still %s", h.bet("b_stuck").Status)
		}
		time.Sleep(10 * time.Millisecond)
	}
	mv := h.movements()
	if len(mv) != 1 || mv[0].BetID != "b_stuck" || mv[0].Kind != movements.KindRollback || mv[0].Amount != 400 {
		t.Fatalf("movements %+v", mv)
	}
}

// Rule WIN-8: in a cluster (LossDelay) a crash commits the round finished
// and the bets still accepted are lost only LossDelay later, with their
// zero_wins, so that a cashout another replica priced before the crash
// commits first. A leader whose term ends in between leaves them to the next
// leader, whose recovery loses them at the crash's instant, once.
func TestCrashLossesAfterTheDelayOrAtRecovery(t *testing.T) {
	t.Parallel()
	for _, db := range []string{"sqlite", "postgres"} {
		t.Run(db, func(t *testing.T) {
			t.Parallel()
			dsn := ""
			if db == "postgres" {
				dsn = pgtest.Start(t)
			}
			const delay = time.Second
			h := newHarnessAdjusted(t, dsn, nil, nil, func(c *engine.Config) { c.LossDelay = delay })
			h.run()
			zoe := playerOf("zero", "zoe")
			crashed := func() (engine.RoundView, engine.BetResult) {
				t.Helper()
				h.roundCrashingAbove(120)
				b := mustBet(t, h, zoe, engine.BetRequest{Amount: 500})
				v := h.fly()
				h.clock.Set(v.StartedAt.Add(round.TimeToReach(h.crashPoint(v.RoundID))))
				v = h.waitPhase(engine.PhaseCrashed)
				eventually(t, "the crash committed", func() bool {
					rec, err := h.st.Round(context.Background(), testGame.ID, v.RoundID)
					return err == nil && rec.Status == engine.RoundFinished
				})
				if s := h.bet(b.Bet.BetID).Status; s != engine.StatusAccepted {
					t.Fatalf("the bet is %s at the crash, want accepted until the losses", s)
				}
				return v, b
			}
			zeroWins := func(betID string) int {
				n := 0
				for _, m := range h.movements() {
					if m.BetID == betID && m.WinType == wallet.WinTypeZeroWin {
						n++
					}
				}
				return n
			}

			v, b := crashed()
			h.clock.Set(v.CrashedAt.Add(delay))
			eventually(t, "the losses after the delay", func() bool { return h.bet(b.Bet.BetID).Status == engine.StatusLost })
			if n := zeroWins(b.Bet.BetID); n != 1 {
				t.Fatalf("%d zero_wins, want 1", n)
			}

			// The next crash: the leader's term ends before its losses.
			h.nextRound()
			v, b = crashed()
			other := h.replica("replica-b")
			old := h.lease()
			if err := h.st.ReleaseLease(context.Background(), testGame.ID, old.Holder, old.Epoch); err != nil {
				t.Fatal(err)
			}
			eventually(t, "the next leader leads", other.table.Leadership().Leading)
			eventually(t, "its recovery loses the bet", func() bool { return h.bet(b.Bet.BetID).Status == engine.StatusLost })
			rec := h.bet(b.Bet.BetID)
			if !rec.SettledAt.Time().Equal(time.UnixMilli(v.CrashedAt.UnixMilli())) || rec.Payout == nil || *rec.Payout != 0 {
				t.Fatalf("lost at %s paying %v; want at the crash %s, 0", rec.SettledAt.Time(), rec.Payout, v.CrashedAt)
			}
			if n := zeroWins(b.Bet.BetID); n != 1 {
				t.Fatalf("%d zero_wins, want 1", n)
			}
		})
	}
}

// A bet whose debit outcome never reached the leader (the replica that ran
// its money path got no answer to its decide, or asked a replica that no
// longer led): the wallet took its debit, its intent is stored pending, and
// the leader's round holds it undecided. At the crash's losses, once the
// round's last /bet answer is past (its debit deadline plus
// DebitClockMargin), the leader voids it and queues its rollback (RB-3: its
// outcome was not known at take-off), after the debit (RB-13); a bet left
// pending that way waited for the sweep, a minute later, before.
func TestUndecidedBetRolledBackWithTheLosses(t *testing.T) {
	t.Parallel()
	for _, db := range []string{"sqlite", "postgres"} {
		t.Run(db, func(t *testing.T) {
			t.Parallel()
			dsn := ""
			if db == "postgres" {
				dsn = pgtest.Start(t)
			}
			const delay = 200 * time.Millisecond
			h := newHarnessAdjusted(t, dsn, nil, nil, func(c *engine.Config) { c.LossDelay = delay })
			h.run()
			h.roundCrashingAbove(101)
			p := playerOf("acme", "undecided")
			adm, out := h.debited(p, engine.BetRequest{Amount: 700})
			// No Decide: its answer was lost on the way to the leader.
			v := h.fly()
			h.clock.Set(v.StartedAt.Add(round.TimeToReach(h.crashPoint(v.RoundID))))
			v = h.waitPhase(engine.PhaseCrashed)
			if last := adm.Deadline.Add(engine.DebitClockMargin); v.CrashedAt.Add(delay).Before(last) {
				h.clock.Set(v.CrashedAt.Add(delay))
				time.Sleep(50 * time.Millisecond)
				if s := h.bet(adm.BetID).Status; s != engine.StatusPending {
					t.Fatalf("the bet is %s before the round's last /bet answer is past, want pending", s)
				}
			}
			end := adm.Deadline.Add(engine.DebitClockMargin)
			if losses := v.CrashedAt.Add(delay); losses.After(end) {
				end = losses
			}
			h.clock.Set(end)
			eventually(t, "the undecided bet voided", func() bool { return h.bet(adm.BetID).Status == engine.StatusVoid })
			var rollbacks []movements.MovementRecord
			for _, m := range h.movements() {
				if m.BetID == adm.BetID {
					rollbacks = append(rollbacks, m)
				}
			}
			if len(rollbacks) != 1 || rollbacks[0].Kind != movements.KindRollback || rollbacks[0].Amount != 700 {
				t.Fatalf("movements of the undecided bet: %+v, want one rollback of 700", rollbacks)
			}
			// A decide that arrives after the round moves nothing more.
			if _, err := h.table.Decide(context.Background(), p.Session, adm, out); !errors.Is(err, engine.ErrTableUnavailable) {
				t.Fatalf("a late decide: %v, want ErrTableUnavailable", err)
			}
		})
	}
}

// WIN-3: an auto-cashout at or below the crash point is paid at its target
// even when the leader's loop reads the flight an hour late (a process
// resumed after a long pause, a clock stepped ahead): the multiplier
// saturates rather than overflow, the target fires, and the crash follows at
// the same reading. Before, the converted overflow fired no target and the
// loop spun on it forever.
func TestFlightReadAnHourLate(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "")
	h.run()
	h.roundCrashingAbove(130)
	b := mustBet(t, h, alice, engine.BetRequest{Amount: 1000, AutoCashout: 120})
	v := h.fly()
	h.clock.Set(v.StartedAt.Add(time.Hour))
	// The round crashes at once; with the clock an hour on, its pause is over
	// too, and the next round may open before a look at the phase sees the
	// crash: the round's row says it.
	eventually(t, "the round crashed", func() bool {
		for _, r := range h.rounds() {
			if r.ID == v.RoundID {
				return r.Status == engine.RoundFinished
			}
		}
		return false
	})
	eventually(t, "the auto-cashout settled", func() bool { return h.bet(b.Bet.BetID).Status != engine.StatusAccepted })
	rec := h.bet(b.Bet.BetID)
	if rec.Status != engine.StatusCashedOut || rec.Multiplier != 120 || rec.Payout == nil || *rec.Payout != 1200 {
		t.Fatalf("the auto-cashout of 1.20x, under the crash point: %s at x%d paying %v; want cashed out at x120 paying 1200", rec.Status, rec.Multiplier, rec.Payout)
	}
}

// Cashouts made at once reach the round's board, every one: the notes that
// tell the leader's round of them are applied in batches, and none is lost
// between two batches.
func TestCashoutsAtOnceAllReachTheBoard(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "")
	h.run()
	h.roundCrashingAbove(200)
	const n = 40
	bets := make([]engine.BetResult, n)
	for i := range n {
		bets[i] = mustBet(t, h, playerOf("acme", fmt.Sprintf("crowd-%d", i)), engine.BetRequest{Amount: 1000})
	}
	f := h.fly()
	at := f.StartedAt.Add(round.TimeToReach(150))
	h.clock.Set(at)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if _, err := h.table.Cashout(context.Background(), playerOf("acme", fmt.Sprintf("crowd-%d", i)), bets[i].Bet.BetID, at); err != nil {
				t.Errorf("cashout %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	sub := h.table.Subscribe(nil, 256)
	defer sub.Close()
	// The board is sent every 250 ms of the table's clock, which the test
	// moves on in steps of 10 ms, well short of the crash (at 2.00x or more).
	before := round.TimeToReach(200)
	deadline := time.After(10 * time.Second)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case ev := <-sub.C:
			if ev.Type == engine.EventBets && ev.Round.RoundID == f.RoundID && ev.CashedOut == n {
				return
			}
		case <-tick.C:
			if next := h.clock.Now().Add(10 * time.Millisecond); next.Sub(f.StartedAt) < before {
				h.clock.Set(next)
			}
		case <-deadline:
			t.Fatalf("no board of round %s with %d cashed out", f.RoundID, n)
		}
	}
}

// failsOneAuto is a table's store on which the first commit of bet's
// auto-cashout fails, as a commit does when the database is lost for a
// moment.
type failsOneAuto struct {
	engine.Store
	bet    atomic.Value // string: the bet id, once placed
	failed atomic.Bool
}

func (s *failsOneAuto) MoveBet(ctx context.Context, id, from, to string, ch engine.BetChange) (bool, error) {
	if bet, _ := s.bet.Load().(string); id == bet && to == engine.StatusCashedOut && s.failed.CompareAndSwap(false, true) {
		return false, errors.New("the database went away")
	}
	return s.Store.MoveBet(ctx, id, from, to, ch)
}

// Rule LIM-14: an auto-cashout whose commit failed is not lost at the crash
// (the losses never take a bet whose target the round reached): the table
// pays it right after them, at exactly its target and at the instant the
// round reached it, with one /win.
func TestAutoCashoutWhoseCommitFailedIsPaidAfterTheCrash(t *testing.T) {
	t.Parallel()
	st := &failsOneAuto{}
	h := newHarnessAdjusted(t, "", nil, nil, func(cfg *engine.Config) {
		st.Store = cfg.Store
		cfg.Store = st
	})
	h.run()
	h.roundCrashingAbove(200)
	bet := mustBet(t, h, alice, engine.BetRequest{Amount: 1000, AutoCashout: 150})
	st.bet.Store(bet.Bet.BetID)
	f := h.fly()
	h.clock.Set(f.StartedAt.Add(round.TimeToReach(150)))
	time.Sleep(20 * time.Millisecond)
	h.clock.Set(f.StartedAt.Add(round.TimeToReach(h.crashPoint(f.RoundID))))
	h.waitPhase(engine.PhaseCrashed)
	if !st.failed.Load() {
		t.Fatal("the auto-cashout's first commit was never tried")
	}
	eventually(t, "the auto-cashout paid after the crash", func() bool {
		return h.bet(bet.Bet.BetID).Status != engine.StatusAccepted
	})
	rec := h.bet(bet.Bet.BetID)
	if reached := f.StartedAt.Add(round.TimeToReach(150)); rec.Status != engine.StatusCashedOut || rec.Multiplier != 150 ||
		rec.Payout == nil || *rec.Payout != 1500 || rec.SettledAt.Time().Sub(reached).Abs() > time.Millisecond {
		t.Fatalf("bet %s x%d payout %v at %s; want cashed out at x1.50 paying 1500 at %s", rec.Status, rec.Multiplier, rec.Payout, rec.SettledAt.Time(), reached)
	}
	wins := 0
	for _, m := range h.movements() {
		if m.BetID == bet.Bet.BetID {
			if m.Kind != movements.KindWin || m.Amount != 1500 {
				t.Fatalf("movement %+v", m)
			}
			wins++
		}
	}
	if wins != 1 {
		t.Fatalf("%d /win movements, want 1", wins)
	}
}

// The table's committer tells CommitObserved of each batch it commits: a
// bet's intent and acceptance, and a cashout with its /win, each a batch of
// at least one job whose transaction took time.
func TestCommitsObserved(t *testing.T) {
	t.Parallel()
	var (
		mu      sync.Mutex
		batches []groupcommit.Batch
	)
	observed := func() (n, jobs int) {
		mu.Lock()
		defer mu.Unlock()
		for _, b := range batches {
			if b.Items < 1 || b.Took <= 0 || b.Waited < 0 || b.Failed {
				t.Fatalf("batch observed %+v", b)
			}
			jobs += b.Items
		}
		return len(batches), jobs
	}
	h := newHarnessAdjusted(t, "", nil, nil, func(cfg *engine.Config) {
		cfg.CommitObserved = func(b groupcommit.Batch) { mu.Lock(); batches = append(batches, b); mu.Unlock() }
	})
	h.run()
	h.roundCrashingAbove(150)
	a := mustBet(t, h, alice, engine.BetRequest{Amount: 1000})
	_, betJobs := observed()
	if betJobs < 2 {
		t.Fatalf("%d jobs observed after a bet, want its intent and its acceptance", betJobs)
	}
	f := h.fly()
	at := f.StartedAt.Add(10 * time.Millisecond)
	h.clock.Set(at)
	if _, err := h.table.Cashout(context.Background(), alice, a.Bet.BetID, at); err != nil {
		t.Fatal(err)
	}
	if _, jobs := observed(); jobs != betJobs+1 {
		t.Fatalf("%d jobs observed after the cashout, want %d", jobs, betJobs+1)
	}
}
