package sessions_test

import (
	"errors"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/integration/pgtest"
	"github.com/crashstudio/crashgame/internal/sessions"
	"github.com/crashstudio/crashgame/internal/store/storetest"
	"github.com/crashstudio/crashgame/internal/tickets"
)

// backends are the databases the legacy launch's tests run on: the controls
// it takes are the store's (launch_controls).
var backends = []struct {
	name string
	dsn  func(t testing.TB) string
}{
	{"sqlite", func(t testing.TB) string { return storetest.SQLite(t) }},
	{"postgres", pgtest.Start},
}

// Rule VER-4: the legacy launch keeps working, and cannot bypass the player
// protection controls: a legacy session takes the controls of the player's
// latest /v1/launch for the operator (whether or not that launch's ticket was
// ever used); a later launch with every control off switches them off; a
// player never launched with /v1/launch gets none.
func TestLegacyLaunchTakesTheLatestLaunchsControls(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			f := newFixtureOn(t, b.dsn(t), testOperators())
			const other = "tok-other-0123456789abcdef"
			f.wallet.set(token, 200, `{"status":"ok","player_id":"p-42","balance":900,"currency":"BRL"}`)
			f.wallet.set(other, 200, `{"status":"ok","player_id":"p-7","balance":900,"currency":"BRL"}`)
			legacy := func(sid string) sessions.Session {
				t.Helper()
				sess, err := f.svc.Open(t.Context(), sessions.OpenRequest{SID: sid, Operator: "acme", GameID: "crash"})
				if err != nil {
					t.Fatalf("legacy Open: %v", err)
				}
				return sess
			}

			// The operator launches p-42 with controls; the ticket is never used.
			withControls := realLaunch("BRL")
			withControls.Controls = tickets.Controls{SessionClock: true, RealityCheckMinutes: 60, InactivityMinutes: 30}
			f.ticket(t, withControls)

			sess := legacy(token)
			if sess.Controls != withControls.Controls {
				t.Fatalf("legacy session controls = %+v, want the launch's %+v", sess.Controls, withControls.Controls)
			}
			if at := sess.RealityCheckAt(); !at.Equal(sess.CreatedAt.Add(60 * time.Minute)) {
				t.Fatalf("reality check at %v, want an hour after %v", at, sess.CreatedAt)
			}
			f.clock.Advance(31 * time.Minute)
			if _, err := f.svc.Get(t.Context(), sess.ID); !errors.Is(err, sessions.ErrSessionInactive) {
				t.Fatalf("Get after 31 idle minutes: %v, want ErrSessionInactive", err)
			}

			// A player the operator never launched with /v1/launch.
			if sess := legacy(other); sess.Controls != (tickets.Controls{}) {
				t.Fatalf("controls of a player never launched = %+v, want none", sess.Controls)
			}

			// A later launch of p-42 without controls switches them off.
			f.clock.Advance(time.Minute)
			f.ticket(t, realLaunch("BRL"))
			if sess := legacy(token); sess.Controls != (tickets.Controls{}) {
				t.Fatalf("controls after a launch without them = %+v, want none", sess.Controls)
			}
		})
	}
}

// Rule VER-4: legacy_launch false refuses the operator's legacy launches as
// TICKET_INVALID, before any wallet call; its ticket launches still open.
func TestLegacyLaunchOff(t *testing.T) {
	t.Parallel()
	ops := testOperators()
	ops[0].LegacyLaunchOff = true
	f := newFixtureOn(t, storetest.SQLite(t), ops)
	f.wallet.set(token, 200, `{"status":"ok","player_id":"p-42","balance":900,"currency":"BRL"}`)

	_, err := f.svc.Open(t.Context(), sessions.OpenRequest{SID: token, Operator: "acme", GameID: "crash"})
	if !errors.Is(err, sessions.ErrLegacyLaunchOff) || !errors.Is(err, sessions.ErrTicketInvalid) {
		t.Fatalf("legacy Open: %v, want ErrLegacyLaunchOff (a TICKET_INVALID)", err)
	}
	if n := len(f.wallet.requests()); n != 0 {
		t.Fatalf("a refused legacy launch called the wallet %d times", n)
	}
	if _, err := f.svc.Open(t.Context(), sessions.OpenRequest{SID: f.ticket(t, realLaunch("BRL"))}); err != nil {
		t.Fatalf("a ticket launch of the same operator: %v", err)
	}
}
