package round_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/internal/round"
)

var t0 = time.UnixMilli(1_795_000_000_000)

// bettingRound opens a round crashing at cp whose betting closes 5 s after t0.
func bettingRound(cp int64) *round.Round {
	return round.New("crash-1", cp, t0.Add(5*time.Second))
}

func intent(id, owner, player string, amount, auto int64) round.Intent {
	return round.Intent{ID: id, Owner: owner, Player: player, Amount: amount, AutoCashout: auto}
}

// accepted admits and debits a bet.
func accepted(t *testing.T, r *round.Round, in round.Intent) round.Bet {
	t.Helper()
	if _, err := r.Admit(t0, in); err != nil {
		t.Fatalf("admit %s: %v", in.ID, err)
	}
	b, err := r.Debited(in.ID, in.Amount, round.Debited, t0)
	if err != nil || b.State != round.Accepted {
		t.Fatalf("debit %s: %+v %v", in.ID, b, err)
	}
	return b
}

// Rule LIM-12 LIM-13 LIM-14: the limits that need no round.
func TestCheckBet(t *testing.T) {
	t.Parallel()
	l := round.Limits{MinBet: 100, MaxBet: 100000, MaxWin: 500000}
	tests := []struct {
		name    string
		amount  int64
		auto    int64
		freebet bool
		want    error
	}{
		{"at min_bet", 100, 0, false, nil},
		{"at max_bet", 100000, 0, false, nil},
		{"below min_bet", 99, 0, false, round.ErrBetLimit},
		{"above max_bet", 100001, 0, false, round.ErrBetLimit},
		{"zero", 0, 0, false, round.ErrBetLimit},
		{"negative", -100, 0, false, round.ErrBetLimit},
		{"free round: the grant's value is checked at intake", 0, 0, true, nil},
		{"auto-cashout 1.01x", 100, 101, false, nil},
		{"auto-cashout 1.00x", 100, 100, false, round.ErrBadAutoCashout},
		{"auto-cashout at the maximum", 100, 100000, false, nil},
		{"auto-cashout above the maximum", 100, 100001, false, round.ErrBadAutoCashout},
		{"auto-cashout on a free round too", 0, 100, true, round.ErrBadAutoCashout},
	}
	for _, tt := range tests {
		if err := round.CheckBet(tt.amount, tt.auto, tt.freebet, l, 100000); !errors.Is(err, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.want)
		}
	}
	if err := round.CheckBet(5, 0, false, round.Limits{}, 100000); err != nil {
		t.Errorf("unknown limits refuse nothing but a non-positive stake: %v", err)
	}
}

// Rule LIM-5 AMB-25 BET-3: admission: the window, and five bets per player
// whichever session places them; a refusal or a bet that never reached the
// wallet frees its place, a void after the window does not.
func TestAdmit(t *testing.T) {
	t.Parallel()
	r := bettingRound(300)
	for i := range 5 {
		owner := fmt.Sprintf("tab-%d", i%2)
		if _, err := r.Admit(t0, intent(fmt.Sprintf("b%d", i), owner, "acme/alice", 100, 0)); err != nil {
			t.Fatalf("bet %d: %v", i, err)
		}
	}
	if _, err := r.Admit(t0, intent("b5", "tab-2", "acme/alice", 100, 0)); !errors.Is(err, round.ErrTooManyBets) {
		t.Fatalf("sixth bet: %v", err)
	}
	if _, err := r.Admit(t0, intent("c0", "tab-9", "acme/bob", 100, 0)); err != nil {
		t.Fatalf("another player: %v", err)
	}
	if b, err := r.Debited("b0", 100, round.Refusal, t0); err != nil || b.State != round.Refused {
		t.Fatalf("refusal: %+v %v", b, err)
	}
	r.Forget("b1")
	for _, id := range []string{"b6", "b7"} {
		if _, err := r.Admit(t0, intent(id, "tab-0", "acme/alice", 100, 0)); err != nil {
			t.Fatalf("a freed place: %v", err)
		}
	}
	if _, err := r.Admit(t0, intent("b8", "tab-0", "acme/alice", 100, 0)); !errors.Is(err, round.ErrTooManyBets) {
		t.Fatalf("sixth bet after two places were freed: %v", err)
	}
	if _, err := r.Admit(t0.Add(5*time.Second), intent("late", "tab-9", "acme/carol", 100, 0)); !errors.Is(err, round.ErrBettingClosed) {
		t.Fatalf("a bet at the window's close: %v", err)
	}
	r.TakeOff(t0.Add(5 * time.Second))
	if _, err := r.Admit(t0.Add(5*time.Second), intent("late2", "tab-9", "acme/carol", 100, 0)); !errors.Is(err, round.ErrBettingClosed) {
		t.Fatalf("a bet while flying: %v", err)
	}
	// Rule RB-3: a debit confirmed after the window closed is voided (rolled back).
	if b, err := r.Debited("b2", 100, round.Debited, t0.Add(6*time.Second)); err != nil || b.State != round.Voided {
		t.Fatalf("a late debit: %+v %v", b, err)
	}
	if b, err := r.Debited("b3", 100, round.Undecided, t0.Add(6*time.Second)); err != nil || b.State != round.Voided {
		t.Fatalf("an undecided debit: %+v %v", b, err)
	}
}

