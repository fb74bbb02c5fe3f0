package main

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/integration/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// PostgreSQL's activity over the rounds is the difference of two readings
// of the game's database's statistics: the commits, the rows written and
// the WAL, and per accepted bet that difference over the run's bets. A
// database that keeps no such statistics (SQLite) is not read at all.
func TestPostgresActivityOverTheRounds(t *testing.T) {
	t.Parallel()
	if db, err := openPGStats("sqlite:///tmp/game.db"); db != nil || err != nil {
		t.Fatalf("a SQLite game database opened for its statistics: %v, %v", db, err)
	}
	dsn := pgtest.Start(t)
	stats, err := openPGStats(dsn)
	if err != nil || stats == nil {
		t.Fatalf("openPGStats: %v, %v", stats, err)
	}
	defer stats.Close()
	ctx := context.Background()
	from, err := readPGStat(ctx, stats)
	if err != nil {
		t.Fatal(err)
	}

	// What a game would do: five transactions of two inserts, then one
	// update of three rows, on a connection of their own, which PostgreSQL
	// reports at its end.
	game, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := game.ExecContext(ctx, `CREATE TABLE bets (id int PRIMARY KEY, status text)`); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		tx, err := game.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO bets VALUES ($1, 'accepted'), ($2, 'accepted')`, 2*i, 2*i+1); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := game.ExecContext(ctx, `UPDATE bets SET status = 'lost' WHERE id < 3`); err != nil {
		t.Fatal(err)
	}
	if err := game.Close(); err != nil {
		t.Fatal(err)
	}

	var to pgStat
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if to, err = readPGStat(ctx, stats); err != nil {
			t.Fatal(err)
		}
		if to.inserted-from.inserted >= 10 && to.updated-from.updated >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the writes never reached the statistics: from %+v to %+v", from, to)
		}
	}
	to.at = from.at.Add(10 * time.Second)
	got := pgOver(from, to, 4)
	// The catalog's own rows (the CREATE TABLE) are written too: at least.
	if got.Seconds != 10 || got.Commits < 7 || got.Inserted < 10 || got.Updated < 3 || got.WALBytes <= 0 {
		t.Fatalf("pgOver = %+v: want 10 s, at least 7 commits, 10 rows inserted, 3 updated and some WAL", *got)
	}
	// PostgreSQL counts its WAL syncs only while fsync is on (the tests'
	// server may run without).
	var fsync string
	if err := stats.QueryRowContext(ctx, `SHOW fsync`).Scan(&fsync); err != nil {
		t.Fatal(err)
	}
	if fsync == "on" && got.WALSyncs < 1 {
		t.Errorf("fsync is on and no WAL sync was counted: %+v", *got)
	}
	if want := float64(got.Commits) / 4; got.CommitsPerBet != want {
		t.Errorf("commits per bet %v, want %v", got.CommitsPerBet, want)
	}
	if want := float64(got.rows()) / 4; got.RowsPerBet != want {
		t.Errorf("rows per bet %v, want %v", got.RowsPerBet, want)
	}
	if none := pgOver(from, to, 0); none.CommitsPerBet != 0 || none.RowsPerBet != 0 || none.WALPerBet != 0 {
		t.Errorf("with no bet accepted: %+v", none)
	}
	if line := got.describe(); line == "" {
		t.Error("no summary line")
	} else {
		t.Log(line)
	}
}
