package operatorapi_test

import (
	"fmt"
	"regexp"
	"strconv"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/crashstudio/crashgame/api"
)

// quoted masks the identifiers a message quotes (an operator, a game, a
// currency): the document's examples name acme-bet where the tests' installation
// has acme.
var quoted = regexp.MustCompile(`"[^"]*"`)

func masked(v any) string {
	s, ok := v.(string)
	if !ok {
		return "<none>"
	}
	return quoted.ReplaceAllString(s, `"…"`)
}

// documentedRefusals returns, for each route and status of the game
// document, the (error_code, masked error_message, error_reason when present)
// of every example.
func documentedRefusals(t *testing.T) map[string]map[string]bool {
	t.Helper()
	raw, err := api.Documents.ReadFile("game.v1.yaml")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := openapi3.NewLoader().LoadFromData(raw)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]bool{}
	for path, item := range doc.Paths.Map() {
		for status, r := range item.Post.Responses.Map() {
			mt := r.Value.Content.Get("application/json")
			if mt == nil {
				continue
			}
			key := path + " " + status
			out[key] = map[string]bool{}
			for _, ex := range mt.Examples {
				if v, ok := ex.Value.Value.(map[string]any); ok {
					k := fmt.Sprint(v["error_code"]) + " " + masked(v["error_message"])
					if reason, ok := v["error_reason"]; ok {
						k += " " + fmt.Sprint(reason)
					}
					out[key][k] = true
				}
			}
		}
	}
	return out
}

// documentedPaths lists the routes of the game document.
func documentedPaths(t *testing.T) map[string]bool {
	t.Helper()
	raw, err := api.Documents.ReadFile("game.v1.yaml")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := openapi3.NewLoader().LoadFromData(raw)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for path := range doc.Paths.Map() {
		out[path] = true
	}
	if len(out) != 9 {
		t.Fatalf("the game document has %d routes, want the 9 this test was written for", len(out))
	}
	return out
}

// Every refusal the operator routes send is in the document, with an example
// of its very code and message (identifiers aside): an integrator who matches
// on what the document shows sees what the game sends.
func TestRefusalsHaveDocumentExamples(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	documented := documentedRefusals(t)
	launch := func(fields string) string {
		return fmt.Sprintf(`{"operator":"acme","timestamp":%d%s}`, e.ts(0), fields)
	}
	tests := []struct {
		name, path, body, secret string
	}{
		{"not JSON", "/v1/launch", "{not json", acmeSecret},
		{"wrong type", "/v1/launch", launch(`,"game_id":"crash","demo":"yes"`), acmeSecret},
		{"game_id absent", "/v1/launch", launch(`,"token":"` + token + `","player_id":"p1"`), acmeSecret},
		{"unknown game", "/v1/launch", launch(`,"game_id":"roulette","token":"` + token + `","player_id":"p1"`), acmeSecret},
		{"demo not available", "/v1/launch", launch(`,"game_id":"crash-nodemo","demo":true`), acmeSecret},
		{"token absent", "/v1/launch", launch(`,"game_id":"crash","player_id":"p1"`), acmeSecret},
		{"player_id absent", "/v1/launch", launch(`,"game_id":"crash","token":"` + token + `"`), acmeSecret},
		{"token too short", "/v1/launch", launch(`,"game_id":"crash","token":"abc","player_id":"p1"`), acmeSecret},
		{"token with a zero-width space", "/v1/launch", launch(`,"game_id":"crash","token":"` + token + `\u200b","player_id":"p1"`), acmeSecret},
		{"token equal to player_id", "/v1/launch", launch(`,"game_id":"crash","token":"` + token + `","player_id":"` + token + `"`), acmeSecret},
		{"no wallet", "/v1/launch", fmt.Sprintf(`{"operator":"showroom","timestamp":%d,"game_id":"crash","token":%q,"player_id":"p1"}`, e.ts(0), token), ""},
		{"currency not enabled", "/v1/launch", launch(`,"game_id":"crash","token":"` + token + `","player_id":"p1","currency":"EUR"`), acmeSecret},
		{"lobby_url", "/v1/launch", launch(`,"game_id":"crash","demo":true,"lobby_url":"ftp://acme.example/"`), acmeSecret},
		{"control out of range", "/v1/launch", launch(`,"game_id":"crash","demo":true,"responsible_gambling":{"reality_check_minutes":0}`), acmeSecret},
		{"signature refused", "/v1/launch", launch(`,"game_id":"crash","demo":true`), "another-secret-0123456789abcdef"},
		{"games: not JSON", "/v1/games", "{not json", acmeSecret},
		{"games: wrong type", "/v1/games", launch(`,"currency":978`), acmeSecret},
		{"games: currency not enabled", "/v1/games", launch(`,"currency":"EUR"`), acmeSecret},
		{"games: signature refused", "/v1/games", launch(``), "another-secret-0123456789abcdef"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := e.post(t, tt.path, tt.body, tt.secret)
			if r.Status < 400 {
				t.Fatalf("%s answered %d %s, a refusal expected", tt.path, r.Status, r.Raw)
			}
			key := tt.path + " " + strconv.Itoa(r.Status)
			got := fmt.Sprint(r.Body["error_code"]) + " " + masked(r.Body["error_message"])
			if reason, ok := r.Body["error_reason"]; ok {
				got += " " + fmt.Sprint(reason)
			}
			if !documented[key][got] {
				t.Errorf("%s answers %s, which no example of %s shows (examples: %v)", tt.name, r.Raw, key, documented[key])
			}
		})
	}
}
