package operatorsim_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/internal/signature"
)

// Rule AUTH-3 AUTH-9 AUTH-12 AUTH-14 AUTH-15 AUTH-19 LIM-1 BAL-13 BET-12
func TestAuthentication(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	tok := h.player("p-auth", 1000, "BRL")
	good := func() []byte {
		b, _ := json.Marshal(h.balanceReq(tok))
		return b
	}
	stale := func(d time.Duration) []byte {
		m := h.balanceReq(tok)
		m["timestamp"] = time.Now().Add(d).UnixMilli()
		b, _ := json.Marshal(m)
		return b
	}
	tests := []struct {
		name string
		req  func() *http.Request
		ok   bool
	}{
		{"old key during rotation", func() *http.Request { return signedRequest("/balance", good(), oldKey) }, true},
		{"new key during rotation", func() *http.Request { return signedRequest("/balance", good(), newKey) }, true},
		{"unknown key", func() *http.Request { return signedRequest("/balance", good(), "acme_nope") }, false},
		{"lowercase bearer", func() *http.Request {
			r := signedRequest("/balance", good(), newKey)
			r.Header.Set("Authorization", "bearer "+newKey)
			return r
		}, false},
		{"no Authorization", func() *http.Request {
			r := signedRequest("/balance", good(), newKey)
			r.Header.Del("Authorization")
			return r
		}, false},
		{"key with quotes", func() *http.Request { return signedRequest("/balance", good(), `"`+newKey+`"`) }, false},
		{"no signature", func() *http.Request {
			r := signedRequest("/balance", good(), newKey)
			r.Header.Del("X-Signature")
			return r
		}, false},
		{"signature of another secret", func() *http.Request {
			b := good()
			r := signedRequest("/balance", b, newKey)
			r.Header.Set("X-Signature", signature.Sign([]byte("other"), b))
			return r
		}, false},
		{"body altered after signing", func() *http.Request {
			b := good()
			r := signedRequest("/balance", b, newKey)
			altered := bytes.Replace(b, []byte(`"BRL"`), []byte(`"USD"`), 1)
			r2 := signedRequest("/balance", altered, newKey)
			r2.Header.Set("X-Signature", r.Header.Get("X-Signature"))
			return r2
		}, false},
		{"re-encoded JSON, same content", func() *http.Request {
			b := good()
			r := signedRequest("/balance", b, newKey)
			var m map[string]any
			_ = json.Unmarshal(b, &m)
			spaced, _ := json.MarshalIndent(m, "", "  ")
			r2 := signedRequest("/balance", spaced, newKey)
			r2.Header.Set("X-Signature", r.Header.Get("X-Signature"))
			return r2
		}, false},
		{"whitespace kept as signed", func() *http.Request {
			var m map[string]any
			_ = json.Unmarshal(good(), &m)
			spaced, _ := json.MarshalIndent(m, "", "  ")
			return signedRequest("/balance", spaced, newKey)
		}, true},
		{"timestamp 6 minutes old", func() *http.Request { return signedRequest("/balance", stale(-6*time.Minute), newKey) }, false},
		{"timestamp 6 minutes ahead", func() *http.Request { return signedRequest("/balance", stale(6*time.Minute), newKey) }, false},
		{"timestamp 4 minutes old", func() *http.Request { return signedRequest("/balance", stale(-4*time.Minute), newKey) }, true},
		{"another operator", func() *http.Request {
			m := h.balanceReq(tok)
			m["operator"] = "other-brand"
			b, _ := json.Marshal(m)
			return signedRequest("/balance", b, newKey)
		}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := h.serve(tc.req())
			if tc.ok {
				wantOK(t, a, 1000)
				return
			}
			wantRefusal(t, a, http.StatusUnauthorized, "INVALID_SIGNATURE")
		})
	}
}

// Rule AUTH-15 WIN-19 RB-14
func TestAuthenticationEveryRoute(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for _, route := range []string{"/balance", "/bet", "/win", "/rollback"} {
		t.Run(route, func(t *testing.T) {
			b, _ := json.Marshal(envelope(nil))
			r := signedRequest(route, b, newKey)
			r.Header.Set("X-Signature", strings.Repeat("0", 64))
			wantRefusal(t, h.serve(r), http.StatusUnauthorized, "INVALID_SIGNATURE")
		})
	}
}

