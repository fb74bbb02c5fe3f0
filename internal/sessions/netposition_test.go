package sessions_test

import (
	"errors"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/internal/sessions"
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

	if _, err := f.st.ExecForTest(ctx, "INSERT INTO rounds (id, game_id, seq, hash, crash_point, rtp_bp, max_multiplier, status, betting_ends_at, created_at)"+
		" VALUES ('rd-net', 'crash', 987654, 'h', 250, 9700, 100000, 'finished', 1, 1)"); err != nil {
		t.Fatal(err)
	}
	bets := []struct {
		id      string
		session []byte
		amount  int64
		status  string
		payout  any
		freebet any
	}{
		{"b-accepted", sess.Hash, 1000, "accepted", nil, nil},
		{"b-cashed", sess.Hash, 500, "cashed_out", 1250, nil},
		{"b-lost", sess.Hash, 300, "lost", 0, nil},
		{"b-pending", sess.Hash, 7000, "pending", nil, nil},
		{"b-refused", sess.Hash, 7000, "refused", nil, nil},
		{"b-cancelled", sess.Hash, 7000, "cancelled", nil, nil},
		{"b-void", sess.Hash, 7000, "void", nil, nil},
		{"b-free-won", sess.Hash, 200, "cashed_out", 400, "camp#1"},
		{"b-free-lost", sess.Hash, 200, "lost", 0, "camp#1"},
		{"b-other", other.Hash, 9999, "cashed_out", 99999, nil},
	}
	for i, b := range bets {
		if _, err := f.st.ExecForTest(ctx, "INSERT INTO bets (id, round_id, game_id, session_hash, operator, player_id, currency, amount, status, payout, freebet_id, placed_at)"+
			" VALUES (?, 'rd-net', 'crash', ?, 'acme', 'p-42', 'BRL', ?, ?, ?, ?, ?)",
			b.id, b.session, b.amount, b.status, b.payout, b.freebet, 1000+i); err != nil {
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
	if _, err := f.st.ExecForTest(ctx, "UPDATE bets SET status = 'void' WHERE id = 'b-pending'"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Get(ctx, sess.ID); err != nil {
		t.Fatalf("idle with an accepted bet: %v, want the session", err)
	}
	if _, err := f.st.ExecForTest(ctx, "UPDATE bets SET status = 'lost', payout = 0 WHERE id = 'b-accepted'"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Get(ctx, sess.ID); !errors.Is(err, sessions.ErrSessionInactive) {
		t.Fatalf("idle with every bet settled: %v, want ErrSessionInactive", err)
	}
}
