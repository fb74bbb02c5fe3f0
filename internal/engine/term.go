package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/crashstudio/crashgame/internal/leadership"
)

// errTermOver: the current term's deadline passed before a write of it
// began; nothing of it was written.
var errTermOver = errors.New("engine: the table's term of leadership is over")

// step is what a term does after a round, or after an attempt to open one.
type step int

const (
	stepPlay     step = iota // the round is open: play it
	stepNext                 // on to the next round
	stepHandOver             // stop at this round boundary: hand the lease over
	stepEnd                  // the term is over (lost, fenced, resigned, interrupted): nothing more of it
)

// lead is one term of leadership, whose lease the elector announced: its
// set-up (a term already over leads nothing; Recover settles what the
// previous leader left; the last round is read), then rounds (playRound)
// until Stop, a hand-over or the end of the term. It returns an error only
// for what no retry can fix.
func (t *Table) lead(ctx context.Context, lease *leadership.Term) error {
	t.lease, t.epoch, t.term = lease, lease.Epoch(), lease.Context()
	defer func() {
		lease.End()
		t.lease, t.epoch, t.term, t.cur = nil, 0, nil, nil
	}()
	// A lease whose deadline passed before the loop took it up (a stall)
	// ended before the term began: it writes nothing, not even the
	// recovery, and leaves the table to the next acquisition at once.
	if !lease.Live() {
		t.resign(ctx, "the lease ran out while it was being taken", false)
		return nil
	}
	if !t.recover(ctx) {
		if !t.isStopping() {
			t.resign(ctx, "the lease ran out during the recovery", false)
		}
		return nil
	}
	seq, err := t.lastSeq(ctx)
	for err != nil {
		t.logger.Error("reading the last round failed; retrying", "err", err)
		if !t.wait(t.clock.Now().Add(roundRetry), false) || t.isStopping() {
			t.handOver(ctx)
			return nil
		}
		seq, err = t.lastSeq(ctx)
	}
	for !t.isStopping() {
		var next step
		seq, next = t.playRound(ctx, seq+1)
		switch next {
		case stepEnd:
			return nil
		case stepHandOver:
			t.handOver(ctx)
			return nil
		}
	}
	t.handOver(ctx)
	return nil
}

// recover settles, under the lease, what an earlier leader left unfinished
// (Recover), trying again while the database is away. A round left in its
// betting phase is settled only once its debits' deadline has passed
// (debitsEnd): a replica that received one of its bets may still be
// sending that bet's /bet until then, and a rollback must not come before
// the debit it undoes. false when the lease
// is lost meanwhile or the term's deadline passes first: each attempt starts
// only while the term is live and is cancelled at its deadline, so that a
// recovery never commits in a term the table already counts as over.
func (t *Table) recover(ctx context.Context) bool {
	for {
		if !t.lease.Live() {
			return false
		}
		tctx, cancel := t.lease.Bound(ctx)
		until, err := t.debitsEnd(tctx)
		if err == nil && t.clock.Now().Before(until) {
			cancel()
			t.logger.Info("waiting for the debits of the interrupted round's window to end before settling it", "until", until)
			if !t.wait(until, true) {
				return false
			}
			if t.isStopping() {
				t.handOver(ctx)
				return false
			}
			continue
		}
		var rec Recovery
		if err == nil {
			err = t.fenced(tctx, t.epoch, func(ctx context.Context) error {
				var err error
				rec, err = t.Recover(ctx)
				return err
			})
		}
		cancel()
		switch {
		case err == nil:
			t.announce(rec)
			return true
		case errors.Is(err, leadership.ErrFenced):
			return false
		}
		t.logger.Error("recovery failed; retrying", "err", err)
		if !t.wait(t.clock.Now().Add(roundRetry), false) {
			return false
		}
		if t.isStopping() {
			t.handOver(ctx)
			return false
		}
	}
}

// DebitClockMargin is added to a round's debit deadline before a new leader
// settles the round: a /bet attempt's answer is read just after its deadline
// on the clock of the replica that sent it, and the replicas' clocks differ
// (by a few milliseconds with NTP, docs/deploy.md). In a cluster each
// replica measures its clock against the database's and is cut off while it
// is more than half this margin away (replica.SkewBound), so that any two
// replicas that take part are within it.
const DebitClockMargin = time.Second

// debitsEnd returns the instant, on the table's clock, after which no
// replica sends a /bet for a round the database holds unfinished in its
// betting phase: the latest window end plus DebitGrace plus
// DebitClockMargin. The zero time when no such round is left.
func (t *Table) debitsEnd(ctx context.Context) (time.Time, error) {
	ids, err := t.store.UnfinishedRounds(ctx, t.game.ID)
	if err != nil {
		return time.Time{}, fmt.Errorf("engine: unfinished rounds of %s: %w", t.game.ID, err)
	}
	var until time.Time
	for _, id := range ids {
		r, err := t.store.Round(ctx, t.game.ID, id)
		if err != nil {
			return time.Time{}, fmt.Errorf("engine: round %s: %w", id, err)
		}
		if r.Status != RoundBetting {
			continue
		}
		if end := r.BettingEndsAt.Add(t.cfg.DebitGrace + DebitClockMargin); end.After(until) {
			until = end
		}
	}
	return until, nil
}

