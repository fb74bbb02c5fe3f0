package store

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// The statements that every bet and every cashout run, with placeholders.
// bun writes each value into a statement's text, so the database parses
// every statement it is sent: on SQLite that parse was a fifth of a
// cashout's time (docs/performance.md). Prepared once, each is parsed once
// per connection: database/sql keeps it prepared on every connection it ran
// on and reuses it in every transaction of that connection. Each is named
// after the method that runs it, written with ? and numbered ($1, $2...) for
// PostgreSQL (numbered). None holds a literal or a comment with a ?.
var hotQueries = map[string]string{
	// InsertBet: every column of BetRecord, in its order.
	"insertBet": `INSERT INTO bets (id, round_id, game_id, session_hash, operator, player_id, token, player_name,
	currency, demo, amount, auto_cashout, freebet_id, status, multiplier, payout, refusal, operator_tx_id,
	placed_at, settled_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
	// InsertMovement, and InsertMovements on SQLite: every column of
	// MovementRecord, in its order; a unique key that refuses the row
	// inserts nothing.
	"insertMovement": `INSERT INTO movements (transaction_id, kind, operator, game_id, currency, player_id, token,
	round_id, bet_id, amount, win_type, freebet_id, reason, status, attempts, next_attempt_at, claimed_by,
	last_error, last_request_id, operator_tx_id, balance_after, created_at, done_at)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
	// Debit.
	"debit": `SELECT id, amount, freebet_id FROM bets WHERE id = ?`,
	// MoveBet: a NULL leaves its column as it is (BetChange's zero fields).
	"moveBet": `UPDATE bets SET status = ?, settled_at = COALESCE(?, settled_at),
	operator_tx_id = COALESCE(?, operator_tx_id), refusal = COALESCE(?, refusal),
	multiplier = COALESCE(?, multiplier), payout = COALESCE(?, payout)
	WHERE id = ? AND status = ?`,
	// MoveOpenBet: moveBet from either unsettled status, in one statement
	// on the bet's row.
	"moveOpenBet": `UPDATE bets SET status = ?, settled_at = COALESCE(?, settled_at),
	operator_tx_id = COALESCE(?, operator_tx_id), refusal = COALESCE(?, refusal),
	multiplier = COALESCE(?, multiplier), payout = COALESCE(?, payout)
	WHERE id = ? AND status IN ('pending', 'accepted')`,
	// MoveDecidedBets: the round's bets in one status.
	"roundBetsIn": `SELECT id FROM bets WHERE round_id = ? AND status = ?`,
}

// playerBalance is writePlayerBalance's statement (the sessions' flush, a
// player a statement, every second while players play): the balance, then
// the player's operator, id, demo (false), the instant the balance was
// heard twice (its sessions must be unexpired then, and opened by then),
// and its currency twice ("" for every currency). lock is
// what PostgreSQL adds to the sessions' read: their rows locked in the
// order of their hashes.
func playerBalance(lock string) string {
	return `UPDATE sessions SET balance = ? WHERE id_hash IN (SELECT id_hash FROM sessions
	WHERE operator = ? AND player_id = ? AND demo = ? AND expires_at > ? AND created_at <= ? AND (? = '' OR currency = ?)` + lock + `)`
}

// hotQueriesPostgres are the statements whose text differs on PostgreSQL.
var hotQueriesPostgres = map[string]string{
	// CheckLease: the row is locked FOR KEY SHARE until the transaction ends.
	"checkLease": `SELECT epoch FROM leases WHERE game_id = ? FOR KEY SHARE`,
	// Debits: the batch's ids as one array, in one round trip.
	"debits": `SELECT id, amount, freebet_id FROM bets WHERE id = ANY(?)`,
	// MoveDecidedBets: the bets named (ids and operator transaction ids, two
	// arrays of one order) still in the status from, each moved only if no
	// other transaction holds its row: one that does is skipped, never
	// waited for.
	"moveDecidedBets": `UPDATE bets SET status = ?, operator_tx_id = COALESCE(NULLIF(v.tx, ''), bets.operator_tx_id)
	FROM unnest(?::text[], ?::text[]) AS v(id, tx)
	WHERE bets.id = v.id AND bets.id IN (
		SELECT id FROM bets WHERE id = ANY(?::text[]) AND status = ? FOR UPDATE SKIP LOCKED)
	RETURNING bets.id`,
	"playerBalance": playerBalance(" ORDER BY id_hash FOR UPDATE"),
	// writePlayerBalances: the sessions of a flush's players locked in one
	// statement, in the order of their hashes, then written among those
	// rows only, so that no row is locked out of that order.
	"lockPlayerSessions": `SELECT s.id_hash FROM sessions s
	JOIN unnest(?::text[], ?::text[]) AS v(operator, player_id) ON s.operator = v.operator AND s.player_id = v.player_id
	WHERE s.demo = false ORDER BY s.id_hash FOR UPDATE OF s`,
	// Then every player's balance in one statement, among the locked rows
	// only: of two balances of one player that both match a session (one
	// in every currency, one in the session's), the later in the flush's
	// order, as when each was a statement of its own.
	"playerBalancesLocked": `UPDATE sessions s SET balance = w.balance FROM (
		SELECT DISTINCT ON (l.id_hash) l.id_hash, v.balance
		FROM unnest(?::bytea[]) AS l(id_hash)
		JOIN sessions s2 ON s2.id_hash = l.id_hash
		JOIN unnest(?::text[], ?::text[], ?::text[], ?::bigint[], ?::bigint[]) WITH ORDINALITY AS v(operator, player_id, currency, balance, at, ord)
			ON s2.operator = v.operator AND s2.player_id = v.player_id
		WHERE s2.demo = false AND s2.expires_at > v.at AND s2.created_at <= v.at AND (v.currency = '' OR s2.currency = v.currency)
		ORDER BY l.id_hash, v.ord DESC) AS w
	WHERE s.id_hash = w.id_hash`,
}

