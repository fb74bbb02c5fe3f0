package groupcommit_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/crashstudio/crashgame/internal/groupcommit"
)

var errBad = errors.New("bad item")

// ledger is a commit function that records what it committed. A batch that
// holds a bad item fails as a whole (nothing of it is recorded), as a
// transaction would; an item equal to panicOn makes it panic. While gate is
// not nil, every commit first waits for a value on it.
type ledger struct {
	mu        sync.Mutex
	committed []int   // items, in commit order
	batches   [][]int // every call, failed ones included
	bad       map[int]bool
	panicOn   int
	gate      chan struct{}
}

func newLedger() *ledger { return &ledger{bad: map[int]bool{}, panicOn: -1} }

func (l *ledger) commit(_ context.Context, batch []int) error {
	if l.gate != nil {
		<-l.gate
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.batches = append(l.batches, slices.Clone(batch))
	for _, it := range batch {
		if it == l.panicOn {
			panic(fmt.Sprintf("item %d", it))
		}
		if l.bad[it] {
			return fmt.Errorf("commit item %d: %w", it, errBad)
		}
	}
	l.committed = append(l.committed, batch...)
	return nil
}

func (l *ledger) snapshot() (committed []int, batches [][]int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.committed), slices.Clone(l.batches)
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func seq(from, to int) []int {
	var s []int
	for i := from; i < to; i++ {
		s = append(s, i)
	}
	return s
}

// An idle committer commits the first item alone at once; items queued while a
// commit runs are gathered into the next batches, up to MaxBatch each, and
// commit in submission order.
func TestBatching(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		l := newLedger()
		c := groupcommit.New(t.Context(), l.commit, groupcommit.Options{MaxBatch: 4, QueueLen: 16, Logger: quiet()})
		defer c.Close()

		first := c.Submit(t.Context(), 0)
		synctest.Wait() // no sleep to fill a batch: it committed alone
		if err := <-first; err != nil {
			t.Fatalf("item 0: %v", err)
		}
		if _, batches := l.snapshot(); !slices.EqualFunc(batches, [][]int{{0}}, slices.Equal) {
			t.Fatalf("batches = %v, want [[0]]", batches)
		}

		l.gate = make(chan struct{})
		var answers []<-chan error
		answers = append(answers, c.Submit(t.Context(), 1))
		synctest.Wait() // the committer holds item 1 and waits at the gate
		for i := 2; i < 12; i++ {
			answers = append(answers, c.Submit(t.Context(), i))
		}
		for range 4 {
			l.gate <- struct{}{}
		}
		for i, a := range answers {
			if err := <-a; err != nil {
				t.Fatalf("item %d: %v", i+1, err)
			}
		}
		committed, batches := l.snapshot()
		want := [][]int{{0}, {1}, {2, 3, 4, 5}, {6, 7, 8, 9}, {10, 11}}
		if !slices.EqualFunc(batches, want, slices.Equal) {
			t.Fatalf("batches = %v, want %v", batches, want)
		}
		if !slices.Equal(committed, seq(0, 12)) {
			t.Fatalf("committed = %v, want 0..11 in order", committed)
		}
	})
}

// Many goroutines submitting at once: every item commits exactly once, no
// batch is larger than MaxBatch, and each goroutine's items commit in the
// order it submitted them.
func TestConcurrentSubmitters(t *testing.T) {
	t.Parallel()
	const senders, each, maxBatch = 16, 200, 8
	l := newLedger()
	c := groupcommit.New(t.Context(), l.commit, groupcommit.Options{MaxBatch: maxBatch, QueueLen: 4, Logger: quiet()})
	var wg sync.WaitGroup
	for s := range senders {
		wg.Go(func() {
			// Half wait for each answer, half queue everything first.
			var pending []<-chan error
			for i := range each {
				a := c.Submit(t.Context(), s*each+i)
				if s%2 == 0 {
					if err := <-a; err != nil {
						t.Errorf("item %d: %v", s*each+i, err)
					}
					continue
				}
				pending = append(pending, a)
			}
			for i, a := range pending {
				if err := <-a; err != nil {
					t.Errorf("item %d: %v", s*each+i, err)
				}
			}
		})
	}
	wg.Wait()
	c.Close()

	committed, batches := l.snapshot()
	if len(committed) != senders*each {
		t.Fatalf("%d items committed, want %d", len(committed), senders*each)
	}
	last := make([]int, senders)
	for s := range last {
		last[s] = -1
	}
	seen := make(map[int]bool)
	for _, it := range committed {
		if seen[it] {
			t.Fatalf("item %d committed twice", it)
		}
		seen[it] = true
		s, i := it/each, it%each
		if i <= last[s] {
			t.Fatalf("sender %d: item %d committed after item %d", s, i, last[s])
		}
		last[s] = i
	}
	for _, b := range batches {
		if len(b) == 0 || len(b) > maxBatch {
			t.Fatalf("batch of %d items, want 1..%d", len(b), maxBatch)
		}
	}
}