// /balance lists no 400 in api/wallet.v1.yaml: its malformed body is the 403
// protocol failure the route lists.
// Rule GEN-4 GEN-5 WERR-2 BET-12 WIN-19 RB-14 BAL-13 AMB-16
func TestMalformedBodyIs400(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	tok := h.player("p-400", 5000, "BRL")
	tests := []struct {
		name, route string
		body        map[string]any
		mention     string
	}{
		{"float amount", "/bet", func() map[string]any { m := betReq("p-400", tok, "b1", 0, nil); m["amount"] = 10.5; return m }(), "amount"},
		{"amount as string", "/bet", func() map[string]any { m := betReq("p-400", tok, "b1", 0, nil); m["amount"] = "1000"; return m }(), "amount"},
		{"negative amount", "/bet", betReq("p-400", tok, "b1", -1, nil), "amount"},
		{"freebet_id key absent", "/bet", func() map[string]any { m := betReq("p-400", tok, "b1", 100, nil); delete(m, "freebet_id"); return m }(), "freebet_id"},
		{"win without type", "/win", func() map[string]any {
			m := winReq("p-400", tok, "w1", "b1", 100, "win", nil)
			delete(m, "type")
			return m
		}(), "type"},
		{"win of unknown type", "/win", winReq("p-400", tok, "w1", "b1", 100, "jackpot", nil), "type"},
		{"rollback with freebet_id", "/rollback", func() map[string]any {
			m := rollbackReq("p-400", tok, "r1", "b1", 100, "x")
			m["freebet_id"] = nil
			return m
		}(), "freebet_id"},
		{"rollback without bet_id", "/rollback", func() map[string]any {
			m := rollbackReq("p-400", tok, "r1", "b1", 100, "x")
			delete(m, "bet_id")
			return m
		}(), "bet_id"},
		{"currency in lower case", "/balance", func() map[string]any { m := h.balanceReq(tok); m["currency"] = "brl"; return m }(), "currency"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := h.call(tc.route, tc.body)
			status := http.StatusBadRequest
			if tc.route == "/balance" {
				status = http.StatusForbidden
			}
			wantRefusal(t, a, status, "INTERNAL_ERROR")
			if msg := a.str("error_message"); !strings.Contains(msg, tc.mention) {
				t.Errorf("error_message %q does not name %q", msg, tc.mention)
			}
		})
	}
	if got := h.balanceOf("p-400"); got != 5000 {
		t.Fatalf("balance %d after malformed calls, want 5000", got)
	}
}

// A field the wallet document does not declare is ignored, as the document
// says of every request: a field the game adds in v1 breaks no wallet. Only
// freebet_id on /rollback stays refused (TestMalformedBodyIs400).
// Rule AMB-16
func TestUnknownFieldsIgnored(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	tok := h.player("p-new", 5000, "BRL")
	bal := h.balanceReq(tok)
	bal["player_id"], bal["device"] = "p-new", "mobile"
	wantOK(t, h.call("/balance", bal), 5000)
	bet := betReq("p-new", tok, "b1", 100, nil)
	bet["bonus"] = map[string]any{"campaign": "x"}
	wantOK(t, h.call("/bet", bet), 4900)
}

// Rule BAL-8 ENV-18 FB-18
func TestBalanceSuccess(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	tok := h.player("p-bal", 152050, "BRL")
	a := h.call("/balance", h.balanceReq(tok))
	wantOK(t, a, 152050)
	if a.str("player_id") != "p-bal" || a.str("currency") != "BRL" || a.str("player_name") != "Player p-bal" {
		t.Fatalf("body %s", a.Raw)
	}
	if fb, ok := a.Body["freebets"].([]any); !ok || len(fb) != 0 {
		t.Fatalf("freebets %v, want an empty list", a.Body["freebets"])
	}
}

