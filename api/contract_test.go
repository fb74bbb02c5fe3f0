package api_test

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/crashstudio/crashgame/gen/game"
	"github.com/crashstudio/crashgame/gen/wallet"
	"github.com/crashstudio/crashgame/internal/apitest"
)

const (
	gwGameDoc   = "game.v1.yaml"
	gwWalletDoc = "wallet.v1.yaml"
)

// ---- helpers ---------------------------------------------------------------

func gwOperation(t *testing.T, doc *openapi3.T, path string) *openapi3.Operation {
	t.Helper()
	item := doc.Paths.Value(path)
	if item == nil || item.Post == nil {
		t.Fatalf("no POST %s", path)
	}
	return item.Post
}

func gwRequestSchema(t *testing.T, doc *openapi3.T, path string) *openapi3.SchemaRef {
	t.Helper()
	rb := gwOperation(t, doc, path).RequestBody
	if rb == nil || rb.Value == nil {
		t.Fatalf("POST %s: no request body", path)
	}
	mt := rb.Value.Content.Get("application/json")
	if mt == nil || mt.Schema == nil {
		t.Fatalf("POST %s: no application/json request schema", path)
	}
	return mt.Schema
}

func gwResponse(t *testing.T, doc *openapi3.T, path, status string) *openapi3.Response {
	t.Helper()
	r := gwOperation(t, doc, path).Responses.Value(status)
	if r == nil || r.Value == nil {
		t.Fatalf("POST %s: no %s response", path, status)
	}
	return r.Value
}

func gwResponseSchema(t *testing.T, doc *openapi3.T, path, status string) *openapi3.SchemaRef {
	t.Helper()
	mt := gwResponse(t, doc, path, status).Content.Get("application/json")
	if mt == nil || mt.Schema == nil {
		t.Fatalf("POST %s %s: no application/json schema", path, status)
	}
	return mt.Schema
}

// gwAnyBody checks that a response accepts any body of any media type: one
// */* content whose schema constrains nothing.
func gwAnyBody(t *testing.T, path string, r *openapi3.Response) {
	t.Helper()
	if got := slices.Collect(maps.Keys(r.Content)); !slices.Equal(got, []string{"*/*"}) {
		t.Errorf("%s, a proxy's answer: content %v, want */* alone (its body may be anything)", path, got)
		return
	}
	s := r.Content["*/*"].Schema
	if s == nil || s.Value == nil {
		t.Errorf("%s, a proxy's answer: no schema", path)
		return
	}
	for _, v := range []any{"<html>502</html>", map[string]any{"status": "error"}, 42.0, ""} {
		if err := s.Value.VisitJSON(v); err != nil {
			t.Errorf("%s, a proxy's answer: the schema refuses %v: %v", path, v, err)
		}
	}
}

func gwComponent(t *testing.T, doc *openapi3.T, name string) *openapi3.Schema {
	t.Helper()
	s := doc.Components.Schemas[name]
	if s == nil || s.Value == nil {
		t.Fatalf("no schema %s", name)
	}
	return s.Value
}

// effective unwraps the `allOf: [$ref]` + description idiom used for
// documented references.
func gwEffective(s *openapi3.Schema) *openapi3.Schema {
	for s.Type == nil && len(s.AllOf) == 1 && len(s.Properties) == 0 {
		s = s.AllOf[0].Value
	}
	return s
}

func gwProperty(t *testing.T, s *openapi3.Schema, name string) *openapi3.Schema {
	t.Helper()
	p := s.Properties[name]
	if p == nil || p.Value == nil {
		t.Fatalf("no property %s", name)
	}
	return p.Value
}

func gwSortedSet(values ...string) []string {
	out := slices.Clone(values)
	slices.Sort(out)
	return slices.Compact(out)
}

// gwKnownStrings returns the known values of an open set (x-extensible-enum).
func gwKnownStrings(t *testing.T, s *openapi3.Schema) []string {
	t.Helper()
	raw, ok := s.Extensions["x-extensible-enum"]
	if !ok {
		return nil
	}
	return gwStringList(t, raw)
}

func gwEnumStrings(s *openapi3.Schema) []string {
	var out []string
	for _, v := range s.Enum {
		out = append(out, v.(string))
	}
	return gwSortedSet(out...)
}

func gwStringList(t *testing.T, v any) []string {
	t.Helper()
	list, ok := v.([]any)
	if !ok {
		t.Fatalf("not a list: %#v", v)
	}
	var out []string
	for _, e := range list {
		out = append(out, e.(string))
	}
	return gwSortedSet(out...)
}

// accepts reports whether value (any Go value, passed through JSON) validates.
func gwAccepts(t *testing.T, s *openapi3.Schema, value any) error {
	t.Helper()
	return s.VisitJSON(gwJSONValue(t, value), openapi3.MultiErrors())
}

func gwExpect(t *testing.T, s *openapi3.Schema, value any, ok bool) {
	t.Helper()
	err := gwAccepts(t, s, value)
	if ok && err != nil {
		t.Errorf("rejected, want accepted: %v", err)
	}
	if !ok && err == nil {
		t.Errorf("accepted, want rejected: %s", gwMustMarshal(t, value))
	}
}

func gwMustMarshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// with returns a copy of body with key set to value; absent (a sentinel)
// deletes the key.
func gwWith(body map[string]any, key string, value any) map[string]any {
	out := maps.Clone(body)
	if value == gwAbsent {
		delete(out, key)
	} else {
		out[key] = value
	}
	return out
}

type gwAbsentT struct{}

var gwAbsent = gwAbsentT{}

// exampleCodes returns the error_code values of every example of a response.
func gwExampleCodes(t *testing.T, r *openapi3.Response) []string {
	t.Helper()
	mt := r.Content.Get("application/json")
	if mt == nil {
		return nil
	}
	var codes []string
	values := []any{mt.Example}
	for _, ex := range mt.Examples {
		values = append(values, ex.Value.Value)
	}
	for _, v := range values {
		if m, ok := gwJSONValue(t, v).(map[string]any); ok {
			if c, ok := m["error_code"].(string); ok {
				codes = append(codes, c)
			}
		}
	}
	return gwSortedSet(codes...)
}

func gwExampleStatuses(t *testing.T, r *openapi3.Response) []string {
	t.Helper()
	var out []string
	for _, ex := range r.Content.Get("application/json").Examples {
		if m, ok := gwJSONValue(t, ex.Value.Value).(map[string]any); ok {
			out = append(out, m["status"].(string))
		}
	}
	return gwSortedSet(out...)
}

// ---- sample bodies -----------------------------------------------------------

func gwEnvelope() map[string]any {
	return map[string]any{
		"operator":   "acme-bet",
		"timestamp":  int64(1795000045120),
		"request_id": "req-01J9ZM1A2B3C4D5E6F7G8H9J0K",
		"currency":   "BRL",
		"game_id":    "crash-classic",
	}
}

func gwBalanceBody() map[string]any {
	b := gwEnvelope()
	b["token"] = "7d1f0c9a4e3b4b6f9a2c5e8d1b7f3a60"
	return b
}

func gwBetBody() map[string]any {
	b := gwBalanceBody()
	b["player_id"] = "player-100234"
	b["amount"] = 1000
	b["transaction_id"] = "bet-5c2a1d7e"
	b["round_id"] = "round-1795000040000"
	b["freebet_id"] = nil
	return b
}

func gwWinBody() map[string]any {
	b := gwBetBody()
	b["transaction_id"] = "win-5c2a1d7e"
	b["bet_id"] = "bet-5c2a1d7e"
	b["amount"] = 2350
	b["type"] = "win"
	return b
}

func gwRollbackBody() map[string]any {
	b := gwBetBody()
	delete(b, "freebet_id")
	b["transaction_id"] = "rb-5c2a1d7e"
	b["bet_id"] = "bet-5c2a1d7e"
	b["reason"] = "cancelled_by_player"
	return b
}

var gwWalletBodies = map[string]func() map[string]any{
	"/balance":  gwBalanceBody,
	"/bet":      gwBetBody,
	"/win":      gwWinBody,
	"/rollback": gwRollbackBody,
}

