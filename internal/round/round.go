// Package round holds the rules of one round of the crash game as a state
// machine without I/O: the phases (betting, flying, crashed or void), the
// admission of bets (the betting window, the five bets per player, the bet
// limits), the debit's outcome, the cashout priced at the moment it was
// received, the auto-cashout at exactly its target, the max_win cap, the
// cancellation, and the settlement at the crash or the void.
//
// It takes inputs (a bet, a wallet outcome, a cashout or a cancel with the
// moment it was received, a take-off, a crash, a void) and answers decisions as
// values: what changed for which bet. Whoever drives it (package engine)
// commits those decisions, calls the wallet and publishes the events. Every
// moment is an input: it must never read a clock, and never touch a database,
// the network, a log or a goroutine. It is not safe for concurrent use; one
// owner feeds it.
//
// Money is int64 cents and multipliers int64 hundredths; the only float is
// inside the curve (Multiplier), whose result is an integer.
package round

import (
	"errors"
	"sort"
	"time"
)

// MaxBetsPerPlayer is how many bets one player may hold in one round (LIM-5).
const MaxBetsPerPlayer = 5

// Phase is where a round stands.
type Phase string

// The phases of a round.
const (
	Betting Phase = "betting"
	Flying  Phase = "flying"
	Crashed Phase = "crashed"
	Void    Phase = "void" // ended without a crash; every bet in play is rolled back
)

// State is where a bet stands.
type State string

// The states of a bet.
const (
	Pending   State = "pending"    // admitted; the wallet's debit not yet decided
	Accepted  State = "accepted"   // debited within the window: in play
	Refused   State = "refused"    // the wallet refused the debit
	CashedOut State = "cashed_out" // settled with a win
	Lost      State = "lost"       // settled by the crash
	Cancelled State = "cancelled"  // withdrawn by its player while betting; rolled back
	Voided    State = "void"       // rolled back: debit outside the window, or the round voided
)

// The refusals of the rules.
var (
	ErrBettingClosed     = errors.New("betting is closed")
	ErrTooManyBets       = errors.New("too many bets in this round")
	ErrBetLimit          = errors.New("amount outside the bet limits")
	ErrBadAutoCashout    = errors.New("auto-cashout outside 1.01x and the maximum multiplier")
	ErrRoundCrashed      = errors.New("the round crashed")
	ErrUnknownBet        = errors.New("unknown bet")
	ErrCashoutNotAllowed = errors.New("cashout not allowed")
	ErrCancelNotAllowed  = errors.New("cancel not allowed")
)

// Limits are the bet limits of a player's currency, in cents; 0 is unknown
// (no check, no cap).
type Limits struct {
	MinBet, MaxBet, MaxWin int64
}

// CheckBet applies the limits that need no round: the stake within the
// currency's limits (a free round's stake is the grant's, checked at intake)
// and an auto-cashout target between 1.01x and maxMultiplier.
func CheckBet(amount, autoCashout int64, freebet bool, l Limits, maxMultiplier int64) error {
	if autoCashout != 0 && (autoCashout < 101 || autoCashout > maxMultiplier) {
		return ErrBadAutoCashout
	}
	if freebet {
		return nil
	}
	if amount <= 0 || (l.MinBet > 0 && amount < l.MinBet) || (l.MaxBet > 0 && amount > l.MaxBet) {
		return ErrBetLimit
	}
	return nil
}

// Intent is a bet as admitted: who places it and what.
type Intent struct {
	ID          string // the bet's id: the transaction_id of its debit
	Owner       string // the session that placed it: only it may cash out or cancel
	Player      string // the player the five bets count for, across their sessions
	Amount      int64  // cents
	AutoCashout int64  // hundredths; 0 for none
	MaxWin      int64  // the payout cap of the player's currency; 0 for none
}

// Bet is one bet of the round as the rules see it.
type Bet struct {
	Intent
	State      State
	Multiplier int64     // hundredths, once cashed out
	Payout     int64     // cents, once cashed out (0 when lost)
	SettledAt  time.Time // when it was cashed out, lost, cancelled or voided
}

