package leadership

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The settings of every test: a 2 s lease renewed every 500 ms, which its
// holder counts expired 1.75 s after the statement that took or renewed it,
// and whose term's deadline (the default hold) is 4 s after that statement.
const (
	ttl   = 2 * time.Second
	renew = 500 * time.Millisecond
	retry = 250 * time.Millisecond
	grace = ttl - ttl/8 // what the holder's count of the expiry leaves of the TTL
	hold  = 2 * ttl     // the term's deadline, from the same start
)

var t0 = time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)

// fakeClock moves only when the test says so.
type fakeClock struct {
	mu      sync.Mutex
	now     time.Time
	waiters []waiter
}

type waiter struct {
	at time.Time
	ch chan time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.until(c.now.Add(d))
}

// Until fires once the clock reaches at: the elector asks for a moment, so
// that a test moving the clock meanwhile does not shift it.
func (c *fakeClock) Until(at time.Time) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.until(at)
}

func (c *fakeClock) until(at time.Time) <-chan time.Time {
	ch := make(chan time.Time, 1)
	if !at.After(c.now) {
		ch <- c.now
		return ch
	}
	c.waiters = append(c.waiters, waiter{at: at, ch: ch})
	return ch
}

// waiting reports whether a timer is set for at: the elector waits on it.
func (c *fakeClock) waiting(at time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, w := range c.waiters {
		if w.at.Equal(at) {
			return true
		}
	}
	return false
}

// Set moves the clock to at, firing every timer due by then.
func (c *fakeClock) Set(at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = at
	keep := c.waiters[:0]
	for _, w := range c.waiters {
		if w.at.After(at) {
			keep = append(keep, w)
			continue
		}
		w.ch <- at
	}
	c.waiters = keep
}

// call is one statement of the elector, waiting for the test's answer.
type call struct {
	op    string // acquire, renew
	epoch int64  // renew's
	at    time.Time
	ctx   context.Context
	reply chan answer
}

type answer struct {
	epoch int64
	ok    bool
	err   error
}

// fakeStore hands each acquisition and renewal to the test (calls) and waits
// for its answer, or for the statement's context (a renewal's ends at its
// bound on the fake clock); releases are recorded.
type fakeStore struct {
	clock    *fakeClock
	calls    chan *call
	released chan int64
	closed   chan struct{}
}

func (s *fakeStore) ask(ctx context.Context, op string, epoch int64) answer {
	c := &call{op: op, epoch: epoch, at: s.clock.Now(), ctx: ctx, reply: make(chan answer, 1)}
	select {
	case s.calls <- c:
	case <-s.closed:
		return answer{err: errors.New("closed")}
	}
	select {
	case a := <-c.reply:
		return a
	case <-ctx.Done():
		return answer{err: ctx.Err()}
	case <-s.closed:
		return answer{err: errors.New("closed")}
	}
}

func (s *fakeStore) AcquireLease(ctx context.Context, name, holder string, ttl time.Duration) (int64, bool, error) {
	a := s.ask(ctx, "acquire", 0)
	return a.epoch, a.ok, a.err
}

func (s *fakeStore) RenewLease(ctx context.Context, name, holder string, epoch int64, ttl time.Duration) (bool, error) {
	a := s.ask(ctx, "renew", epoch)
	return a.ok, a.err
}

func (s *fakeStore) ReleaseLease(ctx context.Context, name, holder string, epoch int64) error {
	s.released <- epoch
	return nil
}

type harness struct {
	t      *testing.T
	clock  *fakeClock
	store  *fakeStore
	e      *Elector
	sub    *Subscription
	able   atomic.Bool
	cancel context.CancelFunc
	done   chan struct{}
}

// newHarness runs an elector on a fake clock and store, with a subscriber.
func newHarness(t *testing.T) *harness { return newHarnessWith(t, nil) }

// newHarnessWith is newHarness whose settings adjust changes last (nil: none).
func newHarnessWith(t *testing.T, adjust func(*Settings)) *harness {
	t.Helper()
	clock := &fakeClock{now: t0}
	h := &harness{t: t, clock: clock, done: make(chan struct{}),
		store: &fakeStore{clock: clock, calls: make(chan *call), released: make(chan int64, 16), closed: make(chan struct{})}}
	h.able.Store(true)
	set := Settings{Holder: "me", TTL: ttl, Renew: renew, Retry: retry, Clock: clock, Able: h.able.Load}
	if adjust != nil {
		adjust(&set)
	}
	h.e = New("game-1", h.store, set, slog.New(slog.NewTextHandler(io.Discard, nil)))
	h.sub = h.e.Subscribe()
	if n := h.notification(); n.Leading() {
		t.Fatalf("leading before running: epoch %d", n.Epoch())
	}
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	go func() { defer close(h.done); h.e.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		close(h.store.closed)
		<-h.done
	})
	return h
}

