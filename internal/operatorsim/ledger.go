package operatorsim

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/crashstudio/crashgame/gen/wallet"
	"github.com/crashstudio/crashgame/internal/store/ledger"
)

// Error codes of the wallet direction that the reference operator answers.
// It never invents another: an unknown code makes the game retry 20 times.
const (
	codeInsufficientFunds    = "INSUFFICIENT_FUNDS"
	codeTokenExpired         = "TOKEN_EXPIRED"
	codeTokenInvalid         = "TOKEN_INVALID"
	codePlayerNotFound       = "PLAYER_NOT_FOUND"
	codeBetNotFound          = "BET_NOT_FOUND"
	codeCurrencyMismatch     = "CURRENCY_MISMATCH"
	codePlayerBlocked        = "PLAYER_BLOCKED"
	codeInternalError        = "INTERNAL_ERROR"
	codeInvalidSignature     = "INVALID_SIGNATURE"
	codeDuplicateTransaction = "DUPLICATE_TRANSACTION"
)

// Movement kinds, as stored in transactions.kind.
const (
	kindBet      = ledger.KindBet
	kindWin      = ledger.KindWin
	kindRollback = ledger.KindRollback
)

// settlementRollback closes a bet undone by /rollback; a bet closed by /win
// carries the win's type (win, freebet, zero_win, lose).
const settlementRollback = ledger.SettlementRollback

// refusal is a business answer with status = error. The HTTP status it travels
// with is chosen by the route (see wallet.go), never here.
type refusal struct {
	code    string
	message string
	balance *int64 // on INSUFFICIENT_FUNDS
}

func refuse(code, format string, args ...any) *refusal {
	return &refusal{code: code, message: fmt.Sprintf(format, args...)}
}

// outcome is what a movement or a balance request resolved to: exactly one of
// body (a success, already encoded, replayed byte for byte on a retry) or
// refused is set. badRequest marks a refusal that is a malformed request
// rather than a business decision (answered 400).
type outcome struct {
	body       []byte
	operatorTx string
	replayed   bool
	refused    *refusal
	badRequest bool
}

// walletStore is what the wallet routes need of the ledger's storage: reads
// and conditional writes that report which condition failed, run in one
// transaction by InTx, or by InGroupTx in a transaction shared with
// concurrent calls, each in a savepoint of its own (the transaction travels
// in the context). It holds no rule: every decision below is made here, in
// package operatorsim.
type walletStore interface {
	InTx(ctx context.Context, fn func(ctx context.Context) error) error
	InGroupTx(ctx context.Context, fn func(ctx context.Context) error) error
	Player(ctx context.Context, playerID string) (*ledger.PlayerRecord, error)
	Session(ctx context.Context, token string) (*ledger.SessionRecord, error)
	MovementByTx(ctx context.Context, playerID, transactionID string) (*ledger.MovementRecord, error)
	HasRollbackOf(ctx context.Context, playerID, betID string) (bool, error)
	InsertMovement(ctx context.Context, m *ledger.MovementRecord) error
	AddBalance(ctx context.Context, playerID string, delta int64) error
	SetResponseBody(ctx context.Context, id int64, body []byte) error
	Settle(ctx context.Context, id int64, how string, by int64) error
	Grants(ctx context.Context, playerID string) ([]ledger.GrantRecord, error)
	FreebetBetIDs(ctx context.Context, playerID string) ([]string, error)
}

// ledgerStore is the whole ledger storage: the wallet routes' needs, and the
// admin API's, the lobby's and seeding's (ledger_admin.go).
type ledgerStore interface {
	walletStore
	InsertPlayer(ctx context.Context, p *ledger.PlayerRecord) error
	Players(ctx context.Context) ([]ledger.PlayerRecord, error)
	SetBlocked(ctx context.Context, playerID string, blocked bool) error
	InsertSession(ctx context.Context, s *ledger.SessionRecord) error
	RevokeSession(ctx context.Context, token string) error
	ExpireSession(ctx context.Context, token string, at int64) error
	InsertGrant(ctx context.Context, g *ledger.GrantRecord) error
	Movements(ctx context.Context, playerID string, limit int) ([]ledger.MovementRecord, error)
}

