package store_test

import (
	"fmt"
	"testing"

	"github.com/crashstudio/crashgame/internal/engine"
	"github.com/crashstudio/crashgame/internal/store"
)

var retentionCases = []contractCase{
	{"PurgeOnlySettledOldBets", testPurgeSettled},
}

// Retention purges the bets of old rounds whose money is settled, with their
// movements and re-deliveries, never a bet whose money still moves (pending,
// accepted, a parked movement), never a recent one, and never a round: the
// chain's public record stays whole.
func testPurgeSettled(t *testing.T, s *store.Store, _ string) {
	ctx := t.Context()
	for _, r := range []struct {
		id    string
		ended store.Millis
	}{{"r-old", 1000}, {"r-new", 9000}} {
		rec := testRound(r.id, map[string]int64{"r-old": 1, "r-new": 2}[r.id], engine.RoundBetting)
		mustInsertRound(t, s, rec)
		if err := s.FinishRound(ctx, r.id, r.ended, "h-"+r.id, 200); err != nil {
			t.Fatal(err)
		}
	}
	bet := func(id, round, status string, movement string) {
		t.Helper()
		b := testBet(id, round, status, 100)
		if err := s.InsertBet(ctx, b); err != nil {
			t.Fatal(err)
		}
		if movement != "" {
			m := newMovement(id + "-w")
			m.BetID, m.RoundID, m.Status = id, round, movement
			insertMovement(t, s, m)
		}
	}
	bet("b-done", "r-old", "cashed_out", store.MovementDone)
	bet("b-refused", "r-old", "cashed_out", store.MovementRefused)
	bet("b-lost", "r-old", "lost", "")
	bet("b-parked", "r-old", "cashed_out", store.MovementExhausted)
	bet("b-pending", "r-old", "cashed_out", store.MovementPending)
	bet("b-accepted", "r-old", "accepted", "")
	bet("b-recent", "r-new", "cashed_out", store.MovementDone)
	if _, _, err := s.RedeliverMovement(ctx, "b-refused-w", "", "on-call:x", 1); err == nil {
		t.Fatal("a refused movement was re-delivered")
	}
	// A re-delivered, then delivered, movement: its history goes with it.
	if _, err := s.ExecForTest(ctx, `INSERT INTO movement_redeliveries (transaction_id, number, requested_at, requested_by, attempts_before, last_error_before)
		VALUES ('b-done-w', 1, 1, 'on-call:x', 20, 'e')`); err != nil {
		t.Fatal(err)
	}
	total := 0
	for {
		n, err := s.PurgeSettled(ctx, 5000, 2)
		if err != nil {
			t.Fatal(err)
		}
		if total += n; n == 0 {
			break
		}
	}
	if total != 3 {
		t.Fatalf("purged %d bets, want 3 (done, refused, lost)", total)
	}
	left, err := s.Bets(ctx, store.BetFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, b := range left {
		ids = append(ids, b.ID)
	}
	if fmt.Sprint(ids) != "[b-accepted b-parked b-pending b-recent]" {
		t.Fatalf("bets left %v", ids)
	}
	if _, err := s.GetMovement(ctx, "b-done-w"); err == nil {
		t.Fatal("a purged bet's movement is still there")
	}
	if _, err := s.GetMovement(ctx, "b-parked-w"); err != nil {
		t.Fatalf("a parked movement was purged: %v", err)
	}
	if r, err := s.Round(ctx, "crash", "r-old"); err != nil || r.Hash != "h-r-old" {
		t.Fatalf("the old round is gone or changed: %+v, %v", r, err)
	}
}
