package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// movementColumns are the columns of transactions, in MovementRecord's order,
// as the prepared statements read them (scanMovement).
const movementColumns = `id, player_id, transaction_id, kind, amount, delta, balance_after, currency,
	bet_id, round_id, freebet_id, win_type, reason, request_hash, response_status, response_body,
	settlement, settled_by, created_at`

// The statements every wallet movement runs, with placeholders. bun sends its
// queries as text with the values inlined, so SQLite parses each of them on
// every call; prepared once, each is parsed once per connection (the driver
// keeps the prepared statement, and database/sql reuses it in every
// transaction of that connection). Each is named after the method that runs
// it.
var preparedQueries = map[string]string{
	"player":          `SELECT player_id, name, currency, balance, blocked, created_at FROM players WHERE player_id = ?`,
	"session":         `SELECT token, player_id, created_at, expires_at, revoked FROM sessions WHERE token = ?`,
	"movementByTx":    `SELECT ` + movementColumns + ` FROM transactions WHERE player_id = ? AND transaction_id = ?`,
	"hasRollbackOf":   `SELECT EXISTS (SELECT 1 FROM transactions WHERE player_id = ? AND kind = ? AND bet_id = ?)`,
	"addBalance":      `UPDATE players SET balance = balance + ? WHERE player_id = ? AND balance + ? >= 0`,
	"setResponseBody": `UPDATE transactions SET response_body = ? WHERE id = ?`,
	"insertMovement": `INSERT INTO transactions (player_id, transaction_id, kind, amount, delta, balance_after,
	currency, bet_id, round_id, freebet_id, win_type, reason, request_hash, response_status, response_body,
	settlement, settled_by, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
	ON CONFLICT (player_id, transaction_id) DO NOTHING RETURNING id`,
	"savepoint":  `SAVEPOINT call`,
	"rollbackTo": `ROLLBACK TO call`,
	"release":    `RELEASE call`,
}

// prepare prepares every statement of preparedQueries on the database.
func (s *Store) prepare(ctx context.Context) error {
	s.stmts = make(map[string]*sql.Stmt, len(preparedQueries))
	for name, q := range preparedQueries {
		st, err := s.db.DB.PrepareContext(ctx, q)
		if err != nil {
			return fmt.Errorf("ledger: prepare %s: %w", name, err)
		}
		s.stmts[name] = st
	}
	return nil
}

// closePrepared closes the prepared statements.
func (s *Store) closePrepared() {
	for _, st := range s.stmts {
		_ = st.Close()
	}
}

// stmt is the prepared statement name, in the transaction of ctx if it
// carries one (the one connection is that transaction's), to be closed after
// use; closing it leaves the statement prepared on the connection.
func (s *Store) stmt(ctx context.Context, name string) *sql.Stmt {
	st := s.stmts[name]
	if tx := s.tx.SQLTx(ctx); tx != nil {
		return tx.StmtContext(ctx, st)
	}
	return st
}

// queryRow runs the prepared query name and scans its one row into dest; no
// row is ErrNotFound, named with what.
func (s *Store) queryRow(ctx context.Context, name, what string, args []any, dest ...any) error {
	st := s.stmt(ctx, name)
	defer s.closeStmt(ctx, st)
	err := st.QueryRowContext(ctx, args...).Scan(dest...)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("ledger: %s: %w", what, ErrNotFound)
	case err != nil:
		return fmt.Errorf("ledger: %s: %w", what, err)
	}
	return nil
}

// exec runs the prepared statement name.
func (s *Store) exec(ctx context.Context, name string, args ...any) (sql.Result, error) {
	st := s.stmt(ctx, name)
	defer s.closeStmt(ctx, st)
	return st.ExecContext(ctx, args...)
}

// closeStmt closes a statement stmt returned for a transaction; the
// database's own prepared statements stay open until Close.
func (s *Store) closeStmt(ctx context.Context, st *sql.Stmt) {
	if s.tx.SQLTx(ctx) != nil {
		_ = st.Close()
	}
}

// scanMovement is the destinations of movementColumns in m.
func scanMovement(m *MovementRecord) []any {
	return []any{&m.ID, &m.PlayerID, &m.TransactionID, &m.Kind, &m.Amount, &m.Delta, &m.BalanceAfter,
		&m.Currency, &m.BetID, &m.RoundID, &m.FreebetID, &m.WinType, &m.Reason, &m.RequestHash,
		&m.ResponseStatus, &m.ResponseBody, &m.Settlement, &m.SettledBy, &m.CreatedAt}
}
