//go:build ignore

// Command ogenwallet is a seamless wallet generated with ogen from
// api/wallet.v1.yaml and wired the way docs/integrators.md says: the
// signature checked in a middleware over the raw bytes, the contract's error
// shape for what the generated server cannot decode, unknown fields accepted.
// Its money rules keep one test player in memory: it exists to show that the
// guide leads to a wallet `crashgame wallet-check` passes (make toolchain
// runs both), not to hold anyone's money.
//
// It imports the generated package and the guide's snippets as
// example.com/operator/walletv1 and example.com/operator/integrator: make
// toolchain generates and places them, and replaces that module path. The
// ignore constraint keeps it out of the game's module; make toolchain drops it.
package main

import (
	"context"
	"crypto/sha256"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"

	"example.com/operator/integrator"
	"example.com/operator/walletv1"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to serve on; the address taken is printed")
	operator := flag.String("operator", "acme", "the operator (brand) served")
	player := flag.String("player", "p-1", "the test player's id")
	currency := flag.String("currency", "BRL", "the player's currency")
	balance := flag.Int64("balance", 100_000, "the player's balance in cents")
	freebet := flag.String("freebet-id", "fb-1", "an open grant of the player")
	freebetAmount := flag.Int64("freebet-amount", 100, "the grant's value in cents")
	flag.Parse()
	// The credentials come from the environment, never the command line.
	env := func(name string) string {
		v := os.Getenv(name)
		if v == "" {
			log.Fatalf("ogenwallet: %s is not set", name)
		}
		return v
	}
	w := &wallet{
		player: *player, currency: *currency, balance: *balance,
		token: env("OGENWALLET_TOKEN"), expired: env("OGENWALLET_EXPIRED_TOKEN"),
		grants: map[string]int64{*freebet: *freebetAmount},
		txs:    map[string]movement{}, bets: map[string]*bet{},
	}
	h, err := integrator.NewWallet(w, map[string][]byte{*operator: []byte(env("OGENWALLET_SECRET"))},
		[]string{env("OGENWALLET_API_KEY"), env("OGENWALLET_SECOND_API_KEY")})
	if err != nil {
		log.Fatalf("ogenwallet: %v", err)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatalf("ogenwallet: %v", err)
	}
	fmt.Println(ln.Addr().String())
	log.Fatal(http.Serve(ln, h))
}

// wallet holds one player's money; every movement is kept by its
// transaction_id so that a retry gets the same answer.
type wallet struct {
	mu       sync.Mutex
	player   string
	currency string
	balance  int64
	token    string // live session token
	expired  string // an expired session token of the player
	grants   map[string]int64
	txs      map[string]movement // by the game's transaction_id
	bets     map[string]*bet     // debits, by transaction_id
	next     int                 // the wallet's own transaction ids
}

// movement is a movement as recorded: what identifies its content, and the
// answer given.
type movement struct {
	digest [32]byte
	answer walletv1.MovementResult
}

// bet is a debit and how it ended.
type bet struct {
	amount  int64
	freebet string // "" for an ordinary bet
	settled string // "", "win" or "rollback"
}

func (w *wallet) Balance(_ context.Context, req *walletv1.BalanceRequest) (walletv1.BalanceRes, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch req.Token {
	case w.token:
	case w.expired:
		return &walletv1.BalanceUnauthorized{Status: walletv1.WalletErrorStatusError, ErrorCode: "TOKEN_EXPIRED"}, nil
	default:
		return &walletv1.BalanceUnauthorized{Status: walletv1.WalletErrorStatusError, ErrorCode: "TOKEN_INVALID"}, nil
	}
	grants := make([]walletv1.FreebetGrant, 0, len(w.grants))
	for id, amount := range w.grants {
		grants = append(grants, walletv1.FreebetGrant{ID: id, Amount: amount})
	}
	res := walletv1.NewBalanceSuccessBalanceResult(walletv1.BalanceSuccess{
		Status: walletv1.BalanceSuccessStatusOk, PlayerID: w.player, Balance: walletv1.Cents(w.balance),
		Currency: walletv1.Currency(w.currency), Freebets: grants,
	})
	return &res, nil
}

