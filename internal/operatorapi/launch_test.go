package operatorapi_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/crashstudio/crashgame/internal/tickets"
)

const (
	token  = "tok-5f1c9e2a7b3d4e60"
	player = "player-42"
)

// Rule GAME-15 GAME-16 GAME-17 GAME-18 GAME-19 GAME-20 GAME-21 GAME-2 GAME-3:
// every refusal of /v1/launch, with its status and code, in the documented order.
func TestLaunchRefusals(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e *env) {
		tests := []struct {
			name, operator, secret, fields string
			status                         int
			code                           string
		}{
			{"game_id absent", "acme", acmeSecret, `,"token":"` + token + `","player_id":"p1"`, 400, "MISSING_GAME_ID"},
			{"game_id empty", "acme", acmeSecret, `,"game_id":"","token":"` + token + `","player_id":"p1"`, 400, "MISSING_GAME_ID"},
			{"game_id absent beats missing token", "acme", acmeSecret, ``, 400, "MISSING_GAME_ID"},
			{"unknown game", "acme", acmeSecret, `,"game_id":"roulette","token":"` + token + `","player_id":"p1"`, 404, "GAME_NOT_FOUND"},
			{"game of the installation not enabled for the operator", "acme", acmeSecret, `,"game_id":"crash-other","token":"` + token + `","player_id":"p1"`, 404, "GAME_NOT_FOUND"},
			{"unknown game beats missing token", "acme", acmeSecret, `,"game_id":"roulette"`, 404, "GAME_NOT_FOUND"},
			{"token absent", "acme", acmeSecret, `,"game_id":"crash","player_id":"p1"`, 400, "MISSING_TOKEN"},
			{"token empty", "acme", acmeSecret, `,"game_id":"crash","token":"","player_id":"p1"`, 400, "MISSING_TOKEN"},
			{"demo false still needs a token", "acme", acmeSecret, `,"game_id":"crash","demo":false,"player_id":"p1"`, 400, "MISSING_TOKEN"},
			{"player_id absent", "acme", acmeSecret, `,"game_id":"crash","token":"` + token + `"`, 400, "MISSING_PLAYER_ID"},
			{"token absent beats player_id absent", "acme", acmeSecret, `,"game_id":"crash"`, 400, "MISSING_TOKEN"},
			{"token of 15 characters", "acme", acmeSecret, `,"game_id":"crash","token":"abcdefghijklmno","player_id":"p1"`, 400, "INVALID_TOKEN"},
			{"token of 16 spaces", "acme", acmeSecret, `,"game_id":"crash","token":"                ","player_id":"p1"`, 400, "INVALID_TOKEN"},
			{"token of 15 characters padded with whitespace", "acme", acmeSecret, `,"game_id":"crash","token":" abcdefghijklmno\t\n ","player_id":"p1"`, 400, "INVALID_TOKEN"},
			{"token equal to player_id", "acme", acmeSecret, `,"game_id":"crash","token":"` + token + `","player_id":"` + token + `"`, 400, "INVALID_TOKEN"},
			{"demo where the game has demo off", "acme", acmeSecret, `,"game_id":"crash-nodemo","demo":true`, 400, "DEMO_NOT_AVAILABLE"},
			{"demo where the operator has demo off", "strict", "strict-secret-0123456789abcdef", `,"game_id":"crash","demo":true`, 400, "DEMO_NOT_AVAILABLE"},
			{"currency not enabled for the operator", "acme", acmeSecret, `,"game_id":"crash","token":"` + token + `","player_id":"p1","currency":"EUR"`, 400, "INTERNAL_ERROR"},
			{"real launch for an operator without a wallet", "showroom", "", `,"game_id":"crash","token":"` + token + `","player_id":"p1"`, 400, "INTERNAL_ERROR"},
			{"demo of the wrong type", "acme", acmeSecret, `,"game_id":"crash","demo":"yes"`, 400, "INTERNAL_ERROR"},
			{"token of the wrong type", "acme", acmeSecret, `,"game_id":"crash","token":1234567890123456789,"player_id":"p1"`, 400, "INTERNAL_ERROR"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				body := fmt.Sprintf(`{"operator":%q,"timestamp":%d%s}`, tt.operator, e.ts(0), tt.fields)
				r := e.post(t, "/v1/launch", body, tt.secret)
				wantError(t, r, tt.status, tt.code)
				if strings.Contains(string(r.Raw), token) {
					t.Fatalf("the token is echoed in a refusal: %s", r.Raw)
				}
			})
		}
	})
}

