package movements

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/crashstudio/crashgame/internal/wallet"
)

// MovementKind is what a queued movement does at the operator's wallet.
type MovementKind string

// The kinds of queued movements. A /bet is never queued: it is sent while the
// player waits (BetUntil).
const (
	KindWin      MovementKind = "win"      // POST /win: a prize, or a zero_win closing a lost bet
	KindRollback MovementKind = "rollback" // POST /rollback: undoes a debit
)

// MovementStatus is where a queued movement stands.
type MovementStatus string

// The statuses of a queued movement. Only pending moves on; the three others
// are final.
const (
	StatusPending   MovementStatus = "pending"   // waiting for its next attempt, or being sent
	StatusDone      MovementStatus = "done"      // the operator answered ok
	StatusRefused   MovementStatus = "refused"   // a final refusal: parked for reconciliation
	StatusExhausted MovementStatus = "exhausted" // MaxAttempts temporary failures: parked for reconciliation (LIM-2)
)

// Errors of Enqueue.
var (
	// ErrDuplicateMovement: a movement with this transaction_id is already
	// queued (or was delivered). One transaction_id never names two movements
	// (ENV-13); the caller's transaction must roll back.
	ErrDuplicateMovement = errors.New("movements: a movement with this transaction_id already exists")
	// ErrDebitSettled: a movement for this bet_id is already queued (or was
	// delivered). A debit ends in exactly one settlement: a win, a zero_win or
	// a rollback.
	ErrDebitSettled = errors.New("movements: the debit already has a settlement movement")
	// ErrInvalidMovement: the movement breaks the contract and was not queued.
	ErrInvalidMovement = errors.New("movements: invalid movement")
)

// Movement is one /win or /rollback to deliver. Every attempt sends exactly
// these fields, with a fresh request_id and timestamp (ENV-4, ENV-5, ENV-11,
// RB-7).
type Movement struct {
	TransactionID string // the idempotency key; never reused (ENV-13)
	Kind          MovementKind
	Operator      string
	GameID        string
	Currency      string
	PlayerID      string
	Token         string // the session token; never logged
	RoundID       string
	BetID         string // the transaction_id of the debit (ENV-16)
	Amount        int64  // cents; on a rollback, the amount of the debit (RB-6)
	// WinType is win, freebet or zero_win (kind win only; zero_win moves 0).
	WinType wallet.WinType
	// FreebetID is inherited from the debit (kind win only; nil is sent as
	// null, WIN-17). A rollback never has one (RB-1).
	FreebetID *string
	// Reason is diagnostic (kind rollback only, RB-11).
	Reason string
}

// MovementRecord is a movement as stored, with its delivery state. Its
// instants are whole milliseconds in UTC, as stored; the zero time.Time is
// "not yet".
type MovementRecord struct {
	TransactionID string
	Kind          MovementKind
	Operator      string
	GameID        string
	Currency      string
	PlayerID      string
	Token         string // empty in ListMovements: never listed
	RoundID       string
	BetID         string
	Amount        int64
	WinType       wallet.WinType
	FreebetID     *string
	Reason        string
	Status        MovementStatus
	Attempts      int
	// NextAttemptAt is when a pending movement is next due; while a worker
	// holds it (ClaimedBy set), the end of that worker's lease.
	NextAttemptAt time.Time
	ClaimedBy     string
	LastError     string    // diagnostic: reason, error_code, HTTP status; never a secret
	LastRequestID string    // the request_id of the last attempt, to find it in logs
	OperatorTxID  string    // the operator's own id from the success (ENV-19)
	BalanceAfter  *int64    // the balance the success answered, if any
	CreatedAt     time.Time // when it was queued
	DoneAt        time.Time // when it reached a final status; zero before
}

// Movement returns the movement the record delivers.
func (r *MovementRecord) Movement() Movement {
	return Movement{
		TransactionID: r.TransactionID, Kind: r.Kind, Operator: r.Operator, GameID: r.GameID,
		Currency: r.Currency, PlayerID: r.PlayerID, Token: r.Token, RoundID: r.RoundID, BetID: r.BetID,
		Amount: r.Amount, WinType: r.WinType, FreebetID: r.FreebetID, Reason: r.Reason,
	}
}

