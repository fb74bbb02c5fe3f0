package operatorsim

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"net/url"
	"os"
	"path/filepath"

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

// MemoryDB is the Config.DB value of a ledger that lives only in memory.
const MemoryDB = ":memory:"

// openDB opens the SQLite ledger at path (a file, created with its parent
// folder, or MemoryDB) and applies the migrations.
//
// One open connection: SQLite has one writer anyway, and with one connection
// every movement's transaction queues in database/sql instead of failing with
// SQLITE_BUSY. BEGIN IMMEDIATE (_txlock) takes the write lock at the start of
// each transaction, so a check and the write that depends on it can never be
// interleaved with another movement's.
func openDB(ctx context.Context, path string) (*bun.DB, error) {
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
	return db, nil
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
