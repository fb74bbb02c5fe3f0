package store

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/uptrace/bun"
)

// ErrClosed is returned by a write after Close.
var ErrClosed = errors.New("store: closed")

// ticketWriter group-commits ticket inserts: a durable commit costs the same
// for one row or a hundred, so concurrent launches share one INSERT and one
// commit, and each caller is answered once it committed.
//
// Senders hold mu for reading while they queue; Close takes it for writing,
// so once closed is set no sender can still be queueing, and closing q is
// safe. The writer drains everything queued before it exits.
type ticketWriter struct {
	mu      sync.RWMutex
	closed  bool
	started bool
	q       chan ticketWrite
	done    chan struct{}
}

type ticketWrite struct {
	rec  *TicketRecord
	done chan error
}

// maxTicketBatch bounds the rows of one INSERT.
const maxTicketBatch = 256

func (s *Store) writeTicket(ctx context.Context, rec *TicketRecord) error {
	w := &s.tickets
	req := ticketWrite{rec: rec, done: make(chan error, 1)}
	w.mu.RLock()
	if w.closed {
		w.mu.RUnlock()
		return ErrClosed
	}
	if !w.started {
		// Start the writer under the write lock, once.
		w.mu.RUnlock()
		w.mu.Lock()
		if !w.started && !w.closed {
			w.q = make(chan ticketWrite, maxTicketBatch)
			w.done = make(chan struct{})
			w.started = true
			go s.runTicketWriter(w.q, w.done)
		}
		closed := w.closed
		w.mu.Unlock()
		if closed {
			return ErrClosed
		}
		w.mu.RLock()
		if w.closed {
			w.mu.RUnlock()
			return ErrClosed
		}
	}
	select {
	case w.q <- req:
		w.mu.RUnlock()
	case <-ctx.Done():
		w.mu.RUnlock()
		return ctx.Err()
	}
	return <-req.done
}

func (s *Store) runTicketWriter(q <-chan ticketWrite, done chan<- struct{}) {
	defer close(done)
	batch := make([]ticketWrite, 0, maxTicketBatch)
	for first := range q {
		batch = append(batch[:0], first)
	gather:
		for len(batch) < maxTicketBatch {
			select {
			case req, ok := <-q:
				if !ok {
					break gather
				}
				batch = append(batch, req)
			default:
				break gather
			}
		}
		s.insertTickets(batch)
	}
}

// insertTickets writes the batch in one statement; when that fails (a hash
// already stored), each row is written alone so that only its caller fails.
func (s *Store) insertTickets(batch []ticketWrite) {
	ctx := context.Background()
	if len(batch) > 1 {
		recs := make([]TicketRecord, len(batch))
		for i, req := range batch {
			recs[i] = *req.rec
		}
		if err := s.insertTicketRows(ctx, recs); err == nil {
			for _, req := range batch {
				req.done <- nil
			}
			return
		}
	}
	for _, req := range batch {
		err := s.insertTicketRows(ctx, []TicketRecord{*req.rec})
		if err != nil {
			err = fmt.Errorf("store: insert ticket: %w", err)
		}
		req.done <- err
	}
}

// insertTicketRows inserts tickets and the controls of those that carry any,
// in one transaction when there are controls (one statement otherwise).
func (s *Store) insertTicketRows(ctx context.Context, recs []TicketRecord) error {
	var controls []TicketControls
	for _, r := range recs {
		if r.Controls.On() {
			c := r.Controls
			c.Hash, c.ExpiresAt = r.Hash, r.ExpiresAt
			controls = append(controls, c)
		}
	}
	if len(controls) == 0 {
		_, err := s.db.NewInsert().Model(&recs).Exec(ctx)
		return err
	}
	return s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.NewInsert().Model(&recs).Exec(ctx); err != nil {
			return err
		}
		_, err := tx.NewInsert().Model(&controls).Exec(ctx)
		return err
	})
}

// stopTicketWriter refuses new writes, lets the writer finish what is queued,
// and waits for it.
func (s *Store) stopTicketWriter() {
	w := &s.tickets
	w.mu.Lock()
	w.closed = true
	started := w.started
	if started {
		close(w.q)
	}
	w.mu.Unlock()
	if started {
		<-w.done
	}
}
