package wallet

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/internal/logtest"
	"github.com/crashstudio/crashgame/internal/secret"
	"github.com/crashstudio/crashgame/internal/signature"
)

// Rule AUTH-1 AUTH-2 AUTH-3 AUTH-4: X-Signature is the lowercase hex HMAC of
// exactly the bytes received, and the timestamp it covers is inside the body.
func TestSignatureOverSentBytes(t *testing.T) {
	t.Parallel()
	f := newFakeOperator(t, nil)
	c := newTestClient(t, f.srv.URL)
	for _, route := range allRoutes {
		t.Run(string(route), func(t *testing.T) {
			if res, err := call(t, c, route); err != nil {
				t.Fatalf("%s: %v (%+v)", route, err, res)
			}
		})
	}
	for _, r := range f.requests() {
		sig := r.Header.Get(SignatureHeader)
		if err := signature.VerifyRequest([]byte(testSecret), r.Body, sig, time.Now()); err != nil {
			t.Errorf("%s: signature does not verify over the received bytes: %v", r.Path, err)
		}
		if want := signature.Sign([]byte(testSecret), r.Body); sig != want {
			t.Errorf("%s: X-Signature is not the HMAC of the received bytes", r.Path)
		}
		if len(r.Header.Values(SignatureHeader)) != 1 {
			t.Errorf("%s: %d X-Signature headers, want 1", r.Path, len(r.Header.Values(SignatureHeader)))
		}
	}
	if len(f.requests()) != len(allRoutes) {
		t.Fatalf("operator received %d requests, want %d", len(f.requests()), len(allRoutes))
	}
}

// Rule AUTH-5 AUTH-11 AUTH-13: "Bearer", one space, the raw key, whatever the
// key holds.
func TestAuthorizationHeader(t *testing.T) {
	t.Parallel()
	keys := []string{
		testKey,
		"short",
		`k+/=%~!$&'()*,;:@[]{}|^"quoted"`,
		"with inner spaces and\ttab",
		"ключ-clé-鍵",
		"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl==",
	}
	for _, key := range keys {
		t.Run(key, func(t *testing.T) {
			t.Parallel()
			f := newFakeOperator(t, nil)
			op := testOperatorConfig(f.srv.URL)
			op.APIKey = secret.Secret(key)
			c, err := NewClient(op, WithLogger(discardLogger()))
			if err != nil {
				t.Fatalf("NewClient: %v", err)
			}
			for _, route := range allRoutes {
				if _, err := call(t, c, route); err != nil {
					t.Fatalf("%s: %v", route, err)
				}
			}
			for _, r := range f.requests() {
				if got := r.Header.Values(AuthorizationHeader); len(got) != 1 || got[0] != "Bearer "+key {
					t.Fatalf("%s: Authorization = %q, want exactly %q", r.Path, got, "Bearer "+key)
				}
			}
		})
	}
}

// Rule AUTH-8: with no secret configured, no X-Signature is sent.
func TestNoSecretNoSignature(t *testing.T) {
	t.Parallel()
	f := newFakeOperator(t, nil)
	op := testOperatorConfig(f.srv.URL)
	op.Secret = ""
	c, err := NewClient(op, WithLogger(discardLogger()))
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	for _, route := range allRoutes {
		if _, err := call(t, c, route); err != nil {
			t.Fatalf("%s: %v", route, err)
		}
	}
	for _, r := range f.requests() {
		if _, ok := r.Header[SignatureHeader]; ok {
			t.Fatalf("%s: X-Signature sent without a secret", r.Path)
		}
		if r.Header.Get(AuthorizationHeader) != "Bearer "+testKey {
			t.Fatalf("%s: Authorization missing", r.Path)
		}
	}
}

