package movements

import (
	"context"
	"fmt"
	"time"
)

// EnqueueMany queues ms inside the caller's transaction like Enqueue, with the
// same checks, in two statements whatever their number: one read of their
// debits, one insert. It is what a group commit of many cashouts uses. When a
// key refuses any of them it returns ErrDuplicateMovement without saying
// which: the caller rolls back and enqueues them one by one (Enqueue names
// the culprit).
func EnqueueMany(ctx context.Context, w MovementWriter, ms []Movement, now time.Time) error {
	if len(ms) == 0 {
		return nil
	}
	if len(ms) == 1 {
		return Enqueue(ctx, w, ms[0], now)
	}
	ids := make([]string, 0, len(ms))
	for _, m := range ms {
		if err := m.validate(); err != nil {
			return fmt.Errorf("%w %s: %w", ErrInvalidMovement, m.TransactionID, err)
		}
		ids = append(ids, m.BetID)
	}
	debits, err := w.Debits(ctx, ids)
	if err != nil {
		return fmt.Errorf("movements: enqueue %d movements: read the debits: %w", len(ms), err)
	}
	for _, m := range ms {
		if d, ok := debits[m.BetID]; ok {
			if err := compareWithDebit(m, d); err != nil {
				return err
			}
		}
	}
	if err := w.InsertMovements(ctx, ms, now); err != nil {
		return fmt.Errorf("movements: enqueue %d movements: %w", len(ms), err)
	}
	return nil
}

// Outbox queues movements inside the caller's transaction (store.InTx): the
// state change that causes a movement and the movement commit together. The
// Queue built on it (NewQueue) delivers them; Notify wakes it.
type Outbox struct {
	w    MovementWriter
	wake chan struct{} // the Queue's: a committed movement is waiting
}

// NewOutbox returns the outbox that writes through w.
func NewOutbox(w MovementWriter) *Outbox { return &Outbox{w: w, wake: make(chan struct{}, 1)} }

// Notify tells the Queue reading this outbox that movements were committed,
// so that it sends them at once instead of at its next poll. Call it after the
// commit. It never blocks.
func (o *Outbox) Notify() {
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

// Enqueue queues m in the transaction of ctx (see the package function Enqueue
// for its checks and errors).
func (o *Outbox) Enqueue(ctx context.Context, m Movement, now time.Time) error {
	return Enqueue(ctx, o.w, m, now)
}

// EnqueueMany queues ms in the transaction of ctx (see the package function
// EnqueueMany).
func (o *Outbox) EnqueueMany(ctx context.Context, ms []Movement, now time.Time) error {
	return EnqueueMany(ctx, o.w, ms, now)
}
