package wallet

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/crashstudio/crashgame/internal/store"
)

// EnqueueMany queues ms inside the caller's transaction like Enqueue, with the
// same checks, in three statements whatever their number: one read of their
// debits, one insert. It is what a group commit of many cashouts uses. When a
// key refuses any of them it returns an error without saying which: the caller
// rolls back and enqueues them one by one (Enqueue names the culprit).
func EnqueueMany(ctx context.Context, db bun.IDB, ms []Movement, now time.Time) error {
	if len(ms) == 0 {
		return nil
	}
	if len(ms) == 1 {
		return Enqueue(ctx, db, ms[0], now)
	}
	ids := make([]string, 0, len(ms))
	for _, m := range ms {
		if err := m.validate(); err != nil {
			return fmt.Errorf("%w %s: %w", ErrInvalidMovement, short(m.TransactionID), err)
		}
		ids = append(ids, m.BetID)
	}
	var debits []struct {
		ID        string         `bun:"id"`
		Amount    int64          `bun:"amount"`
		FreebetID sql.NullString `bun:"freebet_id"`
	}
	if err := db.NewRaw("SELECT id, amount, freebet_id FROM bets WHERE id IN (?)", bun.List(ids)).Scan(ctx, &debits); err != nil {
		return fmt.Errorf("wallet: enqueue %d movements: read the debits: %w", len(ms), err)
	}
	type debit struct {
		amount    int64
		freebetID sql.NullString
	}
	byID := make(map[string]debit, len(debits))
	for _, d := range debits {
		byID[d.ID] = debit{d.Amount, d.FreebetID}
	}
	recs := make([]MovementRecord, 0, len(ms))
	for _, m := range ms {
		if d, ok := byID[m.BetID]; ok {
			if err := compareWithDebit(m, d.amount, d.freebetID); err != nil {
				return err
			}
		}
		recs = append(recs, MovementRecord{
			TransactionID: m.TransactionID, Kind: m.Kind, Operator: m.Operator, GameID: m.GameID,
			Currency: m.Currency, PlayerID: m.PlayerID, Token: m.Token, RoundID: m.RoundID, BetID: m.BetID,
			Amount: m.Amount, WinType: m.WinType, FreebetID: m.FreebetID, Reason: m.Reason,
			Status: StatusPending, NextAttemptAt: store.MillisOf(now), CreatedAt: store.MillisOf(now),
		})
	}
	res, err := db.NewInsert().Model(&recs).On("CONFLICT DO NOTHING").Exec(ctx)
	if err != nil {
		return fmt.Errorf("wallet: enqueue %d movements: %w", len(ms), err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("wallet: enqueue %d movements: rows affected: %w", len(ms), err)
	}
	if int(n) != len(ms) {
		return fmt.Errorf("wallet: enqueue %d movements: %d refused by a unique key: %w", len(ms), len(ms)-int(n), ErrDuplicateMovement)
	}
	return nil
}

// Outbox queues movements inside the caller's transaction (store.InTx): the
// state change that causes a movement and the movement commit together.
type Outbox struct{ st *store.Store }

// NewOutbox returns the outbox of the store's movements table.
func NewOutbox(st *store.Store) *Outbox { return &Outbox{st: st} }

// Enqueue queues m in the transaction of ctx (see the package function Enqueue
// for its checks and errors).
func (o *Outbox) Enqueue(ctx context.Context, m Movement, now time.Time) error {
	return Enqueue(ctx, o.st.Conn(ctx), m, now)
}

// EnqueueMany queues ms in the transaction of ctx (see the package function
// EnqueueMany).
func (o *Outbox) EnqueueMany(ctx context.Context, ms []Movement, now time.Time) error {
	return EnqueueMany(ctx, o.st.Conn(ctx), ms, now)
}
