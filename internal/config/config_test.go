package config_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/crashstudio/crashgame/internal/config"
)

// Distinctive credential values: no error, print or log may ever contain them.
const (
	secretValue = "SECRET-VALUE-acme-0123456789"
	apiKeyValue = "APIKEY-VALUE-acme-0123456789"
)

const base = `
base_url: https://games.example.com
fairness: {seed_key: abababababababababababababababababababababababababababababababab}
games:
  - game_id: crash
    name: Crash
    studio: Example Studio
    category: crash
operators:
  - operator: acme
    secret: SECRET-VALUE-acme-0123456789
    api_key: APIKEY-VALUE-acme-0123456789
    wallet_url: https://wallet.acme.example/api
    games: [crash]
    currencies:
      BRL: { min_bet: 100, max_bet: 100000, max_win: 10000000 }
`

// mutate returns base with old replaced by new; old must occur exactly once.
func mutate(t *testing.T, old, new string) string {
	t.Helper()
	if strings.Count(base, old) != 1 {
		t.Fatalf("test setup: %q occurs %d times in base", old, strings.Count(base, old))
	}
	return strings.Replace(base, old, new, 1)
}

func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

var exampleEnv = env(map[string]string{
	"ACME_SECRET":         secretValue,
	"ACME_API_KEY":        apiKeyValue,
	"ACME_STAGING_SECRET": "staging-secret-0123456789abcdef",
	"CRASHGAME_SEED_KEY":  seedKeyValue,
})

// seedKeyValue is the example's seed key, as distinctive as the credentials.
const seedKeyValue = "5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed"

func parseExample(t *testing.T) *config.Config {
	t.Helper()
	data, err := os.ReadFile("testdata/example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c, err := config.Parse(data, exampleEnv)
	if err != nil {
		t.Fatalf("example.yaml does not parse: %v", err)
	}
	return c
}

func mustParse(t *testing.T, data string) *config.Config {
	t.Helper()
	c, err := config.Parse([]byte(data), nil)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return c
}

func mustOperator(t *testing.T, c *config.Config, id string) *config.Operator {
	t.Helper()
	op, ok := c.Operator(id)
	if !ok {
		t.Fatalf("operator %q not found", id)
	}
	return op
}

func ptr(v int64) *int64 { return &v }

// Rule GEN-8 AUTH-8 LIM-11
func TestExampleFile(t *testing.T) {
	t.Parallel()
	c := parseExample(t)

	if c.BaseURL != "https://games.example.com" || c.DefaultLanguage != "pt" || c.Listen != "127.0.0.1:8080" {
		t.Errorf("top level = %q %q %q", c.BaseURL, c.DefaultLanguage, c.Listen)
	}
	if got := len(c.Games); got != 2 {
		t.Fatalf("%d games, want 2", got)
	}
	turbo, ok := c.Game("crash-turbo")
	if !ok {
		t.Fatal("crash-turbo not found")
	}
	if turbo.BettingMS != 3000 || turbo.PauseMS != config.DefaultPauseMS || turbo.RTPBasisPoints != 9700 ||
		turbo.MaxMultiplier != 100000 || !turbo.Demo || !turbo.Freebet || !turbo.Mobile || !turbo.Desktop || turbo.ImageURL != "" {
		t.Errorf("crash-turbo defaults = %+v", *turbo)
	}

	acme := mustOperator(t, c, "acme")
	if !acme.Enabled || !acme.Signed() || !acme.HasWallet() || acme.DemoOnly() || acme.ZeroWin || !acme.Demo {
		t.Errorf("acme flags = %v", acme)
	}
	if string(acme.Secret) != secretValue || string(acme.APIKey) != apiKeyValue {
		t.Error("acme credentials not expanded from the environment")
	}
	if acme.WalletURL != "https://wallet.acme.example/api" {
		t.Errorf("acme wallet = %q", acme.WalletURL)
	}
	if got := acme.CurrencyCodes(); !slices.Equal(got, []string{"BRL", "EUR", "USD"}) {
		t.Errorf("currencies = %v, want sorted [BRL EUR USD]", got)
	}
	usd, ok := acme.Currency("USD")
	if !ok || usd.MinBet == nil || *usd.MinBet != 10 || usd.MaxBet == nil || *usd.MaxBet != 50000 || usd.MaxWin != nil {
		t.Errorf("USD limits = %+v, want min 10, max 50000, max_win unknown (nil)", usd)
	}
	if eur, ok := acme.Currency("EUR"); !ok || eur.MinBet != nil || eur.MaxBet != nil || eur.MaxWin != nil {
		t.Errorf("EUR limits = %+v, want all unknown", eur)
	}

	staging := mustOperator(t, c, "acme-staging")
	if !staging.Signed() || staging.HasWallet() || staging.DemoOnly() {
		t.Errorf("acme-staging: signed=%t wallet=%t demoOnly=%t, want signed demo", staging.Signed(), staging.HasWallet(), staging.DemoOnly())
	}
	showroom := mustOperator(t, c, "showroom")
	if showroom.Signed() || showroom.HasWallet() || !showroom.DemoOnly() {
		t.Errorf("showroom: signed=%t wallet=%t demoOnly=%t, want unsigned demo only", showroom.Signed(), showroom.HasWallet(), showroom.DemoOnly())
	}
}

// The example in docs/config.md is the committed example file, byte for byte.
func TestDocsShowExample(t *testing.T) {
	t.Parallel()
	example, err := os.ReadFile("testdata/example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	docs, err := os.ReadFile(filepath.Join("..", "..", "docs", "config.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(docs, example) {
		t.Error("docs/config.md does not contain internal/config/testdata/example.yaml verbatim; copy it into the docs")
	}
	for _, key := range []string{
		"listen", "metrics_listen", "profiling", "base_url", "default_language", "database", "games", "operators",
		"game_id", "name", "studio", "category", "image_url", "rtp_bp", "max_multiplier", "betting_ms", "pause_ms",
		"demo", "freebet", "mobile", "desktop",
		"operator", "enabled", "secret", "api_key", "wallet_url", "zero_win", "legacy_launch", "currencies", "min_bet", "max_bet", "max_win",
	} {
		if !bytes.Contains(docs, []byte("`"+key+"`")) {
			t.Errorf("docs/config.md does not document `%s`", key)
		}
	}
}

func TestDefaults(t *testing.T) {
	t.Parallel()
	c := mustParse(t, `
base_url: https://games.example.com/
fairness: {seed_key: abababababababababababababababababababababababababababababababab}
games:
  - {game_id: crash, name: Crash, studio: S, category: crash}
operators:
  - {operator: demo, games: [crash]}
`)
	if c.Listen != "127.0.0.1:8080" || c.DefaultLanguage != "en" || string(c.Database) != "sqlite://data/crashgame.db" {
		t.Errorf("top-level defaults = %q %q %q", c.Listen, c.DefaultLanguage, c.Database)
	}
	// /metrics is never on the public port: by default on loopback.
	if c.MetricsListen != "127.0.0.1:9090" {
		t.Errorf("metrics_listen default = %q, want 127.0.0.1:9090", c.MetricsListen)
	}
	if op, _ := c.Operator("demo"); !op.LegacyLaunch {
		t.Error("legacy_launch default = false, want true (today's operators keep working)")
	}
	if c.BaseURL != "https://games.example.com" {
		t.Errorf("base_url = %q, want the trailing slash removed", c.BaseURL)
	}
	g, _ := c.Game("crash")
	want := config.Game{ID: "crash", Name: "Crash", Studio: "S", Category: "crash",
		RTPBasisPoints: 9700, MaxMultiplier: 100000, BettingMS: 5000, PauseMS: 3000,
		Demo: true, Freebet: true, Mobile: true, Desktop: true}
	if *g != want {
		t.Errorf("game = %+v, want %+v", *g, want)
	}
	if g.Betting().Seconds() != 5 || g.Pause().Seconds() != 3 {
		t.Errorf("durations = %v %v", g.Betting(), g.Pause())
	}
	op := mustOperator(t, c, "demo")
	if !op.Enabled || !op.Demo || op.ZeroWin || op.Signed() || op.HasWallet() || !op.DemoOnly() || len(op.Currencies) != 0 {
		t.Errorf("operator defaults = %v", op)
	}
}

func TestURLs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		wallet, want string
	}{
		{"https://wallet.acme.example/api/", "https://wallet.acme.example/api"},
		{"HTTPS://wallet.acme.example", "https://wallet.acme.example"},
		{"https://wallet.acme.example:8443/v1//", "https://wallet.acme.example:8443/v1"},
		// Rule AUTH-21: http:// is fine on loopback.
		{"http://127.0.0.1:9090/wallet", "http://127.0.0.1:9090/wallet"},
		{"http://127.10.0.1/wallet", "http://127.10.0.1/wallet"},
		{"http://localhost:9090", "http://localhost:9090"},
		{"http://[::1]:9090", "http://[::1]:9090"},
	}
	for _, tt := range tests {
		t.Run(tt.wallet, func(t *testing.T) {
			t.Parallel()
			c := mustParse(t, mutate(t, "https://wallet.acme.example/api", tt.wallet))
			if got := mustOperator(t, c, "acme").WalletURL; got != tt.want {
				t.Errorf("WalletURL = %q, want %q", got, tt.want)
			}
		})
	}
}