// winCall and rollbackCall build the one body of every attempt.
func (m Movement) winCall() wallet.WinCall {
	return wallet.WinCall{
		PlayerID: m.PlayerID, Token: m.Token, Currency: m.Currency, GameID: m.GameID, Amount: m.Amount,
		TransactionID: m.TransactionID, BetID: m.BetID, RoundID: m.RoundID, Type: m.WinType, FreebetID: m.FreebetID,
	}
}

func (m Movement) rollbackCall() wallet.RollbackCall {
	return wallet.RollbackCall{
		PlayerID: m.PlayerID, Token: m.Token, Currency: m.Currency, GameID: m.GameID, Amount: m.Amount,
		TransactionID: m.TransactionID, BetID: m.BetID, RoundID: m.RoundID, Reason: m.Reason,
	}
}

// validate refuses a movement that could never be delivered as the contract
// says. It never puts the token or the player id into the error.
func (m Movement) validate() error {
	if m.Operator == "" {
		return errors.New("operator is empty")
	}
	if m.BetID == m.TransactionID {
		return errors.New("bet_id equals transaction_id: a movement has its own transaction_id (ENV-13)")
	}
	switch m.Kind {
	case KindWin:
		switch m.WinType {
		case wallet.WinTypeWin, wallet.WinTypeFreebet:
		case wallet.WinTypeZeroWin:
			if m.Amount != 0 {
				return errors.New("a zero_win carries amount 0 (WIN-5)")
			}
		default:
			return fmt.Errorf("win type %q is not win, freebet or zero_win", string(m.WinType))
		}
		if m.Reason != "" {
			return errors.New("reason is for rollbacks only")
		}
		return m.winCall().Validate()
	case KindRollback:
		switch {
		case m.FreebetID != nil:
			return errors.New("a rollback has no freebet_id (RB-1)")
		case m.WinType != "":
			return errors.New("a rollback has no win type")
		case m.Amount <= 0:
			return errors.New("a rollback carries the amount of the debit, which is positive (RB-6)")
		}
		return m.rollbackCall().Validate()
	default:
		return fmt.Errorf("kind %q is not win or rollback", string(m.Kind))
	}
}

// Debit is the /bet a settlement refers to, as stored: what a rollback's
// amount (RB-6) and a win's freebet_id (WIN-17) are checked against.
type Debit struct {
	BetID     string
	Amount    int64   // cents
	FreebetID *string // the grant the bet was paid from, if any
}

// Repository is the storage of the movements: the movements table, its
// re-delivery history and the debits of the bets table, in the transaction
// that ctx carries if any. Package store implements it ((*store.Store).Movements)
// and converts its rows to this package's types.
type Repository interface {
	MovementWriter
	MovementReader
	QueueStore
	Redeliverer
}

// MovementWriter is what Enqueue and EnqueueMany write through: the outbox
// (the movements table) and the debits (the bets table) settlements are
// checked against, in the transaction that ctx carries.
type MovementWriter interface {
	// Debit is the debit of the bet betID, and false when no bet has that id.
	Debit(ctx context.Context, betID string) (Debit, bool, error)
	// Debits are the debits of the bets betIDs that exist, by bet id.
	Debits(ctx context.Context, betIDs []string) (map[string]Debit, error)
	// InsertMovement stores m as a new pending movement, created and due at
	// now; ErrDuplicateMovement when its transaction_id is taken,
	// ErrDebitSettled when its bet_id is.
	InsertMovement(ctx context.Context, m Movement, now time.Time) error
	// InsertMovements stores ms as InsertMovement does, in one statement;
	// ErrDuplicateMovement when a transaction_id or a bet_id of one of them
	// is taken.
	InsertMovements(ctx context.Context, ms []Movement, now time.Time) error
}

// Enqueue queues m inside the caller's transaction (the one ctx carries,
// store.InTx, which also writes the state change causing the movement: the
// outbox pattern), due at once. Nothing is sent until the transaction commits
// and a Queue picks it up; call Outbox.Notify after the commit to send it
// without waiting for the poll.
//
// It refuses, with ErrInvalidMovement, a movement that breaks the contract; a
// rollback whose amount differs from the debit it references, or that carries a
// freebet_id (RB-1, RB-6), and a win whose freebet_id differs from its debit's
// (WIN-17), when that debit is in the bets table. It refuses with
// ErrDuplicateMovement a transaction_id already queued (ENV-13), and with
// ErrDebitSettled a second movement for one bet_id (each debit ends in exactly
// one settlement). On an error the caller must roll its transaction back.
//
// On SQLite, every call inside the caller's transaction must use its ctx: the
// store has one connection.
func Enqueue(ctx context.Context, w MovementWriter, m Movement, now time.Time) error {
	if err := m.validate(); err != nil {
		return fmt.Errorf("%w %s: %w", ErrInvalidMovement, m.TransactionID, err)
	}
	if err := checkAgainstDebit(ctx, w, m); err != nil {
		return err
	}
	if err := w.InsertMovement(ctx, m, now); err != nil {
		return fmt.Errorf("movements: enqueue %s %s for bet %s: %w", m.Kind, m.TransactionID, m.BetID, err)
	}
	return nil
}