// What a failed batch means for its items, by rule.
func TestFailedBatch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		rule        groupcommit.OnFailure
		bad         []int
		panicOn     int
		wantErr     map[int]error // item -> error it is answered with (errors.Is); others nil
		wantPanic   []int         // items answered with a *PanicError
		wantCommit  []int
		wantBatches [][]int
	}{
		{
			name: "retry each: only the bad item fails", rule: groupcommit.RetryEach, bad: []int{2}, panicOn: -1,
			wantErr:     map[int]error{2: errBad},
			wantCommit:  []int{0, 1, 3},
			wantBatches: [][]int{{0, 1, 2, 3}, {0}, {1}, {2}, {3}},
		},
		{
			name: "retry each: two bad items", rule: groupcommit.RetryEach, bad: []int{0, 3}, panicOn: -1,
			wantErr:     map[int]error{0: errBad, 3: errBad},
			wantCommit:  []int{1, 2},
			wantBatches: [][]int{{0, 1, 2, 3}, {0}, {1}, {2}, {3}},
		},
		{
			name: "fail batch: every item fails, no retry", rule: groupcommit.FailBatch, bad: []int{2}, panicOn: -1,
			wantErr:     map[int]error{0: errBad, 1: errBad, 2: errBad, 3: errBad},
			wantBatches: [][]int{{0, 1, 2, 3}},
		},
		{
			name: "retry each: a panicking item fails alone", rule: groupcommit.RetryEach, panicOn: 1,
			wantPanic:   []int{1},
			wantCommit:  []int{0, 2, 3},
			wantBatches: [][]int{{0, 1, 2, 3}, {0}, {1}, {2}, {3}},
		},
		{
			name: "fail batch: a panic fails the batch", rule: groupcommit.FailBatch, panicOn: 1,
			wantPanic:   []int{0, 1, 2, 3},
			wantBatches: [][]int{{0, 1, 2, 3}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				l := newLedger()
				l.panicOn = tc.panicOn
				for _, b := range tc.bad {
					l.bad[b] = true
				}
				c := groupcommit.New(t.Context(), l.commit, groupcommit.Options{OnFailure: tc.rule, Logger: quiet()})
				defer c.Close()

				// Hold the committer on a first item, so that 0..3 form one batch.
				l.gate = make(chan struct{})
				hold := c.Submit(t.Context(), 100)
				synctest.Wait()
				var answers []<-chan error
				for i := range 4 {
					answers = append(answers, c.Submit(t.Context(), i))
				}
				close(l.gate)
				if err := <-hold; err != nil {
					t.Fatalf("item 100: %v", err)
				}
				for i, a := range answers {
					err := <-a
					var pe *groupcommit.PanicError
					switch {
					case slices.Contains(tc.wantPanic, i):
						if !errors.As(err, &pe) || pe.Value != fmt.Sprintf("item %d", tc.panicOn) || len(pe.Stack) == 0 {
							t.Errorf("item %d: err = %v, want a *PanicError with its value and stack", i, err)
						}
					case tc.wantErr[i] != nil:
						if !errors.Is(err, tc.wantErr[i]) {
							t.Errorf("item %d: err = %v, want %v", i, err, tc.wantErr[i])
						}
					case err != nil:
						t.Errorf("item %d: err = %v, want nil", i, err)
					}
				}
				committed, batches := l.snapshot()
				if !slices.Equal(committed[1:], tc.wantCommit) {
					t.Errorf("committed = %v, want %v after 100", committed[1:], tc.wantCommit)
				}
				if !slices.EqualFunc(batches[1:], tc.wantBatches, slices.Equal) {
					t.Errorf("batches = %v, want %v after [100]", batches[1:], tc.wantBatches)
				}

				// The committer lives on.
				if err := c.Do(t.Context(), 10); err != nil {
					t.Fatalf("item after the failure: %v", err)
				}
			})
		})
	}
}

// A batch of one item that fails is answered with its error, not retried.
func TestSingleItemFailureNotRetried(t *testing.T) {
	t.Parallel()
	l := newLedger()
	l.bad[7] = true
	c := groupcommit.New(t.Context(), l.commit, groupcommit.Options{OnFailure: groupcommit.RetryEach, Logger: quiet()})
	defer c.Close()
	if err := c.Do(t.Context(), 7); !errors.Is(err, errBad) {
		t.Fatalf("err = %v, want %v", err, errBad)
	}
	if _, batches := l.snapshot(); len(batches) != 1 {
		t.Fatalf("commit called %d times, want once", len(batches))
	}
}