// Rule ENV-1 ENV-2 ENV-3 ENV-7 ENV-8 AMB-15: every request carries operator,
// timestamp in ms, request_id, currency, and game_id when the game is known.
func TestEnvelope(t *testing.T) {
	t.Parallel()
	f := newFakeOperator(t, nil)
	now := time.UnixMilli(1795000045123)
	c := newTestClient(t, f.srv.URL, WithClock(func() time.Time { return now }))
	for _, route := range allRoutes {
		res, err := call(t, c, route)
		if err != nil {
			t.Fatalf("%s: %v", route, err)
		}
		m := fields(t, f.last().Body)
		var env struct {
			Operator  string `json:"operator"`
			Timestamp int64  `json:"timestamp"`
			RequestID string `json:"request_id"`
			Currency  string `json:"currency"`
			GameID    string `json:"game_id"`
		}
		if err := json.Unmarshal(f.last().Body, &env); err != nil {
			t.Fatal(err)
		}
		if env.Operator != testOperator || env.Timestamp != 1795000045123 || env.RequestID == "" ||
			env.Currency != "BRL" || env.GameID != "crash-classic" {
			t.Fatalf("%s: envelope %+v", route, env)
		}
		if string(m["timestamp"]) != "1795000045123" {
			t.Fatalf("%s: timestamp written as %s, want integer milliseconds", route, m["timestamp"])
		}
		if res.RequestID != env.RequestID || res.Timestamp != env.Timestamp {
			t.Fatalf("%s: result names attempt %s@%d, body %s@%d", route, res.RequestID, res.Timestamp, env.RequestID, env.Timestamp)
		}
	}
	// Rule ENV-8: no game known, no game_id member.
	bal := sampleBalance()
	bal.GameID = ""
	if _, err := c.Balance(t.Context(), bal); err != nil {
		t.Fatal(err)
	}
	if _, ok := fields(t, f.last().Body)["game_id"]; ok {
		t.Fatalf("game_id sent while unknown: %s", f.last().Body)
	}
}

// Rule ENV-4 ENV-5 ENV-11 LIM-2: each attempt of one movement has a new
// request_id and a new timestamp and the same transaction_id.
func TestEachAttemptIsNamedAnew(t *testing.T) {
	t.Parallel()
	f := newFakeOperator(t, reply(503, `{"status":"error","error_code":"INTERNAL_ERROR"}`))
	c := newTestClient(t, f.srv.URL, WithClock(steppingClock()),
		WithBreaker(BreakerSettings{ConsecutiveFailures: MaxAttempts + 1, MinRequests: MaxAttempts + 1}))
	for range MaxAttempts {
		if res, _ := c.Win(t.Context(), sampleWin()); res.Outcome != Temporary {
			t.Fatalf("outcome %s, want temporary", res.Outcome)
		}
	}
	ids, stamps := map[string]bool{}, map[int64]bool{}
	for _, r := range f.requests() {
		var b struct {
			RequestID     string `json:"request_id"`
			Timestamp     int64  `json:"timestamp"`
			TransactionID string `json:"transaction_id"`
		}
		if err := json.Unmarshal(r.Body, &b); err != nil {
			t.Fatal(err)
		}
		if b.TransactionID != sampleWin().TransactionID {
			t.Fatalf("transaction_id changed: %s", b.TransactionID)
		}
		ids[b.RequestID], stamps[b.Timestamp] = true, true
	}
	if len(f.requests()) != MaxAttempts || len(ids) != MaxAttempts || len(stamps) != MaxAttempts {
		t.Fatalf("%d attempts with %d request_ids and %d timestamps, want %d of each",
			len(f.requests()), len(ids), len(stamps), MaxAttempts)
	}
}