// Every refusal: the message names the operator or game and says the fix, and no
// credential value appears in it.
func TestRefusals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		file string
		want []string
	}{
		// Rule AUTH-7
		{"wallet without secret", mutate(t, "    secret: SECRET-VALUE-acme-0123456789\n", ""),
			[]string{`operator "acme"`, "secret is missing", "add secret: ${ACME_SECRET}"}},
		// Rule AUTH-21
		{"wallet over http outside loopback", mutate(t, "https://wallet.acme.example/api", "http://wallet.acme.example/api"),
			[]string{`operator "acme"`, "http:// outside loopback", "use https://"}},
		// Rule AUTH-21
		{"wallet over http on a lookalike host", mutate(t, "https://wallet.acme.example/api", "http://127.0.0.1.nip.io/api"),
			[]string{`operator "acme"`, "http:// outside loopback"}},
		{"wallet not absolute", mutate(t, "https://wallet.acme.example/api", "wallet.acme.example/api"),
			[]string{`operator "acme"`, "wallet_url", "not an absolute http:// or https:// URL", "write it like https://"}},
		{"wallet with another scheme", mutate(t, "https://wallet.acme.example/api", "ftp://wallet.acme.example/api"),
			[]string{`operator "acme"`, "wallet_url", "not an absolute http:// or https:// URL"}},
		{"wallet with credentials", mutate(t, "https://wallet.acme.example/api", "https://user:hunter2hunter2@wallet.acme.example/api"),
			[]string{`operator "acme"`, "credentials do not belong in a URL"}},
		{"wallet with query", mutate(t, "https://wallet.acme.example/api", "https://wallet.acme.example/api?x=1"),
			[]string{`operator "acme"`, "query or fragment"}},
		{"empty wallet", mutate(t, "https://wallet.acme.example/api", `""`),
			[]string{`operator "acme"`, "wallet_url is empty"}},
		{"api_key missing", mutate(t, "    api_key: APIKEY-VALUE-acme-0123456789\n", ""),
			[]string{`operator "acme"`, "api_key is missing", "add api_key: ${ACME_API_KEY}"}},
		{"api_key without wallet", mutate(t, "    wallet_url: https://wallet.acme.example/api\n", ""),
			[]string{`operator "acme"`, "api_key is set but wallet_url is missing", "remove api_key"}},
		{"api_key with a newline", mutate(t, "api_key: APIKEY-VALUE-acme-0123456789", `api_key: "APIKEY-VALUE-acme\n0123456789"`),
			[]string{`operator "acme"`, "api_key", "control character"}},
		{"empty secret", mutate(t, "secret: SECRET-VALUE-acme-0123456789", "secret:"),
			[]string{`operator "acme"`, "secret is empty"}},
		{"short secret", mutate(t, "secret: SECRET-VALUE-acme-0123456789", "secret: short"),
			[]string{`operator "acme"`, "shorter than 16 bytes", "openssl rand"}},
		{"secret with trailing space", mutate(t, "secret: SECRET-VALUE-acme-0123456789", `secret: "SECRET-VALUE-acme-0123456789 "`),
			[]string{`operator "acme"`, "white space", "remove it"}},
		{"duplicate game ids", mutate(t, "operators:", "  - {game_id: crash, name: Crash 2, studio: S, category: crash}\noperators:"),
			[]string{`game "crash" is defined twice`, "give each game its own game_id"}},
		{"duplicate operator ids", base + "  - {operator: acme, games: [crash]}\n",
			[]string{`operator "acme" is defined twice`, "give each operator its own id"}},
		{"operator names an unknown game", mutate(t, "games: [crash]", "games: [crash, slots]"),
			[]string{`operator "acme"`, `game "slots" is not defined`, "define it there or fix the id"}},
		{"operator lists a game twice", mutate(t, "games: [crash]", "games: [crash, crash]"),
			[]string{`operator "acme"`, `game "crash" is listed twice`}},
		{"operator with no games", mutate(t, "games: [crash]", "games: []"),
			[]string{`operator "acme"`, "no games", "games: [crash]"}},
		{"currency lower case", mutate(t, "BRL:", "brl:"),
			[]string{`operator "acme"`, `currency "brl" is not three upper-case letters`, "ISO 4217"}},
		{"currency of four letters", mutate(t, "BRL:", "BRLX:"),
			[]string{`operator "acme"`, `currency "BRLX"`}},
		{"wallet operator without currencies", mutate(t, "    currencies:\n      BRL: { min_bet: 100, max_bet: 100000, max_win: 10000000 }\n", ""),
			[]string{`operator "acme"`, "no currencies", "add e.g. currencies:"}},
		{"min_bet above max_bet", mutate(t, "min_bet: 100,", "min_bet: 200000,"),
			[]string{`operator "acme" currency BRL`, "min_bet 200000 is above max_bet 100000"}},
		// Rule GEN-6
		{"negative limit", mutate(t, "min_bet: 100,", "min_bet: -100,"),
			[]string{`operator "acme" currency BRL`, "min_bet -100 is negative"}},
		// Rule LIM-11
		{"zero limit", mutate(t, "max_win: 10000000", "max_win: 0"),
			[]string{`operator "acme" currency BRL`, "max_win is 0", "remove the key if the limit is unknown"}},
		{"max_win below max_bet", mutate(t, "max_win: 10000000", "max_win: 500"),
			[]string{`operator "acme" currency BRL`, "max_win 500 is below max_bet 100000"}},
		// Rule GEN-4 GEN-5
		{"float amount", mutate(t, "min_bet: 100,", "min_bet: 1.5,"),
			[]string{`operator "acme" currency BRL`, "min_bet must be a whole number of cents", `not "1.5"`, "without a decimal point"}},
		// Rule GEN-4 GEN-5
		{"float amount with zero fraction", mutate(t, "max_bet: 100000,", "max_bet: 100000.0,"),
			[]string{`operator "acme" currency BRL`, "max_bet must be a whole number of cents"}},
		// Rule GEN-4
		{"quoted amount", mutate(t, "min_bet: 100,", `min_bet: "100",`),
			[]string{`operator "acme" currency BRL`, "min_bet must be a whole number of cents", "without quotes"}},
		{"amount as a word", mutate(t, "max_win: 10000000", "max_win: lots"),
			[]string{`operator "acme" currency BRL`, "max_win must be a whole number", `not "lots"`}},
		{"unknown limit key", mutate(t, "min_bet: 100,", "minbet: 100,"),
			[]string{`operator "acme" currency BRL`, `unknown key "minbet"`, "min_bet, max_bet, max_win"}},
		// Rule LANG-4
		{"default_language outside pt en es", "default_language: fr\n" + base,
			[]string{`default_language "fr" is not one of pt, en, es`, "pick one"}},
		{"unknown top-level key", "listne: 127.0.0.1:8080\n" + base,
			[]string{`unknown key "listne"`, "listen, base_url"}},
		{"unknown operator key", mutate(t, "secret: SECRET", "zero_win: false\n    secrte: x\n    secret: SECRET"),
			[]string{`operator "acme"`, `unknown key "secrte"`, "docs/config.md"}},
		{"unknown game key", mutate(t, "category: crash", "category: crash\n    rtp: 9700"),
			[]string{`game "crash"`, `unknown key "rtp"`, "rtp_bp"}},
		{"repeated key", mutate(t, "category: crash", "category: crash\n    category: other"),
			[]string{`game "crash"`, `key "category" appears twice`}},
		// Rule GEN-11
		{"missing base_url", mutate(t, "base_url: https://games.example.com\n", ""),
			[]string{"base_url is missing", "base_url: https://"}},
		// Rule GEN-11
		{"base_url not http", mutate(t, "https://games.example.com", "ftp://games.example.com"),
			[]string{"base_url", "not an absolute http:// or https:// URL"}},
		// Rule GEN-11
		{"base_url relative", mutate(t, "https://games.example.com", "/games"),
			[]string{"base_url", "not an absolute http:// or https:// URL"}},
		{"rtp_bp zero", mutate(t, "category: crash", "category: crash\n    rtp_bp: 0"),
			[]string{`game "crash"`, "rtp_bp 0 is outside 1..10000", "rtp_bp: 9700"}},
		{"rtp_bp above 100 %", mutate(t, "category: crash", "category: crash\n    rtp_bp: 10001"),
			[]string{`game "crash"`, "rtp_bp 10001 is outside 1..10000"}},
		{"max_multiplier too low", mutate(t, "category: crash", "category: crash\n    max_multiplier: 100"),
			[]string{`game "crash"`, "max_multiplier 100 is below 101", "max_multiplier: 100000"}},
		{"betting_ms zero", mutate(t, "category: crash", "category: crash\n    betting_ms: 0"),
			[]string{`game "crash"`, "betting_ms 0 must be above 0", "remove the key for the default"}},
		{"pause_ms negative", mutate(t, "category: crash", "category: crash\n    pause_ms: -1"),
			[]string{`game "crash"`, "pause_ms -1 must be above 0"}},
		{"game without name", mutate(t, "    name: Crash\n", ""),
			[]string{`game "crash"`, "name is missing", "name: Crash"}},
		{"game id with a space", mutate(t, "game_id: crash", "game_id: crash game") + "  - {operator: x, games: [crash]}\n",
			[]string{`game "crash game"`, "game_id must be"}},
		{"image_url not absolute", mutate(t, "category: crash", "category: crash\n    image_url: static/crash.png"),
			[]string{`game "crash"`, "image_url", "full https:// address"}},
		{"boolean as yes", mutate(t, "games: [crash]", "games: [crash]\n    demo: yes"),
			[]string{`operator "acme"`, "demo must be true or false", `not "yes"`}},
		{"demo-only operator with demo off", base + "  - {operator: showroom, games: [crash], demo: false}\n",
			[]string{`operator "showroom"`, "demo is false", "add wallet_url or set demo: true"}},
		{"no operators", strings.Split(base, "operators:")[0] + "operators: []\n",
			[]string{"no operator is configured", "add at least one"}},
		{"no games", strings.Replace(mutate(t, "games: [crash]", "games: [crash]"), base[:strings.Index(base, "operators:")],
			"\nbase_url: https://games.example.com\ngames: []\n", 1),
			[]string{"no game is configured", "add at least one"}},
		{"listen without port", "listen: 127.0.0.1\n" + base,
			[]string{`listen "127.0.0.1" is not host:port`, "127.0.0.1:8080"}},
		{"metrics_listen without port", "metrics_listen: localhost\n" + base,
			[]string{`metrics_listen "localhost" is not host:port`, "127.0.0.1:9090"}},
		{"metrics_listen equal to listen", "listen: 127.0.0.1:8080\nmetrics_listen: 127.0.0.1:8080\n" + base,
			[]string{`metrics_listen "127.0.0.1:8080" is the same address as listen`}},
		{"listen on metrics_listen's default", "listen: 127.0.0.1:9090\n" + base,
			[]string{`listen "127.0.0.1:9090" is also the default of metrics_listen`, "127.0.0.1:9091"}},
		{"unknown database", "database: mysql://root:hunter2hunter2@db/x\n" + base,
			[]string{"database is neither sqlite:// nor postgres://", "postgres://USER:PASSWORD@HOST"}},
		{"second document", base + "---\nlisten: :9090\n",
			[]string{"second YAML document"}},
		{"empty file", "# nothing here\n",
			[]string{"the file is empty"}},
		{"not YAML", "operators: [\n",
			[]string{"not valid YAML"}},
		{"list instead of mapping", "- a\n- b\n",
			[]string{"the file must be a mapping"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := config.Parse([]byte(tt.file), nil)
			if err == nil {
				t.Fatalf("Parse accepted the file; want a refusal mentioning %q\n%s", tt.want, tt.file)
			}
			if c != nil {
				t.Error("Parse returned a config along with an error")
			}
			msg := err.Error()
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error does not mention %q:\n%s", w, msg)
				}
			}
			for _, s := range []string{secretValue, apiKeyValue, "hunter2"} {
				if strings.Contains(msg, s) {
					t.Errorf("error reveals a credential %q:\n%s", s, msg)
				}
			}
		})
	}
}