// Rule BAL-6 BAL-7 AMB-8
func TestBalanceRefusesUnknownExpiredRevokedToken(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.player("p-tok", 1000, "BRL")
	revoked, expired := h.token("p-tok"), h.token("p-tok")
	h.mustAdmin("/admin/tokens/revoke", map[string]any{"token": revoked})
	h.mustAdmin("/admin/tokens/expire", map[string]any{"token": expired})
	tests := []struct {
		name, token, code string
	}{
		{"unknown", "never-issued-token-0000", "TOKEN_INVALID"},
		{"revoked", revoked, "TOKEN_INVALID"},
		{"expired", expired, "TOKEN_EXPIRED"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wantRefusal(t, h.call("/balance", h.balanceReq(tc.token)), http.StatusUnauthorized, tc.code)
		})
	}
	// AMB-8 reading B on request: the same refusals as HTTP 200.
	h.setFaults(map[string]any{"balance": map[string]any{"refusal_status": "200"}})
	wantRefusal(t, h.call("/balance", h.balanceReq(revoked)), http.StatusOK, "TOKEN_INVALID")
}

// Rule WERR-1 WERR-14
func TestBalanceBlockedPlayer(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	tok := h.player("p-blk", 1000, "BRL")
	h.mustAdmin("/admin/players/block", map[string]any{"player_id": "p-blk", "blocked": true})
	wantRefusal(t, h.call("/balance", h.balanceReq(tok)), http.StatusOK, "PLAYER_BLOCKED")
}

// Rule FB-18 FB-15 FB-17 FB-6 FB-7
func TestBalanceListsOpenGrantsEveryTime(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	tok := h.player("p-fb", 1000, "BRL")
	h.mustAdmin("/admin/freebets/grant", map[string]any{"player_id": "p-fb", "id": "welcome-1", "amount": 100})
	h.mustAdmin("/admin/freebets/grant", map[string]any{"player_id": "p-fb", "id": "spring-2", "amount": 200, "quantity": 2})
	// Repeating an id changes nothing, whatever the amount.
	h.mustAdmin("/admin/freebets/grant", map[string]any{"player_id": "p-fb", "id": "welcome-1", "amount": 999})

	grants := func() string {
		a := h.call("/balance", h.balanceReq(tok))
		wantOK(t, a, 1000)
		var out []string
		for _, g := range a.Body["freebets"].([]any) {
			m := g.(map[string]any)
			out = append(out, fmt.Sprintf("%s:%v:%v", m["id"], m["amount"], m["quantity"]))
		}
		return strings.Join(out, " ")
	}
	steps := []struct {
		freebetID string
		want      string
	}{
		{"", "welcome-1:100:1 spring-2:200:2"},
		{"", "welcome-1:100:1 spring-2:200:2"}, // the whole list again
		{"welcome-1", "spring-2:200:2"},
		{"spring-2#1", "spring-2:200:2"}, // one round of two left
		{"spring-2#2", ""},
	}
	for i, st := range steps {
		if st.freebetID != "" {
			stake := int64(100)
			if strings.HasPrefix(st.freebetID, "spring") {
				stake = 200
			}
			wantOK(t, h.call("/bet", betReq("p-fb", tok, fmt.Sprintf("fb-bet-%d", i), stake, st.freebetID)), 1000)
		}
		if got := grants(); got != st.want {
			t.Fatalf("step %d: freebets %q, want %q", i, got, st.want)
		}
	}
}

// Rule ENV-17 ENV-18 ENV-19 WERR-4
func TestBetDebits(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	tok := h.player("p-bet", 5000, "BRL")
	a := h.call("/bet", betReq("p-bet", tok, "bet-1", 1200, nil))
	wantOK(t, a, 3800)
	if a.str("currency") != "BRL" {
		t.Errorf("currency %q, want BRL", a.str("currency"))
	}
	opTx := a.str("transaction_id")
	if opTx == "" || opTx == "bet-1" {
		t.Errorf("transaction_id %q: want the operator's own id, not the game's", opTx)
	}
	if got := h.balanceOf("p-bet"); got != 3800 {
		t.Fatalf("ledger balance %d, want 3800", got)
	}
}

