// Package groupcommit commits work that many goroutines submit in batches: a
// durable commit costs about the same for one row as for a hundred, so under
// load one commit serves many callers, and each caller is answered once the
// batch that holds its item committed.
//
// What it owns:
//   - the queue of submitted items and the one goroutine that drains it;
//   - how items are gathered: the first queued item, then, once the
//     goroutines already runnable have run (a yield, so that submitters on
//     the same core queue theirs), whatever else is queued, up to a maximum
//     batch size. It never waits to fill a batch, so an idle system commits
//     each item at once;
//   - the order: items commit, and callers are answered, in the order they
//     were submitted (a batch commits before the next one starts);
//   - what a failed batch means for its callers (OnFailure);
//   - shutdown: after Close nothing is accepted, and everything accepted
//     before it is committed and answered.
//
// What it must never do: know what it commits (the caller's commit function
// holds every statement; this package imports no database package), reorder
// items, sleep to fill a batch, drop an accepted item, or leave a submitter
// waiting after Close. It logs only that a batch failed or panicked, never an
// item.
package groupcommit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"runtime/debug"
	"sync"
	"time"
)

// DefaultMaxBatch is the maximum batch size when Options.MaxBatch is zero.
const DefaultMaxBatch = 256

// ErrClosed is the answer to an item submitted after Close.
var ErrClosed = errors.New("groupcommit: closed")

// OnFailure says what a failed batch of more than one item means for its items.
// A batch of one item is never retried: its error is its caller's answer.
type OnFailure int

const (
	// FailBatch answers every item of a failed batch with the batch's error.
	FailBatch OnFailure = iota
	// RetryEach commits each item of a failed batch again, alone and in
	// order, so that one bad item fails only its own caller.
	RetryEach
)

// Options configures a Committer. The zero value is usable.
type Options struct {
	// MaxBatch bounds the items of one commit (DefaultMaxBatch when zero).
	MaxBatch int
	// QueueLen is how many items may wait for the committer before Submit
	// blocks (MaxBatch when zero).
	QueueLen int
	// OnFailure is the rule for a failed batch (FailBatch when zero).
	OnFailure OnFailure
	// Logger receives a warning when a batch fails and is retried item by
	// item, and an error when a commit panics (slog.Default() when nil).
	Logger *slog.Logger
	// Observe, when set, is told of every batch on the committer's
	// goroutine, after its commit and before its callers are answered: it
	// must return quickly (a histogram's observation) and must not submit
	// to the committer.
	Observe func(Batch)
}

// Batch is what one commit was, as Options.Observe is told: how many items
// it held, how long its first item waited in the queue before the commit
// began (the time an item spends behind the batches before its own), and
// how long the commit took, a failed batch's retries one by one included.
type Batch struct {
	Items  int
	Waited time.Duration
	Took   time.Duration
	Failed bool // at least one item was answered with an error
}

// PanicError is the answer to the items of a commit that panicked. The
// committer recovers the panic so that its goroutine lives on and every other
// caller is still answered; the commit function must therefore leave nothing
// open when it panics (bun's RunInTx, for one, rolls back).
type PanicError struct {
	Value any    // what the commit function panicked with
	Stack []byte // the goroutine's stack at the panic
}

func (e *PanicError) Error() string { return fmt.Sprintf("groupcommit: commit panicked: %v", e.Value) }

// request is one submitted item and where its answer goes.
type request[T any] struct {
	item T
	done chan error // buffered for one value
	at   time.Time  // when it was queued (only with Options.Observe)
}

// Committer gathers items into batches and commits each batch with the
// function given to New. It is safe for concurrent use. Its goroutine starts
// with the first Submit; Close stops it.
type Committer[T any] struct {
	ctx     context.Context
	commit  func(ctx context.Context, batch []T) error
	max     int
	onFail  OnFailure
	logger  *slog.Logger
	observe func(Batch)
	start   sync.Once
	stopped chan struct{} // closed once the goroutine returned (or never started and Close ran)

	// Submitters hold mu for reading while they queue; Close takes it for
	// writing, so once closed is set no submitter is still queueing and
	// closing q is safe.
	mu     sync.RWMutex
	closed bool
	q      chan request[T]
}