// ---- the contract's tables, hard-coded ----------------------------------------

// gwGameErrors is "Errors: Game direction" and the per-route error lists of
// POST /v1/games and POST /v1/launch.
var gwGameErrors = map[string]map[string][]string{
	"/v1/games": {
		"400": {"INTERNAL_ERROR", "MISSING_GAME_ID"},
		"401": {"INVALID_SIGNATURE"},
		"500": {"INTERNAL_ERROR"},
	},
	"/v1/launch": {
		"400": {"MISSING_GAME_ID", "MISSING_TOKEN", "MISSING_PLAYER_ID", "INVALID_TOKEN", "DEMO_NOT_AVAILABLE", "INTERNAL_ERROR"},
		"401": {"INVALID_SIGNATURE"},
		"404": {"GAME_NOT_FOUND"},
		"500": {"INTERNAL_ERROR"},
	},
}

// gwWalletStatuses is "Wallet HTTP statuses listed per route" (plus 5XX, the
// transport failure), with the codes the contract names for a route and
// status; each must appear among that response's examples.
var gwWalletStatuses = map[string]map[string][]string{
	"/balance": {
		"200": nil,
		"401": {"TOKEN_INVALID", "TOKEN_EXPIRED", "INVALID_SIGNATURE"},
		"403": nil,
		"5XX": nil,
	},
	"/bet": {
		"200": {"INSUFFICIENT_FUNDS", "TOKEN_EXPIRED", "TOKEN_INVALID", "PLAYER_NOT_FOUND", "CURRENCY_MISMATCH", "PLAYER_BLOCKED", "INTERNAL_ERROR"},
		"400": nil,
		"401": {"INVALID_SIGNATURE"},
		"402": {"INSUFFICIENT_FUNDS"},
		"403": nil,
		"409": {"TOKEN_EXPIRED", "DUPLICATE_TRANSACTION"},
		"5XX": nil,
	},
	"/win": {
		"200": {"BET_NOT_FOUND"},
		"400": nil,
		"401": {"INVALID_SIGNATURE"},
		"404": {"BET_NOT_FOUND"},
		"5XX": nil,
	},
	"/rollback": {
		"200": nil,
		"400": nil,
		"401": {"INVALID_SIGNATURE"},
		"5XX": nil,
	},
}

var (
	gwContractGameCodes = gwSortedSet("MISSING_GAME_ID", "MISSING_TOKEN", "MISSING_PLAYER_ID", "INVALID_TOKEN",
		"DEMO_NOT_AVAILABLE", "GAME_NOT_FOUND", "INVALID_SIGNATURE", "INTERNAL_ERROR")
	gwContractWalletFinal = gwSortedSet("INSUFFICIENT_FUNDS", "TOKEN_EXPIRED", "TOKEN_INVALID", "PLAYER_NOT_FOUND",
		"BET_NOT_FOUND", "CURRENCY_MISMATCH", "PLAYER_BLOCKED")
	gwContractWalletCodes = gwSortedSet(append(slices.Clone(gwContractWalletFinal),
		"INTERNAL_ERROR", "INVALID_SIGNATURE", "DUPLICATE_TRANSACTION")...)
)

// ---- versioning, routes, security ------------------------------------------------

// Rule VER-1 VER-2 VER-3 GEN-3
func TestVersioningAndPaths(t *testing.T) {
	t.Parallel()
	tests := []struct {
		doc, version, server, variable string
		paths                          []string
	}{
		// The contract's two routes, and those this installation added in
		// 1.1.0 (the fairness contributions, the back office).
		{gwGameDoc, "1.3.0", "{base_url}", "base_url", []string{"/v1/games", "/v1/launch", "/v1/fairness/contributions",
			"/v1/rounds/details", "/v1/bets/history", "/v1/transactions", "/v1/transactions/redeliver",
			"/v1/rounds/support-link", "/v1/transactions/export"}},
		{gwWalletDoc, "1.0.0", "{wallet_url}", "wallet_url", []string{"/balance", "/bet", "/win", "/rollback"}},
	}
	for _, tc := range tests {
		t.Run(tc.doc, func(t *testing.T) {
			t.Parallel()
			doc := gwLoadDocument(t, tc.doc)
			if tc.version != "" && doc.Info.Version != tc.version {
				t.Errorf("info.version = %q, want %q", doc.Info.Version, tc.version)
			}
			if got, want := gwSortedSet(doc.Paths.Keys()...), gwSortedSet(tc.paths...); !slices.Equal(got, want) {
				t.Errorf("paths = %v, want %v", got, want)
			}
			for _, p := range doc.Paths.Keys() {
				if gotV1 := strings.HasPrefix(p, "/v1/"); gotV1 != (tc.doc == gwGameDoc) {
					t.Errorf("%s: version in path = %v", p, gotV1)
				}
			}
			if len(doc.Servers) != 1 || doc.Servers[0].URL != tc.server {
				t.Fatalf("servers = %v, want one %s", doc.Servers, tc.server)
			}
			v := doc.Servers[0].Variables[tc.variable]
			if v == nil || !strings.HasPrefix(v.Default, "https://") {
				t.Errorf("server variable %s must default to an https address", tc.variable)
			}
		})
	}
}

// Every route is a POST with a required JSON body, and answers JSON.
// Rule GEN-2 GEN-3
func TestRoutesArePostWithJSON(t *testing.T) {
	t.Parallel()
	for _, name := range []string{gwGameDoc, gwWalletDoc} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			doc := gwLoadDocument(t, name)
			for path, item := range doc.Paths.Map() {
				if ops := item.Operations(); len(ops) != 1 || item.Post == nil {
					t.Errorf("%s: operations %v, want POST only", path, slices.Collect(maps.Keys(ops)))
					continue
				}
				rb := item.Post.RequestBody.Value
				if !rb.Required || !slices.Equal(slices.Collect(maps.Keys(rb.Content)), []string{"application/json"}) {
					t.Errorf("%s: request body must be required application/json", path)
				}
				for status, r := range item.Post.Responses.Map() {
					if status == "5XX" || (name == gwGameDoc && status == "default") {
						gwAnyBody(t, path, r.Value) // a proxy's answer: any body
						continue
					}
					if _, ok := r.Value.Content["application/json"]; !ok {
						t.Errorf("%s %s: no application/json content: the game's own answers are JSON", path, status)
					}
					for mime := range r.Value.Content {
						// A listed 5xx may also come from a proxy in front of
						// the game, with a body of its own: the game's own
						// answer stays JSON.
						if mime != "application/json" && !((mime == "text/html" || mime == "text/plain") && strings.HasPrefix(status, "5")) {
							t.Errorf("%s %s: content %s", path, status, mime)
						}
					}
				}
			}
		})
	}
}

