package operatorapi

import (
	"context"
	"errors"

	"github.com/crashstudio/crashgame/gen/game"
	"github.com/crashstudio/crashgame/internal/launch"
)

// ListGames answers POST /v1/games for the operator that signed the request.
func (a *API) ListGames(ctx context.Context, req game.ListGamesRequestObject) (game.ListGamesResponseObject, error) {
	op := operatorFrom(ctx)
	var currency string
	if req.Body.Currency != nil {
		currency = *req.Body.Currency
	}
	c, err := a.launch.Games(op.ID, currency)
	if errors.Is(err, launch.ErrCurrencyNotServed) {
		// As /v1/launch refuses it: 400 INTERNAL_ERROR (the contract's code)
		// with error_reason CURRENCY_NOT_ENABLED, the message naming the
		// currencies enabled (docs/ambiguities.md).
		msg := err.Error()
		return game.ListGames400JSONResponse{Status: "error", ErrorCode: game.GamesBadRequestErrorErrorCodeINTERNALERROR,
			ErrorReason: ptr(game.ErrorReasonCURRENCYNOTENABLED), ErrorMessage: &msg}, nil
	}
	if err != nil {
		return nil, err
	}
	out := game.ListGames200JSONResponse{
		Status:     "ok",
		Operator:   &c.Operator,
		Currencies: c.Currencies,
		Games:      make([]game.CatalogueGame, 0, len(c.Games)),
	}
	for _, g := range c.Games {
		e := game.CatalogueGame{
			GameId: g.ID, Name: g.Name, Studio: g.Studio, Category: g.Category,
			Demo: ptr(g.Demo), Mobile: ptr(g.Mobile), Desktop: ptr(g.Desktop), Freebet: ptr(g.Freebet),
			MinBet: g.MinBet, MaxBet: g.MaxBet, MaxWin: g.MaxWin,
		}
		if g.ImageURL != "" {
			e.ImageUrl = ptr(g.ImageURL)
		}
		if g.Currency != "" {
			e.Currency = ptr(g.Currency)
		}
		out.Games = append(out.Games, e)
	}
	return out, nil
}

func ptr[T any](v T) *T { return &v }

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