var hotQueriesSQLite = map[string]string{
	"checkLease": `SELECT epoch FROM leases WHERE game_id = ?`,
	// Debits: the batch's ids as one JSON array, each looked up by the
	// primary key.
	"debits":        `SELECT id, amount, freebet_id FROM bets WHERE id IN (SELECT value FROM json_each(?))`,
	"playerBalance": playerBalance(""),
}

// statements holds the hot statements of one database, each prepared on
// first use (the tables must exist: after Migrate).
type statements struct {
	db      *sql.DB
	queries map[string]string // name -> the dialect's text

	mu       sync.Mutex
	prepared map[string]*sql.Stmt
}

// newStatements returns the hot statements of db in dialect.
func newStatements(db *sql.DB, dialect string) *statements {
	own := hotQueriesSQLite
	if dialect == DialectPostgres {
		own = hotQueriesPostgres
	}
	q := make(map[string]string, len(hotQueries)+len(own))
	for name, text := range hotQueries {
		q[name] = text
	}
	for name, text := range own {
		q[name] = text
	}
	if dialect == DialectPostgres {
		for name, text := range q {
			q[name] = numbered(text)
		}
	}
	return &statements{db: db, queries: q, prepared: make(map[string]*sql.Stmt, len(q))}
}

// numbered writes the placeholders ? of text as $1, $2, ...
func numbered(text string) string {
	var b strings.Builder
	n := 0
	for _, r := range text {
		if r != '?' {
			b.WriteRune(r)
			continue
		}
		n++
		b.WriteByte('$')
		b.WriteString(strconv.Itoa(n))
	}
	return b.String()
}

// prepareAll prepares every statement on the database: Migrate calls it once
// the tables exist, so that no first use inside a transaction has to prepare
// one there (on SQLite's one connection, preparing on the database while a
// transaction holds it would wait for ever).
func (s *statements) prepareAll(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for name, text := range s.queries {
		if s.prepared[name] != nil {
			continue
		}
		st, err := s.db.PrepareContext(ctx, text)
		if err != nil {
			return fmt.Errorf("store: prepare %s: %w", name, err)
		}
		s.prepared[name] = st
	}
	return nil
}

// stmt returns the statement name for tx (nil: the database), and whether
// the caller must close it once done. A statement not prepared yet (a store
// that was not migrated by this process) is prepared on the database, or,
// inside a transaction, on the transaction alone.
func (s *statements) stmt(ctx context.Context, tx *sql.Tx, name string) (*sql.Stmt, bool, error) {
	s.mu.Lock()
	st := s.prepared[name]
	s.mu.Unlock()
	text, ok := s.queries[name]
	if !ok {
		return nil, false, fmt.Errorf("store: no statement %q", name)
	}
	switch {
	case st != nil && tx != nil:
		return tx.StmtContext(ctx, st), true, nil
	case st != nil:
		return st, false, nil
	case tx != nil:
		st, err := tx.PrepareContext(ctx, text)
		if err != nil {
			return nil, false, fmt.Errorf("store: prepare %s: %w", name, err)
		}
		return st, true, nil
	}
	if err := s.prepareAll(ctx); err != nil {
		return nil, false, err
	}
	return s.stmt(ctx, nil, name)
}

// close closes every prepared statement.
func (s *statements) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for name, st := range s.prepared {
		_ = st.Close()
		delete(s.prepared, name)
	}
}

// exec runs the hot statement name with args, in the transaction of ctx if
// any.
func (s *Store) exec(ctx context.Context, name string, args ...any) (sql.Result, error) {
	st, owned, err := s.stmts.stmt(ctx, s.tx.SQLTx(ctx), name)
	if err != nil {
		return nil, err
	}
	if owned {
		defer st.Close()
	}
	return st.ExecContext(ctx, args...)
}

// query runs the hot query name with args, in the transaction of ctx if
// any, and calls scan for each row.
func (s *Store) query(ctx context.Context, name string, args []any, scan func(*sql.Rows) error) error {
	st, owned, err := s.stmts.stmt(ctx, s.tx.SQLTx(ctx), name)
	if err != nil {
		return err
	}
	if owned {
		defer st.Close()
	}
	rows, err := st.QueryContext(ctx, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// queryRow runs the hot query name with args, in the transaction of ctx if
// any, and scans its one row into dest (sql.ErrNoRows when there is none).
func (s *Store) queryRow(ctx context.Context, name string, args []any, dest ...any) error {
	st, owned, err := s.stmts.stmt(ctx, s.tx.SQLTx(ctx), name)
	if err != nil {
		return err
	}
	if owned {
		defer st.Close()
	}
	return st.QueryRowContext(ctx, args...).Scan(dest...)
}

// nullIfZero is v, or NULL when v is its type's zero value.
func nullIfZero[T comparable](v T) any {
	var zero T
	if v == zero {
		return nil
	}
	return v
}
