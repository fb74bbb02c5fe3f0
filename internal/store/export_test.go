package store

import (
	"context"
	"database/sql"

	"github.com/jackc/pgx/v5/pgconn"
)

// OpenPostgresDialing is Open for a postgres:// DSN whose connections,
// cancel requests included, are made by dial.
func OpenPostgresDialing(ctx context.Context, dsn string, dial pgconn.DialFunc) (*Store, error) {
	return openPostgres(ctx, dsn, dial)
}

// MaxOpenConns reports the pool's bound, for the tests of Open.
func MaxOpenConns(s *Store) int { return s.db.Stats().MaxOpenConnections }

// HoldConnection takes every connection of the pool out of use (on SQLite
// the only one, on PostgreSQL all of pgMaxOpenConns) without beginning a
// transaction, until release is called: what a busy process's other
// statements do to a statement that queues for one.
func HoldConnection(s *Store) (release func(), err error) {
	var held []*sql.Conn
	release = func() {
		for _, c := range held {
			_ = c.Close()
		}
	}
	for range s.db.Stats().MaxOpenConnections {
		c, err := s.db.DB.Conn(context.Background())
		if err != nil {
			release()
			return nil, err
		}
		held = append(held, c)
	}
	return release, nil
}

// LeaseBackend is the PostgreSQL backend (its process id) that serves the
// lease's own connection.
func LeaseBackend(ctx context.Context, s *Store) (pid int, err error) {
	err = s.lease.QueryRowContext(ctx, "SELECT pg_backend_pid()").Scan(&pid)
	return pid, err
}

// SleepOnLease runs a statement of d seconds on the lease's own connection,
// as a renewal stuck behind a saturated server does.
func SleepOnLease(ctx context.Context, s *Store, seconds float64) error {
	_, err := s.lease.ExecContext(ctx, "SELECT pg_sleep(?)", seconds)
	return err
}

// Settings is the server's value of the run-time parameter name on a
// connection of the pool and on the lease's own.
func Settings(ctx context.Context, s *Store, name string) (pool, lease string, err error) {
	if err := s.db.QueryRowContext(ctx, "SELECT current_setting(?)", name).Scan(&pool); err != nil {
		return "", "", err
	}
	err = s.lease.QueryRowContext(ctx, "SELECT current_setting(?)", name).Scan(&lease)
	return pool, lease, err
}

// StaleCancels is how many of s's PostgreSQL connections were given up
// because a cancel sent for one of their statements was not acknowledged
// within pgCancelGrace.
func StaleCancels(s *Store) int64 {
	if s.staled == nil {
		return 0
	}
	return s.staled.Load()
}
