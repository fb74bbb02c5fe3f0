//go:build ignore

// Package walletledger holds the money rules of the example wallets of
// docs/integrators.md (docs/examples/ogenwallet and
// docs/examples/oapicodegenwallet): one test player's balance, freebet grants,
// debits and movements, in memory. It knows nothing of HTTP or of a
// generator: each example turns its generated request types into the plain
// types here, and the Answer back into its generated answer types.
//
// Serve (serve.go) is the examples' common main: the test player from the
// flags, the credentials from the environment, and the listener; each example
// gives it only its generated server.
//
// It exists to show the rules a wallet keeps, and so that `crashgame
// wallet-check` has a wallet built from the guide to pass; it holds no one's
// money and forgets everything when the process ends.
//
// Its rules, by the IDs of docs/contract/rules.md:
//   - transaction_id is the idempotency key (ENV-12): an identical repeat gets
//     the first answer (BET-8); another content under the same id is refused
//     DUPLICATE_TRANSACTION (BET-9 with HTTP 409 on /bet, RB-8 and AMB-11 with
//     HTTP 200 elsewhere) and moves nothing;
//   - a freebet bet (freebet_id not nil) spends its grant and debits nothing
//     (BET-6); its rollback opens the grant again and credits nothing (RB-12);
//   - a /win needs an open debit of the same player: none, or a debit rolled
//     back, is 404 BET_NOT_FOUND (WIN-10); a second credit of one debit is
//     refused DUPLICATE_TRANSACTION; an expired token does not block it
//     (WIN-11);
//   - a /rollback of no debit answers ok (RB-13); one whose amount is not the
//     debit's is refused (RB-10, AMB-12 reading A); a paid debit is never
//     undone;
//   - a movement in another currency than the player's is refused
//     CURRENCY_MISMATCH (WERR-13);
//   - a negative amount, or an empty id, is refused as a malformed request
//     (HTTP 400 INTERNAL_ERROR, WERR-2), even though the generated server's
//     validation should have refused it before: money rules never rely on
//     one check alone.
//
// The examples import it as example.com/operator/walletledger. The ignore
// constraint keeps it out of the game's module; make toolchain copies it,
// without that line, as walletledger/ of the module docs/integrators.md builds
// (example.com/operator), as the guide tells the reader to.
package walletledger

import (
	"crypto/sha256"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"sync"
)

// The contract's error codes the ledger answers with.
const (
	CodeInternalError        = "INTERNAL_ERROR"
	CodeTokenExpired         = "TOKEN_EXPIRED"
	CodeTokenInvalid         = "TOKEN_INVALID"
	CodePlayerNotFound       = "PLAYER_NOT_FOUND"
	CodeCurrencyMismatch     = "CURRENCY_MISMATCH"
	CodeInsufficientFunds    = "INSUFFICIENT_FUNDS"
	CodeBetNotFound          = "BET_NOT_FOUND"
	CodeDuplicateTransaction = "DUPLICATE_TRANSACTION"
)

// Config is the one test player the ledger holds.
type Config struct {
	PlayerID string
	Currency string
	// Balance is in cents.
	Balance int64
	// Token is the player's live session token; ExpiredToken an expired one.
	Token        string
	ExpiredToken string
	// Grants are the player's open freebet grants: id to value in cents.
	Grants map[string]int64
}

// Ledger is one player's money. Its methods are safe for concurrent use.
type Ledger struct {
	mu       sync.Mutex
	player   string
	currency string
	balance  int64
	token    string
	expired  string
	grants   map[string]int64
	txs      map[string]movement // by the game's transaction_id
	bets     map[string]*debit   // by the debit's transaction_id
	next     int                 // the wallet's own transaction ids
}

// New returns a ledger holding the player of c.
func New(c Config) *Ledger {
	grants := make(map[string]int64, len(c.Grants))
	for id, amount := range c.Grants {
		grants[id] = amount
	}
	return &Ledger{
		player: c.PlayerID, currency: c.Currency, balance: c.Balance,
		token: c.Token, expired: c.ExpiredToken, grants: grants,
		txs: map[string]movement{}, bets: map[string]*debit{},
	}
}

// movement is a movement as recorded: a digest of its content, to tell a
// retry from another body under the same transaction_id, and the answer
// given.
type movement struct {
	digest [32]byte
	answer Answer
}

// debit is an accepted /bet and how it ended.
type debit struct {
	amount  int64
	freebet string // "" for an ordinary bet
	settled string // "", "win" or "rollback"
}

// Grant is an open freebet grant.
type Grant struct {
	ID string
	// Amount is the value of the grant in cents.
	Amount int64
}

