package engine

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/crashstudio/crashgame/internal/round"
)

// fireAutos settles the auto-cashouts the round fired at now, each at
// exactly its target (autoCashout). Loop only.
func (t *Table) fireAutos(now time.Time) {
	for _, core := range t.cur.core.FireAutos(now) {
		t.autoCashout(t.cur.live[core.ID], core)
	}
}

// autoCashout settles an auto-cashout the round fired for b at its target,
// in the loop: the board shows it at once. Its commit is the leader's for
// a bet debited here, and for a demo bet, whose play money the leader's
// bank holds: the bet's move from accepted and its /win movement commit
// together (commitCashout), and a goroutine sends the bet's event once
// committed. The replica that debited any other bet commits it
// (PayDebitedAutos), and the round's losses leave it to be paid after the crash
// if it has not (payAutosLeft). A cashout committed first leaves the bet
// moved: the auto-cashout then commits nothing.
func (t *Table) autoCashout(b *liveBet, core round.Bet) {
	payout, m := core.Payout, core.Multiplier
	b.rec.Status, b.rec.Multiplier, b.rec.Payout = StatusCashedOut, m, &payout
	t.board.cashed(b.item(core))
	b.round.autos++
	if b.elsewhere {
		return
	}
	rec := b.rec
	rec.SettledAt = toMillis(core.SettledAt)
	done := t.commit.Submit(context.Background(), job{epoch: unfenced, run: t.commitCashout(rec, core)})
	go func() {
		switch err := <-done; {
		case errors.Is(err, errBetMoved):
			t.logger.Info("an auto-cashout found its bet settled first, by a cashout committed elsewhere", "bet_id", rec.ID)
		case err != nil:
			t.logger.Error("auto-cashout commit failed; the round pays it after the crash", "bet_id", rec.ID, "err", err)
		default:
			t.autoCommitted(rec, payout)
		}
	}()
}

// autoCommitted tells what an auto-cashout of rec, paying payout, is once
// committed: the movement queue is woken, a demo balance credited, and the
// bet's event sent.
func (t *Table) autoCommitted(rec BetRecord, payout int64) {
	t.notifyQueue()
	if rec.Demo {
		t.cfg.Balances.Reported(rec.SessionHash, t.cfg.Demo.Credit(rec.SessionHash, payout))
	}
	v := viewOf(rec)
	t.events.Send(rec.SessionHash, &Event{Type: EventBet, Bet: &v})
}

// payAutosLeft pays, once the crash's losses are committed, the
// auto-cashouts r fired that no commit has paid: a bet whose replica had
// not committed its auto-cashout (PayDebitedAutos: the replica died, was paused,
// or its clock was not known to be in step), or whose commit here failed.
// The losses leave every bet whose target the round reached accepted
// (loseAccepted), so these are r's bets still accepted. Each is paid at its
// target, at the instant it was reached, in a transaction of its own,
// moved from accepted only: a replica that commits it at the same moment
// pays it once, and this never holds one bet's row while it waits for
// another's. Loop only.
func (t *Table) payAutosLeft(r *liveRound) {
	if r.autos == 0 {
		return
	}
	ctx := context.Background()
	left, err := t.store.Bets(ctx, BetFilter{GameID: t.game.ID, RoundIDs: []string{r.rec.ID}, Statuses: []string{StatusAccepted}})
	if err != nil {
		t.logger.Error("reading the auto-cashouts left after the crash failed; recovery at boot pays them", "round_id", r.rec.ID, "err", err)
		return
	}
	f := r.core.Flight()
	paid := 0
	for _, rec := range left {
		if !reached(rec, r.crash) {
			continue // the losses' commit failed: recovery settles it
		}
		var moved *SettledBet
		err := t.commit.Do(ctx, job{epoch: unfenced, run: func(ctx context.Context) error {
			var err error
			moved, err = t.payAuto(ctx, rec, f.AutoDue(rec.AutoCashout))
			return err
		}})
		switch {
		case err != nil:
			t.logger.Error("paying an auto-cashout after the crash failed; recovery at boot pays it", "bet_id", rec.ID, "err", err)
		case moved != nil:
			paid++
			if b := r.live[rec.ID]; b != nil {
				b.rec.Status = StatusCashedOut
			}
			payout := moved.Bet.Payout
			rec.Status, rec.Multiplier, rec.Payout, rec.SettledAt = StatusCashedOut, rec.AutoCashout, &payout, toMillis(f.AutoDue(rec.AutoCashout))
			t.autoCommitted(rec, payout)
		}
	}
	if paid > 0 {
		t.logger.Warn("auto-cashouts paid after the crash: no commit had paid them (the replica that debited them did not, or a commit failed)", "round_id", r.rec.ID, "bets", paid)
	}
}

