package operatorsim

import (
	"context"
	"net/http"

	"github.com/crashstudio/crashgame/gen/wallet"
)

// walletServer implements the generated wallet.StrictServerInterface: it
// hands each request to the ledger and chooses the HTTP answer of each
// outcome. The choices follow api/wallet.v1.yaml's reading of the contract:
//
//   - success: 200 status = ok with balance, currency (ENV-18), player_id and
//     the operator's own transaction_id (ENV-19); a retry with identical
//     content gets the stored bytes again (BET-8).
//   - business refusal: 200 status = error (WERR-1, AMB-1 reading A), never
//     a 5xx (WERR-21), never a 200 without status = error (WERR-4); except
//     /balance's unknown, revoked or expired token: 401 TOKEN_INVALID or
//     TOKEN_EXPIRED (BAL-7, AMB-8 reading A); /bet's divergent retry: 409
//     DUPLICATE_TRANSACTION (BET-9); /win's orphan: 404 BET_NOT_FOUND
//     (WIN-10). A fault's RefusalStatus can move these (faults.go).
//   - our own failure: 500 INTERNAL_ERROR (nothing was decided).
type walletServer struct{ s *Sim }

var _ wallet.StrictServerInterface = walletServer{}

// storedAnswer is a success body exactly as the ledger stored it, written
// byte for byte on the first answer and on every replay.
type storedAnswer []byte

func (a storedAnswer) write(w http.ResponseWriter) error {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, err := w.Write(a)
	return err
}

func (a storedAnswer) VisitBetResponse(w http.ResponseWriter) error      { return a.write(w) }
func (a storedAnswer) VisitWinResponse(w http.ResponseWriter) error      { return a.write(w) }
func (a storedAnswer) VisitRollbackResponse(w http.ResponseWriter) error { return a.write(w) }

func walletError(r *refusal) wallet.WalletError {
	e := wallet.WalletError{Status: wallet.WalletErrorStatusError, ErrorCode: r.code, Balance: r.balance}
	if r.message != "" {
		e.ErrorMessage = &r.message
	}
	return e
}

// movementRefusal is a refusal in the 200 body of /bet, /win or /rollback.
func movementRefusal(r *refusal) (wallet.MovementResult, error) {
	var res wallet.MovementResult
	err := res.FromWalletError(walletError(r))
	return res, err
}

func (ws walletServer) log(ctx context.Context, route, requestID, transactionID string, out *outcome) {
	attrs := []any{"route", route, "request_id", requestID, "transaction_id", transactionID}
	switch {
	case out.refused != nil:
		attrs = append(attrs, "result", "error", "error_code", out.refused.code, "error_message", out.refused.message)
	default:
		attrs = append(attrs, "result", "ok", "operator_transaction_id", out.operatorTx, "replayed", out.replayed)
	}
	ws.s.logger.InfoContext(ctx, "operator-sim: wallet call", attrs...)
}

// Balance resolves the session (BAL-7, BAL-8, FB-18).
func (ws walletServer) Balance(ctx context.Context, req wallet.BalanceRequestObject) (wallet.BalanceResponseObject, error) {
	ans, err := ws.s.ledger.Balance(ctxWithoutCancel(ctx), req.Body.Token)
	if err != nil {
		return nil, err
	}
	if r := ans.refused; r != nil {
		ws.s.logger.InfoContext(ctx, "operator-sim: wallet call", "route", "balance", "request_id", req.Body.RequestId,
			"result", "error", "error_code", r.code)
		if (r.code == codeTokenInvalid || r.code == codeTokenExpired) && refusalStatusFrom(ctx) != RefusalsAs200 {
			return wallet.Balance401JSONResponse(walletError(r)), nil
		}
		var res wallet.BalanceResult
		if err := res.FromWalletError(walletError(r)); err != nil {
			return nil, err
		}
		return wallet.Balance200JSONResponse(res), nil
	}
	ws.s.logger.InfoContext(ctx, "operator-sim: wallet call", "route", "balance", "request_id", req.Body.RequestId, "result", "ok")
	var res wallet.BalanceResult
	if err := res.FromBalanceSuccess(*ans.success); err != nil {
		return nil, err
	}
	return wallet.Balance200JSONResponse(res), nil
}