// X-Signature is an apiKey header scheme in both documents; the game routes
// require it alone (no Bearer anywhere), the wallet routes require Bearer and
// X-Signature together. Neither is a header parameter, and timestamp travels
// in the body, never in a header.
// Rule AUTH-1 AUTH-4 AUTH-5 AUTH-6
func TestSecuritySchemes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		doc     string
		schemes []string
	}{
		{gwGameDoc, []string{"XSignature"}},
		{gwWalletDoc, []string{"BearerAuth", "XSignature"}},
	}
	for _, tc := range tests {
		t.Run(tc.doc, func(t *testing.T) {
			t.Parallel()
			doc := gwLoadDocument(t, tc.doc)
			schemes := doc.Components.SecuritySchemes
			if got := gwSortedSet(slices.Collect(maps.Keys(schemes))...); !slices.Equal(got, tc.schemes) {
				t.Fatalf("security schemes = %v, want %v", got, tc.schemes)
			}
			sig := schemes["XSignature"].Value
			if sig.Type != "apiKey" || sig.In != "header" || sig.Name != "X-Signature" {
				t.Errorf("XSignature = %s in %s named %s, want apiKey in header X-Signature", sig.Type, sig.In, sig.Name)
			}
			if !strings.Contains(sig.Description, "HMAC-SHA256") || !strings.Contains(sig.Description, "5 minutes") {
				t.Errorf("XSignature description must explain the HMAC and the 5 minute window")
			}
			if b, ok := schemes["BearerAuth"]; ok {
				if b.Value.Type != "http" || b.Value.Scheme != "bearer" {
					t.Errorf("BearerAuth = %s/%s, want http/bearer", b.Value.Type, b.Value.Scheme)
				}
			}
			for path, item := range doc.Paths.Map() {
				op := item.Post
				if op.Security == nil || len(*op.Security) != 1 {
					t.Errorf("%s: want exactly one security requirement", path)
					continue
				}
				if got := gwSortedSet(slices.Collect(maps.Keys((*op.Security)[0]))...); !slices.Equal(got, tc.schemes) {
					t.Errorf("%s: security %v, want %v together", path, got, tc.schemes)
				}
				for _, p := range op.Parameters {
					if p.Value.In == "header" {
						t.Errorf("%s: header parameter %s (credentials are security schemes)", path, p.Value.Name)
					}
				}
				req := gwRequestSchema(t, doc, path).Value
				if !slices.Contains(req.Required, "timestamp") {
					t.Errorf("%s: timestamp must be a required body field", path)
				}
			}
		})
	}
}

// ---- game direction ----------------------------------------------------------------

// Both game requests require operator and timestamp (int64). A launch with
// only operator, timestamp, game_id, token and player_id is complete; a demo
// launch needs neither token nor player_id. The token rules (16 characters,
// different from player_id) are the server's, answered with INVALID_TOKEN,
// so the schema accepts any token string, and one of exactly 16 characters.
// Rule GAME-1 GAME-22 GAME-24 LIM-4
func TestGameRequests(t *testing.T) {
	t.Parallel()
	doc := gwLoadDocument(t, gwGameDoc)
	games := gwRequestSchema(t, doc, "/v1/games").Value
	launch := gwRequestSchema(t, doc, "/v1/launch").Value
	for name, s := range map[string]*openapi3.Schema{"games": games, "launch": launch} {
		for _, f := range []string{"operator", "timestamp"} {
			if !slices.Contains(s.Required, f) {
				t.Errorf("%s: %s not required", name, f)
			}
		}
		if ts := gwProperty(t, s, "timestamp"); !ts.Type.Is("integer") || ts.Format != "int64" {
			t.Errorf("%s: timestamp must be integer int64", name)
		}
	}
	if got := gwSortedSet(launch.Required...); !slices.Equal(got, gwSortedSet("operator", "timestamp", "game_id")) {
		t.Errorf("launch required = %v", got)
	}
	if gwProperty(t, launch, "token").MinLength != 0 {
		t.Errorf("token minLength must stay in the description: the server answers INVALID_TOKEN")
	}
	if !strings.Contains(gwProperty(t, launch, "token").Description, "16 characters") {
		t.Errorf("token description must state the 16 character minimum")
	}
	minimal := map[string]any{
		"operator": "acme-bet", "timestamp": int64(1795000000000), "game_id": "crash-classic",
		"token": "b3c8e1f24a9d4e7c8f0a6d2b5e9c1f47", "player_id": "player-100235",
	}
	tests := []struct {
		name   string
		schema *openapi3.Schema
		body   map[string]any
		ok     bool
	}{
		{"launch minimal", launch, minimal, true},
		{"launch token of 16", launch, gwWith(minimal, "token", "0123456789abcdef"), true},
		{"launch demo without token and player", launch, gwWith(gwWith(gwWith(minimal, "token", gwAbsent), "player_id", gwAbsent), "demo", true), true},
		{"launch every optional field", launch, gwWith(gwWith(gwWith(gwWith(gwWith(gwWith(gwWith(gwWith(minimal,
			"currency", "BRL"), "language", "pt"), "player_name", "Joana"), "theme", "dark"), "demo", false),
			"mobile", true), "lobby_url", "https://op.example/lobby"), "deposit_url", "https://op.example/deposit"), true},
		{"launch with every responsible gambling control", launch, gwWith(minimal, "responsible_gambling",
			map[string]any{"session_clock": true, "reality_check_minutes": 60, "inactivity_timeout_minutes": 30}), true},
		{"launch with an empty responsible_gambling", launch, gwWith(minimal, "responsible_gambling", map[string]any{}), true},
		{"launch reality check of 0 minutes", launch, gwWith(minimal, "responsible_gambling", map[string]any{"reality_check_minutes": 0}), false},
		{"launch reality check over a day", launch, gwWith(minimal, "responsible_gambling", map[string]any{"reality_check_minutes": 1441}), false},
		{"launch inactivity as a fraction", launch, gwWith(minimal, "responsible_gambling", map[string]any{"inactivity_timeout_minutes": 1.5}), false},
		{"launch session clock as a string", launch, gwWith(minimal, "responsible_gambling", map[string]any{"session_clock": "yes"}), false},
		{"launch without operator", launch, gwWith(minimal, "operator", gwAbsent), false},
		{"launch timestamp as string", launch, gwWith(minimal, "timestamp", "1795000000000"), false},
		{"launch currency lower case", launch, gwWith(minimal, "currency", "brl"), false},
		{"games minimal", games, map[string]any{"operator": "acme-bet", "timestamp": 1795000000000}, true},
		{"games with currency", games, map[string]any{"operator": "acme-bet", "timestamp": 1795000000000, "currency": "USD"}, true},
		{"games without timestamp", games, map[string]any{"operator": "acme-bet"}, false},
		{"games timestamp float", games, map[string]any{"operator": "acme-bet", "timestamp": 1795000000000.5}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			gwExpect(t, tc.schema, tc.body, tc.ok)
		})
	}
}

// language is a free string: pt, en, es and any other value (which falls back
// to the installation default) are accepted, and so is its absence.
// Rule LANG-1 LANG-2 LANG-3
func TestLaunchLanguage(t *testing.T) {
	t.Parallel()
	doc := gwLoadDocument(t, gwGameDoc)
	if lang := gwComponent(t, doc, "Language"); lang.Enum != nil || !lang.Type.Is("string") {
		t.Errorf("Language must be a string without enum")
	}
	launch := gwRequestSchema(t, doc, "/v1/launch").Value
	base := map[string]any{"operator": "acme-bet", "timestamp": 1795000000000, "game_id": "crash-classic",
		"token": "b3c8e1f24a9d4e7c8f0a6d2b5e9c1f47", "player_id": "player-100235"}
	for _, tc := range []struct {
		name  string
		value any
		ok    bool
	}{
		{"pt", "pt", true}, {"en", "en", true}, {"es", "es", true},
		{"xx", "xx", true}, {"de-DE", "de-DE", true}, {"empty", "", true},
		{"absent", gwAbsent, true}, {"number", 7, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			gwExpect(t, launch, gwWith(base, "language", tc.value), tc.ok)
		})
	}
}

