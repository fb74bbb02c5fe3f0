package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/crashstudio/crashgame/internal/chains"
	"github.com/crashstudio/crashgame/internal/fairness"
	"github.com/crashstudio/crashgame/internal/round"
)

// CashoutGuard is how long before the crash instant a cashout priced by a
// replica that does not lead the table is refused as too late: the bound on
// how far its clock may be from the leader's, which keeps the crash. Two
// replicas each within half of it of the database's clock are within it of
// each other (replica.PriceBound). The leader prices with no guard: its
// clock is the crash's.
const CashoutGuard = 10 * time.Millisecond

// flightView is the flying round as cashouts are priced, outside the loop,
// by whichever replica received them: set by the leader's take-off, or, on
// a replica that does not lead, worked out from the round's sealed chain
// (in memory only, as the leader holds it) when the round is seen flying.
//
// mu also orders a leader's cashouts before its crash: a cashout is queued
// to the committer under mu while over is false, and the leader sets over
// under mu before it queues the round's end. The committer commits in
// order, so a cashout priced before the crash commits before it.
type flightView struct {
	mu      sync.Mutex
	roundID string
	f       round.Flight
	leads   bool // set by the leader's take-off: priced with no guard
	over    bool // the leader queued the round's end: nothing is priced any more
	// chainRec and chain are the chain a replica that does not lead opened
	// last, to work out crash points.
	chainRec chains.Chain
	chain    *fairness.Chain
}

// took records the leader's take-off of roundID. Loop only.
func (t *Table) took(roundID string, f round.Flight) {
	t.flight.mu.Lock()
	t.flight.roundID, t.flight.f, t.flight.leads, t.flight.over = roundID, f, true, false
	t.flight.mu.Unlock()
}

// ended records that the leader queues the end of the flying round (its
// crash or its void): no cashout of it is priced any more. Loop only.
func (t *Table) ended() {
	t.flight.mu.Lock()
	t.flight.over = true
	t.flight.mu.Unlock()
}

// flightOf returns the flight of v, the round shown, and the guard its
// cashouts are priced with. Callers hold t.flight.mu.
func (t *Table) flightOf(ctx context.Context, v RoundView) (round.Flight, time.Duration, error) {
	switch {
	case v.Phase == PhaseBetting:
		return round.Flight{}, 0, round.ErrCashoutNotAllowed
	case v.Phase != PhaseFlying:
		return round.Flight{}, 0, round.ErrRoundCrashed
	}
	fv := &t.flight
	if fv.roundID == v.RoundID {
		if fv.over {
			return round.Flight{}, 0, round.ErrRoundCrashed
		}
		if fv.leads {
			return fv.f, 0, nil
		}
		return fv.f, CashoutGuard, nil
	}
	f, err := t.followFlight(ctx, v)
	if err != nil {
		return round.Flight{}, 0, err
	}
	fv.roundID, fv.f, fv.leads, fv.over = v.RoundID, f, false, false
	return f, CashoutGuard, nil
}

// followFlight works out the flight of v on a replica that does not lead:
// its take-off as the leader announced it, and its crash point from its
// chain's sealed seed, which every replica can open. Callers hold
// t.flight.mu.
func (t *Table) followFlight(ctx context.Context, v RoundView) (round.Flight, error) {
	rec, err := t.store.Round(ctx, t.game.ID, v.RoundID)
	if err != nil {
		return round.Flight{}, fmt.Errorf("engine: the flight of %s: %w", v.RoundID, err)
	}
	switch rec.Status {
	case RoundFlying:
	case RoundBetting:
		return round.Flight{}, round.ErrCashoutNotAllowed
	default:
		return round.Flight{}, round.ErrRoundCrashed
	}
	fv := &t.flight
	if fv.chain == nil || fv.chainRec.ID != rec.ChainID {
		crec, err := t.chains.ChainByID(ctx, rec.ChainID)
		if err != nil {
			return round.Flight{}, fmt.Errorf("engine: the chain of %s: %w", rec.ID, err)
		}
		chain, err := t.openChain(crec)
		if err != nil {
			return round.Flight{}, err
		}
		fv.chainRec, fv.chain = crec, chain
	}
	if fv.chainRec.Salt == nil {
		return round.Flight{}, fmt.Errorf("engine: round %s is on chain %s, whose salt is not fixed", rec.ID, rec.ChainID)
	}
	h, err := fv.chain.Hash(int(rec.Position))
	if err != nil {
		return round.Flight{}, fmt.Errorf("engine: round %s: %w", rec.ID, err)
	}
	crash := fairness.CrashPoint(h, *fv.chainRec.Salt, fv.chainRec.RTPBasisPts, fv.chainRec.MaxMultiplier)
	started := v.StartedAt
	if started.IsZero() {
		started = rec.StartedAt
	}
	return round.Flight{Started: started, CrashPoint: crash, CrashAt: started.Add(round.TimeToReach(crash))}, nil
}