// cashout is a cashout as the engine takes it: priced from the round's
// flight at the moment it was received, with no guard (the crash's own
// clock), then recorded in the round.
func cashout(r *round.Round, owner, id string, at time.Time) (round.Bet, error) {
	b, ok := r.Bet(id)
	if !ok || b.Owner != owner {
		return round.Bet{}, round.ErrUnknownBet
	}
	priced, err := r.Flight().Price(b, at, 0)
	if err != nil {
		return round.Bet{}, err
	}
	got, ok := r.Cashed(priced)
	if !ok {
		return round.Bet{}, round.ErrCashoutNotAllowed
	}
	return got, nil
}

// Rule WIN-3 LIM-14: a cashout is priced at the moment it was received and
// capped at max_win; at the crash it is refused; a bet is settled once.
func TestCashout(t *testing.T) {
	t.Parallel()
	r := bettingRound(250)
	accepted(t, r, intent("a", "s-a", "p-a", 1000, 0))
	accepted(t, r, intent("uncapped", "s-c", "p-c", 100000, 0))
	capIn := intent("cap", "s-d", "p-d", 100000, 0)
	capIn.MaxWin = 150000
	accepted(t, r, capIn)
	accepted(t, r, intent("late", "s-l", "p-l", 1000, 0))
	if _, err := cashout(r, "s-a", "a", t0); !errors.Is(err, round.ErrCashoutNotAllowed) {
		t.Fatalf("cashout while betting: %v", err)
	}
	start := t0.Add(5 * time.Second)
	crashAt := r.TakeOff(start)
	if crashAt != start.Add(round.TimeToReach(250)) {
		t.Fatalf("crash at %v", crashAt)
	}
	at := start.Add(round.TimeToReach(200))
	b, err := cashout(r, "s-a", "a", at)
	if err != nil || b.State != round.CashedOut || b.Multiplier != 200 || b.Payout != 2000 || !b.SettledAt.Equal(at) {
		t.Fatalf("cashout at 2.00x: %+v %v", b, err)
	}
	if _, err := cashout(r, "s-a", "a", at); !errors.Is(err, round.ErrCashoutNotAllowed) {
		t.Fatalf("second cashout: %v", err)
	}
	if _, err := cashout(r, "s-other", "cap", at); !errors.Is(err, round.ErrUnknownBet) {
		t.Fatalf("cashout of another's bet: %v", err)
	}
	if b, err := cashout(r, "s-d", "cap", at); err != nil || b.Payout != 150000 {
		t.Fatalf("capped cashout: %+v %v, want max_win 150000", b, err)
	}
	if _, err := cashout(r, "s-l", "late", crashAt); !errors.Is(err, round.ErrRoundCrashed) {
		t.Fatalf("cashout at the crash: %v", err)
	}
	lost := r.Crash()
	if len(lost) != 2 || r.Phase() != round.Crashed || !r.CrashedAt().Equal(crashAt) {
		t.Fatalf("crash lost %+v, phase %s", lost, r.Phase())
	}
	if _, err := cashout(r, "s-l", "late", at); !errors.Is(err, round.ErrRoundCrashed) {
		t.Fatalf("cashout after the crash, received before it: %v", err)
	}
}

