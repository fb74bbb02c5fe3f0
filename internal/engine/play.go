package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/crashstudio/crashgame/internal/fairness"
	"github.com/crashstudio/crashgame/internal/leadership"
	"github.com/crashstudio/crashgame/internal/movements"
	"github.com/crashstudio/crashgame/internal/round"
	"github.com/crashstudio/crashgame/internal/wallet"
)

// playRound plays round seq of the current term: it opens it (openRound),
// takes its bets (betting), flies it to its crash (fly), and pauses. It
// returns the seq the next round follows (seq, or less when the round could
// not be opened) and what the term does next.
func (t *Table) playRound(ctx context.Context, seq int64) (int64, step) {
	if !t.lease.Live() {
		t.resign(ctx, "the lease ran out before the next round", true)
		return seq, stepEnd
	}
	seq, next := t.openRound(ctx, seq)
	if next != stepPlay {
		return seq, next
	}
	if !t.betting() {
		return seq, t.abandon("lease lost during betting")
	}
	if err := t.takeOff(); err != nil {
		if errors.Is(err, leadership.ErrFenced) {
			return seq, t.abandon("lease lost at take-off")
		}
		t.logger.Error("take-off failed; voiding the round", "round_id", t.cur.rec.ID, "err", err)
		t.voidRound(reasonTakeOffFailed, VoidTakeOffFailed)
		return seq, stepNext
	}
	if next := t.fly(ctx); next != stepNext {
		return seq, next
	}
	t.flushPublic()
	if t.cur.core.Phase() != round.Crashed || t.isStopping() {
		return seq, stepHandOver // at the round boundary
	}
	// Pause after the crash; a stop request ends it (the next round is not
	// opened).
	if !t.wait(t.cur.core.CrashedAt().Add(t.game.Pause), true) {
		return seq, stepEnd
	}
	return seq, stepNext
}

// openRound makes the chain ready for round seq (prepareChain) and opens
// the round (startRound): stepPlay once it is open. When it cannot be
// opened, it returns the seq the next attempt follows and what the term
// does next.
func (t *Table) openRound(ctx context.Context, seq int64) (int64, step) {
	ready, err := t.prepareChain(ctx, seq)
	switch {
	case errors.Is(err, leadership.ErrFenced):
		return seq, stepEnd
	case err != nil:
		t.logger.Error("preparing the hash chain failed; retrying", "seq", seq, "err", err)
		if !t.wait(t.clock.Now().Add(roundRetry), false) {
			return seq, stepEnd
		}
		return seq - 1, stepNext
	case !ready && !t.isStopping():
		return seq, t.abandon("lease lost while the chain was seeding")
	}
	if t.isStopping() {
		return seq, stepHandOver
	}
	err = t.startRound(ctx, seq)
	switch {
	case err == nil:
		return seq, stepPlay
	case errors.Is(err, errTermOver) || (!errors.Is(err, leadership.ErrFenced) && !t.lease.Live()):
		// Nothing opened, or an insert cut at the term's deadline (if it
		// committed after all, the next leader voids it).
		t.resign(ctx, "the lease ran out before the round opened", true)
		return seq, stepEnd
	case errors.Is(err, leadership.ErrFenced):
		t.logger.Warn("another replica leads the table now", "epoch", t.epoch)
		return seq, stepEnd
	}
	// The database may be restarting: keep the table alive and try again;
	// players are told betting is closed meanwhile.
	t.logger.Error("opening a round failed; retrying", "seq", seq, "err", err)
	if !t.wait(t.clock.Now().Add(roundRetry), false) {
		return seq, stepEnd
	}
	// The insert may have committed without our knowing: start after the
	// last round stored (one left in betting is settled by Recover at the
	// next term).
	if last, err := t.lastSeq(ctx); err == nil {
		return last, stepNext
	}
	return seq - 1, stepNext
}