// Rule GAME-24 GAME-28 TKT-1 TKT-2 TKT-3 LIM-4 GEN-11 GAME-25 LANG-1 LANG-2 LANG-3 LANG-4 AMB-23:
// a launch answers {base_url}/?sid=<ticket>&lang=<language>&cur=<currency>, with
// the resolved language, a fresh ticket and neither token nor player_id.
func TestLaunchURL(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e *env) {
		tests := []struct {
			name, fields, lang, cur string
		}{
			{"minimal launch, token of exactly 16 characters", `,"game_id":"crash","token":"abcdefghijklmnop","player_id":"p1"`, "pt", ""},
			{"language en kept", `,"game_id":"crash","token":"` + token + `","player_id":"` + player + `","language":"en","currency":"BRL"`, "en", "BRL"},
			{"language es kept", `,"game_id":"crash","token":"` + token + `","player_id":"` + player + `","language":"es","currency":"USD"`, "es", "USD"},
			{"unknown language falls back to the installation default, not en", `,"game_id":"crash","token":"` + token + `","player_id":"` + player + `","language":"fr"`, "pt", ""},
			{"language in another case is unknown", `,"game_id":"crash","token":"` + token + `","player_id":"` + player + `","language":"EN"`, "pt", ""},
			{"demo without token or player", `,"game_id":"crash","demo":true,"currency":"BRL"`, "pt", "BRL"},
		}
		seen := map[string]bool{}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				r := e.post(t, "/v1/launch", e.body(tt.fields), acmeSecret)
				if r.Status != http.StatusOK || r.Body["status"] != "ok" {
					t.Fatalf("launch: %d %s", r.Status, r.Raw)
				}
				raw := r.Body["url"].(string)
				if !strings.Contains(string(r.Raw), "&lang=") {
					t.Fatalf("the URL is HTML-escaped in the body: %s", r.Raw)
				}
				q := launchURL(t, raw)
				if q.Get("lang") != tt.lang || q.Get("cur") != tt.cur {
					t.Fatalf("lang=%q cur=%q, want %q %q", q.Get("lang"), q.Get("cur"), tt.lang, tt.cur)
				}
				sid := q.Get("sid")
				if !tickets.IsTicket(sid) || seen[sid] {
					t.Fatalf("sid %q is not a fresh ticket", sid)
				}
				seen[sid] = true
				if strings.Contains(raw, token) || strings.Contains(raw, player) || strings.Contains(raw, "abcdefghijklmnop") {
					t.Fatalf("token or player_id in the launch URL: %s", raw)
				}
			})
		}
	})
}

// Rule TKT-4 TKT-5 GAME-27 GAME-26 TKT-1: the ticket carries what the launch said,
// opens once, and a second opening is refused (AMB-22 reading A).
func TestLaunchTicketCarriesSession(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e *env) {
		r := e.post(t, "/v1/launch", e.body(`,"game_id":"crash","token":"`+token+`","player_id":"`+player+`","currency":"BRL","language":"es","player_name":"Maria Silva","theme":"dark","mobile":true,"lobby_url":"https://acme.example/lobby","deposit_url":"https://acme.example/deposit"`), acmeSecret)
		if r.Status != http.StatusOK {
			t.Fatalf("launch: %d %s", r.Status, r.Raw)
		}
		sid := launchURL(t, r.Body["url"].(string)).Get("sid")
		got, err := e.tickets.Redeem(context.Background(), sid)
		if err != nil {
			t.Fatal(err)
		}
		want := tickets.Session{
			Operator: "acme", GameID: "crash", Token: token, PlayerID: player, Currency: "BRL", Language: "es",
			PlayerName: "Maria Silva", Theme: "dark", Mobile: true,
			LobbyURL: "https://acme.example/lobby", DepositURL: "https://acme.example/deposit",
		}
		if got != want {
			t.Fatalf("ticket session = %+v\nwant %+v", got, want)
		}
		if _, err := e.tickets.Redeem(context.Background(), sid); !errors.Is(err, tickets.ErrUsed) {
			t.Fatalf("second opening: %v, want ErrUsed", err)
		}
	})
}

// The responsible gambling controls travel with the ticket; absent means off.
// Rule GAME-27: lobby_url and deposit_url are carried to the session.
func TestLaunchResponsibleGambling(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e *env) {
		tests := []struct {
			name, fields string
			want         tickets.Controls
		}{
			{"absent: every control off", ``, tickets.Controls{}},
			{"empty object: every control off", `,"responsible_gambling":{}`, tickets.Controls{}},
			{"every control on", `,"responsible_gambling":{"session_clock":true,"reality_check_minutes":60,"inactivity_timeout_minutes":30}`,
				tickets.Controls{SessionClock: true, RealityCheckMinutes: 60, InactivityMinutes: 30}},
			{"bounds 1 and 1440", `,"responsible_gambling":{"reality_check_minutes":1,"inactivity_timeout_minutes":1440}`,
				tickets.Controls{RealityCheckMinutes: 1, InactivityMinutes: 1440}},
			{"clock only, explicitly false", `,"responsible_gambling":{"session_clock":false}`, tickets.Controls{}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				r := e.post(t, "/v1/launch", e.body(`,"game_id":"crash","token":"`+token+`","player_id":"`+player+`"`+tt.fields), acmeSecret)
				if r.Status != http.StatusOK {
					t.Fatalf("launch: %d %s", r.Status, r.Raw)
				}
				got, err := e.tickets.Redeem(context.Background(), launchURL(t, r.Body["url"].(string)).Get("sid"))
				if err != nil {
					t.Fatal(err)
				}
				if got.Controls != tt.want {
					t.Fatalf("controls = %+v, want %+v", got.Controls, tt.want)
				}
			})
		}
	})
}

