package operatorapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/integration/pgtest"
	"github.com/crashstudio/crashgame/internal/apitest"
	"github.com/crashstudio/crashgame/internal/backoffice"
	"github.com/crashstudio/crashgame/internal/launch"
	"github.com/crashstudio/crashgame/internal/operatorapi"
	"github.com/crashstudio/crashgame/internal/server"
	"github.com/crashstudio/crashgame/internal/signature"
	"github.com/crashstudio/crashgame/internal/store"
	"github.com/crashstudio/crashgame/internal/store/storetest"
	"github.com/crashstudio/crashgame/internal/tickets"
)

const (
	acmeSecret  = "acme-secret-0123456789abcdef"
	otherSecret = "someone-else-0123456789abcdef"
)

// The installation under test. Its default language is pt, so a fallback to the
// default is told apart from a fallback to en (LANG-4).
var installation = launch.Installation{
	BaseURL:   "https://games.test.example/crash",
	Languages: []string{"pt", "en", "es"}, DefaultLanguage: "pt",
	Games: []launch.Game{
		{ID: "crash", Name: "Crash", Studio: "Test Studio", Category: "crash", ImageURL: "https://games.test.example/crash.png",
			Demo: true, Freebet: true, Mobile: true, Desktop: true},
		{ID: "crash-nodemo", Name: "Crash No Demo", Studio: "Test Studio", Category: "crash",
			Demo: false, Freebet: true, Mobile: true, Desktop: true},
		{ID: "crash-other", Name: "Crash Other", Studio: "Test Studio", Category: "crash",
			Demo: true, Freebet: true, Mobile: true, Desktop: true},
	},
	Operators: []launch.Operator{
		{ID: "acme", Games: []string{"crash", "crash-nodemo"}, Demo: true, HasWallet: true, Currencies: []launch.Currency{
			{Code: "BRL", MinBet: ptr(100), MaxBet: ptr(100000), MaxWin: ptr(10000000)},
			{Code: "USD", MinBet: ptr(10), MaxBet: ptr(50000)},
		}},
		{ID: "strict", Games: []string{"crash"}, Demo: false, HasWallet: true, Currencies: []launch.Currency{
			{Code: "EUR", MinBet: ptr(10), MaxBet: ptr(1000), MaxWin: ptr(100000)},
		}},
		{ID: "off", Games: []string{"crash"}, Demo: true, HasWallet: true, Currencies: []launch.Currency{{Code: "BRL"}}},
		{ID: "showroom", Games: []string{"crash"}, Demo: true, Currencies: []launch.Currency{
			{Code: "BRL", MinBet: ptr(100), MaxBet: ptr(1000)},
		}},
	},
}

// operators are the credentials of the installation's operators: off is
// disabled, showroom is demo only and unsigned.
var operators = []operatorapi.Operator{
	{ID: "acme", Enabled: true, Secret: acmeSecret},
	{ID: "strict", Enabled: true, Secret: "strict-secret-0123456789abcdef"},
	{ID: "off", Enabled: false, Secret: "off-secret-0123456789abcdef"},
	{ID: "showroom", Enabled: true},
}

func ptr(v int64) *int64 { return &v }

type env struct {
	handler   http.Handler
	validator *apitest.Validator
	tickets   *tickets.Service
	store     *store.Store
	now       time.Time
	logs      *bytes.Buffer
}

// TestMain shares one PostgreSQL container among this package's tests.
func TestMain(m *testing.M) { pgtest.Main(m) }

// newEnv serves the installation over a SQLite store.
func newEnv(t testing.TB) *env {
	t.Helper()
	return newEnvOn(t, storetest.SQLite(t))
}

// eachStore runs f on SQLite and on PostgreSQL: the same suite on both backends.
func eachStore(t *testing.T, f func(t *testing.T, e *env)) {
	t.Run("sqlite", func(t *testing.T) { t.Parallel(); f(t, newEnv(t)) })
	t.Run("postgres", func(t *testing.T) { t.Parallel(); f(t, newEnvOn(t, pgtest.Start(t))) })
}

