package freebets_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMigrationDownUp: the 0004 migration is re-runnable (a crash between its
// commit and its record runs it again), its down drops everything it made, and
// it applies again after its down.
func TestMigrationDownUp(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.open(t))
			dir := filepath.Join("..", "store", "migrations", b.name)
			run := func(file string) {
				t.Helper()
				text, err := os.ReadFile(filepath.Join(dir, file))
				if err != nil {
					t.Fatal(err)
				}
				for stmt := range strings.SplitSeq(string(text), "--bun:split") {
					if _, err := e.st.ExecForTest(context.Background(), stmt); err != nil {
						t.Fatalf("%s: %v\n%s", file, err, stmt)
					}
				}
			}
			e.intake(t, alice, list(`{"id":"keep","amount":500}`))
			run("0004_freebets.tx.up.sql") // again: IF NOT EXISTS everywhere
			if got := e.openIDs(t, alice); len(got) != 1 {
				t.Fatalf("re-running up lost data: %v", got)
			}
			run("0004_freebets.tx.down.sql")
			if _, err := e.svc.Open(t.Context(), alice); err == nil {
				t.Fatal("Open after down: no error, want a missing table")
			}
			run("0004_freebets.tx.up.sql")
			if sum := e.intake(t, alice, list(`{"id":"keep","amount":500}`)); sum.Created != 1 {
				t.Fatalf("intake after down and up: %+v", sum)
			}
		})
	}
}
