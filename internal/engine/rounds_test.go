package engine_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/internal/engine"
	"github.com/crashstudio/crashgame/internal/fairness"
	"github.com/crashstudio/crashgame/internal/movements"
	"github.com/crashstudio/crashgame/internal/round"
	"github.com/crashstudio/crashgame/internal/wallet"
)

// The phases follow the configured durations; the crash point and hash are
// hidden until the crash, then stored and revealed, and they are the chain's.
func TestRoundPhases(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "")
	h.run()
	v := h.roundCrashingAbove(150)
	if v.Hash != "" || v.CrashPoint != 0 {
		t.Fatalf("hash or crash point visible during betting: %+v", v)
	}
	if got := v.BettingEndsAt.Sub(h.clock.Now()); got != 5*time.Second && got > 5*time.Second {
		t.Fatalf("betting lasts %v", got)
	}
	f := h.fly()
	if f.Hash != "" || f.CrashPoint != 0 {
		t.Fatalf("hash or crash point visible while flying: %+v", f)
	}
	cp := h.crashPoint(f.RoundID)
	h.clock.Set(f.StartedAt.Add(round.TimeToReach(cp) - time.Millisecond))
	time.Sleep(20 * time.Millisecond)
	if now, m := h.table.Round(); now.Phase != engine.PhaseFlying || m >= cp {
		t.Fatalf("crashed early: phase %s multiplier %d, crash point %d", now.Phase, m, cp)
	}
	h.clock.Set(f.StartedAt.Add(round.TimeToReach(cp)))
	c := h.waitPhase(engine.PhaseCrashed)
	if c.CrashPoint != cp || c.Hash == "" {
		t.Fatalf("crashed view %+v, want crash point %d and the hash", c, cp)
	}
	// Verified with the settings and salt its chain published, and linked
	// to its terminal in exactly its position's number of steps.
	rec, err := h.st.Round(context.Background(), testGame.ID, c.RoundID)
	if err != nil || rec.Status != engine.RoundFinished || rec.Hash != c.Hash || rec.CrashPoint != cp {
		t.Fatalf("stored round %+v %v", rec, err)
	}
	chain, err := h.st.HashChains().ChainByID(context.Background(), rec.ChainID)
	if err != nil || chain.Salt == nil {
		t.Fatalf("the round's chain %+v, %v", chain, err)
	}
	got, err := fairness.VerifyRound(c.Hash, *chain.Salt, chain.RTPBasisPts, chain.MaxMultiplier)
	if err != nil || got != cp {
		t.Fatalf("verify: %d %v, want %d", got, err, cp)
	}
	hash, _ := fairness.ParseHash(c.Hash)
	term, _ := fairness.ParseHash(chain.Terminal)
	if pos, err := fairness.ChainPosition(hash, term, 1000); err != nil || int64(pos) != rec.Position {
		t.Fatalf("the round hash is at %d of the published chain (%v), want its position %d", pos, err, rec.Position)
	}
	// The pause, then the next round.
	h.clock.Set(c.CrashedAt.Add(3*time.Second - time.Millisecond))
	time.Sleep(20 * time.Millisecond)
	if n, _ := h.table.Round(); n.RoundID != c.RoundID {
		t.Fatal("the pause was cut short")
	}
	h.clock.Set(c.CrashedAt.Add(3 * time.Second))
	n := h.waitPhase(engine.PhaseBetting)
	if n.Seq != c.Seq+1 {
		t.Fatalf("next round seq %d after %d", n.Seq, c.Seq)
	}
}