// abandon leaves the current round as it is in the database, for the leader
// that holds the lease now to settle by Recover's rule: this table may commit
// nothing more of it.
func (t *Table) abandon(why string) step {
	if t.cur != nil {
		t.logger.Warn("round left to the next leader", "round_id", t.cur.rec.ID, "why", why, "epoch", t.epoch)
	}
	return stepEnd
}

// interrupt settles the current round by Recover's rule while the table still
// leads (a stop in flight: its shutdown grace ran out, or the round held no
// bet in play), then hands the lease over.
func (t *Table) interrupt(ctx context.Context, why string) step {
	r := t.cur
	t.logger.Warn("settling the flying round as interrupted", "round_id", r.rec.ID, "why", why)
	// Every write of the round queued so far commits first (jobs commit in
	// order), so Recover reads the round as the loop left it.
	_ = t.commit.Do(context.Background(), job{epoch: t.epoch, run: func(context.Context) error { return nil }})
	var rec Recovery
	err := t.fenced(context.WithoutCancel(ctx), t.epoch, func(ctx context.Context) error {
		var err error
		rec, err = t.settleUnfinished(ctx, r.rec.ID)
		return err
	})
	if err != nil {
		t.logger.Error("settling the interrupted round failed; the next leader settles it", "round_id", r.rec.ID, "err", err)
	} else {
		t.announce(rec)
	}
	t.viewMu.Lock()
	t.view.Phase = PhaseCrashed
	t.viewMu.Unlock()
	t.notifyQueue()
	t.handOver(ctx)
	return stepEnd
}

// handOver releases the lease at a round boundary, so that another replica
// leads at once rather than after the lease's TTL.
func (t *Table) handOver(ctx context.Context) {
	// What the term queued commits first, under the lease.
	_ = t.commit.Do(context.Background(), job{epoch: t.epoch, run: func(context.Context) error { return nil }})
	if err := t.lease.Release(ctx); err != nil {
		t.logger.Warn("releasing the table's lease failed; it expires by itself", "err", err)
		return
	}
	t.logger.Info("table handed over", "epoch", t.epoch)
}

// resign ends a term that is over before the table used it to the end (its
// deadline passed): the table stops saying it leads, what the term queued
// commits first (under the fence) when queued may hold anything (a round
// was played), and the lease is released at its epoch, so the next
// acquisition, this table's or another replica's, need not wait for the
// database to expire it. A release that fails (the database is away) is
// left to the lease's own expiry. Loop only.
func (t *Table) resign(ctx context.Context, why string, queued bool) {
	t.lease.End()
	t.logger.Warn("the table's term ended before its next write; stepping down", "why", why, "epoch", t.epoch)
	if queued {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), t.cfg.Lease.TTL)
		_ = t.commit.Do(rctx, job{epoch: t.epoch, run: func(context.Context) error { return nil }})
		cancel()
	}
	if err := t.lease.Release(ctx); err != nil {
		t.logger.Warn("releasing the table's lease failed; it expires by itself", "epoch", t.epoch, "err", err)
	}
}

// wait processes messages until deadline. It returns false as soon as the
// current term is over; with wakeOnStop it returns true as soon as the table
// is asked to stop.
func (t *Table) wait(deadline time.Time, wakeOnStop bool) bool {
	return t.waitUntil(deadline, wakeOnStop, nil)
}

// waitUntil is wait that also returns, true, as soon as done (nil: never)
// holds, checked before each wait and after each message of the inbox.
func (t *Table) waitUntil(deadline time.Time, wakeOnStop bool, done func() bool) bool {
	var over <-chan struct{} // nil while not leading: never ready
	if t.lease != nil {
		over = t.lease.Done()
	}
	for {
		if done != nil && done() {
			return true
		}
		d := deadline.Sub(t.clock.Now())
		if d <= 0 {
			return true
		}
		timer := t.clock.After(d)
		stop := t.stopped
		if !wakeOnStop {
			stop = nil
		}
		select {
		case f := <-t.inbox:
			f()
		case <-t.flush:
			t.flushPublic()
			t.flush = t.clock.After(publicFlush)
		case <-timer:
		case <-stop:
			return true
		case <-over:
			return false
		}
	}
}

func (t *Table) lastSeq(ctx context.Context) (int64, error) {
	seq, err := t.store.LastRoundSeq(ctx, t.game.ID)
	if err != nil {
		return 0, fmt.Errorf("engine: %w", err)
	}
	return seq, nil
}
