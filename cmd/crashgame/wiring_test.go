package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/internal/config"
	"github.com/crashstudio/crashgame/internal/engine"
	"github.com/crashstudio/crashgame/internal/freebets"
	"github.com/crashstudio/crashgame/internal/launch"
	"github.com/crashstudio/crashgame/internal/operatorapi"
	"github.com/crashstudio/crashgame/internal/round"
	"github.com/crashstudio/crashgame/internal/sessions"
	"github.com/crashstudio/crashgame/internal/table"
	"github.com/crashstudio/crashgame/internal/wallet"
)

// translated is an installation with a real-money operator, a disabled one and
// an unsigned demo-only one, for the translations into each package's values.
const translated = `
base_url: https://games.example.com
fairness: {seed_key: abababababababababababababababababababababababababababababababab, seeding_window_ms: 0}
default_language: es
games:
  - {game_id: crash, name: Crash, studio: S, category: crash, rtp_bp: 9600, max_multiplier: 5000, betting_ms: 4000, pause_ms: 2000}
  - {game_id: turbo, name: Turbo, studio: S, category: crash, demo: false, freebet: false, mobile: false}
operators:
  - operator: acme
    secret: acme-secret-0123456789abcdef
    api_key: acme_key
    wallet_url: https://wallet.acme.example/api
    zero_win: true
    demo: false
    games: [turbo, crash]
    currencies:
      USD: { min_bet: 10 }
      BRL: { min_bet: 100, max_bet: 100000, max_win: 500000 }
  - operator: off
    enabled: false
    legacy_launch: false
    secret: off-secret-0123456789abcdef
    api_key: off_key
    wallet_url: https://wallet.off.example
    games: [crash]
    currencies: {EUR: {}}
  - operator: showroom
    games: [crash]
    currencies: {BRL: { max_bet: 1000 }}
`

