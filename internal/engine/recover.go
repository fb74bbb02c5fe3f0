package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/crashstudio/crashgame/internal/round"
	"github.com/crashstudio/crashgame/internal/seal"
)

// Recovery counts what Recover settled.
type Recovery struct {
	Rounds     int // interrupted rounds settled (each is now void)
	CashedOut  int // auto-cashouts paid at their target
	RolledBack int // bets refunded through /rollback (a demo bet: in its record only)
	Lost       int // bets left accepted in a round that crashed, settled lost
	// Settled is every bet moved, as its player now sees it: announced to the
	// bet's session (announce) once the transaction that moved it committed.
	Settled []SettledBet
}

// SettledBet is a bet a recovery moved, and the session it belongs to.
type SettledBet struct {
	Session []byte
	Bet     BetView
}

func (r *Recovery) add(o Recovery) {
	r.Rounds += o.Rounds
	r.CashedOut += o.CashedOut
	r.RolledBack += o.RolledBack
	r.Lost += o.Lost
	r.Settled = append(r.Settled, o.Settled...)
}

// settledView is stored bet b as it reads after its move to status.
func settledView(b BetRecord, status string, at time.Time, multiplier int64, payout *int64) SettledBet {
	b.Status, b.SettledAt, b.Multiplier, b.Payout = status, at, multiplier, payout
	return SettledBet{Session: b.SessionHash, Bet: viewOf(b)}
}

// announce tells each settled bet's session what became of it (a `bet`
// event on its streams, wherever they are open): a bet whose answer was lost
// in a fail-over is then shown refunded, or paid at its auto-cashout, without
// waiting for the page to read My bets again. Call it only after the
// transaction that settled them committed.
func (t *Table) announce(r Recovery) {
	for _, s := range r.Settled {
		v := s.Bet
		t.events.Send(s.Session, &Event{Type: EventBet, Bet: &v})
	}
}

// Recover settles what a table left unfinished, under the lease: at the start
// of each term of leadership (the boot of a single process, a replica taking
// the table over), and for a round a stopping leader could not finish within
// its grace. Each round still betting or flying is settled from the database
// by the fail-over rule, which never favours the house (docs/failover.md), in
// one transaction per round (inside the caller's, when ctx carries one):
//
//   - a round interrupted in betting never flew: every accepted bet is refunded
//     through /rollback;
//   - a round interrupted in flight: an accepted bet whose auto-cashout target
//     is at or below the round's crash point (committed before the flight) is
//     cashed out at exactly its target, priced as the round prices it and
//     capped at max_win (LIM-14), with its /win queued; every other accepted
//     bet is refunded through /rollback;
//   - a bet still pending (its /bet outcome unknown) is rolled back (RB-5);
//   - a bet already cashed out keeps its win, which is already queued.
//
// A bet left accepted in a round that crashed (its leader's term ended
// between the crash's commit and its losses', Config.LossDelay, or before
// an auto-cashout was committed) is lost, as at the crash, with its
// zero_win where the operator wants one; one whose auto-cashout target the
// round reached is paid at it.
//
// The round is then void: it ended without a crash on screen; its hash and
// crash point are revealed. A bet left pending in any other round is rolled
// back too. Every move is conditional on the status read, so running Recover
// again settles nothing twice. Demo bets are settled the same way in their
// records and queue nothing. Recover only writes the database: it tells no
// stream and credits no demo balance, since the caller's transaction may
// still fail after it returns; the caller announces the Recovery's Settled
// bets (announce) once that transaction committed.
func (t *Table) Recover(ctx context.Context) (Recovery, error) {
	return t.settleUnfinished(ctx, "")
}

