package operatorsim_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/crashstudio/crashgame/internal/operatorsim"
	"github.com/crashstudio/crashgame/internal/signature"
)

func TestAdminRequiresSignature(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	tests := []struct {
		name string
		sig  func(body []byte) string
	}{
		{"none", func([]byte) string { return "" }},
		{"other secret", func(b []byte) string { return signature.Sign([]byte("nope"), b) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body := []byte(`{"timestamp":` + jsonNum(nowMS()) + `,"player_id":"x","balance":100}`)
			req := httptest.NewRequest(http.MethodPost, "/admin/players/create", bytes.NewReader(body))
			req.Header.Set("X-Signature", tc.sig(body))
			rec := httptest.NewRecorder()
			h.h.ServeHTTP(rec, req)
			if rec.Code != http.StatusUnauthorized || !strings.Contains(rec.Body.String(), "INVALID_SIGNATURE") {
				t.Fatalf("%d %s, want 401 INVALID_SIGNATURE", rec.Code, rec.Body)
			}
		})
	}
	// A stale admin call is refused too: the window applies.
	body := []byte(`{"timestamp":1000,"player_id":"x"}`)
	req := httptest.NewRequest(http.MethodPost, "/admin/players/create", bytes.NewReader(body))
	req.Header.Set("X-Signature", signature.Sign([]byte(testSecret), body))
	rec := httptest.NewRecorder()
	h.h.ServeHTTP(rec, req)
	if rec.Code != http.StatusUnauthorized {
		t.Fatalf("stale admin call: %d", rec.Code)
	}
}

func jsonNum(n int64) string { b, _ := json.Marshal(n); return string(b) }

func TestAdminPlayers(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a := h.mustAdmin("/admin/players/create", map[string]any{"name": "Ana"})
	p := a.Body["player"].(map[string]any)
	id := p["player_id"].(string)
	if id == "" || p["currency"] != operatorsim.DefaultCurrency || p["balance"].(float64) != 0 {
		t.Fatalf("created %v", p)
	}
	if a := h.admin("/admin/players/create", map[string]any{"player_id": id}); a.Code != http.StatusBadRequest {
		t.Fatalf("duplicate player: %d %s", a.Code, a.Raw)
	}
	h.mustAdmin("/admin/players/fund", map[string]any{"player_id": id, "amount": 2500})
	h.mustAdmin("/admin/players/fund", map[string]any{"player_id": id, "amount": -500})
	if got := h.balanceOf(id); got != 2000 {
		t.Fatalf("balance %d, want 2000", got)
	}
	if a := h.admin("/admin/players/fund", map[string]any{"player_id": id, "amount": -5000}); a.Code != http.StatusBadRequest {
		t.Fatalf("overdraw by admin: %d %s", a.Code, a.Raw)
	}
	if a := h.admin("/admin/players/fund", map[string]any{"player_id": "nobody", "amount": 1}); a.Code != http.StatusNotFound {
		t.Fatalf("unknown player: %d %s", a.Code, a.Raw)
	}
	if a := h.admin("/admin/players/fund", map[string]any{"player_id": id, "amuont": 1}); a.Code != http.StatusBadRequest {
		t.Fatalf("typo in a field: %d %s", a.Code, a.Raw)
	}
	list := h.mustAdmin("/admin/players/list", nil)
	if n := len(list.Body["players"].([]any)); n != 1 {
		t.Fatalf("%d players, want 1", n)
	}
}

// Rule GAME-23 LIM-4
func TestAdminTokens(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.player("p-t", 100, "BRL")
	seen := map[string]bool{}
	for i := 0; i < 20; i++ {
		tok := h.token("p-t")
		if len(tok) < 16 || tok == "p-t" || seen[tok] {
			t.Fatalf("token %q: want random, at least 16 characters, never the player id", tok)
		}
		seen[tok] = true
	}
	if a := h.admin("/admin/tokens/issue", map[string]any{"player_id": "nobody"}); a.Code != http.StatusNotFound {
		t.Fatalf("token for an unknown player: %d %s", a.Code, a.Raw)
	}
	if a := h.admin("/admin/tokens/revoke", map[string]any{"token": "nope"}); a.Code != http.StatusNotFound {
		t.Fatalf("revoke unknown token: %d %s", a.Code, a.Raw)
	}
}