// Rule BET-8 ENV-6 ENV-11 ENV-12
func TestBetRetryReplaysStoredAnswer(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	tok := h.player("p-idem", 5000, "BRL")
	first := betReq("p-idem", tok, "bet-1", 1000, nil)
	a1 := h.call("/bet", first)
	wantOK(t, a1, 4000)
	for i := 0; i < 3; i++ {
		// Another attempt: new request_id and timestamp, same movement.
		a := h.call("/bet", again(first))
		if a.Code != http.StatusOK || !bytes.Equal(a.Raw, a1.Raw) {
			t.Fatalf("retry %d answered %d %s, want 200 %s", i, a.Code, a.Raw, a1.Raw)
		}
	}
	if got := h.balanceOf("p-idem"); got != 4000 {
		t.Fatalf("balance %d after retries, want one debit (4000)", got)
	}
	// The key is (player_id, transaction_id): another player may use the same id.
	tok2 := h.player("p-idem-2", 5000, "BRL")
	wantOK(t, h.call("/bet", betReq("p-idem-2", tok2, "bet-1", 1000, nil)), 4000)
	// request_id is never the key: a new movement reusing an old request_id is debited.
	reused := betReq("p-idem", tok, "bet-2", 500, nil)
	reused["request_id"] = first["request_id"]
	wantOK(t, h.call("/bet", reused), 3500)
}

// Rule BET-9 WERR-17
func TestBetDivergentBodyIs409(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	tok := h.player("p-dup", 5000, "BRL")
	wantOK(t, h.call("/bet", betReq("p-dup", tok, "bet-1", 1000, nil)), 4000)
	tests := []struct {
		name   string
		change func(map[string]any)
	}{
		{"amount", func(m map[string]any) { m["amount"] = 2000 }},
		{"round_id", func(m map[string]any) { m["round_id"] = "round-2" }},
		{"freebet_id", func(m map[string]any) { m["freebet_id"] = "grant-1" }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := betReq("p-dup", tok, "bet-1", 1000, nil)
			tc.change(m)
			wantRefusal(t, h.call("/bet", m), http.StatusConflict, "DUPLICATE_TRANSACTION")
		})
	}
	if got := h.balanceOf("p-dup"); got != 4000 {
		t.Fatalf("balance %d, want 4000", got)
	}
}

// Rule BET-10 WERR-1 WERR-7 WERR-8 AMB-1
func TestBetInsufficientFunds(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	tok := h.player("p-poor", 500, "BRL")
	// AMB-1 as api/wallet.v1.yaml reads it: HTTP 200, status = error, with the balance.
	a := h.call("/bet", betReq("p-poor", tok, "bet-1", 1000, nil))
	wantRefusal(t, a, http.StatusOK, "INSUFFICIENT_FUNDS")
	if a.num("balance") != 500 {
		t.Fatalf("balance %d in the refusal, want 500", a.num("balance"))
	}
	// The per-route table's 402 (AMB-1 reading B), on request.
	h.setFaults(map[string]any{"bet": map[string]any{"refusal_status": "4xx"}})
	a = h.call("/bet", betReq("p-poor", tok, "bet-2", 1000, nil))
	wantRefusal(t, a, http.StatusPaymentRequired, "INSUFFICIENT_FUNDS")
	if a.num("balance") != 500 {
		t.Fatalf("balance %d in the 402, want 500", a.num("balance"))
	}
	if got := h.balanceOf("p-poor"); got != 500 {
		t.Fatalf("balance %d, want 500", got)
	}
	// A refused bet is not recorded: the same transaction_id may be sent again later.
	h.mustAdmin("/admin/players/fund", map[string]any{"player_id": "p-poor", "amount": 1000})
	wantOK(t, h.call("/bet", betReq("p-poor", tok, "bet-1", 1000, nil)), 500)
}

// Rule BET-11 WERR-9 WERR-10 AMB-1
func TestBetTokenRefusals(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.player("p-bt", 5000, "BRL")
	other := h.player("p-bt-other", 5000, "BRL")
	expired, revoked := h.token("p-bt"), h.token("p-bt")
	h.mustAdmin("/admin/tokens/expire", map[string]any{"token": expired})
	h.mustAdmin("/admin/tokens/revoke", map[string]any{"token": revoked})
	tests := []struct {
		name, token, code string
	}{
		{"expired", expired, "TOKEN_EXPIRED"},
		{"revoked", revoked, "TOKEN_INVALID"},
		{"unknown", "never-issued-token-0000", "TOKEN_INVALID"},
		{"another player's", other, "TOKEN_INVALID"},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wantRefusal(t, h.call("/bet", betReq("p-bt", tc.token, fmt.Sprintf("bet-%d", i), 100, nil)), http.StatusOK, tc.code)
		})
	}
	// The per-route table's 409 TOKEN_EXPIRED, on request.
	h.setFaults(map[string]any{"bet": map[string]any{"refusal_status": "4xx"}})
	wantRefusal(t, h.call("/bet", betReq("p-bt", expired, "bet-9", 100, nil)), http.StatusConflict, "TOKEN_EXPIRED")
	if got := h.balanceOf("p-bt"); got != 5000 {
		t.Fatalf("balance %d, want 5000", got)
	}
}

