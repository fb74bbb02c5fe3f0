// Package store owns the database: opening it (SQLite or PostgreSQL), migrating
// its whole schema from the embedded migrations/sqlite and migrations/postgres
// folders, and the launch tickets' table (TicketRecord, tickets.go and
// ticket_writer.go), and every other table of the game with its records and
// statements, one file an aggregate:
//   - rounds and chains (rounds.go) and bets (bets.go);
//   - the wallet's movements (movements.go: the outbox inserts, the claim with
//     a lease, the fenced record of attempts, the listing);
//   - sessions and session_controls (sessions.go) and the reads of a session's
//     bets (session_bets.go);
//   - freebet_sources and freebet_grants (freebets.go);
//   - reconciliation's reads of bets and movements (reconcile.go);
//   - the tables' leases (leases.go): which replica leads a game's table, at
//     which fencing epoch, until when on the database's clock; and the fence,
//     CheckLease, that a leader's transaction passes to commit anything.
//
// operator-sim's ledger lives in its own SQLite database and package,
// internal/store/ledger. No package outside internal/store imports bun.
//
// A domain package that declares its repository over its own types gets it
// from a method of Store that converts (one *_repo.go file a domain):
// Tickets, Freebets, Movements, BackOffice, Reconcile, HashChains.
//
// The statements that every bet and cashout runs (the intent's insert, a
// bet's move, the lease's check, the /win movement's insert, the debit it is
// checked against) are prepared once per connection, with placeholders
// (prepared.go); the others are bun queries, whose values bun writes into
// the statement's text.
//
// A transaction travels in the context (InTx, tx.go): a domain package makes
// several writes atomic by calling the store's methods with the context InTx
// gives it, and never names a database type.
//
// It must never hold business rules (what a ticket is, when a bet is accepted):
// it answers atomically what it is asked and reports which condition failed.
// It must never log or return secrets it stores (tokens) in error messages, nor
// a DSN's password (redactDSN).
//
// Both dialects are kept identical in behaviour: times are BIGINT Unix
// milliseconds (UTC), booleans are 0/1 or BOOLEAN, and every conditional write is
// one statement whose WHERE clause is the decision. A lease's times alone are
// the database's clock, not the caller's, so that replicas agree.
//
// Ticket inserts are group-committed (ticket_writer.go, through package
// groupcommit): concurrent launches share one INSERT and one durable commit.
//
// SQLite runs with ONE open connection (WAL, busy_timeout, _txlock=immediate,
// synchronous=FULL, foreign keys on): a caller that holds a transaction must do
// every query of that transaction through it, never through DB() meanwhile, or
// it deadlocks waiting for the only connection. A SQLite file has a second
// connection for RenewLease alone, so that a renewal never queues behind the
// process's other statements.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/dialect/sqlitedialect"
	"modernc.org/sqlite" // registers database/sql driver "sqlite"

	"github.com/crashstudio/crashgame/internal/groupcommit"
)

// Dialect names returned by (*Store).Dialect.
const (
	DialectSQLite   = "sqlite"
	DialectPostgres = "postgres"
)

// SQLite connection settings applied by Open.
const (
	sqliteBusyTimeout = 5 * time.Second
	sqliteDriverName  = "sqlite" // modernc.org/sqlite: pure Go, builds with CGO_ENABLED=0
)

