package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/crashstudio/crashgame/internal/groupcommit"
)

// ErrClosed is returned by a write after Close.
var ErrClosed = errors.New("store: closed")

// maxTicketBatch bounds the rows of one INSERT.
const maxTicketBatch = 256

// newTicketWriter returns the group committer of ticket inserts: a durable
// commit costs the same for one row or a hundred, so concurrent launches share
// one INSERT and one commit, and each caller is answered once it committed.
// When a batch fails (a hash already stored), each row is written alone, so
// that only its caller fails.
func (s *Store) newTicketWriter() *groupcommit.Committer[*TicketRecord] {
	return groupcommit.New(context.Background(), s.insertTickets, groupcommit.Options{
		MaxBatch: maxTicketBatch, OnFailure: groupcommit.RetryEach,
	})
}

func (s *Store) writeTicket(ctx context.Context, rec *TicketRecord) error {
	err := s.tickets.Do(ctx, rec)
	if errors.Is(err, groupcommit.ErrClosed) {
		return ErrClosed
	}
	return err
}

// insertTickets writes a batch of tickets in one statement (see
// insertTicketRows).
func (s *Store) insertTickets(ctx context.Context, batch []*TicketRecord) error {
	recs := make([]TicketRecord, len(batch))
	for i, rec := range batch {
		recs[i] = *rec
	}
	if err := s.insertTicketRows(ctx, recs); err != nil {
		return fmt.Errorf("store: insert ticket: %w", err)
	}
	return nil
}

// insertTicketRows inserts tickets, the controls of those that carry any, and
// the latest launch's controls of each player (launch_controls, which the
// legacy launch reads), all or none. One statement when there are only
// tickets (a batch of demo tickets). Otherwise, on PostgreSQL, still one
// statement: the inserts run as data-modifying WITH queries of the upsert,
// in one round trip where a transaction took four (BEGIN, two inserts,
// COMMIT); on SQLite, in the process, one transaction.
func (s *Store) insertTicketRows(ctx context.Context, recs []TicketRecord) error {
	var controls []TicketControls
	for _, r := range recs {
		if r.Controls.On() {
			c := r.Controls
			c.Hash, c.ExpiresAt = r.Hash, r.ExpiresAt
			controls = append(controls, c)
		}
	}
	latest := launchControlsOf(recs)
	if len(controls) == 0 && len(latest) == 0 {
		_, err := s.db.NewInsert().Model(&recs).Exec(ctx)
		return err
	}
	if s.dialect == DialectPostgres {
		return s.insertTicketRowsAtOnce(ctx, recs, controls, latest)
	}
	return s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.NewInsert().Model(&recs).Exec(ctx); err != nil {
			return err
		}
		if len(controls) > 0 {
			if _, err := tx.NewInsert().Model(&controls).Exec(ctx); err != nil {
				return err
			}
		}
		if len(latest) == 0 {
			return nil
		}
		if _, err := launchControlsUpsert(tx, latest).Exec(ctx); err != nil {
			return fmt.Errorf("launch controls: %w", err)
		}
		return nil
	})
}

// insertTicketRowsAtOnce is insertTicketRows on PostgreSQL: the last of the
// inserts is the statement, the others its WITH queries, each of which runs
// to completion whether or not the statement reads it; a row that any of
// them refuses fails the whole statement.
func (s *Store) insertTicketRowsAtOnce(ctx context.Context, recs []TicketRecord, controls []TicketControls, latest []LaunchControlsRecord) error {
	var q *bun.InsertQuery
	if len(latest) > 0 {
		q = launchControlsUpsert(s.db, latest).With("tickets_in", s.db.NewInsert().Model(&recs))
	} else {
		q = s.db.NewInsert().Model(&recs)
	}
	if len(controls) > 0 {
		q = q.With("controls_in", s.db.NewInsert().Model(&controls))
	}
	_, err := q.Exec(ctx)
	return err
}