// Session is the answer to /balance.
type Session struct {
	// HTTPStatus is 200, or 401 for a token the ledger refuses (BAL-7).
	HTTPStatus int
	// Code is "" on success, else TOKEN_EXPIRED or TOKEN_INVALID.
	Code     string
	PlayerID string
	Currency string
	Balance  int64
	Grants   []Grant // sorted by ID
}

// OK reports whether the session was resolved.
func (s Session) OK() bool { return s.Code == "" }

// Bet is the content of a /bet request.
type Bet struct {
	Token         string
	PlayerID      string
	Currency      string
	Amount        int64
	TransactionID string
	RoundID       string
	// FreebetID is nil on an ordinary bet (freebet_id null).
	FreebetID *string
}

// Win is the content of a /win request.
type Win struct {
	Token         string
	PlayerID      string
	Currency      string
	Amount        int64
	TransactionID string
	BetID         string
	RoundID       string
	Type          string
	// FreebetID is nil when the debit was an ordinary bet.
	FreebetID *string
}

// Rollback is the content of a /rollback request.
type Rollback struct {
	Token         string
	PlayerID      string
	Currency      string
	Amount        int64
	TransactionID string
	BetID         string
	RoundID       string
}

// Answer is the answer to a movement.
type Answer struct {
	// HTTPStatus is the status to send: 200 for every business answer,
	// success or refusal; 400 for a malformed request (WERR-2); 404 for a
	// /win of no debit (WIN-10); 409 for a /bet that repeats a transaction_id
	// with another content (BET-9).
	HTTPStatus int
	// Code is "" on success, else the contract's error_code.
	Code string
	// Message is a diagnostic for error_message; empty on success.
	Message  string
	Balance  int64
	Currency string
	PlayerID string
	// TransactionID is the wallet's own id of the movement, on success
	// (ENV-19).
	TransactionID string
}

// OK reports whether the movement succeeded.
func (a Answer) OK() bool { return a.Code == "" }

// Balance resolves a session token.
func (l *Ledger) Balance(token string) Session {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch token {
	case l.token:
	case l.expired:
		return Session{HTTPStatus: http.StatusUnauthorized, Code: CodeTokenExpired}
	default:
		return Session{HTTPStatus: http.StatusUnauthorized, Code: CodeTokenInvalid}
	}
	grants := make([]Grant, 0, len(l.grants))
	for id, amount := range l.grants {
		grants = append(grants, Grant{ID: id, Amount: amount})
	}
	sort.Slice(grants, func(i, j int) bool { return grants[i].ID < grants[j].ID })
	return Session{HTTPStatus: http.StatusOK, PlayerID: l.player, Currency: l.currency, Balance: l.balance, Grants: grants}
}

// Bet debits a stake, or spends a freebet grant.
func (l *Ledger) Bet(req Bet) Answer {
	l.mu.Lock()
	defer l.mu.Unlock()
	if bad := malformed(req.Amount, req.TransactionID, req.RoundID); bad != "" {
		return l.malformed(bad)
	}
	fb := ""
	if req.FreebetID != nil {
		fb = "freebet " + *req.FreebetID
	}
	d := digest("bet", req.PlayerID, req.Currency, req.Amount, req.RoundID, req.FreebetID != nil, fb)
	if prev, ok := l.txs[req.TransactionID]; ok {
		if prev.digest != d {
			a := l.refusal(CodeDuplicateTransaction, "transaction_id already used with another content")
			a.HTTPStatus = http.StatusConflict
			return a
		}
		return prev.answer // a retry: the same answer
	}
	var answer Answer
	switch {
	case req.Token == l.expired:
		answer = l.refusal(CodeTokenExpired, "session expired")
	case req.Token != l.token:
		answer = l.refusal(CodeTokenInvalid, "unknown session token")
	case req.PlayerID != l.player:
		answer = l.refusal(CodePlayerNotFound, "unknown player")
	case req.Currency != l.currency:
		answer = l.refusal(CodeCurrencyMismatch, "the account is in "+l.currency)
	case req.FreebetID != nil:
		// A freebet: its grant is spent, the balance does not move (BET-6).
		if value, open := l.grants[*req.FreebetID]; !open || value != req.Amount {
			answer = l.refusal(CodeInternalError, "no open grant of that id and value")
			break
		}
		delete(l.grants, *req.FreebetID)
		l.bets[req.TransactionID] = &debit{amount: req.Amount, freebet: *req.FreebetID}
		answer = l.success()
	case req.Amount > l.balance:
		answer = l.refusal(CodeInsufficientFunds, "balance "+strconv.FormatInt(l.balance, 10)+" below stake "+strconv.FormatInt(req.Amount, 10))
	default:
		l.balance -= req.Amount
		l.bets[req.TransactionID] = &debit{amount: req.Amount}
		answer = l.success()
	}
	l.txs[req.TransactionID] = movement{digest: d, answer: answer}
	return answer
}

