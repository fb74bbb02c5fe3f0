package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/uptrace/bun"
)

// The statuses of a stored movement (column movements.status). Only pending
// moves on; the three others are final.
const (
	MovementPending   = "pending"
	MovementDone      = "done"
	MovementRefused   = "refused"
	MovementExhausted = "exhausted"
)

// Errors of InsertMovement and InsertMovements: which unique key refused the
// row. Nothing was written for that row.
var (
	// ErrMovementExists: a movement with this transaction_id is stored.
	ErrMovementExists = errors.New("store: a movement with this transaction_id exists")
	// ErrMovementBetTaken: a movement with this bet_id is stored (under
	// another transaction_id).
	ErrMovementBetTaken = errors.New("store: a movement with this bet_id exists")
	// ErrMovementKeyTaken: InsertMovements only; a transaction_id or a bet_id
	// of the batch is stored already, or repeated within it (which one is not
	// said). Every other row of the batch was inserted: roll back.
	ErrMovementKeyTaken = errors.New("store: a movement's transaction_id or bet_id exists")
	// ErrMovementNotFound: GetMovement found no movement with this
	// transaction_id.
	ErrMovementNotFound = errors.New("store: movement not found")
)

// MovementRecord is one /win or /rollback of the outbox (table movements,
// migration 0003) with its delivery state.
type MovementRecord struct {
	bun.BaseModel `bun:"table:movements"`

	TransactionID string  `bun:"transaction_id,pk"`
	Kind          string  `bun:"kind"` // win or rollback
	Operator      string  `bun:"operator"`
	GameID        string  `bun:"game_id"`
	Currency      string  `bun:"currency"`
	PlayerID      string  `bun:"player_id"`
	Token         string  `bun:"token"` // empty in ListMovements and ReconcileMovements: never listed
	RoundID       string  `bun:"round_id"`
	BetID         string  `bun:"bet_id"`
	Amount        int64   `bun:"amount"`
	WinType       string  `bun:"win_type"` // win, freebet, zero_win; empty on a rollback
	FreebetID     *string `bun:"freebet_id"`
	Reason        string  `bun:"reason"`
	Status        string  `bun:"status"` // MovementPending, MovementDone, ...
	Attempts      int     `bun:"attempts"`
	// NextAttemptAt is when a pending movement is next due; while a worker
	// holds it (ClaimedBy set), the end of that worker's lease.
	NextAttemptAt Millis `bun:"next_attempt_at"`
	ClaimedBy     string `bun:"claimed_by"`
	LastError     string `bun:"last_error"`
	LastRequestID string `bun:"last_request_id"`
	OperatorTxID  string `bun:"operator_tx_id"`
	BalanceAfter  *int64 `bun:"balance_after"`
	CreatedAt     Millis `bun:"created_at"`
	DoneAt        Millis `bun:"done_at,nullzero"`
}

// movementColumns is every column of movements, in the order of
// MovementRecord: the RETURNING list of a claim.
var movementColumns = []string{
	"transaction_id", "kind", "operator", "game_id", "currency", "player_id", "token", "round_id", "bet_id", "amount",
	"win_type", "freebet_id", "reason", "status", "attempts", "next_attempt_at", "claimed_by", "last_error", "last_request_id",
	"operator_tx_id", "balance_after", "created_at", "done_at",
}

// movementColumnsOf lists every column of movements, each with prefix.
func movementColumnsOf(prefix string) string {
	cols := make([]string, len(movementColumns))
	for i, c := range movementColumns {
		cols[i] = prefix + c
	}
	return strings.Join(cols, ", ")
}

// InsertMovement stores rec, in the transaction of ctx if any. When a unique
// key refuses it, it writes nothing and returns ErrMovementExists (its
// transaction_id) or ErrMovementBetTaken (its bet_id), and the transaction of
// ctx stays usable: the insert is ON CONFLICT DO NOTHING, because on
// PostgreSQL a failing statement would abort the caller's whole transaction.
// It is one prepared statement when the row is inserted, two when it is
// refused.
func (s *Store) InsertMovement(ctx context.Context, rec *MovementRecord) error {
	n, err := affected("insert movement")(s.exec(ctx, "insertMovement", movementArgs(rec)...))
	if err != nil {
		return err
	}
	if n == 1 {
		return nil
	}
	// A unique key refused it: the transaction_id, or the bet_id.
	exists, err := s.conn(ctx).NewSelect().Table("movements").Where("transaction_id = ?", rec.TransactionID).Exists(ctx)
	if err != nil {
		return fmt.Errorf("store: insert movement: which key refused it: %w", err)
	}
	if exists {
		return ErrMovementExists
	}
	return ErrMovementBetTaken
}