// Rule ENV-19 RB-9
func TestReconcile(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	tok := h.player("p-rec", 10_000, "BRL")
	h.call("/bet", betReq("p-rec", tok, "bet-1", 1000, nil))
	h.call("/bet", betReq("p-rec", tok, "bet-2", 2000, nil))
	h.call("/bet", betReq("p-rec", tok, "bet-3", 500, nil))
	h.call("/win", winReq("p-rec", tok, "win-1", "bet-1", 2500, "win", nil))
	h.call("/rollback", rollbackReq("p-rec", tok, "rb-2", "bet-2", 2000, "closing"))
	a := h.mustAdmin("/admin/reconcile", map[string]any{"player_id": "p-rec"})

	var got struct {
		Movements []operatorsim.Movement        `json:"movements"`
		Players   []operatorsim.ReconcilePlayer `json:"players"`
	}
	if err := json.Unmarshal(a.Raw, &got); err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, m := range got.Movements {
		bet := ""
		if m.BetID != nil {
			bet = *m.BetID
		}
		settled := ""
		if m.Settlement != nil {
			settled = *m.Settlement
		}
		lines = append(lines, strings.Join([]string{m.OperatorTransactionID, m.TransactionID, m.Kind, jsonNum(m.Amount), jsonNum(m.Delta), bet, settled}, " "))
	}
	want := []string{
		"1 bet-1 bet 1000 -1000  win",
		"2 bet-2 bet 2000 -2000  rollback",
		"3 bet-3 bet 500 -500  ",
		"4 win-1 win 2500 2500 bet-1 ",
		"5 rb-2 rollback 2000 2000 bet-2 ",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("reconcile:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	if len(got.Players) != 1 {
		t.Fatalf("players %+v", got.Players)
	}
	p := got.Players[0]
	if p.Balance != 11_000 || p.Moved != 1000 || len(p.OpenBets) != 1 || p.OpenBets[0] != "bet-3" {
		t.Fatalf("player summary %+v", p)
	}
}

func TestSeededPlayersOnAFileLedger(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "sub", "ledger.db")
	cfg := operatorsim.Config{
		DB: path, Secret: testSecret, APIKeys: []string{newKey}, SeedPlayers: 3, Currency: "USD",
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	sim, err := operatorsim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, sim: sim, h: sim.Handler()}
	h.mustAdmin("/admin/players/fund", map[string]any{"player_id": "player-0002", "amount": -1})
	if err := sim.Close(); err != nil {
		t.Fatal(err)
	}
	// Reopened: migrations are not reapplied, seeding does not reset balances.
	sim, err = operatorsim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	h = &harness{t: t, sim: sim, h: sim.Handler()}
	list := h.mustAdmin("/admin/players/list", nil)
	var got []string
	for _, p := range list.Body["players"].([]any) {
		m := p.(map[string]any)
		got = append(got, m["player_id"].(string)+" "+m["currency"].(string)+" "+jsonNum(int64(m["balance"].(float64))))
	}
	want := "player-0001 USD 1000000,player-0002 USD 999999,player-0003 USD 1000000"
	if strings.Join(got, ",") != want {
		t.Fatalf("players %q, want %q", strings.Join(got, ","), want)
	}
}

func TestNewRefusesUnsafeConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cfg  operatorsim.Config
	}{
		{"no secret", operatorsim.Config{APIKeys: []string{"k"}}},
		{"no key", operatorsim.Config{Secret: "s", APIKeys: []string{" "}}},
		{"bad currency", operatorsim.Config{Secret: "s", APIKeys: []string{"k"}, Currency: "real"}},
	}
	for _, tc := range tests {
		if _, err := operatorsim.New(tc.cfg); err == nil {
			t.Errorf("%s: New accepted it", tc.name)
		}
	}
}