// checkAgainstDebit compares m with the debit it references, when the bets
// table (migration 0002, written by the engine) holds it: a rollback carries
// the debit's amount (RB-6), a win inherits the debit's freebet_id (WIN-17). A
// debit not found is not an error: a rollback of an unknown debit is harmless
// (RB-13).
func checkAgainstDebit(ctx context.Context, w MovementWriter, m Movement) error {
	d, ok, err := w.Debit(ctx, m.BetID)
	switch {
	case err != nil:
		return fmt.Errorf("movements: enqueue %s %s: read the debit: %w", m.Kind, m.TransactionID, err)
	case !ok:
		return nil
	}
	return compareWithDebit(m, d)
}

// compareWithDebit checks m against the debit it references: a rollback
// carries the debit's amount (RB-6), a win inherits its freebet_id (WIN-17).
func compareWithDebit(m Movement, d Debit) error {
	switch m.Kind {
	case KindRollback:
		if m.Amount != d.Amount {
			return fmt.Errorf("%w %s: rollback amount %d differs from the debit's %d (RB-6)",
				ErrInvalidMovement, m.TransactionID, m.Amount, d.Amount)
		}
	case KindWin:
		got, want := "", ""
		if m.FreebetID != nil {
			got = *m.FreebetID
		}
		if d.FreebetID != nil {
			want = *d.FreebetID
		}
		if got != want {
			return fmt.Errorf("%w %s: freebet_id differs from the debit's (WIN-17)", ErrInvalidMovement, m.TransactionID)
		}
	}
	return nil
}

// MovementFilter selects movements for reconciliation. Empty fields select
// everything; Limit 0 means DefaultListLimit, and it is capped at MaxListLimit.
type MovementFilter struct {
	RoundID  string
	PlayerID string
	Operator string
	Status   string   // pending, done, refused or exhausted
	BetIDs   []string // the movements that settle these bets
	Limit    int
}

// Limits of ListMovements.
const (
	DefaultListLimit = 1000
	MaxListLimit     = 100000
)

// MovementReader is what ListMovements reads through.
type MovementReader interface {
	// ListMovements returns at most f.Limit (positive) movements that match
	// f, oldest first (by created_at, then transaction_id), without their
	// token.
	ListMovements(ctx context.Context, f MovementFilter) ([]MovementRecord, error)
}

// ListMovements returns the movements that match f, oldest first (by
// created_at, then transaction_id), read through r. The session token is never read: Token is empty in every
// record.
func ListMovements(ctx context.Context, r MovementReader, f MovementFilter) ([]MovementRecord, error) {
	limit := f.Limit
	switch {
	case limit < 0:
		return nil, fmt.Errorf("movements: list movements: negative limit %d", limit)
	case limit == 0:
		limit = DefaultListLimit
	case limit > MaxListLimit:
		limit = MaxListLimit
	}
	if f.Status != "" {
		switch MovementStatus(f.Status) {
		case StatusPending, StatusDone, StatusRefused, StatusExhausted:
		default:
			return nil, fmt.Errorf("movements: list movements: status %q is not pending, done, refused or exhausted", f.Status)
		}
	}
	f.Limit = limit
	recs, err := r.ListMovements(ctx, f)
	if err != nil {
		return nil, fmt.Errorf("movements: list movements: %w", err)
	}
	return recs, nil
}

// movementColumns are the columns of WriteMovements, in order.
var movementColumns = []string{
	"transaction_id", "kind", "type", "status", "attempts", "amount", "currency", "operator", "game_id",
	"round_id", "bet_id", "player_id", "freebet_id", "operator_tx_id", "balance_after", "last_request_id",
	"last_error", "reason", "created_at", "next_attempt_at", "done_at",
}

