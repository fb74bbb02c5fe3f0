// Package ledger owns the reference operator's (operator-sim's) ledger
// database: opening it, migrating it from the embedded migrations folder, the
// bun models of its four tables (players, sessions, transactions,
// freebet_grants, as PlayerRecord, SessionRecord, MovementRecord and
// GrantRecord) and every SQL statement run on them, as methods of *Store.
//
// The ledger is SQLite only (one file, or MemoryDB): it is a test double of an
// operator's wallet, not part of the game's database, and has no PostgreSQL
// implementation.
//
// A transaction travels in the context, exactly like package store's: InTx
// runs a function in one transaction, and every method of the Store called
// with the context it receives runs inside it. The database has ONE
// connection, so inside InTx every call must use InTx's context, never an
// outer one, or it waits forever for that connection.
//
// It also owns the group transaction (InGroupTx, group.go): concurrent calls
// share one transaction and one durable commit through a
// groupcommit.Committer, each call in a savepoint of its own, so that one
// call's error rolls back its writes alone, and a failed commit fails every
// call of the group. It must never answer a call before its group committed.
// The statements every movement runs are prepared once with placeholders
// (prepared.go); the others are bun queries.
//
// It must never hold the operator's rules (which request is refused, what a
// replay answers, what a rollback undoes, when a freebet is spent): package
// operatorsim decides, and this package answers atomically what it is asked
// (a conditional UPDATE whose WHERE is the decision) and reports which
// condition failed with a sentinel error (ErrNotFound, ErrDuplicate,
// ErrBalance, ErrSettled). It must never put a session token into an error.
package ledger

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"

	"github.com/crashstudio/crashgame/internal/groupcommit"
	"github.com/crashstudio/crashgame/internal/store"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/sqlitedialect"
	"github.com/uptrace/bun/migrate"
	_ "modernc.org/sqlite" // database/sql driver "sqlite", pure Go (CGO_ENABLED=0)
)

// The ledger's schema, as numbered bun migrations (NNNN_name.tx.up.sql, each
// run in one transaction; statements separated by "--bun:split"). A migration,
// once committed, is never edited: add the next number.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

// MemoryDB is the path of a ledger that lives only in memory.
const MemoryDB = ":memory:"

// Sentinel errors: which condition of a read or a conditional write failed.
var (
	// ErrNotFound: no row has the key asked for (player, session, movement).
	ErrNotFound = errors.New("ledger: not found")
	// ErrDuplicate: a row with the same key already exists (a player id, a
	// movement's (player_id, transaction_id)); nothing was written.
	ErrDuplicate = errors.New("ledger: already exists")
	// ErrBalance: the balance was not moved, because the player does not
	// exist or the move would take the balance below zero.
	ErrBalance = errors.New("ledger: balance not moved")
	// ErrSettled: the debit was not settled, because it is already settled
	// (or does not exist).
	ErrSettled = errors.New("ledger: debit already settled")
)

// Movement kinds (transactions.kind), as the schema's CHECK allows them.
const (
	KindBet      = "bet"
	KindWin      = "win"
	KindRollback = "rollback"
)

// SettlementRollback is the settlement of a bet undone by a rollback; a bet
// closed by a win carries the win's type (win, freebet, zero_win, lose).
const SettlementRollback = "rollback"

// Store is an open ledger.
type Store struct {
	db    *bun.DB
	tx    *store.Transactions // InTx and conn: the ledger's own, never the game's
	group *groupcommit.Committer[*groupCall]
	stmts map[string]*sql.Stmt // prepared.go
}

