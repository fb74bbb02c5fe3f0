package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"embed"
	"fmt"
	"io/fs"
	"time"

	"github.com/uptrace/bun/migrate"
)

// Migrations live in one folder per dialect, in bun's format
// NNNN_name.tx.up.sql / NNNN_name.tx.down.sql (".tx": each file runs in one
// transaction, so a failed migration leaves nothing half-applied). Statements in
// a file are separated by a line "--bun:split". A migration, once merged, is
// never edited: add the next number. Both folders carry the same numbers, and
// a fresh database of either dialect gets the same tables, columns,
// nullability and indexes (migrate_test.go checks both); only the types and
// the dialects' own clauses differ, each file plain SQL of its dialect.
// Write them re-runnable (IF NOT EXISTS): a migration is recorded as applied
// after its transaction commits (WithMarkAppliedOnSuccess), so a crash between
// the two runs it again. SQLite has no ADD COLUMN IF NOT EXISTS: a SQLite
// migration that adds a column names it in sqliteAddedColumns instead.
//
//go:embed migrations/sqlite/*.sql migrations/postgres/*.sql
var migrationFiles embed.FS

const (
	// migrateLockWait bounds how long Migrate waits for bun's migration lock
	// held by another process before it reports a (probably stale) lock.
	migrateLockWait = 30 * time.Second
	// pgMigrateLockKey is the PostgreSQL advisory lock that serializes
	// migrators across processes ("crashgam" in ASCII).
	pgMigrateLockKey int64 = 0x637261736867616d
)

// Migrate applies every embedded migration not yet applied, in order. It is
// idempotent: a second call, or a call by a second process, applies nothing.
//
// Two processes starting at once are serialized: on PostgreSQL by a session
// advisory lock (polled, and released by the server if the process dies)
// and then bun's migration lock (a row in bun_migration_locks), on SQLite by
// bun's lock alone, polled for up to 30 s.
func (s *Store) Migrate(ctx context.Context) error {
	migrations, names, err := s.migrations()
	if err != nil {
		return err
	}
	if s.dialect == DialectPostgres {
		unlock, err := s.pgAdvisoryLock(ctx)
		if err != nil {
			return err
		}
		defer unlock()
	}

	m := migrate.NewMigrator(s.db, migrations, migrate.WithMarkAppliedOnSuccess(true))
	if err := m.Init(ctx); err != nil {
		return fmt.Errorf("store: migrate %s: create migration tables: %w", s.dialect, err)
	}
	if err := lockMigrator(ctx, m); err != nil {
		return fmt.Errorf("store: migrate %s: %w", s.dialect, err)
	}
	defer func() {
		if err := m.Unlock(context.WithoutCancel(ctx)); err != nil {
			s.log().ErrorContext(ctx, "store: release migration lock", "dialect", s.dialect, "err", err)
		}
	}()

	group, err := m.Migrate(ctx)
	if err != nil {
		return fmt.Errorf("store: migrate %s: %w", s.dialect, err)
	}
	if !group.IsZero() {
		applied := make([]string, 0, len(group.Migrations))
		for _, mig := range group.Migrations {
			applied = append(applied, mig.String())
		}
		s.log().InfoContext(ctx, "store: migrations applied", "dialect", s.dialect, "group", group.ID, "migrations", applied)
	}

	// A database migrated by a newer binary (rolling deploy) is usable by an
	// older one as long as migrations only add; say so rather than fail.
	done, err := m.AppliedMigrations(ctx)
	if err != nil {
		return fmt.Errorf("store: migrate %s: list applied migrations: %w", s.dialect, err)
	}
	for _, mig := range done {
		if _, ok := names[mig.Name]; !ok {
			s.log().WarnContext(ctx, "store: database has a migration this binary does not know (newer binary?)",
				"dialect", s.dialect, "migration", mig.Name)
		}
	}
	// The tables exist: prepare the hot statements before any transaction
	// needs them.
	if err := s.stmts.prepareAll(ctx); err != nil {
		return fmt.Errorf("store: migrate %s: %w", s.dialect, err)
	}
	return nil
}

// migrations discovers this dialect's embedded migrations.
func (s *Store) migrations() (*migrate.Migrations, map[string]struct{}, error) {
	sub, err := fs.Sub(migrationFiles, "migrations/"+s.dialect)
	if err != nil {
		return nil, nil, fmt.Errorf("store: migrations for %s: %w", s.dialect, err)
	}
	ms := migrate.NewMigrations()
	if err := ms.Discover(sub); err != nil {
		return nil, nil, fmt.Errorf("store: discover %s migrations: %w", s.dialect, err)
	}
	names := make(map[string]struct{})
	for _, mig := range ms.Sorted() {
		names[mig.Name] = struct{}{}
	}
	if len(names) == 0 {
		return nil, nil, fmt.Errorf("store: no embedded migrations for %s", s.dialect)
	}
	if s.dialect == DialectSQLite {
		return s.skipAddedColumns(ms), names, nil
	}
	return ms, names, nil
}