var _ ledgerStore = (*ledger.Store)(nil)

// teller holds every rule about money. It knows nothing of HTTP, nor of SQL.
type teller struct {
	store    ledgerStore
	now      func() time.Time
	tokenTTL time.Duration
}

// requestHash is the identity of a movement request for idempotency: the route
// and every field of the body except request_id and timestamp, which change on
// each attempt (ENV-4, ENV-5) and so are never part of the key (ENV-6). The
// request schemas are closed, so the generated struct holds the whole content;
// encoding/json writes its fields in a fixed order.
func requestHash(route string, body any) ([]byte, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("hash %s request: %w", route, err)
	}
	sum := sha256.Sum256(append([]byte(route+"\n"), b...))
	return sum[:], nil
}

// getPlayer reads a player, or nil if there is none.
func (l *teller) getPlayer(ctx context.Context, playerID string) (*ledger.PlayerRecord, error) {
	p, err := l.store.Player(ctx, playerID)
	if errors.Is(err, ledger.ErrNotFound) {
		return nil, nil
	}
	return p, err
}

// movementByTx finds the movement a player already has under a game
// transaction_id, or nil.
func (l *teller) movementByTx(ctx context.Context, playerID, transactionID string) (*ledger.MovementRecord, error) {
	m, err := l.store.MovementByTx(ctx, playerID, transactionID)
	if errors.Is(err, ledger.ErrNotFound) {
		return nil, nil
	}
	return m, err
}

// replayOrDivergent answers a transaction_id the player already used: the
// stored answer when the content is identical (BET-8), else a refusal
// DUPLICATE_TRANSACTION (BET-9, RB-8).
func replayOrDivergent(prev *ledger.MovementRecord, hash []byte) *outcome {
	if bytes.Equal(prev.RequestHash, hash) {
		return &outcome{body: prev.ResponseBody, operatorTx: operatorTxID(prev.ID), replayed: true}
	}
	return &outcome{refused: refuse(codeDuplicateTransaction,
		"transaction %s is already recorded (%s of amount %d) with different content",
		prev.TransactionID, prev.Kind, prev.Amount)}
}

// checkSession resolves a token for player p on /bet. A token that is
// unknown, revoked or another player's is TOKEN_INVALID; an expired one is
// TOKEN_EXPIRED.
func (l *teller) checkSession(ctx context.Context, token, playerID string) (*refusal, error) {
	s, err := l.store.Session(ctx, token)
	switch {
	case errors.Is(err, ledger.ErrNotFound):
		return refuse(codeTokenInvalid, "unknown session token"), nil
	case err != nil:
		return nil, err
	case s.PlayerID != playerID:
		return refuse(codeTokenInvalid, "the session token belongs to another player"), nil
	case s.Revoked:
		return refuse(codeTokenInvalid, "the session token was revoked"), nil
	case l.now().UnixMilli() >= s.ExpiresAt:
		return refuse(codeTokenExpired, "session expired"), nil
	}
	return nil, nil
}