// PostgreSQL pool settings applied by Open. Every connection a burst opened
// is kept (idle = open): opening one costs a TCP handshake and a SCRAM
// authentication, which took more than a second on a saturated replica, so a
// pool that closed what it opened for a burst paid that again at the next.
const (
	pgMaxOpenConns    = 20
	pgMaxIdleConns    = pgMaxOpenConns
	pgConnMaxLifetime = 30 * time.Minute
	pgConnMaxIdleTime = 5 * time.Minute
	// pgCancelGrace is how long a statement whose context ended may take to
	// stop once PostgreSQL was asked to cancel it, before its connection is
	// given up. pgx's default gives the connection up at once: each query
	// that timed out then cost a new connection (and its authentication),
	// and on a saturated replica the lease's renewals failed opening it.
	// It is also how long the server has to acknowledge the cancel: one
	// not acknowledged by then may still cancel a later statement, and its
	// connection is discarded (pgcancel.go).
	pgCancelGrace = 250 * time.Millisecond
	// pgIdleInTxTimeout is the server's idle_in_transaction_session_timeout
	// on every connection the store opens, unless the DSN sets it: how long
	// a session may sit in an open transaction with no statement running
	// before PostgreSQL ends the session, rolling the transaction back and
	// releasing its locks. A replica frozen inside a transaction (stopped,
	// its VM paused, its host starved) otherwise holds them until it wakes:
	// a fenced commit's lock on the lease row (CheckLease) makes every
	// takeover of that table wait for it, and its bets' rows make the
	// leader's statements that move them wait too. The game's transactions
	// hold statements only, never a call to a wallet or to NATS, so none of
	// them is idle for seconds unless its process stopped running; what the
	// frozen transaction wrote never commits.
	pgIdleInTxTimeout = 10 * time.Second
)

// Store is an open database with its dialect. It is safe for concurrent use.
type Store struct {
	db        *bun.DB
	lease     *bun.DB       // the lease's own connection, for RenewLease alone (a SQLite file's second one; on PostgreSQL one kept open); nil: db
	tx        *Transactions // InTx and conn
	stmts     *statements   // the hot statements, prepared (prepared.go)
	dialect   string
	tickets   *groupcommit.Committer[*TicketRecord]
	closeOnce sync.Once
	warming   atomic.Bool // a warmLease is under way
	path      string      // a SQLite file's path, or ":memory:"
	ownMu     sync.Mutex
	owner     *os.File      // the owner file whose lock this process holds (Own); nil: none
	staled    *atomic.Int64 // PostgreSQL: connections given up because a cancel was not acknowledged in time (pgcancel.go)
	logger    *slog.Logger  // the store's own messages (SetLogger); nil: slog.Default()
}

// SetLogger sends the store's own messages (its migrations') to l; nil:
// slog.Default(). Call it before Migrate.
func (s *Store) SetLogger(l *slog.Logger) { s.logger = l }

// log is the logger of the store's own messages.
func (s *Store) log() *slog.Logger {
	if s.logger != nil {
		return s.logger
	}
	return slog.Default()
}

// newStore returns a Store over db with its ticket writer (started by the
// first ticket, stopped by Close).
func newStore(db *bun.DB, dialect string) *Store {
	s := &Store{db: db, dialect: dialect, tx: NewTransactions(db, nil, "store"), stmts: newStatements(db.DB, dialect)}
	s.tickets = s.newTicketWriter()
	return s
}

// Open opens the database named by dsn and checks that it answers. It does not
// migrate: call Migrate.
//
// Accepted forms:
//
//	sqlite:///abs/path/app.db   sqlite://rel/path/app.db   (parent directory created)
//	sqlite::memory:             sqlite://:memory:          (tests; gone on Close)
//	postgres://user:pass@host:5432/db?sslmode=disable       (also postgresql://)
//
// A SQLite DSN takes no query parameters: the store sets its own.
func Open(ctx context.Context, dsn string) (*Store, error) {
	switch {
	case strings.HasPrefix(dsn, "sqlite:"):
		return openSQLite(ctx, dsn)
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		return openPostgres(ctx, dsn, nil)
	default:
		return nil, fmt.Errorf("store: open: unsupported DSN %q: want sqlite://path, sqlite::memory: or a postgres:// URL", redactDSN(dsn))
	}
}

