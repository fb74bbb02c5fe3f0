package leadership

import (
	"context"
	"math"
	"sync/atomic"
	"time"
)

// Term is one term of leadership: the lease held at one fencing epoch, from
// its taking until it is lost or its owner ends it.
type Term struct {
	e      *Elector
	epoch  int64
	since  time.Time // the start of the statement that took the lease
	ended  time.Time // when it ended (Elector.end): written once, before cancel
	ctx    context.Context
	cancel context.CancelFunc
	// until is the term's deadline, in Unix nanoseconds of the elector's
	// clock: Hold from the start of the statement that took or last renewed
	// the lease; each renewal that lands moves it; nothing of the term may
	// begin at or after it (Live).
	until atomic.Int64
}

func newTerm(ctx context.Context, e *Elector, epoch int64, since time.Time) *Term {
	t := &Term{e: e, epoch: epoch, since: since}
	t.ctx, t.cancel = context.WithCancel(ctx)
	if e.set.Sole {
		t.until.Store(math.MaxInt64) // no deadline: nobody else can take the lease
	} else {
		t.until.Store(since.Add(e.set.Hold).UnixNano())
	}
	return t
}

// Epoch is the term's fencing epoch: every transaction of the term checks
// that the lease still has it.
func (t *Term) Epoch() int64 { return t.epoch }

// Done is closed once the term is over: its lease was lost or may be (no
// renewal answered by the deadline, the database answered that it could not
// renew it, or this process could not lead), or its owner ended it.
func (t *Term) Done() <-chan struct{} { return t.ctx.Done() }

// Context ends with the term: what the term started that must stop once
// another process may lead (a /bet still being attempted) runs in it.
func (t *Term) Context() context.Context { return t.ctx }

// Deadline is the term's own deadline as last renewed: Settings.Hold counted
// from just before the statement that took or renewed the lease. It is past
// the lease's expiry in the database: a term may outlast its lease while a
// renewal is slow to answer, and every write of it is fenced by its epoch.
// A sole term's (Settings.Sole) is the largest time there is: it has none.
func (t *Term) Deadline() time.Time { return time.Unix(0, t.until.Load()) }

// Live reports whether the term may still begin a write: it is not over and
// its deadline has not passed. The deadline is read here rather than left to
// Done: the elector's expiry may fire after a write began.
func (t *Term) Live() bool {
	select {
	case <-t.ctx.Done():
		return false
	default:
	}
	return t.e.clock.Now().Before(t.Deadline())
}

// Bound is ctx ending at the term's deadline, for a write that must not
// outlast the term (it commits only under the fence, while the lease has
// the term's epoch). The deadline is followed as renewals move it: a write
// that outlasts the deadline it began under goes on while a renewal has
// landed meanwhile, and ends at the first deadline that passes unrenewed,
// so a slow statement on a loaded database does not end a term that its
// renewals keep alive.
func (t *Term) Bound(ctx context.Context) (context.Context, context.CancelFunc) {
	if t.e.set.Sole {
		return context.WithCancel(ctx) // no deadline to bound it by
	}
	ctx, cancel := context.WithCancelCause(ctx)
	deadline := t.Deadline()
	fire := at(t.e.clock, deadline)
	go func() {
		for {
			select {
			case <-fire:
			case <-ctx.Done():
				return
			}
			renewed := t.Deadline()
			if !renewed.After(deadline) {
				cancel(context.DeadlineExceeded)
				return
			}
			deadline, fire = renewed, at(t.e.clock, renewed)
		}
	}()
	return ctx, func() { cancel(context.Canceled) }
}

// End ends the term without giving the lease up (it was lost, or the
// owner's writes were fenced): this process stops saying it leads and
// renews it no more. Idempotent.
func (t *Term) End() { t.e.end(t) }

// Release ends the term and releases its lease at its epoch, so that the
// next taking, this process's or another's, need not wait for the database
// to expire it: a hand-over at a round boundary, or a term found over before
// its owner used it to the end. Commit what the term queued first. The
// release is bounded by a TTL; one that fails (the database is away) leaves
// the lease to its own expiry.
func (t *Term) Release(ctx context.Context) error {
	t.End()
	return t.e.release(ctx, t.epoch)
}
