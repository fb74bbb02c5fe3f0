package operatorapi

import (
	"context"
	"errors"
	"fmt"

	"github.com/crashstudio/crashgame/gen/game"
	"github.com/crashstudio/crashgame/internal/backoffice"
	"github.com/crashstudio/crashgame/internal/movements"
)

// ListTransactions answers POST /v1/transactions: a page of the signing
// operator's transactions.
func (a *API) ListTransactions(ctx context.Context, req game.ListTransactionsRequestObject) (game.ListTransactionsResponseObject, error) {
	op := operatorFrom(ctx)
	b := req.Body
	p := pageOf(b.From, b.To, b.Status, b.Cursor, b.Limit)
	q := backoffice.TransactionQuery{Operator: op.ID, From: p.from, To: p.to, Status: p.status, Cursor: p.cursor, Limit: p.limit}
	page, next, err := backoffice.Transactions(ctx, a.movements, q, a.now())
	switch {
	case errors.Is(err, backoffice.ErrInvalidQuery):
		return invalidQuery(err.Error()), nil
	case err != nil:
		return nil, err
	}
	out := game.ListTransactions200JSONResponse{Status: "ok", Items: make([]game.Transaction, len(page))}
	for i := range page {
		out.Items[i] = transactionOf(page[i])
	}
	if next != "" {
		out.NextCursor = &next
	}
	return out, nil
}

func invalidQuery(msg string) game.ListTransactions400JSONResponse {
	return game.ListTransactions400JSONResponse{Status: "error", ErrorCode: game.BackOfficeBadRequestErrorErrorCodeINVALIDQUERY, ErrorMessage: &msg}
}

// RedeliverTransaction answers POST /v1/transactions/redeliver.
func (a *API) RedeliverTransaction(ctx context.Context, req game.RedeliverTransactionRequestObject) (game.RedeliverTransactionResponseObject, error) {
	op := operatorFrom(ctx)
	id := req.Body.TransactionId
	rec, again, err := movements.Redeliver(ctx, a.redeliver, id, op.ID, "operator:"+op.ID, a.now())
	switch {
	case errors.Is(err, movements.ErrMovementNotFound):
		msg := fmt.Sprintf("no transaction %q of operator %q", id, op.ID)
		return game.RedeliverTransaction404JSONResponse{Status: "error", ErrorCode: game.BackOfficeNotFoundErrorErrorCodeTRANSACTIONNOTFOUND, ErrorMessage: &msg}, nil
	case errors.Is(err, movements.ErrNotRedeliverable):
		msg := fmt.Sprintf("transaction %q was refused by the wallet; only an exhausted transaction is delivered again", id)
		return game.RedeliverTransaction409JSONResponse{Status: "error", ErrorCode: game.BackOfficeConflictErrorErrorCodeTRANSACTIONREFUSED, ErrorMessage: &msg}, nil
	case err != nil:
		return nil, err
	}
	hist, err := a.movements.RedeliveriesOf(ctx, []string{id})
	if err != nil {
		return nil, err
	}
	if again {
		a.logger.InfoContext(ctx, "transaction delivered again at the operator's request", "operator", op.ID, "transaction_id", id)
	}
	return game.RedeliverTransaction200JSONResponse{Status: "ok", Redelivered: again,
		Transaction: transactionOf(backoffice.Transaction{MovementRecord: rec, Redeliveries: hist[id]})}, nil
}

// transactionOf is a movement as the back office shows it.
func transactionOf(t backoffice.Transaction) game.Transaction {
	out := game.Transaction{
		TransactionId: t.TransactionID, Kind: game.TransactionKind(t.Kind), Status: game.TransactionStatus(backoffice.TransactionStatus(t.Status)),
		Amount: t.Amount, Currency: t.Currency, PlayerId: t.PlayerID, GameId: t.GameID, RoundId: t.RoundID, BetId: t.BetID,
		FreebetId: t.FreebetID, Attempts: backoffice.PublishedAttempts(t.Attempts), LastError: &t.LastError, CreatedAt: t.CreatedAt.UnixMilli(),
		Redeliveries: backoffice.PublishedRedeliveries(t.Redeliveries),
	}
	if t.WinType != "" {
		wt := game.TransactionWinType(t.WinType)
		out.WinType = &wt
	}
	if t.Reason != "" {
		out.Reason = &t.Reason
	}
	if t.OperatorTxID != "" {
		out.OperatorTransactionId = &t.OperatorTxID
	}
	if t.Status == movements.StatusDone && !t.DoneAt.IsZero() {
		at := t.DoneAt.UnixMilli()
		out.DeliveredAt = &at
	}
	return out
}
