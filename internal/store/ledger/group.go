package ledger

import (
	"context"
	"errors"
	"fmt"

	"github.com/crashstudio/crashgame/internal/groupcommit"
)

// maxGroup bounds the calls of one group transaction.
const maxGroup = 256

// ErrClosed is the answer of InGroupTx after Close.
var ErrClosed = errors.New("ledger: closed")

// groupCall is one InGroupTx call waiting for its group transaction.
type groupCall struct {
	fn  func(ctx context.Context) error
	err error // fn's own error, set by the group transaction
}

// newGroup returns the group committer of InGroupTx calls. A failed group
// transaction fails every call of it (FailBatch): its calls were decided
// against each other's writes, so none of them may be retried alone.
func (s *Store) newGroup() *groupcommit.Committer[*groupCall] {
	return groupcommit.New(context.Background(), s.commitGroup, groupcommit.Options{
		MaxBatch: maxGroup, OnFailure: groupcommit.FailBatch,
	})
}

// InGroupTx runs fn in one immediate transaction shared with the InGroupTx
// calls that other goroutines make meanwhile (group commit: one durable commit
// serves them all). Every method of s called with the context that fn receives
// runs inside it, in a savepoint of fn's own: when fn returns an error, its
// writes alone are rolled back and that error is returned, and the other calls
// of the transaction go on. Calls run one after another in the order they were
// queued, so a call reads what the calls before it wrote.
//
// InGroupTx returns nil only once the shared transaction has committed. When
// the transaction itself fails (begin, savepoint, commit), every call of it
// gets that error and nothing any of them wrote is kept: what fn computed must
// be thrown away unless InGroupTx returns nil.
//
// fn runs on the committer's goroutine with a context of its own (the
// caller's ctx bounds only the wait for room in the queue): fn must not block
// on another InGroupTx call. A panic in fn fails the whole group
// (groupcommit.PanicError) and rolls it back. Called with a context that
// already carries a transaction of s, InGroupTx runs fn in that transaction,
// like InTx.
func (s *Store) InGroupTx(ctx context.Context, fn func(ctx context.Context) error) error {
	if s.tx.Carries(ctx) {
		return fn(ctx)
	}
	c := &groupCall{fn: fn}
	err := s.group.Do(ctx, c)
	switch {
	case errors.Is(err, groupcommit.ErrClosed):
		return ErrClosed
	case err != nil:
		return fmt.Errorf("ledger: group transaction: %w", err)
	}
	return c.err
}

// InSharedTx runs fns one after another in one immediate transaction, each in
// a savepoint of its own, and commits once. errs[i] is fns[i]'s own error:
// when it is not nil, fns[i]'s writes were rolled back and the others' kept.
// err is the transaction's own failure (begin, savepoint, commit): when it is
// not nil, nothing any fn wrote is kept, whatever errs says.
//
// It is the transaction of InGroupTx's batches; tests call it to fix which
// calls share one transaction, and in which order.
func (s *Store) InSharedTx(ctx context.Context, fns ...func(ctx context.Context) error) (errs []error, err error) {
	calls := make([]*groupCall, len(fns))
	for i, fn := range fns {
		calls[i] = &groupCall{fn: fn}
	}
	if err := s.commitGroup(ctx, calls); err != nil {
		return nil, fmt.Errorf("ledger: shared transaction: %w", err)
	}
	errs = make([]error, len(calls))
	for i, c := range calls {
		errs[i] = c.err
	}
	return errs, nil
}

// commitGroup runs calls in one transaction, each in its savepoint (runCall),
// and commits. Its error is the transaction's: it fails every call.
func (s *Store) commitGroup(ctx context.Context, calls []*groupCall) error {
	return s.InTx(ctx, func(ctx context.Context) error {
		for _, c := range calls {
			if err := s.runCall(ctx, c); err != nil {
				return err
			}
		}
		return nil
	})
}

// runCall runs one call of a group transaction inside the savepoint "call":
// released when the call returns nil, rolled back to (then released) when it
// returns an error, which is kept as the call's answer. A savepoint statement
// that fails is the transaction's failure: SQLite may have rolled the whole
// transaction back (an I/O error, a full disk), and no later call may run
// outside it.
func (s *Store) runCall(ctx context.Context, c *groupCall) error {
	if _, err := s.exec(ctx, "savepoint"); err != nil {
		return fmt.Errorf("ledger: savepoint: %w", err)
	}
	c.err = c.fn(ctx)
	if c.err != nil {
		if _, err := s.exec(ctx, "rollbackTo"); err != nil {
			return fmt.Errorf("ledger: roll back a failed call (%v): %w", c.err, err)
		}
	}
	if _, err := s.exec(ctx, "release"); err != nil {
		return fmt.Errorf("ledger: release savepoint: %w", err)
	}
	return nil
}
