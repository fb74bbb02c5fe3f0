package engine

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/uptrace/bun"

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
func enqueue(ctx context.Context, tx bun.IDB, m wallet.Movement, now time.Time) error {
	if o, ok := ctx.Value(outboxKey{}).(*outbox); ok {
		o.moves, o.at = append(o.moves, m), now
		return nil
	}
	return wallet.Enqueue(ctx, tx, m, now)
}

// job is one unit of work for the committer: fn runs inside a transaction and
// done receives its error once the transaction committed (or failed).
type job struct {
	fn   func(ctx context.Context, tx bun.Tx) error
	done chan error
}

// committer gathers the writes of concurrent bets and cashouts into one
// transaction (group commit): a durable commit costs the same for one row or a
// hundred, so under load it commits many at once and answers each after.
type committer struct {
	db     *bun.DB
	jobs   chan job
	logger *slog.Logger
	max    int
}

func newCommitter(db *bun.DB, logger *slog.Logger) *committer {
	return &committer{db: db, jobs: make(chan job, 4096), logger: logger, max: 256}
}

// submit queues fn and returns the channel that receives its outcome. Jobs
// commit in the order they were submitted: the table loop relies on it (a bet
// accepted before the crash commits before the crash does).
func (c *committer) submit(fn func(ctx context.Context, tx bun.Tx) error) <-chan error {
	j := job{fn: fn, done: make(chan error, 1)}
	c.jobs <- j
	return j.done
}

// do runs fn in a transaction and returns once it committed.
func (c *committer) do(fn func(ctx context.Context, tx bun.Tx) error) error {
	return <-c.submit(fn)
}

// run commits batches until ctx ends and the queue is drained.
func (c *committer) run(ctx context.Context) {
	batch := make([]job, 0, c.max)
	for {
		var first job
		select {
		case first = <-c.jobs:
		case <-ctx.Done():
			// Drain what is queued so no caller waits forever.
			for {
				select {
				case j := <-c.jobs:
					c.commit([]job{j})
				default:
					return
				}
			}
		}
		batch = append(batch[:0], first)
	gather:
		for len(batch) < c.max {
			select {
			case j := <-c.jobs:
				batch = append(batch, j)
			default:
				break gather
			}
		}
		c.commit(batch)
	}
}

// commit runs the batch in one transaction; when that fails, each job runs in
// its own, so one bad job never fails the others.
func (c *committer) commit(batch []job) {
	ctx := context.Background()
	if len(batch) > 1 {
		err := c.runInTx(ctx, func(ctx context.Context, tx bun.Tx) error {
			for _, j := range batch {
				if err := j.fn(ctx, tx); err != nil {
					return err
				}
			}
			return nil
		})
		if err == nil {
			for _, j := range batch {
				j.done <- nil
			}
			return
		}
		c.logger.Warn("group commit failed; committing one by one", "jobs", len(batch), "err", err)
	}
	for _, j := range batch {
		err := c.runInTx(ctx, j.fn)
		if err != nil {
			err = fmt.Errorf("commit: %w", err)
		}
		j.done <- err
	}
}

// runInTx runs fn in a transaction with an outbox, and queues what fn put in
// it before the commit.
func (c *committer) runInTx(ctx context.Context, fn func(ctx context.Context, tx bun.Tx) error) error {
	return c.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		o := &outbox{}
		if err := fn(context.WithValue(ctx, outboxKey{}, o), tx); err != nil {
			return err
		}
		return wallet.EnqueueMany(ctx, tx, o.moves, o.at)
	})
}
