package table_test

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/internal/engine"
	"github.com/crashstudio/crashgame/internal/tickets"
)

// The responsible gambling controls are enforced by the server: the session
// answer carries them; a due reality check refuses new bets (409
// REALITY_CHECK_DUE) but never a cancellation, until Continue; an idle session
// answers 401 SESSION_INACTIVE on every route. Rule GAME-27: lobby_url and
// deposit_url now reach the page.
func TestResponsibleGamblingEnforced(t *testing.T) {
	var skew atomic.Int64 // how far the sessions' clock runs ahead of the engine's
	e := newEnv(t, envOptions{sessionsNow: func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }})
	sid := e.ticket(t, tickets.Session{Token: "tok-0123456789abcdef", PlayerID: "p-1", Currency: "BRL", Language: "es",
		LobbyURL: "https://acme.example/lobby", DepositURL: "https://acme.example/deposit",
		Controls: tickets.Controls{SessionClock: true, RealityCheckMinutes: 1, InactivityMinutes: 3}})
	rec := e.call(t, "POST", "/api/v1/sessions", "", map[string]any{"sid": sid})
	if rec.Code != http.StatusCreated {
		t.Fatalf("create session: %d %s", rec.Code, rec.Body)
	}
	body := decode[map[string]any](t, rec)
	session := body["session"].(string)
	if body["lobby_url"] != "https://acme.example/lobby" || body["deposit_url"] != "https://acme.example/deposit" {
		t.Fatalf("lobby_url and deposit_url not in the session: %s", rec.Body)
	}
	rg, _ := body["responsible_gambling"].(map[string]any)
	if rg == nil || rg["session_clock"] != true || rg["net"] != float64(0) || rg["reality_check_minutes"] != float64(1) ||
		rg["reality_check_due"] != false || rg["inactivity_timeout_minutes"] != float64(3) {
		t.Fatalf("responsible_gambling = %v", rg)
	}

	// A bet in the betting window, then the reality check falls due.
	e.waitPhase(t, engine.PhaseBetting, 1500*time.Millisecond)
	rec = e.call(t, "POST", "/api/v1/bets", session, map[string]any{"amount": 1000})
	if rec.Code != http.StatusCreated {
		t.Fatalf("bet: %d %s", rec.Code, rec.Body)
	}
	bet := decode[map[string]any](t, rec)["bet_id"].(string)
	skew.Store(int64(time.Minute))
	rec = e.call(t, "POST", "/api/v1/bets", session, map[string]any{"amount": 1000})
	if rec.Code != http.StatusConflict || decode[map[string]any](t, rec)["error_code"] != "REALITY_CHECK_DUE" {
		t.Fatalf("bet while a reality check is due: %d %s", rec.Code, rec.Body)
	}
	if msg := decode[map[string]any](t, rec)["message"].(string); !strings.Contains(msg, "Continuar") {
		t.Fatalf("message not in the session language: %q", msg)
	}
	// Never a cancellation (nor a cashout): a control must not cost money.
	rec = e.call(t, "DELETE", "/api/v1/bets/"+bet, session, nil)
	if rec.Code == http.StatusConflict && strings.Contains(rec.Body.String(), "REALITY_CHECK_DUE") {
		t.Fatalf("a cancellation was refused by the reality check: %s", rec.Body)
	}
	rec = e.call(t, "GET", "/api/v1/session", session, nil)
	rg = decode[map[string]any](t, rec)["responsible_gambling"].(map[string]any)
	if rg["reality_check_due"] != true {
		t.Fatalf("the session does not say the reality check is due: %v", rg)
	}
	// Continue: the next check is a whole interval away.
	rec = e.call(t, "POST", "/api/v1/session/reality-check", session, nil)
	if rec.Code != http.StatusOK {
		t.Fatalf("continue: %d %s", rec.Code, rec.Body)
	}
	rg = decode[map[string]any](t, rec)["responsible_gambling"].(map[string]any)
	if rg["reality_check_due"] != false || rg["reality_check_at"].(float64) < float64(time.Now().Add(time.Minute+50*time.Second).UnixMilli()) {
		t.Fatalf("after continue: %v", rg)
	}

	// Reads are not actions: three idle minutes after the Continue end the session.
	skew.Store(int64(time.Minute + 3*time.Minute - time.Second))
	if rec = e.call(t, "GET", "/api/v1/round", session, nil); rec.Code != http.StatusOK {
		t.Fatalf("just before the timeout: %d %s", rec.Code, rec.Body)
	}
	skew.Store(int64(time.Minute + 3*time.Minute + time.Second))
	for _, r := range []struct{ method, path string }{
		{"GET", "/api/v1/round"}, {"GET", "/api/v1/session"}, {"POST", "/api/v1/session/reality-check"}, {"DELETE", "/api/v1/bets/" + bet},
	} {
		rec = e.call(t, r.method, r.path, session, nil)
		got := decode[map[string]any](t, rec)
		if rec.Code != http.StatusUnauthorized || got["error_code"] != "SESSION_INACTIVE" || !strings.Contains(got["message"].(string), "inactividad") {
			t.Fatalf("%s %s after the timeout: %d %s", r.method, r.path, rec.Code, rec.Body)
		}
	}
}

// A session without controls carries none, and neither address.
func TestNoResponsibleGamblingByDefault(t *testing.T) {
	e := newEnv(t, envOptions{})
	rec := e.call(t, "GET", "/api/v1/session", e.openReal(t), nil)
	body := decode[map[string]any](t, rec)
	for _, k := range []string{"responsible_gambling", "lobby_url", "deposit_url"} {
		if _, ok := body[k]; ok {
			t.Fatalf("%s in a session launched without it: %s", k, rec.Body)
		}
	}
}
