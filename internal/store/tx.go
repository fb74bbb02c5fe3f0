package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/uptrace/bun"
)

// Transactions runs the transactions of one database and carries each in the
// context, under a key of its own: a context holding one database's
// transaction is never taken for another's (the game's store and
// operator-sim's ledger, or two stores in one test). Store and ledger.Store
// each hold one.
type Transactions struct {
	db   *bun.DB
	opts *sql.TxOptions
	name string // names its errors: "store", "ledger"
}

// NewTransactions returns the transactions of db, begun with opts (nil: the
// driver's defaults), whose errors start with name.
func NewTransactions(db *bun.DB, opts *sql.TxOptions, name string) *Transactions {
	return &Transactions{db: db, opts: opts, name: name}
}

// InTx runs fn in one transaction: every statement run on Conn with the
// context that fn receives runs inside it, and it commits when fn returns nil
// and rolls back otherwise (or when fn panics). Called with a context that
// already carries a transaction of t, it runs fn in that transaction: the
// outermost caller decides the commit. fn's own error is returned unchanged.
func (t *Transactions) InTx(ctx context.Context, fn func(ctx context.Context) error) error {
	if tx, ok := ctx.Value(t).(*bun.Tx); ok && tx != nil {
		return fn(ctx)
	}
	var fnErr error
	err := t.db.RunInTx(ctx, t.opts, func(ctx context.Context, tx bun.Tx) error {
		fnErr = fn(context.WithValue(ctx, t, &tx))
		return fnErr
	})
	switch {
	case err == nil:
		return nil
	case err == fnErr:
		return err // fn's own answer, unchanged: its caller decides what it means
	default:
		return fmt.Errorf("%s: transaction: %w", t.name, err)
	}
}

// Carries reports whether ctx carries a transaction of t (InTx).
func (t *Transactions) Carries(ctx context.Context) bool {
	return t.SQLTx(ctx) != nil
}

// SQLTx is the database/sql transaction that ctx carries (InTx), or nil: what
// runs a statement prepared once (sql.Tx.StmtContext) inside it.
func (t *Transactions) SQLTx(ctx context.Context) *sql.Tx {
	if tx, ok := ctx.Value(t).(*bun.Tx); ok && tx != nil {
		return tx.Tx
	}
	return nil
}

// Conn is what a statement runs on: the transaction of ctx (InTx), else the
// database.
func (t *Transactions) Conn(ctx context.Context) bun.IDB {
	if tx, ok := ctx.Value(t).(*bun.Tx); ok && tx != nil {
		return tx
	}
	return t.db
}

// InTx runs fn in one transaction of the store (Transactions.InTx): every
// method of s called with the context that fn receives runs inside it.
//
// This is how a domain package makes several writes atomic (a bet and the
// freebet it spends, a cashout and its /win movement) without naming a
// database type: the transaction travels in the context, and the domain's
// interfaces take only ctx and values.
//
// On SQLite the store has one connection: inside fn, every call must use fn's
// context, never an outer one, or it waits forever for that connection.
func (s *Store) InTx(ctx context.Context, fn func(ctx context.Context) error) error {
	return s.tx.InTx(ctx, fn)
}

// conn is what a statement runs on: the transaction of ctx, else the database.
func (s *Store) conn(ctx context.Context) bun.IDB { return s.tx.Conn(ctx) }

// ExecForTest runs one raw statement and reports the rows it affected. It is
// for tests that must put the database into a state no method produces (a
// lease held by a worker that died, a row written by an older version);
// production code never calls it.
func (s *Store) ExecForTest(ctx context.Context, query string, args ...any) (int64, error) {
	return affected("exec for test")(s.conn(ctx).ExecContext(ctx, query, args...))
}

// affected returns what turns a statement's result into the number of rows it
// affected, its errors named with what.
func affected(what string) func(sql.Result, error) (int64, error) {
	return func(res sql.Result, err error) (int64, error) {
		if err != nil {
			return 0, fmt.Errorf("store: %s: %w", what, err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return 0, fmt.Errorf("store: %s: rows affected: %w", what, err)
		}
		return n, nil
	}
}

// QueryRowForTest runs one raw query that returns at most one row, for tests
// that check what is stored (a count, a column no method returns); production
// code never calls it.
func (s *Store) QueryRowForTest(ctx context.Context, query string, args ...any) *sql.Row {
	return s.conn(ctx).QueryRowContext(ctx, query, args...)
}

// one maps the error of a statement that reads or writes exactly one row: no
// row is notFound, the caller's to name; any other error is wrapped with what.
func one(err, notFound error, what string) error {
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return notFound
	case err != nil:
		return fmt.Errorf("store: %s: %w", what, err)
	}
	return nil
}

// rowWhere reads the one row of T's table whose column equals value: no such
// row is notFound.
func rowWhere[T any](ctx context.Context, db bun.IDB, column string, value any, notFound error, what string) (*T, error) {
	rec := new(T)
	err := db.NewSelect().Model(rec).Where("? = ?", bun.Ident(column), value).Scan(ctx)
	if err := one(err, notFound, what); err != nil {
		return nil, err
	}
	return rec, nil
}