// Rule GAME-6 GAME-8 GAME-9 GEN-7 GEN-8
func TestGamesResponse(t *testing.T) {
	t.Parallel()
	doc := gwLoadDocument(t, gwGameDoc)
	s := gwResponseSchema(t, doc, "/v1/games", "200").Value
	if got := gwSortedSet(s.Required...); !slices.Equal(got, gwSortedSet("status", "currencies", "games")) {
		t.Errorf("GamesResponse required = %v", got)
	}
	entry := gwComponent(t, doc, "CatalogueGame")
	if got := gwSortedSet(entry.Required...); !slices.Equal(got, gwSortedSet("game_id", "name", "studio", "category")) {
		t.Errorf("CatalogueGame required = %v", got)
	}
	if cur := gwComponent(t, doc, "Currency"); cur.Pattern != "^[A-Z]{3}$" || cur.Enum != nil {
		t.Errorf("Currency must be an ISO 4217 pattern without a fixed list (pattern %q)", cur.Pattern)
	}
	if cs := gwProperty(t, s, "currencies"); !cs.Type.Is("array") || cs.Items.Ref != "#/components/schemas/Currency" {
		t.Errorf("currencies must be an array of Currency")
	}
	game := map[string]any{"game_id": "crash-classic", "name": "Crash Classic", "studio": "Crash Studio", "category": "crash"}
	body := func(g map[string]any) map[string]any {
		return map[string]any{"status": "ok", "operator": "acme-bet", "currencies": []any{"BRL", "USD"}, "games": []any{g}}
	}
	tests := []struct {
		name string
		body map[string]any
		ok   bool
	}{
		{"minimal entry", body(game), true},
		{"every optional field", body(gwWith(gwWith(gwWith(gwWith(gwWith(gwWith(gwWith(gwWith(gwWith(game,
			"demo", true), "mobile", true), "desktop", false), "freebet", true), "image_url", "https://g.example/i.png"),
			"currency", "BRL"), "min_bet", 100), "max_bet", 500000), "max_win", 100000000)), true},
		{"no operator", gwWith(body(game), "operator", gwAbsent), true},
		{"no currencies", gwWith(body(game), "currencies", gwAbsent), false},
		{"no games", gwWith(body(game), "games", gwAbsent), false},
		{"empty catalogue", gwWith(body(game), "games", []any{}), true},
		{"status error", gwWith(body(game), "status", "error"), false},
		{"entry without studio", body(gwWith(game, "studio", gwAbsent)), false},
		{"entry without category", body(gwWith(game, "category", gwAbsent)), false},
		{"demo as string", body(gwWith(game, "demo", "yes")), false},
		{"freebet as number", body(gwWith(game, "freebet", 1)), false},
		{"image_url as number", body(gwWith(game, "image_url", 3)), false},
		{"currency lower case", body(gwWith(game, "currency", "brl")), false},
		{"currency of four letters", gwWith(body(game), "currencies", []any{"REAL"}), false},
		{"min_bet float", body(gwWith(game, "min_bet", 1.5)), false},
		{"max_win negative", body(gwWith(game, "max_win", -1)), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			gwExpect(t, s, tc.body, tc.ok)
		})
	}
}

// Rule GAME-28
func TestLaunchResponse(t *testing.T) {
	t.Parallel()
	doc := gwLoadDocument(t, gwGameDoc)
	r := gwResponse(t, doc, "/v1/launch", "200")
	s := r.Content.Get("application/json").Schema.Value
	if got := gwSortedSet(s.Required...); !slices.Equal(got, gwSortedSet("status", "url")) {
		t.Errorf("LaunchResponse required = %v", got)
	}
	if u := gwProperty(t, s, "url"); u.Format != "uri" || !strings.Contains(u.Description, "{base_url}/?sid=<ticket>&lang=<language>&cur=<currency>") {
		t.Errorf("url must be format uri and document the URL shape")
	}
	shape := regexp.MustCompile(`^https://games\.example\.com/\?sid=[A-Za-z0-9_-]+&lang=[a-z]{2}&cur=([A-Z]{3})?$`)
	for name, ex := range r.Content.Get("application/json").Examples {
		url := gwJSONValue(t, ex.Value.Value).(map[string]any)["url"].(string)
		if !shape.MatchString(url) {
			t.Errorf("example %s: url %q does not have the contract's shape", name, url)
		}
		if strings.Contains(url, "player-") || strings.Contains(url, "7d1f0c9a4e3b4b6f9a2c5e8d1b7f3a60") {
			t.Errorf("example %s: url carries the token or the player_id", name)
		}
	}
}

// Each game route declares exactly the error statuses the contract lists (and
// 5XX and default, whose body may be anything: what stands in front of the game
// answers them, never the game), and each status's error_code lists exactly the
// contract's codes for that route and status in x-extensible-enum (AMB-2:
// MISSING_GAME_ID stays declared on /v1/games), with one example per code. The
// error_code is an open string, so that a generated client reads a later
// version's answer; the game's tests hold its answers to the known values
// (apitest.KnownValues). The error body is status (= error, a closed enum: the
// contract's envelope), error_code, optional error_message, the optional
// diagnostic request_id, and on 400 the optional error_reason (since 1.2.0).
// Rule GAME-2 GAME-3 GAME-11 GAME-12 GAME-13 GAME-14 GAME-15 GAME-16 GAME-17 GAME-18 GAME-19 GAME-20 GAME-21 GEN-9 GEN-10
func TestGameErrorTable(t *testing.T) {
	t.Parallel()
	doc := gwLoadDocument(t, gwGameDoc)
	for path, statuses := range gwGameErrors {
		t.Run(path, func(t *testing.T) {
			t.Parallel()
			want := append(slices.Collect(maps.Keys(statuses)), "200", "5XX", "default")
			if got := gwSortedSet(gwOperation(t, doc, path).Responses.Keys()...); !slices.Equal(got, gwSortedSet(want...)) {
				t.Errorf("statuses = %v, want %v", got, gwSortedSet(want...))
			}
			for _, status := range []string{"5XX", "default"} {
				gwAnyBody(t, path, gwResponse(t, doc, path, status))
			}
			for status, codes := range statuses {
				t.Run(status, func(t *testing.T) {
					t.Parallel()
					s := gwResponseSchema(t, doc, path, status).Value
					if got := gwSortedSet(s.Required...); !slices.Equal(got, []string{"error_code", "status"}) {
						t.Errorf("required = %v, want error_code and status", got)
					}
					props := []string{"status", "error_code", "error_message", "request_id"}
					if status == "400" {
						props = append(props, "error_reason")
					}
					if got := gwSortedSet(slices.Collect(maps.Keys(s.Properties))...); !slices.Equal(got, gwSortedSet(props...)) {
						t.Errorf("properties = %v, want %v", got, gwSortedSet(props...))
					}
					if got := gwEnumStrings(gwProperty(t, s, "status")); !slices.Equal(got, []string{"error"}) {
						t.Errorf("status enum = %v", got)
					}
					ec := gwEffective(gwProperty(t, s, "error_code"))
					if ec.Enum != nil || !ec.Type.Is("string") {
						t.Errorf("error_code must be an open string, not enum %v", ec.Enum)
					}
					if got := gwKnownStrings(t, ec); !slices.Equal(got, gwSortedSet(codes...)) {
						t.Errorf("error_code x-extensible-enum = %v, want %v", got, gwSortedSet(codes...))
					}
					if got := gwExampleCodes(t, gwResponse(t, doc, path, status)); !slices.Equal(got, gwSortedSet(codes...)) {
						t.Errorf("example codes = %v, want one example per code %v", got, gwSortedSet(codes...))
					}
					// Open: every code validates, the contract's and one from a
					// later version alike.
					for _, code := range append(slices.Clone(gwContractGameCodes), "SOMETHING_NEW") {
						body := map[string]any{"status": "error", "error_code": code, "error_message": "x", "request_id": "r-1"}
						gwExpect(t, s, body, true)
					}
					gwExpect(t, s, map[string]any{"status": "error"}, false)
					gwExpect(t, s, map[string]any{"status": "ok", "error_code": codes[0]}, false)
				})
			}
		})
	}
}

// ---- wallet direction --------------------------------------------------------------

