package ledger

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/uptrace/bun"
)

// MovementRecord is a row of transactions: one movement the wallet accepted
// (bet, win or rollback). ID is the operator's own transaction id;
// (PlayerID, TransactionID) is the game's, the idempotency key.
type MovementRecord struct {
	bun.BaseModel `bun:"table:transactions"`

	ID             int64   `bun:"id,pk,autoincrement"`
	PlayerID       string  `bun:"player_id"`
	TransactionID  string  `bun:"transaction_id"`
	Kind           string  `bun:"kind"`   // KindBet, KindWin or KindRollback
	Amount         int64   `bun:"amount"` // as the game declared it
	Delta          int64   `bun:"delta"`  // what the balance moved
	BalanceAfter   int64   `bun:"balance_after"`
	Currency       string  `bun:"currency"`
	BetID          *string `bun:"bet_id"`
	RoundID        string  `bun:"round_id"`
	FreebetID      *string `bun:"freebet_id"`
	WinType        string  `bun:"win_type"`
	Reason         string  `bun:"reason"`
	RequestHash    []byte  `bun:"request_hash"`
	ResponseStatus int     `bun:"response_status"`
	ResponseBody   []byte  `bun:"response_body"`
	Settlement     *string `bun:"settlement"` // on a bet: how it was closed, nil while open
	SettledBy      *int64  `bun:"settled_by"` // ID of the closing movement
	CreatedAt      int64   `bun:"created_at"` // Unix ms
}

// InsertMovement inserts m and sets m.ID. It is idempotent on
// (player_id, transaction_id): if the player already has a movement under
// that transaction_id, nothing is written and the answer is ErrDuplicate.
func (s *Store) InsertMovement(ctx context.Context, m *MovementRecord) error {
	err := s.queryRow(ctx, "insertMovement", "insert "+m.Kind+" movement "+m.TransactionID, []any{
		m.PlayerID, m.TransactionID, m.Kind, m.Amount, m.Delta, m.BalanceAfter, m.Currency, m.BetID,
		m.RoundID, m.FreebetID, m.WinType, m.Reason, m.RequestHash, m.ResponseStatus, m.ResponseBody,
		m.Settlement, m.SettledBy, m.CreatedAt,
	}, &m.ID)
	if errors.Is(err, ErrNotFound) { // no id returned: the conflict did nothing
		return fmt.Errorf("ledger: insert %s movement %s: %w", m.Kind, m.TransactionID, ErrDuplicate)
	}
	return err
}

// SetResponseBody stores the answer a retry of movement id replays.
func (s *Store) SetResponseBody(ctx context.Context, id int64, body []byte) error {
	if _, err := s.exec(ctx, "setResponseBody", body, id); err != nil {
		return fmt.Errorf("ledger: store answer: %w", err)
	}
	return nil
}

// MovementByTx reads the movement a player has under a game transaction_id;
// ErrNotFound if there is none.
func (s *Store) MovementByTx(ctx context.Context, playerID, transactionID string) (*MovementRecord, error) {
	m := new(MovementRecord)
	if err := s.queryRow(ctx, "movementByTx", "read movement", []any{playerID, transactionID}, scanMovement(m)...); err != nil {
		return nil, err
	}
	return m, nil
}

// Settle closes the debit movement id with how (a win type or
// SettlementRollback) by the movement by, in one conditional UPDATE: only a
// debit not yet settled is settled. Otherwise nothing is written and the
// answer is ErrSettled.
func (s *Store) Settle(ctx context.Context, id int64, how string, by int64) error {
	res, err := s.conn(ctx).NewUpdate().Model((*MovementRecord)(nil)).
		Set("settlement = ?", how).Set("settled_by = ?", by).
		Where("id = ?", id).Where("settlement IS NULL").Exec(ctx)
	return changedOne(res, err, fmt.Sprintf("settle movement %d", id), ErrSettled)
}

// HasRollbackOf reports whether the player has a rollback movement whose
// bet_id is betID.
func (s *Store) HasRollbackOf(ctx context.Context, playerID, betID string) (bool, error) {
	var ok bool
	if err := s.queryRow(ctx, "hasRollbackOf", "read rollbacks", []any{playerID, KindRollback, betID}, &ok); err != nil {
		return false, err
	}
	return ok, nil
}

// FreebetBetIDs lists the freebet_id of every bet movement of the player that
// carries one and is not settled by a rollback (open, or closed by a win).
func (s *Store) FreebetBetIDs(ctx context.Context, playerID string) ([]string, error) {
	var ids []string
	if err := s.conn(ctx).NewSelect().Model((*MovementRecord)(nil)).Column("freebet_id").
		Where("player_id = ?", playerID).Where("kind = ?", KindBet).
		Where("freebet_id IS NOT NULL").
		Where("settlement IS NULL OR settlement <> ?", SettlementRollback).
		Scan(ctx, &ids); err != nil {
		return nil, fmt.Errorf("ledger: read spent freebets: %w", err)
	}
	return ids, nil
}

// Movements lists movements in the order they were made, of one player or of
// all (playerID ""); with limit above 0, only the last limit of them.
func (s *Store) Movements(ctx context.Context, playerID string, limit int) ([]MovementRecord, error) {
	var ms []MovementRecord
	q := s.conn(ctx).NewSelect().Model(&ms).Order("id DESC")
	if playerID != "" {
		q = q.Where("player_id = ?", playerID)
	}
	if limit > 0 {
		q = q.Limit(int64(limit))
	}
	if err := q.Scan(ctx); err != nil {
		return nil, fmt.Errorf("ledger: list movements: %w", err)
	}
	slices.Reverse(ms)
	return ms, nil
}