// Rule WIN-3: a cashout priced on a clock other than the crash's is refused
// within guard of the crash; a cashout received after the bet's auto-cashout
// target was reached is paid at exactly the target, at the instant it was
// reached, as the auto-cashout itself; a cashout priced elsewhere is not
// recorded over an auto-cashout the round fired first.
func TestPriceFromTheFlight(t *testing.T) {
	t.Parallel()
	r := bettingRound(300)
	accepted(t, r, intent("a", "s-a", "p-a", 1000, 0))
	accepted(t, r, intent("auto", "s-b", "p-b", 1000, 150))
	accepted(t, r, intent("raced", "s-c", "p-c", 1000, 120))
	start := t0.Add(5 * time.Second)
	crashAt := r.TakeOff(start)
	f := r.Flight()
	if f.Started != start || f.CrashPoint != 300 || f.CrashAt != crashAt {
		t.Fatalf("flight %+v", f)
	}
	const guard = 10 * time.Millisecond
	a, _ := r.Bet("a")
	if _, err := f.Price(a, crashAt.Add(-guard), guard); !errors.Is(err, round.ErrRoundCrashed) {
		t.Fatalf("priced within the guard of the crash: %v", err)
	}
	if b, err := f.Price(a, crashAt.Add(-guard-time.Millisecond), guard); err != nil || b.Multiplier < 290 {
		t.Fatalf("priced just before the guard: %+v %v", b, err)
	}
	if _, err := f.Price(a, start.Add(-time.Millisecond), 0); !errors.Is(err, round.ErrCashoutNotAllowed) {
		t.Fatalf("received before the take-off: %v", err)
	}
	auto, _ := r.Bet("auto")
	reached := start.Add(round.TimeToReach(150))
	if b, err := f.Price(auto, start.Add(round.TimeToReach(200)), 0); err != nil || b.Multiplier != 150 || b.Payout != 1500 || !b.SettledAt.Equal(reached) {
		t.Fatalf("a cashout after the auto-cashout's target: %+v %v, want 1.50x at %v", b, err, reached)
	}
	raced, _ := r.Bet("raced")
	priced, err := f.Price(raced, start.Add(round.TimeToReach(110)), 0)
	if err != nil {
		t.Fatal(err)
	}
	if fired := r.FireAutos(start.Add(round.TimeToReach(120))); len(fired) != 1 || fired[0].ID != "raced" {
		t.Fatalf("fired %+v", fired)
	}
	if _, ok := r.Cashed(priced); ok {
		t.Fatal("a cashout recorded over the auto-cashout the round fired first")
	}
	if _, ok := r.Cashed(round.Bet{Intent: round.Intent{ID: "nobody"}, State: round.CashedOut}); ok {
		t.Fatal("a cashout recorded for a bet the round does not hold")
	}
}

// Rule LIM-14: auto-cashouts fire at exactly their targets, in order; a target
// above the crash point never fires and loses.
func TestAutoCashout(t *testing.T) {
	t.Parallel()
	r := bettingRound(300)
	accepted(t, r, intent("x153", "s1", "p1", 333, 153))
	accepted(t, r, intent("x250", "s2", "p2", 100, 250))
	accepted(t, r, intent("x300", "s3", "p3", 100, 300))
	accepted(t, r, intent("x301", "s4", "p4", 100, 301))
	if _, ok := r.NextAuto(); ok {
		t.Fatal("an auto-cashout due before take-off")
	}
	start := t0.Add(5 * time.Second)
	r.TakeOff(start)
	next, ok := r.NextAuto()
	if !ok || !next.Equal(start.Add(round.TimeToReach(153))) {
		t.Fatalf("next auto %v %t", next, ok)
	}
	// Late: the loop woke after both 1.53x and 2.50x.
	fired := r.FireAutos(start.Add(round.TimeToReach(260)))
	if len(fired) != 2 || fired[0].ID != "x153" || fired[0].Multiplier != 153 || fired[0].Payout != 509 || fired[1].Multiplier != 250 {
		t.Fatalf("fired %+v", fired)
	}
	next, _ = r.NextAuto()
	if fired := r.FireAutos(next); len(fired) != 1 || fired[0].ID != "x300" || fired[0].Payout != 300 {
		t.Fatalf("at the crash point: %+v", fired)
	}
	if _, ok := r.NextAuto(); ok {
		t.Fatal("a target above the crash point is due")
	}
	if lost := r.Crash(); len(lost) != 1 || lost[0] != "x301" {
		t.Fatalf("lost %+v", lost)
	}
}