// Rule BAL-1 BET-1 BET-4 BET-7 WIN-1 WIN-2 WIN-17 RB-1 RB-6 ENV-9 ENV-10
// ENV-15 ENV-16 AMB-16: the members of each body, freebet_id null on an
// ordinary bet and win, absent from rollback; no player_id on /balance.
func TestBodies(t *testing.T) {
	t.Parallel()
	f := newFakeOperator(t, nil)
	c := newTestClient(t, f.srv.URL)
	env := []string{"operator", "timestamp", "request_id", "currency", "game_id"}
	freebet := sampleBet()
	freebet.FreebetID = ptr("spring-2026-0042#3")
	freebetWin := sampleWin()
	freebetWin.Type, freebetWin.FreebetID = WinTypeFreebet, ptr("spring-2026-0042#3")
	zeroWin := sampleWin()
	zeroWin.Type, zeroWin.Amount = WinTypeZeroWin, 0
	tests := []struct {
		name    string
		send    func(context.Context) (Result, error)
		members []string
		want    map[string]string // member -> exact JSON value
	}{
		{"balance", func(ctx context.Context) (Result, error) { return c.Balance(ctx, sampleBalance()) },
			[]string{"token"}, map[string]string{"token": `"` + testToken + `"`}},
		{"ordinary bet", func(ctx context.Context) (Result, error) { return c.Bet(ctx, sampleBet()) },
			[]string{"player_id", "token", "amount", "transaction_id", "round_id", "freebet_id"},
			map[string]string{"freebet_id": "null", "amount": "1000", "player_id": `"` + testPlayer + `"`}},
		{"freebet bet", func(ctx context.Context) (Result, error) { return c.Bet(ctx, freebet) },
			[]string{"player_id", "token", "amount", "transaction_id", "round_id", "freebet_id"},
			map[string]string{"freebet_id": `"spring-2026-0042#3"`, "amount": "1000"}},
		{"ordinary win", func(ctx context.Context) (Result, error) { return c.Win(ctx, sampleWin()) },
			[]string{"player_id", "token", "amount", "transaction_id", "bet_id", "round_id", "type", "freebet_id"},
			map[string]string{"freebet_id": "null", "type": `"win"`, "bet_id": `"bet-5c2a1d7e"`, "amount": "2350"}},
		{"freebet win", func(ctx context.Context) (Result, error) { return c.Win(ctx, freebetWin) },
			[]string{"player_id", "token", "amount", "transaction_id", "bet_id", "round_id", "type", "freebet_id"},
			map[string]string{"freebet_id": `"spring-2026-0042#3"`, "type": `"freebet"`}},
		{"zero win", func(ctx context.Context) (Result, error) { return c.Win(ctx, zeroWin) },
			[]string{"player_id", "token", "amount", "transaction_id", "bet_id", "round_id", "type", "freebet_id"},
			map[string]string{"freebet_id": "null", "type": `"zero_win"`, "amount": "0"}},
		{"rollback", func(ctx context.Context) (Result, error) { return c.Rollback(ctx, sampleRollback()) },
			[]string{"player_id", "token", "amount", "transaction_id", "bet_id", "round_id", "reason"},
			map[string]string{"amount": "1000", "bet_id": `"bet-5c2a1d7e"`, "reason": `"cancelled_by_player"`}},
	}
	for _, tt := range tests {
		if _, err := tt.send(t.Context()); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		m := fields(t, f.last().Body)
		var got []string
		for k := range m {
			got = append(got, k)
		}
		want := append(slices.Clone(env), tt.members...)
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s: members %v, want %v", tt.name, got, want)
		}
		for k, v := range tt.want {
			if string(m[k]) != v {
				t.Errorf("%s: %s = %s, want %s", tt.name, k, m[k], v)
			}
		}
	}
}

// Rule WERR-3 WERR-4 WERR-6 WERR-8 WERR-9 WERR-10 WERR-11 WERR-12 WERR-13
// WERR-14 WERR-15 WERR-16 WERR-17 WERR-18 WERR-20 WIN-12 BAL-7 AMB-1 AMB-3
// AMB-8 AMB-9 AMB-10: the classification table, answered over HTTP.
func TestClassifyOverHTTP(t *testing.T) {
	t.Parallel()
	cases := classificationCases()
	byName := map[string]classCase{}
	for _, tc := range cases {
		byName[tc.name] = tc
	}
	f := newFakeOperator(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		tc := byName[r.Header.Get("X-Test-Case")]
		ct := tc.ctype
		if ct == "" {
			ct = "application/json"
		}
		w.Header().Set("Content-Type", ct)
		w.WriteHeader(tc.status)
		_, _ = io.WriteString(w, tc.body)
	})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			hc := &http.Client{Transport: headerTransport{name: tc.name}, Timeout: 5 * time.Second}
			// A breaker per case: the 5xx rows must not open it for the others.
			c := newTestClient(t, f.srv.URL, WithHTTPClient(hc))
			res, err := call(t, c, tc.route)
			if res.Outcome != tc.outcome || res.Reason != tc.reason || res.ErrorCode != tc.code || res.HTTPStatus != tc.status {
				t.Fatalf("got %s/%s/%q HTTP %d, want %s/%s/%q HTTP %d (err %v)",
					res.Outcome, res.Reason, res.ErrorCode, res.HTTPStatus, tc.outcome, tc.reason, tc.code, tc.status, err)
			}
			checkErr(t, res, err)
		})
	}
}

// headerTransport names the table row in a header so that one fake answers all.
type headerTransport struct{ name string }

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Test-Case", h.name)
	return http.DefaultTransport.RoundTrip(r)
}

