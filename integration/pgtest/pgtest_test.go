package pgtest_test

import (
	"database/sql"
	"net/url"
	"testing"

	"github.com/crashstudio/crashgame/integration/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestDatabasesAreIsolated: each Start is a fresh database on loopback; a table
// made in one is absent from another.
func TestDatabasesAreIsolated(t *testing.T) {
	t.Parallel()
	a, b := pgtest.Start(t), pgtest.Start(t)
	if a == b {
		t.Fatalf("two Start calls returned the same DSN %q", a)
	}
	for _, dsn := range []string{a, b} {
		u, err := url.Parse(dsn)
		if err != nil {
			t.Fatal(err)
		}
		if u.Hostname() != "127.0.0.1" {
			t.Errorf("DSN host = %q, want 127.0.0.1", u.Hostname())
		}
	}
	dbA, dbB := open(t, a), open(t, b)
	if _, err := dbA.ExecContext(t.Context(), "CREATE TABLE only_in_a (x int)"); err != nil {
		t.Fatalf("create table: %v", err)
	}
	var n int
	q := "SELECT count(*) FROM information_schema.tables WHERE table_name = 'only_in_a'"
	if err := dbB.QueryRowContext(t.Context(), q).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatal("a table created in one database is visible in another")
	}
}

func open(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	if err := db.PingContext(t.Context()); err != nil {
		t.Fatalf("ping %s: %v", dsn, err)
	}
	return db
}