// record inserts a movement, moves the player's balance by delta and stores
// the success answer that retries will replay, all inside the transaction of
// ctx. The balance UPDATE's WHERE is the last guard against a negative balance.
func (l *teller) record(ctx context.Context, p *ledger.PlayerRecord, m *ledger.MovementRecord) (*outcome, error) {
	newBalance := p.Balance + m.Delta
	if newBalance < 0 {
		return nil, fmt.Errorf("movement %s would take balance %d below zero", m.TransactionID, p.Balance)
	}
	m.PlayerID = p.PlayerID
	m.BalanceAfter = newBalance
	m.Currency = p.Currency
	m.ResponseStatus = 200
	m.ResponseBody = []byte("{}") // filled once the operator id is known
	m.CreatedAt = l.now().UnixMilli()
	if err := l.store.InsertMovement(ctx, m); err != nil {
		return nil, err
	}
	if m.Delta != 0 {
		err := l.store.AddBalance(ctx, p.PlayerID, m.Delta)
		if errors.Is(err, ledger.ErrBalance) {
			return nil, fmt.Errorf("update balance of movement %s: balance changed underneath", m.TransactionID)
		}
		if err != nil {
			return nil, err
		}
	}
	p.Balance = newBalance

	opTx := operatorTxID(m.ID)
	var res wallet.MovementResult
	if err := res.FromWalletSuccess(wallet.WalletSuccess{
		Status:        wallet.WalletSuccessStatusOk,
		Balance:       newBalance,
		Currency:      &p.Currency,
		PlayerId:      &p.PlayerID,
		TransactionId: &opTx,
	}); err != nil {
		return nil, fmt.Errorf("encode answer: %w", err)
	}
	body, err := res.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("encode answer: %w", err)
	}
	m.ResponseBody = body
	if err := l.store.SetResponseBody(ctx, m.ID, body); err != nil {
		return nil, err
	}
	return &outcome{body: body, operatorTx: opTx}, nil
}

// operatorTxID is the operator's own transaction id of a movement (ENV-19):
// its ledger row number, never the game's transaction_id.
func operatorTxID(id int64) string { return strconv.FormatInt(id, 10) }

// balanceAnswer is a /balance outcome.
type balanceAnswer struct {
	success *wallet.BalanceSuccess
	refused *refusal
}