// Each wallet request is the Envelope (operator, timestamp, request_id,
// currency required; game_id optional) plus exactly the contract's field set,
// all required. The published schemas are open (a wallet ignores a field it
// does not know), and the tests' strict overlay (apitest.CloseRequests), which
// checks what the game sends, refuses anything else.
// Rule ENV-1 ENV-2 ENV-3 ENV-5 ENV-7 ENV-8 ENV-9 ENV-10 ENV-15 ENV-16 BAL-1 BET-1 WIN-1 RB-1
func TestWalletRequestFieldSets(t *testing.T) {
	t.Parallel()
	doc := gwLoadDocument(t, gwWalletDoc)
	strict, err := openapi3.NewLoader().LoadFromFile(gwWalletDoc)
	if err != nil {
		t.Fatal(err)
	}
	apitest.CloseRequests(strict)
	envelope := []string{"operator", "timestamp", "request_id", "currency"}
	routes := map[string][]string{
		"/balance":  {"token"},
		"/bet":      {"player_id", "token", "amount", "transaction_id", "round_id", "freebet_id"},
		"/win":      {"player_id", "token", "amount", "transaction_id", "bet_id", "round_id", "type", "freebet_id"},
		"/rollback": {"player_id", "token", "amount", "transaction_id", "bet_id", "round_id", "reason"},
	}
	for path, fields := range routes {
		t.Run(path, func(t *testing.T) {
			t.Parallel()
			s := gwRequestSchema(t, doc, path).Value
			required := gwSortedSet(append(slices.Clone(envelope), fields...)...)
			if got := gwSortedSet(s.Required...); !slices.Equal(got, required) {
				t.Errorf("required = %v, want %v", got, required)
			}
			all := gwSortedSet(append(slices.Clone(required), "game_id")...)
			if got := gwSortedSet(slices.Collect(maps.Keys(s.Properties))...); !slices.Equal(got, all) {
				t.Errorf("properties = %v, want %v", got, all)
			}
			if s.AdditionalProperties.Has != nil && !*s.AdditionalProperties.Has {
				t.Errorf("the published request schema must be open (a wallet ignores unknown fields)")
			}
			closed := gwRequestSchema(t, strict, path).Value
			if ts := gwProperty(t, s, "timestamp"); !ts.Type.Is("integer") || ts.Format != "int64" {
				t.Errorf("timestamp must be integer int64 (milliseconds)")
			}
			if cur := gwEffective(gwProperty(t, s, "currency")); cur.Pattern != "^[A-Z]{3}$" {
				t.Errorf("currency must be a Currency")
			}
			body := gwWalletBodies[path]()
			gwExpect(t, s, body, true)
			gwExpect(t, s, gwWith(body, "game_id", gwAbsent), true)
			for _, f := range required {
				gwExpect(t, s, gwWith(body, f, gwAbsent), false)
			}
			// A field added later: the published schema accepts it, the
			// overlay that checks the game's own requests does not.
			gwExpect(t, s, gwWith(body, "extra", "x"), true)
			gwExpect(t, closed, body, true)
			gwExpect(t, closed, gwWith(body, "extra", "x"), false)
			if path == "/balance" {
				gwExpect(t, closed, gwWith(body, "player_id", "player-100234"), false)
				gwExpect(t, closed, gwWith(body, "transaction_id", "tx-1"), false)
			}
		})
	}
}

// freebet_id is required and nullable on /bet and /win (null accepted, the
// key missing rejected), and absent from /rollback (any freebet_id rejected).
// Rule BET-4 WIN-17 RB-1
func TestWalletFreebetID(t *testing.T) {
	t.Parallel()
	doc := gwLoadDocument(t, gwWalletDoc)
	tests := []struct {
		path  string
		value any
		ok    bool
	}{
		{"/bet", nil, true},
		{"/bet", "spring-2026-0042#3", true},
		{"/bet", gwAbsent, false},
		{"/bet", 42, false},
		{"/win", nil, true},
		{"/win", "spring-2026-0042#3", true},
		{"/win", gwAbsent, false},
		{"/rollback", gwAbsent, true},
		{"/rollback", nil, false},
		{"/rollback", "spring-2026-0042#3", false},
	}
	for _, tc := range tests {
		t.Run(tc.path+"/"+gwMustMarshal(t, tc.value), func(t *testing.T) {
			t.Parallel()
			s := gwRequestSchema(t, doc, tc.path).Value
			gwExpect(t, s, gwWith(gwWalletBodies[tc.path](), "freebet_id", tc.value), tc.ok)
			if tc.path != "/rollback" {
				if p := gwProperty(t, s, "freebet_id"); !p.Nullable || !slices.Contains(s.Required, "freebet_id") {
					t.Errorf("freebet_id must be required and nullable")
				}
			} else if _, ok := s.Properties["freebet_id"]; ok {
				t.Errorf("/rollback must not declare freebet_id")
			}
		})
	}
}

// type is required on /win and its enumeration is exactly win, freebet,
// zero_win, lose (AMB-4: the reference values and the older machine-readable
// enumeration together).
// Rule WIN-2 WIN-6 WIN-7
func TestWinTypeEnum(t *testing.T) {
	t.Parallel()
	doc := gwLoadDocument(t, gwWalletDoc)
	s := gwRequestSchema(t, doc, "/win").Value
	if !slices.Contains(s.Required, "type") {
		t.Errorf("type not required")
	}
	typ := gwEffective(gwProperty(t, s, "type"))
	if got := gwEnumStrings(typ); !slices.Equal(got, gwSortedSet("win", "freebet", "zero_win", "lose")) {
		t.Errorf("type enum = %v", got)
	}
	for _, v := range []string{"win", "freebet", "zero_win", "lose"} {
		if !strings.Contains(typ.Description, "`"+v+"`") {
			t.Errorf("type description does not document %s", v)
		}
	}
	for _, tc := range []struct {
		value any
		ok    bool
	}{
		{"win", true}, {"freebet", true}, {"zero_win", true}, {"lose", true},
		{"WIN", false}, {"bonus", false}, {"", false}, {nil, false}, {gwAbsent, false},
	} {
		t.Run(gwMustMarshal(t, tc.value), func(t *testing.T) {
			t.Parallel()
			gwExpect(t, s, gwWith(gwWinBody(), "type", tc.value), tc.ok)
		})
	}
}

// moneyFields lists every money property (amount, balance and the catalogue
// limits) of a document's component schemas.
func gwMoneyFields(doc *openapi3.T) map[string]*openapi3.Schema {
	out := map[string]*openapi3.Schema{}
	names := []string{"amount", "balance", "min_bet", "max_bet", "max_win"}
	for schemaName, ref := range doc.Components.Schemas {
		for prop, p := range ref.Value.Properties {
			if slices.Contains(names, prop) {
				out[schemaName+"."+prop] = p.Value
			}
		}
	}
	return out
}

// Every money field of both documents is an integer int64 with minimum 0
// (the freebet grant amount: minimum 1): a float, a string and a negative
// value are rejected, 2^53-1 is accepted.
// Rule GEN-4 GEN-5 GEN-6 LIM-9
func TestMoney(t *testing.T) {
	t.Parallel()
	for _, name := range []string{gwGameDoc, gwWalletDoc} {
		doc := gwLoadDocument(t, name)
		cents := gwComponent(t, doc, "Cents")
		if !cents.Type.Is("integer") || cents.Format != "int64" || cents.Min == nil || *cents.Min != 0 {
			t.Errorf("%s: Cents must be integer int64 minimum 0", name)
		}
		fields := gwMoneyFields(doc)
		if len(fields) == 0 {
			t.Fatalf("%s: no money field found", name)
		}
		for field, s := range fields {
			t.Run(name+"/"+field, func(t *testing.T) {
				t.Parallel()
				e := gwEffective(s)
				if !e.Type.Is("integer") || e.Format != "int64" || e.Min == nil || *e.Min < 0 {
					t.Fatalf("%s must be integer int64 with a minimum of at least 0", field)
				}
				for _, tc := range []struct {
					value any
					ok    bool
				}{
					{1.5, false}, {"100", false}, {-1, false}, {356.0001, false},
					{int64(9007199254740991), true}, {356, true}, {0, *e.Min == 0},
				} {
					if err := gwAccepts(t, s, tc.value); (err == nil) != tc.ok {
						t.Errorf("%v: accepted = %v, want %v", tc.value, err == nil, tc.ok)
					}
				}
			})
		}
	}
}