// betting takes the round's bets until its window closes (a stop request
// lets the round go on to its crash), then waits for the debits of bets
// received in the window that the wallet has not answered yet, at most
// DebitGrace, so that a slow answer does not refuse a bet placed in time.
// false when the term ended meanwhile.
func (t *Table) betting() bool {
	return t.wait(t.cur.core.BettingEnds(), false) &&
		t.waitUntil(t.cur.core.BettingEnds().Add(t.cfg.DebitGrace), false, func() bool { return t.cur.core.Pending() == 0 })
}

// fly flies the round: auto-cashouts fire at their targets, then the crash,
// after which the bets left pending in earlier rounds are swept. A stop
// request ends a round that holds no bet in play at once, settled as
// interrupted (no money moves; its hash is revealed), where the table is
// alone on its database (Lease.Sole); otherwise it starts the shutdown grace: a round still flying at its end is settled as
// interrupted. stepNext once the round crashed.
func (t *Table) fly(ctx context.Context) step {
	graceEnd := time.Time{}
	for {
		next, auto := t.cur.core.NextAuto()
		if t.isStopping() && graceEnd.IsZero() {
			// Alone on its database (Lease.Sole) nobody takes the table
			// over: an empty flight is ended rather than flown to its
			// crash. In a cluster the round flies on and the lease is handed
			// over at its end, so a rolling deploy voids no round.
			n := betsInPlay(t.cur)
			if n == 0 && t.cfg.Lease.Sole && t.clock.Now().Before(t.cur.core.CrashAt()) {
				return t.interrupt(ctx, "stopped while the flying round held no bet in play")
			}
			graceEnd = t.clock.Now().Add(t.cfg.ShutdownGrace)
			if n > 0 {
				t.logger.Info("stopping: the flying round holds bets in play; it flies on to its crash, at most the shutdown grace",
					"round_id", t.cur.rec.ID, "bets", n, "grace", t.cfg.ShutdownGrace.String())
			}
		}
		until := t.cur.core.CrashAt()
		if auto && !next.After(until) {
			until = next
		}
		if !graceEnd.IsZero() && graceEnd.Before(until) {
			until = graceEnd
		}
		// Until a grace is set, a stop request interrupts the wait so the
		// grace starts at once.
		if !t.wait(until, graceEnd.IsZero()) {
			return t.abandon("lease lost in flight")
		}
		now := t.clock.Now()
		if !graceEnd.IsZero() && !now.Before(graceEnd) && now.Before(t.cur.core.CrashAt()) {
			return t.interrupt(ctx, "the flying round did not crash within the shutdown grace")
		}
		if auto && !now.Before(next) {
			// The targets reached fire first, each at itself; a crash due
			// at the same reading (a clock that jumped, a loop resumed late)
			// follows at once.
			t.fireAutos(now)
			if now.Before(t.cur.core.CrashAt()) {
				continue
			}
		}
		if !now.Before(t.cur.core.CrashAt()) {
			t.crash()
			if !t.settleLosses() {
				return t.abandon("lease lost before the crash's losses")
			}
			t.payAutosLeft(t.cur)
			go t.sweepLeft(context.WithoutCancel(ctx), t.epoch, t.cur.rec.ID)
			return stepNext
		}
	}
}

