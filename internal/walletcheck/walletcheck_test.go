package walletcheck_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/internal/operatorsim"
	"github.com/crashstudio/crashgame/internal/secret"
	"github.com/crashstudio/crashgame/internal/signature"
	"github.com/crashstudio/crashgame/internal/walletcheck"
)

const (
	testOperator = "wc-test-operator"
	testSecret   = "wc-test-secret-0123456789abcdef"
	testKey      = "wc_testkey1_0123456789abcdefghijABCDEFGHIJ0123456789abcde"
	testKey2     = "wc_testkey2_0123456789abcdefghijABCDEFGHIJ0123456789abcde"
	testPlayer   = "wc-player-1"
	secondPlayer = "wc-player-2"
	testBalance  = 1_000_000
)

// sim is an in-process operator-sim over real HTTP, with one funded player,
// a live token and an expired one.
type sim struct {
	t       *testing.T
	srv     *httptest.Server
	token   string
	expired string
	// second is a live token of a second funded player, secondPlayer.
	second string
}

func newSim(t *testing.T, wrap ...func(http.Handler) http.Handler) *sim {
	t.Helper()
	s, err := operatorsim.New(operatorsim.Config{
		Operator: testOperator,
		Secret:   testSecret,
		APIKeys:  []string{testKey, testKey2},
		Logger:   slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatalf("operatorsim.New: %v", err)
	}
	handler := s.Handler()
	for _, w := range wrap {
		handler = w(handler)
	}
	srv := httptest.NewServer(handler)
	t.Cleanup(func() {
		srv.Close()
		_ = s.Close()
	})
	h := &sim{t: t, srv: srv}
	h.admin("/admin/players/create", map[string]any{"player_id": testPlayer, "currency": "BRL", "balance": testBalance})
	h.token = h.admin("/admin/tokens/issue", map[string]any{"player_id": testPlayer})["token"].(string)
	h.expired = h.admin("/admin/tokens/issue", map[string]any{"player_id": testPlayer})["token"].(string)
	h.admin("/admin/tokens/expire", map[string]any{"token": h.expired})
	h.admin("/admin/players/create", map[string]any{"player_id": secondPlayer, "currency": "BRL", "balance": testBalance})
	h.second = h.admin("/admin/tokens/issue", map[string]any{"player_id": secondPlayer})["token"].(string)
	return h
}

// admin calls operator-sim's signed admin API and returns the answer.
func (h *sim) admin(path string, body map[string]any) map[string]any {
	h.t.Helper()
	body["timestamp"] = time.Now().UnixMilli()
	raw, err := json.Marshal(body)
	if err != nil {
		h.t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, h.srv.URL+path, bytes.NewReader(raw))
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header.Set("X-Signature", signature.Sign([]byte(testSecret), raw))
	resp, err := h.srv.Client().Do(req)
	if err != nil {
		h.t.Fatalf("%s: %v", path, err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil || resp.StatusCode != http.StatusOK || out["status"] != "ok" {
		h.t.Fatalf("%s: HTTP %d %s", path, resp.StatusCode, b)
	}
	return out
}

func (h *sim) balance() int64 {
	h.t.Helper()
	return h.balanceOf(testPlayer)
}

func (h *sim) balanceOf(player string) int64 {
	h.t.Helper()
	p := h.admin("/admin/players/get", map[string]any{"player_id": player})["player"].(map[string]any)
	return int64(p["balance"].(float64))
}

func (h *sim) target() walletcheck.Target {
	return walletcheck.Target{
		WalletURL:    h.srv.URL,
		Operator:     testOperator,
		Secret:       testSecret,
		APIKey:       testKey,
		SecondAPIKey: testKey2,
		Token:        secret.Secret(h.token),
		ExpiredToken: secret.Secret(h.expired),
		SecondToken:  secret.Secret(h.second),
		Currency:     "BRL",
		GameID:       "crash",
	}
}

// run plays the battery. The delayed retries do not wait unless opts says
// how: operator-sim never forgets a transaction_id, so the wait proves
// nothing against it, and tests do not sleep.
func run(t *testing.T, target walletcheck.Target, opts walletcheck.Options) walletcheck.Report {
	t.Helper()
	if opts.Sleep == nil {
		opts.Sleep = func(context.Context, time.Duration) error { return nil }
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return walletcheck.Run(ctx, target, opts)
}

// checkNamed returns the check of that name.
func checkNamed(t *testing.T, rep walletcheck.Report, name string) walletcheck.Check {
	t.Helper()
	for _, c := range rep.Checks {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no check %q in the report", name)
	return walletcheck.Check{}
}

func table(t *testing.T, rep walletcheck.Report) string {
	t.Helper()
	var b strings.Builder
	if err := rep.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// Against operator-sim as it ships, every check passes, the only skips are
// the unobservable AUTH-14 and, with no grant, nothing else; the balance
// ends where it started; the report holds no secret, key or token.
//
// Rule BAL-7 BAL-8 BET-3 BET-5 BET-6 BET-8 BET-9 BET-10 BET-11 WIN-10 WIN-11
// Rule WIN-13 WIN-14 WIN-15 RB-8 RB-9 RB-10 RB-12 RB-13 AUTH-3 AUTH-9 AUTH-12
// Rule AUTH-15 AUTH-19 ENV-6 ENV-12 ENV-14 ENV-17 ENV-19 GEN-2 GEN-4 LIM-1 LIM-5
// Rule GEN-5 GEN-6 BET-4 BET-12 ENV-9 ENV-11 ENV-15 WIN-5 WIN-7 WIN-17 WIN-19
// Rule WERR-2 WERR-13 WERR-17
// Rule WC-1 WC-2 WC-3 WC-4 WC-5 WC-6 AUTH-1 FB-21 BET-2 (the fault probes)
func TestBatteryPassesAgainstOperatorSim(t *testing.T) {
	h := newSim(t)
	h.admin("/admin/freebets/grant", map[string]any{"player_id": testPlayer, "id": "wc-grant", "amount": 100})
	rep := run(t, h.target(), walletcheck.Options{})
	out := table(t, rep)
	if !rep.OK() {
		t.Fatalf("the battery failed against operator-sim:\n%s", out)
	}
	for _, c := range rep.Checks {
		if c.Result == walletcheck.Skip && c.Name != "API keys compared in constant time" {
			t.Errorf("check %q skipped: %s", c.Name, c.Evidence)
		}
	}
	for _, p := range []string{testPlayer, secondPlayer} {
		if got := h.balanceOf(p); got != testBalance {
			t.Errorf("operator-sim's balance of %s is %d after the run, want %d", p, got, testBalance)
		}
	}
	if rep.BalanceBefore == nil || rep.BalanceAfter == nil || *rep.BalanceAfter != *rep.BalanceBefore {
		t.Errorf("report balances %v -> %v", rep.BalanceBefore, rep.BalanceAfter)
	}
	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{testSecret, testKey, testKey2, h.token, h.expired, h.second} {
		if strings.Contains(out, secret) || strings.Contains(js.String(), secret) {
			t.Errorf("the report holds a secret, key or token")
		}
	}
	// The readings operator-sim takes are named (AMB-1, AMB-8, AMB-13).
	for name, want := range map[string]string{
		"unknown token refused on /balance":      "AMB-8 reading A",
		"insufficient funds refused":             "AMB-1 reading A",
		"rollback of an unknown bet answers 200": "AMB-13 reading A",
		"divergent duplicate bet refused":        "HTTP 409",
		"lowercase bearer (informational)":       "refused",
		"5-minute window on timestamp":           "AMB-26 reading A",
	} {
		if c := checkNamed(t, rep, name); !strings.Contains(c.Evidence, want) {
			t.Errorf("%s: evidence %q does not say %q", name, c.Evidence, want)
		}
	}
	for _, want := range []string{"RULES", "CHECK", "RESULT", "EVIDENCE", "PASS: "} {
		if !strings.Contains(out, want) {
			t.Errorf("the table lacks %q:\n%s", want, out)
		}
	}
	t.Logf("\n%s", out)
}

// A freebet granted through operator-sim's admin API is found in /balance
// and used (FB-6: #1 suffix with quantity above 1).
//
// Rule BET-6 RB-12
func TestBatteryUsesAGrantedFreebet(t *testing.T) {
	h := newSim(t)
	h.admin("/admin/freebets/grant", map[string]any{"player_id": testPlayer, "id": "wc-grant", "amount": 250, "quantity": 3})
	rep := run(t, h.target(), walletcheck.Options{})
	c := checkNamed(t, rep, "freebet bet not debited")
	if c.Result != walletcheck.Pass || !strings.Contains(c.Evidence, "freebet bet of 250 with the first grant") {
		t.Fatalf("freebet check: %s %s", c.Result, c.Evidence)
	}
	if !rep.OK() {
		t.Fatalf("the battery failed:\n%s", table(t, rep))
	}
}

// Without the optional inputs the checks that need them are skipped with
// the reason, and nothing fails.
//
// Rule WIN-11 AUTH-19
func TestBatterySkipsWithoutOptionalTokens(t *testing.T) {
	h := newSim(t)
	target := h.target()
	target.ExpiredToken, target.SecondAPIKey = "", ""
	rep := run(t, target, walletcheck.Options{})
	if !rep.OK() {
		t.Fatalf("the battery failed:\n%s", table(t, rep))
	}
	for _, name := range []string{"win with an expired token credited", "bet with an expired token refused",
		"expired token refused on /balance", "second API key accepted (rotation)"} {
		if c := checkNamed(t, rep, name); c.Result != walletcheck.Skip || !strings.Contains(c.Evidence, "--") {
			t.Errorf("%s: %s %q, want a skip naming the flag", name, c.Result, c.Evidence)
		}
	}
}

// A player without enough balance for the script: the money checks are
// skipped, the rest still run.
func TestBatterySkipsMoneyChecksOnAPoorPlayer(t *testing.T) {
	h := newSim(t)
	h.admin("/admin/players/fund", map[string]any{"player_id": testPlayer, "amount": -(testBalance - 300)})
	rep := run(t, h.target(), walletcheck.Options{})
	if !rep.OK() {
		t.Fatalf("the battery failed:\n%s", table(t, rep))
	}
	if c := checkNamed(t, rep, "five bets in one round all debited"); c.Result != walletcheck.Skip || !strings.Contains(c.Evidence, "below") {
		t.Errorf("five bets: %s %q, want a skip saying the balance is too low", c.Result, c.Evidence)
	}
	if c := checkNamed(t, rep, "wrong or missing signature refused"); c.Result != walletcheck.Pass {
		t.Errorf("the signature check did not run: %s %q", c.Result, c.Evidence)
	}
}

// With each fault operator-sim can inject, the report fails and names the
// rule the fault breaks; with a fault the contract allows, it still passes
// and names the reading.
func TestBatteryFailsWithEachFault(t *testing.T) {
	cases := []struct {
		name   string
		faults map[string]any
		opts   walletcheck.Options
		// wantRules must all be among the failed rules; none means the run passes.
		wantRules []string
		// wantCheck names a check whose evidence must hold wantEvidence.
		wantCheck, wantEvidence string
	}{
		{
			// Rule BET-10 AMB-1: INSUFFICIENT_FUNDS as 402 is reading B, allowed.
			name:      "refusals as 4xx (AMB-1 reading B)",
			faults:    map[string]any{"*": map[string]any{"refusal_status": "4xx"}},
			wantCheck: "insufficient funds refused", wantEvidence: "HTTP 402 (AMB-1 reading B",
		},
		{
			// Rule WIN-10: the orphan's 404 moved to a 200 body; BAL-7 and
			// BET-9 stay within AMB-8 and AMB-1.
			name:      "refusals as 200",
			faults:    map[string]any{"*": map[string]any{"refusal_status": "200"}},
			wantRules: []string{"WIN-10"},
			wantCheck: "unknown token refused on /balance", wantEvidence: "AMB-8 reading B",
		},
		{
			// Rule BET-8 BET-3 BET-6 WERR-21: every bet answered 503, the
			// refusal for insufficient funds included.
			name:      "5xx on bet",
			faults:    map[string]any{"bet": map[string]any{"kind": "5xx"}},
			wantRules: []string{"BET-8", "BET-3", "BET-6", "WERR-21"},
			wantCheck: "win above stake credited, once", wantEvidence: "the bet this check builds on was not accepted",
		},
		{
			// Rule BET-8 ENV-12: the bet is committed, its answer lost.
			name:      "bet committed, 502 after",
			faults:    map[string]any{"bet": map[string]any{"kind": "5xx", "status": 502, "after": true}},
			wantRules: []string{"BET-8", "BET-3"},
		},
		{
			// Rule BET-8: the wallet never answers /bet.
			name:   "timeout on bet",
			faults: map[string]any{"bet": map[string]any{"kind": "timeout"}},
			// The timeout is every call's: 200 ms failed /balance beside
			// two CPU hogs, before any /bet.
			opts:      walletcheck.Options{Timeout: time.Second},
			wantRules: []string{"BET-8", "BET-3"},
			wantCheck: "bet replay: same answer, one debit", wantEvidence: "no answer (timeout)",
		},
		{
			// Rule BET-8: a retry refused as if it were a new decision.
			name:      "bet refused with an invented code",
			faults:    map[string]any{"bet": map[string]any{"kind": "refuse", "error_code": "NOT_TODAY"}},
			wantRules: []string{"BET-8", "BET-3", "BET-10"},
		},
		{
			// Rule WIN-13 WIN-14 WIN-15 WIN-11: wins refused.
			name:      "win refused",
			faults:    map[string]any{"win": map[string]any{"kind": "refuse", "error_code": "INTERNAL_ERROR"}},
			wantRules: []string{"WIN-13", "WIN-14", "WIN-15", "WIN-11"},
		},
		{
			// Rule WIN-10 WIN-13: every win answered 404 BET_NOT_FOUND, as if orphan.
			name:      "win refused 404",
			faults:    map[string]any{"win": map[string]any{"kind": "refuse", "error_code": "BET_NOT_FOUND", "status": 404}},
			wantRules: []string{"WIN-13", "WIN-11"},
		},
		{
			// Rule RB-13 RB-9 RB-12: rollbacks answered 5xx.
			name:      "5xx on rollback",
			faults:    map[string]any{"rollback": map[string]any{"kind": "5xx"}},
			wantRules: []string{"RB-13", "RB-9", "RB-12"},
		},
		{
			// Rule RB-13: a rollback of an unknown bet refused with an error the game retries.
			name:      "rollback refused",
			faults:    map[string]any{"rollback": map[string]any{"kind": "refuse"}},
			wantRules: []string{"RB-13", "RB-9"},
		},
		{
			// Rule BAL-8: the session cannot be resolved; the money checks are skipped.
			name:      "5xx on balance",
			faults:    map[string]any{"balance": map[string]any{"kind": "5xx"}},
			wantRules: []string{"BAL-8"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newSim(t)
			h.admin("/admin/faults/set", map[string]any{"faults": tc.faults})
			rep := run(t, h.target(), tc.opts)
			out := table(t, rep)
			t.Logf("\n%s", out)
			failed := rep.FailedRules()
			if len(tc.wantRules) == 0 && !rep.OK() {
				t.Fatalf("the battery failed, want a pass:\n%s", out)
			}
			if len(tc.wantRules) > 0 && rep.OK() {
				t.Fatalf("the battery passed, want failures of %v:\n%s", tc.wantRules, out)
			}
			for _, id := range tc.wantRules {
				if !slices.Contains(failed, id) {
					t.Errorf("failed rules %v lack %s:\n%s", failed, id, out)
				}
				if !strings.Contains(out, "failed rules:") || !strings.Contains(out, id) {
					t.Errorf("the summary does not name %s", id)
				}
			}
			if tc.wantCheck != "" {
				if c := checkNamed(t, rep, tc.wantCheck); !strings.Contains(c.Evidence, tc.wantEvidence) {
					t.Errorf("%s: evidence %q lacks %q", tc.wantCheck, c.Evidence, tc.wantEvidence)
				}
			}
			// Whatever failed, the battery gives back what it took once the
			// wallet works again, and its transactions are its own.
			// With rollbacks broken the cleanup cannot give back, and the
			// report says so.
			got := h.balance()
			switch {
			case strings.Contains(tc.name, "rollback"):
				restored := checkNamed(t, rep, "balance restored at the end")
				if got != testBalance && restored.Result != walletcheck.Fail {
					t.Errorf("balance %d after the run, yet the report says %s: %s", got, restored.Result, restored.Evidence)
				}
			case got != testBalance:
				t.Errorf("balance %d after the run, want %d:\n%s", got, testBalance, out)
			}
		})
	}
}

// answerBodiesWith wraps a wallet so that a wallet call whose body contains
// marker is answered with status and body instead, as a wallet with that bug
// would; the other calls pass on unchanged.
func answerBodiesWith(marker string, status int, body string) func(next http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			raw, _ := io.ReadAll(r.Body)
			if !strings.HasPrefix(r.URL.Path, "/admin/") && bytes.Contains(raw, []byte(marker)) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(status)
				_, _ = w.Write([]byte(body))
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(raw))
			next.ServeHTTP(w, r)
		})
	}
}

// The wallet's own mistakes that operator-sim cannot be told to make are
// played by small handlers in front of it: a parser that accepts only
// lowercase bearer, a verifier over re-encoded JSON, a wallet that debits
// freebets.
func TestBatteryFailsOnWalletBugs(t *testing.T) {
	type walletBug struct {
		name      string
		wrap      func(next http.Handler) http.Handler
		wantRules []string
	}
	cases := []walletBug{
		{
			// Rule AUTH-12: only lowercase bearer accepted.
			name: "lowercase-only bearer",
			wrap: func(next http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if a := r.Header.Get("Authorization"); strings.HasPrefix(a, "bearer ") {
						r.Header.Set("Authorization", "Bearer "+strings.TrimPrefix(a, "bearer "))
					} else if strings.HasPrefix(a, "Bearer ") && !strings.HasPrefix(r.URL.Path, "/admin/") {
						r.Header.Set("Authorization", "Bearer wrong")
					}
					next.ServeHTTP(w, r)
				})
			},
			wantRules: []string{"AUTH-12", "BAL-8"},
		},
		{
			// Rule AUTH-3: the signature checked over a compact re-encoding.
			name: "signature over re-encoded JSON",
			wrap: func(next http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					body, _ := io.ReadAll(r.Body)
					var buf bytes.Buffer
					if !strings.HasPrefix(r.URL.Path, "/admin/") && json.Compact(&buf, body) == nil {
						// Verify over the compact form, then hand on bytes that
						// carry the signature operator-sim expects.
						if signature.Sign([]byte(testSecret), buf.Bytes()) == r.Header.Get("X-Signature") {
							r.Header.Set("X-Signature", signature.Sign([]byte(testSecret), body))
						}
					}
					r.Body = io.NopCloser(bytes.NewReader(body))
					next.ServeHTTP(w, r)
				})
			},
			wantRules: []string{"AUTH-3"},
		},
		{
			// Rule LIM-1: no window on the timestamp.
			name: "no timestamp window",
			wrap: func(next http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					body, _ := io.ReadAll(r.Body)
					var m map[string]any
					if !strings.HasPrefix(r.URL.Path, "/admin/") && json.Unmarshal(body, &m) == nil &&
						signature.Sign([]byte(testSecret), body) == r.Header.Get("X-Signature") {
						if ts, ok := m["timestamp"].(float64); ok && time.Since(time.UnixMilli(int64(ts))) > 5*time.Minute {
							m["timestamp"] = time.Now().UnixMilli()
							body, _ = json.Marshal(m)
							r.Header.Set("X-Signature", signature.Sign([]byte(testSecret), body))
						}
					}
					r.Body = io.NopCloser(bytes.NewReader(body))
					r.ContentLength = int64(len(body))
					next.ServeHTTP(w, r)
				})
			},
			wantRules: []string{"LIM-1"},
		},
		{
			// A wallet whose decoder refuses unknown fields (a strict generated
			// server, or additionalProperties: false in its copy of the document).
			name: "unknown fields refused",
			wrap: answerBodiesWith(`"wallet_check_added_field"`, http.StatusForbidden,
				`{"status":"error","error_code":"INTERNAL_ERROR","error_message":"unexpected field"}`),
			wantRules: []string{"VER"},
		},
		{
			// A generated server's default error body for what it cannot
			// decode (ogen's), in place of the contract's.
			name:      "generator's own error body",
			wrap:      answerBodiesWith(`"currency":978`, http.StatusBadRequest, `{"error_message":"decode request: currency: unexpected number"}`),
			wantRules: []string{"WERR-2"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newSim(t, tc.wrap)
			rep := run(t, h.target(), walletcheck.Options{})
			out := table(t, rep)
			t.Logf("\n%s", out)
			failed := rep.FailedRules()
			for _, id := range tc.wantRules {
				if !slices.Contains(failed, id) {
					t.Errorf("failed rules %v lack %s:\n%s", failed, id, out)
				}
			}
		})
	}
}

