package operatorapi

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/crashstudio/crashgame/gen/game"
	"github.com/crashstudio/crashgame/internal/backoffice"
)

// GetRoundDetails answers POST /v1/rounds/details: a round of the
// operator's games, its outcome once revealed, and the operator's bets in
// it with their wallet calls.
func (a *API) GetRoundDetails(ctx context.Context, req game.GetRoundDetailsRequestObject) (game.GetRoundDetailsResponseObject, error) {
	op := operatorFrom(ctx)
	b := req.Body
	player := ""
	if b.PlayerId != nil {
		player = *b.PlayerId
	}
	round, bets, err := a.backoffice.RoundDetails(ctx, op.ID, b.RoundId, player)
	switch {
	case errors.Is(err, backoffice.ErrRoundNotFound):
		msg := fmt.Sprintf("no round %q in the games of operator %q", b.RoundId, op.ID)
		return game.GetRoundDetails404JSONResponse{Status: "error", ErrorCode: game.BackOfficeNotFoundErrorErrorCodeROUNDNOTFOUND, ErrorMessage: &msg}, nil
	case errors.Is(err, backoffice.ErrPlayerNotFound):
		msg := fmt.Sprintf("operator %q has no bet of player %q in round %q", op.ID, player, b.RoundId)
		return game.GetRoundDetails404JSONResponse{Status: "error", ErrorCode: game.BackOfficeNotFoundErrorErrorCodeROUNDNOTFOUND, ErrorMessage: &msg}, nil
	case err != nil:
		return nil, err
	}
	out := game.GetRoundDetails200JSONResponse{Status: "ok", Round: roundOf(round), Bets: betsOf(bets)}
	return out, nil
}

// GetBetHistory answers POST /v1/bets/history: a page of a player's bets.
func (a *API) GetBetHistory(ctx context.Context, req game.GetBetHistoryRequestObject) (game.GetBetHistoryResponseObject, error) {
	op := operatorFrom(ctx)
	b := req.Body
	q := backoffice.HistoryQuery{Operator: op.ID, PlayerID: b.PlayerId, From: time.UnixMilli(b.From), To: time.UnixMilli(b.To)}
	if b.Cursor != nil {
		q.Cursor = *b.Cursor
	}
	if b.Limit != nil {
		q.Limit = int(*b.Limit)
		if q.Limit == 0 {
			q.Limit = -1 // out of range, as the document says
		}
	}
	bets, next, err := a.backoffice.BetHistory(ctx, q, a.now())
	switch {
	case errors.Is(err, backoffice.ErrInvalidQuery):
		msg := err.Error()
		return game.GetBetHistory400JSONResponse{Status: "error", ErrorCode: game.BackOfficeBadRequestErrorErrorCodeINVALIDQUERY, ErrorMessage: &msg}, nil
	case err != nil:
		return nil, err
	}
	out := game.GetBetHistory200JSONResponse{Status: "ok", Items: betsOf(bets)}
	if next != "" {
		out.NextCursor = &next
	}
	return out, nil
}

func roundOf(r backoffice.Round) game.BackOfficeRound {
	out := game.BackOfficeRound{RoundId: r.ID, GameId: r.GameID, Seq: r.Seq, Status: game.BackOfficeRoundStatus(r.Status),
		BettingEndsAt: r.BettingEndsAt.UnixMilli(), Phases: make([]game.RoundPhase, len(r.Phases))}
	for i, p := range r.Phases {
		out.Phases[i] = game.RoundPhase{Phase: game.RoundPhasePhase(p.Name), At: p.At.UnixMilli()}
	}
	if r.ChainID != "" {
		out.ChainId, out.Position = &r.ChainID, &r.Position
	}
	if r.Hash != "" {
		out.Hash, out.CrashPoint = &r.Hash, &r.CrashPoint
	}
	if r.Salt != "" {
		out.Salt = &r.Salt
	}
	return out
}

func betsOf(bets []backoffice.Bet) []game.BackOfficeBet {
	out := make([]game.BackOfficeBet, len(bets))
	for i, b := range bets {
		g := game.BackOfficeBet{BetId: b.ID, RoundId: b.RoundID, PlayerId: b.PlayerID, Currency: b.Currency, Amount: b.Amount,
			FreebetId: b.FreebetID, Status: game.BackOfficeBetStatus(b.Status), PlacedAt: int64(b.PlacedAt),
			Movements: make([]game.BetMovement, len(b.Movements))}
		if b.AutoCashout != 0 {
			g.AutoCashout = &b.AutoCashout
		}
		if b.Multiplier != 0 {
			g.Multiplier = &b.Multiplier
		}
		g.Payout = b.Payout
		if b.Refusal != "" {
			g.Refusal = &b.Refusal
		}
		if b.SettledAt != 0 {
			at := int64(b.SettledAt)
			g.SettledAt = &at
		}
		for j, m := range b.Movements {
			g.Movements[j] = movementOf(m)
		}
		out[i] = g
	}
	return out
}

func movementOf(m backoffice.Movement) game.BetMovement {
	out := game.BetMovement{TransactionId: m.TransactionID, Kind: game.BetMovementKind(m.Kind), Amount: m.Amount,
		Status: game.BetMovementStatus(m.Status), Attempts: int32(m.Attempts), CreatedAt: m.CreatedAt.UnixMilli(),
		Redeliveries: make([]game.Redelivery, len(m.Redeliveries))}
	if m.OperatorTxID != "" {
		out.OperatorTransactionId = &m.OperatorTxID
	}
	if m.LastError != "" {
		out.LastError = &m.LastError
	}
	if m.WinType != "" {
		wt := game.BetMovementWinType(m.WinType)
		out.WinType = &wt
	}
	if m.Reason != "" {
		out.Reason = &m.Reason
	}
	if !m.DeliveredAt.IsZero() {
		at := m.DeliveredAt.UnixMilli()
		out.DeliveredAt = &at
	}
	for i, r := range m.Redeliveries {
		out.Redeliveries[i] = redeliveryOf(r)
	}
	return out
}
