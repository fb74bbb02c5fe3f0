//go:build ignore

// Command ogenwallet is a seamless wallet generated with ogen from
// api/wallet.v1.yaml and wired the way docs/integrators.md says: the
// signature checked in a middleware over the raw bytes, the contract's error
// shape for what the generated server cannot decode, unknown fields accepted.
// Its money rules are docs/examples/walletledger's, for one test player in
// memory: it exists to show that the guide leads to a wallet `crashgame
// wallet-check` passes (make toolchain runs both), not to hold anyone's money.
//
// It imports the generated package, the guide's snippets and the ledger as
// example.com/operator/walletv1, example.com/operator/ogenwiring and
// example.com/operator/walletledger: the module docs/integrators.md builds,
// with this file as cmd/ogenwallet/main.go. The ignore constraint keeps it out of
// the game's module; make toolchain drops it.
package main

import (
	"context"
	"net/http"

	"example.com/operator/ogenwiring"
	"example.com/operator/walletledger"
	"example.com/operator/walletv1"
)

func main() {
	walletledger.Serve("OGENWALLET", func(l *walletledger.Ledger, secrets map[string][]byte, apiKeys []string) (http.Handler, error) {
		return ogenwiring.NewWallet(wallet{ledger: l}, secrets, apiKeys)
	})
}

// wallet is ogen's Handler over the ledger: it turns each generated request
// into the ledger's plain types, and the ledger's answer into the generated
// answer of the status the contract lists. The generated server has
// validated the body against api/wallet.v1.yaml before (amounts are Cents,
// minimum 0; freebet_id is present on /bet and /win).
type wallet struct {
	ledger *walletledger.Ledger
}

func (w wallet) Balance(_ context.Context, req *walletv1.BalanceRequest) (walletv1.BalanceRes, error) {
	s := w.ledger.Balance(req.Token)
	if !s.OK() {
		return &walletv1.BalanceUnauthorized{Status: walletv1.WalletErrorStatusError, ErrorCode: walletv1.ErrorCode(s.Code)}, nil
	}
	grants := make([]walletv1.FreebetGrant, 0, len(s.Grants))
	for _, g := range s.Grants {
		grants = append(grants, walletv1.FreebetGrant{ID: g.ID, Amount: g.Amount})
	}
	res := walletv1.NewBalanceSuccessBalanceResult(walletv1.BalanceSuccess{
		Status: walletv1.BalanceSuccessStatusOk, PlayerID: s.PlayerID, Balance: walletv1.Cents(s.Balance),
		Currency: walletv1.Currency(s.Currency), Freebets: grants,
	})
	return &res, nil
}

func (w wallet) Bet(_ context.Context, req *walletv1.BetRequest) (walletv1.BetRes, error) {
	a := w.ledger.Bet(walletledger.Bet{
		Token: req.Token, PlayerID: req.PlayerID, Currency: string(req.Currency), Amount: int64(req.Amount),
		TransactionID: req.TransactionID, RoundID: req.RoundID, FreebetID: optional(req.FreebetID),
	})
	switch a.HTTPStatus {
	case http.StatusConflict:
		return &walletv1.BetConflict{Status: walletv1.WalletErrorStatusError, ErrorCode: walletv1.ErrorCode(a.Code),
			ErrorMessage: walletv1.NewOptString(a.Message)}, nil
	case http.StatusBadRequest:
		return &walletv1.BetBadRequest{Status: walletv1.WalletErrorStatusError, ErrorCode: walletv1.ErrorCode(a.Code),
			ErrorMessage: walletv1.NewOptString(a.Message)}, nil
	}
	res := result(a)
	return &res, nil
}

func (w wallet) Win(_ context.Context, req *walletv1.WinRequest) (walletv1.WinRes, error) {
	a := w.ledger.Win(walletledger.Win{
		Token: req.Token, PlayerID: req.PlayerID, Currency: string(req.Currency), Amount: int64(req.Amount),
		TransactionID: req.TransactionID, BetID: req.BetID, RoundID: req.RoundID, Type: string(req.Type),
		FreebetID: optional(req.FreebetID),
	})
	switch a.HTTPStatus {
	case http.StatusNotFound:
		return &walletv1.WinNotFound{Status: walletv1.WalletErrorStatusError, ErrorCode: walletv1.ErrorCode(a.Code),
			ErrorMessage: walletv1.NewOptString(a.Message)}, nil
	case http.StatusBadRequest:
		return &walletv1.WinBadRequest{Status: walletv1.WalletErrorStatusError, ErrorCode: walletv1.ErrorCode(a.Code),
			ErrorMessage: walletv1.NewOptString(a.Message)}, nil
	}
	res := result(a)
	return &res, nil
}

func (w wallet) Rollback(_ context.Context, req *walletv1.RollbackRequest) (walletv1.RollbackRes, error) {
	a := w.ledger.Rollback(walletledger.Rollback{
		Token: req.Token, PlayerID: req.PlayerID, Currency: string(req.Currency), Amount: int64(req.Amount),
		TransactionID: req.TransactionID, BetID: req.BetID, RoundID: req.RoundID,
	})
	if a.HTTPStatus == http.StatusBadRequest {
		return &walletv1.RollbackBadRequest{Status: walletv1.WalletErrorStatusError, ErrorCode: walletv1.ErrorCode(a.Code),
			ErrorMessage: walletv1.NewOptString(a.Message)}, nil
	}
	res := result(a)
	return &res, nil
}

// result is the HTTP 200 body of a movement: success, or a refusal with the
// current balance.
func result(a walletledger.Answer) walletv1.MovementResult {
	if a.OK() {
		return walletv1.NewWalletSuccessMovementResult(walletv1.WalletSuccess{
			Status: walletv1.WalletSuccessStatusOk, Balance: walletv1.Cents(a.Balance),
			Currency: walletv1.NewOptCurrency(walletv1.Currency(a.Currency)), PlayerID: walletv1.NewOptString(a.PlayerID),
			TransactionID: walletv1.NewOptString(a.TransactionID),
		})
	}
	return walletv1.NewWalletErrorMovementResult(walletv1.WalletError{
		Status: walletv1.WalletErrorStatusError, ErrorCode: walletv1.ErrorCode(a.Code),
		ErrorMessage: walletv1.NewOptString(a.Message), Balance: walletv1.NewOptCents(walletv1.Cents(a.Balance)),
	})
}

// optional is a nullable freebet_id as the ledger takes it: nil for null.
func optional(id walletv1.NilString) *string {
	if id.Null {
		return nil
	}
	return &id.Value
}
