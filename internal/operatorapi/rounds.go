package operatorapi

import (
	"context"
	"errors"
	"fmt"

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
	out := game.GetRoundDetails200JSONResponse{Status: "ok", Round: backoffice.PublishedRound(round), Bets: backoffice.PublishedBets(bets)}
	return out, nil
}

// GetBetHistory answers POST /v1/bets/history: a page of a player's bets.
func (a *API) GetBetHistory(ctx context.Context, req game.GetBetHistoryRequestObject) (game.GetBetHistoryResponseObject, error) {
	op := operatorFrom(ctx)
	b := req.Body
	p := pageOf[string](b.From, b.To, nil, b.Cursor, b.Limit)
	q := backoffice.HistoryQuery{Operator: op.ID, PlayerID: b.PlayerId, From: p.from, To: p.to, Cursor: p.cursor, Limit: p.limit}
	bets, next, err := a.backoffice.BetHistory(ctx, q, a.now())
	switch {
	case errors.Is(err, backoffice.ErrInvalidQuery):
		msg := err.Error()
		return game.GetBetHistory400JSONResponse{Status: "error", ErrorCode: game.BackOfficeBadRequestErrorErrorCodeINVALIDQUERY, ErrorMessage: &msg}, nil
	case err != nil:
		return nil, err
	}
	out := game.GetBetHistory200JSONResponse{Status: "ok", Items: backoffice.PublishedBets(bets)}
	if next != "" {
		out.NextCursor = &next
	}
	return out, nil
}
