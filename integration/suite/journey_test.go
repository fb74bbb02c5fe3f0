//go:build integration

package suite

import (
	"net/http"
	"testing"
)

// TestOperatorJourney: what an operator and its players do on a normal day,
// through the real programs: the catalogue with and without currency, launch
// and its refusals, the table session, bets, cashouts, losses, a
// cancellation, a demo session, the legacy launch, and a ticket used twice.
func TestOperatorJourney(t *testing.T) {
	e := Start(t, Options{})

	t.Run("catalogue", func(t *testing.T) {
		r := e.Operator(t, "/v1/games", nil)
		if r.Status != http.StatusOK {
			t.Fatalf("/v1/games: %s", r)
		}
		var cat struct {
			Currencies []string         `json:"currencies"`
			Games      []map[string]any `json:"games"`
		}
		decode(t, r.Body, &cat)
		if len(cat.Games) != 1 || cat.Games[0]["game_id"] != gameID {
			t.Fatalf("catalogue games: %s", r.Body)
		}
		if len(cat.Currencies) != 2 || cat.Currencies[0] != "BRL" || cat.Currencies[1] != "USD" {
			t.Errorf("currencies %v, want [BRL USD] (sorted, GEN-8)", cat.Currencies)
		}
		for _, k := range []string{"min_bet", "max_bet", "max_win", "currency"} {
			if _, ok := cat.Games[0][k]; ok {
				t.Errorf("without currency the entry carries %s (LIM-8): %s", k, r.Body)
			}
		}

		r = e.Operator(t, "/v1/games", map[string]any{"currency": "BRL"})
		cat.Games = nil
		decode(t, r.Body, &cat)
		g := cat.Games[0]
		if g["currency"] != "BRL" || g["min_bet"] != 100.0 || g["max_bet"] != 100000.0 || g["max_win"] != 10000000.0 {
			t.Errorf("BRL entry: %s", r.Body)
		}
		r = e.Operator(t, "/v1/games", map[string]any{"currency": "USD"})
		cat.Games = nil
		decode(t, r.Body, &cat)
		if _, ok := cat.Games[0]["max_win"]; ok || cat.Games[0]["min_bet"] != 10.0 {
			t.Errorf("USD entry: max_win is unknown and must be omitted (LIM-11), min_bet 10: %s", r.Body)
		}
	})

	t.Run("launch refusals", func(t *testing.T) {
		for _, c := range []struct {
			name   string
			fields map[string]any
			status int
			code   string
		}{
			{"no game", map[string]any{"token": "tok-0123456789abcdef", "player_id": "p1"}, 400, "MISSING_GAME_ID"},
			{"unknown game", map[string]any{"game_id": "nope", "token": "tok-0123456789abcdef", "player_id": "p1"}, 404, "GAME_NOT_FOUND"},
			{"no token", map[string]any{"game_id": gameID, "player_id": "p1"}, 400, "MISSING_TOKEN"},
			{"short token", map[string]any{"game_id": gameID, "token": "short", "player_id": "p1"}, 400, "INVALID_TOKEN"},
			{"no player", map[string]any{"game_id": gameID, "token": "tok-0123456789abcdef"}, 400, "MISSING_PLAYER_ID"},
		} {
			r := e.OperatorInvalid(t, "/v1/launch", c.fields)
			if r.Status != c.status || r.ErrorCode() != c.code {
				t.Errorf("%s: %s, want %d %s", c.name, r, c.status, c.code)
			}
		}
		// A wrong signature: the same 401 whatever the cause (AUTH-9).
		r := e.do(t, e.gameDoc, http.MethodPost, "/v1/games", []byte(`{"operator":"acme","timestamp":1}`), map[string]string{"X-Signature": "00"}, true)
		if r.Status != http.StatusUnauthorized || r.ErrorCode() != "INVALID_SIGNATURE" {
			t.Errorf("bad signature: %s", r)
		}
	})

	e.CheckWallet(t, nil)
	e.Reconcile(t)
}
