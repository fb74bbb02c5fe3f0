package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/crashstudio/crashgame/internal/backoffice"
	"github.com/crashstudio/crashgame/internal/engine"
	"github.com/crashstudio/crashgame/internal/movements"
)

// BackOffice is what package backoffice reads and writes, as it declares its
// records: it converts backoffice's own types to this package's rows and
// back, never reads a bet's session token, and maps engine.ErrRoundNotFound and
// ErrLinkNotFound to backoffice's.
func (s *Store) BackOffice() backoffice.Records { return backOfficeRepo{movementRepo{s}} }

type backOfficeRepo struct{ movementRepo }

func (r backOfficeRepo) Round(ctx context.Context, gameID, id string) (backoffice.StoredRound, error) {
	rec, err := r.s.Round(ctx, gameID, id)
	switch {
	case errors.Is(err, engine.ErrRoundNotFound):
		return backoffice.StoredRound{}, fmt.Errorf("%w (%w)", backoffice.ErrRoundNotFound, err)
	case err != nil:
		return backoffice.StoredRound{}, err
	}
	return backoffice.StoredRound{
		ID: rec.ID, GameID: rec.GameID, Seq: rec.Seq, ChainID: rec.ChainID, Position: rec.Position,
		Hash: rec.Hash, CrashPoint: rec.CrashPoint, Status: rec.Status, BettingEndsAt: rec.BettingEndsAt.Time(),
		StartedAt: rec.StartedAt.Time(), CrashedAt: rec.CrashedAt.Time(), VoidedAt: rec.VoidedAt.Time(),
		CreatedAt: rec.CreatedAt.Time(),
	}, nil
}

func (r backOfficeRepo) ChainSalt(ctx context.Context, chainID string) (string, error) {
	c, err := r.s.ChainByID(ctx, chainID)
	if err != nil {
		return "", err
	}
	if c.Salt == nil {
		return "", nil
	}
	return *c.Salt, nil
}

func (r backOfficeRepo) Bets(ctx context.Context, q backoffice.BetQuery) ([]backoffice.StoredBet, error) {
	recs, err := r.s.Bets(ctx, BetFilter{
		RoundIDs: q.RoundIDs, GameID: q.GameID, SessionHash: q.SessionHash, Operator: q.Operator, PlayerID: q.PlayerID,
		PlacedFrom: MillisOf(q.PlacedFrom), PlacedBefore: MillisOf(q.PlacedBefore),
		AfterPlaced: MillisOf(q.AfterPlaced), AfterID: q.AfterID, Limit: q.Limit,
	})
	if err != nil {
		return nil, err
	}
	out := make([]backoffice.StoredBet, len(recs))
	for i := range recs {
		b := &recs[i]
		out[i] = backoffice.StoredBet{
			ID: b.ID, RoundID: b.RoundID, GameID: b.GameID, Operator: b.Operator, PlayerID: b.PlayerID,
			PlayerName: b.PlayerName, Currency: b.Currency, Demo: b.Demo, Amount: b.Amount, AutoCashout: b.AutoCashout,
			FreebetID: b.FreebetID, Status: b.Status, Multiplier: b.Multiplier, Payout: b.Payout, Refusal: b.Refusal,
			OperatorTxID: b.OperatorTxID, PlacedAt: b.PlacedAt.Time(), SettledAt: b.SettledAt.Time(),
		}
	}
	return out, nil
}

func (r backOfficeRepo) InsertLink(ctx context.Context, l backoffice.Link) error {
	return r.s.InsertLink(ctx, LinkRecord{
		IDHash: l.IDHash, Operator: l.Operator, Kind: l.Kind, RoundID: l.RoundID, PlayerID: l.PlayerID,
		FromMS: MillisOf(l.From), ToMS: MillisOf(l.To), Status: l.Status,
		CreatedAt: MillisOf(l.CreatedAt), ExpiresAt: MillisOf(l.ExpiresAt),
	})
}

func (r backOfficeRepo) Link(ctx context.Context, idHash []byte) (backoffice.Link, error) {
	rec, err := r.s.Link(ctx, idHash)
	switch {
	case errors.Is(err, ErrLinkNotFound):
		return backoffice.Link{}, fmt.Errorf("%w (%w)", backoffice.ErrLinkNotFound, err)
	case err != nil:
		return backoffice.Link{}, err
	}
	return backoffice.Link{
		IDHash: rec.IDHash, Operator: rec.Operator, Kind: rec.Kind, RoundID: rec.RoundID, PlayerID: rec.PlayerID,
		From: rec.FromMS.Time(), To: rec.ToMS.Time(), Status: rec.Status,
		CreatedAt: rec.CreatedAt.Time(), ExpiresAt: rec.ExpiresAt.Time(),
	}, nil
}

func (r backOfficeRepo) PurgeSettled(ctx context.Context, before time.Time, limit int) (int, error) {
	return r.s.PurgeSettled(ctx, MillisOf(before), limit)
}

func (r backOfficeRepo) OperatorMovements(ctx context.Context, q backoffice.MovementQuery) ([]movements.MovementRecord, error) {
	recs, err := r.s.OperatorMovements(ctx, OperatorMovementFilter{
		Operator: q.Operator, From: MillisOf(q.From), To: MillisOf(q.To), Status: q.Status,
		AfterCreated: MillisOf(q.AfterCreated), AfterID: q.AfterID, Limit: q.Limit,
	})
	if err != nil {
		return nil, err
	}
	return movementsOf(recs), nil
}

func (r backOfficeRepo) RedeliveriesOf(ctx context.Context, ids []string) (map[string][]movements.Redelivery, error) {
	hist, err := r.s.RedeliveriesOf(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[string][]movements.Redelivery, len(hist))
	for id, rs := range hist {
		conv := make([]movements.Redelivery, len(rs))
		for i, h := range rs {
			conv[i] = movements.Redelivery{Number: h.Number, RequestedAt: h.RequestedAt.Time(), RequestedBy: h.RequestedBy,
				AttemptsBefore: h.AttemptsBefore, LastErrorBefore: h.LastErrorBefore}
		}
		out[id] = conv
	}
	return out, nil
}
