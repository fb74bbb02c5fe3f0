package operatorapi_test

import (
	"net/http"
	"strings"
	"testing"
)

// acmeAt is a body acme signs at the env's fixed clock (1795348800000 ms).
const acmeAt = `{"operator":"acme","timestamp":1795348800000`

// Rule GAME-13 AUTH-3 AUTH-9 GAME-11: whatever the body and the header, the
// signature middleware answers JSON in the contract's shape (validated against
// game.v1.yaml by post), never 5xx, and lets nothing through that acme did not
// sign (the unsigned demo-only showroom operator aside).
func FuzzAuthenticate(f *testing.F) {
	f.Add([]byte(acmeAt+`}`), "")
	f.Add([]byte(acmeAt+`}`), sign(acmeSecret, acmeAt+`}`))
	f.Add([]byte(`{"operator":"showroom","timestamp":1}`), "")
	f.Add([]byte(`[]`), "00")
	f.Add([]byte(`{"operator":"acme","timestamp":1.5e12}`), strings.Repeat("a", 64))
	e := newEnv(f)
	f.Fuzz(func(t *testing.T, body []byte, sig string) {
		r := e.postWithSignature(t, "/v1/games", string(body), sig)
		switch r.Status {
		case http.StatusOK:
			if sig != sign(acmeSecret, string(body)) && r.Body["operator"] != "showroom" {
				t.Fatalf("accepted a body acme did not sign: %q sig %q", body, sig)
			}
		case http.StatusBadRequest, http.StatusUnauthorized:
		default:
			t.Fatalf("status %d for %q: %s", r.Status, body, r.Raw)
		}
	})
}

// Rule GAME-2 GAME-3 TKT-3 GAME-28: a signed launch body of any content gets a
// declared status and a body valid against game.v1.yaml, never 5xx, and a launch
// URL never carries the token or the player id.
func FuzzLaunchBody(f *testing.F) {
	f.Add(`,"game_id":"crash","token":"tok-5f1c9e2a7b3d4e60","player_id":"p1"}`)
	f.Add(`,"game_id":"crash","demo":true,"language":"fr","currency":"BRL"}`)
	f.Add(`,"game_id":"crash-nodemo","demo":true}`)
	f.Add(`,"game_id":"","token":""}`)
	f.Add(`,"game_id":"crash","token":"short","player_id":"short"}`)
	f.Add(`,"game_id":"crash","token":["x"]}`)
	f.Add(`}`)
	e := newEnv(f)
	f.Fuzz(func(t *testing.T, tail string) {
		body := acmeAt + tail
		r := e.post(t, "/v1/launch", body, acmeSecret)
		switch r.Status {
		case http.StatusOK:
			u, _ := r.Body["url"].(string)
			if !strings.HasPrefix(u, "https://games.test.example/crash/?sid=tk_") {
				t.Fatalf("launch url %q", u)
			}
			var fields struct {
				Token    *string `json:"token"`
				PlayerID *string `json:"player_id"`
			}
			if decodeLoose([]byte(body), &fields) {
				for _, secret := range []*string{fields.Token, fields.PlayerID} {
					if secret != nil && len(*secret) >= 4 && strings.Contains(u, *secret) {
						t.Fatalf("launch url %q carries %q", u, *secret)
					}
				}
			}
		case http.StatusBadRequest, http.StatusUnauthorized, http.StatusNotFound:
		default:
			t.Fatalf("status %d for %q: %s", r.Status, body, r.Raw)
		}
	})
}