// Round is one round of a game.
type Round struct {
	id          string
	crashPoint  int64 // hundredths
	phase       Phase
	bettingEnds time.Time
	started     time.Time
	crashAt     time.Time
	crashed     time.Time
	bets        map[string]*Bet
	count       map[string]int // bets per player, pending included
	pending     int            // bets whose debit is not decided yet
}

// New opens a round in its betting phase, which closes at bettingEnds; the
// round will crash at crashPoint hundredths.
func New(id string, crashPoint int64, bettingEnds time.Time) *Round {
	return &Round{id: id, crashPoint: crashPoint, phase: Betting, bettingEnds: bettingEnds,
		bets: map[string]*Bet{}, count: map[string]int{}}
}

// Pending returns how many bets wait for their debit's outcome.
func (r *Round) Pending() int { return r.pending }

// InPlay returns how many bets of the round are still in play: accepted and
// not settled, or waiting for their debit's outcome.
func (r *Round) InPlay() int {
	n := r.pending
	for _, b := range r.bets {
		if b.State == Accepted {
			n++
		}
	}
	return n
}

// ID returns the round's id.
func (r *Round) ID() string { return r.id }

// Phase returns the round's phase.
func (r *Round) Phase() Phase { return r.phase }

// CrashPoint returns the crash point in hundredths.
func (r *Round) CrashPoint() int64 { return r.crashPoint }

// BettingEnds returns when betting closes.
func (r *Round) BettingEnds() time.Time { return r.bettingEnds }

// StartedAt returns the take-off; zero before it.
func (r *Round) StartedAt() time.Time { return r.started }

// CrashAt returns when the flight ends at the crash point; zero before take-off.
func (r *Round) CrashAt() time.Time { return r.crashAt }

// CrashedAt returns the moment of the crash; zero before it.
func (r *Round) CrashedAt() time.Time { return r.crashed }

// Lost reports whether the round lost bet id at its crash.
func (r *Round) Lost(id string) bool {
	b, ok := r.bets[id]
	return ok && b.State == Lost
}

// Bet returns a copy of bet id, if the round holds it.
func (r *Round) Bet(id string) (Bet, bool) {
	b, ok := r.bets[id]
	if !ok {
		return Bet{}, false
	}
	return *b, true
}

// Admit reserves a place for a bet received at now: the round must be betting
// and its window open, and the player must hold fewer than five bets. The bet
// is pending until its debit's outcome (Debited).
func (r *Round) Admit(now time.Time, in Intent) (Bet, error) {
	if r.phase != Betting || !now.Before(r.bettingEnds) {
		return Bet{}, ErrBettingClosed
	}
	if r.count[in.Player] >= MaxBetsPerPlayer {
		return Bet{}, ErrTooManyBets
	}
	if _, dup := r.bets[in.ID]; dup {
		return Bet{}, errors.New("round: bet id already admitted")
	}
	r.count[in.Player]++
	r.pending++
	b := &Bet{Intent: in, State: Pending}
	r.bets[in.ID] = b
	return *b, nil
}

// Forget drops a pending bet that never reached the wallet (its intent could
// not be committed): its place is free again.
func (r *Round) Forget(id string) {
	if b, ok := r.bets[id]; ok && b.State == Pending {
		r.pending--
		r.drop(b)
	}
}

// Outcome is what the wallet answered to a bet's debit.
type Outcome int

// The outcomes of a debit.
const (
	Debited   Outcome = iota // success
	Refusal                  // a final refusal: nothing was debited
	Undecided                // no decision before the window closed
)

// Debited records the outcome of a pending bet's debit of stake cents (a free
// round's stake is its grant's value, known once its intent committed) and
// returns the bet as it now stands: Accepted when debited before take-off (in
// the window, or while the round waits after it for the window's last
// debits); Refused on a refusal (its place is free again); Voided when
// debited after take-off or still undecided (the debit must be rolled back,
// RB-3).
func (r *Round) Debited(id string, stake int64, o Outcome, at time.Time) (Bet, error) {
	b, ok := r.bets[id]
	if !ok || b.State != Pending {
		return Bet{}, ErrUnknownBet
	}
	b.Amount = stake
	r.pending--
	switch {
	case o == Debited && r.phase == Betting:
		b.State = Accepted
	case o == Refusal:
		b.State, b.SettledAt = Refused, at
		r.drop(b)
	default:
		b.State, b.SettledAt = Voided, at
		delete(r.bets, b.ID) // its place stays taken: the round's window closed anyway
	}
	return *b, nil
}