// New returns a Committer that commits batches with commit. commit runs on the
// committer's goroutine, one batch at a time, with context.WithoutCancel(ctx):
// it keeps ctx's values, and ctx's end stops nothing (Close does). commit must
// not keep batch after it returns, must not submit to its own Committer, and
// must not call its Close.
func New[T any](ctx context.Context, commit func(ctx context.Context, batch []T) error, opts Options) *Committer[T] {
	if opts.MaxBatch <= 0 {
		opts.MaxBatch = DefaultMaxBatch
	}
	if opts.QueueLen <= 0 {
		opts.QueueLen = opts.MaxBatch
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Committer[T]{
		ctx:     context.WithoutCancel(ctx),
		commit:  commit,
		max:     opts.MaxBatch,
		onFail:  opts.OnFailure,
		logger:  opts.Logger,
		observe: opts.Observe,
		stopped: make(chan struct{}),
		q:       make(chan request[T], opts.QueueLen),
	}
}

// Submit queues item and returns the channel that receives its answer, exactly
// one value: nil once the batch holding item committed, else why it did not
// (the commit's error under the OnFailure rule, a *PanicError, ErrClosed after
// Close, or ctx's error). Items commit, and are answered, in the order of
// their Submit calls.
//
// ctx bounds only the wait for room in the queue. An item once queued is
// committed and answered whatever becomes of ctx: a caller that stops waiting
// for its answer cannot tell whether it was stored. The channel is buffered, so
// a caller that does not need the answer may drop it.
func (c *Committer[T]) Submit(ctx context.Context, item T) <-chan error {
	done := make(chan error, 1)
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.closed {
		done <- ErrClosed
		return done
	}
	c.start.Do(func() { go c.run() })
	r := request[T]{item: item, done: done}
	if c.observe != nil {
		r.at = time.Now()
	}
	select {
	case c.q <- r:
	default:
		// Full: wait for room or for ctx. Close waits for us meanwhile,
		// and the goroutine keeps draining, so this ends.
		select {
		case c.q <- r:
		case <-ctx.Done():
			done <- fmt.Errorf("groupcommit: submit: %w", ctx.Err())
		}
	}
	return done
}

// Do submits item and waits for its answer (see Submit).
func (c *Committer[T]) Do(ctx context.Context, item T) error {
	return <-c.Submit(ctx, item)
}

// Close refuses new items, waits until every item queued before it has been
// committed and answered, and returns. It is safe to call more than once and
// concurrently with Submit.
func (c *Committer[T]) Close() {
	c.mu.Lock()
	if !c.closed {
		c.closed = true
		close(c.q)
	}
	c.mu.Unlock()
	c.start.Do(func() { close(c.stopped) }) // never started: nothing to wait for
	<-c.stopped
}

// run commits batches until q is closed and drained.
func (c *Committer[T]) run() {
	defer close(c.stopped)
	reqs := make([]request[T], 0, c.max)
	items := make([]T, 0, c.max)
	for first := range c.q {
		// The goroutines already runnable go first, once: on one core
		// (GOMAXPROCS=1, the game pinned) a submitter that parks on its
		// answer hands the core straight to this goroutine, woken by its
		// item, and every item committed alone (a stampede of 10,000
		// cashouts took 10,000 commits, one fsync each). Yielding lets the
		// other submitters queue theirs first. It never sleeps: with
		// nothing else runnable it returns at once.
		runtime.Gosched()
		reqs = append(reqs[:0], first)
	gather:
		for len(reqs) < c.max {
			select {
			case r, ok := <-c.q:
				if !ok {
					break gather
				}
				reqs = append(reqs, r)
			default:
				break gather
			}
		}
		items = items[:0]
		for _, r := range reqs {
			items = append(items, r.item)
		}
		c.commitBatch(reqs, items)
		clear(reqs) // keep no item alive until the next batch overwrites it
		clear(items)
	}
}

// commitBatch commits items (the items of reqs, in order), tells
// Options.Observe, and then answers each request: a caller answered knows
// its batch was observed.
func (c *Committer[T]) commitBatch(reqs []request[T], items []T) {
	var began time.Time
	if c.observe != nil {
		began = time.Now()
	}
	errs := c.commitEach(items)
	if c.observe != nil {
		b := Batch{Items: len(items), Waited: began.Sub(reqs[0].at), Took: time.Since(began)}
		for _, err := range errs {
			b.Failed = b.Failed || err != nil
		}
		c.observe(b)
	}
	for i, r := range reqs {
		if len(errs) == 1 {
			r.done <- errs[0]
		} else {
			r.done <- errs[i]
		}
	}
}

// commitEach commits items under the OnFailure rule: one error for them all
// (nil when the batch committed), or one an item when the batch failed and
// was committed again item by item.
func (c *Committer[T]) commitEach(items []T) []error {
	err := c.safeCommit(items)
	if err == nil || len(items) == 1 || c.onFail == FailBatch {
		return []error{err}
	}
	c.logger.Warn("group commit failed; committing one by one", slog.Int("items", len(items)), slog.String("error", err.Error()))
	errs := make([]error, len(items))
	for i := range items {
		errs[i] = c.safeCommit(items[i : i+1])
	}
	return errs
}

// safeCommit calls commit and turns a panic into a *PanicError.
func (c *Committer[T]) safeCommit(batch []T) (err error) {
	defer func() {
		if v := recover(); v != nil {
			pe := &PanicError{Value: v, Stack: debug.Stack()}
			c.logger.Error("group commit panicked", slog.Int("items", len(batch)), slog.String("stack", string(pe.Stack)))
			err = pe
		}
	}()
	return c.commit(c.ctx, batch)
}