func newEnvOn(t testing.TB, dsn string) *env {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	e := &env{now: time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC), logs: &bytes.Buffer{}}
	clock := func() time.Time { return e.now }
	e.store = st
	e.tickets = tickets.New(st.Tickets(), clock)
	logger := slog.New(slog.NewJSONHandler(e.logs, nil))
	games := map[string][]string{}
	for _, op := range installation.Operators {
		games[op.ID] = op.Games
	}
	api := operatorapi.New(operatorapi.Config{Operators: operators, Launch: launch.New(installation, e.tickets),
		Chains: st.HashChains(), Movements: st.BackOffice(), Redeliver: st.Movements(), BackOffice: backoffice.New(backoffice.Config{Records: st.BackOffice(), Games: games, LinkTTL: time.Hour}), BaseURL: installation.BaseURL, Logger: logger, Now: clock})
	e.handler = server.New(server.Config{Logger: logger, Documents: http.NotFoundHandler(), Routes: api.Routes()})
	e.validator = apitest.New(t, "game.v1.yaml")
	return e
}

// ts is the env's clock in milliseconds, shifted by d.
func (e *env) ts(d time.Duration) int64 { return e.now.Add(d).UnixMilli() }

type reply struct {
	Status int
	Body   map[string]any
	Raw    []byte
}

// post sends body to path, signed with secret ("" sends no X-Signature), with
// extra header name/value pairs, and validates the response against game.v1.yaml.
func (e *env) post(t *testing.T, path, body, secret string, header ...string) reply {
	t.Helper()
	sig := ""
	if secret != "" {
		sig = sign(secret, body)
	}
	return e.postWithSignature(t, path, body, sig, header...)
}

// postWithSignature sends body with X-Signature sig ("" sends none).
func (e *env) postWithSignature(t *testing.T, path, body, sig string, header ...string) reply {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if sig != "" {
		req.Header.Set("X-Signature", sig)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	e.handler.ServeHTTP(rec, req)
	e.validator.Recorded(t, httptest.NewRequest(http.MethodPost, path, nil), rec)
	r := reply{Status: rec.Code, Raw: rec.Body.Bytes()}
	if err := json.Unmarshal(r.Raw, &r.Body); err != nil {
		t.Fatalf("response is not JSON (GEN-2): %q", r.Raw)
	}
	return r
}

func sign(secret, body string) string { return signature.Sign([]byte(secret), []byte(body)) }

func (e *env) body(fields string) string {
	return fmt.Sprintf(`{"operator":"acme","timestamp":%d%s}`, e.ts(0), fields)
}

func wantError(t *testing.T, r reply, status int, code string) {
	t.Helper()
	if r.Status != status || r.Body["status"] != "error" || r.Body["error_code"] != code {
		t.Fatalf("got %d %s, want %d %s", r.Status, r.Raw, status, code)
	}
}

func mustDecode(t *testing.T, raw []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
}

// launchURL parses a launch URL and checks its shape (GAME-28).
func launchURL(t *testing.T, raw string) url.Values {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("launch url %q: %v", raw, err)
	}
	if u.Scheme+"://"+u.Host+u.Path != "https://games.test.example/crash/" {
		t.Fatalf("launch url %q is not based on base_url", raw)
	}
	if !strings.HasPrefix(u.RawQuery, "sid=") || !strings.Contains(u.RawQuery, "&lang=") || !strings.Contains(u.RawQuery, "&cur=") {
		t.Fatalf("launch url %q is not ?sid=..&lang=..&cur=..", raw)
	}
	return u.Query()
}

// decodeLoose decodes raw into v and reports whether it could.
func decodeLoose(raw []byte, v any) bool { return json.Unmarshal(raw, v) == nil }
