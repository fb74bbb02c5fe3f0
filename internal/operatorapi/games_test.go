package operatorapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

type catalogue struct {
	Status     string   `json:"status"`
	Operator   string   `json:"operator"`
	Currencies []string `json:"currencies"`
	Games      []map[string]any
}

func (e *env) games(t *testing.T, fields string) catalogue {
	t.Helper()
	r := e.post(t, "/v1/games", e.body(fields), acmeSecret)
	if r.Status != http.StatusOK {
		t.Fatalf("games: %d %s", r.Status, r.Raw)
	}
	var c catalogue
	mustDecode(t, r.Raw, &c)
	return c
}

// Rule GAME-5 GAME-6 GAME-7 GEN-8 GAME-8 GAME-9 LIM-8: every game enabled for the
// operator, the operator's currencies, and no limits without a currency.
func TestCatalogueWithoutCurrency(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.games(t, "")
	if c.Status != "ok" || c.Operator != "acme" {
		t.Fatalf("status %q operator %q", c.Status, c.Operator)
	}
	if fmt.Sprint(c.Currencies) != "[BRL USD]" {
		t.Fatalf("currencies = %v, want the operator's [BRL USD]", c.Currencies)
	}
	var ids []string
	for _, g := range c.Games {
		ids = append(ids, g["game_id"].(string))
		for _, k := range []string{"name", "studio", "category"} {
			if _, ok := g[k].(string); !ok {
				t.Errorf("%v: %s missing", g["game_id"], k)
			}
		}
		for _, k := range []string{"currency", "min_bet", "max_bet", "max_win"} {
			if _, ok := g[k]; ok {
				t.Errorf("%v carries %s although the request had no currency", g["game_id"], k)
			}
		}
	}
	if fmt.Sprint(ids) != "[crash crash-nodemo]" {
		t.Fatalf("games = %v, want the two enabled for acme (not crash-other)", ids)
	}
	if c.Games[0]["demo"] != true || c.Games[1]["demo"] != false || c.Games[0]["freebet"] != true {
		t.Fatalf("demo/freebet flags wrong: %v", c.Games)
	}
	if c.Games[0]["image_url"] != "https://games.test.example/crash.png" {
		t.Fatalf("image_url = %v", c.Games[0]["image_url"])
	}
	if _, ok := c.Games[1]["image_url"]; ok {
		t.Fatal("an unconfigured image_url is sent")
	}
}

// Rule GAME-10 LIM-9 LIM-11 LIM-10 GEN-4: with a currency each entry carries it and
// its limits in integer cents; an unknown limit is omitted, never zero.
func TestCatalogueLimitsPerCurrency(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tests := []struct {
		currency string
		want     map[string]any // absent key: must be omitted
	}{
		{"BRL", map[string]any{"min_bet": 100.0, "max_bet": 100000.0, "max_win": 10000000.0}},
		{"USD", map[string]any{"min_bet": 10.0, "max_bet": 50000.0}},
	}
	for _, tt := range tests {
		t.Run(tt.currency, func(t *testing.T) {
			c := e.games(t, fmt.Sprintf(`,"currency":%q`, tt.currency))
			for _, g := range c.Games {
				if g["currency"] != tt.currency {
					t.Fatalf("%v: currency = %v", g["game_id"], g["currency"])
				}
				for _, k := range []string{"min_bet", "max_bet", "max_win"} {
					got, present := g[k]
					want, expected := tt.want[k]
					if present != expected || got != want {
						t.Fatalf("%v %s = %v (present %v), want %v (present %v)", g["game_id"], k, got, present, want, expected)
					}
				}
			}
		})
	}
}

// Rule GAME-10 GAME-25 GEN-9 GEN-10: a currency not enabled for the operator is
// refused on /v1/games as on /v1/launch: 400 with the contract's code
// INTERNAL_ERROR (the contract fixes these routes' codes), the refusal's stable
// name in error_reason (CURRENCY_NOT_ENABLED, docs/ambiguities.md) and the
// message naming the currencies enabled; never a catalogue whose entries carry
// a currency that no launch accepts. Another 400 INTERNAL_ERROR carries no
// error_reason.
func TestCatalogueRefusesCurrencyNotEnabled(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, route := range []struct{ path, fields string }{
		{"/v1/games", `,"currency":"EUR"`},
		{"/v1/launch", `,"currency":"EUR","game_id":"crash","token":"` + token + `","player_id":"p1"`},
	} {
		r := e.post(t, route.path, e.body(route.fields), acmeSecret)
		wantError(t, r, http.StatusBadRequest, "INTERNAL_ERROR")
		if got := r.Body["error_reason"]; got != "CURRENCY_NOT_ENABLED" {
			t.Errorf("%s: error_reason = %v, want CURRENCY_NOT_ENABLED: %s", route.path, got, r.Raw)
		}
		if !strings.Contains(string(r.Raw), `\"EUR\" is not enabled for operator \"acme\" (enabled: BRL, USD)`) {
			t.Errorf("%s: the refusal does not name the currency and those enabled: %s", route.path, r.Raw)
		}
	}
	for _, route := range []struct{ path, fields string }{
		{"/v1/games", `,"currency":978`},
		{"/v1/launch", `,"game_id":"crash","demo":true,"lobby_url":"ftp://acme.example/"`},
	} {
		r := e.post(t, route.path, e.body(route.fields), acmeSecret)
		wantError(t, r, http.StatusBadRequest, "INTERNAL_ERROR")
		if got, ok := r.Body["error_reason"]; ok {
			t.Errorf("%s: error_reason = %v on another refusal: %s", route.path, got, r.Raw)
		}
	}
}

// Rule AMB-2 GAME-12: this installation never answers /v1/games with
// MISSING_GAME_ID (its request has no game_id); the code is declared only because
// the contract lists it. A stray game_id is ignored.
func TestCatalogueIgnoresGameID(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.games(t, `,"game_id":""`)
	if len(c.Games) != 2 {
		t.Fatalf("games = %v", c.Games)
	}
}

// Rule GEN-5 GEN-6: a currency of the wrong type is a body that does not match
// the schema: 400 INTERNAL_ERROR.
func TestCatalogueBadTypes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.post(t, "/v1/games", e.body(`,"currency":978`), acmeSecret)
	wantError(t, r, http.StatusBadRequest, "INTERNAL_ERROR")
}
