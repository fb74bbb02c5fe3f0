package main

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql's "pgx" driver, for pg_stat_database
)

// pgActivity is what PostgreSQL did in the game's database while the players
// played (--game-db on PostgreSQL: its pg_stat_database row read when the
// rounds start and when they end): the transactions it committed and the
// rows it inserted, updated and deleted, the time-driven work included (the
// leases' renewals, the movement queue's claims, the sessions' flushes; a
// read outside a transaction, such as a health probe's, counts as a commit
// too), and, from pg_stat_wal, the WAL it wrote and the times it synced it
// to disk (one sync can make several commits durable). PostgreSQL's statistics reach the view
// within about a second of a transaction's end, so a run of a minute or more
// reads them to within a few per cent. docs/capacity.md fits its lines in
// the bets a second.
type pgActivity struct {
	Seconds  float64 `json:"seconds"`
	Commits  int64   `json:"commits"`
	Inserted int64   `json:"rows_inserted"`
	Updated  int64   `json:"rows_updated"`
	Deleted  int64   `json:"rows_deleted"`
	WALBytes int64   `json:"wal_bytes"`
	WALSyncs int64   `json:"wal_syncs"`
	// Per accepted bet of the run, when it accepted any.
	CommitsPerBet float64 `json:"commits_per_accepted_bet,omitempty"`
	RowsPerBet    float64 `json:"rows_written_per_accepted_bet,omitempty"`
	WALPerBet     float64 `json:"wal_bytes_per_accepted_bet,omitempty"`
}

// rows is the rows written: inserted, updated and deleted.
func (a *pgActivity) rows() int64 { return a.Inserted + a.Updated + a.Deleted }

// pgStat is one reading of the game's database's pg_stat_database row.
type pgStat struct {
	commits, inserted, updated, deleted int64
	walBytes, walSyncs                  int64
	at                                  time.Time
}

// readPGStat reads the pg_stat_database row of db's database.
func readPGStat(ctx context.Context, db *sql.DB) (pgStat, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var s pgStat
	err := db.QueryRowContext(ctx, `SELECT xact_commit, tup_inserted, tup_updated, tup_deleted
		FROM pg_stat_database WHERE datname = current_database()`).Scan(&s.commits, &s.inserted, &s.updated, &s.deleted)
	if err != nil {
		return pgStat{}, fmt.Errorf("pg_stat_database: %w", err)
	}
	if err := db.QueryRowContext(ctx, `SELECT wal_bytes::bigint, wal_sync FROM pg_stat_wal`).Scan(&s.walBytes, &s.walSyncs); err != nil {
		return pgStat{}, fmt.Errorf("pg_stat_wal: %w", err)
	}
	s.at = time.Now()
	return s, nil
}

// pgOver is the activity between two readings, per accepted bet of the run
// as well.
func pgOver(from, to pgStat, accepted int) *pgActivity {
	a := &pgActivity{Seconds: to.at.Sub(from.at).Seconds(), Commits: to.commits - from.commits,
		Inserted: to.inserted - from.inserted, Updated: to.updated - from.updated, Deleted: to.deleted - from.deleted,
		WALBytes: to.walBytes - from.walBytes, WALSyncs: to.walSyncs - from.walSyncs}
	if accepted > 0 {
		n := float64(accepted)
		a.CommitsPerBet, a.RowsPerBet, a.WALPerBet = float64(a.Commits)/n, float64(a.rows())/n, float64(a.WALBytes)/n
	}
	return a
}

// describe is the summary's line of a.
func (a *pgActivity) describe() string {
	return fmt.Sprintf("PostgreSQL over the rounds (%.0f s): %d commits, %d rows written (%d inserted, %d updated, %d deleted), %.1f MB of WAL in %d syncs; a second %.0f commits, %.0f rows, %.0f WAL syncs; per accepted bet %.1f commits, %.1f rows, %.0f bytes of WAL",
		a.Seconds, a.Commits, a.rows(), a.Inserted, a.Updated, a.Deleted, float64(a.WALBytes)/1e6, a.WALSyncs,
		float64(a.Commits)/a.Seconds, float64(a.rows())/a.Seconds, float64(a.WALSyncs)/a.Seconds, a.CommitsPerBet, a.RowsPerBet, a.WALPerBet)
}

// openPGStats opens the game's database for its statistics (--game-db,
// PostgreSQL only; nil, nil for any other database: SQLite keeps none).
func openPGStats(dsn string) (*sql.DB, error) {
	if !strings.HasPrefix(dsn, "postgres://") && !strings.HasPrefix(dsn, "postgresql://") {
		return nil, nil
	}
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, fmt.Errorf("the game's database: %w", err)
	}
	db.SetMaxOpenConns(1)
	return db, nil
}