// A file with many problems gets all of them in one error.
func TestAllProblemsAtOnce(t *testing.T) {
	t.Parallel()
	file := `
default_language: de
games:
  - {game_id: crash, name: Crash, studio: S, category: crash, rtp_bp: 0}
operators:
  - operator: acme
    wallet_url: http://wallet.acme.example
    games: [crash, slots]
    currencies:
      brl: {}
      USD: {min_bet: 1.5}
`
	_, err := config.Parse([]byte(file), nil)
	if err == nil {
		t.Fatal("Parse accepted the file")
	}
	want := []string{
		"base_url is missing",
		"fairness: the section is missing",
		`default_language "de"`,
		"rtp_bp 0",
		"http:// outside loopback",
		"secret is missing",
		"api_key is missing",
		`game "slots" is not defined`,
		`currency "brl"`,
		"operator \"acme\" currency USD: min_bet must be a whole number",
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error does not mention %q", w)
		}
	}
	var joined interface{ Unwrap() []error }
	if !errors.As(err, &joined) || len(joined.Unwrap()) != len(want) {
		t.Errorf("want %d joined problems, got:\n%v", len(want), err)
	}
	if !strings.HasPrefix(err.Error(), fmt.Sprintf("%d problems in the configuration:\n", len(want))) {
		t.Errorf("error does not start with the count:\n%v", err)
	}
	if !strings.Contains(err.Error(), "line 7: operator \"acme\": wallet_url") {
		t.Errorf("error does not carry line numbers:\n%v", err)
	}
}

