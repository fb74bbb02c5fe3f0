package store

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"
)

// ReconcileFilter selects the records reconciliation reads. Empty fields
// select everything.
type ReconcileFilter struct {
	Operator     string // only this operator's
	PlayerID     string // only this player's
	PlayerPrefix string // only players whose id starts with it
}

// ReconcileBetRecord is a real-money bet as reconciliation reads it (table
// bets): never the session token nor the session hash.
type ReconcileBetRecord struct {
	bun.BaseModel `bun:"table:bets"`

	ID           string  `bun:"id,pk"`
	RoundID      string  `bun:"round_id"`
	Operator     string  `bun:"operator"`
	PlayerID     string  `bun:"player_id"`
	Status       string  `bun:"status"`
	Amount       int64   `bun:"amount"`
	FreebetID    *string `bun:"freebet_id"`
	Payout       *int64  `bun:"payout"`
	OperatorTxID string  `bun:"operator_tx_id"`
}

// reconcileMovementColumns are the columns of movements ReconcileMovements
// reads: never the token.
var reconcileMovementColumns = []string{"transaction_id", "kind", "operator", "player_id", "round_id", "bet_id", "amount",
	"win_type", "freebet_id", "status", "attempts", "operator_tx_id", "last_error"}

func (f ReconcileFilter) apply(q *bun.SelectQuery) *bun.SelectQuery {
	if f.Operator != "" {
		q = q.Where("operator = ?", f.Operator)
	}
	if f.PlayerID != "" {
		q = q.Where("player_id = ?", f.PlayerID)
	}
	if f.PlayerPrefix != "" {
		q = q.Where("substr(player_id, 1, ?) = ?", len(f.PlayerPrefix), f.PlayerPrefix)
	}
	return q
}

// ReconcileBets returns every real-money bet (demo bets move no money) that f
// selects, by placed_at then id. It only reads.
func (s *Store) ReconcileBets(ctx context.Context, f ReconcileFilter) ([]ReconcileBetRecord, error) {
	var bets []ReconcileBetRecord
	q := s.conn(ctx).NewSelect().Model(&bets).Where("demo = ?", false)
	if err := f.apply(q).Order("placed_at", "id").Scan(ctx); err != nil {
		return nil, fmt.Errorf("store: read the bets to reconcile: %w", err)
	}
	return bets, nil
}

// ReconcileMovements returns every movement that f selects, by created_at
// then transaction_id, with the columns reconciliation compares: Token,
// GameID, Currency, Reason, the lease, the request id, the balance and the
// times are empty. It only reads.
func (s *Store) ReconcileMovements(ctx context.Context, f ReconcileFilter) ([]MovementRecord, error) {
	var moves []MovementRecord
	q := s.conn(ctx).NewSelect().Model(&moves).Column(reconcileMovementColumns...)
	if err := f.apply(q).Order("created_at", "transaction_id").Scan(ctx); err != nil {
		return nil, fmt.Errorf("store: read the movements to reconcile: %w", err)
	}
	return moves, nil
}