// Rule WERR-1 WERR-4 WERR-11 WERR-13 WERR-14 WERR-19 WERR-21
func TestBetBusinessRefusals(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	tok := h.player("p-ref", 5000, "BRL")
	blockedTok := h.player("p-ref-blocked", 5000, "BRL")
	h.mustAdmin("/admin/players/block", map[string]any{"player_id": "p-ref-blocked", "blocked": true})
	tests := []struct {
		name string
		body map[string]any
		code string
	}{
		{"blocked player", betReq("p-ref-blocked", blockedTok, "b1", 100, nil), "PLAYER_BLOCKED"},
		{"currency mismatch", func() map[string]any { m := betReq("p-ref", tok, "b2", 100, nil); m["currency"] = "USD"; return m }(), "CURRENCY_MISMATCH"},
		{"unknown player", betReq("p-nobody", tok, "b3", 100, nil), "PLAYER_NOT_FOUND"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := h.call("/bet", tc.body)
			wantRefusal(t, a, http.StatusOK, tc.code)
		})
	}
	if h.balanceOf("p-ref") != 5000 || h.balanceOf("p-ref-blocked") != 5000 {
		t.Fatal("a refused bet moved money")
	}
}

// Rule BET-5 BET-6 BET-7
func TestFreebetBetDoesNotDebit(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	tok := h.player("p-free", 5000, "BRL")
	h.mustAdmin("/admin/freebets/grant", map[string]any{"player_id": "p-free", "id": "spring-1", "amount": 200, "quantity": 5})
	a := h.call("/bet", betReq("p-free", tok, "fb-1", 200, "spring-1#3"))
	wantOK(t, a, 5000)
	if a.str("transaction_id") == "" {
		t.Error("a freebet bet answered no operator transaction_id")
	}
	// freebet_id present and null: an ordinary bet, debited.
	wantOK(t, h.call("/bet", betReq("p-free", tok, "b-1", 200, nil)), 4800)
	// An empty string is not null: still a freebet.
	wantOK(t, h.call("/bet", betReq("p-free", tok, "fb-2", 200, "")), 4800)
}

// Rule BET-6 FB-21 (WC-6 in docs/ambiguities.md): a round of a grant that a
// standing bet spent is not spent again by a second bet under a fresh
// transaction_id, so its win is never paid twice; the rollback of the first
// bet opens it again.
func TestFreebetSpentOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	tok := h.player("p-fb2", 5000, "BRL")
	h.mustAdmin("/admin/freebets/grant", map[string]any{"player_id": "p-fb2", "id": "g-1", "amount": 300})
	wantOK(t, h.call("/bet", betReq("p-fb2", tok, "fb-1", 300, "g-1")), 5000)
	again := h.call("/bet", betReq("p-fb2", tok, "fb-2", 300, "g-1"))
	wantRefusal(t, again, http.StatusOK, "INSUFFICIENT_FUNDS")
	if got := h.balanceOf("p-fb2"); got != 5000 {
		t.Fatalf("balance %d, want 5000", got)
	}
	wantOK(t, h.call("/rollback", rollbackReq("p-fb2", tok, "rb-1", "fb-1", 300, "test")), 5000)
	wantOK(t, h.call("/bet", betReq("p-fb2", tok, "fb-3", 300, "g-1")), 5000)
}

// Rule FB-25: a freebet_id that comes back on a later /bet after a refused one
// is a return, not a double spend: the grant is spent once, by the bet the
// wallet accepts, and no money moves.
func TestFreebetReturnsAfterARefusedBet(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	tok := h.player("p-fbr", 5000, "BRL")
	h.mustAdmin("/admin/freebets/grant", map[string]any{"player_id": "p-fbr", "id": "g-2", "amount": 300})
	refused := betReq("p-fbr", tok, "fb-1", 300, "g-2")
	refused["currency"] = "USD"
	wantRefusal(t, h.call("/bet", refused), http.StatusOK, "CURRENCY_MISMATCH")
	wantOK(t, h.call("/bet", betReq("p-fbr", tok, "fb-2", 300, "g-2")), 5000)
	if fb, _ := h.call("/balance", h.balanceReq(tok)).Body["freebets"].([]any); len(fb) != 0 {
		t.Fatalf("freebets %v after the grant's one round was played, want none", fb)
	}
	if got := h.balanceOf("p-fbr"); got != 5000 {
		t.Fatalf("balance %d, want 5000 (a freebet moves no money)", got)
	}
}