// movementArgs are rec's values for the statement insertMovement, in its
// columns' order: a zero DoneAt is NULL.
func movementArgs(rec *MovementRecord) []any {
	return []any{rec.TransactionID, rec.Kind, rec.Operator, rec.GameID, rec.Currency, rec.PlayerID, rec.Token,
		rec.RoundID, rec.BetID, rec.Amount, rec.WinType, rec.FreebetID, rec.Reason, rec.Status, rec.Attempts,
		rec.NextAttemptAt, rec.ClaimedBy, rec.LastError, rec.LastRequestID, rec.OperatorTxID, rec.BalanceAfter,
		rec.CreatedAt, nullIfZero(rec.DoneAt)}
}

// InsertMovements stores recs, in the transaction of ctx if any. When a unique
// key refuses any of them it returns ErrMovementKeyTaken without saying which,
// and the others are inserted: the caller rolls back. On PostgreSQL it is one
// multi-row statement (one round trip for the batch); on SQLite, in process,
// the prepared row statement once a row, which SQLite runs without parsing.
func (s *Store) InsertMovements(ctx context.Context, recs []MovementRecord) error {
	// Counted before the statement: bun scans what RETURNING gives back into
	// the slice it inserts, which then holds only the rows inserted.
	want := len(recs)
	if want == 0 {
		return nil
	}
	var n int64
	if s.dialect == DialectPostgres {
		var err error
		if n, err = affected("insert movements")(s.conn(ctx).NewInsert().Model(&recs).On("CONFLICT DO NOTHING").Exec(ctx)); err != nil {
			return err
		}
	} else {
		for i := range recs {
			one, err := affected("insert movements")(s.exec(ctx, "insertMovement", movementArgs(&recs[i])...))
			if err != nil {
				return err
			}
			n += one
		}
	}
	if int(n) != want {
		return fmt.Errorf("store: insert %d movements: %d refused: %w", want, want-int(n), ErrMovementKeyTaken)
	}
	return nil
}

// DebitRecord is what a settlement movement is checked against: the amount
// and the freebet of the bet (table bets) whose debit it settles.
type DebitRecord struct {
	ID        string  `bun:"id"`
	Amount    int64   `bun:"amount"`
	FreebetID *string `bun:"freebet_id"`
}

// Debit returns the debit of the bet betID, and false when no bet has that
// id; in the transaction of ctx if any.
func (s *Store) Debit(ctx context.Context, betID string) (DebitRecord, bool, error) {
	var d DebitRecord
	err := s.queryRow(ctx, "debit", []any{betID}, &d.ID, &d.Amount, &d.FreebetID)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return DebitRecord{}, false, nil
	case err != nil:
		return DebitRecord{}, false, fmt.Errorf("store: read a debit: %w", err)
	}
	return d, true, nil
}