// startRound draws the round from the chain (prepareChain made it ready)
// and opens its betting phase. The round's row names its chain and position;
// its hash and crash point stay in memory until it ends.
func (t *Table) startRound(ctx context.Context, seq int64) error {
	pos := seq - t.chainRec.FirstSeq + 1
	h, err := t.chain.Hash(int(pos))
	if err != nil {
		return fmt.Errorf("engine: round %d: %w", seq, err)
	}
	// A round opened in a term that is over would be left to the next
	// leader, void: the term's deadline is checked first and bounds the
	// insert.
	if !t.lease.Live() {
		return errTermOver
	}
	ctx, cancel := t.lease.Bound(ctx)
	defer cancel()
	now := t.clock.Now()
	rec := RoundRecord{
		ID: roundID(t.game.ID, seq), GameID: t.game.ID, Seq: seq, ChainID: t.chainRec.ID, Position: pos,
		Status: RoundBetting, BettingEndsAt: toMillis(now.Add(t.game.Betting)), CreatedAt: toMillis(now),
		Epoch: t.epoch,
	}
	if err := t.fenced(ctx, t.epoch, func(ctx context.Context) error { return t.store.InsertRound(ctx, rec) }); err != nil {
		return fmt.Errorf("engine: open round: %w", err)
	}
	crash := fairness.CrashPoint(h, *t.chainRec.Salt, t.chainRec.RTPBasisPts, t.chainRec.MaxMultiplier)
	t.cur = &liveRound{rec: rec, core: round.New(rec.ID, crash, rec.BettingEndsAt), live: map[string]*liveBet{},
		hash: fairness.FormatHash(h), crash: crash}
	t.board = board{}
	t.publish(EventRoundBetting)
	return nil
}

// publish updates the view from the current round and broadcasts the phase
// event of that type with it.
func (t *Table) publish(typ string) {
	r := t.cur
	v := RoundView{RoundID: r.rec.ID, Seq: r.rec.Seq, Phase: string(r.core.Phase()), BettingEndsAt: r.core.BettingEnds(), StartedAt: r.core.StartedAt()}
	if r.core.Phase() == round.Crashed {
		v.CrashedAt, v.CrashPoint, v.Hash = r.core.CrashedAt(), r.crash, r.hash
	}
	t.viewMu.Lock()
	t.view = v
	t.viewMu.Unlock()
	t.events.Broadcast(&Event{Type: typ, Round: v})
}

// takeOff starts the flight with the accepted bets; pending ones stay out.
// First it commits the acceptance of every bet the round accepted whose row
// is still pending (its replica has not committed it yet: Accept), so that
// the round flies with all its bets accepted in the database before any of
// their auto-cashouts, cashouts or losses, which move a bet from accepted,
// is committed.
func (t *Table) takeOff() error {
	r := t.cur
	if err := t.acceptDecided(r); err != nil {
		return err
	}
	now := t.clock.Now()
	err := t.fenced(context.Background(), t.epoch, func(ctx context.Context) error {
		return t.store.TakeOffRound(ctx, r.rec.ID, toMillis(now))
	})
	if err != nil {
		return err
	}
	r.core.TakeOff(now)
	t.took(r.rec.ID, r.core.Flight())
	t.publish(EventRoundFlying)
	return nil
}

// acceptDecided commits, outside the committer, the acceptance of each bet
// of r the round accepted that still reads pending. Such a commit moves a
// bet from pending only, so an acceptance that its replica commits at the
// same moment moves it once, and never deadlocks with this one
// (MoveDecidedBets). Loop only.
func (t *Table) acceptDecided(r *liveRound) error {
	txIDs := make(map[string]string, len(r.live))
	for id, b := range r.live {
		if b.rec.Status == StatusAccepted {
			txIDs[id] = b.rec.OperatorTxID
		}
	}
	ctx, cancel := t.lease.Bound(context.Background())
	defer cancel()
	n, err := t.store.MoveDecidedBets(ctx, r.rec.ID, StatusPending, StatusAccepted, txIDs)
	if err != nil {
		return fmt.Errorf("engine: accept the round's bets at take-off: %w", err)
	}
	if n > 0 {
		t.logger.Debug("the take-off committed acceptances their replicas had not", "round_id", r.rec.ID, "bets", n)
	}
	return nil
}