// WriteMovements writes recs as a tab-separated table with a header line, one
// movement a line. Times are RFC 3339 in UTC with milliseconds; amounts are
// cents; an absent value is "-". Tabs and line breaks inside a value become
// spaces. The session token is never written.
func WriteMovements(w io.Writer, recs []MovementRecord) error {
	var b strings.Builder
	b.WriteString(strings.Join(movementColumns, "\t"))
	b.WriteByte('\n')
	row := make([]string, len(movementColumns))
	for i := range recs {
		r := &recs[i]
		next := "-"
		if r.Status == StatusPending {
			next = millisText(r.NextAttemptAt)
		}
		balance := "-"
		if r.BalanceAfter != nil {
			balance = strconv.FormatInt(*r.BalanceAfter, 10)
		}
		freebet := "-"
		if r.FreebetID != nil {
			freebet = *r.FreebetID
		}
		copy(row, []string{
			r.TransactionID, string(r.Kind), string(r.WinType), string(r.Status), strconv.Itoa(r.Attempts),
			strconv.FormatInt(r.Amount, 10), r.Currency, r.Operator, r.GameID,
			r.RoundID, r.BetID, r.PlayerID, freebet, r.OperatorTxID, balance, r.LastRequestID,
			r.LastError, r.Reason, millisText(r.CreatedAt), next, millisText(r.DoneAt),
		})
		for j, v := range row {
			if j > 0 {
				b.WriteByte('\t')
			}
			b.WriteString(cell(v))
		}
		b.WriteByte('\n')
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("movements: write movements: %w", err)
	}
	return nil
}

func millisText(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02T15:04:05.000Z07:00")
}

// cell makes v one TSV field: never empty, no tab, no line break.
func cell(v string) string {
	if v == "" {
		return "-"
	}
	return strings.Map(func(r rune) rune {
		switch r {
		case '\t', '\n', '\r':
			return ' '
		}
		return r
	}, v)
}

// Redeliverer is what Redeliver writes through.
type Redeliverer interface {
	// RedeliverMovement moves an exhausted movement back to pending, due at
	// at with no attempts, and records the re-delivery, in one transaction.
	// A movement not exhausted is returned as it is with false; a refused
	// one is ErrNotRedeliverable, an unknown one (or one of another operator
	// when operator is not "") ErrMovementNotFound.
	RedeliverMovement(ctx context.Context, transactionID, operator, by string, at time.Time) (MovementRecord, bool, error)
}

// Redelivery is one re-delivery of a parked movement (Redeliver): who asked,
// when, and how the movement stood before it.
type Redelivery struct {
	Number          int64 // 1 for the first re-delivery of the movement
	RequestedAt     time.Time
	RequestedBy     string // "operator:<id>" or "on-call:<name>"
	AttemptsBefore  int
	LastErrorBefore string
}

// Errors of Redeliver.
var (
	// ErrMovementNotFound: no movement has that transaction_id (for that
	// operator).
	ErrMovementNotFound = errors.New("movements: no such movement")
	// ErrNotRedeliverable: the movement was refused by the wallet (a final
	// answer, parked for reconciliation); only an exhausted one is sent again.
	ErrNotRedeliverable = errors.New("movements: the movement was refused by the wallet; only an exhausted movement is delivered again")
)

// Redeliver asks the queue to deliver an exhausted movement again, for when
// its operator has fixed its wallet: the same transaction_id and body, a
// fresh MaxAttempts attempts from now, and the re-delivery kept in the
// movement's history with by (who asked: "operator:<id>", "on-call:<name>").
// operator, when not "", must own the movement. It is idempotent: a movement
// pending again (or delivered meanwhile) is returned as it is, with
// redelivered false. The queue picks the movement up at its next poll.
func Redeliver(ctx context.Context, r Redeliverer, transactionID, operator, by string, now time.Time) (rec MovementRecord, redelivered bool, err error) {
	got, redelivered, err := r.RedeliverMovement(ctx, transactionID, operator, by, now)
	switch {
	case errors.Is(err, ErrMovementNotFound):
		return MovementRecord{}, false, ErrMovementNotFound
	case errors.Is(err, ErrNotRedeliverable):
		return MovementRecord{}, false, ErrNotRedeliverable
	case err != nil:
		return MovementRecord{}, false, fmt.Errorf("movements: redeliver %s: %w", transactionID, err)
	}
	if redelivered {
		slog.InfoContext(ctx, "movements: parked movement delivered again", "transaction_id", transactionID, "operator", got.Operator, "by", by)
	}
	return got, redelivered, nil
}