// Open opens the SQLite ledger at path (a file, created with its parent
// folder, or MemoryDB; "" means MemoryDB) and applies the migrations not yet
// applied.
//
// One open connection: SQLite has one writer anyway, and with one connection
// every transaction queues in database/sql instead of failing with
// SQLITE_BUSY. BEGIN IMMEDIATE (_txlock) takes the write lock at the start of
// each transaction, so a check and the write that depends on it can never be
// interleaved with another transaction's. Concurrent movements share a
// transaction through InGroupTx, where they run one after another.
func Open(ctx context.Context, path string) (*Store, error) {
	if path == "" {
		path = MemoryDB
	}
	if path != MemoryDB {
		if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
			return nil, fmt.Errorf("create the ledger's folder: %w", err)
		}
	}
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(5000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(FULL)") // a committed movement survives a power cut
	q.Add("_pragma", "foreign_keys(1)")
	q.Set("_txlock", "immediate")
	sqldb, err := sql.Open("sqlite", path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("open ledger %q: %w", path, err)
	}
	sqldb.SetMaxOpenConns(1)
	sqldb.SetMaxIdleConns(1)
	sqldb.SetConnMaxLifetime(0) // an in-memory database lives exactly as long as its connection
	sqldb.SetConnMaxIdleTime(0)
	db := bun.NewDB(sqldb, sqlitedialect.New())
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("open ledger %q: %w", path, err)
	}
	if err := migrateDB(ctx, db); err != nil {
		_ = db.Close()
		return nil, err
	}
	s := &Store{db: db, tx: store.NewTransactions(db, &sql.TxOptions{}, "ledger")}
	if err := s.prepare(ctx); err != nil {
		s.closePrepared()
		_ = db.Close()
		return nil, err
	}
	s.group = s.newGroup()
	return s, nil
}

// migrateDB applies every embedded migration not yet applied.
func migrateDB(ctx context.Context, db *bun.DB) error {
	ms := migrate.NewMigrations()
	if err := ms.Discover(migrationFiles); err != nil {
		return fmt.Errorf("discover ledger migrations: %w", err)
	}
	m := migrate.NewMigrator(db, ms, migrate.WithMarkAppliedOnSuccess(true))
	if err := m.Init(ctx); err != nil {
		return fmt.Errorf("create migration tables: %w", err)
	}
	if err := m.Lock(ctx); err != nil {
		return fmt.Errorf("lock ledger migrations (another operator-sim on this file?): %w", err)
	}
	defer func() { _ = m.Unlock(context.WithoutCancel(ctx)) }()
	if _, err := m.Migrate(ctx); err != nil {
		return fmt.Errorf("migrate ledger: %w", err)
	}
	return nil
}

// Close commits and answers the InGroupTx calls already queued, refuses new
// ones (ErrClosed) and closes the ledger.
func (s *Store) Close() error {
	s.group.Close()
	s.closePrepared()
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("ledger: close: %w", err)
	}
	return nil
}

// InTx runs fn in one immediate transaction: every method of s called with the
// context that fn receives runs inside it, and it commits when fn returns nil
// and rolls back otherwise (or when fn panics). Called with a context that
// already carries a transaction of s, it runs fn in that transaction: the
// outermost caller decides the commit. fn's own error is returned unchanged.
func (s *Store) InTx(ctx context.Context, fn func(ctx context.Context) error) error {
	return s.tx.InTx(ctx, fn)
}

// conn is what a statement runs on: the transaction of ctx (InTx), else the
// database.
func (s *Store) conn(ctx context.Context) bun.IDB { return s.tx.Conn(ctx) }

// ExecForTest runs one raw statement, in the transaction of ctx if it carries
// one. It is for tests that must put the ledger into a state no method
// produces (a commit that fails); production code never calls it.
func (s *Store) ExecForTest(ctx context.Context, query string, args ...any) error {
	if _, err := s.conn(ctx).ExecContext(ctx, query, args...); err != nil {
		return fmt.Errorf("ledger: exec for test: %w", err)
	}
	return nil
}

// changedOne judges the result of a conditional UPDATE whose WHERE is the
// decision: nil when it changed one row, else its error, or unmet when no
// row met the condition, named with what.
func changedOne(res sql.Result, err error, what string, unmet error) error {
	if err != nil {
		return fmt.Errorf("ledger: %s: %w", what, err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return fmt.Errorf("ledger: %s: %w", what, unmet)
	}
	return nil
}
