package engine_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/internal/engine"
	"github.com/crashstudio/crashgame/internal/store"
)

// A bet this process would learn the debit outcome of only after its round's
// debit deadline (its recent debits took longer than the round has left) is
// refused TABLE_BUSY before any money moves: no intent stored, no /bet
// sent; one with time enough is taken.
func TestBetRefusedBeforeItsDebitWhenDebitsAreSlowerThanTheWindowLeft(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "")
	h.run()
	ctx := context.Background()
	v, _ := h.table.Round()
	deadline := v.BettingEndsAt.Add(engine.DefaultDebitGrace)

	// Debits take 2 s here: with 6 s left a bet is taken, with 2 s left it is not.
	h.table.DebitsTookForTest(2*time.Second, 8)
	calls := len(h.callsSnapshot())
	p := playerOf("acme", "late")
	if _, err := h.table.PlaceBet(ctx, p, engine.BetRequest{Amount: 100}); err != nil {
		t.Fatalf("a bet with %s left before the debit deadline: %v", deadline.Sub(h.clock.Now()), err)
	}
	h.clock.Set(deadline.Add(-2 * time.Second))
	_, err := h.table.PlaceBet(ctx, p, engine.BetRequest{Amount: 200})
	if r, ok := engine.RefusalOf(err); !errors.Is(err, engine.ErrTableBusy) || !ok || r.Code != "TABLE_BUSY" {
		t.Fatalf("a bet with 2 s left, debits taking 2.1 s: %v; want TABLE_BUSY", err)
	}
	if got := len(h.callsSnapshot()); got != calls+1 {
		t.Fatalf("/bet calls: %d after the taken bet, want %d: the refused bet reached the wallet", got, calls+1)
	}
	bets, err := h.st.Bets(ctx, store.BetFilter{RoundIDs: []string{v.RoundID}, PlayerID: p.PlayerID})
	if err != nil || len(bets) != 1 || bets[0].Amount != 100 {
		t.Fatalf("the late player's bets stored: %+v, %v; want only the bet taken", bets, err)
	}
	if got := h.table.Shed(); got != 1 {
		t.Fatalf("Shed = %d, want 1", got)
	}
}