// A target is refused before any request when it is incomplete or would
// send the key in clear; the error never quotes a value.
func TestValidate(t *testing.T) {
	good := walletcheck.Target{WalletURL: "https://wallet.example/api", Operator: "op", Secret: "s", APIKey: "k", Token: "t", Currency: "BRL"}
	cases := []struct {
		name   string
		mutate func(*walletcheck.Target)
		want   string // substring of the error; empty: valid
	}{
		{"valid", func(*walletcheck.Target) {}, ""},
		{"loopback http", func(t *walletcheck.Target) { t.WalletURL = "http://127.0.0.1:8081" }, ""},
		{"localhost http", func(t *walletcheck.Target) { t.WalletURL = "http://localhost:8081" }, ""},
		{"remote http", func(t *walletcheck.Target) { t.WalletURL = "http://wallet.example" }, "outside loopback"},
		{"no url", func(t *walletcheck.Target) { t.WalletURL = "" }, "wallet URL is required"},
		{"relative url", func(t *walletcheck.Target) { t.WalletURL = "/balance" }, "absolute"},
		{"no secret", func(t *walletcheck.Target) { t.Secret = "" }, "secret"},
		{"no key", func(t *walletcheck.Target) { t.APIKey = "" }, "API key"},
		{"no token", func(t *walletcheck.Target) { t.Token = "" }, "session token"},
		{"bad currency", func(t *walletcheck.Target) { t.Currency = "brl" }, "ISO 4217"},
		{"expired is live", func(t *walletcheck.Target) { t.ExpiredToken = t.Token }, "expired token"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			target := good
			tc.mutate(&target)
			err := target.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Validate: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("Validate: %v, want an error with %q", err, tc.want)
			}
			if err != nil && strings.Contains(err.Error(), "t\"") {
				t.Fatalf("the error quotes a value: %v", err)
			}
		})
	}
}

