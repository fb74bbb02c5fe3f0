// Package storetest gives a test a migrated SQLite database of its own in
// milliseconds. The migrations run once per test binary, into a template
// file, and each call gets a byte copy of it. Under the race detector one
// run of the migrations costs about 1.3 s of CPU (the SQLite driver is C
// translated to Go, and every statement is instrumented); a copy costs a
// file write.
//
// It must never be imported by non-test code, never hand one database to two
// callers, and never stand in for the tests of the migrations themselves
// (internal/store migrates its own databases from empty, on both dialects).
package storetest

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/crashstudio/crashgame/internal/store"
)

var (
	once     sync.Once
	template map[string][]byte // file suffix ("", "-wal"): contents
	buildErr error
)

// SQLite returns the DSN of a new SQLite database, in t's temporary
// directory, that holds every migration and no row. A test may still call
// Migrate on it: it then has nothing to do.
func SQLite(t testing.TB) string {
	t.Helper()
	once.Do(func() { template, buildErr = build() })
	if buildErr != nil {
		t.Fatalf("storetest: %v", buildErr)
	}
	path := filepath.Join(t.TempDir(), "test.db")
	for suffix, data := range template {
		if err := os.WriteFile(path+suffix, data, 0o600); err != nil {
			t.Fatalf("storetest: %v", err)
		}
	}
	return "sqlite://" + path
}

// build migrates an empty database and reads its files once it is closed
// (the close checkpoints the write-ahead log into the main file).
func build() (map[string][]byte, error) {
	dir, err := os.MkdirTemp("", "storetest-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "template.db")
	ctx := context.Background()
	st, err := store.Open(ctx, "sqlite://"+path)
	if err != nil {
		return nil, fmt.Errorf("open the template: %w", err)
	}
	// The template belongs to no test: its migration's lines would be
	// printed beside every failure of the package. Its errors are returned.
	st.SetLogger(slog.New(slog.DiscardHandler))
	if err := st.Migrate(ctx); err != nil {
		_ = st.Close()
		return nil, fmt.Errorf("migrate the template: %w", err)
	}
	if err := st.Close(); err != nil {
		return nil, fmt.Errorf("close the template: %w", err)
	}
	files := map[string][]byte{}
	for _, suffix := range []string{"", "-wal"} {
		data, err := os.ReadFile(path + suffix)
		switch {
		case os.IsNotExist(err) && suffix != "":
			continue
		case err != nil:
			return nil, fmt.Errorf("read the template: %w", err)
		}
		files[suffix] = data
	}
	return files, nil
}