// sqliteAddedColumns names, for each SQLite migration that adds a column to a
// table (ALTER TABLE ADD COLUMN, which SQLite cannot make conditional), the
// column it adds.
var sqliteAddedColumns = map[string]struct{ table, column string }{
	"0006": {"rounds", "epoch"},
	"0007": {"rounds", "chain_id"},
	"0011": {"hash_chains", "contribution_rule"},
	"0012": {"rounds", "voided_at"},
	"0013": {"hash_chains", "beacon_network"},
}

// skipAddedColumns returns ms where each migration of sqliteAddedColumns is
// skipped, and recorded as applied, when its column exists: the column exists
// only if the migration's file ran, in one transaction that committed, so all
// of it is applied (the process died before bun recorded it, or bun's records
// were lost). This makes those migrations re-runnable like the others.
func (s *Store) skipAddedColumns(ms *migrate.Migrations) *migrate.Migrations {
	out := migrate.NewMigrations()
	for _, mig := range ms.Sorted() {
		if col, ok := sqliteAddedColumns[mig.Name]; ok && mig.Up != nil {
			up := mig.Up
			mig.Up = func(ctx context.Context, m *migrate.Migrator, run *migrate.Migration) error {
				var n int
				err := s.db.QueryRowContext(ctx, "SELECT count(*) FROM pragma_table_info(?) WHERE name = ?", col.table, col.column).Scan(&n)
				if err != nil {
					return fmt.Errorf("does %s.%s exist: %w", col.table, col.column, err)
				}
				if n > 0 {
					s.log().InfoContext(ctx, "store: migration already applied: its column exists",
						"dialect", s.dialect, "migration", run.String(), "column", col.table+"."+col.column)
					return nil
				}
				return up(ctx, m, run)
			}
		}
		out.Add(mig)
	}
	return out
}

// lockMigrator takes bun's migration lock, polling while another migrator
// holds it.
func lockMigrator(ctx context.Context, m *migrate.Migrator) error {
	ctx, cancel := context.WithTimeout(ctx, migrateLockWait)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		err := m.Lock(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("migration lock still held after %s (if no migrator runs, a crashed one left it: "+
				"DELETE FROM bun_migration_locks): %w", migrateLockWait, err)
		case <-tick.C:
		}
	}
}

// pgAdvisoryLockPoll is how often a migrator waiting for another one tries
// the advisory lock again.
const pgAdvisoryLockPoll = 100 * time.Millisecond

// pgAdvisoryLock takes the migration advisory lock on a dedicated connection
// and returns the function that releases it. It polls
// (pg_try_advisory_lock) rather than waits in pg_advisory_lock: a statement
// that waits holds a snapshot, and CREATE INDEX CONCURRENTLY in the lock
// holder's migration waits for every snapshot older than it to end, so the
// two would wait for each other forever.
func (s *Store) pgAdvisoryLock(ctx context.Context) (unlock func(), err error) {
	conn, err := s.db.DB.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("store: migrate: connection for advisory lock: %w", err)
	}
	tick := time.NewTicker(pgAdvisoryLockPoll)
	defer tick.Stop()
	for {
		var got bool
		if err := conn.QueryRowContext(ctx, fmt.Sprintf("SELECT pg_try_advisory_lock(%d)", pgMigrateLockKey)).Scan(&got); err != nil {
			discardConn(conn)
			return nil, fmt.Errorf("store: migrate: advisory lock: %w", err)
		}
		if got {
			break
		}
		select {
		case <-ctx.Done():
			discardConn(conn)
			return nil, fmt.Errorf("store: migrate: advisory lock: %w", ctx.Err())
		case <-tick.C:
		}
	}
	return func() {
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if _, err := conn.ExecContext(uctx, fmt.Sprintf("SELECT pg_advisory_unlock(%d)", pgMigrateLockKey)); err != nil {
			s.log().ErrorContext(ctx, "store: release migration advisory lock", "err", err)
			discardConn(conn) // never return a connection that may still hold the lock to the pool
			return
		}
		_ = conn.Close()
	}, nil
}

// discardConn closes conn's underlying connection instead of returning it to
// the pool.
func discardConn(conn *sql.Conn) {
	_ = conn.Raw(func(any) error { return driver.ErrBadConn })
	_ = conn.Close()
}
