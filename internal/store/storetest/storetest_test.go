package storetest_test

import (
	"context"
	"testing"

	"github.com/crashstudio/crashgame/internal/engine"
	"github.com/crashstudio/crashgame/internal/store"
	"github.com/crashstudio/crashgame/internal/store/storetest"
)

// Each call is a database of its own, migrated: what one test writes, another
// never reads, and migrating it again has nothing to do.
func TestSQLiteIsMigratedAndOwn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	open := func() *store.Store {
		st, err := store.Open(ctx, storetest.SQLite(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		if err := st.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		return st
	}
	a, b := open(), open()
	r := store.RoundRecord{ID: "crash-1", GameID: "crash", Seq: 1, Hash: "h", CrashPoint: 200, Status: engine.RoundBetting, BettingEndsAt: 1, CreatedAt: 1}
	if err := a.InsertRound(ctx, r); err != nil {
		t.Fatalf("insert into a copy: %v", err)
	}
	if _, err := b.Round(ctx, "crash", "crash-1"); err == nil {
		t.Fatal("a row written to one copy is read from another")
	}
	if got, err := a.Round(ctx, "crash", "crash-1"); err != nil || got.ID != "crash-1" {
		t.Fatalf("the copy lost its row: %+v, %v", got, err)
	}
}
