//go:build ignore

// Command oapicodegenwallet is a seamless wallet generated with oapi-codegen
// (strict server) from api/wallet.v1.yaml and wired the way
// docs/integrators.md section 5 says: the signature checked over the raw
// bytes first, then kin-openapi's request validator (oapi-codegen's strict
// server validates nothing the Go types can hold: without it, a negative
// amount would reach the money rules), then the generated server, every
// refusal in the contract's error shape, unknown fields accepted. Its money
// rules are docs/examples/walletledger's, for one test player in memory: it
// exists to show that the guide leads to a wallet `crashgame wallet-check`
// passes (make toolchain runs both), not to hold anyone's money.
//
// It imports the generated package, the guide's wiring and the ledger as
// example.com/operator/walletapi, example.com/operator/oapiwiring and
// example.com/operator/walletledger: the module docs/integrators.md builds,
// with this file as cmd/oapicodegenwallet/main.go. The ignore constraint
// keeps it out of the game's module; make toolchain drops it.
//
// The credentials come from the environment: OAPICODEGENWALLET_SECRET,
// OAPICODEGENWALLET_API_KEY, OAPICODEGENWALLET_SECOND_API_KEY,
// OAPICODEGENWALLET_TOKEN and OAPICODEGENWALLET_EXPIRED_TOKEN. It prints the
// address it listens on, then serves.
package main

import (
	"context"
	"fmt"
	"net/http"

	"example.com/operator/oapiwiring"
	"example.com/operator/walletapi"
	"example.com/operator/walletledger"
)

func main() {
	walletledger.Serve("OAPICODEGENWALLET", func(l *walletledger.Ledger, secrets map[string][]byte, apiKeys []string) (http.Handler, error) {
		return oapiwiring.NewWallet(wallet{ledger: l}, secrets, apiKeys)
	})
}

// wallet is oapi-codegen's StrictServerInterface over the ledger: it turns
// each generated request into the ledger's plain types, and the ledger's
// answer into the generated answer of the status the contract lists. The
// validator in front has checked the body against api/wallet.v1.yaml
// (amounts are Cents, minimum 0; freebet_id is present on /bet and /win, so
// a nil FreebetId here is a null one).
type wallet struct {
	ledger *walletledger.Ledger
}

func (w wallet) Balance(_ context.Context, req walletapi.BalanceRequestObject) (walletapi.BalanceResponseObject, error) {
	s := w.ledger.Balance(req.Body.Token)
	if !s.OK() {
		return walletapi.Balance401JSONResponse(refusal(s.Code, "", nil)), nil
	}
	grants := make([]walletapi.FreebetGrant, 0, len(s.Grants))
	for _, g := range s.Grants {
		grants = append(grants, walletapi.FreebetGrant{Id: g.ID, Amount: g.Amount})
	}
	var res walletapi.BalanceResult
	err := res.FromBalanceSuccess(walletapi.BalanceSuccess{
		Status: walletapi.BalanceSuccessStatus("ok"), PlayerId: s.PlayerID, Balance: s.Balance,
		Currency: s.Currency, Freebets: &grants,
	})
	if err != nil {
		return nil, fmt.Errorf("encode the balance: %w", err)
	}
	return walletapi.Balance200JSONResponse(res), nil
}

func (w wallet) Bet(_ context.Context, req walletapi.BetRequestObject) (walletapi.BetResponseObject, error) {
	b := req.Body
	a := w.ledger.Bet(walletledger.Bet{
		Token: b.Token, PlayerID: b.PlayerId, Currency: b.Currency, Amount: b.Amount,
		TransactionID: b.TransactionId, RoundID: b.RoundId, FreebetID: b.FreebetId,
	})
	switch a.HTTPStatus {
	case http.StatusConflict:
		return walletapi.Bet409JSONResponse(refusal(a.Code, a.Message, nil)), nil
	case http.StatusBadRequest:
		return walletapi.Bet400JSONResponse(refusal(a.Code, a.Message, nil)), nil
	}
	res, err := result(a)
	return walletapi.Bet200JSONResponse(res), err
}

func (w wallet) Win(_ context.Context, req walletapi.WinRequestObject) (walletapi.WinResponseObject, error) {
	b := req.Body
	a := w.ledger.Win(walletledger.Win{
		Token: b.Token, PlayerID: b.PlayerId, Currency: b.Currency, Amount: b.Amount,
		TransactionID: b.TransactionId, BetID: b.BetId, RoundID: b.RoundId, Type: string(b.Type),
		FreebetID: b.FreebetId,
	})
	switch a.HTTPStatus {
	case http.StatusNotFound:
		return walletapi.Win404JSONResponse(refusal(a.Code, a.Message, nil)), nil
	case http.StatusBadRequest:
		return walletapi.Win400JSONResponse(refusal(a.Code, a.Message, nil)), nil
	}
	res, err := result(a)
	return walletapi.Win200JSONResponse(res), err
}

func (w wallet) Rollback(_ context.Context, req walletapi.RollbackRequestObject) (walletapi.RollbackResponseObject, error) {
	b := req.Body
	a := w.ledger.Rollback(walletledger.Rollback{
		Token: b.Token, PlayerID: b.PlayerId, Currency: b.Currency, Amount: b.Amount,
		TransactionID: b.TransactionId, BetID: b.BetId, RoundID: b.RoundId,
	})
	if a.HTTPStatus == http.StatusBadRequest {
		return walletapi.Rollback400JSONResponse(refusal(a.Code, a.Message, nil)), nil
	}
	res, err := result(a)
	return walletapi.Rollback200JSONResponse(res), err
}

// result is the HTTP 200 body of a movement: success, or a refusal with the
// current balance.
func result(a walletledger.Answer) (walletapi.MovementResult, error) {
	var res walletapi.MovementResult
	var err error
	if a.OK() {
		err = res.FromWalletSuccess(walletapi.WalletSuccess{
			Status: walletapi.WalletSuccessStatus("ok"), Balance: a.Balance,
			Currency: &a.Currency, PlayerId: &a.PlayerID, TransactionId: &a.TransactionID,
		})
	} else {
		err = res.FromWalletError(refusal(a.Code, a.Message, &a.Balance))
	}
	if err != nil {
		return res, fmt.Errorf("encode the answer: %w", err)
	}
	return res, nil
}

// refusal is the contract's error body; balance is left out when nil.
func refusal(code, message string, balance *int64) walletapi.WalletError {
	e := walletapi.WalletError{Status: walletapi.WalletErrorStatus("error"), ErrorCode: code, Balance: balance}
	if message != "" {
		e.ErrorMessage = &message
	}
	return e
}