func openSQLite(ctx context.Context, dsn string) (*Store, error) {
	path, err := sqlitePath(dsn)
	if err != nil {
		return nil, fmt.Errorf("store: open sqlite: %w", err)
	}
	memory := path == ":memory:"
	if !memory {
		if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
			return nil, fmt.Errorf("store: open sqlite: create parent directory: %w", err)
		}
	}
	sqldb, err := openSQLiteConn(path, sqliteBusyTimeout)
	if err != nil {
		return nil, fmt.Errorf("store: open sqlite %q: %w", path, err)
	}
	s := newStore(bun.NewDB(sqldb, sqlitedialect.New()), DialectSQLite)
	s.path = path
	if err := s.checkSQLite(ctx, memory); err != nil {
		_ = sqldb.Close()
		return nil, fmt.Errorf("store: open sqlite %q: %w", path, err)
	}
	if memory {
		return s, nil // a second connection would open another, empty database
	}
	// The lease has a connection of its own: the pool hands its one
	// connection to a random waiter, and a busy process has hundreds, so a
	// renewal queued there could miss its deadline and cost the table its
	// lease to its own load. SQLite's busy handler sleeps up to 100 ms
	// between tries; RenewLease retries every millisecond instead.
	leasedb, err := openSQLiteConn(path, 0)
	if err != nil {
		_ = sqldb.Close()
		return nil, fmt.Errorf("store: open sqlite %q: the lease's connection: %w", path, err)
	}
	s.lease = bun.NewDB(leasedb, sqlitedialect.New())
	return s, nil
}

// openSQLiteConn opens the SQLite file at path as a pool of ONE connection:
// SQLite has one writer anyway, and one connection turns write contention
// into queueing in database/sql instead of SQLITE_BUSY. No lifetime limits:
// an in-memory database lives exactly as long as its connection.
func openSQLiteConn(path string, busy time.Duration) (*sql.DB, error) {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busy.Milliseconds()))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(FULL)") // durable commits: money moves through this database
	q.Add("_pragma", "foreign_keys(1)")
	q.Set("_txlock", "immediate") // BEGIN takes the write lock: no upgrade deadlocks (SQLITE_BUSY)
	sqldb, err := sql.Open(sqliteDriverName, path+"?"+q.Encode())
	if err != nil {
		return nil, err
	}
	sqldb.SetMaxOpenConns(1)
	sqldb.SetMaxIdleConns(1)
	sqldb.SetConnMaxLifetime(0)
	sqldb.SetConnMaxIdleTime(0)
	return sqldb, nil
}

// sqliteBusy reports whether err is SQLITE_BUSY (or one of its extended
// codes): another connection holds the write lock.
func sqliteBusy(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqliteBusyCode
}

// sqliteBusyCode is SQLite's primary result code SQLITE_BUSY.
const sqliteBusyCode = 5

// sqlitePath extracts the file path from a sqlite: DSN.
func sqlitePath(dsn string) (string, error) {
	rest := strings.TrimPrefix(dsn, "sqlite:")
	rest = strings.TrimPrefix(rest, "//")
	switch {
	case rest == ":memory:":
		return rest, nil
	case rest == "":
		return "", errors.New("empty path")
	case strings.ContainsAny(rest, "?#"):
		return "", errors.New("a sqlite DSN takes no query parameters or fragment (the store sets WAL, busy_timeout, _txlock, foreign keys)")
	}
	return filepath.Clean(rest), nil
}

// checkSQLite verifies that the connection settings took effect.
func (s *Store) checkSQLite(ctx context.Context, memory bool) error {
	var mode string
	if err := s.db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return fmt.Errorf("read journal_mode: %w", err)
	}
	if want := "wal"; !memory && !strings.EqualFold(mode, want) {
		return fmt.Errorf("journal_mode is %q, want %q", mode, want)
	}
	var fk int
	if err := s.db.QueryRowContext(ctx, "PRAGMA foreign_keys").Scan(&fk); err != nil {
		return fmt.Errorf("read foreign_keys: %w", err)
	}
	if fk != 1 {
		return errors.New("foreign_keys is off")
	}
	return nil
}