// Rule RB-2 RB-4: a cancel withdraws an accepted bet while betting, once; a
// void rolls back every bet still in play.
func TestCancelAndVoid(t *testing.T) {
	t.Parallel()
	r := bettingRound(500)
	accepted(t, r, intent("a", "s", "p", 100, 0))
	accepted(t, r, intent("b", "s", "p", 100, 0))
	if _, err := r.Admit(t0, intent("pending", "s", "p", 100, 0)); err != nil {
		t.Fatal(err)
	}
	if n := r.InPlay(); n != 3 {
		t.Fatalf("in play: %d bets, want 3 (two accepted, one pending)", n)
	}
	if _, _, err := r.Cancel("s", "pending", t0); !errors.Is(err, round.ErrCancelNotAllowed) {
		t.Fatalf("cancel of a pending bet: %v", err)
	}
	if _, _, err := r.Cancel("other", "a", t0); !errors.Is(err, round.ErrUnknownBet) {
		t.Fatalf("cancel of another's bet: %v", err)
	}
	b, repeat, err := r.Cancel("s", "a", t0)
	if err != nil || repeat || b.State != round.Cancelled {
		t.Fatalf("cancel: %+v %t %v", b, repeat, err)
	}
	if b2, repeat, err := r.Cancel("s", "a", t0.Add(time.Second)); err != nil || !repeat || b2 != b {
		t.Fatalf("cancel again: %+v %t %v", b2, repeat, err)
	}
	if n := r.InPlay(); n != 2 {
		t.Fatalf("in play after a cancel: %d bets, want 2", n)
	}
	r.TakeOff(t0.Add(5 * time.Second))
	if _, _, err := r.Cancel("s", "b", t0.Add(5*time.Second)); !errors.Is(err, round.ErrCancelNotAllowed) {
		t.Fatalf("cancel while flying: %v", err)
	}
	voided := r.Void(t0.Add(6 * time.Second))
	if b, _ := r.Bet("b"); len(voided) != 1 || voided[0] != "b" || b.State != round.Voided || r.Phase() != round.Void {
		t.Fatalf("void: %+v %s", voided, r.Phase())
	}
	if b, _ := r.Bet("a"); b.State != round.Cancelled {
		t.Fatalf("the cancelled bet after the void: %+v", b)
	}
	if n := r.InPlay(); n != 1 {
		t.Fatalf("in play after the void: %d bets, want 1 (the pending one)", n)
	}
}

// The round's money invariants hold for any sequence of actions: a bet is
// settled at most once and never leaves a settled state; a cashout pays at
// most max_win, never at or after the crash, at a multiplier not above the
// crash point; once the round is over, every bet the wallet debited within the
// window ends in exactly one of cashed out, lost, cancelled or void; a player
// never holds more than five live bets; the round counts the bets whose debit
// is undecided.
func TestRandomActionsKeepTheInvariants(t *testing.T) {
	t.Parallel()
	for seed := uint64(1); seed <= 2000; seed++ {
		checkRandomRound(t, seed)
	}
}