// Rule BET-3 LIM-5 ENV-14
func TestFiveBetsInOneRoundAreEachDebited(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	tok := h.player("p-five", 10000, "BRL")
	for i := 1; i <= 5; i++ {
		wantOK(t, h.call("/bet", betReq("p-five", tok, fmt.Sprintf("bet-%d", i), 1000, nil)), 10000-int64(i)*1000)
	}
	if got := h.balanceOf("p-five"); got != 5000 {
		t.Fatalf("balance %d, want 5000", got)
	}
}

// Rule WIN-7 WIN-3 WIN-4 WIN-5 WIN-6 AMB-4 ENV-19
func TestWinTypes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		typ       string
		amount    int64
		freebetID any
		want      int64 // balance after the bet of 1000 (not debited on a freebet) and the win
	}{
		{"win", 2350, nil, 10000 - 1000 + 2350},
		{"freebet", 300, "grant-1", 10000 + 300},
		{"zero_win", 0, nil, 10000 - 1000},
		{"lose", 0, nil, 10000 - 1000},
	}
	for _, tc := range tests {
		t.Run(tc.typ, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			tok := h.player("p-win", 10000, "BRL")
			h.call("/bet", betReq("p-win", tok, "bet-1", 1000, tc.freebetID))
			a := h.call("/win", winReq("p-win", tok, "win-1", "bet-1", tc.amount, tc.typ, tc.freebetID))
			wantOK(t, a, tc.want)
			if a.str("transaction_id") == "" || a.str("transaction_id") == "win-1" {
				t.Errorf("transaction_id %q: want the operator's own id", a.str("transaction_id"))
			}
			// The bet is closed: a second credit on it is refused.
			wantRefusal(t, h.call("/win", winReq("p-win", tok, "win-2", "bet-1", 100, "win", tc.freebetID)), http.StatusNotFound, "BET_NOT_FOUND")
		})
	}
}

// Rule WIN-5 WIN-6
func TestLostRoundWithAmountIsMalformed(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	tok := h.player("p-zw", 10000, "BRL")
	h.call("/bet", betReq("p-zw", tok, "bet-1", 1000, nil))
	wantRefusal(t, h.call("/win", winReq("p-zw", tok, "win-1", "bet-1", 50, "zero_win", nil)), http.StatusBadRequest, "INTERNAL_ERROR")
	if got := h.balanceOf("p-zw"); got != 9000 {
		t.Fatalf("balance %d, want 9000", got)
	}
}

// Rule WIN-10 AMB-3
func TestOrphanWinIs404(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	tok := h.player("p-orphan", 1000, "BRL")
	wantRefusal(t, h.call("/win", winReq("p-orphan", tok, "win-1", "bet-never", 500, "win", nil)), http.StatusNotFound, "BET_NOT_FOUND")
	if got := h.balanceOf("p-orphan"); got != 1000 {
		t.Fatalf("balance %d, want 1000", got)
	}
	// AMB-3 reading B on request: BET_NOT_FOUND in an HTTP 200 body.
	h.setFaults(map[string]any{"win": map[string]any{"refusal_status": "200"}})
	wantRefusal(t, h.call("/win", winReq("p-orphan", tok, "win-1", "bet-never", 500, "win", nil)), http.StatusOK, "BET_NOT_FOUND")
}

// Rule WIN-11
func TestWinWithExpiredOrRevokedToken(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	tok := h.player("p-late", 10000, "BRL")
	wantOK(t, h.call("/bet", betReq("p-late", tok, "bet-1", 1000, nil)), 9000)
	wantOK(t, h.call("/bet", betReq("p-late", tok, "bet-2", 1000, nil)), 8000)
	h.mustAdmin("/admin/tokens/expire", map[string]any{"token": tok})
	wantOK(t, h.call("/win", winReq("p-late", tok, "win-1", "bet-1", 2000, "win", nil)), 10000)
	h.mustAdmin("/admin/tokens/revoke", map[string]any{"token": tok})
	wantOK(t, h.call("/win", winReq("p-late", tok, "win-2", "bet-2", 1500, "win", nil)), 11500)
}

