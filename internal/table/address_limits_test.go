package table_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/crashstudio/crashgame/internal/config"
	"github.com/crashstudio/crashgame/internal/table"
	"github.com/crashstudio/crashgame/internal/tickets"
)

// addressEnv is a table behind a trusted balancer (the test's own loopback
// peer), whose per-address budgets barely refill during a test: 2 session
// creations and 5 stream openings at once per client address.
func addressEnv(t *testing.T) (*env, *httptest.Server) {
	t.Helper()
	e := newEnv(t, envOptions{rate: 1000, burst: 1000,
		addressRate: 0.001, addressBurst: 2, streamRate: 0.001, streamBurst: 5,
		trusted: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}})
	srv := httptest.NewServer(e.handler)
	t.Cleanup(srv.Close)
	return e, srv
}

// createFrom opens a demo session from client address addr (named in
// X-Forwarded-For); it returns the status, the session (on 201) and the
// error code (otherwise).
func createFrom(t *testing.T, e *env, srv *httptest.Server, addr string) (status int, session, code string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"sid": e.ticket(t, tickets.Session{Demo: true, Currency: "BRL", Language: "en"})})
	req, err := http.NewRequestWithContext(t.Context(), "POST", srv.URL+"/api/v1/sessions", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Forwarded-For", addr)
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v struct {
		Session   string `json:"session"`
		ErrorCode string `json:"error_code"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		t.Fatalf("session creation from %s: %d, body not JSON: %v", addr, resp.StatusCode, err)
	}
	if resp.StatusCode == http.StatusTooManyRequests && resp.Header.Get("Retry-After") == "" {
		t.Errorf("429 from %s without Retry-After", addr)
	}
	return resp.StatusCode, v.Session, v.ErrorCode
}

// streamFrom opens a stream for session from client address addr and
// waits for the balance the hello brings. It returns the handshake's
// status: 101 for a stream that is live, else the refusal's.
func streamFrom(t *testing.T, srv *httptest.Server, addr, session string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	c, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"/api/v1/stream",
		&websocket.DialOptions{HTTPHeader: http.Header{"Origin": {origin}, "X-Forwarded-For": {addr}}})
	if err != nil {
		if resp == nil {
			t.Fatalf("stream from %s: %v", addr, err)
		}
		if resp.StatusCode == http.StatusTooManyRequests && resp.Header.Get("Retry-After") == "" {
			t.Errorf("stream refused from %s without Retry-After", addr)
		}
		return resp.StatusCode
	}
	t.Cleanup(func() { _ = c.CloseNow() })
	hello, _ := json.Marshal(map[string]any{"type": "hello", "session": session})
	if err := c.Write(ctx, websocket.MessageText, hello); err != nil {
		t.Fatalf("hello from %s: %v", addr, err)
	}
	_, data, err := c.Read(ctx)
	if err != nil {
		t.Fatalf("stream from %s after its hello: %v", addr, err)
	}
	var ev map[string]any
	if json.Unmarshal(data, &ev) != nil || ev["type"] != "balance" {
		t.Fatalf("stream from %s: first message %s, want its balance", addr, data)
	}
	return http.StatusSwitchingProtocols
}

// A reconnection storm from one address (its sessions reopening their
// streams, more of them than the address may create sessions) is served
// from the streams' own budget: the session creations' budget being spent
// refuses none of them, and reopening streams spends none of it.
func TestReconnectIsNotANewSession(t *testing.T) {
	t.Parallel()
	e, srv := addressEnv(t)
	const carrier = "203.0.113.7"

	// The address spends its session creations: 2, then 429.
	var live []string
	for range 2 {
		status, s, _ := createFrom(t, e, srv, carrier)
		if status != http.StatusCreated {
			t.Fatalf("session creation within the budget: %d", status)
		}
		live = append(live, s)
	}
	if status, _, code := createFrom(t, e, srv, carrier); status != http.StatusTooManyRequests || code != "RATE_LIMITED" {
		t.Fatalf("third session creation: %d %s, want 429 RATE_LIMITED", status, code)
	}

	// Its two sessions reopen their streams 5 times between them (a
	// first opening each, then reconnections): all served.
	for i := range 5 {
		if got := streamFrom(t, srv, carrier, live[i%2]); got != http.StatusSwitchingProtocols {
			t.Fatalf("stream opening %d of a live session: %d, want 101", i+1, got)
		}
	}
	// The streams' budget bounds reconnections too.
	if got := streamFrom(t, srv, carrier, live[0]); got != http.StatusTooManyRequests {
		t.Fatalf("sixth stream opening: %d, want 429", got)
	}
	// Budgets are per address: another address is served.
	if got := streamFrom(t, srv, "198.51.100.9", live[1]); got != http.StatusSwitchingProtocols {
		t.Fatalf("stream from another address: %d, want 101", got)
	}
}

// Stream openings never draw from the session creations' budget: after an
// address has reopened its stream five times, it still creates its two
// sessions.
func TestStreamsSpendNoSessionBudget(t *testing.T) {
	t.Parallel()
	e, srv := addressEnv(t)
	const carrier = "203.0.113.8"
	status, s, _ := createFrom(t, e, srv, carrier)
	if status != http.StatusCreated {
		t.Fatalf("first session: %d", status)
	}
	for i := range 5 {
		if got := streamFrom(t, srv, carrier, s); got != http.StatusSwitchingProtocols {
			t.Fatalf("stream opening %d: %d, want 101", i+1, got)
		}
	}
	if status, _, _ := createFrom(t, e, srv, carrier); status != http.StatusCreated {
		t.Fatalf("second session after 5 stream openings: %d, want 201 (streams spent the sessions' budget)", status)
	}
	if status, _, _ := createFrom(t, e, srv, carrier); status != http.StatusTooManyRequests {
		t.Fatalf("third session: %d, want 429 (the budget is 2)", status)
	}
}

// With the default budgets (docs/config.md, address_limits), 100 players
// behind one carrier address launch at once, and then all reopen their
// streams at once (their replica paused): no one is refused, so no one
// waits for a token or for the page's backoff.
func TestDefaultBudgetsServeOneCarrierAddress(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{rate: 1000, burst: 1000,
		trusted: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}})
	srv := httptest.NewServer(e.handler)
	t.Cleanup(srv.Close)
	const carrier, players = "203.0.113.9", 100
	sessions := make([]string, players)
	for i := range sessions {
		status, s, code := createFrom(t, e, srv, carrier)
		if status != http.StatusCreated {
			t.Fatalf("launch %d of %d from one address: %d %s", i+1, players, status, code)
		}
		sessions[i] = s
	}
	for round := range 2 { // the first streams, then the reconnection storm
		for i, s := range sessions {
			if got := streamFrom(t, srv, carrier, s); got != http.StatusSwitchingProtocols {
				t.Fatalf("stream %d of %d (opening %d) from one address: %d, want 101", i+1, players, round+1, got)
			}
		}
	}
}

// The table's own defaults (a Config that leaves the budgets out) are the
// installation's (config.DefaultAddressLimits, docs/config.md).
func TestAddressDefaultsAreTheInstallations(t *testing.T) {
	t.Parallel()
	d := config.DefaultAddressLimits
	if table.DefaultAddressRate != d.SessionsPerSecond || table.DefaultAddressBurst != d.SessionsBurst ||
		table.DefaultStreamRate != d.StreamsPerSecond || table.DefaultStreamBurst != d.StreamsBurst {
		t.Errorf("table defaults %d/%d, %d/%d; the installation's %+v", table.DefaultAddressRate, table.DefaultAddressBurst,
			table.DefaultStreamRate, table.DefaultStreamBurst, d)
	}
}