// PayDebitedAutos commits, on a replica that does not lead the table, the
// auto-cashouts of the bets it debited in v, a round it has just seen take
// off: each at exactly its target, as the leader's round fires it
// (round.Flight.Auto), with its /win movement, moved from accepted only, as
// a cashout is. Each is committed once the multiplier has reached its
// target on this clock and CashoutGuard more, so that no commit, and no
// event, says the round reached a target before the leader's clock, which
// keeps the crash, could: the caller calls it only while this clock and the
// leader's are within PriceBound of the database's. The leader's round
// fires the same targets for its board and commits nothing for them; after
// the crash's losses it pays any this replica has not (payAutosLeft), such
// as a bet whose acceptance is not known here when its target is due. It
// returns when no target of v is left, or when ctx ends.
func (t *Table) PayDebitedAutos(ctx context.Context, v RoundView) {
	t.flight.mu.Lock()
	f, _, err := t.flightOf(ctx, v)
	t.flight.mu.Unlock()
	if err != nil {
		if !errors.Is(err, round.ErrRoundCrashed) {
			t.logger.Warn("working out the flight of a round failed; its leader pays the auto-cashouts debited here after the crash", "round_id", v.RoundID, "err", err)
		}
		return
	}
	// The bets debited here whose target the round reaches, in the order
	// their targets are due: sorted once, then taken in batches as the
	// clock reaches them.
	var autos []round.Bet
	recs := map[string]BetRecord{}
	for _, rec := range t.debited.withAutos(v.RoundID) {
		core, ok := f.Auto(round.Bet{State: round.Accepted, Intent: round.Intent{
			ID: rec.ID, Amount: rec.Amount, AutoCashout: rec.AutoCashout, MaxWin: t.maxWin(rec),
		}})
		if ok && !rec.Demo {
			autos, recs[rec.ID] = append(autos, core), rec
		}
	}
	slices.SortFunc(autos, func(a, b round.Bet) int { return a.SettledAt.Compare(b.SettledAt) })
	for len(autos) > 0 {
		now := t.clock.Now()
		n := 0
		for n < len(autos) && !now.Before(autos[n].SettledAt.Add(CashoutGuard)) {
			n++
		}
		if n == 0 {
			select {
			case <-ctx.Done():
				return
			case <-t.clock.After(autos[0].SettledAt.Add(CashoutGuard).Sub(now)):
			}
			continue
		}
		t.commitAutos(v.RoundID, recs, autos[:n])
		autos = autos[n:]
	}
}

// commitAutos commits the auto-cashouts due of round roundID (recs holds
// their bets' records) in this replica's committer, which batches them, and
// tells each bet's session of those it moved. A bet not known here as
// accepted (its acceptance still in flight, or cancelled) is left to the
// leader.
func (t *Table) commitAutos(roundID string, recs map[string]BetRecord, due []round.Bet) {
	type pending struct {
		rec  BetRecord
		core round.Bet
		done <-chan error
	}
	var sent []pending
	for _, core := range due {
		if t.debited.status(roundID, core.ID) != StatusAccepted {
			continue
		}
		rec := recs[core.ID]
		sent = append(sent, pending{rec, core, t.commit.Submit(context.Background(), job{epoch: unfenced, run: t.commitCashout(rec, core)})})
	}
	for _, p := range sent {
		err := <-p.done
		switch {
		case errors.Is(err, errBetMoved):
			t.logger.Debug("an auto-cashout found its bet settled first", "bet_id", p.rec.ID)
			continue
		case err != nil:
			t.logger.Warn("auto-cashout commit failed; the leader pays it after the crash", "bet_id", p.rec.ID, "err", err)
			continue
		}
		t.debited.decided(roundID, p.rec.ID, StatusCashedOut)
		rec, payout := p.rec, p.core.Payout
		rec.Status, rec.Multiplier, rec.Payout, rec.SettledAt = StatusCashedOut, p.core.Multiplier, &payout, toMillis(p.core.SettledAt)
		t.autoCommitted(rec, payout)
	}
}