// Win credits a prize on an open debit. A win is credited whatever the
// token's state: the round was played (WIN-11).
func (l *Ledger) Win(req Win) Answer {
	l.mu.Lock()
	defer l.mu.Unlock()
	if bad := malformed(req.Amount, req.TransactionID, req.BetID); bad != "" {
		return l.malformed(bad)
	}
	d := digest("win", req.PlayerID, req.Currency, req.Amount, req.BetID, req.Type)
	if prev, ok := l.txs[req.TransactionID]; ok {
		if prev.digest != d {
			return l.refusal(CodeDuplicateTransaction, "transaction_id already used with another content")
		}
		return prev.answer
	}
	b := l.bets[req.BetID]
	switch {
	case b == nil || b.settled == "rollback" || req.PlayerID != l.player:
		a := l.refusal(CodeBetNotFound, "no open debit under bet_id")
		a.HTTPStatus = http.StatusNotFound
		return a
	case req.Currency != l.currency:
		return l.refusal(CodeCurrencyMismatch, "the account is in "+l.currency)
	case b.settled == "win":
		return l.refusal(CodeDuplicateTransaction, "the debit was already credited") // one win per debit
	}
	b.settled = "win"
	l.balance += req.Amount
	answer := l.success()
	l.txs[req.TransactionID] = movement{digest: d, answer: answer}
	return answer
}

// Rollback undoes a debit: the stake goes back, or the freebet grant opens
// again.
func (l *Ledger) Rollback(req Rollback) Answer {
	l.mu.Lock()
	defer l.mu.Unlock()
	if bad := malformed(req.Amount, req.TransactionID, req.BetID); bad != "" {
		return l.malformed(bad)
	}
	d := digest("rollback", req.PlayerID, req.Currency, req.Amount, req.BetID)
	if prev, ok := l.txs[req.TransactionID]; ok {
		if prev.digest != d {
			return l.refusal(CodeDuplicateTransaction, "transaction_id already used with another content")
		}
		return prev.answer
	}
	b := l.bets[req.BetID]
	switch {
	case req.PlayerID != l.player:
		return l.refusal(CodePlayerNotFound, "unknown player")
	case req.Currency != l.currency:
		return l.refusal(CodeCurrencyMismatch, "the account is in "+l.currency)
	case b == nil || b.settled == "rollback":
		// Nothing to undo: the state the game asks for holds already (RB-13).
	case b.settled == "win":
		return l.refusal(CodeBetNotFound, "the debit was paid; it is never undone")
	case req.Amount != b.amount:
		return l.refusal(CodeDuplicateTransaction, "the amount is not the debit's") // never return more than was taken
	case b.freebet != "":
		b.settled = "rollback"
		l.grants[b.freebet] = b.amount // the grant is open again; no money moves
	default:
		b.settled = "rollback"
		l.balance += b.amount
	}
	answer := l.success()
	l.txs[req.TransactionID] = movement{digest: d, answer: answer}
	return answer
}

// malformed names what makes a movement's content invalid, or "".
func malformed(amount int64, ids ...string) string {
	if amount < 0 {
		return "amount is negative"
	}
	for _, id := range ids {
		if id == "" {
			return "an id is empty"
		}
	}
	return ""
}

// malformed is the answer to a request no wallet should act on.
func (l *Ledger) malformed(why string) Answer {
	return Answer{HTTPStatus: http.StatusBadRequest, Code: CodeInternalError, Message: "malformed request: " + why}
}

// success is an ok answer with the balance and the wallet's own transaction
// id.
func (l *Ledger) success() Answer {
	l.next++
	return Answer{HTTPStatus: http.StatusOK, Balance: l.balance, Currency: l.currency, PlayerID: l.player,
		TransactionID: "wl-" + strconv.Itoa(l.next)}
}

// refusal is an error answer (HTTP 200) with the current balance.
func (l *Ledger) refusal(code, message string) Answer {
	return Answer{HTTPStatus: http.StatusOK, Code: code, Message: message, Balance: l.balance, Currency: l.currency}
}

// digest names a movement's content.
func digest(parts ...any) [32]byte {
	return sha256.Sum256([]byte(fmt.Sprintf("%q", parts)))
}