// settleUnfinished is Recover; the round plannedStop (an id, or ""), flying
// when a planned stop ended it (its grace ran out, or it held no bet in
// play), is settled by the same rule and
// recorded as voided by the planned stop (VoidPlannedStop).
func (t *Table) settleUnfinished(ctx context.Context, plannedStop string) (Recovery, error) {
	var total Recovery
	unfinished, err := t.store.UnfinishedRounds(ctx, t.game.ID)
	if err != nil {
		return total, fmt.Errorf("engine: recover %s: %w", t.game.ID, err)
	}
	for _, id := range unfinished {
		r, err := t.settleInterrupted(ctx, id, id == plannedStop)
		if errors.Is(err, seal.ErrOpen) {
			// Its crash point is in the sealed seed alone: no rule can settle
			// it without, and guessing would move money on a made-up outcome.
			return total, fmt.Errorf("engine: recover %s: round %s was interrupted and its chain's seed does not open with fairness.seed_key (the key was changed or lost): "+
				"start with the key the chain was sealed with to settle it by the fail-over rule, then change the key (docs/config.md); until then its bets stay open and no round is played: %w", t.game.ID, id, err)
		}
		if err != nil {
			return total, fmt.Errorf("engine: recover %s: settle round %s: %w", t.game.ID, id, err)
		}
		total.add(r)
	}
	left, err := t.settleLeftovers(ctx, BetFilter{GameID: t.game.ID, Statuses: []string{StatusAccepted}})
	if err != nil {
		return total, fmt.Errorf("engine: recover %s: %w", t.game.ID, err)
	}
	for _, s := range left {
		switch s.Bet.Status {
		case StatusCashedOut:
			total.CashedOut++
		case StatusVoid:
			total.RolledBack++
		default:
			total.Lost++
		}
	}
	total.Settled = append(total.Settled, left...)
	// Bets left pending in rounds that did finish (a commit failed after the
	// crash).
	pending, err := t.store.Bets(ctx, BetFilter{GameID: t.game.ID, Statuses: []string{StatusPending}})
	if err != nil {
		return total, fmt.Errorf("engine: recover %s: pending bets: %w", t.game.ID, err)
	}
	orphans, err := t.rollBackOrphans(ctx, pending, reasonPendingAfterRound)
	if err != nil {
		return total, fmt.Errorf("engine: recover %s: %w", t.game.ID, err)
	}
	total.RolledBack += len(orphans)
	total.Settled = append(total.Settled, orphans...)
	if total.Rounds+total.CashedOut+total.RolledBack+total.Lost > 0 {
		t.logger.Warn("recovered an interrupted table", "rounds_settled", total.Rounds,
			"bets_cashed_out", total.CashedOut, "bets_rolled_back", total.RolledBack, "bets_lost", total.Lost)
		t.notifyQueue()
	}
	return total, nil
}