func TestEnvExpansion(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		file    string
		env     map[string]string
		want    []string // error substrings; none means the file must parse
		check   func(t *testing.T, c *config.Config)
		secrets []string // values that must not appear in the error
	}{
		{
			name: "set",
			file: mutate(t, "secret: SECRET-VALUE-acme-0123456789", "secret: ${ACME_SECRET}"),
			env:  map[string]string{"ACME_SECRET": "from-the-environment-0123456789"},
			check: func(t *testing.T, c *config.Config) {
				if got := string(mustOperator(t, c, "acme").Secret); got != "from-the-environment-0123456789" {
					t.Errorf("secret = %q", got)
				}
			},
		},
		{
			name: "quoted, inside text, two references",
			file: mutate(t, "https://wallet.acme.example/api", `"https://${WALLET_HOST}/${WALLET_PATH}"`),
			env:  map[string]string{"WALLET_HOST": "wallet.acme.example", "WALLET_PATH": "v2"},
			check: func(t *testing.T, c *config.Config) {
				if got := mustOperator(t, c, "acme").WalletURL; got != "https://wallet.acme.example/v2" {
					t.Errorf("wallet = %q", got)
				}
			},
		},
		{
			name: "value with YAML syntax is taken literally",
			file: mutate(t, "secret: SECRET-VALUE-acme-0123456789", "secret: ${ACME_SECRET}"),
			env:  map[string]string{"ACME_SECRET": "x: y # z\nwallet_url: http://evil.example\n'\"&a *b"},
			check: func(t *testing.T, c *config.Config) {
				op := mustOperator(t, c, "acme")
				if string(op.Secret) != "x: y # z\nwallet_url: http://evil.example\n'\"&a *b" || op.WalletURL != "https://wallet.acme.example/api" {
					t.Errorf("secret changed the file's structure: wallet %q", op.WalletURL)
				}
			},
		},
		{
			name: "number from the environment",
			file: mutate(t, "category: crash", "category: crash\n    betting_ms: ${BETTING_MS}\n    demo: ${DEMO}"),
			env:  map[string]string{"BETTING_MS": "7000", "DEMO": "false"},
			check: func(t *testing.T, c *config.Config) {
				g, _ := c.Game("crash")
				if g.BettingMS != 7000 || g.Demo {
					t.Errorf("betting_ms = %d, demo = %t", g.BettingMS, g.Demo)
				}
			},
		},
		{
			name: "references in comments are ignored",
			file: "# export ${NOT_SET_ANYWHERE} first\n" + base,
		},
		{
			name: "unset",
			file: mutate(t, "secret: SECRET-VALUE-acme-0123456789", "secret: ${ACME_SECRET}"),
			want: []string{"operators[0].secret", "environment variable ACME_SECRET is not set", "export it"},
		},
		{
			name: "every unset variable is named",
			file: mutate(t, "api_key: APIKEY-VALUE-acme-0123456789", "api_key: ${ACME_API_KEY}\n    zero_win: ${ZERO_WIN}"),
			want: []string{"2 problems", "ACME_API_KEY is not set", "ZERO_WIN is not set"},
		},
		{
			name: "set but empty",
			file: mutate(t, "secret: SECRET-VALUE-acme-0123456789", "secret: ${ACME_SECRET}"),
			env:  map[string]string{"ACME_SECRET": ""},
			want: []string{"ACME_SECRET is set but empty"},
		},
		{
			name: "malformed name",
			file: mutate(t, "secret: SECRET-VALUE-acme-0123456789", "secret: ${acme_secret}"),
			env:  map[string]string{"acme_secret": "whatever-0123456789"},
			want: []string{"operators[0].secret", "malformed reference", "A-Z, 0-9 and _"},
		},
		{
			name: "unterminated",
			file: mutate(t, "secret: SECRET-VALUE-acme-0123456789", `secret: "${ACME_SECRET"`),
			want: []string{"malformed reference"},
		},
		{
			name:    "error shows the reference, not the value",
			file:    mutate(t, "https://wallet.acme.example/api", "${ACME_SECRET}"),
			env:     map[string]string{"ACME_SECRET": "not-a-url-but-a-secret-0123"},
			want:    []string{`wallet_url "${ACME_SECRET}"`},
			secrets: []string{"not-a-url-but-a-secret-0123"},
		},
		{
			name:    "an id from the environment is named by its reference",
			file:    mutate(t, "game_id: crash", "game_id: ${GAME_ID}"),
			env:     map[string]string{"GAME_ID": "not an id 0123456789"},
			want:    []string{`game "${GAME_ID}": game_id must be`, `game "crash" is not defined`},
			secrets: []string{"not an id"},
		},
		{
			name:    "number expected",
			file:    mutate(t, "min_bet: 100,", `min_bet: "${MIN_BET}",`),
			env:     map[string]string{"MIN_BET": "12.75"},
			want:    []string{`operator "acme" currency BRL: min_bet must be a whole number`, "${MIN_BET}"},
			secrets: []string{"12.75"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := config.Parse([]byte(tt.file), env(tt.env))
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				if tt.check != nil {
					tt.check(t, c)
				}
				return
			}
			if err == nil {
				t.Fatalf("Parse accepted the file; want %q", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not mention %q:\n%v", w, err)
				}
			}
			for _, s := range tt.secrets {
				if strings.Contains(err.Error(), s) {
					t.Errorf("error reveals %q:\n%v", s, err)
				}
			}
		})
	}
}