// Rule BET-1 BET-4 BET-2 BAL-4 LIM-12 LIM-13 LIM-5 AMB-25 ENV-13: a bet is debited with its
// own transaction_id and freebet_id null, joins the round only once the wallet
// said ok, within the limits, and at most five per player per round.
func TestBetAdmission(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "")
	h.run()
	ctx := context.Background()
	res := mustBet(t, h, alice, engine.BetRequest{Amount: 100})
	if res.Balance != 100000 || res.Bet.Status != engine.StatusAccepted {
		t.Fatalf("result %+v", res)
	}
	call := h.wallet.calls[0]
	if call.TransactionID != res.Bet.BetID || call.FreebetID != nil || call.Amount != 100 || call.PlayerID != "alice" || call.RoundID != res.Bet.RoundID || call.GameID != "crash" || call.Currency != "BRL" {
		t.Fatalf("wallet call %+v", call)
	}
	if rec := h.bet(res.Bet.BetID); rec.Status != engine.StatusAccepted || rec.OperatorTxID != "op-"+res.Bet.BetID {
		t.Fatalf("stored %+v", rec)
	}
	tests := []struct {
		name string
		req  engine.BetRequest
		want error
	}{
		{"below min_bet", engine.BetRequest{Amount: 99}, round.ErrBetLimit},
		{"above max_bet", engine.BetRequest{Amount: 100001}, round.ErrBetLimit},
		{"zero", engine.BetRequest{Amount: 0}, round.ErrBetLimit},
		{"auto-cashout 1.00x", engine.BetRequest{Amount: 100, AutoCashout: 100}, round.ErrBadAutoCashout},
		{"auto-cashout above the maximum", engine.BetRequest{Amount: 100, AutoCashout: 100001}, round.ErrBadAutoCashout},
	}
	for _, tt := range tests {
		if _, err := h.table.PlaceBet(ctx, alice, tt.req); !errors.Is(err, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.want)
		}
	}
	for i := 0; i < 4; i++ {
		mustBet(t, h, alice, engine.BetRequest{Amount: 100000})
	}
	if _, err := h.table.PlaceBet(ctx, alice, engine.BetRequest{Amount: 100}); !errors.Is(err, round.ErrTooManyBets) {
		t.Fatalf("sixth bet: %v", err)
	}
	// Another player is not affected by alice's count.
	mustBet(t, h, playerOf("acme", "bob"), engine.BetRequest{Amount: 100})
	if n := len(h.wallet.calls); n != 6 {
		t.Fatalf("%d /bet calls, want 6 (the refused ones never reach the wallet)", n)
	}
	ids := map[string]bool{}
	for _, c := range h.wallet.calls {
		if ids[c.TransactionID] {
			t.Fatalf("transaction_id %s used twice (ENV-13)", c.TransactionID)
		}
		ids[c.TransactionID] = true
	}
	h.fly()
	if _, err := h.table.PlaceBet(ctx, alice, engine.BetRequest{Amount: 100}); !errors.Is(err, round.ErrBettingClosed) {
		t.Fatalf("bet while flying: %v", err)
	}
}

// A bet is admitted by the moment the game received it, as a cashout is
// priced by its own (round.Admit judges that moment against the window): the
// bet is placed at its arrival, not when the table reached it; an arrival
// later than the table's own clock (a clock that is not the table's) counts
// as the table's now.
func TestBetAdmittedByArrival(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "")
	h.run()
	h.waitPhase(engine.PhaseBetting)
	ctx := context.Background()
	now := h.clock.Now()
	tests := []struct {
		name     string
		received time.Time
		placed   time.Time
	}{
		{"received earlier", now.Add(-40 * time.Millisecond), now.Add(-40 * time.Millisecond)},
		{"received ahead of the table's clock", now.Add(time.Hour), now},
		{"no time given", time.Time{}, now},
	}
	for i, tt := range tests {
		p := playerOf("acme", fmt.Sprintf("arrival-%d", i))
		res, err := h.table.PlaceBet(ctx, p, engine.BetRequest{Amount: 100, ReceivedAt: tt.received})
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if !res.Bet.PlacedAt.Equal(tt.placed) {
			t.Errorf("%s: placed_at %v, want %v", tt.name, res.Bet.PlacedAt, tt.placed)
		}
	}
}