// The summary names the failed rules once each, and a failed check without
// rules by its name; JSON carries the same checks.
func TestReportSummary(t *testing.T) {
	before, after := int64(500), int64(400)
	rep := walletcheck.Report{
		WalletURL: "https://wallet.example", Operator: "op", RunID: "wc-x", Stake: 100,
		BalanceBefore: &before, BalanceAfter: &after,
		Checks: []walletcheck.Check{
			{Rules: []string{"BET-8", "ENV-12"}, Name: "a", Result: walletcheck.Fail, Evidence: "e1"},
			{Rules: []string{"RB-9", "ENV-12"}, Name: "b", Result: walletcheck.Fail, Evidence: "e2"},
			{Rules: []string{"AUTH-14"}, Name: "c", Result: walletcheck.Skip, Evidence: "e3"},
			{Name: "balance restored at the end", Result: walletcheck.Fail, Evidence: "e4"},
		},
		Failed: 3, Skipped: 1,
	}
	if got, want := rep.FailedRules(), []string{"BET-8", "ENV-12", "RB-9"}; !slices.Equal(got, want) {
		t.Errorf("FailedRules = %v, want %v", got, want)
	}
	want := "FAIL: 0 passed, 3 failed, 1 skipped; failed rules: BET-8 ENV-12 RB-9; failed: balance restored at the end; balance 500 -> 400"
	if got := rep.Summary(); got != want {
		t.Errorf("Summary =\n%s\nwant\n%s", got, want)
	}
	out := table(t, rep)
	if !strings.Contains(out, "AUTH-14      | c                           | SKIP   | e3\n") {
		t.Errorf("the table is not aligned:\n%s", out)
	}
	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back walletcheck.Report
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || len(back.Checks) != 4 || back.Checks[0].Result != walletcheck.Fail {
		t.Errorf("JSON round trip: %v %+v", err, back)
	}
}

