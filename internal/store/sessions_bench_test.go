package store_test

import (
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/integration/pgtest"
	"github.com/crashstudio/crashgame/internal/store"
	"github.com/crashstudio/crashgame/internal/store/storetest"
)

// BenchmarkWriteSessionStates: one flush of the display balances of 2,000
// players (each with one session), as the sessions' flush loop writes them
// once a second while they play: one op is one flush. On a SQLite file, and
// on PostgreSQL (pgtest's server, fsync off), where it also reports the
// transactions each flush committed (pg_stat_database, read once the
// store's connections are closed and their statistics reported): the
// commits a flush adds to PostgreSQL's, docs/capacity.md's first limit.
func BenchmarkWriteSessionStates(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) { benchWriteSessionStates(b, storetest.SQLite(b), nil) })
	b.Run("postgres", func(b *testing.B) {
		dsn := pgtest.Start(b)
		stats, err := sql.Open("pgx", dsn)
		if err != nil {
			b.Fatal(err)
		}
		defer stats.Close()
		benchWriteSessionStates(b, dsn, stats)
	})
}

func benchWriteSessionStates(b *testing.B, dsn string, stats *sql.DB) {
	const players = 2000
	s, err := store.Open(b.Context(), dsn)
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Migrate(b.Context()); err != nil { // nothing to do on storetest's SQLite
		b.Fatal(err)
	}
	closed := false
	b.Cleanup(func() {
		if !closed {
			_ = s.Close()
		}
	})
	at := store.MillisOf(t0)
	balances := make([]store.SessionBalance, players)
	for i := range players {
		r := newSession(fmt.Sprint(i))
		r.PlayerID = fmt.Sprintf("p-%d", i)
		if err := s.InsertSession(b.Context(), r, nil); err != nil {
			b.Fatal(err)
		}
		balances[i] = store.SessionBalance{Operator: r.Operator, PlayerID: r.PlayerID, Currency: r.Currency, At: at}
	}
	commits := func() int64 {
		var n int64
		if err := stats.QueryRowContext(b.Context(), `SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()`).Scan(&n); err != nil {
			b.Fatal(err)
		}
		return n
	}
	var before int64
	if stats != nil {
		_ = s.Close() // its statistics so far reported
		if s, err = store.Open(b.Context(), dsn); err != nil {
			b.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
		before = commits()
	}
	n := int64(0)
	for b.Loop() {
		n++
		for i := range balances {
			balances[i].Balance = n
		}
		if err := s.WriteSessionStates(b.Context(), balances, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*players), "µs/player")
	if stats != nil {
		b.StopTimer()
		_ = s.Close()
		closed = true
		time.Sleep(500 * time.Millisecond) // a closed backend's statistics reach the view
		// With a few commits of the store's own opening and of the
		// statistics' reads, spread over the flushes.
		b.ReportMetric(float64(commits()-before)/float64(b.N), "commits/flush")
	}
}
