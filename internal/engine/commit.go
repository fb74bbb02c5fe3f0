package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/crashstudio/crashgame/internal/wallet"
)

// outbox gathers the movements that the jobs of one transaction queue, so that
// a batch of cashouts inserts its /win movements in one statement.
type outbox struct {
	moves []wallet.Movement
	at    time.Time // when they were queued (the table's clock)
}

type outboxKey struct{}

// enqueue queues m in the transaction of ctx: into the batch's outbox when the
// committer runs it, else at once.
func (t *Table) enqueue(ctx context.Context, m wallet.Movement, now time.Time) error {
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

// job is one unit of work for the table's group committer (t.commit): it runs
// inside the transaction of its batch, which travels in ctx.
//
// Jobs commit in the order they were submitted: the table loop relies on it (a
// bet accepted before the crash commits before the crash does). A failed batch
// is committed again job by job, so one bad job never fails the others.
type job func(ctx context.Context) error

// commitJobs runs a batch of jobs in one transaction with an outbox, and
// queues what they put in it before the commit.
func (t *Table) commitJobs(ctx context.Context, jobs []job) error {
	err := t.store.InTx(ctx, func(ctx context.Context) error {
		o := &outbox{}
		octx := context.WithValue(ctx, outboxKey{}, o)
		for _, fn := range jobs {
			if err := fn(octx); err != nil {
				return err
			}
		}
		return t.cfg.Outbox.EnqueueMany(ctx, o.moves, o.at)
	})
	if err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}
