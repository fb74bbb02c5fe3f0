package operatorapi

import (
	"context"
	"errors"
	"fmt"

	"github.com/crashstudio/crashgame/gen/game"
	"github.com/crashstudio/crashgame/internal/backoffice"
)

// Paths of the pages and files the back office's links open, on the
// installation's public address (served by package table).
const (
	SupportPagePath = "/support/rounds/"
	ExportPath      = "/exports/transactions/"
)

// CreateRoundSupportLink answers POST /v1/rounds/support-link.
func (a *API) CreateRoundSupportLink(ctx context.Context, req game.CreateRoundSupportLinkRequestObject) (game.CreateRoundSupportLinkResponseObject, error) {
	op := operatorFrom(ctx)
	b := req.Body
	player := ""
	if b.PlayerId != nil {
		player = *b.PlayerId
	}
	token, expires, err := a.backoffice.RoundLink(ctx, op.ID, b.RoundId, player, a.now())
	switch {
	case errors.Is(err, backoffice.ErrRoundNotFound), errors.Is(err, backoffice.ErrPlayerNotFound):
		msg := fmt.Sprintf("no round %q in the games of operator %q", b.RoundId, op.ID)
		if player != "" {
			msg = fmt.Sprintf("operator %q has no bet of player %q in round %q", op.ID, player, b.RoundId)
		}
		return game.CreateRoundSupportLink404JSONResponse{Status: "error", ErrorCode: game.BackOfficeNotFoundErrorErrorCodeROUNDNOTFOUND, ErrorMessage: &msg}, nil
	case err != nil:
		return nil, err
	}
	a.logger.InfoContext(ctx, "support link made", "operator", op.ID, "round_id", b.RoundId)
	return game.CreateRoundSupportLink200JSONResponse{Status: "ok", Url: a.baseURL + SupportPagePath + token, ExpiresAt: expires.UnixMilli()}, nil
}

// CreateTransactionsExport answers POST /v1/transactions/export.
func (a *API) CreateTransactionsExport(ctx context.Context, req game.CreateTransactionsExportRequestObject) (game.CreateTransactionsExportResponseObject, error) {
	op := operatorFrom(ctx)
	b := req.Body
	p := pageOf(b.From, b.To, b.Status, nil, nil)
	q := backoffice.TransactionQuery{Operator: op.ID, From: p.from, To: p.to, Status: p.status}
	token, expires, err := a.backoffice.TransactionsLink(ctx, q, a.now())
	switch {
	case errors.Is(err, backoffice.ErrInvalidQuery):
		msg := err.Error()
		return game.CreateTransactionsExport400JSONResponse{Status: "error", ErrorCode: game.BackOfficeBadRequestErrorErrorCodeINVALIDQUERY, ErrorMessage: &msg}, nil
	case err != nil:
		return nil, err
	}
	a.logger.InfoContext(ctx, "export link made", "operator", op.ID)
	return game.CreateTransactionsExport200JSONResponse{Status: "ok", Url: a.baseURL + ExportPath + token, ExpiresAt: expires.UnixMilli()}, nil
}
