package store

import (
	"context"

	"github.com/crashstudio/crashgame/internal/reconcile"
)

// Reconcile is the game's side of a reconciliation as package reconcile
// declares its reader: the real-money bets and the settlement movements,
// converted to reconcile's types, never with a session token or hash.
func (s *Store) Reconcile() reconcile.GameReader { return reconcileRepo{s} }

type reconcileRepo struct{ s *Store }

func filterOf(f reconcile.Filter) ReconcileFilter {
	return ReconcileFilter{Operator: f.Operator, PlayerID: f.PlayerID, PlayerPrefix: f.PlayerPrefix}
}

func (r reconcileRepo) ReconcileBets(ctx context.Context, f reconcile.Filter) ([]reconcile.Bet, error) {
	recs, err := r.s.ReconcileBets(ctx, filterOf(f))
	if err != nil {
		return nil, err
	}
	out := make([]reconcile.Bet, len(recs))
	for i, b := range recs {
		out[i] = reconcile.Bet{
			ID: b.ID, RoundID: b.RoundID, Operator: b.Operator, PlayerID: b.PlayerID, Status: b.Status,
			Amount: b.Amount, FreebetID: b.FreebetID, Payout: b.Payout, OperatorTxID: b.OperatorTxID,
		}
	}
	return out, nil
}

func (r reconcileRepo) ReconcileMovements(ctx context.Context, f reconcile.Filter) ([]reconcile.Movement, error) {
	recs, err := r.s.ReconcileMovements(ctx, filterOf(f))
	if err != nil {
		return nil, err
	}
	out := make([]reconcile.Movement, len(recs))
	for i, m := range recs {
		out[i] = reconcile.Movement{
			TransactionID: m.TransactionID, Kind: m.Kind, Operator: m.Operator, PlayerID: m.PlayerID,
			RoundID: m.RoundID, BetID: m.BetID, Amount: m.Amount, WinType: m.WinType, FreebetID: m.FreebetID,
			Status: m.Status, Attempts: m.Attempts, OperatorTxID: m.OperatorTxID, LastError: m.LastError,
		}
	}
	return out, nil
}
