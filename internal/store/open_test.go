package store_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/internal/store"
)

func TestOpenSQLiteSettings(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "a", "b", "app.db")
	s, err := store.Open(t.Context(), "sqlite://"+path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer s.Close()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("database file not created with its parent directories: %v", err)
	}
	pragmas := []struct{ name, want string }{
		{"journal_mode", "wal"},
		{"foreign_keys", "1"},
		{"busy_timeout", "5000"},
		{"synchronous", "2"}, // FULL
	}
	for _, p := range pragmas {
		var got string
		if err := s.QueryRowForTest(t.Context(), "PRAGMA "+p.name).Scan(&got); err != nil {
			t.Fatalf("PRAGMA %s: %v", p.name, err)
		}
		if !strings.EqualFold(got, p.want) {
			t.Errorf("PRAGMA %s = %q, want %q", p.name, got, p.want)
		}
	}
	if got := store.MaxOpenConns(s); got != 1 {
		t.Errorf("MaxOpenConnections = %d, want 1", got)
	}
	if got := s.Dialect(); got != store.DialectSQLite {
		t.Errorf("Dialect() = %q, want %q", got, store.DialectSQLite)
	}
}

func TestOpenDSNForms(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cases := []struct {
		dsn     string
		wantErr bool
	}{
		{"sqlite::memory:", false},
		{"sqlite://:memory:", false},
		{"sqlite://" + filepath.Join(dir, "abs.db"), false},
		{"sqlite://" + filepath.Join(dir, "q.db") + "?_pragma=foreign_keys(0)", true},
		{"sqlite://", true},
		{"mysql://user:secret@host/db", true},
		{"", true},
	}
	for _, tc := range cases {
		s, err := store.Open(t.Context(), tc.dsn)
		if (err != nil) != tc.wantErr {
			t.Errorf("Open(%q): err = %v, wantErr %v", tc.dsn, err, tc.wantErr)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("Open(%q): error leaks the password: %v", tc.dsn, err)
		}
		if err == nil {
			if err := s.Migrate(t.Context()); err != nil {
				t.Errorf("Open(%q).Migrate: %v", tc.dsn, err)
			}
			_ = s.Close()
		}
	}
}

// TestMemoryDatabaseSurvivesIdle: the single connection of an in-memory
// database is never recycled, or its data would vanish.
func TestMemoryDatabaseSurvivesIdle(t *testing.T) {
	t.Parallel()
	s, err := store.Open(t.Context(), "sqlite::memory:")
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer s.Close()
	if err := s.Migrate(t.Context()); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	insert(t, s, newTicket("mem"))
	time.Sleep(10 * time.Millisecond)
	if n := countRows(t, s, "SELECT count(*) FROM tickets"); n != 1 {
		t.Fatalf("tickets rows = %d, want 1", n)
	}
}

func TestMillis(t *testing.T) {
	t.Parallel()
	loc := time.FixedZone("BRT", -3*3600)
	in := time.Date(2026, 3, 1, 9, 0, 0, 999_999_999, loc)
	m := store.MillisOf(in)
	if want := store.Millis(in.UnixMilli()); m != want {
		t.Fatalf("MillisOf = %d, want %d", m, want)
	}
	got := m.Time()
	if !got.Equal(in.Truncate(time.Millisecond)) || got.Location() != time.UTC {
		t.Fatalf("Time() = %v, want %v in UTC", got, in.Truncate(time.Millisecond))
	}
	if !store.Millis(0).Time().IsZero() {
		t.Fatal("Millis(0).Time() is not the zero time")
	}
}

// A SQLite file is owned by one process at a time (Own): a second owner is
// refused with ErrOwned, naming the file, until the first closes it; owning
// twice is a no-op; an in-memory database is owned already. The lock is flock(2) on the owner file, which
// another open file description of it contends for as another process's
// would.
func TestOwnSQLiteFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "game.db")
	open := func() *store.Store {
		t.Helper()
		s, err := store.Open(t.Context(), "sqlite://"+path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	first, second := open(), open()
	if err := first.Own(); err != nil {
		t.Fatalf("the first owner: %v", err)
	}
	if err := first.Own(); err != nil {
		t.Fatalf("owning again: %v", err)
	}
	err := second.Own()
	if !errors.Is(err, store.ErrOwned) || !strings.Contains(err.Error(), path) {
		t.Fatalf("a second owner: %v; want ErrOwned naming %s", err, path)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	if err := second.Own(); err != nil {
		t.Fatalf("owning once the first closed: %v", err)
	}
	mem, err := store.Open(t.Context(), "sqlite::memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	if err := mem.Own(); err != nil {
		t.Fatalf("owning an in-memory database: %v", err)
	}
}