// Secrets and API keys never show in printed, logged or marshalled values.
func TestCredentialsRedacted(t *testing.T) {
	t.Parallel()
	c := parseExample(t)
	c.Database = "postgres://crash:dbpass-0123456789@db:5432/crash?sslmode=require"
	acme := mustOperator(t, c, "acme")

	var logged bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&logged, nil))
	logger.Info("loaded", "config", c, "operator", acme, "op", *acme, "secret", acme.Secret)
	logger.Info("text", slog.Any("config", *c))
	var text bytes.Buffer
	slog.New(slog.NewTextHandler(&text, nil)).Info("loaded", "config", c, "operator", *acme)

	jsonOut, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	yamlOut, err := yaml.Marshal(acme)
	if err != nil {
		t.Fatal(err)
	}
	outputs := map[string]string{
		"slog json": logged.String(),
		"slog text": text.String(),
		"json":      string(jsonOut),
		"yaml":      string(yamlOut),
	}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%d"} {
		outputs["fmt "+verb+" operator"] = fmt.Sprintf(verb, *acme)
		outputs["fmt "+verb+" *operator"] = fmt.Sprintf(verb, acme)
		outputs["fmt "+verb+" config"] = fmt.Sprintf(verb, *c)
		outputs["fmt "+verb+" secret"] = fmt.Sprintf(verb, acme.Secret)
	}
	outputs["String"] = acme.String()
	for name, out := range outputs {
		for _, s := range []string{secretValue, apiKeyValue, "dbpass"} {
			if strings.Contains(out, s) {
				t.Errorf("%s reveals %q: %s", name, s, out)
			}
		}
	}
	if !strings.Contains(logged.String(), `"secret":"[redacted]"`) {
		t.Errorf("slog output does not show the redacted secret: %s", logged.String())
	}
	if string(acme.Secret.Bytes()) != secretValue {
		t.Error("Bytes does not return the secret")
	}
}