// Rule LIM-5 AMB-25 BET-3: the five bets are the player's, not the session's:
// two sessions of one player (two tabs, a replayed launch) share them; a
// cancel gives a place back; another player and a demo session count apart.
func TestFiveBetsPerPlayerAcrossSessions(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "")
	h.run()
	ctx := context.Background()
	tab1 := alice
	tab2 := alice
	tab2.Session, tab2.Token = []byte("session-alice-second-tab-0000000"), "tok-alice-second-tab-01"
	var placed []engine.BetResult
	for i := range 5 {
		p := tab1
		if i%2 == 1 {
			p = tab2
		}
		placed = append(placed, mustBet(t, h, p, engine.BetRequest{Amount: 100}))
	}
	for name, p := range map[string]engine.Player{"first session": tab1, "second session": tab2} {
		if _, err := h.table.PlaceBet(ctx, p, engine.BetRequest{Amount: 100}); !errors.Is(err, round.ErrTooManyBets) {
			t.Fatalf("sixth bet from the %s: %v, want too many bets", name, err)
		}
	}
	// The same player id at another operator is another player.
	mustBet(t, h, playerOf("zero", "alice"), engine.BetRequest{Amount: 100})
	// A cancel in the second session gives the player a place back.
	if _, err := h.table.Cancel(ctx, tab2, placed[1].Bet.BetID); err != nil {
		t.Fatal(err)
	}
	mustBet(t, h, tab1, engine.BetRequest{Amount: 100})
	if _, err := h.table.PlaceBet(ctx, tab1, engine.BetRequest{Amount: 100}); !errors.Is(err, round.ErrTooManyBets) {
		t.Fatalf("sixth bet after the cancel and a new bet: %v", err)
	}
	if n := len(h.wallet.calls); n != 7 {
		t.Fatalf("%d /bet calls, want 7 (a refused sixth never reaches the wallet)", n)
	}
}

// Rule BET-10 BET-2 WERR-7 WERR-8: a final refusal refuses the bet with its code
// and balance; the bet is stored refused, nothing is rolled back, and it does
// not count against the five.
func TestBetRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "")
	h.wallet.answer = func(c wallet.BetCall, _ time.Time) wallet.Result {
		return wallet.Result{Outcome: wallet.Refused, ErrorCode: "INSUFFICIENT_FUNDS", Balance: 50, HasBalance: true}
	}
	h.run()
	_, err := h.table.PlaceBet(context.Background(), alice, engine.BetRequest{Amount: 100})
	var refused *engine.RefusedError
	if !errors.As(err, &refused) || refused.Code != "INSUFFICIENT_FUNDS" || refused.Balance != 50 {
		t.Fatalf("err = %v", err)
	}
	if rec := h.bet(h.wallet.calls[0].TransactionID); rec.Status != engine.StatusRefused || rec.Refusal != "INSUFFICIENT_FUNDS" {
		t.Fatalf("stored %+v", rec)
	}
	if m := h.movements(); len(m) != 0 {
		t.Fatalf("movements after a refusal: %+v", m)
	}
	h.wallet.answer = nil
	for i := 0; i < 5; i++ {
		mustBet(t, h, alice, engine.BetRequest{Amount: 100})
	}
}

// Rule RB-3 RB-6 RB-1: an outcome still unknown when the betting window closes,
// or a success that comes after it, refuses the bet and queues a rollback of
// the debit's amount, without freebet_id. A /bet that was never sent, because
// the bet's intent committed after its debit deadline (the game was late, not
// the wallet), is refused TABLE_BUSY, not WALLET_UNAVAILABLE: nothing was
// taken, and the player may bet again; its rollback is still queued (RB-13:
// the wallet answers 200 for a transaction it never saw).
func TestBetOutcomeAfterTheWindow(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		outcome wallet.Outcome
		reason  string
		refusal string // the refusal's code
	}{
		{"unknown at the close", wallet.Temporary, wallet.ReasonTimeout, "WALLET_UNAVAILABLE"},
		{"success after the close", wallet.Success, wallet.ReasonOK, "BETTING_CLOSED"},
		{"not sent: the intent committed after the deadline", wallet.Temporary, wallet.ReasonWindowClosed, "TABLE_BUSY"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, "")
			release, errc := h.betHeldAtTheWallet(wallet.Result{Outcome: tt.outcome, Reason: tt.reason, Balance: 1, HasBalance: true})
			h.fly()
			close(release)
			err := <-errc
			if err == nil {
				t.Fatal("the bet was accepted")
			}
			got := ""
			if r, ok := engine.RefusalOf(err); ok {
				got = r.Code
			}
			if got != tt.refusal {
				t.Fatalf("err = %v: refusal %q, want %q", err, got, tt.refusal)
			}
			id := h.callsSnapshot()[0].TransactionID
			if rec := h.bet(id); rec.Status != engine.StatusVoid {
				t.Fatalf("stored %+v", rec)
			}
			m := h.movements()
			if len(m) != 1 || m[0].Kind != movements.KindRollback || m[0].BetID != id || m[0].Amount != 700 || m[0].FreebetID != nil {
				t.Fatalf("movements %+v", m)
			}
		})
	}
}