// Rule WIN-13 WIN-14 WIN-15
func TestWinAmountIsNotCheckedAgainstStake(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	tok := h.player("p-promo", 10000, "BRL")
	wantOK(t, h.call("/bet", betReq("p-promo", tok, "bet-1", 1000, nil)), 9000)
	wantOK(t, h.call("/bet", betReq("p-promo", tok, "bet-2", 1000, nil)), 8000)
	// More than any multiplier would give (a promotion added in), and less (the ceiling).
	wantOK(t, h.call("/win", winReq("p-promo", tok, "win-1", "bet-1", 1_000_003, "win", nil)), 1_008_003)
	wantOK(t, h.call("/win", winReq("p-promo", tok, "win-2", "bet-2", 7, "win", nil)), 1_008_010)
}

// Rule BET-8 BET-9 WERR-17 AMB-11
func TestWinIdempotency(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	tok := h.player("p-widem", 10000, "BRL")
	h.call("/bet", betReq("p-widem", tok, "bet-1", 1000, nil))
	w := winReq("p-widem", tok, "win-1", "bet-1", 2500, "win", nil)
	a1 := h.call("/win", w)
	wantOK(t, a1, 11500)
	a2 := h.call("/win", again(w))
	if a2.Code != http.StatusOK || !bytes.Equal(a1.Raw, a2.Raw) {
		t.Fatalf("retry answered %d %s, want %s", a2.Code, a2.Raw, a1.Raw)
	}
	div := again(w)
	div["amount"] = 9999
	wantRefusal(t, h.call("/win", div), http.StatusOK, "DUPLICATE_TRANSACTION")
	if got := h.balanceOf("p-widem"); got != 11500 {
		t.Fatalf("balance %d, want 11500", got)
	}
}

// Rule RB-9 RB-6 ENV-19
func TestRollbackRevertsTheDebit(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	tok := h.player("p-rb", 10000, "BRL")
	wantOK(t, h.call("/bet", betReq("p-rb", tok, "bet-1", 1500, nil)), 8500)
	a := h.call("/rollback", rollbackReq("p-rb", tok, "rb-1", "bet-1", 1500, "cancelled_by_player"))
	wantOK(t, a, 10000)
	if a.str("transaction_id") == "" || a.str("transaction_id") == "rb-1" {
		t.Errorf("transaction_id %q: want the operator's own id", a.str("transaction_id"))
	}
	// Idempotent: a retry replays; a second rollback under another id undoes nothing more.
	wantOK(t, h.call("/rollback", again(rollbackReq("p-rb", tok, "rb-1", "bet-1", 1500, "cancelled_by_player"))), 10000)
	wantOK(t, h.call("/rollback", rollbackReq("p-rb", tok, "rb-2", "bet-1", 1500, "closing")), 10000)
	if got := h.balanceOf("p-rb"); got != 10000 {
		t.Fatalf("balance %d, want 10000", got)
	}
}

// Rule RB-8 RB-10 AMB-11 AMB-12
func TestRollbackAmountMismatchIsRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	tok := h.player("p-rbm", 10000, "BRL")
	wantOK(t, h.call("/bet", betReq("p-rbm", tok, "bet-1", 1000, nil)), 9000)
	// A declared amount other than the debit's: refused, nothing moves (AMB-12 reading A).
	for _, amount := range []int64{5000, 999} {
		wantRefusal(t, h.call("/rollback", rollbackReq("p-rbm", tok, fmt.Sprintf("rb-%d", amount), "bet-1", amount, "x")), http.StatusOK, "DUPLICATE_TRANSACTION")
	}
	if got := h.balanceOf("p-rbm"); got != 9000 {
		t.Fatalf("balance %d after refused rollbacks, want 9000", got)
	}
	// A retry of an accepted rollback with another amount: divergent (RB-8), HTTP 200 (AMB-11).
	wantOK(t, h.call("/rollback", rollbackReq("p-rbm", tok, "rb-ok", "bet-1", 1000, "x")), 10000)
	wantRefusal(t, h.call("/rollback", rollbackReq("p-rbm", tok, "rb-ok", "bet-1", 2000, "x")), http.StatusOK, "DUPLICATE_TRANSACTION")
	if got := h.balanceOf("p-rbm"); got != 10000 {
		t.Fatalf("balance %d, want 10000", got)
	}
}