// Debits returns the debits of the bets betIDs that exist, by bet id; in the
// transaction of ctx if any. It is one statement: on PostgreSQL with the ids
// as an array, on SQLite as a JSON array.
func (s *Store) Debits(ctx context.Context, betIDs []string) (map[string]DebitRecord, error) {
	out := make(map[string]DebitRecord, len(betIDs))
	if len(betIDs) == 0 {
		return out, nil
	}
	var ids any = betIDs
	if s.dialect == DialectSQLite {
		b, err := json.Marshal(betIDs)
		if err != nil {
			return nil, fmt.Errorf("store: read %d debits: %w", len(betIDs), err)
		}
		ids = string(b)
	}
	err := s.query(ctx, "debits", []any{ids}, func(rows *sql.Rows) error {
		var d DebitRecord
		if err := rows.Scan(&d.ID, &d.Amount, &d.FreebetID); err != nil {
			return err
		}
		out[d.ID] = d
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: read %d debits: %w", len(betIDs), err)
	}
	return out, nil
}

// GetMovement returns the movement transactionID, token included, or
// ErrMovementNotFound.
func (s *Store) GetMovement(ctx context.Context, transactionID string) (MovementRecord, error) {
	rec, err := rowWhere[MovementRecord](ctx, s.conn(ctx), "transaction_id", transactionID, ErrMovementNotFound, "get movement")
	if err != nil {
		return MovementRecord{}, err
	}
	return *rec, nil
}

// MovementFilter selects movements. Empty fields select everything; Limit
// must be positive.
type MovementFilter struct {
	RoundID  string
	PlayerID string
	Operator string
	Status   string
	BetIDs   []string // the movements that settle these bets
	Limit    int
}

// ListMovements returns at most f.Limit movements that match f, oldest first
// (by created_at, then transaction_id). The token is never read: Token is
// empty in every record.
func (s *Store) ListMovements(ctx context.Context, f MovementFilter) ([]MovementRecord, error) {
	if f.Limit <= 0 {
		return nil, fmt.Errorf("store: list movements: limit %d is not positive", f.Limit)
	}
	q := s.conn(ctx).NewSelect().Model((*MovementRecord)(nil)).ExcludeColumn("token")
	if f.RoundID != "" {
		q = q.Where("round_id = ?", f.RoundID)
	}
	if f.PlayerID != "" {
		q = q.Where("player_id = ?", f.PlayerID)
	}
	if f.Operator != "" {
		q = q.Where("operator = ?", f.Operator)
	}
	if f.Status != "" {
		q = q.Where("status = ?", f.Status)
	}
	if len(f.BetIDs) > 0 {
		q = q.Where("bet_id IN (?)", bun.List(f.BetIDs))
	}
	recs := make([]MovementRecord, 0)
	if err := q.Order("created_at", "transaction_id").Limit(int64(f.Limit)).Scan(ctx, &recs); err != nil {
		return nil, fmt.Errorf("store: list movements: %w", err)
	}
	return recs, nil
}

// MovementClaim asks ClaimMovements for due movements.
type MovementClaim struct {
	Worker   string    // the claiming worker's id, stored in claimed_by
	Now      time.Time // a pending movement is due when next_attempt_at <= Now
	LeaseEnd time.Time // stored in next_attempt_at while the worker holds it
	Limit    int       // at most this many
	// SkipOperators are left alone, due or not.
	SkipOperators []string
}

// ClaimMovements takes up to c.Limit due pending movements, earliest due
// first, for c.Worker: it sets their lease (claimed_by, next_attempt_at =
// LeaseEnd) in one statement and returns them, token included.
//
// A movement whose lease has run out is due again, whoever held it. Two
// concurrent claims never take one movement: on PostgreSQL the candidates are
// chosen and locked in a CTE with FOR UPDATE SKIP LOCKED, which runs once
// (the same SELECT as an IN subquery may be re-run by the planner for each
// row and claim far more than the limit), and a row another worker claimed
// meanwhile is skipped (locked) or re-checked after its commit (no longer
// due); on SQLite the one writer serializes claims.
func (s *Store) ClaimMovements(ctx context.Context, c MovementClaim) ([]MovementRecord, error) {
	if c.Limit <= 0 || c.Worker == "" {
		return nil, fmt.Errorf("store: claim movements: limit %d must be positive and the worker named", c.Limit)
	}
	now, leaseEnd := MillisOf(c.Now), MillisOf(c.LeaseEnd)
	due, args := "status = 'pending' AND next_attempt_at <= ?", []any{now}
	if len(c.SkipOperators) > 0 {
		due += " AND operator NOT IN (?)"
		args = append(args, bun.List(c.SkipOperators))
	}
	var query string
	if s.dialect == DialectPostgres {
		query = "WITH due AS MATERIALIZED (SELECT transaction_id FROM movements WHERE " + due +
			" ORDER BY next_attempt_at LIMIT ? FOR UPDATE SKIP LOCKED) " +
			"UPDATE movements AS m SET claimed_by = ?, next_attempt_at = ? FROM due " +
			"WHERE m.transaction_id = due.transaction_id AND m.status = 'pending' RETURNING " + movementColumnsOf("m.")
		args = append(args, c.Limit, c.Worker, leaseEnd)
	} else {
		query = "UPDATE movements SET claimed_by = ?, next_attempt_at = ? WHERE transaction_id IN (" +
			"SELECT transaction_id FROM movements WHERE " + due + " ORDER BY next_attempt_at LIMIT ?) RETURNING " + movementColumnsOf("")
		args = append(append([]any{c.Worker, leaseEnd}, args...), c.Limit)
	}
	recs := make([]MovementRecord, 0, c.Limit)
	if err := s.conn(ctx).NewRaw(query, args...).Scan(ctx, &recs); err != nil {
		return nil, fmt.Errorf("store: claim movements: %w", err)
	}
	if len(recs) > c.Limit { // never: the statement is wrong; say so rather than overrun the caller
		return recs, fmt.Errorf("store: claim movements: asked for %d, got %d", c.Limit, len(recs))
	}
	return recs, nil
}

// NextDueMovement returns the earliest next_attempt_at of a pending movement
// whose operator is not in skipOperators (a claimed movement's is its lease
// end), and false when there is none.
func (s *Store) NextDueMovement(ctx context.Context, skipOperators []string) (time.Time, bool, error) {
	var next []int64
	sel := s.conn(ctx).NewSelect().Table("movements").Column("next_attempt_at").Where("status = 'pending'")
	if len(skipOperators) > 0 {
		sel = sel.Where("operator NOT IN (?)", bun.List(skipOperators))
	}
	if err := sel.Order("next_attempt_at").Limit(1).Scan(ctx, &next); err != nil {
		return time.Time{}, false, fmt.Errorf("store: next due movement: %w", err)
	}
	if len(next) == 0 {
		return time.Time{}, false, nil
	}
	return Millis(next[0]).Time(), true, nil
}

// MovementAttempt is the row change of one finished attempt of a claimed
// movement. The fields without "always" are written only when set.
type MovementAttempt struct {
	TransactionID string
	Worker        string // the claim it is fenced by: claimed_by must still be this
	Status        string // always
	Attempts      int    // always
	NextAttemptAt Millis // always
	LastError     string // always
	LastRequestID *string
	DoneAt        Millis // 0: left alone
	OperatorTxID  *string
	BalanceAfter  *int64
}

// RecordMovementAttempts writes the changes of finished attempts in one
// transaction (one UPDATE each, in the transaction of ctx if any) and
// releases their claims (claimed_by emptied). A change is fenced by its claim: it
// is applied only while the movement is pending and claimed by a.Worker, so
// a worker whose lease was taken over never overwrites the new holder's
// state. applied[i] reports whether attempts[i] was. On an error nothing is
// recorded.
func (s *Store) RecordMovementAttempts(ctx context.Context, attempts []MovementAttempt) (applied []bool, err error) {
	applied = make([]bool, len(attempts))
	err = s.InTx(ctx, func(ctx context.Context) error {
		db := s.conn(ctx)
		for i := range attempts {
			ok, err := recordMovementAttempt(ctx, db, &attempts[i])
			if err != nil {
				return err
			}
			applied[i] = ok
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: record %d movement attempts: %w", len(attempts), err)
	}
	return applied, nil
}

func recordMovementAttempt(ctx context.Context, db bun.IDB, a *MovementAttempt) (bool, error) {
	uq := db.NewUpdate().Table("movements").
		Set("status = ?", a.Status).
		Set("attempts = ?", a.Attempts).
		Set("next_attempt_at = ?", a.NextAttemptAt).
		Set("claimed_by = ''").
		Set("last_error = ?", a.LastError).
		Where("transaction_id = ?", a.TransactionID).
		Where("claimed_by = ?", a.Worker).
		Where("status = 'pending'")
	if a.LastRequestID != nil {
		uq = uq.Set("last_request_id = ?", *a.LastRequestID)
	}
	if a.DoneAt != 0 {
		uq = uq.Set("done_at = ?", a.DoneAt)
	}
	if a.OperatorTxID != nil {
		uq = uq.Set("operator_tx_id = ?", *a.OperatorTxID)
	}
	if a.BalanceAfter != nil {
		uq = uq.Set("balance_after = ?", *a.BalanceAfter)
	}
	n, err := affected("update movement")(uq.Exec(ctx))
	return n == 1, err
}

// CountMovements counts the movements of each of statuses (a status without
// any counts 0), through the (status, next_attempt_at) index.
func (s *Store) CountMovements(ctx context.Context, statuses ...string) (map[string]int64, error) {
	counts := make(map[string]int64, len(statuses))
	if len(statuses) == 0 {
		return counts, nil
	}
	var rows []struct {
		Status string `bun:"status"`
		N      int64  `bun:"n"`
	}
	err := s.conn(ctx).NewRaw("SELECT status, COUNT(*) AS n FROM movements WHERE status IN (?) GROUP BY status", bun.List(statuses)).
		Scan(ctx, &rows)
	if err != nil {
		return nil, fmt.Errorf("store: count movements: %w", err)
	}
	for _, st := range statuses {
		counts[st] = 0
	}
	for _, r := range rows {
		counts[r.Status] = r.N
	}
	return counts, nil
}