// wait is how long the test waits for the elector, in real time (a guard,
// not a speed check).
const wait = 5 * time.Second

// next is the elector's next statement.
func (h *harness) next(op string) *call {
	h.t.Helper()
	select {
	case c := <-h.store.calls:
		if c.op != op {
			h.t.Fatalf("the elector's next statement: %s at %s, want %s", c.op, c.at.Sub(t0), op)
		}
		return c
	case <-time.After(wait):
		h.t.Fatalf("no %s", op)
		return nil
	}
}

// quiet checks that the elector makes no statement for a while of real time.
func (h *harness) quiet(what string) {
	h.t.Helper()
	select {
	case c := <-h.store.calls:
		h.t.Fatalf("%s: the elector made a statement: %s at %s", what, c.op, c.at.Sub(t0))
	case <-time.After(30 * time.Millisecond):
	}
}

func (h *harness) notification() Notification {
	h.t.Helper()
	select {
	case n := <-h.sub.C():
		return n
	case <-time.After(wait):
		h.t.Fatal("no announcement")
		return Notification{}
	}
}

func (h *harness) released() int64 {
	h.t.Helper()
	select {
	case epoch := <-h.store.released:
		return epoch
	case <-time.After(wait):
		h.t.Fatal("no release")
		return 0
	}
}

// lead takes the lease at epoch at the current time and returns the term.
func (h *harness) lead(epoch int64) *Term {
	h.t.Helper()
	h.next("acquire").reply <- answer{epoch: epoch, ok: true}
	n := h.notification()
	if n.Epoch() != epoch || !h.e.Leading() || h.e.Epoch() != epoch {
		h.t.Fatalf("announced epoch %d, elector at %d (leading %t), want %d", n.Epoch(), h.e.Epoch(), h.e.Leading(), epoch)
	}
	return n.Term
}

// notLeading checks the announcement of the end of term.
func (h *harness) notLeading(term *Term) {
	h.t.Helper()
	if n := h.notification(); n.Leading() {
		h.t.Fatalf("announced epoch %d, want not leading", n.Epoch())
	}
	select {
	case <-term.Done():
	default:
		h.t.Fatal("the term's Done is open after its end")
	}
	if h.e.Leading() || term.Live() || term.Context().Err() == nil {
		h.t.Fatalf("after the term's end: elector leading %t, term live %t, context %v", h.e.Leading(), term.Live(), term.Context().Err())
	}
}

// eventually waits for cond in real time.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(wait); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("never: %s", what)
		}
	}
}

// A process takes the lease once it is free, trying every Retry; the term
// announced carries the epoch, and its deadline is the hold counted from
// just before the statement that took it.
func TestAcquire(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	first := h.next("acquire")
	if !first.at.Equal(t0) {
		t.Fatalf("first attempt at %s, want at once", first.at.Sub(t0))
	}
	first.reply <- answer{} // another holder's lease is live
	h.quiet("before Retry")
	h.clock.Set(t0.Add(retry - time.Nanosecond))
	h.quiet("before Retry")
	h.clock.Set(t0.Add(retry))
	term := h.lead(7)
	if want := t0.Add(retry + hold); !term.Deadline().Equal(want) || !term.Live() {
		t.Fatalf("deadline %s, live %t; want %s after t0", term.Deadline().Sub(t0), term.Live(), want.Sub(t0))
	}
	// A late subscriber is told the term at once.
	late := h.e.Subscribe()
	defer late.Stop()
	if n := <-late.C(); n.Epoch() != 7 {
		t.Fatalf("a late subscriber is told epoch %d", n.Epoch())
	}
}

// An acquisition that fails is tried again every Retry.
func TestAcquireFailsRetries(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.next("acquire").reply <- answer{err: errors.New("database away")}
	h.clock.Set(t0.Add(retry))
	h.lead(1)
}