// A freebet grant: id (non-empty string) and amount (integer, at least 1)
// required, quantity optional 1..1000 with default 1; grants ride only on the
// /balance success body.
// Rule FB-2 FB-4 LIM-6 BAL-10
func TestFreebetGrant(t *testing.T) {
	t.Parallel()
	doc := gwLoadDocument(t, gwWalletDoc)
	g := gwComponent(t, doc, "FreebetGrant")
	if got := gwSortedSet(g.Required...); !slices.Equal(got, gwSortedSet("id", "amount")) {
		t.Errorf("required = %v", got)
	}
	if got := gwSortedSet(slices.Collect(maps.Keys(g.Properties))...); !slices.Equal(got, gwSortedSet("id", "amount", "quantity")) {
		t.Errorf("properties = %v, want id, amount, quantity (the total is not a field)", got)
	}
	q := gwProperty(t, g, "quantity")
	if !q.Type.Is("integer") || q.Min == nil || *q.Min != 1 || q.Max == nil || *q.Max != 1000 || q.Default != float64(1) {
		t.Errorf("quantity must be integer 1..1000 default 1, got min %v max %v default %v", q.Min, q.Max, q.Default)
	}
	if a := gwProperty(t, g, "amount"); !a.Type.Is("integer") || a.Min == nil || *a.Min != 1 {
		t.Errorf("amount must be an integer of minimum 1")
	}
	items := gwProperty(t, gwComponent(t, doc, "BalanceSuccess"), "freebets").Items
	if items == nil || items.Ref != "#/components/schemas/FreebetGrant" {
		t.Errorf("BalanceSuccess.freebets must be an array of FreebetGrant")
	}
	grant := map[string]any{"id": "spring-2026-0042", "amount": 200}
	for _, tc := range []struct {
		name  string
		grant map[string]any
		ok    bool
	}{
		{"quantity absent", grant, true},
		{"quantity 1", gwWith(grant, "quantity", 1), true},
		{"quantity 1000", gwWith(grant, "quantity", 1000), true},
		{"quantity 0", gwWith(grant, "quantity", 0), false},
		{"quantity 1001", gwWith(grant, "quantity", 1001), false},
		{"quantity 2.5", gwWith(grant, "quantity", 2.5), false},
		{"amount 1", gwWith(grant, "amount", 1), true},
		{"amount 0", gwWith(grant, "amount", 0), false},
		{"amount -200", gwWith(grant, "amount", -200), false},
		{"amount 2.5", gwWith(grant, "amount", 2.5), false},
		{"amount absent", gwWith(grant, "amount", gwAbsent), false},
		{"id empty", gwWith(grant, "id", ""), false},
		{"id absent", gwWith(grant, "id", gwAbsent), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			gwExpect(t, g, tc.grant, tc.ok)
		})
	}
}

// Success bodies: status and balance required on every route; on /balance
// also player_id and currency (AMB-14 reading B); currency, player_id
// (AMB-27), the operator's transaction_id optional elsewhere. Error body:
// status and error_code required, error_message and balance optional.
// Response schemas stay open to fields the operator adds.
// Rule ENV-17 ENV-18 ENV-19 BAL-8 WERR-5 WERR-7
func TestWalletResponseBodies(t *testing.T) {
	t.Parallel()
	doc := gwLoadDocument(t, gwWalletDoc)
	tests := []struct {
		schema             string
		required, optional []string
	}{
		{"BalanceSuccess", []string{"status", "player_id", "balance", "currency"}, []string{"player_name", "freebets"}},
		{"WalletSuccess", []string{"status", "balance"}, []string{"currency", "player_id", "transaction_id", "freebets"}},
		{"WalletError", []string{"status", "error_code"}, []string{"error_message", "balance"}},
	}
	for _, tc := range tests {
		t.Run(tc.schema, func(t *testing.T) {
			t.Parallel()
			s := gwComponent(t, doc, tc.schema)
			if got := gwSortedSet(s.Required...); !slices.Equal(got, gwSortedSet(tc.required...)) {
				t.Errorf("required = %v, want %v", got, gwSortedSet(tc.required...))
			}
			all := gwSortedSet(append(slices.Clone(tc.required), tc.optional...)...)
			if got := gwSortedSet(slices.Collect(maps.Keys(s.Properties))...); !slices.Equal(got, all) {
				t.Errorf("properties = %v, want %v", got, all)
			}
			if s.AdditionalProperties.Has != nil && !*s.AdditionalProperties.Has {
				t.Errorf("response bodies must accept fields the operator adds")
			}
		})
	}
	movement := gwResponseSchema(t, doc, "/bet", "200").Value
	balance := gwResponseSchema(t, doc, "/balance", "200").Value
	for _, tc := range []struct {
		name   string
		schema *openapi3.Schema
		body   map[string]any
		ok     bool
	}{
		{"movement ok minimal", movement, map[string]any{"status": "ok", "balance": 151050}, true},
		{"movement ok with extras", movement, map[string]any{"status": "ok", "balance": 151050, "currency": "BRL",
			"player_id": "p", "transaction_id": "88412093", "freebets": []any{map[string]any{"anything": true}}, "vendor_field": 1}, true},
		{"movement ok without balance", movement, map[string]any{"status": "ok"}, false},
		{"movement ok balance float", movement, map[string]any{"status": "ok", "balance": 1510.5}, false},
		{"movement without status", movement, map[string]any{"balance": 151050}, false},
		{"movement unknown status", movement, map[string]any{"status": "pending", "balance": 151050}, false},
		{"insufficient funds with balance", movement, map[string]any{"status": "error", "error_code": "INSUFFICIENT_FUNDS", "balance": 500}, true},
		{"error without code", movement, map[string]any{"status": "error", "error_message": "x"}, false},
		{"balance ok", balance, map[string]any{"status": "ok", "player_id": "p", "balance": 0, "currency": "BRL"}, true},
		{"balance ok without currency", balance, map[string]any{"status": "ok", "player_id": "p", "balance": 0}, false},
		{"balance ok without player_id", balance, map[string]any{"status": "ok", "balance": 0, "currency": "BRL"}, false},
		{"balance error", balance, map[string]any{"status": "error", "error_code": "TOKEN_INVALID"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			gwExpect(t, tc.schema, tc.body, tc.ok)
		})
	}
}

// Each wallet route declares exactly the statuses the contract lists (plus
// 5XX, the transport failure). HTTP 200 carries success-or-error, decided by
// status (oneOf with a discriminator); every other status carries the error
// body; the codes the contract names for a route and status appear in that
// response's examples.
// Rule WERR-1 WERR-2 WERR-17 BAL-7 BAL-13 BET-9 BET-10 BET-11 BET-12 WIN-10 WIN-19 RB-14 AUTH-15 AMB-19 (403 declared on /balance and /bet only)
func TestWalletStatusTable(t *testing.T) {
	t.Parallel()
	doc := gwLoadDocument(t, gwWalletDoc)
	for path, statuses := range gwWalletStatuses {
		t.Run(path, func(t *testing.T) {
			t.Parallel()
			want := gwSortedSet(slices.Collect(maps.Keys(statuses))...)
			if got := gwSortedSet(gwOperation(t, doc, path).Responses.Keys()...); !slices.Equal(got, want) {
				t.Errorf("statuses = %v, want %v", got, want)
			}
			for status, codes := range statuses {
				t.Run(status, func(t *testing.T) {
					t.Parallel()
					r := gwResponse(t, doc, path, status)
					if status == "5XX" {
						// Rule WERR-20: any 5xx is a transport failure, whatever
						// its body: the document gives it no schema.
						gwAnyBody(t, path, r)
						return
					}
					ref := gwResponseSchema(t, doc, path, status)
					if status == "200" {
						s := ref.Value
						if len(s.OneOf) != 2 || s.Discriminator == nil || s.Discriminator.PropertyName != "status" {
							t.Fatalf("200 must be oneOf success/error with a discriminator on status")
						}
						m := s.Discriminator.Mapping
						if m["error"].Ref != "#/components/schemas/WalletError" || !strings.HasSuffix(m["ok"].Ref, "Success") {
							t.Errorf("discriminator mapping = %v", m)
						}
						if got := gwExampleStatuses(t, r); !slices.Equal(got, []string{"error", "ok"}) {
							t.Errorf("200 examples must show both ok and error bodies, got %v", got)
						}
					} else if ref.Ref != "#/components/schemas/WalletError" {
						t.Errorf("%s must carry WalletError, got %q", status, ref.Ref)
					}
					got := gwExampleCodes(t, r)
					for _, code := range codes {
						if !slices.Contains(got, code) {
							t.Errorf("no example with error_code %s (have %v)", code, got)
						}
					}
				})
			}
		})
	}
}