// An invalid target is one failed check, not a panic or a request.
func TestRunRefusesAnInvalidTarget(t *testing.T) {
	rep := run(t, walletcheck.Target{}, walletcheck.Options{})
	if rep.OK() || len(rep.Checks) != 1 || rep.Checks[0].Name != "target" {
		t.Fatalf("report %+v", rep)
	}
}

// laxDecision is what a lax wallet does with one call: the zero value passes
// it on as it came.
type laxDecision struct {
	pass   map[string]any // the members to send on instead, re-signed
	answer bool           // answer ok after moving credit cents (0 moves nothing)
	credit int64
}

// laxWallet plays, in front of operator-sim, a wallet that does not validate
// request bodies: decide sees each signed wallet call's route, raw body and
// members (the last value of a repeated key, as encoding/json reads it) and
// passes it on, changed or not, or moves the test player's money through
// operator-sim's admin API and answers ok, as a wallet with that bug would.
func laxWallet(decide func(route string, raw []byte, m map[string]any) laxDecision) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			raw, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(raw))
			var m map[string]any
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.UseNumber()
			if strings.HasPrefix(r.URL.Path, "/admin/") || dec.Decode(&m) != nil ||
				signature.Sign([]byte(testSecret), raw) != r.Header.Get("X-Signature") {
				next.ServeHTTP(w, r)
				return
			}
			d := decide(r.URL.Path, raw, m)
			switch {
			case d.answer:
				moved := adminCall(next, "/admin/players/fund", map[string]any{"player_id": testPlayer, "amount": d.credit})
				balance := moved["player"].(map[string]any)["balance"]
				w.Header().Set("Content-Type", "application/json")
				_ = json.NewEncoder(w).Encode(map[string]any{"status": "ok", "balance": balance, "currency": "BRL"})
			case d.pass != nil:
				body, _ := json.Marshal(d.pass)
				r.Body = io.NopCloser(bytes.NewReader(body))
				r.ContentLength = int64(len(body))
				r.Header.Set("X-Signature", signature.Sign([]byte(testSecret), body))
				next.ServeHTTP(w, r)
			default:
				next.ServeHTTP(w, r)
			}
		})
	}
}