// drop removes a bet and frees its player's place.
func (r *Round) drop(b *Bet) {
	delete(r.bets, b.ID)
	r.count[b.Player]--
}

// own returns owner's bet id, or nil.
func (r *Round) own(owner, id string) *Bet {
	b := r.bets[id]
	if b == nil || b.Owner != owner {
		return nil
	}
	return b
}

// Flight is a flying round as whoever prices a cashout knows it: when it
// took off, its crash point and the instant of its crash. The crash point is
// the round's secret until the crash: a Flight is held in memory only.
type Flight struct {
	Started    time.Time
	CrashPoint int64 // hundredths
	CrashAt    time.Time
}

// Flight returns the round's flight; the zero Flight before take-off.
func (r *Round) Flight() Flight {
	if r.started.IsZero() {
		return Flight{}
	}
	return Flight{Started: r.started, CrashPoint: r.crashPoint, CrashAt: r.crashAt}
}

// Price cashes the accepted bet b out at the multiplier of at, the moment
// the request was received (WIN-3), capped at its max_win (LIM-14). It is
// refused once at is at or past CrashAt - guard: guard covers how far the
// pricing clock may be from the clock the crash is kept on (zero where they
// are one). An auto-cashout whose target the multiplier had reached by at is
// paid at exactly its target, at the moment it was reached: it fired then.
func (f Flight) Price(b Bet, at time.Time, guard time.Duration) (Bet, error) {
	switch {
	case f.Started.IsZero() || at.Before(f.Started):
		return Bet{}, ErrCashoutNotAllowed // received while the round was betting
	case b.State == Lost || !at.Before(f.CrashAt.Add(-guard)):
		return Bet{}, ErrRoundCrashed
	case b.State != Accepted:
		return Bet{}, ErrCashoutNotAllowed
	}
	m := Multiplier(at.Sub(f.Started))
	if auto, ok := f.Auto(b); ok && b.AutoCashout <= m {
		return auto, nil
	}
	b.State, b.Multiplier, b.Payout, b.SettledAt = CashedOut, m, Payout(b.Amount, m, b.MaxWin), at
	return b, nil
}

// Auto is the auto-cashout of the accepted bet b as the round fires it,
// wherever it is committed: at exactly its target, at the instant the
// multiplier reaches it, capped at its max_win (LIM-14). false when b has
// no target, or a target above the crash point (the round never reaches
// it: the bet is lost). A target equal to the crash point is paid, as the
// round's loop fires a target due at the crash's instant before the crash.
func (f Flight) Auto(b Bet) (Bet, bool) {
	if f.Started.IsZero() || b.State != Accepted || b.AutoCashout == 0 || b.AutoCashout > f.CrashPoint {
		return Bet{}, false
	}
	m := b.AutoCashout
	b.State, b.Multiplier, b.Payout, b.SettledAt = CashedOut, m, Payout(b.Amount, m, b.MaxWin), f.Started.Add(TimeToReach(m))
	return b, true
}

// AutoDue is when an auto-cashout at target is due: the instant the
// multiplier reaches it.
func (f Flight) AutoDue(target int64) time.Time { return f.Started.Add(TimeToReach(target)) }

// Cashed records the cashout priced (Price) and committed by whoever took it:
// its bet, still accepted here, is cashed out as priced. false when the bet is
// not in the round or not accepted here any more (an auto-cashout fired here
// first; the commit that moved the bet first is the truth).
func (r *Round) Cashed(priced Bet) (Bet, bool) {
	b := r.bets[priced.ID]
	if b == nil || b.State != Accepted || priced.State != CashedOut {
		return Bet{}, false
	}
	b.State, b.Multiplier, b.Payout, b.SettledAt = CashedOut, priced.Multiplier, priced.Payout, priced.SettledAt
	return *b, true
}

