package backoffice_test

import (
	"testing"
	"time"

	"github.com/crashstudio/crashgame/internal/backoffice"
	"github.com/crashstudio/crashgame/internal/engine"
	"github.com/crashstudio/crashgame/internal/store"
	"github.com/crashstudio/crashgame/internal/store/storetest"
)

// The retention purges the settled bets of rounds older than it, and
// nothing without one; a round's outcome is revealed only once it ended.
func TestRetentionAndRounds(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	st, err := store.Open(ctx, storetest.SQLite(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	old := store.MillisOf(now.Add(-200 * 24 * time.Hour))
	for i, id := range []string{"crash-1", "crash-2"} {
		if err := st.InsertRound(ctx, store.RoundRecord{ID: id, GameID: "crash", Seq: int64(i + 1), Status: engine.RoundBetting,
			BettingEndsAt: old, CreatedAt: old}); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.FinishRound(ctx, "crash-1", old, "ab", 150); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		b := store.BetRecord{ID: "b-" + string(rune('a'+i)), RoundID: "crash-1", GameID: "crash", SessionHash: []byte("s"), Operator: "acme",
			PlayerID: "p1", Currency: "BRL", Amount: 100, Status: "lost", PlacedAt: old, SettledAt: old}
		if err := st.InsertBet(ctx, &b); err != nil {
			t.Fatal(err)
		}
	}
	forever := backoffice.New(backoffice.Config{Records: st.BackOffice(), Games: map[string][]string{"acme": {"crash"}}})
	if n, err := forever.Purge(ctx, now); err != nil || n != 0 {
		t.Fatalf("without a retention: %d, %v", n, err)
	}
	kept := backoffice.New(backoffice.Config{Records: st.BackOffice(), Games: map[string][]string{"acme": {"crash"}}, Retention: 120 * 24 * time.Hour})
	if n, err := kept.Purge(ctx, now); err != nil || n != 3 {
		t.Fatalf("with 120 days: %d, %v; want the 3 settled bets", n, err)
	}
	round, bets, err := kept.RoundDetails(ctx, "acme", "crash-1", "")
	if err != nil || round.Hash != "ab" || round.CrashPoint != 150 || len(bets) != 0 {
		t.Fatalf("the round after the purge: %+v, %d bets, %v; want it kept, its bets gone", round, len(bets), err)
	}
	live, _, err := kept.RoundDetails(ctx, "acme", "crash-2", "")
	if err != nil || live.Hash != "" || live.CrashPoint != 0 || len(live.Phases) != 1 {
		t.Fatalf("a betting round: %+v, %v; want no outcome", live, err)
	}
	if _, _, err := kept.RoundDetails(ctx, "other", "crash-1", ""); err != backoffice.ErrRoundNotFound {
		t.Fatalf("another operator's game: %v", err)
	}
}