// Balance resolves a session token (BAL-7): unknown or revoked is
// TOKEN_INVALID, expired is TOKEN_EXPIRED; a blocked player does not enter.
// The request's currency is not checked: before the game knows the session
// currency it sends its default (AMB-15), and this answer decides.
func (l *teller) Balance(ctx context.Context, token string) (*balanceAnswer, error) {
	var ans *balanceAnswer
	err := l.store.InTx(ctx, func(ctx context.Context) error {
		s, err := l.store.Session(ctx, token)
		switch {
		case errors.Is(err, ledger.ErrNotFound):
			ans = &balanceAnswer{refused: refuse(codeTokenInvalid, "unknown session token")}
			return nil
		case err != nil:
			return err
		case s.Revoked:
			ans = &balanceAnswer{refused: refuse(codeTokenInvalid, "the session token was revoked")}
			return nil
		case l.now().UnixMilli() >= s.ExpiresAt:
			ans = &balanceAnswer{refused: refuse(codeTokenExpired, "session expired")}
			return nil
		}
		p, err := l.getPlayer(ctx, s.PlayerID)
		if err != nil {
			return err
		}
		if p == nil {
			ans = &balanceAnswer{refused: refuse(codePlayerNotFound, "the session's player no longer exists")}
			return nil
		}
		if p.Blocked {
			ans = &balanceAnswer{refused: refuse(codePlayerBlocked, "player is blocked")}
			return nil
		}
		grants, err := l.openGrants(ctx, p.PlayerID)
		if err != nil {
			return err
		}
		success := &wallet.BalanceSuccess{
			Status:   wallet.BalanceSuccessStatusOk,
			PlayerId: p.PlayerID,
			Balance:  p.Balance,
			Currency: p.Currency,
			Freebets: &grants, // the whole list of open grants, every time (FB-18)
		}
		if p.Name != "" {
			success.PlayerName = &p.Name
		}
		ans = &balanceAnswer{success: success}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("balance: %w", err)
	}
	return ans, nil
}

// openGrants lists the player's grants with at least one round not spent. A
// round is spent by a freebet bet under the grant's id (quantity 1) or under
// <id>#n (quantity above 1) that was not rolled back. A grant is listed with
// its original quantity: the game splits it into the same <id>#1..#n every
// time and ignores an id it already knows (FB-15), so the list is stable.
func (l *teller) openGrants(ctx context.Context, playerID string) ([]wallet.FreebetGrant, error) {
	grants, err := l.store.Grants(ctx, playerID)
	if err != nil {
		return nil, err
	}
	out := make([]wallet.FreebetGrant, 0, len(grants))
	if len(grants) == 0 {
		return out, nil
	}
	// The freebet_id of every bet not rolled back (open or won).
	spentIDs, err := l.store.FreebetBetIDs(ctx, playerID)
	if err != nil {
		return nil, err
	}
	for _, g := range grants {
		spent := 0
		for _, id := range spentIDs {
			if grantOfRound(id, g.GrantID, g.Quantity) {
				spent++
			}
		}
		if spent < g.Quantity {
			q := g.Quantity
			out = append(out, wallet.FreebetGrant{Id: g.GrantID, Amount: g.Amount, Quantity: &q})
		}
	}
	return out, nil
}

// grantOfRound reports whether freebetID names a round of the grant: the id
// itself for quantity 1, <id>#1 to <id>#<quantity> otherwise (FB-6, FB-7).
func grantOfRound(freebetID, grantID string, quantity int) bool {
	if quantity == 1 {
		return freebetID == grantID
	}
	n, ok := strings.CutPrefix(freebetID, grantID+"#")
	if !ok {
		return false
	}
	i, err := strconv.Atoi(n)
	return err == nil && i >= 1 && i <= quantity && strconv.Itoa(i) == n
}

// movement runs every movement route (/bet, /win, /rollback) the same way.
// It hashes the request (requestHash), then in one group transaction
// (InGroupTx): a transaction_id this player already used replays its stored
// answer or is refused as divergent (ENV-12, BET-8, BET-9), an unknown player
// is refused, and otherwise fn applies the route's own rules to the player p
// and returns the answer. What fn reads and writes commits with that answer or
// not at all: a refusal writes nothing, an error rolls back this movement's
// writes alone, and the answer is returned only once the group committed.
// Movements of one group run in order, each deciding on what the ones before
// it wrote (the balance a second debit checks is the one after the first).
func (l *teller) movement(ctx context.Context, route string, body any, playerID, txID string,
	fn func(ctx context.Context, p *ledger.PlayerRecord, hash []byte) (*outcome, error)) (*outcome, error) {
	hash, err := requestHash(route, body)
	if err != nil {
		return nil, err
	}
	var out *outcome
	err = l.store.InGroupTx(ctx, func(ctx context.Context) error {
		prev, err := l.movementByTx(ctx, playerID, txID)
		if err != nil {
			return err
		}
		if prev != nil {
			out = replayOrDivergent(prev, hash)
			return nil
		}
		p, err := l.getPlayer(ctx, playerID)
		if err != nil {
			return err
		}
		if p == nil {
			out = &outcome{refused: refuse(codePlayerNotFound, "unknown player")}
			return nil
		}
		out, err = fn(ctx, p, hash)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", route, err)
	}
	return out, nil
}

// Bet debits a stake. In one transaction: a transaction_id already used by
// this player replays or is refused as divergent; then the player, the token,
// the block, the currency and the funds are checked; a freebet bet (freebet_id
// not null, BET-5) moves nothing (BET-6). round_id is never a key (BET-3).
func (l *teller) Bet(ctx context.Context, req *wallet.BetRequest) (*outcome, error) {
	return l.movement(ctx, "bet", withoutAttempt(*req), req.PlayerId, req.TransactionId, func(ctx context.Context, p *ledger.PlayerRecord, hash []byte) (*outcome, error) {
		// A rollback that arrived before its bet (the bet's first attempt
		// was slow, the game gave up and rolled it back) left a record; the
		// late bet must not debit a stake the game already considers refunded.
		rolledBack, err := l.store.HasRollbackOf(ctx, p.PlayerID, req.TransactionId)
		if err != nil {
			return nil, err
		}
		if rolledBack {
			return &outcome{refused: refuse(codeDuplicateTransaction,
				"transaction %s was already rolled back; a bet cannot follow its rollback", req.TransactionId)}, nil
		}
		if r, err := l.checkSession(ctx, req.Token, p.PlayerID); err != nil || r != nil {
			return &outcome{refused: r}, err
		}
		if p.Blocked {
			return &outcome{refused: refuse(codePlayerBlocked, "player is blocked")}, nil
		}
		if req.Currency != p.Currency {
			return &outcome{refused: refuse(codeCurrencyMismatch, "account currency is %s", p.Currency)}, nil
		}
		m := &ledger.MovementRecord{
			TransactionID: req.TransactionId,
			Kind:          kindBet,
			Amount:        req.Amount,
			RoundID:       req.RoundId,
			FreebetID:     req.FreebetId,
			RequestHash:   hash,
		}
		if req.FreebetId != nil {
			// A round of a grant is spent once: a second bet naming a round a
			// standing bet holds (open or won, not rolled back) would have the
			// operator fund two rounds on one grant (docs/ambiguities.md,
			// WC-6). INSUFFICIENT_FUNDS is final: the round holds nothing more.
			spent, err := l.store.FreebetBetIDs(ctx, p.PlayerID)
			if err != nil {
				return nil, err
			}
			if slices.Contains(spent, *req.FreebetId) {
				return &outcome{refused: refuse(codeInsufficientFunds,
					"freebet %s is already spent by another bet", *req.FreebetId)}, nil
			}
		}
		if req.FreebetId == nil { // branch on null, never on the key (BET-5)
			if p.Balance < req.Amount {
				bal := p.Balance
				return &outcome{refused: &refusal{code: codeInsufficientFunds,
					message: fmt.Sprintf("balance %d below stake %d", p.Balance, req.Amount), balance: &bal}}, nil
			}
			m.Delta = -req.Amount
		}
		return l.record(ctx, p, m)
	})
}

// Win credits a prize on an open debit. The token is not checked: an expired
// (or revoked) session must not block a credit that may arrive long after its
// bet (WIN-11), and a blocked player is still paid. The amount is credited as
// declared, never compared with stake × multiplier (WIN-13..15); zero_win and
// lose credit nothing and close the bet (WIN-7).
func (l *teller) Win(ctx context.Context, req *wallet.WinRequest) (*outcome, error) {
	return l.movement(ctx, "win", withoutAttempt(*req), req.PlayerId, req.TransactionId, func(ctx context.Context, p *ledger.PlayerRecord, hash []byte) (*outcome, error) {
		if req.Currency != p.Currency {
			return &outcome{refused: refuse(codeCurrencyMismatch, "account currency is %s", p.Currency)}, nil
		}
		credit := req.Amount
		switch req.Type {
		case wallet.WinTypeWin, wallet.WinTypeFreebet:
		case wallet.WinTypeZeroWin, wallet.WinTypeLose:
			if req.Amount != 0 {
				return &outcome{badRequest: true, refused: refuse(codeInternalError,
					"malformed body: amount must be 0 for type %s", req.Type)}, nil
			}
			credit = 0
		default: // the schema validation already refused it
			return &outcome{badRequest: true, refused: refuse(codeInternalError, "malformed body: unknown type %q", req.Type)}, nil
		}
		debit, err := l.movementByTx(ctx, p.PlayerID, req.BetId)
		if err != nil {
			return nil, err
		}
		if r := openDebit(debit, req.BetId); r != nil {
			return &outcome{refused: r}, nil
		}
		m := &ledger.MovementRecord{
			TransactionID: req.TransactionId,
			Kind:          kindWin,
			Amount:        req.Amount,
			Delta:         credit,
			BetID:         &req.BetId,
			RoundID:       req.RoundId,
			FreebetID:     req.FreebetId,
			WinType:       string(req.Type),
			RequestHash:   hash,
		}
		out, err := l.record(ctx, p, m)
		if err != nil {
			return nil, err
		}
		return out, l.settle(ctx, debit, string(req.Type), m.ID)
	})
}

// openDebit refuses a credit whose bet_id names no debit (an orphan, WIN-10)
// or a debit already closed by a win or a rollback: each debit ends in exactly
// one settlement. Both are BET_NOT_FOUND (answered 404 on /win).
func openDebit(debit *ledger.MovementRecord, betID string) *refusal {
	switch {
	case debit == nil || debit.Kind != kindBet:
		return refuse(codeBetNotFound, "no debit %s", betID)
	case debit.Settlement != nil:
		return refuse(codeBetNotFound, "debit %s is already settled (%s, operator transaction %d)",
			betID, *debit.Settlement, *debit.SettledBy)
	}
	return nil
}

// settle closes debit by the movement by. A debit settled underneath (it
// cannot be: the transaction began with the write lock) fails the movement.
func (l *teller) settle(ctx context.Context, debit *ledger.MovementRecord, how string, by int64) error {
	err := l.store.Settle(ctx, debit.ID, how, by)
	if errors.Is(err, ledger.ErrSettled) {
		return fmt.Errorf("settle debit %s: already settled", debit.TransactionID)
	}
	if err != nil {
		return fmt.Errorf("settle debit %s: %w", debit.TransactionID, err)
	}
	return nil
}

// Rollback undoes a debit by the debit's own amount (RB-9), after checking
// that the declared amount matches it (RB-10; a mismatch is refused, AMB-12
// reading A). A freebet debit moved nothing and its rollback moves nothing
// (RB-12), and its round counts as unspent again. reason is stored, never read
// (RB-11). A bet_id that names no debit, or a debit already rolled back,
// answers ok with the current balance (RB-13, AMB-13 reading A) and leaves a
// zero record, so that a late /bet under that id is refused and a retry
// replays. A debit already closed by a win is refused: undoing its stake after
// paying its prize would hand out money (the game never sends this).
// The token is not checked: rollbacks happen at boot, long after the session.
func (l *teller) Rollback(ctx context.Context, req *wallet.RollbackRequest) (*outcome, error) {
	return l.movement(ctx, "rollback", withoutAttempt(*req), req.PlayerId, req.TransactionId, func(ctx context.Context, p *ledger.PlayerRecord, hash []byte) (*outcome, error) {
		if req.Currency != p.Currency {
			return &outcome{refused: refuse(codeCurrencyMismatch, "account currency is %s", p.Currency)}, nil
		}
		debit, err := l.movementByTx(ctx, p.PlayerID, req.BetId)
		if err != nil {
			return nil, err
		}
		m := &ledger.MovementRecord{
			TransactionID: req.TransactionId,
			Kind:          kindRollback,
			Amount:        req.Amount,
			BetID:         &req.BetId,
			RoundID:       req.RoundId,
			Reason:        req.Reason,
			RequestHash:   hash,
		}
		undo := debit != nil && debit.Kind == kindBet && debit.Settlement == nil
		switch {
		case debit == nil || debit.Kind != kindBet:
			// Nothing to undo: the desired state already holds (RB-13).
		case debit.Settlement != nil && *debit.Settlement == settlementRollback:
			// Already undone by another rollback: nothing more to undo.
		case debit.Settlement != nil:
			return &outcome{refused: refuse(codeBetNotFound,
				"debit %s is already settled by a %s (operator transaction %d) and cannot be rolled back",
				req.BetId, *debit.Settlement, *debit.SettledBy)}, nil
		case req.Amount != debit.Amount:
			return &outcome{refused: refuse(codeDuplicateTransaction,
				"declared amount %d differs from debit %s amount %d", req.Amount, req.BetId, debit.Amount)}, nil
		}
		if undo {
			m.Delta = -debit.Delta // 0 for a freebet debit (RB-12)
			m.FreebetID = debit.FreebetID
		}
		out, err := l.record(ctx, p, m)
		if err != nil {
			return nil, err
		}
		if undo {
			return out, l.settle(ctx, debit, settlementRollback, m.ID)
		}
		return out, nil
	})
}

// withoutAttempt clears the two envelope fields that name the attempt rather
// than the movement, for requestHash.
func withoutAttempt[T wallet.BetRequest | wallet.WinRequest | wallet.RollbackRequest](req T) T {
	switch r := any(&req).(type) {
	case *wallet.BetRequest:
		r.RequestId, r.Timestamp = "", 0
	case *wallet.WinRequest:
		r.RequestId, r.Timestamp = "", 0
	case *wallet.RollbackRequest:
		r.RequestId, r.Timestamp = "", 0
	}
	return req
}
