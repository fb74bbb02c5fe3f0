package sessions_test

import (
	"errors"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/internal/engine"
	"github.com/crashstudio/crashgame/internal/sessions"
	"github.com/crashstudio/crashgame/internal/store"
	"github.com/crashstudio/crashgame/internal/tickets"
)

// The net position counts the player's own money the wallet kept (accepted,
// cashed out, lost; never a freebet's stake) and the payouts of cashed-out
// bets, a freebet's included; a session idle past its timeout still answers
// while a bet of it is pending or accepted (a control never costs the player a
// bet).
func TestNetPositionAndLiveBets(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := t.Context()
	f.wallet.set(token, 200, `{"status":"ok","player_id":"p-42","balance":25000,"currency":"BRL"}`)
	launch := realLaunch("BRL")
	launch.Controls = tickets.Controls{SessionClock: true, InactivityMinutes: 30}
	sess, err := f.svc.Open(ctx, sessions.OpenRequest{SID: f.ticket(t, launch)})
	if err != nil {
		t.Fatal(err)
	}
	other, err := f.svc.Open(ctx, sessions.OpenRequest{SID: f.ticket(t, realLaunch("BRL"))})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := f.svc.NetPosition(ctx, sess); err != nil || n != (sessions.NetPosition{}) {
		t.Fatalf("a session without bets: %+v, %v", n, err)
	}

	if err := f.st.InsertRound(ctx, store.RoundRecord{ID: "rd-net", GameID: "crash", Seq: 987654, Hash: "h", CrashPoint: 250, Status: engine.RoundFinished, BettingEndsAt: 1, CreatedAt: 1}); err != nil {
		t.Fatal(err)
	}
	free := "camp#1"
	bets := []struct {
		id      string
		session []byte
		amount  int64
		status  string
		payout  *int64
		freebet *string
	}{
		{"b-accepted", sess.Hash, 1000, "accepted", nil, nil},
		{"b-cashed", sess.Hash, 500, "cashed_out", cents(1250), nil},
		{"b-lost", sess.Hash, 300, "lost", cents(0), nil},
		{"b-pending", sess.Hash, 7000, "pending", nil, nil},
		{"b-refused", sess.Hash, 7000, "refused", nil, nil},
		{"b-cancelled", sess.Hash, 7000, "cancelled", nil, nil},
		{"b-void", sess.Hash, 7000, "void", nil, nil},
		{"b-free-won", sess.Hash, 200, "cashed_out", cents(400), &free},
		{"b-free-lost", sess.Hash, 200, "lost", cents(0), &free},
		{"b-other", other.Hash, 9999, "cashed_out", cents(99999), nil},
	}
	for i, b := range bets {
		if err := f.st.InsertBet(ctx, &store.BetRecord{ID: b.id, RoundID: "rd-net", GameID: "crash", SessionHash: b.session,
			Operator: "acme", PlayerID: "p-42", Currency: "BRL", Amount: b.amount, Status: b.status, Payout: b.payout,
			FreebetID: b.freebet, PlacedAt: store.Millis(1000 + i)}); err != nil {
			t.Fatalf("insert %s: %v", b.id, err)
		}
	}
	got, err := f.svc.NetPosition(ctx, sess)
	if err != nil {
		t.Fatal(err)
	}
	if want := (sessions.NetPosition{Staked: 1000 + 500 + 300, Won: 1250 + 400}); got != want || got.Net() != -150 {
		t.Fatalf("net position = %+v (net %d), want %+v (net -150)", got, got.Net(), want)
	}

	// Idle past the timeout, with a pending and an accepted bet: still in.
	f.clock.Advance(31 * time.Minute)
	if _, err := f.svc.Get(ctx, sess.ID); err != nil {
		t.Fatalf("idle with bets in play: %v, want the session", err)
	}
	if ok, err := f.st.MoveBet(ctx, "b-pending", "pending", "void", store.BetChange{}); err != nil || !ok {
		t.Fatal(ok, err)
	}
	if _, err := f.svc.Get(ctx, sess.ID); err != nil {
		t.Fatalf("idle with an accepted bet: %v, want the session", err)
	}
	if ok, err := f.st.MoveBet(ctx, "b-accepted", "accepted", "lost", store.BetChange{Payout: cents(0)}); err != nil || !ok {
		t.Fatal(ok, err)
	}
	if _, err := f.svc.Get(ctx, sess.ID); !errors.Is(err, sessions.ErrSessionInactive) {
		t.Fatalf("idle with every bet settled: %v, want ErrSessionInactive", err)
	}
}

func cents(v int64) *int64 { return &v }