func TestLookups(t *testing.T) {
	t.Parallel()
	c := parseExample(t)
	if _, ok := c.Operator("nobody"); ok {
		t.Error("unknown operator found")
	}
	if _, ok := c.Operator("ACME"); ok {
		t.Error("operator ids must match exactly")
	}
	if _, ok := c.Game("slots"); ok {
		t.Error("unknown game found")
	}
	acme := mustOperator(t, c, "acme")
	staging := mustOperator(t, c, "acme-staging")
	if !acme.HasGame("crash-turbo") || staging.HasGame("crash-turbo") || acme.HasGame("slots") {
		t.Error("HasGame wrong")
	}
	if _, ok := acme.Currency("brl"); ok {
		t.Error("currency codes must match exactly")
	}
	if _, ok := acme.Currency("JPY"); ok {
		t.Error("a currency not configured was found")
	}
	brl, ok := acme.Currency("BRL")
	want := config.Limits{MinBet: ptr(100), MaxBet: ptr(100000), MaxWin: ptr(10000000)}
	if !ok || *brl.MinBet != *want.MinBet || *brl.MaxBet != *want.MaxBet || *brl.MaxWin != *want.MaxWin {
		t.Fatalf("BRL = %+v", brl)
	}
	*brl.MinBet = 1 // a copy: the configuration does not change
	if again, _ := acme.Currency("BRL"); *again.MinBet != 100 {
		t.Error("Currency returned limits that alias the configuration")
	}
}