// Rule GAME-4: a responsible gambling value out of range or of the wrong
// type, and a lobby_url or deposit_url the page could not safely navigate to,
// are refused with 400 INTERNAL_ERROR and an error_message that is diagnostic
// (it names the field, for the operator's logs; the contract says it is not
// shown to the player); no ticket is issued.
func TestLaunchRefusesBadControlsAndURLs(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e *env) {
		tests := []struct{ name, fields, field string }{
			{"reality check 0", `,"responsible_gambling":{"reality_check_minutes":0}`, "reality_check_minutes"},
			{"reality check 1441", `,"responsible_gambling":{"reality_check_minutes":1441}`, "reality_check_minutes"},
			{"reality check negative", `,"responsible_gambling":{"reality_check_minutes":-5}`, "reality_check_minutes"},
			{"reality check a fraction", `,"responsible_gambling":{"reality_check_minutes":1.5}`, "reality_check_minutes"},
			{"reality check a string", `,"responsible_gambling":{"reality_check_minutes":"60"}`, "reality_check_minutes"},
			{"reality check beyond int32", `,"responsible_gambling":{"reality_check_minutes":99999999999}`, "reality_check_minutes"},
			{"inactivity 0", `,"responsible_gambling":{"inactivity_timeout_minutes":0}`, "inactivity_timeout_minutes"},
			{"inactivity 1441", `,"responsible_gambling":{"inactivity_timeout_minutes":1441}`, "inactivity_timeout_minutes"},
			{"session clock a string", `,"responsible_gambling":{"session_clock":"yes"}`, "session_clock"},
			{"responsible_gambling not an object", `,"responsible_gambling":true`, "responsible_gambling"},
			{"lobby_url javascript", `,"lobby_url":"javascript:alert(1)"`, "lobby_url"},
			{"lobby_url relative", `,"lobby_url":"/lobby"`, "lobby_url"},
			{"lobby_url protocol-relative", `,"lobby_url":"//evil.example/lobby"`, "lobby_url"},
			{"lobby_url data", `,"lobby_url":"data:text/html,hi"`, "lobby_url"},
			{"lobby_url with credentials", `,"lobby_url":"https://user:pw@acme.example/"`, "lobby_url"},
			{"deposit_url ftp", `,"deposit_url":"ftp://acme.example/deposit"`, "deposit_url"},
			{"deposit_url javascript in capitals", `,"deposit_url":"JAVASCRIPT:alert(1)"`, "deposit_url"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				r := e.post(t, "/v1/launch", e.body(`,"game_id":"crash","token":"`+token+`","player_id":"`+player+`"`+tt.fields), acmeSecret)
				wantError(t, r, http.StatusBadRequest, "INTERNAL_ERROR")
				if msg, _ := r.Body["error_message"].(string); !strings.Contains(msg, tt.field) {
					t.Fatalf("error_message %q does not name %s", msg, tt.field)
				}
			})
		}
		// Absolute http and https addresses are accepted, on a demo launch too.
		r := e.post(t, "/v1/launch", e.body(`,"game_id":"crash","demo":true,"lobby_url":"http://127.0.0.1:8081/","deposit_url":"https://acme.example/deposit?x=1"`), acmeSecret)
		if r.Status != http.StatusOK {
			t.Fatalf("launch with http(s) URLs: %d %s", r.Status, r.Raw)
		}
	})
}

// Rule GAME-22: a demo launch stores neither token nor player even when sent.
func TestDemoLaunchDropsCredentials(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e *env) {
		r := e.post(t, "/v1/launch", e.body(`,"game_id":"crash","demo":true,"token":"`+token+`","player_id":"`+player+`"`), acmeSecret)
		if r.Status != http.StatusOK {
			t.Fatalf("launch: %d %s", r.Status, r.Raw)
		}
		s, err := e.tickets.Redeem(context.Background(), launchURL(t, r.Body["url"].(string)).Get("sid"))
		if err != nil {
			t.Fatal(err)
		}
		if !s.Demo || s.Token != "" || s.PlayerID != "" {
			t.Fatalf("demo session = %+v", s)
		}
	})
}

// Rule GAME-14: a failure of ours answers 500 INTERNAL_ERROR with a request id;
// the cause goes to the log, never to the operator.
func TestLaunchServerFailure(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e *env) {
		e.store.Close()
		r := e.post(t, "/v1/launch", e.body(`,"game_id":"crash","token":"`+token+`","player_id":"`+player+`"`), acmeSecret)
		wantError(t, r, http.StatusInternalServerError, "INTERNAL_ERROR")
		id, _ := r.Body["request_id"].(string)
		if id == "" {
			t.Fatalf("no request_id: %s", r.Raw)
		}
		if strings.Contains(string(r.Raw), "sql") || strings.Contains(string(r.Raw), "closed") {
			t.Fatalf("the cause leaked: %s", r.Raw)
		}
		if !strings.Contains(e.logs.String(), id) {
			t.Fatal("the request id is not in the log")
		}
		if strings.Contains(e.logs.String(), token) {
			t.Fatal("the token is in the log")
		}
	})
}