// Close commits and answers everything queued before it, waits for that, and
// refuses what comes after with ErrClosed.
func TestClose(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		l := newLedger()
		l.gate = make(chan struct{})
		c := groupcommit.New(t.Context(), l.commit, groupcommit.Options{MaxBatch: 2, QueueLen: 8, Logger: quiet()})
		var answers []<-chan error
		answers = append(answers, c.Submit(t.Context(), 0))
		synctest.Wait() // 0 is being committed
		for i := 1; i < 5; i++ {
			answers = append(answers, c.Submit(t.Context(), i))
		}

		closed := make(chan struct{})
		go func() { c.Close(); close(closed) }()
		synctest.Wait()
		select {
		case <-closed:
			t.Fatal("Close returned while items were still queued")
		default:
		}
		close(l.gate)
		<-closed
		for i, a := range answers {
			if err := <-a; err != nil {
				t.Fatalf("item %d: %v", i, err)
			}
		}
		if committed, _ := l.snapshot(); !slices.Equal(committed, seq(0, 5)) {
			t.Fatalf("committed = %v, want 0..4", committed)
		}

		if err := c.Do(t.Context(), 9); !errors.Is(err, groupcommit.ErrClosed) {
			t.Fatalf("Do after Close: err = %v, want ErrClosed", err)
		}
		c.Close() // again: returns at once
		if committed, _ := l.snapshot(); slices.Contains(committed, 9) {
			t.Fatal("an item submitted after Close was committed")
		}
	})
}

// Close of a committer that never received an item returns at once.
func TestCloseUnused(t *testing.T) {
	t.Parallel()
	c := groupcommit.New(t.Context(), newLedger().commit, groupcommit.Options{})
	c.Close()
	c.Close()
	if err := c.Do(t.Context(), 1); !errors.Is(err, groupcommit.ErrClosed) {
		t.Fatalf("Do after Close: err = %v, want ErrClosed", err)
	}
}

// Close while submitters race with it, some blocked on a full queue behind a
// slow commit: every Submit is answered, with nil for exactly the items that
// were committed (each once) and ErrClosed for the others. Run it with -race.
func TestCloseWhileSubmittersRace(t *testing.T) {
	t.Parallel()
	for round := range 20 {
		t.Run(fmt.Sprint(round), func(t *testing.T) {
			t.Parallel()
			const senders, each = 8, 50
			l := newLedger()
			l.gate = make(chan struct{})
			c := groupcommit.New(t.Context(), l.commit, groupcommit.Options{MaxBatch: 4, QueueLen: 2, Logger: quiet()})
			go func() { // a slow commit: let batches through one at a time
				for {
					select {
					case l.gate <- struct{}{}:
					case <-t.Context().Done():
						return
					}
				}
			}()
			var (
				mu       sync.Mutex
				answered = make(map[int]error)
				wg       sync.WaitGroup
				start    = make(chan struct{})
			)
			for s := range senders {
				wg.Go(func() {
					<-start
					for i := range each {
						it := s*each + i
						err := c.Do(t.Context(), it)
						mu.Lock()
						answered[it] = err
						mu.Unlock()
					}
				})
			}
			close(start)
			if round%2 == 1 {
				// Let some items in first.
				for range 3 {
					_ = c.Do(t.Context(), 1_000_000)
				}
			}
			c.Close()
			wg.Wait() // no submitter hangs

			committed, _ := l.snapshot()
			count := make(map[int]int)
			for _, it := range committed {
				count[it]++
			}
			if len(answered) != senders*each {
				t.Fatalf("%d answers, want %d", len(answered), senders*each)
			}
			for it, err := range answered {
				switch {
				case err == nil && count[it] != 1:
					t.Fatalf("item %d answered nil, committed %d times", it, count[it])
				case err != nil && !errors.Is(err, groupcommit.ErrClosed):
					t.Fatalf("item %d: err = %v, want nil or ErrClosed", it, err)
				case err != nil && count[it] != 0:
					t.Fatalf("item %d answered ErrClosed but committed", it)
				}
			}
		})
	}
}