// Rule LANG-1 LANG-2 LANG-3 LANG-4
func TestLanguage(t *testing.T) {
	t.Parallel()
	c := parseExample(t) // default_language: pt, so the fallback is not en
	tests := []struct{ in, want string }{
		{"pt", "pt"},
		{"en", "en"},
		{"es", "es"},
		{"", "pt"},
		{"fr", "pt"},
		{"EN", "pt"},
		{"en-US", "pt"},
		{" en", "pt"},
	}
	for _, tt := range tests {
		if got := c.Language(tt.in); got != tt.want {
			t.Errorf("Language(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestLoad(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "crashgame.yaml")
	if err := os.WriteFile(path, []byte(base), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := config.Load(path)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if _, ok := c.Operator("acme"); !ok {
		t.Error("acme not loaded")
	}

	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("default_language: fr\n"+base), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := config.Load(bad); err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "default_language") {
		t.Errorf("Load(bad) = %v, want an error naming the file and the problem", err)
	}
	if _, err := config.Load(filepath.Join(dir, "missing.yaml")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Load(missing) = %v, want os.ErrNotExist", err)
	}
}

func TestYAMLFeatures(t *testing.T) {
	t.Parallel()
	// Anchors and merge keys let an operator share limits.
	c := mustParse(t, mutate(t, "      BRL: { min_bet: 100, max_bet: 100000, max_win: 10000000 }\n",
		"      BRL: &limits { min_bet: 100, max_bet: 100000, max_win: 10000000 }\n      USD: *limits\n      EUR:\n        <<: *limits\n        max_win: 20000000\n"))
	acme := mustOperator(t, c, "acme")
	usd, _ := acme.Currency("USD")
	eur, _ := acme.Currency("EUR")
	if usd.MaxBet == nil || *usd.MaxBet != 100000 || eur.MinBet == nil || *eur.MinBet != 100 || *eur.MaxWin != 20000000 {
		t.Errorf("USD %+v EUR %+v", usd, eur)
	}
}

// FuzzParse checks that no file makes Parse panic, that it returns either a config
// or an error, and that it never reveals the value of a variable it expanded.
func FuzzParse(f *testing.F) {
	example, err := os.ReadFile("testdata/example.yaml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(example))
	f.Add(base)
	f.Add("a: &x {<<: *x}\n")
	f.Add("operators: [{operator: acme, games: [crash], currencies: {BRL: &l {min_bet: 1}, USD: {<<: [*l, *l]}}}]\n")
	f.Fuzz(func(t *testing.T, file string) {
		c, err := config.Parse([]byte(file), exampleEnv)
		if (c == nil) == (err == nil) {
			t.Fatalf("Parse returned config %v and error %v", c != nil, err)
		}
		if err == nil {
			return
		}
		for _, v := range []string{secretValue, apiKeyValue} {
			if strings.Contains(err.Error(), v) && !strings.Contains(file, v) {
				t.Fatalf("error reveals an expanded credential: %v", err)
			}
		}
	})
}

// The fairness section: the seed key is required and checked, the seeding
// window and the beacon take their documented forms.
func TestFairnessSection(t *testing.T) {
	t.Parallel()
	key := strings.Repeat("ab", 32)
	withFairness := func(section string) string {
		return strings.Replace(base, "fairness: {seed_key: "+key+"}\n", section, 1)
	}
	c := parseExample(t)
	if string(c.Fairness.SeedKey) != seedKeyValue || c.Fairness.SeedingWindow() != 5*time.Minute ||
		c.Fairness.BeaconNetwork != "quicknet" || c.Fairness.BeaconURL != "https://api.drand.sh" {
		t.Errorf("the example's fairness = %+v", c.Fairness)
	}
	if c := mustParse(t, base); c.Fairness.SeedingWindowMS != config.DefaultSeedingWindowMS || c.Fairness.BeaconNetwork != "" || c.Fairness.BeaconURL != "" {
		t.Errorf("defaults = %+v", c.Fairness)
	}
	if c := mustParse(t, withFairness("fairness: {seed_key: "+key+", seeding_window_ms: 0}\n")); c.Fairness.SeedingWindow() != 0 {
		t.Errorf("a window of 0 = %v", c.Fairness.SeedingWindow())
	}
	for _, tt := range []struct{ section, want string }{
		{"", "fairness: the section is missing"},
		{"fairness: {seeding_window_ms: 1000}\n", "seed_key is missing"},
		{"fairness: {seed_key: abc}\n", "is not 64 hex digits"},
		{"fairness: {seed_key: " + strings.Repeat("zz", 32) + "}\n", "is not 64 hex digits"},
		{"fairness: {seed_key: " + key + ", seeding_window_ms: -1}\n", "seeding_window_ms -1 is outside"},
		// The older fixed value is refused, with what to write instead.
		{"fairness: {seed_key: " + key + ", beacon: {label: x, value: " + key + "}}\n", "a fixed beacon value (label, value) is no longer taken"},
		{"fairness: {seed_key: " + key + ", beacon: {value: " + key + "}}\n", "beacon: {network: quicknet, url: https://api.drand.sh}"},
		{"fairness: {seed_key: " + key + ", beacon: {url: https://api.drand.sh}}\n", "network is missing"},
		{"fairness: {seed_key: " + key + ", beacon: {network: mainnet, url: https://api.drand.sh}}\n", "network \"mainnet\" is not known"},
		{"fairness: {seed_key: " + key + ", beacon: {network: quicknet}}\n", "url is missing"},
		{"fairness: {seed_key: " + key + ", beacon: {network: quicknet, url: ftp://relay}}\n", "url must be an absolute http or https URL"},
		{"fairness: {seed_key: " + key + ", beacon: {network: quicknet, url: \"https://u:hunter2@relay\"}}\n", "url must be an absolute http or https URL"},
		{"fairness: {seed_key: " + key + ", beacon: {network: quicknet, url: https://api.drand.sh, timeout: 3}}\n", "unknown key \"timeout\""},
	} {
		_, err := config.Parse([]byte(withFairness(tt.section)), nil)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: %v, want %q", tt.section, err, tt.want)
		}
		if err != nil && (strings.Contains(err.Error(), strings.Repeat("zz", 32)) || strings.Contains(err.Error(), "hunter2")) {
			t.Errorf("the error repeats the key: %v", err)
		}
	}
}

// back_office.link_ttl_ms: a week by default, a minute to a year;
// back_office.retention_days: forever by default, else 4 months to 100 years.
func TestBackOfficeSection(t *testing.T) {
	t.Parallel()
	if c := parseExample(t); c.LinkTTL() != 7*24*time.Hour {
		t.Errorf("the example's link TTL = %v", c.LinkTTL())
	}
	if c := mustParse(t, base); c.LinkTTLMS != config.DefaultLinkTTLMS {
		t.Errorf("default link TTL = %d", c.LinkTTLMS)
	}
	if c := mustParse(t, base+"back_office: {link_ttl_ms: 3600000}\n"); c.LinkTTL() != time.Hour {
		t.Errorf("an hour = %v", c.LinkTTL())
	}
	if c := mustParse(t, base+"back_office: {retention_days: 1825}\n"); c.Retention() != 1825*24*time.Hour {
		t.Errorf("5 years = %v", c.Retention())
	}
	if c := parseExample(t); c.Retention() != 0 {
		t.Errorf("the example keeps records forever, got %v", c.Retention())
	}
	for _, v := range []string{"119", "36501", "-1"} {
		if _, err := config.Parse([]byte(base+"back_office: {retention_days: "+v+"}\n"), nil); err == nil || !strings.Contains(err.Error(), "retention_days "+v+" is neither") {
			t.Errorf("retention_days %s: %v", v, err)
		}
	}
	for _, v := range []string{"59999", "31622400001"} {
		if _, err := config.Parse([]byte(base+"back_office: {link_ttl_ms: "+v+"}\n"), nil); err == nil || !strings.Contains(err.Error(), "link_ttl_ms "+v+" is outside") {
			t.Errorf("link_ttl_ms %s: %v", v, err)
		}
	}
}

// No error names any part of a mistyped key (KEY-never-shown): a seed_key
// of the wrong length or not hex, an operator's short or padded secret, or
// an api_key with a control character, written in the file or through a
// variable, is refused without repeating 6 characters of it.
func TestMistypedKeysAreNeverShown(t *testing.T) {
	t.Parallel()
	const good = "abababababababababababababababababababababababababababababababab"
	seedKeys := []string{
		"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde",   // 63 hex digits
		"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0", // 65
		"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdeg",  // not hex
		"0123456789abcdef 0123456789abcdef0123456789abcdef0123456789abcde",  // a space
	}
	type tc struct{ name, yaml, value string }
	var cases []tc
	for i, k := range seedKeys {
		cases = append(cases,
			tc{fmt.Sprintf("seed_key %d in the file", i), strings.Replace(base, good, `"`+k+`"`, 1), k},
			tc{fmt.Sprintf("seed_key %d in a variable", i), strings.Replace(base, good, "${SEED}", 1), k})
	}
	for _, s := range []string{"0123456789ab", " 0123456789abcdefghijklmnopqrstuv"} {
		cases = append(cases, tc{"secret " + strings.TrimSpace(s)[:6], strings.Replace(base, secretValue, `"`+s+`"`, 1), s})
	}
	cases = append(cases, tc{"api_key with a tab", strings.Replace(base, apiKeyValue, `"0123456789ab\tcdefghij"`, 1), "0123456789ab\tcdefghij"})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			getenv := func(name string) (string, bool) {
				if name == "SEED" {
					return c.value, true
				}
				return "", false
			}
			_, err := config.Parse([]byte(c.yaml), getenv)
			if err == nil {
				t.Fatalf("a mistyped key was accepted")
			}
			v := strings.TrimSpace(c.value)
			for i := 0; i+6 <= len(v); i++ {
				if part := v[i : i+6]; strings.Contains(err.Error(), part) {
					t.Fatalf("the error shows %q, part of the key: %v", part, err)
				}
			}
		})
	}
}

