package engine

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/uptrace/bun"
)

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
		err := c.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
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
		err := c.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error { return j.fn(ctx, tx) })
		if err != nil {
			err = fmt.Errorf("commit: %w", err)
		}
		j.done <- err
	}
}