// crash ends the flight at its crash point: the round is committed finished,
// its hash and crash point revealed, and the crash published. Every bet
// still accepted is lost, but for one whose auto-cashout target the round
// reached (payAutosLeft pays it): in the same transaction when cashouts are only
// priced here (Config.LossDelay zero), else LossDelay later (settleLosses),
// so that a cashout another replica priced before the crash commits first.
// No cashout is priced here once the crash is queued (ended): the
// committer commits those priced before it first.
func (t *Table) crash() {
	r := t.cur
	r.core.Crash()
	t.ended()
	roundID, crashedAt := r.rec.ID, toMillis(r.core.CrashedAt())
	var lost []string
	err := t.commitHard("settling the crash of "+roundID, func(ctx context.Context) error {
		if err := t.store.FinishRound(ctx, roundID, crashedAt, r.hash, r.crash); err != nil {
			return err
		}
		if t.cfg.LossDelay > 0 {
			return nil
		}
		var err error
		lost, err = t.loseAccepted(ctx, r, crashedAt)
		return err
	})
	if err != nil {
		t.logger.Error("settling the crash failed; recovery at boot will finish it", "round_id", roundID, "err", err)
	}
	t.notifyQueue()
	t.publish(EventRoundCrashed)
	t.sendLost(r, lost)
}

// settleLosses settles, LossDelay after the crash, the bets of the crashed
// round still accepted: lost. false when the term ended first (the next
// leader's recovery settles them).
func (t *Table) settleLosses() bool {
	if t.cfg.LossDelay <= 0 {
		return true
	}
	r := t.cur
	until := r.core.CrashedAt().Add(t.cfg.LossDelay)
	undecided := undecidedBets(r)
	if len(undecided) > 0 {
		// No /bet of the round is sent after its debit deadline, nor answered
		// later than DebitClockMargin after it (the recovery's wait).
		if end := r.core.BettingEnds().Add(t.cfg.DebitGrace + DebitClockMargin); end.After(until) {
			until = end
		}
	}
	if !t.wait(until, false) {
		return false
	}
	var (
		lost   []string
		voided []*liveBet
	)
	crashedAt := toMillis(r.core.CrashedAt())
	err := t.commitHard("settling the losses of "+r.rec.ID, func(ctx context.Context) error {
		var err error
		if lost, err = t.loseAccepted(ctx, r, crashedAt); err != nil {
			return err
		}
		voided, err = t.voidUndecided(ctx, undecided)
		return err
	})
	if err != nil {
		t.logger.Error("settling the crash's losses failed; recovery at boot will finish it", "round_id", r.rec.ID, "err", err)
	}
	t.notifyQueue()
	t.sendLost(r, lost)
	if len(voided) > 0 {
		t.logger.Warn("bets whose debit outcome never reached the leader rolled back", "round_id", r.rec.ID, "bets", len(voided))
	}
	for _, b := range voided {
		b.rec.Status = StatusVoid
		t.events.Send(b.player.Session, &Event{Type: EventBet, Bet: b.view(round.Voided)})
	}
	return true
}

// betsInPlay counts r's bets still in play: accepted and not settled, or
// whose debit's outcome is not known here yet. Loop only.
func betsInPlay(r *liveRound) int { return r.core.InPlay() + len(undecidedBets(r)) }

// undecidedBets are r's bets admitted here whose debit outcome never came
// back (Decide): the replica that ran the money path lost the leader's
// answer or reached a replica that no longer led. Their intents may have
// committed and their /bet may have been taken. Loop only.
func undecidedBets(r *liveRound) []*liveBet {
	var out []*liveBet
	for _, b := range r.live {
		if b.rec.Status == StatusPending {
			out = append(out, b)
		}
	}
	return out
}

// voidUndecided voids the bets of bets still pending in the database and
// queues their rollbacks (RB-3: their outcome was not known at take-off),
// so that a debit the wallet took is returned at the round's end, not at
// the sweep a minute later. The caller waited for the round's last /bet
// answer (its debit deadline plus DebitClockMargin), so every rollback
// follows the debit it undoes (RB-13). A bet whose intent never committed
// is not in the database and is left alone; a demo bet's stake, which
// Decide takes from the bank, was never taken.
func (t *Table) voidUndecided(ctx context.Context, bets []*liveBet) ([]*liveBet, error) {
	var moved []*liveBet
	for _, b := range bets {
		ok, err := t.rollbackBet(ctx, b, StatusPending, StatusVoid, reasonDebitUnknown)
		if err != nil {
			return nil, err
		}
		if ok {
			moved = append(moved, b)
		}
	}
	return moved, nil
}