// Rule RB-13 AMB-13
func TestRollbackOfNonexistentDebitIsOK(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	tok := h.player("p-rbn", 7000, "BRL")
	wantOK(t, h.call("/rollback", rollbackReq("p-rbn", tok, "rb-1", "bet-never-arrived", 1000, "orphan_at_boot")), 7000)
	// The bet arriving after its rollback must not debit a stake the game considers refunded.
	a := h.call("/bet", betReq("p-rbn", tok, "bet-never-arrived", 1000, nil))
	if a.str("status") != "error" {
		t.Fatalf("a bet after its rollback was accepted: %d %s", a.Code, a.Raw)
	}
	if got := h.balanceOf("p-rbn"); got != 7000 {
		t.Fatalf("balance %d, want 7000", got)
	}
}

// Rule RB-12
func TestRollbackOfFreebetMovesNothing(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	tok := h.player("p-rbf", 7000, "BRL")
	h.mustAdmin("/admin/freebets/grant", map[string]any{"player_id": "p-rbf", "id": "g-1", "amount": 500})
	wantOK(t, h.call("/bet", betReq("p-rbf", tok, "fb-1", 500, "g-1")), 7000)
	wantOK(t, h.call("/rollback", rollbackReq("p-rbf", tok, "rb-1", "fb-1", 500, "refused_after_debit")), 7000)
	if got := h.balanceOf("p-rbf"); got != 7000 {
		t.Fatalf("balance %d, want 7000", got)
	}
	// The round was undone: the grant is open again.
	a := h.call("/balance", h.balanceReq(tok))
	if fb := a.Body["freebets"].([]any); len(fb) != 1 {
		t.Fatalf("freebets %v, want g-1 open again", fb)
	}
}

// Rule RB-11
func TestRollbackReasonChangesNothing(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	tok := h.player("p-rsn", 10000, "BRL")
	for i, reason := range []string{"cancelled_by_player", "refused_after_debit", "closing", "orphan_at_boot", "anything else"} {
		bet := fmt.Sprintf("bet-%d", i)
		wantOK(t, h.call("/bet", betReq("p-rsn", tok, bet, 700, nil)), 9300)
		wantOK(t, h.call("/rollback", rollbackReq("p-rsn", tok, "rb-"+bet, bet, 700, reason)), 10000)
	}
}

// A rollback after a win on the same bet would refund a stake whose prize was
// paid; the game never sends it, and it is refused. A win after a rollback is
// refused as an orphan.
// Rule RB-9 WIN-10
func TestSettledBetsStaySettled(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	tok := h.player("p-set", 10000, "BRL")
	wantOK(t, h.call("/bet", betReq("p-set", tok, "bet-1", 1000, nil)), 9000)
	wantOK(t, h.call("/win", winReq("p-set", tok, "win-1", "bet-1", 3000, "win", nil)), 12000)
	wantRefusal(t, h.call("/rollback", rollbackReq("p-set", tok, "rb-1", "bet-1", 1000, "closing")), http.StatusOK, "BET_NOT_FOUND")

	wantOK(t, h.call("/bet", betReq("p-set", tok, "bet-2", 1000, nil)), 11000)
	wantOK(t, h.call("/rollback", rollbackReq("p-set", tok, "rb-2", "bet-2", 1000, "closing")), 12000)
	wantRefusal(t, h.call("/win", winReq("p-set", tok, "win-2", "bet-2", 3000, "win", nil)), http.StatusNotFound, "BET_NOT_FOUND")
	if got := h.balanceOf("p-set"); got != 12000 {
		t.Fatalf("balance %d, want 12000", got)
	}
}

// Rule WERR-4 WERR-21
func TestUnknownRouteIsJSON(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for _, path := range []string{"/credit", "/admin/nope"} {
		rec := httptestDo(h, http.MethodPost, path, "{}")
		if rec.Code != http.StatusNotFound || !json.Valid(rec.Body.Bytes()) {
			t.Fatalf("%s: %d %q", path, rec.Code, rec.Body.String())
		}
	}
}