// Bet debits a stake (BET-3..11).
func (ws walletServer) Bet(ctx context.Context, req wallet.BetRequestObject) (wallet.BetResponseObject, error) {
	out, err := ws.s.ledger.Bet(ctxWithoutCancel(ctx), req.Body)
	if err != nil {
		return nil, err
	}
	ws.log(ctx, "bet", req.Body.RequestId, req.Body.TransactionId, out)
	r := out.refused
	if r == nil {
		return storedAnswer(out.body), nil
	}
	mode := refusalStatusFrom(ctx)
	switch {
	case out.badRequest:
		return wallet.Bet400JSONResponse(walletError(r)), nil
	case r.code == codeDuplicateTransaction && mode != RefusalsAs200:
		return wallet.Bet409JSONResponse(walletError(r)), nil
	case r.code == codeInsufficientFunds && mode == RefusalsAs4xx:
		return wallet.Bet402JSONResponse(walletError(r)), nil
	case r.code == codeTokenExpired && mode == RefusalsAs4xx:
		return wallet.Bet409JSONResponse(walletError(r)), nil
	}
	res, err := movementRefusal(r)
	if err != nil {
		return nil, err
	}
	return wallet.Bet200JSONResponse(res), nil
}

// Win credits a prize (WIN-7, WIN-10, WIN-11, WIN-13..15).
func (ws walletServer) Win(ctx context.Context, req wallet.WinRequestObject) (wallet.WinResponseObject, error) {
	out, err := ws.s.ledger.Win(ctxWithoutCancel(ctx), req.Body)
	if err != nil {
		return nil, err
	}
	ws.log(ctx, "win", req.Body.RequestId, req.Body.TransactionId, out)
	r := out.refused
	if r == nil {
		return storedAnswer(out.body), nil
	}
	switch {
	case out.badRequest:
		return wallet.Win400JSONResponse(walletError(r)), nil
	case r.code == codeBetNotFound && refusalStatusFrom(ctx) != RefusalsAs200:
		return wallet.Win404JSONResponse(walletError(r)), nil
	}
	res, err := movementRefusal(r)
	if err != nil {
		return nil, err
	}
	return wallet.Win200JSONResponse(res), nil
}

// Rollback undoes a debit (RB-8..13). Every refusal is HTTP 200: the route
// lists no 4xx but 400 and 401 (AMB-11).
func (ws walletServer) Rollback(ctx context.Context, req wallet.RollbackRequestObject) (wallet.RollbackResponseObject, error) {
	out, err := ws.s.ledger.Rollback(ctxWithoutCancel(ctx), req.Body)
	if err != nil {
		return nil, err
	}
	ws.log(ctx, "rollback", req.Body.RequestId, req.Body.TransactionId, out)
	r := out.refused
	if r == nil {
		return storedAnswer(out.body), nil
	}
	if out.badRequest {
		return wallet.Rollback400JSONResponse(walletError(r)), nil
	}
	res, err := movementRefusal(r)
	if err != nil {
		return nil, err
	}
	return wallet.Rollback200JSONResponse(res), nil
}

// requestError answers a body the generated decoder could not read (the
// validator normally refuses it first).
func (s *Sim) requestError(w http.ResponseWriter, r *http.Request, err error) {
	writeWalletError(w, malformedStatus(r.URL.Path), codeInternalError, "malformed body: "+err.Error(), nil)
}

// responseError answers a failure of ours. Nothing of the movement was
// committed (it commits with its answer or not at all), so the game may
// retry; the cause goes to our log only.
func (s *Sim) responseError(w http.ResponseWriter, r *http.Request, err error) {
	s.logger.ErrorContext(r.Context(), "operator-sim: wallet route failed", "route", r.URL.Path, "err", err)
	writeWalletError(w, http.StatusInternalServerError, codeInternalError, "operator-sim failed", nil)
}
