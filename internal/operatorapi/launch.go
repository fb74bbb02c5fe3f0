package operatorapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/crashstudio/crashgame/gen/game"
	"github.com/crashstudio/crashgame/internal/launch"
	"github.com/crashstudio/crashgame/internal/server"
)

// LaunchGame answers POST /v1/launch: a launch URL, or the contract's refusal.
func (a *API) LaunchGame(ctx context.Context, req game.LaunchGameRequestObject) (game.LaunchGameResponseObject, error) {
	b := req.Body
	lr := launch.Request{
		GameID: b.GameId, Token: deref(b.Token), PlayerID: deref(b.PlayerId),
		Currency: deref(b.Currency), Language: deref(b.Language), PlayerName: deref(b.PlayerName),
		Theme: deref(b.Theme), LobbyURL: deref(b.LobbyUrl), DepositURL: deref(b.DepositUrl),
		Demo: deref(b.Demo), Mobile: deref(b.Mobile),
	}
	if rg := b.ResponsibleGambling; rg != nil {
		lr.SessionClock = deref(rg.SessionClock)
		lr.RealityCheckMinutes = minutes(rg.RealityCheckMinutes)
		lr.InactivityMinutes = minutes(rg.InactivityTimeoutMinutes)
	}
	url, err := a.launch.Launch(ctx, operatorFrom(ctx).ID, lr)
	if err == nil {
		return launchOK{Status: "ok", Url: url}, nil
	}
	msg := err.Error()
	badRequest := func(code game.LaunchBadRequestErrorErrorCode) game.LaunchGameResponseObject {
		return game.LaunchGame400JSONResponse{Status: "error", ErrorCode: code, ErrorMessage: &msg}
	}
	switch {
	case errors.Is(err, launch.ErrMissingGameID):
		return badRequest("MISSING_GAME_ID"), nil
	case errors.Is(err, launch.ErrGameNotFound):
		return game.LaunchGame404JSONResponse{Status: "error", ErrorCode: "GAME_NOT_FOUND", ErrorMessage: &msg}, nil
	case errors.Is(err, launch.ErrDemoNotAvailable):
		return badRequest("DEMO_NOT_AVAILABLE"), nil
	case errors.Is(err, launch.ErrMissingToken):
		return badRequest("MISSING_TOKEN"), nil
	case errors.Is(err, launch.ErrMissingPlayerID):
		return badRequest("MISSING_PLAYER_ID"), nil
	case errors.Is(err, launch.ErrInvalidToken):
		return badRequest("INVALID_TOKEN"), nil
	case errors.Is(err, launch.ErrCurrencyNotServed):
		// The contract's code, and the refusal's stable name beside it
		// (docs/ambiguities.md): the contract fixes this route's codes.
		return game.LaunchGame400JSONResponse{Status: "error", ErrorCode: game.LaunchBadRequestErrorErrorCodeINTERNALERROR,
			ErrorReason: ptr(game.ErrorReasonCURRENCYNOTENABLED), ErrorMessage: &msg}, nil
	case errors.Is(err, launch.ErrNoWallet), errors.Is(err, launch.ErrInvalidField):
		// The contract has no code for these; 400 INTERNAL_ERROR is its code for a
		// request that cannot be served as sent, and the message says why.
		return badRequest("INTERNAL_ERROR"), nil
	}
	id := server.RequestID(ctx)
	a.logger.ErrorContext(ctx, "launch failed", "request_id", id, "operator", operatorFrom(ctx).ID, "err", err)
	return game.LaunchGame500JSONResponse{Status: "error", ErrorCode: "INTERNAL_ERROR", RequestId: &id}, nil
}

// minutes widens an optional minutes field for package launch, which checks
// its range.
func minutes(v *int32) *int {
	if v == nil {
		return nil
	}
	n := int(*v)
	return &n
}

// launchOK is the 200 answer, encoded without HTML escaping so that the URL's
// "&" reads as "&" to a person with curl (the generated encoder writes \u0026).
type launchOK game.LaunchResponse

func (r launchOK) VisitLaunchGameResponse(w http.ResponseWriter) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(game.LaunchResponse(r)); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, err := buf.WriteTo(w)
	return err
}