// The per-address budgets default to what docs/config.md justifies (100
// players of one carrier address launch at once, 200 reconnect at once), the
// example spells the defaults out, and each key is bounded.
func TestAddressLimitsSection(t *testing.T) {
	t.Parallel()
	want := config.AddressLimits{SessionsPerSecond: 20, SessionsBurst: 100, StreamsPerSecond: 50, StreamsBurst: 200}
	if config.DefaultAddressLimits != want {
		t.Errorf("DefaultAddressLimits = %+v, want %+v", config.DefaultAddressLimits, want)
	}
	if c := mustParse(t, base); c.AddressLimits != want {
		t.Errorf("left out: %+v, want the defaults", c.AddressLimits)
	}
	if c := parseExample(t); c.AddressLimits != want {
		t.Errorf("the example: %+v, want the defaults", c.AddressLimits)
	}
	c := mustParse(t, base+"address_limits: {streams_burst: 1000, sessions_per_second: 5}\n")
	if got := (config.AddressLimits{SessionsPerSecond: 5, SessionsBurst: 100, StreamsPerSecond: 50, StreamsBurst: 1000}); c.AddressLimits != got {
		t.Errorf("two keys set: %+v, want %+v (the others their defaults)", c.AddressLimits, got)
	}
	for _, tt := range []struct{ line, want string }{
		{"{sessions_per_second: 0}", "sessions_per_second 0 is outside 1..100000"},
		{"{sessions_burst: -3}", "sessions_burst -3 is outside 1..1000000"},
		{"{streams_per_second: 100001}", "streams_per_second 100001 is outside 1..100000"},
		{"{streams_burst: 1000001}", "streams_burst 1000001 is outside 1..1000000"},
		{"{streams_burst: 2.5}", "streams_burst must be a whole number"},
		{"{stream_burst: 10}", `unknown key "stream_burst"`},
	} {
		_, err := config.Parse([]byte(base+"address_limits: "+tt.line+"\n"), nil)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("address_limits: %s: %v, want %q", tt.line, err, tt.want)
		}
	}
}

// profiling: off unless the file says true; anything but true/false is
// refused with the key named.
func TestProfiling(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		line string
		want bool
	}{{"", false}, {"profiling: false\n", false}, {"profiling: true\n", true}} {
		if c := mustParse(t, tc.line+base); c.Profiling != tc.want {
			t.Errorf("%q: profiling = %v, want %v", tc.line, c.Profiling, tc.want)
		}
	}
	if _, err := config.Parse([]byte("profiling: yes please\n"+base), nil); err == nil || !strings.Contains(err.Error(), "profiling must be true or false") {
		t.Errorf("profiling: yes please: %v", err)
	}
}