// A debit the wallet answers after the window closed, while the round waits
// for the window's debits (DebitGrace), accepts the bet: the round takes off
// only once it is answered, and a player who bet in time keeps the bet.
func TestDebitAnsweredWhileTheRoundWaitsToTakeOff(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "")
	release, errc := h.betHeldAtTheWallet(wallet.Result{Outcome: wallet.Success, Balance: 1, HasBalance: true})
	v, _ := h.table.Round()
	h.clock.Set(v.BettingEndsAt.Add(engine.DefaultDebitGrace / 2))
	// A bet received now is refused: the window has closed.
	if _, err := h.table.PlaceBet(context.Background(), playerOf("acme", "bob"), engine.BetRequest{Amount: 100}); !errors.Is(err, round.ErrBettingClosed) {
		t.Fatalf("a bet after the window: %v", err)
	}
	time.Sleep(50 * time.Millisecond)
	if n, _ := h.table.Round(); n.Phase != engine.PhaseBetting {
		t.Fatalf("the round took off (%s) with a debit of its window unanswered", n.Phase)
	}
	close(release)
	if err := <-errc; err != nil {
		t.Fatalf("the bet answered in the wait: %v", err)
	}
	deadline := time.Now().Add(stateWait)
	for n, _ := h.table.Round(); n.Phase == engine.PhaseBetting; n, _ = h.table.Round() {
		if time.Now().After(deadline) {
			t.Fatal("the round did not take off once its last debit was answered")
		}
		time.Sleep(time.Millisecond)
	}
	id := h.callsSnapshot()[0].TransactionID
	if rec := h.bet(id); rec.Status != engine.StatusAccepted && rec.Status != engine.StatusLost && rec.Status != engine.StatusCashedOut {
		t.Fatalf("stored %+v", rec)
	}
	if m := h.movements(); len(m) != 0 {
		t.Fatalf("movements %+v, want none (no rollback)", m)
	}
}

// betHeldAtTheWallet runs the table and places alice's bet of 700 whose /bet
// the wallet answers with res only once release is closed; it returns when
// the /bet has been sent, with the bet's answer to come on errc.
func (h *harness) betHeldAtTheWallet(res wallet.Result) (release chan struct{}, errc chan error) {
	release, errc = make(chan struct{}), make(chan error, 1)
	h.wallet.answer = func(c wallet.BetCall, deadline time.Time) wallet.Result {
		<-release
		return res
	}
	h.run()
	go func() {
		_, err := h.table.PlaceBet(context.Background(), alice, engine.BetRequest{Amount: 700})
		errc <- err
	}()
	for len(h.callsSnapshot()) == 0 {
		time.Sleep(time.Millisecond)
	}
	return release, errc
}

func (h *harness) callsSnapshot() []wallet.BetCall {
	h.wallet.mu.Lock()
	defer h.wallet.mu.Unlock()
	return append([]wallet.BetCall(nil), h.wallet.calls...)
}

// Rule AUTH-17: while the operator's breaker is open, a new bet is refused at
// once and never reaches the wallet.
func TestBetRefusedWhileBreakerOpen(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "")
	h.wallet.breaker = true
	h.run()
	if _, err := h.table.PlaceBet(context.Background(), alice, engine.BetRequest{Amount: 100}); !errors.Is(err, engine.ErrWalletUnavailable) {
		t.Fatalf("err = %v", err)
	}
	if len(h.callsSnapshot()) != 0 {
		t.Fatal("a bet reached the wallet")
	}
}