func parseTranslated(t *testing.T) *config.Config {
	t.Helper()
	cfg, err := config.Parse([]byte(translated), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func ptr(v int64) *int64 { return &v }

func TestTranslateEngine(t *testing.T) {
	t.Parallel()
	cfg := parseTranslated(t)
	want := engine.Game{ID: "crash", RTPBasisPoints: 9600, MaxMultiplier: 5000,
		Betting: 4 * time.Second, Pause: 2 * time.Second, Freebet: true}
	if got := engineGame(&cfg.Games[0]); got != want {
		t.Errorf("engineGame = %+v, want %+v", got, want)
	}
	wantOps := map[string]engine.Operator{
		"acme": {ZeroWin: true, Currencies: map[string]round.Limits{
			"BRL": {MinBet: 100, MaxBet: 100000, MaxWin: 500000}, "USD": {MinBet: 10}}},
		"off":      {Currencies: map[string]round.Limits{"EUR": {}}},
		"showroom": {Currencies: map[string]round.Limits{"BRL": {MaxBet: 1000}}},
	}
	if got := engineOperators(cfg); !reflect.DeepEqual(got, wantOps) {
		t.Errorf("engineOperators = %+v, want %+v", got, wantOps)
	}
}

func TestTranslateSessions(t *testing.T) {
	t.Parallel()
	cfg := parseTranslated(t)
	want := []sessions.Operator{
		{ID: "acme", Enabled: true, Games: []string{"turbo", "crash"}, Currencies: []sessions.Currency{
			{Code: "BRL", Limits: freebets.Limits{MinBet: ptr(100), MaxBet: ptr(100000)}},
			{Code: "USD", Limits: freebets.Limits{MinBet: ptr(10)}},
		}},
		{ID: "off", Games: []string{"crash"}, Currencies: []sessions.Currency{{Code: "EUR"}}, LegacyLaunchOff: true},
		{ID: "showroom", Enabled: true, Games: []string{"crash"}, Currencies: []sessions.Currency{
			{Code: "BRL", Limits: freebets.Limits{MaxBet: ptr(1000)}}}},
	}
	if got := sessionOperators(cfg); !reflect.DeepEqual(got, want) {
		t.Errorf("sessionOperators = %+v, want %+v", got, want)
	}
	if got := gameIDs(cfg); !reflect.DeepEqual(got, []string{"crash", "turbo"}) {
		t.Errorf("gameIDs = %q", got)
	}
}

func TestTranslateOperatorRoutes(t *testing.T) {
	t.Parallel()
	cfg := parseTranslated(t)
	want := launch.Installation{
		BaseURL: "https://games.example.com", Languages: []string{"pt", "en", "es"}, DefaultLanguage: "es",
		Games: []launch.Game{
			{ID: "crash", Name: "Crash", Studio: "S", Category: "crash", Demo: true, Mobile: true, Desktop: true, Freebet: true},
			{ID: "turbo", Name: "Turbo", Studio: "S", Category: "crash", Desktop: true},
		},
		Operators: []launch.Operator{
			{ID: "acme", Games: []string{"turbo", "crash"}, HasWallet: true, Currencies: []launch.Currency{
				{Code: "BRL", MinBet: ptr(100), MaxBet: ptr(100000), MaxWin: ptr(500000)},
				{Code: "USD", MinBet: ptr(10)},
			}},
			{ID: "off", Games: []string{"crash"}, Demo: true, HasWallet: true, Currencies: []launch.Currency{{Code: "EUR"}}},
			{ID: "showroom", Games: []string{"crash"}, Demo: true, Currencies: []launch.Currency{{Code: "BRL", MaxBet: ptr(1000)}}},
		},
	}
	if got := launchInstallation(cfg); !reflect.DeepEqual(got, want) {
		t.Errorf("launchInstallation = %+v, want %+v", got, want)
	}
	wantOps := []operatorapi.Operator{
		{ID: "acme", Enabled: true, Secret: "acme-secret-0123456789abcdef"},
		{ID: "off", Secret: "off-secret-0123456789abcdef"},
		{ID: "showroom", Enabled: true},
	}
	if got := operatorCredentials(cfg); !reflect.DeepEqual(got, wantOps) {
		t.Errorf("operatorCredentials = %+v, want %+v", got, wantOps)
	}
}

func TestTranslateTableAndWallet(t *testing.T) {
	t.Parallel()
	cfg := parseTranslated(t)
	want := map[table.Currency]table.Limits{
		{Operator: "acme", Code: "BRL"}:     {MinBet: ptr(100), MaxBet: ptr(100000), MaxWin: ptr(500000)},
		{Operator: "acme", Code: "USD"}:     {MinBet: ptr(10)},
		{Operator: "off", Code: "EUR"}:      {},
		{Operator: "showroom", Code: "BRL"}: {MaxBet: ptr(1000)},
	}
	if got := tableLimits(cfg); !reflect.DeepEqual(got, want) {
		t.Errorf("tableLimits = %+v, want %+v", got, want)
	}
	op, _ := cfg.Operator("acme")
	wantSettings := wallet.Settings{Operator: "acme", URL: "https://wallet.acme.example/api",
		Secret: "acme-secret-0123456789abcdef", APIKey: "acme_key"}
	if got := walletSettings(op); got != wantSettings {
		t.Errorf("walletSettings = %v, want %v", got, wantSettings)
	}
}

// Rule AUTH-20: the client reads the operator's key and secret when it is
// built (at start-up); a key changed afterwards takes effect only with a new
// client, that is after a restart.
func TestKeyReadAtStartup(t *testing.T) {
	t.Parallel()
	var (
		mu   sync.Mutex
		seen []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"ok","balance":100,"currency":"BRL","player_id":"p1"}`))
	}))
	defer srv.Close()
	cfg, err := config.Parse([]byte(`
base_url: https://games.example.com
fairness: {seed_key: abababababababababababababababababababababababababababababababab, seeding_window_ms: 0}
games: [{game_id: crash, name: Crash, studio: S, category: crash}]
operators:
  - operator: acme
    secret: acme-secret-0123456789abcdef
    api_key: key-before-rotation
    wallet_url: `+srv.URL+`
    games: [crash]
    currencies: {BRL: {}}
`), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	op, _ := cfg.Operator("acme")
	c, err := wallet.NewClient(walletSettings(op))
	if err != nil {
		t.Fatal(err)
	}
	op.APIKey = "key-after-rotation"
	if _, err := c.Balance(context.Background(), wallet.BalanceCall{Token: "tok-0123456789abcdef", Currency: "BRL"}); err != nil {
		t.Fatal(err)
	}
	c2, err := wallet.NewClient(walletSettings(op))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c2.Balance(context.Background(), wallet.BalanceCall{Token: "tok-0123456789abcdef", Currency: "BRL"}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2 || seen[0] != "Bearer key-before-rotation" || seen[1] != "Bearer key-after-rotation" {
		t.Fatalf("Authorization headers %q", seen)
	}
}