// loseAccepted moves every bet of r still accepted to lost, in one
// statement, and queues the zero_win of each one whose operator wants it.
// It returns the ids it moved: a bet another replica cashed out first is
// not among them, nor one whose auto-cashout target the round reached
// (payAutosLeft pays it, if no commit has yet).
func (t *Table) loseAccepted(ctx context.Context, r *liveRound, crashedAt time.Time) ([]string, error) {
	ids, err := t.store.LoseRoundBets(ctx, r.rec.ID, r.crash, crashedAt)
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		if b := r.live[id]; b != nil {
			if err := t.enqueueZeroWin(ctx, b.rec); err != nil {
				return nil, err
			}
		}
	}
	return ids, nil
}

// sendLost sends the lost bets' events to their sessions.
func (t *Table) sendLost(r *liveRound, ids []string) {
	for _, id := range ids {
		if b := r.live[id]; b != nil {
			b.rec.Status = StatusLost
			t.events.Send(b.player.Session, &Event{Type: EventBet, Bet: b.view(round.Lost)})
		}
	}
}

// enqueueZeroWin queues the terminal zero_win of a lost real-money bet, where
// the operator switched the capability on (WIN-8, WIN-9).
func (t *Table) enqueueZeroWin(ctx context.Context, rec BetRecord) error {
	if rec.Demo {
		return nil
	}
	op, ok := t.cfg.Operators[rec.Operator]
	if !ok || !op.ZeroWin {
		return nil
	}
	return t.enqueue(ctx, movements.Movement{
		TransactionID: rec.ID + "-w", Kind: movements.KindWin,
		Operator: rec.Operator, GameID: rec.GameID, Currency: rec.Currency, PlayerID: rec.PlayerID,
		Token: rec.Token, RoundID: rec.RoundID, BetID: rec.ID, Amount: 0,
		WinType: wallet.WinTypeZeroWin, FreebetID: rec.FreebetID,
	}, t.clock.Now())
}

// voidRound ends the current round without a crash: every bet still in play is
// rolled back (RB-4) with reason, and the round is marked void by rule
// (VoidTakeOffFailed...).
func (t *Table) voidRound(reason, rule string) {
	r := t.cur
	voidedAt := t.clock.Now()
	voided := r.core.Void(voidedAt)
	t.ended()
	var open []*liveBet
	err := t.commitHard("voiding "+r.rec.ID, func(ctx context.Context) error {
		if err := t.store.VoidRound(ctx, r.rec.ID, r.hash, r.crash, toMillis(voidedAt), rule); err != nil {
			return err
		}
		// A bet cashed out first (a cashout queued before the void) keeps
		// its cashout: only the bets moved here are voided.
		open = open[:0]
		for _, id := range voided {
			b := r.live[id]
			moved, err := t.rollbackAccepted(ctx, b, StatusVoid, reason)
			if err != nil {
				return err
			}
			if moved {
				open = append(open, b)
			}
		}
		return nil
	})
	if err != nil {
		t.logger.Error("voiding the round failed; recovery at boot will finish it", "round_id", r.rec.ID, "err", err)
	}
	if err == nil {
		for _, b := range open {
			t.refundDemo(b)
		}
	}
	t.notifyQueue()
	// The view leaves the void round (no crash point to show: nothing is
	// broadcast; the next round.betting, if any, follows).
	t.viewMu.Lock()
	t.view.Phase = PhaseCrashed
	t.viewMu.Unlock()
	t.logger.Warn("round voided", "round_id", r.rec.ID, "reason", reason, "bets_rolled_back", len(open))
	for _, b := range open {
		t.events.Send(b.player.Session, &Event{Type: EventBet, Bet: b.view(round.Voided)})
	}
}