// error_code is an open set: an unknown code validates wherever an error body
// may appear.
// Rule WERR-18
func TestWalletErrorCodeIsOpen(t *testing.T) {
	t.Parallel()
	doc := gwLoadDocument(t, gwWalletDoc)
	if ec := gwComponent(t, doc, "ErrorCode"); ec.Enum != nil || !ec.Type.Is("string") {
		t.Fatalf("ErrorCode must be a string without enum")
	}
	body := map[string]any{"status": "error", "error_code": "SOMETHING_NEW", "error_message": "a code from the future"}
	for path, statuses := range gwWalletStatuses {
		for status := range statuses {
			t.Run(path+"/"+status, func(t *testing.T) {
				t.Parallel()
				gwExpect(t, gwResponseSchema(t, doc, path, status).Value, body, true)
			})
		}
	}
}

// The game direction's codes (every error_code's x-extensible-enum of the contract's routes,
// /v1/games and /v1/launch) and the wallet direction's known codes
// (x-known-error-codes) are the contract's lists; every code of the game
// direction, the routes added since 1.1.0 included, shares with the wallet
// direction exactly INTERNAL_ERROR and INVALID_SIGNATURE (AMB-6 reading B). The seven final wallet codes are published in
// x-final-error-codes; DUPLICATE_TRANSACTION is known but not final.
// Rule GEN-9 GEN-10
func TestErrorCodeDirections(t *testing.T) {
	t.Parallel()
	gdoc := gwLoadDocument(t, gwGameDoc)
	var gameCodes, contractCodes []string
	for _, path := range gdoc.Paths.Keys() {
		for _, status := range gwOperation(t, gdoc, path).Responses.Keys() {
			if status == "200" {
				continue
			}
			if status == "5XX" || status == "default" {
				continue // what stands in front of the game; any body
			}
			s := gwResponseSchema(t, gdoc, path, status).Value
			codes := gwKnownStrings(t, gwEffective(gwProperty(t, s, "error_code")))
			gameCodes = append(gameCodes, codes...)
			if path == "/v1/games" || path == "/v1/launch" {
				contractCodes = append(contractCodes, codes...)
			}
		}
	}
	gameCodes = gwSortedSet(gameCodes...)
	if contractCodes = gwSortedSet(contractCodes...); !slices.Equal(contractCodes, gwContractGameCodes) {
		t.Errorf("the contract routes' codes = %v, want %v", contractCodes, gwContractGameCodes)
	}
	if got := gwKnownStrings(t, gwComponent(t, gdoc, "GameErrorCode")); !slices.Equal(got, gwContractGameCodes) {
		t.Errorf("GameErrorCode = %v, want %v", got, gwContractGameCodes)
	}

	ec := gwComponent(t, gwLoadDocument(t, gwWalletDoc), "ErrorCode")
	known := gwStringList(t, ec.Extensions["x-known-error-codes"])
	final := gwStringList(t, ec.Extensions["x-final-error-codes"])
	if !slices.Equal(known, gwContractWalletCodes) {
		t.Errorf("x-known-error-codes = %v, want %v", known, gwContractWalletCodes)
	}
	if !slices.Equal(final, gwContractWalletFinal) {
		t.Errorf("x-final-error-codes = %v, want %v", final, gwContractWalletFinal)
	}
	for _, code := range known {
		if !strings.Contains(ec.Description, "| "+code+" |") {
			t.Errorf("ErrorCode description does not document %s", code)
		}
	}

	var shared []string
	for _, c := range gameCodes {
		if slices.Contains(known, c) {
			shared = append(shared, c)
		}
	}
	if want := gwSortedSet("INTERNAL_ERROR", "INVALID_SIGNATURE"); !slices.Equal(shared, want) {
		t.Errorf("codes in both directions = %v, want %v", shared, want)
	}
}

// ---- generated code ----------------------------------------------------------------

// The generated wallet types send freebet_id as null (pointer without
// omitempty), have no freebet_id on a rollback, carry money as int64, and
// marshal bodies the document accepts.
// Rule BET-4 WIN-17 RB-1 GEN-6
func TestGeneratedWalletTypes(t *testing.T) {
	t.Parallel()
	doc := gwLoadDocument(t, gwWalletDoc)
	bet := wallet.BetRequest{Operator: "acme-bet", Timestamp: 1795000045120, RequestId: "req-1", Currency: "BRL",
		PlayerId: "player-100234", Token: "7d1f0c9a4e3b4b6f9a2c5e8d1b7f3a60", Amount: 1000,
		TransactionId: "bet-1", RoundId: "round-1"}
	win := wallet.WinRequest{Operator: "acme-bet", Timestamp: 1795000061877, RequestId: "req-2", Currency: "BRL",
		PlayerId: "player-100234", Token: "7d1f0c9a4e3b4b6f9a2c5e8d1b7f3a60", Amount: 2350,
		TransactionId: "win-1", BetId: "bet-1", RoundId: "round-1", Type: wallet.WinTypeWin}
	rb := wallet.RollbackRequest{Operator: "acme-bet", Timestamp: 1795000047003, RequestId: "req-3", Currency: "BRL",
		PlayerId: "player-100234", Token: "7d1f0c9a4e3b4b6f9a2c5e8d1b7f3a60", Amount: 1000,
		TransactionId: "rb-1", BetId: "bet-1", RoundId: "round-1", Reason: "cancelled_by_player"}
	bal := wallet.BalanceRequest{Operator: "acme-bet", Timestamp: 1795000030000, RequestId: "req-4", Currency: "BRL",
		Token: "7d1f0c9a4e3b4b6f9a2c5e8d1b7f3a60"}
	for path, v := range map[string]any{"/bet": bet, "/win": win, "/rollback": rb, "/balance": bal} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		fb, has := m["freebet_id"]
		switch path {
		case "/bet", "/win":
			if !has || fb != nil {
				t.Errorf("%s: marshalled %s, want \"freebet_id\":null", path, b)
			}
		default:
			if has {
				t.Errorf("%s: marshalled a freebet_id: %s", path, b)
			}
		}
		if err := gwAccepts(t, gwRequestSchema(t, doc, path).Value, m); err != nil {
			t.Errorf("%s: generated body %s rejected: %v", path, b, err)
		}
	}
	if _, ok := reflect.TypeFor[wallet.RollbackRequest]().FieldByName("FreebetId"); ok {
		t.Errorf("RollbackRequest has a FreebetId field")
	}
	int64T := reflect.TypeFor[int64]()
	for _, tc := range []struct {
		typ   reflect.Type
		field string
	}{
		{reflect.TypeFor[wallet.BetRequest](), "Amount"},
		{reflect.TypeFor[wallet.WinRequest](), "Amount"},
		{reflect.TypeFor[wallet.RollbackRequest](), "Amount"},
		{reflect.TypeFor[wallet.WalletSuccess](), "Balance"},
		{reflect.TypeFor[wallet.BalanceSuccess](), "Balance"},
		{reflect.TypeFor[wallet.WalletError](), "Balance"},
		{reflect.TypeFor[wallet.FreebetGrant](), "Amount"},
		{reflect.TypeFor[game.CatalogueGame](), "MinBet"},
		{reflect.TypeFor[game.CatalogueGame](), "MaxBet"},
		{reflect.TypeFor[game.CatalogueGame](), "MaxWin"},
	} {
		f, ok := tc.typ.FieldByName(tc.field)
		if !ok {
			t.Errorf("%s has no field %s", tc.typ, tc.field)
			continue
		}
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if ft != int64T {
			t.Errorf("%s.%s is %s, want int64", tc.typ, tc.field, f.Type)
		}
	}
}

// gwWalletStub is a reference-operator stand-in built on the generated strict
// server: it answers /bet with an unknown error code and the other routes
// with success bodies.
type gwWalletStub struct{}