func checkRandomRound(t *testing.T, seed uint64) {
	rnd := rand.New(rand.NewPCG(seed, 42))
	cp := 100 + rnd.Int64N(400)
	bettingEnds := t0.Add(5 * time.Second)
	r := round.New("r", cp, bettingEnds)
	type bet struct {
		in       round.Intent
		state    round.State
		debited  bool // the wallet debited it within the window
		settles  int  // transitions into a settled state
		maxWin   int64
		cashedAt time.Time
	}
	bets := map[string]*bet{}
	var ids []string
	players := []string{"p0", "p1", "p2"}
	now := t0
	settled := func(s round.State) bool {
		return s == round.CashedOut || s == round.Lost || s == round.Cancelled || s == round.Voided || s == round.Refused
	}
	record := func(b round.Bet) {
		m := bets[b.ID]
		if settled(m.state) && m.state != b.State {
			t.Fatalf("seed %d: bet %s left settled state %s for %s", seed, b.ID, m.state, b.State)
		}
		if settled(b.State) && m.state != b.State {
			m.settles++
		}
		m.state = b.State
		if b.State == round.CashedOut {
			m.cashedAt = b.SettledAt
			if m.maxWin > 0 && b.Payout > m.maxWin {
				t.Fatalf("seed %d: payout %d above max_win %d", seed, b.Payout, m.maxWin)
			}
			// A manual cashout is received before the crash; an auto-cashout
			// fires at its target, which the round reached, at the latest at
			// the crash (the loop may wake late, never past the crash).
			auto := b.AutoCashout != 0 && b.Multiplier == b.AutoCashout
			if b.Multiplier > cp || b.SettledAt.After(r.CrashAt()) || (!auto && !b.SettledAt.Before(r.CrashAt())) {
				t.Fatalf("seed %d: cashout at %d (crash %d) at %v (crash at %v)", seed, b.Multiplier, cp, b.SettledAt, r.CrashAt())
			}
			if b.Payout != round.Payout(b.Amount, b.Multiplier, m.maxWin) {
				t.Fatalf("seed %d: payout %d of %d at %d", seed, b.Payout, b.Amount, b.Multiplier)
			}
		}
	}
	live := func(player string) int {
		n := 0
		for _, b := range bets {
			if b.in.Player == player && (b.state == round.Pending || b.state == round.Accepted || b.state == round.CashedOut || b.state == round.Lost) {
				n++
			}
		}
		return n
	}
	pick := func() *bet {
		if len(ids) == 0 {
			return nil
		}
		return bets[ids[rnd.IntN(len(ids))]]
	}
	for step := 0; step < 60 && r.Phase() != round.Crashed && r.Phase() != round.Void; step++ {
		now = now.Add(time.Duration(rnd.IntN(400)) * time.Millisecond)
		switch a := rnd.IntN(10); {
		case a < 3: // a bet
			p := players[rnd.IntN(len(players))]
			in := round.Intent{ID: fmt.Sprintf("b%d", len(ids)), Owner: "s-" + p, Player: p,
				Amount: 1 + rnd.Int64N(10000), MaxWin: rnd.Int64N(3) * 10000}
			if rnd.IntN(2) == 0 {
				in.AutoCashout = 101 + rnd.Int64N(500)
			}
			if _, err := r.Admit(now, in); err == nil {
				bets[in.ID] = &bet{in: in, state: round.Pending, maxWin: in.MaxWin}
				ids = append(ids, in.ID)
				if live(p) > round.MaxBetsPerPlayer {
					t.Fatalf("seed %d: player %s holds %d bets", seed, p, live(p))
				}
			}
		case a < 5: // a debit's outcome
			if b := pick(); b != nil && b.state == round.Pending {
				o := round.Outcome(rnd.IntN(3))
				got, err := r.Debited(b.in.ID, b.in.Amount, o, now)
				if err != nil {
					t.Fatalf("seed %d: debit: %v", seed, err)
				}
				b.debited = o == round.Debited
				record(got)
			}
		case a < 7: // a cashout
			if b := pick(); b != nil {
				if got, err := cashout(r, b.in.Owner, b.in.ID, now); err == nil {
					record(got)
				}
			}
		case a < 8: // a cancel
			if b := pick(); b != nil {
				if got, _, err := r.Cancel(b.in.Owner, b.in.ID, now); err == nil {
					record(got)
				}
			}
		default: // time passes: take-off, autos, crash, or a void
			switch r.Phase() {
			case round.Betting:
				if !now.Before(bettingEnds) {
					r.TakeOff(now)
				}
				if rnd.IntN(40) == 0 {
					for _, id := range r.Void(now) {
						b, _ := r.Bet(id)
						record(b)
					}
				}
			case round.Flying:
				if next, ok := r.NextAuto(); ok && !now.Before(next) {
					for _, b := range r.FireAutos(now) {
						record(b)
					}
				}
				if !now.Before(r.CrashAt()) {
					for _, b := range r.FireAutos(r.CrashAt()) {
						record(b)
					}
					for _, id := range r.Crash() {
						b, _ := r.Bet(id)
						record(b)
					}
				}
			}
		}
		// The round counts the bets that wait for their debit (the loop
		// waits for them before take-off).
		waiting := 0
		for _, b := range bets {
			if b.state == round.Pending {
				waiting++
			}
		}
		if r.Pending() != waiting {
			t.Fatalf("seed %d: Pending() = %d, %d bets wait for their debit", seed, r.Pending(), waiting)
		}
	}
	// End the round whatever happened, then settle what is still undecided.
	switch r.Phase() {
	case round.Betting:
		now = bettingEnds
		r.TakeOff(now)
		fallthrough
	case round.Flying:
		for _, b := range r.FireAutos(r.CrashAt()) {
			record(b)
		}
		for _, id := range r.Crash() {
			b, _ := r.Bet(id)
			record(b)
		}
	}
	for _, id := range ids {
		if b := bets[id]; b.state == round.Pending {
			got, err := r.Debited(id, b.in.Amount, round.Debited, now)
			if err != nil || got.State != round.Voided {
				t.Fatalf("seed %d: a debit after the round: %+v %v", seed, got, err)
			}
			record(got)
		}
	}
	for _, id := range ids {
		b := bets[id]
		if b.settles != 1 {
			t.Fatalf("seed %d: bet %s settled %d times (state %s)", seed, id, b.settles, b.state)
		}
		if b.debited && b.state != round.CashedOut && b.state != round.Lost && b.state != round.Cancelled && b.state != round.Voided {
			t.Fatalf("seed %d: debited bet %s ended %s", seed, id, b.state)
		}
	}
}

