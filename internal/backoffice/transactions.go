package backoffice

import (
	"context"
	"fmt"
	"time"

	"github.com/crashstudio/crashgame/internal/cursor"
	"github.com/crashstudio/crashgame/internal/movements"
)

// The back office's view of the outbox: an operator's movements over a
// time range, paged stably, with their re-deliveries.

// Bounds of a transactions query.
const (
	// MaxTransactionsRange is the longest range one query covers.
	MaxTransactionsRange = 31 * 24 * time.Hour
	// MaxTransactionsPage is the largest page, and the default.
	MaxTransactionsPage = 1000
)

// A transactions query out of its bounds is ErrInvalidQuery, whose message
// says which, in words an operator can act on; only movements older than
// SettleHorizon are listed (a movement is created inside the transaction that
// causes it, whose commit may come a moment after its created_at).

// Transaction statuses as the back office names them: a done movement is
// delivered.
const (
	TransactionDelivered = "delivered"
	TransactionPending   = "pending"
	TransactionExhausted = "exhausted"
	TransactionRefused   = "refused"
)

// TransactionStatus is a movement status as the back office names it.
func TransactionStatus(s movements.MovementStatus) string {
	if s == movements.StatusDone {
		return TransactionDelivered
	}
	return string(s)
}

// TransactionQuery selects an operator's movements created in [From, To).
type TransactionQuery struct {
	Operator string
	From, To time.Time
	Status   string // a Transaction* status, or "" for all
	Cursor   string // the NextCursor of the previous page, or ""
	Limit    int    // 1..MaxTransactionsPage; 0: MaxTransactionsPage
}

// Transaction is a movement with its re-deliveries.
type Transaction struct {
	movements.MovementRecord
	Redeliveries []movements.Redelivery
}

// MovementQuery selects an operator's movements created in [From, To), of
// Status when it is set, strictly after (AfterCreated, AfterID) in the order
// (created_at, transaction_id) when AfterID is set: a cursor of ascending
// pages of at most Limit.
type MovementQuery struct {
	Operator     string
	From, To     time.Time
	Status       string // a movements.MovementStatus, or "" for all
	AfterCreated time.Time
	AfterID      string
	Limit        int
}

// TransactionReader is what Transactions reads through.
type TransactionReader interface {
	// OperatorMovements are the movements f selects, without their token.
	OperatorMovements(ctx context.Context, f MovementQuery) ([]movements.MovementRecord, error)
	// RedeliveriesOf are the re-deliveries of the movements ids, oldest
	// first, by transaction_id.
	RedeliveriesOf(ctx context.Context, ids []string) (map[string][]movements.Redelivery, error)
}

// Transactions returns one page of the movements q selects, ordered by
// created_at then transaction_id, and the cursor of the next page ("" when
// the page is not full). Only movements older than SettleHorizon at now are
// listed, so pages read one after another neither skip nor repeat one.
func Transactions(ctx context.Context, r TransactionReader, q TransactionQuery, now time.Time) (page []Transaction, next string, err error) {
	f, err := q.filter(now)
	if err != nil {
		return nil, "", err
	}
	recs, err := r.OperatorMovements(ctx, f)
	if err != nil {
		return nil, "", fmt.Errorf("wallet: transactions: %w", err)
	}
	ids := make([]string, len(recs))
	for i := range recs {
		ids[i] = recs[i].TransactionID
	}
	hist, err := r.RedeliveriesOf(ctx, ids)
	if err != nil {
		return nil, "", fmt.Errorf("wallet: transactions: %w", err)
	}
	page = make([]Transaction, len(recs))
	for i := range recs {
		page[i] = Transaction{MovementRecord: recs[i], Redeliveries: hist[recs[i].TransactionID]}
	}
	if len(recs) == f.Limit {
		last := recs[len(recs)-1]
		next = cursor.Encode(last.CreatedAt.UnixMilli(), last.TransactionID)
	}
	return page, next, nil
}

// Check reports whether q is within its bounds (its cursor aside): the
// error wraps ErrInvalidQuery and says which bound.
func (q TransactionQuery) Check() error {
	q.Cursor = ""
	_, err := q.filter(time.Now())
	return err
}

// filter checks q and turns it into the query of the records at now.
func (q TransactionQuery) filter(now time.Time) (MovementQuery, error) {
	f := MovementQuery{Operator: q.Operator, Limit: q.Limit}
	switch {
	case !q.From.Before(q.To):
		return f, fmt.Errorf("%w: from must be before to", ErrInvalidQuery)
	case q.To.Sub(q.From) > MaxTransactionsRange:
		return f, fmt.Errorf("%w: the range from..to is more than 31 days", ErrInvalidQuery)
	case q.Limit < 0 || q.Limit > MaxTransactionsPage:
		return f, fmt.Errorf("%w: limit must be 1 to %d", ErrInvalidQuery, MaxTransactionsPage)
	case q.Limit == 0:
		f.Limit = MaxTransactionsPage
	}
	switch q.Status {
	case "":
	case TransactionDelivered:
		f.Status = string(movements.StatusDone)
	case TransactionPending, TransactionExhausted, TransactionRefused:
		f.Status = q.Status
	default:
		return f, fmt.Errorf("%w: status must be delivered, pending, exhausted or refused", ErrInvalidQuery)
	}
	if q.Cursor != "" {
		at, id, ok := cursor.Decode(q.Cursor)
		if !ok {
			return f, fmt.Errorf("%w: the cursor is not one this route gave", ErrInvalidQuery)
		}
		f.AfterCreated, f.AfterID = time.UnixMilli(at), id
	}
	f.From, f.To = q.From, minTime(q.To, now.Add(-SettleHorizon))
	if f.To.Before(f.From) {
		f.To = f.From // nothing settled in the range yet
	}
	return f, nil
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