// adminCall calls operator-sim's signed admin API in process.
func adminCall(h http.Handler, path string, body map[string]any) map[string]any {
	body["timestamp"] = time.Now().UnixMilli()
	raw, _ := json.Marshal(body)
	req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(raw))
	req.Header.Set("X-Signature", signature.Sign([]byte(testSecret), raw))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var out map[string]any
	_ = json.Unmarshal(rec.Body.Bytes(), &out)
	return out
}

// amountOf reads a member as a whole number of cents the way a lax parser
// does: a JSON number (its fraction dropped) or a string of digits.
func amountOf(v any) (int64, bool) {
	switch x := v.(type) {
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return n, true
		}
		f, err := x.Float64()
		if err != nil || f > 1<<62 || f < -(1<<62) {
			return 0, false
		}
		return int64(f), true
	case string:
		n, err := strconv.ParseInt(x, 10, 64)
		return n, err == nil
	}
	return 0, false
}

// firstAmount is the first value of the key amount in the body, as written.
func firstAmount(raw []byte) (int64, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if _, err := dec.Token(); err != nil {
		return 0, false
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return 0, false
		}
		var v any
		if dec.Decode(&v) != nil {
			return 0, false
		}
		if key == "amount" {
			return amountOf(v)
		}
	}
	return 0, false
}