// A renewal that lands moves the deadline to the hold counted from just
// before its statement, however long its answer took; a renewal that fails
// is tried again at the next tick while the lease is not counted expired.
func TestRenew(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		took time.Duration // how long the renewal's answer takes
		err  error         // its first attempt's error
	}{
		{name: "fast"},
		{name: "slow answer", took: 900 * time.Millisecond},
		{name: "failed, then renewed", err: errors.New("database away")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			term := h.lead(1)
			h.clock.Set(t0.Add(renew))
			c := h.next("renew")
			if c.epoch != 1 || !c.at.Equal(t0.Add(renew)) {
				t.Fatalf("renewal of epoch %d at %s, want epoch 1 at %s", c.epoch, c.at.Sub(t0), renew)
			}
			start := c.at
			if tt.err != nil {
				c.reply <- answer{err: tt.err}
				h.clock.Set(t0.Add(2 * renew))
				c = h.next("renew")
				start = c.at
			}
			h.clock.Set(start.Add(tt.took))
			c.reply <- answer{ok: true}
			want := start.Add(hold)
			eventually(t, "the deadline moves to "+want.Sub(t0).String(), func() bool { return term.Deadline().Equal(want) })
			if !term.Live() || !h.e.Leading() {
				t.Fatal("a renewed term is over")
			}
		})
	}
}

// A lease taken over (the renewal finds another holder or epoch) ends the
// term at once: Done closes, its context ends, and not leading is announced.
func TestLoseToAnotherHolder(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	term := h.lead(1)
	h.clock.Set(t0.Add(renew))
	h.next("renew").reply <- answer{ok: false}
	h.notLeading(term)
	// Others go first: the next attempt is a Retry later.
	h.quiet("after the loss")
	h.clock.Set(t0.Add(renew + retry))
	h.lead(3)
}

// A renewal that has not answered when the holder counts the lease expired
// holds the term (a starved process, a slow database: leadership does not
// flap, and no round is voided), and its answer decides: landed, the term
// goes on to the hold counted from the renewal's start; the lease taken
// over, the term ends at once. One that never answers ends the term at its
// deadline, the hold from the last statement that landed.
func TestSlowRenewHoldsTheTerm(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		answer *answer // nil: none, the renewal hangs
	}{
		{name: "lands late", answer: &answer{ok: true}},
		{name: "finds the lease taken over", answer: &answer{ok: false}},
		{name: "never answers"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			term := h.lead(1)
			h.clock.Set(t0.Add(renew))
			c := h.next("renew")
			h.clock.Set(t0.Add(grace)) // the lease counted expired
			h.clock.Set(t0.Add(ttl + ttl/2))
			if !term.Live() || !h.e.Leading() || c.ctx.Err() != nil {
				t.Fatalf("past the lease's expiry with its renewal unanswered: live %t, leading %t, renewal %v; want the term held", term.Live(), h.e.Leading(), c.ctx.Err())
			}
			switch {
			case tt.answer == nil:
				h.clock.Set(t0.Add(hold - time.Nanosecond))
				if !term.Live() || c.ctx.Err() != nil {
					t.Fatalf("before the deadline: live %t, renewal %v", term.Live(), c.ctx.Err())
				}
				h.clock.Set(t0.Add(hold))
				h.notLeading(term)
				eventually(t, "the renewal's context ends at the deadline", func() bool { return c.ctx.Err() != nil })
			case tt.answer.ok:
				c.reply <- *tt.answer
				want := t0.Add(renew + hold)
				eventually(t, "the deadline moves to "+want.Sub(t0).String(), func() bool { return term.Deadline().Equal(want) })
				if !term.Live() || !h.e.Leading() {
					t.Fatal("a term whose late renewal landed is over")
				}
				// The ticks missed meanwhile: one renewal at once.
				if next := h.next("renew"); !next.at.Equal(t0.Add(ttl + ttl/2)) {
					t.Fatalf("the next renewal at %s, want at once", next.at.Sub(t0))
				}
			default:
				c.reply <- *tt.answer
				h.notLeading(term)
			}
		})
	}
}