func (gwWalletStub) Balance(_ context.Context, _ wallet.BalanceRequestObject) (wallet.BalanceResponseObject, error) {
	var r wallet.BalanceResult
	err := r.FromBalanceSuccess(wallet.BalanceSuccess{PlayerId: "player-100234", Balance: 152050, Currency: "BRL",
		Freebets: &[]wallet.FreebetGrant{{Id: "spring-2026-0042", Amount: 200}}})
	return wallet.Balance200JSONResponse(r), err
}

func (gwWalletStub) Bet(_ context.Context, req wallet.BetRequestObject) (wallet.BetResponseObject, error) {
	var r wallet.MovementResult
	err := r.FromWalletError(wallet.WalletError{ErrorCode: "SOMETHING_NEW"})
	return wallet.Bet200JSONResponse(r), err
}

func (gwWalletStub) Win(_ context.Context, req wallet.WinRequestObject) (wallet.WinResponseObject, error) {
	if req.Body.FreebetId == nil {
		return wallet.Win404JSONResponse{Status: wallet.WalletErrorStatusError, ErrorCode: "BET_NOT_FOUND"}, nil
	}
	var r wallet.MovementResult
	err := r.FromWalletSuccess(wallet.WalletSuccess{Balance: 153400})
	return wallet.Win200JSONResponse(r), err
}

// gwProxyPage is what a proxy in front of a wallet answers when the wallet is
// down: a 5xx whose body is HTML, not the contract's JSON.
const gwProxyPage = "<html><body><h1>502 Bad Gateway</h1></body></html>"

func (gwWalletStub) Rollback(_ context.Context, _ wallet.RollbackRequestObject) (wallet.RollbackResponseObject, error) {
	return wallet.Rollback5XXAsteriskResponse{StatusCode: http.StatusBadGateway, ContentType: "text/html",
		Body: strings.NewReader(gwProxyPage), ContentLength: int64(len(gwProxyPage))}, nil
}

// The generated client and strict server agree over a {wallet_url} with a
// path prefix; the caller reads status first (Discriminator) and an unknown
// error code reaches it intact; every body the server writes validates
// against the document, a proxy's HTML 5xx included.
// Rule WERR-3 WERR-18
func TestGeneratedWalletRoundTrip(t *testing.T) {
	t.Parallel()
	doc := gwLoadDocument(t, gwWalletDoc)
	mux := http.NewServeMux()
	wallet.HandlerWithOptions(wallet.NewStrictHandler(gwWalletStub{}, nil), wallet.StdHTTPServerOptions{
		BaseURL: "/crash", BaseRouter: mux,
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	client, err := wallet.NewClientWithResponses(srv.URL + "/crash")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	validate := func(path string, status int, body []byte) {
		t.Helper()
		key := map[int]string{200: "200", 404: "404", 503: "5XX"}[status]
		var v any
		if err := json.Unmarshal(body, &v); err != nil {
			t.Fatalf("%s: body %q: %v", path, body, err)
		}
		if err := gwResponseSchema(t, doc, path, key).Value.VisitJSON(v); err != nil {
			t.Errorf("%s %d: served body %s does not validate: %v", path, status, body, err)
		}
	}

	bal, err := client.BalanceWithResponse(ctx, wallet.BalanceRequest{Operator: "acme-bet", Timestamp: 1795000030000,
		RequestId: "req-1", Currency: "BRL", Token: "7d1f0c9a4e3b4b6f9a2c5e8d1b7f3a60"})
	if err != nil || bal.JSON200 == nil {
		t.Fatalf("balance: %v %v", err, bal)
	}
	validate("/balance", bal.StatusCode(), bal.Body)
	if d, _ := bal.JSON200.Discriminator(); d != "ok" {
		t.Errorf("balance status = %q", d)
	}
	if v, err := bal.JSON200.ValueByDiscriminator(); err != nil {
		t.Error(err)
	} else if s := v.(wallet.BalanceSuccess); s.Balance != 152050 || s.PlayerId != "player-100234" {
		t.Errorf("balance = %+v", s)
	}

	bet, err := client.BetWithResponse(ctx, wallet.BetRequest{Operator: "acme-bet", Timestamp: 1795000045120,
		RequestId: "req-2", Currency: "BRL", PlayerId: "player-100234", Token: "7d1f0c9a4e3b4b6f9a2c5e8d1b7f3a60",
		Amount: 1000, TransactionId: "bet-1", RoundId: "round-1"})
	if err != nil || bet.JSON200 == nil {
		t.Fatalf("bet: %v %v", err, bet)
	}
	validate("/bet", bet.StatusCode(), bet.Body)
	if d, _ := bet.JSON200.Discriminator(); d != "error" {
		t.Errorf("bet status = %q, want error", d)
	}
	if e, err := bet.JSON200.AsWalletError(); err != nil || e.ErrorCode != "SOMETHING_NEW" {
		t.Errorf("bet error = %+v, %v", e, err)
	}

	fb := "spring-2026-0042#3"
	for _, freebet := range []*string{nil, &fb} {
		w, err := client.WinWithResponse(ctx, wallet.WinRequest{Operator: "acme-bet", Timestamp: 1795000061877,
			RequestId: "req-3", Currency: "BRL", PlayerId: "player-100234", Token: "7d1f0c9a4e3b4b6f9a2c5e8d1b7f3a60",
			Amount: 300, TransactionId: "win-1", BetId: "bet-1", RoundId: "round-1", Type: wallet.WinTypeFreebet,
			FreebetId: freebet})
		if err != nil {
			t.Fatal(err)
		}
		validate("/win", w.StatusCode(), w.Body)
		switch {
		case freebet == nil && (w.JSON404 == nil || w.JSON404.ErrorCode != "BET_NOT_FOUND"):
			t.Errorf("win without freebet: %d %s", w.StatusCode(), w.Body)
		case freebet != nil && w.JSON200 == nil:
			t.Errorf("win with freebet: %d %s", w.StatusCode(), w.Body)
		}
	}

	rb, err := client.RollbackWithResponse(ctx, wallet.RollbackRequest{Operator: "acme-bet", Timestamp: 1795000047003,
		RequestId: "req-4", Currency: "BRL", PlayerId: "player-100234", Token: "7d1f0c9a4e3b4b6f9a2c5e8d1b7f3a60",
		Amount: 1000, TransactionId: "rb-1", BetId: "bet-1", RoundId: "round-1", Reason: "cancelled_by_player"})
	if err != nil || rb.StatusCode() != http.StatusBadGateway || string(rb.Body) != gwProxyPage {
		t.Fatalf("rollback: %v %+v", err, rb)
	}
	// A 5xx has no schema: a proxy's HTML page matches the document as
	// well as the wallet's own JSON does (the game reads only the status).
	for _, body := range []struct{ contentType, raw string }{{"text/html", gwProxyPage}, {"application/json", `{"status":"error","error_code":"INTERNAL_ERROR"}`}, {"text/plain", ""}} {
		mt := gwResponse(t, doc, "/rollback", "5XX").Content.Get(body.contentType)
		if mt == nil {
			t.Errorf("/rollback 5XX: no content for %s", body.contentType)
			continue
		}
		if mt.Schema == nil || mt.Schema.Value == nil {
			t.Errorf("/rollback 5XX %s: no schema at all", body.contentType)
			continue
		}
		if err := mt.Schema.Value.VisitJSON(body.raw); err != nil {
			t.Errorf("/rollback 5XX %s: a body %q does not match: %v", body.contentType, body.raw, err)
		}
	}
}

// The embedded specifications of the generated packages are the documents of
// this folder: gen/ has not drifted from api/.
func TestEmbeddedSpecsMatchDocuments(t *testing.T) {
	t.Parallel()
	for name, get := range map[string]func() (*openapi3.T, error){gwGameDoc: game.GetSpec, gwWalletDoc: wallet.GetSpec} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			embedded, err := get()
			if err != nil {
				t.Fatal(err)
			}
			want, err := json.Marshal(gwLoadDocument(t, name))
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(embedded)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("gen/ embeds a different %s: run go generate ./api", name)
			}
		})
	}
}