// openPostgres opens the PostgreSQL database of dsn; dial, when not nil,
// replaces pgx's dialer (the tests' faults).
func openPostgres(ctx context.Context, dsn string, dial pgconn.DialFunc) (*Store, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return nil, fmt.Errorf("store: open postgres: parse DSN: %w", redactErr(err, dsn))
	}
	q := u.Query()
	// bun interpolates every argument into the SQL text, so statements carry no
	// parameters: the simple protocol runs each in one round trip, without
	// filling pgx's statement cache with one-off statements.
	if q.Get("default_query_exec_mode") == "" {
		q.Set("default_query_exec_mode", "simple_protocol")
	}
	// A parameter pgx does not know is sent to the server with the
	// connection's start-up (a run-time parameter).
	if q.Get("idle_in_transaction_session_timeout") == "" {
		q.Set("idle_in_transaction_session_timeout", strconv.FormatInt(pgIdleInTxTimeout.Milliseconds(), 10))
	}
	u.RawQuery = q.Encode()

	connCfg, err := pgx.ParseConfig(u.String())
	if err != nil {
		return nil, fmt.Errorf("store: open postgres %s: %w", u.Redacted(), redactErr(err, dsn))
	}
	// A statement whose context ends is cancelled by PostgreSQL (a cancel
	// request on a connection of its own) and its connection kept, rather
	// than closed at once, unless the cancel may still arrive (pgcancel.go).
	staled := new(atomic.Int64)
	connCfg.BuildContextWatcherHandler = newPGCancel(pgCancelGrace, staled)
	if dial != nil {
		connCfg.DialFunc = dial
	}
	reset := stdlib.OptionResetSession(resetSession)
	sqldb := stdlib.OpenDB(*connCfg, reset)
	sqldb.SetMaxOpenConns(pgMaxOpenConns)
	sqldb.SetMaxIdleConns(pgMaxIdleConns)
	sqldb.SetConnMaxLifetime(pgConnMaxLifetime)
	sqldb.SetConnMaxIdleTime(pgConnMaxIdleTime)

	s := newStore(bun.NewDB(sqldb, pgdialect.New()), DialectPostgres)
	s.staled = staled
	if err := s.Ping(ctx); err != nil {
		_ = sqldb.Close()
		return nil, fmt.Errorf("store: open postgres %s: %w", u.Redacted(), err)
	}
	// The lease has a connection of its own, opened now and kept: a renewal
	// never waits for one of the pool's connections (all of them busy under
	// load) nor pays for opening one (its TLS and SCRAM authentication took
	// more than the renewal's second on a saturated machine, and the leader
	// lost its lease to its own load: docs/performance.md, 27 November).
	leasedb := stdlib.OpenDB(*connCfg, reset)
	leasedb.SetMaxOpenConns(1)
	leasedb.SetMaxIdleConns(1)
	leasedb.SetConnMaxLifetime(0)
	leasedb.SetConnMaxIdleTime(0)
	if err := leasedb.PingContext(ctx); err != nil {
		_ = leasedb.Close()
		_ = sqldb.Close()
		return nil, fmt.Errorf("store: open postgres %s: the lease's connection: %w", u.Redacted(), err)
	}
	s.lease = bun.NewDB(leasedb, pgdialect.New())
	return s, nil
}

// leaseWarmWait bounds warmLease's opening of the lease's connection.
const leaseWarmWait = 10 * time.Second