// A process that did not run until after the lease's counted expiry (its
// ticks came late: a starved process) renews at once, and the answer
// decides: landed, it leads on in the same term; taken over, it steps down.
func TestStarvedLeaderRenewsLate(t *testing.T) {
	t.Parallel()
	for _, ok := range []bool{true, false} {
		t.Run(fmt.Sprintf("lands %t", ok), func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			term := h.lead(1)
			late := t0.Add(ttl + ttl/2)
			h.clock.Set(late) // every tick and the expiry due at once
			c := h.next("renew")
			if !c.at.Equal(late) || !term.Live() {
				t.Fatalf("renewal at %s, term live %t; want a renewal at %s in a live term", c.at.Sub(t0), term.Live(), late.Sub(t0))
			}
			c.reply <- answer{ok: ok}
			if !ok {
				h.notLeading(term)
				return
			}
			want := late.Add(hold)
			eventually(t, "the deadline moves to "+want.Sub(t0).String(), func() bool { return term.Deadline().Equal(want) })
			if !h.e.Leading() || h.e.Epoch() != 1 {
				t.Fatalf("leading %t at epoch %d, want the same term", h.e.Leading(), h.e.Epoch())
			}
		})
	}
}

// Renewals the database answers with errors until the lease is counted
// expired end the term then: one more renewal is tried at the expiry, and
// its error ends the term.
func TestFailingRenewalsStepDownAtExpiry(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	term := h.lead(1)
	end := t0.Add(grace)
	for at := t0.Add(renew); at.Before(end); at = at.Add(renew) {
		h.clock.Set(at)
		h.next("renew").reply <- answer{err: errors.New("database away")}
	}
	// The last error is read before the clock moves on: the elector waits
	// for its next tick.
	eventually(t, "the elector waits for its next tick", func() bool { return h.clock.waiting(t0.Add(4 * renew)) })
	h.clock.Set(end.Add(-time.Nanosecond))
	if !term.Live() || !h.e.Leading() {
		t.Fatal("the term ended before the lease's expiry")
	}
	h.clock.Set(end)
	c := h.next("renew")
	if !c.at.Equal(end) {
		t.Fatalf("the renewal at the expiry at %s, want %s", c.at.Sub(t0), end.Sub(t0))
	}
	c.reply <- answer{err: errors.New("database away")}
	h.notLeading(term)
}

// A process that cannot lead (cut off from the cluster) takes no lease and
// renews none: its term ends at the lease's counted expiry, not at the
// hold.
func TestNotAble(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	term := h.lead(1)
	h.able.Store(false)
	for at := t0.Add(renew); at.Before(t0.Add(grace)); at = at.Add(renew) {
		h.clock.Set(at)
		h.quiet("renewing while not able")
	}
	h.clock.Set(t0.Add(grace))
	h.notLeading(term)
	h.clock.Set(t0.Add(grace + 4*retry))
	h.quiet("taking the lease while not able")
	h.able.Store(true)
	h.clock.Set(t0.Add(grace + 5*retry))
	h.lead(2)
}

// A lease whose taking answered after the term's deadline (a database stall)
// is released at once and never announced: no ended term is led. The next
// attempt, due a Retry after the slow one began, is made at once and leads.
func TestSlowAcquireLeadsNoEndedTerm(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c := h.next("acquire")
	h.clock.Set(t0.Add(grace))
	c.reply <- answer{epoch: 4, ok: true}
	if epoch := h.released(); epoch != 4 {
		t.Fatalf("released epoch %d, want 4", epoch)
	}
	select {
	case n := <-h.sub.C():
		t.Fatalf("announced %+v for a term over before it was taken", n)
	default:
	}
	if h.e.Leading() {
		t.Fatal("leading an ended term")
	}
	h.lead(5)
}

// Release (a hand-over at a round boundary) ends the term and gives the
// lease up at its epoch; End gives it up to its expiry. Either way the
// elector lets the others try first: its next attempt is a Retry later.
func TestReleaseAndEnd(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		end     func(*Term)
		release bool
	}{
		{name: "release", end: func(t *Term) { _ = t.Release(context.Background()) }, release: true},
		{name: "end", end: (*Term).End},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			term := h.lead(1)
			h.clock.Set(t0.Add(100 * time.Millisecond))
			tt.end(term)
			h.notLeading(term)
			if tt.release {
				if epoch := h.released(); epoch != 1 {
					t.Fatalf("released epoch %d, want 1", epoch)
				}
			}
			h.clock.Set(t0.Add(100*time.Millisecond + retry - time.Nanosecond))
			h.quiet("before Retry after the term's end")
			select {
			case epoch := <-h.store.released:
				t.Fatalf("released epoch %d more", epoch)
			default:
			}
			h.clock.Set(t0.Add(100*time.Millisecond + retry))
			h.lead(2)
			tt.end(term) // ending an ended term again changes nothing
			if h.e.Epoch() != 2 {
				t.Fatalf("epoch %d after ending the old term again, want 2", h.e.Epoch())
			}
		})
	}
}