// rollbackBet moves a bet from -> to and queues the rollback of its debit, with
// the debit's amount and no freebet_id (RB-1, RB-6); a freebet returns to the
// player's queue. A demo bet is refunded by the bank instead.
// It reports whether it moved the bet.
func (t *Table) rollbackBet(ctx context.Context, b *liveBet, from, to, reason string) (bool, error) {
	ok, err := t.store.MoveBet(ctx, b.rec.ID, from, to, BetChange{SettledAt: toMillis(t.clock.Now())})
	if err != nil || !ok {
		return false, err
	}
	return true, t.queueRollback(ctx, b.rec, b.player, reason)
}

// rollbackAccepted rolls back a bet its round accepted (as rollbackBet): it moves the bet to
// status to from accepted, or from pending while its acceptance has not
// committed yet where it was debited (Accept, which then finds the bet
// moved), in one statement (MoveOpenBet): an acceptance committed meanwhile
// can never leave the bet between two moves that each miss it.
func (t *Table) rollbackAccepted(ctx context.Context, b *liveBet, to, reason string) (bool, error) {
	ok, err := t.store.MoveOpenBet(ctx, b.rec.ID, to, BetChange{SettledAt: toMillis(t.clock.Now())})
	if err != nil || !ok {
		return false, err
	}
	return true, t.queueRollback(ctx, b.rec, b.player, reason)
}

func (t *Table) queueRollback(ctx context.Context, rec BetRecord, p Player, reason string) error {
	if rec.FreebetID != nil && t.cfg.Freebets != nil {
		if err := t.cfg.Freebets.Return(ctx, p, *rec.FreebetID); err != nil {
			return err
		}
	}
	if rec.Demo {
		return nil // the bank refunds it once the transaction committed: refundDemo
	}
	return t.enqueue(ctx, movements.Movement{
		TransactionID: rec.ID + "-r", Kind: movements.KindRollback,
		Operator: rec.Operator, GameID: rec.GameID, Currency: rec.Currency, PlayerID: rec.PlayerID,
		Token: rec.Token, RoundID: rec.RoundID, BetID: rec.ID, Amount: rec.Amount, Reason: reason,
	}, t.clock.Now())
}

// hardAttempts bounds commitHard: about two minutes of a database away.
const hardAttempts = 120

// commitHard commits a write the round cannot go on without (a crash's
// settlement, a void), trying again while the database is away, so that a
// restart of the database does not leave bets unsettled until the next boot.
// The loop waits meanwhile: no round can start without its database anyway.
func (t *Table) commitHard(what string, fn func(ctx context.Context) error) error {
	var err error
	for attempt := 1; attempt <= hardAttempts; attempt++ {
		if err = t.commit.Do(context.Background(), job{epoch: t.epoch, run: fn}); err == nil {
			return nil
		}
		if errors.Is(err, leadership.ErrFenced) {
			return err // another replica leads: it settles the round
		}
		t.logger.Error("commit failed; retrying", "what", what, "attempt", attempt, "err", err)
		<-t.clock.After(roundRetry)
	}
	return err
}

// refundDemo gives a rolled-back demo bet's stake back to its session.
func (t *Table) refundDemo(b *liveBet) {
	if b.rec.Demo && b.rec.FreebetID == nil {
		t.cfg.Balances.Reported(b.player.Session, t.cfg.Demo.Credit(b.rec.SessionHash, b.rec.Amount))
	}
}

func (t *Table) notifyQueue() { t.cfg.Outbox.Notify() }

// flushPublic sends the round's board when it changed since it was last sent.
func (t *Table) flushPublic() {
	if !t.board.changed || t.cur == nil {
		return
	}
	// Deliver may still write the view while this table takes the lead (an
	// event of the previous leader in flight): read it under its lock.
	t.viewMu.RLock()
	v := t.view
	t.viewMu.RUnlock()
	t.events.Broadcast(t.board.event(v))
}