// warmFlight works out the flight of v, a round just seen taking off, so
// that its first cashout here does not wait for the chain to be opened.
func (t *Table) warmFlight(v RoundView) {
	t.flight.mu.Lock()
	defer t.flight.mu.Unlock()
	if _, _, err := t.flightOf(context.Background(), v); err != nil && !errors.Is(err, round.ErrRoundCrashed) {
		t.logger.Warn("working out the flight of a round failed; its first cashout here tries again", "round_id", v.RoundID, "err", err)
	}
}

// Cashout cashes a bet out here, on the replica that received the request,
// at the multiplier of receivedAt, the moment it was received: priced from
// the flying round's take-off and crash instant (refused as too late within
// CashoutGuard of the crash where this replica does not lead), and
// committed with its /win movement in one transaction. The bet's own row
// fences it: the cashout moves the bet only from accepted, as the
// auto-cashout, the crash's losses, a void and the fail-over rule do, so
// exactly one of them settles it, whichever replica commits first. The
// leader's round is told (Cashed): here when this table leads; otherwise
// the caller tells the leader. A demo bet's cashout is the leader's, whose
// bank holds its play money.
func (t *Table) Cashout(ctx context.Context, p Player, betID string, receivedAt time.Time) (CashoutResult, error) {
	mark := t.cfg.Balances.Balance(p.Session)
	// A bet debited here is known accepted without a read; its commit below
	// is conditional on the row all the same.
	rec, cached := t.debited.accepted(p.Session, betID)
	if !cached {
		var err error
		if rec, err = t.betOf(ctx, p, betID); err != nil {
			return CashoutResult{}, err
		}
	}
	leads := t.elector.Leading()
	if rec.Demo && !leads {
		return CashoutResult{}, fmt.Errorf("%w: a demo bet's cashout is the leader's, whose bank holds its play money", ErrTableUnavailable)
	}
	v, _ := t.Round()
	core := round.Bet{State: round.Accepted, Intent: round.Intent{
		ID: rec.ID, Owner: string(p.Session), Player: p.key(), Amount: rec.Amount, AutoCashout: rec.AutoCashout,
		MaxWin: t.cfg.Operators[rec.Operator].Currencies[rec.Currency].MaxWin,
	}}
	var (
		priced round.Bet
		done   <-chan error
	)
	err := func() error {
		t.flight.mu.Lock()
		defer t.flight.mu.Unlock()
		f, guard, err := t.flightOf(ctx, v)
		if err != nil {
			return err
		}
		if rec.RoundID != v.RoundID {
			return round.ErrRoundCrashed // the bet's round is over
		}
		if priced, err = f.Price(core, receivedAt, guard); err != nil {
			return err
		}
		done = t.commit.Submit(context.Background(), job{epoch: unfenced, run: t.commitCashout(rec, priced)})
		return nil
	}()
	if errors.Is(err, round.ErrRoundCrashed) && cached {
		// The record kept here may predate a cashout of this bet that
		// committed although its answer failed: the row says which.
		return CashoutResult{}, t.overFor(ctx, rec.ID)
	}
	if err != nil {
		return CashoutResult{}, err
	}
	if err := <-done; err != nil {
		if errors.Is(err, errBetMoved) {
			return CashoutResult{}, t.movedFirst(ctx, rec.ID)
		}
		t.logger.Error("cashout commit failed", "bet_id", rec.ID, "err", err)
		return CashoutResult{}, fmt.Errorf("engine: commit cashout: %w", err)
	}
	t.notifyQueue()
	t.debited.decided(rec.RoundID, rec.ID, StatusCashedOut)
	rec.Status, rec.Multiplier, rec.Payout, rec.SettledAt = StatusCashedOut, priced.Multiplier, &priced.Payout, toMillis(priced.SettledAt)
	out := CashoutResult{BetID: rec.ID, Multiplier: priced.Multiplier, Payout: priced.Payout}
	if rec.Demo {
		out.Balance = t.cfg.Demo.Credit(rec.SessionHash, priced.Payout)
		t.cfg.Balances.Reported(rec.SessionHash, out.Balance)
	} else {
		out.Balance = t.cfg.Balances.Expect(p.Session, mark, priced.Payout)
	}
	view := viewOf(rec)
	t.events.Send(rec.SessionHash, &Event{Type: EventBet, Bet: &view})
	out.Note = CashoutNote{RoundID: rec.RoundID, BetID: rec.ID, Multiplier: priced.Multiplier, Payout: priced.Payout, SettledAt: priced.SettledAt}
	if leads {
		// The note outlives the player's request: the round is told even
		// once the player has stopped waiting.
		go func(ctx context.Context) { _ = t.Cashed(ctx, out.Note) }(context.WithoutCancel(ctx))
	}
	return out, nil
}

// errBetMoved: a cashout's commit found its bet moved already (by an
// auto-cashout, the crash's losses or a void that committed first).
var errBetMoved = errors.New("the bet was settled first")