// Rule GAME-23 TKT-1 AUTH-2
func TestLobbyPlayLaunchesTheGame(t *testing.T) {
	t.Parallel()
	var (
		mu       sync.Mutex
		launched map[string]any
	)
	gameSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.URL.Path != "/v1/launch" || signature.VerifyRequest([]byte(testSecret), body, r.Header.Get("X-Signature"), nowTime()) != nil {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"status":"error","error_code":"INVALID_SIGNATURE"}`))
			return
		}
		mu.Lock()
		launched = nil
		_ = json.Unmarshal(body, &launched)
		mu.Unlock()
		_, _ = w.Write([]byte(`{"status":"ok","url":"http://game.example/?sid=tk_1&lang=en&cur=BRL"}`))
	}))
	defer gameSrv.Close()
	h := newHarness(t, func(c *operatorsim.Config) { c.GameURL = gameSrv.URL; c.SeedPlayers = 2 })

	rec := httptestDo(h, http.MethodGet, "/", "")
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "player-0001") {
		t.Fatalf("lobby: %d", rec.Code)
	}

	req := httptest.NewRequest(http.MethodPost, "/lobby/play", strings.NewReader(url.Values{"player_id": {"player-0001"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	rec = httptest.NewRecorder()
	h.h.ServeHTTP(rec, req)
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "http://game.example/?sid=tk_1&lang=en&cur=BRL" {
		t.Fatalf("play: %d %q %s", rec.Code, rec.Header().Get("Location"), rec.Body)
	}
	last := func() map[string]any {
		mu.Lock()
		defer mu.Unlock()
		return launched
	}
	body := last()
	tok, _ := body["token"].(string)
	if body["operator"] != testOperator || body["player_id"] != "player-0001" || body["currency"] != "BRL" ||
		len(tok) < 16 || tok == "player-0001" || body["game_id"] != operatorsim.DefaultGameID {
		t.Fatalf("launch body %v", body)
	}
	// The token the game received opens the session.
	wantOK(t, h.call("/balance", h.balanceReq(tok)), operatorsim.DefaultSeedBalance)

	if body["responsible_gambling"] != nil || body["deposit_url"] != nil {
		t.Fatalf("controls without the toggle: %v", body)
	}

	// Demo: no token, no player.
	rec = httptestDo(h, http.MethodPost, "/lobby/demo", "")
	if body := last(); rec.Code != http.StatusSeeOther || body["demo"] != true || body["token"] != nil || body["player_id"] != nil {
		t.Fatalf("demo: %d %v", rec.Code, body)
	}

	// The responsible gambling toggle: every control on, Lobby and Deposit lead back to the lobby.
	req = httptest.NewRequest(http.MethodPost, "/lobby/play", strings.NewReader(url.Values{
		"player_id": {"player-0001"}, "responsible_gambling": {"on"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	rec = httptest.NewRecorder()
	h.h.ServeHTTP(rec, req)
	body = last()
	rg, _ := body["responsible_gambling"].(map[string]any)
	lobbyURL, _ := body["lobby_url"].(string)
	if rec.Code != http.StatusSeeOther || rg["session_clock"] != true || rg["reality_check_minutes"] != float64(1) ||
		rg["inactivity_timeout_minutes"] != float64(30) || lobbyURL == "" || body["deposit_url"] != lobbyURL {
		t.Fatalf("responsible gambling launch: %d %v", rec.Code, body)
	}
}

func TestLobbyWithoutGame(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *operatorsim.Config) { c.SeedPlayers = 1 })
	req := httptest.NewRequest(http.MethodPost, "/lobby/play", strings.NewReader("player_id=player-0001"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	rec := httptest.NewRecorder()
	h.h.ServeHTTP(rec, req)
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), "--game-url") {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	req = httptest.NewRequest(http.MethodPost, "/lobby/demo", nil)
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	rec = httptest.NewRecorder()
	h.h.ServeHTTP(rec, req)
	if rec.Code != http.StatusForbidden {
		t.Fatalf("cross-site form: %d", rec.Code)
	}
}

// The lobby's "details" on a ledger row asks the game, signed, for the
// support page of that row's round and player, and opens it: what an
// operator's support staff do from their own back office.
func TestLobbyDetailsOpensTheSupportPage(t *testing.T) {
	t.Parallel()
	var got map[string]any
	var path, sig string
	var raw []byte
	gameSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path, sig = r.URL.Path, r.Header.Get("X-Signature")
		raw, _ = io.ReadAll(r.Body)
		_ = json.Unmarshal(raw, &got)
		if path != "/v1/rounds/support-link" {
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"status":"error","error_code":"ROUND_NOT_FOUND","error_message":"no round"}`))
			return
		}
		_, _ = w.Write([]byte(`{"status":"ok","url":"http://game.example/support/rounds/abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG","expires_at":1}`))
	}))
	defer gameSrv.Close()
	h := newHarness(t, func(c *operatorsim.Config) { c.GameURL = gameSrv.URL; c.SeedPlayers = 1 })
	req := httptest.NewRequest(http.MethodPost, "/lobby/details", strings.NewReader(url.Values{
		"round_id": {"crash-7"}, "player_id": {"player-0001"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	rec := httptest.NewRecorder()
	h.h.ServeHTTP(rec, req)
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "http://game.example/support/rounds/abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG" {
		t.Fatalf("details: %d %q %s", rec.Code, rec.Header().Get("Location"), rec.Body)
	}
	if got["operator"] != testOperator || got["round_id"] != "crash-7" || got["player_id"] != "player-0001" ||
		sig != signature.Sign([]byte(testSecret), raw) {
		t.Fatalf("the request to the game: %s %v signed %q", path, got, sig)
	}
	req = httptest.NewRequest(http.MethodPost, "/lobby/details", strings.NewReader("round_id=x"))
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	rec = httptest.NewRecorder()
	h.h.ServeHTTP(rec, req)
	if rec.Code != http.StatusForbidden {
		t.Fatalf("cross-site form: %d", rec.Code)
	}
}