// When Run's context ends, a term still held ends and its lease is released.
func TestRunEndReleases(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	term := h.lead(9)
	h.cancel()
	h.notLeading(term)
	if epoch := h.released(); epoch != 9 {
		t.Fatalf("released epoch %d, want 9", epoch)
	}
	select {
	case <-h.done:
	case <-time.After(wait):
		t.Fatal("Run did not return")
	}
}

// Bound ends a write's context at the term's deadline (the hold), on the
// elector's clock.
func TestBound(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	term := h.lead(1)
	ctx, cancel := term.Bound(context.Background())
	defer cancel()
	h.clock.Set(t0.Add(hold - time.Nanosecond))
	if ctx.Err() != nil {
		t.Fatal("ended before the deadline")
	}
	h.clock.Set(t0.Add(hold))
	eventually(t, "the bound context ends at the deadline", func() bool { return ctx.Err() != nil })
	if !errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
		t.Fatalf("cause %v", context.Cause(ctx))
	}
}

// Bound follows the term's deadline as renewals move it: a write that
// outlasts the deadline it began under goes on when a renewal landed
// meanwhile, and ends at the first deadline that passes unrenewed.
func TestBoundFollowsRenewals(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	term := h.lead(1)
	ctx, cancel := term.Bound(context.Background())
	defer cancel()
	h.clock.Set(t0.Add(renew))
	h.next("renew").reply <- answer{ok: true}
	renewed := t0.Add(renew + hold)
	eventually(t, "the renewal moves the deadline", func() bool { return term.Deadline().Equal(renewed) })
	h.clock.Set(t0.Add(hold)) // the deadline the write began under
	time.Sleep(50 * time.Millisecond)
	if ctx.Err() != nil {
		t.Fatalf("ended at the deadline it began under, renewed since to %s: %v", renewed.Sub(t0), context.Cause(ctx))
	}
	h.clock.Set(renewed)
	eventually(t, "the bound context ends at the renewed deadline", func() bool { return ctx.Err() != nil })
	if !errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
		t.Fatalf("cause %v", context.Cause(ctx))
	}
}

// A subscriber that does not read never holds the elector up, and finds the
// latest state when it reads.
func TestSubscriberLagging(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	lagging := h.e.Subscribe()
	defer lagging.Stop()
	term := h.lead(1)
	term.End()
	h.notLeading(term)
	h.clock.Set(t0.Add(retry))
	second := h.lead(2)
	n := <-lagging.C()
	if n.Epoch() == 0 {
		// Read while the elector was still announcing epoch 2 (to h.sub
		// first): the latest announcement follows.
		n = <-lagging.C()
	}
	if n.Epoch() != 2 {
		t.Fatalf("a lagging subscriber reads epoch %d, want the latest, 2", n.Epoch())
	}
	select {
	case n := <-lagging.C():
		t.Fatalf("a lagging subscriber reads %+v after the latest", n)
	default:
	}
	lagging.Stop()
	second.End() // announced to the others only
	if n := h.notification(); n.Leading() {
		t.Fatal("still leading")
	}
	select {
	case n := <-lagging.C():
		t.Fatalf("a stopped subscription received %+v", n)
	default:
	}
}

// A sole process (one on a SQLite file it owns) takes the lease and never
// renews it: its term has no deadline, stays live however far its clock
// moves (a starved process, a database that does not answer), bounds no
// write by a deadline, and ends only when Run's context ends, releasing the
// lease.
func TestSoleTermNeverExpires(t *testing.T) {
	t.Parallel()
	h := newHarnessWith(t, func(s *Settings) { s.Sole = true })
	term := h.lead(3)
	bound, cancel := term.Bound(context.Background())
	defer cancel()
	h.able.Store(false) // not consulted while a sole term lasts
	for _, after := range []time.Duration{renew, ttl, 10 * ttl, time.Hour} {
		h.clock.Set(t0.Add(after))
		h.quiet("a sole term, " + after.String() + " on")
		if !term.Live() || !h.e.Leading() || bound.Err() != nil {
			t.Fatalf("%s on: live %t, leading %t, bounded write %v; want the term live and the write going on", after, term.Live(), h.e.Leading(), bound.Err())
		}
	}
	h.cancel()
	if epoch := h.released(); epoch != 3 {
		t.Fatalf("released epoch %d, want 3", epoch)
	}
	h.notLeading(term)
}