func (w *wallet) Bet(_ context.Context, req *walletv1.BetRequest) (walletv1.BetRes, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	d := digest("bet", req.PlayerID, req.Amount, req.RoundID, req.FreebetID.Value, req.FreebetID.Null)
	if prev, ok := w.txs[req.TransactionID]; ok {
		if prev.digest != d {
			return &walletv1.BetConflict{Status: walletv1.WalletErrorStatusError, ErrorCode: "DUPLICATE_TRANSACTION"}, nil
		}
		return &prev.answer, nil // a retry: the same answer
	}
	var answer walletv1.MovementResult
	switch {
	case req.Token == w.expired:
		answer = w.refusal("TOKEN_EXPIRED")
	case req.Token != w.token:
		answer = w.refusal("TOKEN_INVALID")
	case req.PlayerID != w.player:
		answer = w.refusal("PLAYER_NOT_FOUND")
	case string(req.Currency) != w.currency:
		answer = w.refusal("CURRENCY_MISMATCH")
	case !req.FreebetID.Null:
		// A freebet: its grant is spent, the balance does not move.
		if value, open := w.grants[req.FreebetID.Value]; !open || value != int64(req.Amount) {
			answer = w.refusal("INTERNAL_ERROR")
			break
		}
		delete(w.grants, req.FreebetID.Value)
		w.bets[req.TransactionID] = &bet{amount: int64(req.Amount), freebet: req.FreebetID.Value}
		answer = w.success()
	case int64(req.Amount) > w.balance:
		answer = w.refusal("INSUFFICIENT_FUNDS")
	default:
		w.balance -= int64(req.Amount)
		w.bets[req.TransactionID] = &bet{amount: int64(req.Amount)}
		answer = w.success()
	}
	w.txs[req.TransactionID] = movement{digest: d, answer: answer}
	return &answer, nil
}

func (w *wallet) Win(_ context.Context, req *walletv1.WinRequest) (walletv1.WinRes, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	d := digest("win", req.PlayerID, req.Amount, req.BetID, req.Type)
	if prev, ok := w.txs[req.TransactionID]; ok {
		if prev.digest != d {
			res := w.refusal("DUPLICATE_TRANSACTION")
			return &res, nil
		}
		return &prev.answer, nil
	}
	// A win is credited whatever the token's state: the round was played.
	b := w.bets[req.BetID]
	if b == nil || b.settled == "rollback" || req.PlayerID != w.player {
		return &walletv1.WinNotFound{Status: walletv1.WalletErrorStatusError, ErrorCode: "BET_NOT_FOUND"}, nil
	}
	if b.settled == "win" {
		res := w.refusal("DUPLICATE_TRANSACTION") // one win per debit
		return &res, nil
	}
	b.settled = "win"
	w.balance += int64(req.Amount)
	answer := w.success()
	w.txs[req.TransactionID] = movement{digest: d, answer: answer}
	return &answer, nil
}

func (w *wallet) Rollback(_ context.Context, req *walletv1.RollbackRequest) (walletv1.RollbackRes, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	d := digest("rollback", req.PlayerID, req.Amount, req.BetID)
	if prev, ok := w.txs[req.TransactionID]; ok {
		if prev.digest != d {
			res := w.refusal("DUPLICATE_TRANSACTION")
			return &res, nil
		}
		return &prev.answer, nil
	}
	b := w.bets[req.BetID]
	switch {
	case b == nil || b.settled == "rollback":
		// Nothing to undo: the state the game asks for holds already.
	case b.settled == "win":
		res := w.refusal("BET_NOT_FOUND") // a paid debit is never undone
		return &res, nil
	case int64(req.Amount) != b.amount:
		res := w.refusal("DUPLICATE_TRANSACTION") // never return more than was taken
		return &res, nil
	case b.freebet != "":
		b.settled = "rollback"
		w.grants[b.freebet] = b.amount // the grant is open again; no money moves
	default:
		b.settled = "rollback"
		w.balance += b.amount
	}
	answer := w.success()
	w.txs[req.TransactionID] = movement{digest: d, answer: answer}
	return &answer, nil
}

// success is an ok answer with the balance and the wallet's own transaction id.
func (w *wallet) success() walletv1.MovementResult {
	w.next++
	return walletv1.NewWalletSuccessMovementResult(walletv1.WalletSuccess{
		Status: walletv1.WalletSuccessStatusOk, Balance: walletv1.Cents(w.balance),
		Currency: walletv1.NewOptCurrency(walletv1.Currency(w.currency)), PlayerID: walletv1.NewOptString(w.player),
		TransactionID: walletv1.NewOptString("ow-" + strconv.Itoa(w.next)),
	})
}

// refusal is an error answer (HTTP 200) with the current balance.
func (w *wallet) refusal(code walletv1.ErrorCode) walletv1.MovementResult {
	return walletv1.NewWalletErrorMovementResult(walletv1.WalletError{
		Status: walletv1.WalletErrorStatusError, ErrorCode: code, Balance: walletv1.NewOptCents(walletv1.Cents(w.balance)),
	})
}

// digest names a movement's content, to tell a retry from a divergent body.
func digest(parts ...any) [32]byte {
	return sha256.Sum256([]byte(fmt.Sprint(parts...)))
}