// checkErr: err is nil exactly on Success, and wraps ErrRefused or
// ErrTemporary otherwise; it never holds the operator's message (AUTH-18).
func checkErr(t *testing.T, res Result, err error) {
	t.Helper()
	switch res.Outcome {
	case Success:
		if err != nil {
			t.Fatalf("success with error %v", err)
		}
	case Refused:
		if !errors.Is(err, ErrRefused) || errors.Is(err, ErrTemporary) {
			t.Fatalf("refusal error %v does not wrap ErrRefused alone", err)
		}
	default:
		if !errors.Is(err, ErrTemporary) || errors.Is(err, ErrRefused) {
			t.Fatalf("temporary error %v does not wrap ErrTemporary alone", err)
		}
	}
	if err != nil && res.ErrorMessage != "" && strings.Contains(err.Error(), res.ErrorMessage) {
		t.Fatalf("error %q holds the operator's message", err)
	}
}

// Rule WERR-20 LIM-2: no answer at all is temporary and retried: a timeout, a
// refused connection, a cut connection, an oversized answer, a redirect.
func TestTransportFailures(t *testing.T) {
	t.Parallel()
	slow := newFakeOperator(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL
	closed.Close()
	cut := newFakeOperator(t, func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		w.Header().Set("Content-Length", "100")
		w.WriteHeader(200)
		_, _ = io.WriteString(w, `{"status":"ok",`)
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	})
	huge := newFakeOperator(t, func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"status":"ok","balance":1,"pad":"`+strings.Repeat("x", MaxAnswerBytes)+`"}`)
	})
	target := newFakeOperator(t, nil)
	redirect := newFakeOperator(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		http.Redirect(w, r, target.srv.URL+r.URL.Path, http.StatusTemporaryRedirect)
	})
	tests := []struct {
		name   string
		url    string
		hc     *http.Client
		reason string
		status int
	}{
		{"timeout", slow.srv.URL, &http.Client{Timeout: 50 * time.Millisecond}, ReasonTimeout, 0},
		{"connection refused", closedURL, nil, ReasonTransport, 0},
		{"connection cut mid-answer", cut.srv.URL, nil, ReasonTransport, 200},
		{"answer too large", huge.srv.URL, nil, ReasonUnparsable, 200},
		{"redirect not followed", redirect.srv.URL, nil, ReasonUnparsable, 307},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var opts []Option
			if tt.hc != nil {
				opts = append(opts, WithHTTPClient(tt.hc))
			}
			c := newTestClient(t, tt.url, opts...)
			res, err := c.Bet(t.Context(), sampleBet())
			if res.Outcome != Temporary || res.Reason != tt.reason || res.HTTPStatus != tt.status {
				t.Fatalf("got %s/%s HTTP %d, want temporary/%s HTTP %d (err %v)", res.Outcome, res.Reason, res.HTTPStatus, tt.reason, tt.status, err)
			}
			checkErr(t, res, err)
			if res.RequestID == "" {
				t.Fatal("no request_id on a failed attempt")
			}
		})
	}
	if n := target.hits.Load(); n != 0 {
		t.Fatalf("the redirect was followed: %d requests reached its target", n)
	}
}

// A caller that gives up ends the attempt at once; it is temporary.
func TestCallerCancels(t *testing.T) {
	t.Parallel()
	f := newFakeOperator(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		<-r.Context().Done()
	})
	c := newTestClient(t, f.srv.URL)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Millisecond)
	defer cancel()
	res, err := c.Bet(ctx, sampleBet())
	if res.Outcome != Temporary || res.Reason != ReasonCanceled || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %s/%s %v, want temporary/canceled wrapping the context's error", res.Outcome, res.Reason, err)
	}
}

// Rule AUTH-16 AUTH-18: one line per attempt; INVALID_SIGNATURE at ERROR as our
// own configuration; the operator's message only in the log; never a token,
// key, secret, signature or player id.
func TestLogs(t *testing.T) {
	t.Parallel()
	var buf logtest.Buffer
	logger := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	var signatures []string
	var mu sync.Mutex
	answers := []string{
		`{"status":"ok","balance":1}`,
		`{"status":"error","error_code":"INSUFFICIENT_FUNDS","error_message":"balance 500 below stake 1000","balance":500}`,
		`{"status":"error","error_code":"INVALID_SIGNATURE","error_message":"signature mismatch"}`,
		`{"status":"error","error_code":"INTERNAL_ERROR","error_message":"ledger timeout"}`,
	}
	statuses := []int{200, 200, 401, 200}
	var n int
	f := newFakeOperator(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		mu.Lock()
		signatures = append(signatures, r.Header.Get(SignatureHeader))
		i := n % len(answers)
		n++
		mu.Unlock()
		reply(statuses[i], answers[i])(w, r, nil)
	})
	c := newTestClient(t, f.srv.URL, WithLogger(logger))
	for range answers {
		_, _ = c.Bet(t.Context(), sampleBet())
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	var attempts []map[string]any
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line is not JSON: %s", l)
		}
		if m["route"] != nil {
			attempts = append(attempts, m)
		}
	}
	if len(attempts) != len(answers) {
		t.Fatalf("%d attempt lines, want %d:\n%s", len(attempts), len(answers), buf.String())
	}
	wantLevels := []string{"DEBUG", "INFO", "ERROR", "WARN"}
	for i, m := range attempts {
		if m["level"] != wantLevels[i] {
			t.Errorf("attempt %d logged at %v, want %s: %v", i, m["level"], wantLevels[i], m)
		}
		for _, k := range []string{"operator", "route", "request_id", "transaction_id", "outcome", "http_status", "duration"} {
			if _, ok := m[k]; !ok {
				t.Errorf("attempt %d: no %s in %v", i, k, m)
			}
		}
	}
	if attempts[1]["error_message"] != "balance 500 below stake 1000" {
		t.Errorf("the operator's message is not in the log: %v", attempts[1])
	}
	out := buf.String()
	forbidden := []string{testToken, testKey, testSecret, testPlayer}
	mu.Lock()
	forbidden = append(forbidden, signatures...)
	mu.Unlock()
	for _, s := range forbidden {
		if s != "" && strings.Contains(out, s) {
			t.Errorf("log holds a secret value %q:\n%s", s[:4]+"…", out)
		}
	}
}

// Calls that break the contract are not sent; they are temporary so that
// nothing is ever taken as refused by the operator.
func TestInvalidCalls(t *testing.T) {
	t.Parallel()
	f := newFakeOperator(t, nil)
	c := newTestClient(t, f.srv.URL)
	ctx := t.Context()
	mod := func(fn func(*BetCall)) BetCall { b := sampleBet(); fn(&b); return b }
	tests := []struct {
		name string
		send func() (Result, error)
	}{
		{"balance without token", func() (Result, error) { return c.Balance(ctx, BalanceCall{Currency: "BRL"}) }},
		{"balance without currency", func() (Result, error) { return c.Balance(ctx, BalanceCall{Token: testToken}) }},
		{"currency in lower case", func() (Result, error) { return c.Bet(ctx, mod(func(b *BetCall) { b.Currency = "brl" })) }},
		{"negative amount", func() (Result, error) { return c.Bet(ctx, mod(func(b *BetCall) { b.Amount = -1 })) }},
		{"no transaction_id", func() (Result, error) { return c.Bet(ctx, mod(func(b *BetCall) { b.TransactionID = "" })) }},
		{"no player_id", func() (Result, error) { return c.Bet(ctx, mod(func(b *BetCall) { b.PlayerID = "" })) }},
		{"no round_id", func() (Result, error) { return c.Bet(ctx, mod(func(b *BetCall) { b.RoundID = "" })) }},
		{"empty freebet_id", func() (Result, error) { return c.Bet(ctx, mod(func(b *BetCall) { b.FreebetID = ptr("") })) }},
		{"win without bet_id", func() (Result, error) { w := sampleWin(); w.BetID = ""; return c.Win(ctx, w) }},
		{"win of unknown type", func() (Result, error) { w := sampleWin(); w.Type = "jackpot"; return c.Win(ctx, w) }},
		{"win without type", func() (Result, error) { w := sampleWin(); w.Type = ""; return c.Win(ctx, w) }},
		{"rollback without bet_id", func() (Result, error) { r := sampleRollback(); r.BetID = ""; return c.Rollback(ctx, r) }},
	}
	for _, tt := range tests {
		res, err := tt.send()
		if res.Outcome != Temporary || res.Reason != ReasonInvalidCall || !errors.Is(err, ErrInvalidCall) || !errors.Is(err, ErrTemporary) {
			t.Errorf("%s: %s/%s %v, want temporary invalid call", tt.name, res.Outcome, res.Reason, err)
		}
	}
	if n := f.hits.Load(); n != 0 {
		t.Fatalf("%d invalid calls reached the operator", n)
	}
}

func TestNewClientRefuses(t *testing.T) {
	t.Parallel()
	base := func() Settings { return testOperatorConfig("https://wallet.example/crash") }
	tests := []struct {
		name string
		op   func() Settings
	}{
		{"no wallet URL", func() Settings { o := base(); o.URL = ""; return o }},
		{"relative wallet URL", func() Settings { o := base(); o.URL = "wallet.example/crash"; return o }},
		{"ftp wallet URL", func() Settings { o := base(); o.URL = "ftp://wallet.example"; return o }},
		{"no API key", func() Settings { o := base(); o.APIKey = ""; return o }},
		{"API key with a newline", func() Settings { o := base(); o.APIKey = "secret-part\r\nX-Evil: 1"; return o }},
	}
	for _, tt := range tests {
		_, err := NewClient(tt.op(), WithLogger(discardLogger()))
		if err == nil {
			t.Errorf("%s: accepted", tt.name)
			continue
		}
		if strings.Contains(err.Error(), "secret-part") || strings.Contains(err.Error(), testSecret) {
			t.Errorf("%s: error shows a credential: %v", tt.name, err)
		}
	}
}

// Rule VER-2: routes sit under the wallet URL, path prefix included.
func TestWalletURLWithPrefix(t *testing.T) {
	t.Parallel()
	f := newFakeOperator(t, nil)
	front := httptest.NewServer(http.StripPrefix("/crash", proxyTo(f.srv.URL)))
	t.Cleanup(front.Close)
	c := newTestClient(t, front.URL+"/crash")
	for _, route := range allRoutes {
		if _, err := call(t, c, route); err != nil {
			t.Fatalf("%s: %v", route, err)
		}
		if got := f.last().Path; got != string(route) {
			t.Fatalf("path %s, want %s under the prefix", got, route)
		}
	}
}

func proxyTo(url string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		out, _ := http.NewRequestWithContext(r.Context(), r.Method, url+r.URL.Path, r.Body)
		out.Header = r.Header.Clone()
		resp, err := http.DefaultClient.Do(out)
		if err != nil {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		defer func() { _ = resp.Body.Close() }()
		w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
	})
}

// Many attempts at once through one Client (run with -race).
func TestConcurrentAttempts(t *testing.T) {
	t.Parallel()
	f := newFakeOperator(t, nil)
	c := newTestClient(t, f.srv.URL)
	var wg sync.WaitGroup
	ids := make([]string, 64)
	for i := range ids {
		wg.Go(func() {
			res, err := c.Bet(t.Context(), sampleBet())
			if err != nil {
				t.Errorf("attempt %d: %v", i, err)
			}
			ids[i] = res.RequestID
		})
	}
	wg.Wait()
	slices.Sort(ids)
	if len(slices.Compact(ids)) != len(ids) {
		t.Fatal("two concurrent attempts shared a request_id")
	}
}

type recordedAttempt struct {
	route   Route
	outcome Outcome
}

type recordingMetrics struct {
	mu       sync.Mutex
	attempts []recordedAttempt
	rejected int
	states   []BreakerState
}

func (m *recordingMetrics) Attempt(_ string, r Route, o Outcome, _ time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.attempts = append(m.attempts, recordedAttempt{r, o})
}

func (m *recordingMetrics) BreakerRejected(string, Route) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rejected++
}

func (m *recordingMetrics) BreakerState(_ string, s BreakerState) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.states = append(m.states, s)
}

func TestMetrics(t *testing.T) {
	t.Parallel()
	f := newFakeOperator(t, reply(200, errBody(CodeInsufficientFunds)))
	m := &recordingMetrics{}
	c := newTestClient(t, f.srv.URL, WithMetrics(m), WithBreaker(BreakerSettings{ConsecutiveFailures: 1}))
	_, _ = c.Bet(t.Context(), sampleBet())
	f.setReply(nil)
	_, _ = c.Win(t.Context(), sampleWin())
	f.setReply(reply(500, ``))
	_, _ = c.Rollback(t.Context(), sampleRollback())
	_, _ = c.Rollback(t.Context(), sampleRollback()) // rejected: the breaker opened
	m.mu.Lock()
	defer m.mu.Unlock()
	want := []recordedAttempt{{RouteBet, Refused}, {RouteWin, Success}, {RouteRollback, Temporary}}
	if !slices.Equal(m.attempts, want) || m.rejected != 1 {
		t.Fatalf("attempts %v rejected %d, want %v and 1", m.attempts, m.rejected, want)
	}
	if !slices.Equal(m.states, []BreakerState{BreakerStateClosed, BreakerStateOpen}) {
		t.Fatalf("breaker states %v", m.states)
	}
}
