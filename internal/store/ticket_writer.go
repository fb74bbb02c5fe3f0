package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// ErrClosed is returned by a write after Close.
var ErrClosed = errors.New("store: closed")

// ticketWriter group-commits ticket inserts: a durable commit costs the same
// for one row or a hundred, so concurrent launches share one INSERT and one
// commit, and each caller is answered once it committed.
type ticketWriter struct {
	once sync.Once
	q    chan ticketWrite
	quit chan struct{}
	done chan struct{}
}

type ticketWrite struct {
	rec  *TicketRecord
	done chan error
}

// maxTicketBatch bounds the rows of one INSERT.
const maxTicketBatch = 256

func (s *Store) writeTicket(ctx context.Context, rec *TicketRecord) error {
	w := &s.tickets
	w.once.Do(func() {
		w.q = make(chan ticketWrite, maxTicketBatch)
		w.done = make(chan struct{})
		go s.runTicketWriter()
	})
	req := ticketWrite{rec: rec, done: make(chan error, 1)}
	select {
	case w.q <- req:
	case <-w.quit:
		return ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	return <-req.done
}

func (s *Store) runTicketWriter() {
	w := &s.tickets
	defer close(w.done)
	batch := make([]ticketWrite, 0, maxTicketBatch)
	for {
		var first ticketWrite
		select {
		case first = <-w.q:
		case <-w.quit:
			// Answer what is queued: nothing waits forever.
			for {
				select {
				case req := <-w.q:
					req.done <- ErrClosed
				default:
					return
				}
			}
		}
		batch = append(batch[:0], first)
	gather:
		for len(batch) < maxTicketBatch {
			select {
			case req := <-w.q:
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
		if _, err := s.db.NewInsert().Model(&recs).Exec(ctx); err == nil {
			for _, req := range batch {
				req.done <- nil
			}
			return
		}
	}
	for _, req := range batch {
		_, err := s.db.NewInsert().Model(req.rec).Exec(ctx)
		if err != nil {
			err = fmt.Errorf("store: insert ticket: %w", err)
		}
		req.done <- err
	}
}

// stopTicketWriter stops the writer, if it started, and waits for it.
func (s *Store) stopTicketWriter() {
	w := &s.tickets
	close(w.quit)
	started := false
	w.once.Do(func() {}) // a writer that never started stays stopped
	if w.done != nil {
		started = true
	}
	if started {
		<-w.done
	}
}
