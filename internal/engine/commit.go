package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/crashstudio/crashgame/internal/leadership"
	"github.com/crashstudio/crashgame/internal/movements"
)

// outbox gathers the movements that the jobs of one transaction queue, so that
// a batch of cashouts inserts its /win movements in one statement.
type outbox struct {
	moves []movements.Movement
	at    time.Time // when they were queued (the table's clock)
}

type outboxKey struct{}

// enqueue queues m in the transaction of ctx: into the batch's outbox when the
// committer runs it, else at once.
func (t *Table) enqueue(ctx context.Context, m movements.Movement, now time.Time) error {
	if o, ok := ctx.Value(outboxKey{}).(*outbox); ok {
		o.moves, o.at = append(o.moves, m), now
		return nil
	}
	return t.cfg.Outbox.Enqueue(ctx, m, now)
}

// The table's group committer: at most maxCommitBatch jobs per transaction,
// and room for commitQueueLen queued jobs before the table loop would wait.
const (
	maxCommitBatch = 256
	commitQueueLen = 4096
)

// job is one unit of work for the table's group committer (t.commit): run
// runs inside the transaction of its batch, which travels in ctx, and the
// transaction commits only while the table's lease still has the job's epoch
// (the term of leadership that made it): a former leader commits nothing.
//
// Jobs commit in the order they were submitted: the table loop relies on it (a
// bet accepted before the crash commits before the crash does). A failed batch
// is committed again job by job, so one bad job never fails the others.
type job struct {
	epoch int64
	run   func(ctx context.Context) error
}

// unfenced is the epoch of a job that no term's lease fences: a cashout,
// whose own conditional move of its bet from accepted is its fence (any
// replica may commit one, leading or not).
const unfenced = -1

// commitJobs runs a batch of jobs in one transaction with an outbox, and
// queues what they put in it before the commit. The transaction first checks
// the lease at every epoch its jobs were made in (one, but for a batch that
// straddles two terms, which then fails and is committed job by job).
func (t *Table) commitJobs(ctx context.Context, jobs []job) error {
	err := t.store.InTx(ctx, func(ctx context.Context) error {
		checked := int64(-1) // no term has it: the first job's epoch is checked, 0 too
		for _, j := range jobs {
			if j.epoch != checked && j.epoch != unfenced {
				if err := t.store.CheckLease(ctx, t.game.ID, j.epoch); err != nil {
					return err
				}
				checked = j.epoch
			}
		}
		o := &outbox{}
		octx := context.WithValue(ctx, outboxKey{}, o)
		for _, j := range jobs {
			if err := j.run(octx); err != nil {
				return err
			}
		}
		return t.cfg.Outbox.EnqueueMany(ctx, o.moves, o.at)
	})
	if errors.Is(err, leadership.ErrFenced) {
		// Another replica leads the table now: what the player asked for is
		// that leader's to settle, and the player is told the table changes
		// hands (ErrTableUnavailable), never that the server failed.
		return fmt.Errorf("commit: %w: %w", ErrTableUnavailable, err)
	}
	if err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// fenced runs fn in a transaction that commits only while the table's lease
// has epoch: what the loop writes outside the committer (a round's opening
// and take-off, a new chain, recovery) is fenced like the rest.
func (t *Table) fenced(ctx context.Context, epoch int64, fn func(ctx context.Context) error) error {
	return t.store.InTx(ctx, func(ctx context.Context) error {
		if err := t.store.CheckLease(ctx, t.game.ID, epoch); err != nil {
			return err
		}
		return fn(ctx)
	})
}

// submit queues run with the current term's epoch. Loop only.
func (t *Table) submit(run func(ctx context.Context) error) <-chan error {
	return t.submitAt(t.epoch, run)
}

// submitAt queues run for the term of epoch: it commits only while the
// lease still has that epoch (never for 0, no term's). Loop only.
func (t *Table) submitAt(epoch int64, run func(ctx context.Context) error) <-chan error {
	return t.commit.Submit(context.Background(), job{epoch: epoch, run: run})
}