// settle cashes b out at m, capped at its max_win (LIM-14).
func (r *Round) settle(b *Bet, m int64, at time.Time) {
	b.State, b.Multiplier, b.Payout, b.SettledAt = CashedOut, m, Payout(b.Amount, m, b.MaxWin), at
}

// Cancel withdraws owner's accepted bet while the round bets (RB-2); its debit
// must be rolled back. A bet already cancelled answers again with repeat set:
// cancels of one bet are one cancel.
func (r *Round) Cancel(owner, id string, at time.Time) (b Bet, repeat bool, err error) {
	p := r.own(owner, id)
	switch {
	case p == nil:
		return Bet{}, false, ErrUnknownBet
	case p.State == Cancelled:
		return *p, true, nil
	case r.phase != Betting || !at.Before(r.bettingEnds) || p.State != Accepted:
		// After the window, while the round waits for the last debits to
		// take off, a bet is as good as flying.
		return Bet{}, false, ErrCancelNotAllowed
	}
	p.State, p.SettledAt = Cancelled, at
	r.count[p.Player]-- // the bet stays, cancelled, so that a repeat finds it
	return *p, false, nil
}

// TakeOff starts the flight at now with the accepted bets (pending ones stay
// out: their debit is rolled back when it is decided) and returns when it
// crashes.
func (r *Round) TakeOff(now time.Time) time.Time {
	r.phase, r.started = Flying, now
	r.crashAt = now.Add(TimeToReach(r.crashPoint))
	return r.crashAt
}

// NextAuto returns when the earliest auto-cashout target that the round will
// reach is due; false when none is.
func (r *Round) NextAuto() (time.Time, bool) {
	best := int64(0)
	for _, b := range r.bets {
		if b.State == Accepted && b.AutoCashout != 0 && b.AutoCashout <= r.crashPoint && (best == 0 || b.AutoCashout < best) {
			best = b.AutoCashout
		}
	}
	if best == 0 || r.phase != Flying {
		return time.Time{}, false
	}
	return r.started.Add(TimeToReach(best)), true
}

// FireAutos cashes out every accepted bet whose target the multiplier reached
// at now, each at exactly its target, lowest target first.
func (r *Round) FireAutos(now time.Time) []Bet {
	if r.phase != Flying {
		return nil
	}
	m := Multiplier(now.Sub(r.started))
	var due []*Bet
	for _, b := range r.bets {
		if b.State == Accepted && b.AutoCashout != 0 && b.AutoCashout <= m && b.AutoCashout <= r.crashPoint {
			due = append(due, b)
		}
	}
	sort.Slice(due, func(i, j int) bool {
		if due[i].AutoCashout != due[j].AutoCashout {
			return due[i].AutoCashout < due[j].AutoCashout
		}
		return due[i].ID < due[j].ID
	})
	out := make([]Bet, 0, len(due))
	for _, b := range due {
		r.settle(b, b.AutoCashout, now)
		out = append(out, *b)
	}
	return out
}

// Crash ends the flight at its crash point: every bet still accepted is lost.
// It returns the ids of the lost bets.
func (r *Round) Crash() []string {
	r.phase, r.crashed = Crashed, r.crashAt
	lost := make([]string, 0, len(r.bets))
	for _, b := range r.bets {
		if b.State == Accepted {
			b.State, b.Payout, b.SettledAt = Lost, 0, r.crashAt
			lost = append(lost, b.ID)
		}
	}
	return lost
}

// Void ends the round without a crash at now: every bet still accepted is
// voided, and its debit must be rolled back (RB-4). It returns their ids.
func (r *Round) Void(now time.Time) []string {
	r.phase = Void
	var open []string
	for _, b := range r.bets {
		if b.State == Accepted {
			b.State, b.SettledAt = Voided, now
			open = append(open, b.ID)
		}
	}
	return open
}
