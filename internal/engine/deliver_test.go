package engine_test

import (
	"context"
	"slices"
	"testing"

	"github.com/crashstudio/crashgame/internal/engine"
	"github.com/crashstudio/crashgame/internal/wallet"
)

// A balance event of the table's leader, heard by a table that does not lead
// (another replica), is recorded by that replica's sessions (Balances.Follow):
// a stream that opens there later starts from it, not from an older row. The
// leader's own events are not recorded twice: it decided them.
func TestDeliveredBalanceIsFollowedWhereTheTableDoesNotLead(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "")
	follower := &fakeBalances{}
	cfg := engine.Config{
		Game: testGame, Operators: testOperators, Store: h.st, Outbox: wallet.NewOutbox(h.st),
		Wallets: func(string) (engine.BetWallet, bool) { return h.wallet, true },
		Clock:   h.clock, ChainLength: 1000, Sealer: engine.FixedSealer(), SeedingWindow: -1,
		Balances: follower,
	}
	other, err := engine.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	sub := other.Subscribe(alice.Session, 4)
	defer sub.Close()
	other.Deliver(alice.Session, &engine.Event{Type: engine.EventBalance, Balance: 990, Currency: "BRL"})
	if got := follower.heard(); !slices.Equal(got, []int64{990}) {
		t.Fatalf("a replica that does not lead followed %v, want [990]", got)
	}
	if ev := <-sub.C; ev.Type != engine.EventBalance || ev.Balance != 990 {
		t.Fatalf("the stream got %+v, want the balance event", ev)
	}

	h.run() // h's table leads
	h.table.Deliver(alice.Session, &engine.Event{Type: engine.EventBalance, Balance: 1001, Currency: "BRL"})
	if got := h.balances.heard(); len(got) != 0 {
		t.Fatalf("the leader followed its own balance events: %v", got)
	}
}
