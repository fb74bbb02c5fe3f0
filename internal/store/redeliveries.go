package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/uptrace/bun"
)

// ErrNotRedeliverable: the movement is refused (the wallet's final answer),
// not exhausted: a re-delivery would repeat what the wallet refused.
var ErrNotRedeliverable = errors.New("store: the movement was refused by the wallet, not exhausted: it is not delivered again")

// RedeliveryRecord is one re-delivery of a movement.
type RedeliveryRecord struct {
	bun.BaseModel `bun:"table:movement_redeliveries"`

	TransactionID   string `bun:"transaction_id,pk"`
	Number          int64  `bun:"number,pk"`
	RequestedAt     Millis `bun:"requested_at"`
	RequestedBy     string `bun:"requested_by"` // "operator:<id>" or "on-call:<name>"
	AttemptsBefore  int    `bun:"attempts_before"`
	LastErrorBefore string `bun:"last_error_before"`
}

// RedeliverMovement sends an exhausted movement again: in one transaction
// it moves it from exhausted back to pending with no attempts, due at, and
// records the re-delivery (by whom, how it stood). operator, when not "",
// must own the movement (else ErrMovementNotFound, as for no movement). A
// movement that is not exhausted is left as it is and returned with
// redelivered false: pending (a re-delivery under way, or never parked) and
// done are answers in themselves; refused is ErrNotRedeliverable. So a
// repeated request re-delivers once.
func (s *Store) RedeliverMovement(ctx context.Context, transactionID, operator, by string, at Millis) (rec MovementRecord, redelivered bool, err error) {
	err = s.InTx(ctx, func(ctx context.Context) error {
		rec, redelivered = MovementRecord{}, false
		got, err := s.GetMovement(ctx, transactionID)
		if err != nil {
			return err
		}
		if operator != "" && got.Operator != operator {
			return ErrMovementNotFound
		}
		switch got.Status {
		case MovementRefused:
			return ErrNotRedeliverable
		case MovementPending, MovementDone:
			rec = got
			return nil
		}
		n, err := affected("redeliver movement")(s.conn(ctx).NewUpdate().Table("movements").
			Set("status = ?", MovementPending).Set("attempts = 0").Set("next_attempt_at = ?", at).
			Set("claimed_by = ''").
			Where("transaction_id = ?", transactionID).Where("status = ?", MovementExhausted).Exec(ctx))
		if err != nil {
			return err
		}
		if n != 1 {
			// Another request re-delivered it first (PostgreSQL re-reads the
			// row after that one's commit): nothing more to do.
			rec, err = s.GetMovement(ctx, transactionID)
			return err
		}
		count, err := s.conn(ctx).NewSelect().Model((*RedeliveryRecord)(nil)).Where("transaction_id = ?", transactionID).Count(ctx)
		if err != nil {
			return fmt.Errorf("store: count redeliveries of %s: %w", transactionID, err)
		}
		r := RedeliveryRecord{TransactionID: transactionID, Number: count + 1, RequestedAt: at, RequestedBy: by,
			AttemptsBefore: got.Attempts, LastErrorBefore: got.LastError}
		if _, err := s.conn(ctx).NewInsert().Model(&r).Exec(ctx); err != nil {
			return fmt.Errorf("store: record the redelivery of %s: %w", transactionID, err)
		}
		got.Status, got.Attempts, got.NextAttemptAt, got.ClaimedBy = MovementPending, 0, at, ""
		rec, redelivered = got, true
		return nil
	})
	rec.Token = "" // never handed out
	return rec, redelivered, err
}

// OperatorMovementFilter selects an operator's movements created in
// [From, To), of one status (all when ""), strictly after the cursor
// (AfterCreated, AfterID; zero: from the start), in the order of
// (created_at, transaction_id), at most Limit.
type OperatorMovementFilter struct {
	Operator     string
	From, To     Millis
	Status       string
	AfterCreated Millis
	AfterID      string
	Limit        int
}

// OperatorMovements lists the movements f selects, through the indexes of
// migration 0008. The token is never read.
func (s *Store) OperatorMovements(ctx context.Context, f OperatorMovementFilter) ([]MovementRecord, error) {
	if f.Limit <= 0 {
		return nil, fmt.Errorf("store: operator movements: limit %d is not positive", f.Limit)
	}
	q := s.conn(ctx).NewSelect().Model((*MovementRecord)(nil)).ExcludeColumn("token").
		Where("operator = ?", f.Operator).Where("created_at >= ?", f.From).Where("created_at < ?", f.To)
	if f.Status != "" {
		q = q.Where("status = ?", f.Status)
	}
	if f.AfterID != "" {
		q = q.Where("(created_at > ? OR (created_at = ? AND transaction_id > ?))", f.AfterCreated, f.AfterCreated, f.AfterID)
	}
	out := make([]MovementRecord, 0, f.Limit)
	if err := q.OrderExpr("created_at, transaction_id").Limit(int64(f.Limit)).Scan(ctx, &out); err != nil {
		return nil, fmt.Errorf("store: operator movements: %w", err)
	}
	return out, nil
}

// RedeliveriesOf lists the re-deliveries of the movements ids, by
// transaction_id, each oldest first.
func (s *Store) RedeliveriesOf(ctx context.Context, ids []string) (map[string][]RedeliveryRecord, error) {
	out := make(map[string][]RedeliveryRecord)
	if len(ids) == 0 {
		return out, nil
	}
	var recs []RedeliveryRecord
	err := s.conn(ctx).NewSelect().Model(&recs).Where("transaction_id IN (?)", bun.List(ids)).Order("transaction_id", "number").Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("store: redeliveries of %d movements: %w", len(ids), err)
	}
	for _, r := range recs {
		out[r.TransactionID] = append(out[r.TransactionID], r)
	}
	return out, nil
}