// A submitter waiting for room in a full queue gives up when its ctx ends, and
// its item is never committed; an item already queued commits whatever becomes
// of its submitter's ctx.
func TestSubmitContext(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		l := newLedger()
		l.gate = make(chan struct{})
		c := groupcommit.New(t.Context(), l.commit, groupcommit.Options{MaxBatch: 1, QueueLen: 1, Logger: quiet()})
		defer c.Close()
		first := c.Submit(t.Context(), 0)
		synctest.Wait() // 0 is being committed; the queue is empty

		queuedCtx, cancelQueued := context.WithCancel(t.Context())
		queued := c.Submit(queuedCtx, 1) // fills the queue
		cancelQueued()

		ctx, cancel := context.WithCancel(t.Context())
		blocked := make(chan error, 1)
		go func() { blocked <- c.Do(ctx, 2) }()
		synctest.Wait()
		select {
		case err := <-blocked:
			t.Fatalf("Do returned %v while the queue was full", err)
		default:
		}
		cancel()
		if err := <-blocked; !errors.Is(err, context.Canceled) {
			t.Fatalf("Do with a cancelled ctx: err = %v, want context.Canceled", err)
		}

		close(l.gate)
		if err := <-first; err != nil {
			t.Fatalf("item 0: %v", err)
		}
		if err := <-queued; err != nil {
			t.Fatalf("item 1 (queued, then its ctx cancelled): %v", err)
		}
		c.Close()
		if committed, _ := l.snapshot(); !slices.Equal(committed, []int{0, 1}) {
			t.Fatalf("committed = %v, want [0 1]", committed)
		}
	})
}

type ctxKey struct{}

// commit runs with the values of New's ctx, and the end of that ctx neither
// cancels a commit nor stops the committer.
func TestCommitContext(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.WithValue(t.Context(), ctxKey{}, "v"))
	cancel()
	var got []string
	c := groupcommit.New(ctx, func(ctx context.Context, batch []int) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		got = append(got, ctx.Value(ctxKey{}).(string))
		return nil
	}, groupcommit.Options{})
	if err := c.Do(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if !slices.Equal(got, []string{"v"}) {
		t.Fatalf("values seen = %v, want [v]", got)
	}
}

// Observe is told of every batch: its size, how long its first item waited
// for the batches before it, how long its commit took, and whether an item
// failed; a batch retried one by one counts its retries in its time.
func TestObserve(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var (
			mu  sync.Mutex
			got []groupcommit.Batch
		)
		bad := map[int]bool{4: true}
		commit := func(_ context.Context, batch []int) error {
			time.Sleep(5 * time.Millisecond)
			for _, it := range batch {
				if bad[it] {
					return errBad
				}
			}
			return nil
		}
		c := groupcommit.New(t.Context(), commit, groupcommit.Options{
			OnFailure: groupcommit.RetryEach, Logger: quiet(),
			Observe: func(b groupcommit.Batch) { mu.Lock(); got = append(got, b); mu.Unlock() },
		})
		first := c.Submit(t.Context(), 1) // commits alone at once: 5 ms
		synctest.Wait()
		time.Sleep(time.Millisecond)
		second := c.Submit(t.Context(), 2) // waits 4 ms for the first batch
		time.Sleep(time.Millisecond)
		third := c.Submit(t.Context(), 3) // joins the second's batch
		for _, d := range []<-chan error{first, second, third} {
			if err := <-d; err != nil {
				t.Fatalf("commit: %v", err)
			}
		}
		fourth, fifth := c.Submit(t.Context(), 4), c.Submit(t.Context(), 5) // one batch, failed, retried each
		if err := <-fourth; !errors.Is(err, errBad) {
			t.Fatalf("bad item answered %v", err)
		}
		if err := <-fifth; err != nil {
			t.Fatalf("good item of a failed batch answered %v", err)
		}
		c.Close()
		want := []groupcommit.Batch{
			{Items: 1, Waited: 0, Took: 5 * time.Millisecond},
			{Items: 2, Waited: 4 * time.Millisecond, Took: 5 * time.Millisecond},
			{Items: 2, Waited: 0, Took: 15 * time.Millisecond, Failed: true},
		}
		mu.Lock()
		defer mu.Unlock()
		if !slices.Equal(got, want) {
			t.Fatalf("observed %+v, want %+v", got, want)
		}
	})
}

// Items that many goroutines submit at once share a few commits even on one
// core (GOMAXPROCS=1, as the game runs pinned): the committer lets the
// submitters already runnable queue theirs before it gathers a batch. Before,
// each submitter, parked on its answer, handed the core straight to the
// woken committer, which committed its one item: a stampede of 10,000
// cashouts took 10,000 commits.
func TestSubmittersOnOneCoreShareCommits(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var batches atomic.Int64
	c := groupcommit.New(t.Context(), func(context.Context, []int) error { batches.Add(1); return nil }, groupcommit.Options{Logger: quiet()})
	defer c.Close()
	const n = 200
	gate := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-gate
			if err := c.Do(t.Context(), i); err != nil {
				t.Errorf("item %d: %v", i, err)
			}
		})
	}
	close(gate)
	wg.Wait()
	if got := batches.Load(); got > n/10 {
		t.Fatalf("%d items submitted at once took %d commits on one core, want at most %d", n, got, n/10)
	}
}