// settleLeftovers settles the bets that f selects (bets left accepted) whose
// round ended, in one transaction, by the rule that applies to each:
//   - in a round that crashed, one whose auto-cashout target the round
//     reached is paid at it, at the instant it was reached; every other is
//     lost at the crash's instant, with its zero_win;
//   - in a void round, by the fail-over rule: one whose target the round
//     reached in its flight (the round flew, and its crash point, revealed
//     with the void, is at or above the target) is paid at it; every other
//     is refunded through /rollback (RB-4).
//
// A bet of a round that has not ended is left alone (Recover settles every
// unfinished round first). Every move is conditional on the bet still being
// accepted, so a bet settled meanwhile is left as it is.
func (t *Table) settleLeftovers(ctx context.Context, f BetFilter) ([]SettledBet, error) {
	accepted, err := t.store.Bets(ctx, f)
	if err != nil {
		return nil, fmt.Errorf("accepted bets: %w", err)
	}
	if len(accepted) == 0 {
		return nil, nil
	}
	rounds := map[string]RoundRecord{}
	var moved []SettledBet
	err = t.store.InTx(ctx, func(ctx context.Context) error {
		moved = moved[:0]
		for _, b := range accepted {
			r, ok := rounds[b.RoundID]
			if !ok {
				var err error
				if r, err = t.store.Round(ctx, t.game.ID, b.RoundID); err != nil {
					return fmt.Errorf("the round of bet %s: %w", b.ID, err)
				}
				rounds[b.RoundID] = r
			}
			var (
				settled *SettledBet
				err     error
			)
			switch r.Status {
			case RoundFinished:
				settled, err = t.settleAfterCrash(ctx, r, b)
			case RoundVoid:
				settled, err = t.settleAfterVoid(ctx, r, b)
			}
			if err != nil {
				return err
			}
			if settled != nil {
				moved = append(moved, *settled)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("bets left accepted after their round: %w", err)
	}
	return moved, nil
}

// settleAfterCrash settles bet b, left accepted in round r that crashed: paid
// at its auto-cashout target where the round reached it (its replica had not
// committed it, nor its leader the payment after the losses, payAutosLeft),
// else lost at the crash, with its zero_win. nil when it was settled
// meanwhile.
func (t *Table) settleAfterCrash(ctx context.Context, r RoundRecord, b BetRecord) (*SettledBet, error) {
	if reached(b, r.CrashPoint) {
		return t.payAuto(ctx, b, r.StartedAt.Add(round.TimeToReach(b.AutoCashout)))
	}
	zero := int64(0)
	ok, err := t.store.MoveBet(ctx, b.ID, StatusAccepted, StatusLost, BetChange{SettledAt: r.CrashedAt, Payout: &zero})
	if err != nil || !ok {
		return nil, err
	}
	if err := t.enqueueZeroWin(ctx, b); err != nil {
		return nil, err
	}
	lost := settledView(b, StatusLost, r.CrashedAt, 0, &zero)
	return &lost, nil
}

// settleAfterVoid settles bet b, left accepted in round r that was voided
// (a void whose move missed it), by the fail-over rule: paid at its
// auto-cashout target where the round flew and its crash point reaches it,
// else refunded. nil when it was settled meanwhile.
func (t *Table) settleAfterVoid(ctx context.Context, r RoundRecord, b BetRecord) (*SettledBet, error) {
	now := t.clock.Now()
	flew := !r.StartedAt.IsZero()
	if flew && reached(b, r.CrashPoint) {
		return t.payAuto(ctx, b, now)
	}
	reason := reasonInterruptedBetting
	switch {
	case flew:
		reason = reasonInterruptedFlight
	case r.VoidRule == VoidTakeOffFailed:
		reason = reasonTakeOffFailed
	}
	at := toMillis(now)
	ok, err := t.store.MoveBet(ctx, b.ID, StatusAccepted, StatusVoid, BetChange{SettledAt: at})
	if err != nil || !ok {
		return nil, err
	}
	p := Player{Session: b.SessionHash, Operator: b.Operator, PlayerID: b.PlayerID, Token: b.Token, Currency: b.Currency, Demo: b.Demo}
	if err := t.queueRollback(ctx, b, p, reason); err != nil {
		return nil, err
	}
	voided := settledView(b, StatusVoid, at, 0, nil)
	return &voided, nil
}

// settleInterrupted settles one unfinished round by the fail-over rule, in one
// transaction, and voids it, recording the rule: the fail-over rule in betting
// or in flight, or planned_stop for a flying round whose planned stop's grace
// ran out (planned). A round found settled meanwhile is left alone.
func (t *Table) settleInterrupted(ctx context.Context, id string, planned bool) (Recovery, error) {
	var out Recovery
	now := t.clock.Now()
	err := t.store.InTx(ctx, func(ctx context.Context) error {
		out = Recovery{}
		r, err := t.store.Round(ctx, t.game.ID, id)
		if err != nil {
			return err
		}
		if r.Status != RoundBetting && r.Status != RoundFlying {
			return nil
		}
		// The round's outcome, never stored before its end, comes from its
		// sealed chain; it is revealed with the void round.
		hash, crash, err := t.reveal(ctx, r)
		if err != nil {
			return err
		}
		r.Hash, r.CrashPoint = hash, crash
		bets, err := t.store.Bets(ctx, BetFilter{GameID: t.game.ID, RoundIDs: []string{id},
			Statuses: []string{StatusPending, StatusAccepted}})
		if err != nil {
			return err
		}
		for _, b := range bets {
			p := Player{Session: b.SessionHash, Operator: b.Operator, PlayerID: b.PlayerID, Token: b.Token, Currency: b.Currency, Demo: b.Demo}
			moved, err := t.settleOrphan(ctx, r, b, p, now)
			switch {
			case err != nil:
				return err
			case moved == nil:
				continue
			case moved.Bet.Status == StatusCashedOut:
				out.CashedOut++
			case moved.Bet.Status == StatusVoid:
				out.RolledBack++
			}
			out.Settled = append(out.Settled, *moved)
		}
		out.Rounds = 1
		rule := VoidFailoverBetting
		switch {
		case r.Status == RoundFlying && planned:
			rule = VoidPlannedStop
		case r.Status == RoundFlying:
			rule = VoidFailoverFlight
		}
		return t.store.VoidRound(ctx, id, hash, crash, toMillis(now), rule)
	})
	if err != nil {
		return Recovery{}, err
	}
	if out.Rounds > 0 {
		t.logger.Warn("interrupted round settled by the fail-over rule", "round_id", id,
			"bets_cashed_out", out.CashedOut, "bets_rolled_back", out.RolledBack)
	}
	return out, nil
}

// settleOrphan applies the fail-over rule to bet b of the interrupted round r,
// from the status it was read in, inside the round's transaction. It returns
// the bet as it now reads, or nil when it was settled meanwhile.
func (t *Table) settleOrphan(ctx context.Context, r RoundRecord, b BetRecord, p Player, now time.Time) (*SettledBet, error) {
	at := toMillis(now)
	flew := r.Status == RoundFlying
	if b.Status == StatusAccepted && flew && reached(b, r.CrashPoint) {
		// The round would have reached the target: paid at exactly it, as
		// the round prices an auto-cashout.
		return t.payAuto(ctx, b, at)
	}
	reason := reasonInterruptedPending
	switch {
	case b.Status == StatusAccepted && flew:
		reason = reasonInterruptedFlight
	case b.Status == StatusAccepted:
		reason = reasonInterruptedBetting
	}
	ok, err := t.store.MoveBet(ctx, b.ID, b.Status, StatusVoid, BetChange{SettledAt: at})
	if err != nil {
		return nil, err
	}
	if !ok {
		return t.settleAcceptedSince(ctx, r, b, p, now)
	}
	moved := settledView(b, StatusVoid, at, 0, nil)
	return &moved, t.queueRollback(ctx, b, p, reason)
}

// settleAcceptedSince settles bet b of the interrupted round r, read
// pending and moved since: the replica that debited it committed the
// acceptance its leader had decided (Accept) between the read and the move.
// The rule is applied to the bet as it now reads when it reads accepted; a
// bet settled meanwhile is left alone (nil).
func (t *Table) settleAcceptedSince(ctx context.Context, r RoundRecord, b BetRecord, p Player, now time.Time) (*SettledBet, error) {
	if b.Status != StatusPending {
		return nil, nil
	}
	recs, err := t.store.Bets(ctx, BetFilter{ID: b.ID})
	if err != nil {
		return nil, fmt.Errorf("read bet %s again: %w", b.ID, err)
	}
	if len(recs) != 1 || recs[0].Status != StatusAccepted {
		return nil, nil
	}
	return t.settleOrphan(ctx, r, recs[0], p, now)
}

// reached reports whether the round, crashing at crashPoint, reaches bet
// b's auto-cashout target: it is then paid at exactly it, never lost.
func reached(b BetRecord, crashPoint int64) bool {
	return b.AutoCashout != 0 && b.AutoCashout <= crashPoint
}

// payAuto pays bet b, read accepted, its auto-cashout at exactly its target
// (capped at max_win, LIM-14), settled at at, with its /win queued. It
// returns the bet as it now reads, or nil when it was settled meanwhile.
func (t *Table) payAuto(ctx context.Context, b BetRecord, at time.Time) (*SettledBet, error) {
	payout := round.Payout(b.Amount, b.AutoCashout, t.maxWin(b))
	ok, err := t.store.MoveBet(ctx, b.ID, StatusAccepted, StatusCashedOut, BetChange{SettledAt: at, Multiplier: b.AutoCashout, Payout: &payout})
	if err != nil || !ok {
		return nil, err // read accepted, so settled since
	}
	moved := settledView(b, StatusCashedOut, at, b.AutoCashout, &payout)
	if b.Demo {
		return &moved, nil
	}
	return &moved, t.enqueue(ctx, winMovement(b, payout), t.clock.Now())
}

// maxWin is the payout cap of a bet's currency for its operator, as PlaceBet
// read it; 0 (no cap) when the limit is unknown.
func (t *Table) maxWin(b BetRecord) int64 {
	return t.cfg.Operators[b.Operator].Currencies[b.Currency].MaxWin
}

// orphanAge is how long a bet may stay pending before the sweep takes its
// outcome for unknown: its attempts stop when its betting window closes, and
// the last one ends within the client's timeout.
const orphanAge = time.Minute

// sweepLeft settles, while the table leads, what earlier rounds of this game
// left unsettled, and counts what is left (Unsettled): a bet still pending
// orphanAge after it was placed (a debit whose outcome stayed unknown
// because a commit failed) is rolled back; a bet still accepted in a round
// that ended (a settlement's move that missed it) is settled by the rule that
// applies to it (settleLeftovers). Each bet it settles is logged: none
// should be left for it. The loop starts it after each crash, for the rounds
// before currentRound; every term's recovery does the same for all of them.
func (t *Table) sweepLeft(ctx context.Context, epoch int64, currentRound string) {
	now := t.clock.Now()
	var moved []SettledBet
	err := t.fenced(ctx, epoch, func(ctx context.Context) error {
		moved = moved[:0]
		pending, err := t.store.Bets(ctx, BetFilter{GameID: t.game.ID, Statuses: []string{StatusPending},
			ExceptRound: currentRound, PlacedBefore: toMillis(now.Add(-orphanAge)), Limit: sweepLimit})
		if err != nil {
			return err
		}
		orphans, err := t.rollBackOrphans(ctx, pending, reasonPendingAfterRound)
		if err != nil {
			return err
		}
		left, err := t.settleLeftovers(ctx, BetFilter{GameID: t.game.ID, Statuses: []string{StatusAccepted},
			ExceptRound: currentRound, RoundEnded: true, Limit: sweepLimit})
		if err != nil {
			return err
		}
		moved = append(orphans, left...)
		return nil
	})
	if err != nil {
		t.logger.Warn("sweeping the bets earlier rounds left unsettled failed; the next round's sweep tries again", "err", err)
		moved = nil
	}
	for _, s := range moved {
		t.logger.Warn("a bet an earlier round left unsettled was settled by the sweep",
			"round_id", s.Bet.RoundID, "bet_id", s.Bet.BetID, "status", s.Bet.Status)
	}
	if len(moved) > 0 {
		t.announce(Recovery{Settled: moved})
		t.notifyQueue()
	}
	t.countUnsettled(ctx, epoch)
}

// sweepLimit bounds the bets one sweep settles of each kind; the next
// round's sweep takes the rest.
const sweepLimit = 1000

// countUnsettled counts the bets of this game left unsettled in rounds that
// ended (UnsettledBets), for Unsettled, while the term of epoch lasts.
func (t *Table) countUnsettled(ctx context.Context, epoch int64) {
	n, err := t.store.UnsettledBets(ctx, t.game.ID, t.clock.Now().Add(-orphanAge))
	if err != nil {
		t.logger.Warn("counting the bets left unsettled failed", "err", err)
		return
	}
	if t.elector.Epoch() == epoch {
		t.unsettled.Store(n)
	}
	if n > 0 {
		t.logger.Error("bets left unsettled in rounds that ended", "bets", n)
	}
}

// Shed is how many bets this process refused before their debit since it
// started, because its debits took longer than their round had left
// (ErrTableBusy).
func (t *Table) Shed() int64 { return t.shed.Load() }

// Unsettled is how many bets of the game's ended rounds were found unsettled
// when the table, leading, last counted them: accepted, or pending for more
// than orphanAge. It should be 0 (crashgame_unsettled_bets; docs/deploy.md);
// 0 while this process does not lead.
func (t *Table) Unsettled() int64 {
	if !t.elector.Leading() {
		return 0
	}
	return t.unsettled.Load()
}

// rollBackOrphans voids bets (each from the status it was read in, so a bet
// settled meanwhile is left alone) and queues their rollbacks, in one
// transaction. It returns the bets it rolled back.
func (t *Table) rollBackOrphans(ctx context.Context, bets []BetRecord, reason string) ([]SettledBet, error) {
	if len(bets) == 0 {
		return nil, nil
	}
	now := toMillis(t.clock.Now())
	var moved []SettledBet
	err := t.store.InTx(ctx, func(ctx context.Context) error {
		moved = moved[:0]
		for _, b := range bets {
			ok, err := t.store.MoveBet(ctx, b.ID, b.Status, StatusVoid, BetChange{SettledAt: now})
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
			p := Player{Session: b.SessionHash, Operator: b.Operator, PlayerID: b.PlayerID, Token: b.Token, Currency: b.Currency, Demo: b.Demo}
			if err := t.queueRollback(ctx, b, p, reason); err != nil {
				return err
			}
			moved = append(moved, settledView(b, StatusVoid, now, 0, nil))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return moved, nil
}