// warmLease opens the lease's own PostgreSQL connection again, in the
// background, after a renewal whose context ended while it ran, whether it
// failed or succeeded late: such a renewal may leave its connection to be
// discarded (pgCancel: its cancel request was not acknowledged in time),
// and the next renewal would then pay for a new one (TCP, TLS, SCRAM)
// inside its own budget, which a saturated machine does
// not meet; the leader lost its lease to its own load that way, term after
// term (the engine's and the replica's tests on a loaded CI machine, 29
// November). The ping takes the pool's one connection, so a renewal that
// starts meanwhile waits for the connection being opened, which is no
// later than opening one itself.
func (s *Store) warmLease() {
	if s.lease == nil || s.dialect != DialectPostgres || !s.warming.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer s.warming.Store(false)
		ctx, cancel := context.WithTimeout(context.Background(), leaseWarmWait)
		defer cancel()
		_ = s.lease.PingContext(ctx) // a failure leaves it to the next renewal
	}()
}

// Close stops the ticket writer, closes the database and gives up its
// ownership (Own). Queries in flight
// fail. It is safe to call more than once.
func (s *Store) Close() error {
	s.closeOnce.Do(s.tickets.Close)
	s.stmts.close()
	var errs []error
	if s.lease != nil {
		if err := s.lease.Close(); err != nil {
			errs = append(errs, fmt.Errorf("store: close the lease's connection: %w", err))
		}
	}
	if err := s.db.Close(); err != nil {
		errs = append(errs, fmt.Errorf("store: close: %w", err))
	}
	// Given up last: no other process may open the file as its owner while
	// this one may still write to it.
	if err := s.disown(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Dialect reports DialectSQLite or DialectPostgres.
func (s *Store) Dialect() string { return s.dialect }

// Ping checks that the database answers (for /readyz).
func (s *Store) Ping(ctx context.Context) error {
	if err := s.db.PingContext(ctx); err != nil {
		return fmt.Errorf("store: ping %s: %w", s.dialect, err)
	}
	return nil
}

// Clock reads the database server's clock for a clock-offset sample: on one
// connection of the pool, already taken (so that waiting for it is not
// counted), sent is now() just before the statement, at the server's clock
// as the statement read it, received is now() once the answer came. The
// server's clock lies between sent and received on the caller's clock,
// shifted by the offset between the two. PostgreSQL reads clock_timestamp(),
// in microseconds. SQLite runs in this process, on this machine: at is
// now() once the database answered, the offset is zero by construction.
func (s *Store) Clock(ctx context.Context, now func() time.Time) (sent, at, received time.Time, err error) {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return time.Time{}, time.Time{}, time.Time{}, fmt.Errorf("store: clock of %s: %w", s.dialect, err)
	}
	defer conn.Close()
	sent = now()
	if s.dialect == DialectSQLite {
		if err := conn.PingContext(ctx); err != nil {
			return time.Time{}, time.Time{}, time.Time{}, fmt.Errorf("store: clock of %s: %w", s.dialect, err)
		}
		at = now()
		return sent, at, at, nil
	}
	var micros int64
	if err := conn.QueryRowContext(ctx, "SELECT (EXTRACT(EPOCH FROM clock_timestamp()) * 1000000)::bigint").Scan(&micros); err != nil {
		return time.Time{}, time.Time{}, time.Time{}, fmt.Errorf("store: clock of %s: %w", s.dialect, err)
	}
	received = now()
	return sent, time.UnixMicro(micros), received, nil
}

// redactDSN hides a password in a DSN that is about to appear in an error.
func redactDSN(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil || u.User == nil {
		if strings.Contains(dsn, "@") {
			return "<redacted>"
		}
		return dsn
	}
	return u.Redacted()
}

// redactErr drops a *url.Error's URL, which would carry the password.
func redactErr(err error, dsn string) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("%s %s: %w", ue.Op, redactDSN(dsn), ue.Err)
	}
	return err
}

// Collector reports the connection pool's figures (open and idle
// connections, waits for a connection and their total time) as the go_sql_*
// metrics, labelled db_name="sqlite" or "postgres": on SQLite every statement queues for the one
// connection, and the wait is where a busy process loses its time.
func (s *Store) Collector() prometheus.Collector {
	return collectors.NewDBStatsCollector(s.db.DB, s.dialect)
}