// commitCashout is the commit of a cashout priced for rec: the bet's move
// from accepted and its /win movement.
func (t *Table) commitCashout(rec BetRecord, priced round.Bet) func(ctx context.Context) error {
	payout := priced.Payout
	return func(ctx context.Context) error {
		ok, err := t.store.MoveBet(ctx, rec.ID, StatusAccepted, StatusCashedOut,
			BetChange{SettledAt: toMillis(priced.SettledAt), Multiplier: priced.Multiplier, Payout: &payout})
		switch {
		case err != nil:
			return err
		case !ok:
			return errBetMoved
		case rec.Demo:
			return nil
		}
		return t.enqueue(ctx, winMovement(rec, payout), t.clock.Now())
	}
}

// movedFirst is the refusal of a cashout whose bet another settlement moved
// first, as betOf would have answered had it read the bet after the move:
// cashed out already (its auto-cashout) or cancelled, not allowed; lost or
// voided, crashed.
func (t *Table) movedFirst(ctx context.Context, betID string) error {
	recs, err := t.store.Bets(ctx, BetFilter{ID: betID})
	if err != nil || len(recs) != 1 {
		return round.ErrRoundCrashed
	}
	return refusalOf(recs[0].Status)
}

// overFor is the refusal of a cashout of betID whose round is over, as the
// bet's row reads: cashed out already, ErrCashoutNotAllowed (the player's
// API answers it with that cashout); anything else, ErrRoundCrashed.
func (t *Table) overFor(ctx context.Context, betID string) error {
	recs, err := t.store.Bets(ctx, BetFilter{ID: betID})
	if err == nil && len(recs) == 1 && recs[0].Status == StatusCashedOut {
		return round.ErrCashoutNotAllowed
	}
	return round.ErrRoundCrashed
}

// refusalOf is the refusal of a cashout of a bet in status (nil for an
// accepted bet).
func refusalOf(status string) error {
	switch status {
	case StatusAccepted:
		return nil
	case StatusLost, StatusVoid:
		return round.ErrRoundCrashed
	default:
		return round.ErrCashoutNotAllowed
	}
}

// betOf reads the bet betID that p's session holds, accepted: the refusal a
// cashout of it gets otherwise.
func (t *Table) betOf(ctx context.Context, p Player, betID string) (BetRecord, error) {
	recs, err := t.store.Bets(ctx, BetFilter{ID: betID, GameID: t.game.ID, SessionHash: p.Session})
	switch {
	case err != nil:
		return BetRecord{}, fmt.Errorf("engine: read bet %s: %w", betID, err)
	case len(recs) != 1:
		return BetRecord{}, round.ErrUnknownBet
	}
	if err := refusalOf(recs[0].Status); err != nil {
		return BetRecord{}, err
	}
	return recs[0], nil
}

// CashoutNote tells the table's leader of a cashout another replica priced
// and committed (Cashout): its round marks the bet cashed out, shows it on
// the board and fires no auto-cashout for it.
type CashoutNote struct {
	RoundID    string
	BetID      string
	Multiplier int64
	Payout     int64
	SettledAt  time.Time
}

// Cashed records n in the leader's round. A note of a round the table does
// not play now, or of a bet it holds settled already, changes nothing.
//
// Notes are applied in batches: the first note queued asks the table's loop
// for one pass, and the notes queued before that pass runs go with it, so a
// burst of cashouts costs the loop a few passes, not one each. A caller
// whose note joined a pass already asked for returns at once. A pass that
// cannot run (the table stopped, ctx ended first) drops the notes queued: a
// note costs the board, never money.
func (t *Table) Cashed(ctx context.Context, n CashoutNote) error {
	t.notesMu.Lock()
	first := len(t.notes) == 0
	t.notes = append(t.notes, n)
	t.notesMu.Unlock()
	if !first {
		return nil
	}
	err := t.do(ctx, t.applyNotes)
	if err != nil {
		t.notesMu.Lock()
		t.notes = nil
		t.notesMu.Unlock()
	}
	return err
}

// applyNotes applies, in the loop, every note queued.
func (t *Table) applyNotes() {
	t.notesMu.Lock()
	notes := t.notes
	t.notes = nil
	t.notesMu.Unlock()
	r := t.cur
	if r == nil {
		return
	}
	for _, n := range notes {
		if r.rec.ID != n.RoundID {
			continue
		}
		b := r.live[n.BetID]
		if b == nil {
			continue
		}
		core, ok := r.core.Cashed(round.Bet{Intent: round.Intent{ID: n.BetID}, State: round.CashedOut,
			Multiplier: n.Multiplier, Payout: n.Payout, SettledAt: n.SettledAt})
		if !ok {
			continue
		}
		payout := core.Payout
		b.rec.Status, b.rec.Multiplier, b.rec.Payout = StatusCashedOut, core.Multiplier, &payout
		t.board.cashed(b.item(core))
	}
}