// A debit that the wallet confirms after the window closed but before the
// round takes off (the loop waits for the window's last debits) is accepted;
// one confirmed after take-off is voided and rolled back (RB-3). No bet is
// admitted and none cancelled once the window closed.
func TestDebitBetweenWindowAndTakeOff(t *testing.T) {
	t.Parallel()
	r := bettingRound(500)
	ends := r.BettingEnds()
	for _, id := range []string{"in-wait", "after"} {
		if _, err := r.Admit(ends.Add(-time.Millisecond), intent(id, "s", "p", 100, 0)); err != nil {
			t.Fatal(err)
		}
	}
	accepted(t, r, intent("early", "s", "p", 100, 0))
	if r.Pending() != 2 {
		t.Fatalf("Pending() = %d, want 2", r.Pending())
	}
	if _, err := r.Admit(ends, intent("late", "s", "p", 100, 0)); !errors.Is(err, round.ErrBettingClosed) {
		t.Fatalf("a bet received at the window's end: %v", err)
	}
	if _, _, err := r.Cancel("s", "early", ends.Add(100*time.Millisecond)); !errors.Is(err, round.ErrCancelNotAllowed) {
		t.Fatalf("a cancel after the window: %v", err)
	}
	if b, err := r.Debited("in-wait", 100, round.Debited, ends.Add(300*time.Millisecond)); err != nil || b.State != round.Accepted {
		t.Fatalf("debited while the round waits to take off: %+v %v", b, err)
	}
	r.TakeOff(ends.Add(400 * time.Millisecond))
	// RB-3: debited after take-off, the bet is voided and its debit rolled back.
	if b, err := r.Debited("after", 100, round.Debited, ends.Add(500*time.Millisecond)); err != nil || b.State != round.Voided {
		t.Fatalf("debited after take-off: %+v %v", b, err)
	}
	if r.Pending() != 0 {
		t.Fatalf("Pending() = %d after every debit was decided", r.Pending())
	}
}

// Rule LIM-14: an auto-cashout, wherever it is committed, is paid at exactly
// its target, at the instant the multiplier reaches it, and capped at its
// max_win; a target above the crash point is never paid, and one equal to
// it is, as the round's loop fires it before the crash.
func TestFlightAuto(t *testing.T) {
	t.Parallel()
	start := t0.Add(5 * time.Second)
	f := round.Flight{Started: start, CrashPoint: 250, CrashAt: start.Add(round.TimeToReach(250))}
	bet := func(amount, auto, maxWin int64) round.Bet {
		return round.Bet{State: round.Accepted, Intent: round.Intent{ID: "b", Amount: amount, AutoCashout: auto, MaxWin: maxWin}}
	}
	tests := []struct {
		name       string
		flight     round.Flight
		bet        round.Bet
		wantOK     bool
		wantPayout int64
	}{
		{"below the crash point", f, bet(1000, 150, 0), true, 1500},
		{"at the crash point", f, bet(1000, 250, 0), true, 2500},
		{"above the crash point", f, bet(1000, 251, 0), false, 0},
		{"no target", f, bet(1000, 0, 0), false, 0},
		{"capped at max_win", f, bet(1000, 200, 1800), true, 1800},
		{"not flying", round.Flight{}, bet(1000, 150, 0), false, 0},
		{"settled already", f, round.Bet{State: round.CashedOut, Intent: round.Intent{ID: "b", Amount: 1000, AutoCashout: 150}}, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, ok := tt.flight.Auto(tt.bet)
			if ok != tt.wantOK {
				t.Fatalf("Auto = %+v, %v; want ok %v", got, ok, tt.wantOK)
			}
			if !ok {
				return
			}
			due := tt.flight.AutoDue(tt.bet.AutoCashout)
			if got.State != round.CashedOut || got.Multiplier != tt.bet.AutoCashout || got.Payout != tt.wantPayout || !got.SettledAt.Equal(due) {
				t.Fatalf("Auto = %+v; want cashed out at %d for %d at %v", got, tt.bet.AutoCashout, tt.wantPayout, due)
			}
			if !due.Equal(start.Add(round.TimeToReach(tt.bet.AutoCashout))) {
				t.Fatalf("due %v", due)
			}
		})
	}
}