// Each wallet below breaks one rule that a hostile probe sends; the run fails
// exactly the checks named (the balance check too where the bug kept money),
// and the evidence says how much moved. Operator-sim refuses every probe, so
// each failure comes from the bug alone.
func TestBatteryFailsOnHostileProbes(t *testing.T) {
	type ledgerSeen struct {
		sync.Mutex
		amounts map[string]int64 // by transaction_id, the first amount seen
	}
	cases := []struct {
		name string
		// wallet returns the wrapper; each case gets a fresh one.
		wallet func() func(http.Handler) http.Handler
		// wantFailed are the names of the checks that must fail, and only they.
		wantFailed []string
		// wantEvidence must appear in the first check's evidence.
		wantEvidence string
	}{
		{
			// Rule GEN-6 WERR-2 BET-12: balance -= amount, with a negative
			// amount; the duplicate key read last is the same bug.
			name: "credits a negative bet",
			wallet: func() func(http.Handler) http.Handler {
				return laxWallet(func(route string, _ []byte, m map[string]any) laxDecision {
					if n, ok := amountOf(m["amount"]); route == "/bet" && ok && n < 0 {
						return laxDecision{answer: true, credit: -n}
					}
					return laxDecision{}
				})
			},
			wantFailed:   []string{"negative bet refused", "bet with a duplicate amount key never credits", "balance restored at the end"},
			wantEvidence: "MONEY MOVED (GEN-6): the wallet credited 100 cents on a negative bet; fix: validate every request body",
		},
		{
			// Rule BET-4 WIN-17: freebet_id missing read as null.
			name: "accepts a missing freebet_id",
			wallet: func() func(http.Handler) http.Handler {
				return laxWallet(func(route string, _ []byte, m map[string]any) laxDecision {
					if _, has := m["freebet_id"]; (route == "/bet" || route == "/win") && !has {
						m["freebet_id"] = nil
						return laxDecision{pass: m}
					}
					return laxDecision{}
				})
			},
			wantFailed:   []string{"bet without freebet_id refused", "win without freebet_id refused"},
			wantEvidence: "was accepted: BET-4 asks a refusal",
		},
		{
			// Rule GEN-4 GEN-5: "100" and 100.5 read as 100.
			name: "reads amounts loosely",
			wallet: func() func(http.Handler) http.Handler {
				return laxWallet(func(_ string, _ []byte, m map[string]any) laxDecision {
					_, isString := m["amount"].(string)
					if n, ok := amountOf(m["amount"]); ok && (isString || fmt.Sprint(m["amount"]) != strconv.FormatInt(n, 10)) {
						m["amount"] = n
						return laxDecision{pass: m}
					}
					return laxDecision{}
				})
			},
			wantFailed:   []string{"bet amount as a string refused", "bet amount with a fraction refused", "win amount with a fraction refused"},
			wantEvidence: "MONEY MOVED (GEN-4): the wallet debited 100 cents on a bet of amount \"100\"",
		},
		{
			// Rule WERR-13: the currency is not compared with the account's.
			name: "ignores the currency",
			wallet: func() func(http.Handler) http.Handler {
				return laxWallet(func(route string, _ []byte, m map[string]any) laxDecision {
					if route != "/balance" && m["currency"] != "BRL" {
						m["currency"] = "BRL"
						return laxDecision{pass: m}
					}
					return laxDecision{}
				})
			},
			wantFailed:   []string{"bet in another currency refused", "win in another currency refused"},
			wantEvidence: "MONEY MOVED (WERR-13): the wallet debited 100 cents on a bet in XTS",
		},
		{
			// Rule GEN-2 WERR-2: the validator reads the first amount, the
			// ledger the last (a parser differential).
			name: "validates one duplicate key, books the other",
			wallet: func() func(http.Handler) http.Handler {
				return laxWallet(func(route string, raw []byte, m map[string]any) laxDecision {
					first, ok := firstAmount(raw)
					last, _ := amountOf(m["amount"])
					if route == "/bet" && ok && first >= 0 && last < 0 {
						return laxDecision{answer: true, credit: -last}
					}
					return laxDecision{}
				})
			},
			wantFailed:   []string{"bet with a duplicate amount key never credits", "balance restored at the end"},
			wantEvidence: "MONEY MOVED (GEN-2 WERR-2): the wallet credited 100 cents on a bet with \"amount\":100 then \"amount\":-100",
		},
		{
			// Rule WIN-10: a win on a debit it does not hold is paid anyway.
			name: "settles a bet it never saw",
			wallet: func() func(http.Handler) http.Handler {
				var mu sync.Mutex
				open := map[string]bool{}
				return laxWallet(func(route string, _ []byte, m map[string]any) laxDecision {
					mu.Lock()
					defer mu.Unlock()
					tx, _ := m["transaction_id"].(string)
					bet, _ := m["bet_id"].(string)
					switch route {
					case "/bet":
						open[tx] = true
					case "/rollback":
						delete(open, bet)
					case "/win":
						if n, ok := amountOf(m["amount"]); ok && n > 0 && !open[bet] {
							return laxDecision{answer: true, credit: n}
						}
					}
					return laxDecision{}
				})
			},
			wantFailed: []string{"orphan win refused with 404", "win on a rolled-back bet refused",
				"second settlement: rollback then win", "balance restored at the end"},
			wantEvidence: "the orphan win was credited",
		},
		{
			// Rule ENV-12 WERR-17 BET-9 RB-8: a transaction_id repeated with
			// another amount is booked as a new movement.
			name: "books a repeated transaction_id with another amount",
			wallet: func() func(http.Handler) http.Handler {
				seen := &ledgerSeen{amounts: map[string]int64{}}
				return laxWallet(func(route string, _ []byte, m map[string]any) laxDecision {
					seen.Lock()
					defer seen.Unlock()
					tx, _ := m["transaction_id"].(string)
					n, ok := amountOf(m["amount"])
					if route == "/balance" || !ok {
						return laxDecision{}
					}
					first, repeated := seen.amounts[route+tx]
					if !repeated {
						seen.amounts[route+tx] = n
						return laxDecision{}
					}
					if first == n {
						return laxDecision{}
					}
					if route == "/win" {
						return laxDecision{answer: true, credit: n}
					}
					m["transaction_id"] = tx + "-again"
					return laxDecision{pass: m}
				})
			},
			wantFailed: []string{"divergent duplicate bet refused", "rollback retried with another amount refused",
				"win repeated with another amount credits once", "balance restored at the end"},
			wantEvidence: "the divergent bet was accepted",
		},
		{
			// Rule RB-9 RB-10: a rollback reverts the amount it declares, not
			// the debit's.
			name: "reverts the declared amount",
			wallet: func() func(http.Handler) http.Handler {
				seen := &ledgerSeen{amounts: map[string]int64{}}
				return laxWallet(func(route string, _ []byte, m map[string]any) laxDecision {
					seen.Lock()
					defer seen.Unlock()
					n, ok := amountOf(m["amount"])
					switch {
					case !ok:
					case route == "/bet":
						tx, _ := m["transaction_id"].(string)
						if _, has := seen.amounts[tx]; !has {
							seen.amounts[tx] = n
						}
					case route == "/rollback":
						bet, _ := m["bet_id"].(string)
						if debit, has := seen.amounts[bet]; has && debit != n {
							delete(seen.amounts, bet)
							return laxDecision{answer: true, credit: n}
						}
					}
					return laxDecision{}
				})
			},
			wantFailed: []string{"rollback declaring more than the debit", "negative rollback returns no more than the debit",
				"rollback of zero returns no more than the debit", "rollback retried with another amount refused", "balance restored at the end"},
			wantEvidence: "a rollback returned more than was taken (RB-10)",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newSim(t, tc.wallet())
			rep := run(t, h.target(), walletcheck.Options{})
			out := table(t, rep)
			var failed []string
			for _, c := range rep.Checks {
				if c.Result == walletcheck.Fail {
					failed = append(failed, c.Name)
				}
			}
			slices.Sort(failed)
			want := slices.Sorted(slices.Values(tc.wantFailed))
			if !slices.Equal(failed, want) {
				t.Errorf("failed checks %q, want %q:\n%s", failed, want, out)
			}
			if c := checkNamed(t, rep, tc.wantFailed[0]); !strings.Contains(c.Evidence, tc.wantEvidence) {
				t.Errorf("%s: evidence %q lacks %q", c.Name, c.Evidence, tc.wantEvidence)
			}
			if !strings.Contains(rep.Summary(), "FAIL: ") {
				t.Errorf("summary %q", rep.Summary())
			}
		})
	}
}
