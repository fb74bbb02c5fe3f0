package operatorapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Rule GAME-13 AUTH-9 LIM-1 GAME-2: every authentication failure gets the same
// 401 INVALID_SIGNATURE, byte for byte.
func TestSignatureRefusals(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e *env) {
		signed := e.body("")
		tests := []struct {
			name, path, body, secret string
		}{
			{"signature absent", "/v1/games", signed, ""},
			{"signed with another secret", "/v1/games", signed, otherSecret},
			{"unknown operator", "/v1/games", fmt.Sprintf(`{"operator":"nobody","timestamp":%d}`, e.ts(0)), acmeSecret},
			{"operator absent", "/v1/games", fmt.Sprintf(`{"timestamp":%d}`, e.ts(0)), acmeSecret},
			{"operator not a string", "/v1/games", fmt.Sprintf(`{"operator":7,"timestamp":%d}`, e.ts(0)), acmeSecret},
			{"disabled operator", "/v1/games", fmt.Sprintf(`{"operator":"off","timestamp":%d}`, e.ts(0)), "off-secret-0123456789abcdef"},
			{"timestamp 5:01 old", "/v1/games", fmt.Sprintf(`{"operator":"acme","timestamp":%d}`, e.ts(-5*time.Minute-time.Second)), acmeSecret},
			{"timestamp 5:01 ahead", "/v1/games", fmt.Sprintf(`{"operator":"acme","timestamp":%d}`, e.ts(5*time.Minute+time.Second)), acmeSecret},
			{"timestamp absent", "/v1/games", `{"operator":"acme"}`, acmeSecret},
			{"timestamp in seconds", "/v1/games", fmt.Sprintf(`{"operator":"acme","timestamp":%d}`, e.ts(0)/1000), acmeSecret},
			{"timestamp as a string", "/v1/games", fmt.Sprintf(`{"operator":"acme","timestamp":"%d"}`, e.ts(0)), acmeSecret},
			{"launch without signature", "/v1/launch", e.body(`,"game_id":"crash","demo":true`), ""},
		}
		var first []byte
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				r := e.post(t, tt.path, tt.body, tt.secret)
				wantError(t, r, http.StatusUnauthorized, "INVALID_SIGNATURE")
				if first == nil {
					first = r.Raw
				} else if string(first) != string(r.Raw) {
					t.Fatalf("refusal bodies differ: %s vs %s", first, r.Raw)
				}
			})
		}
	})
}

// Rule AUTH-3 AUTH-2: the signature is checked over the exact bytes received;
// the same JSON re-encoded (other whitespace, other key order) is refused.
func TestSignatureOverExactBytes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	compact := fmt.Sprintf(`{"operator":"acme","timestamp":%d}`, e.ts(0))
	tests := []struct {
		name, sent, signedOver string
		status                 int
	}{
		{"same bytes", compact, compact, 200},
		{"spaces added", fmt.Sprintf(`{"operator": "acme", "timestamp": %d}`, e.ts(0)), compact, 401},
		{"keys reordered", fmt.Sprintf(`{"timestamp":%d,"operator":"acme"}`, e.ts(0)), compact, 401},
		{"trailing newline", compact + "\n", compact, 401},
		{"signed with whitespace, sent with whitespace", "{\n  \"operator\": \"acme\",\n  \"timestamp\": " + fmt.Sprint(e.ts(0)) + "\n}", "{\n  \"operator\": \"acme\",\n  \"timestamp\": " + fmt.Sprint(e.ts(0)) + "\n}", 200},
		{"altered body", strings.Replace(compact, "acme", "acmf", 1), compact, 401},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := e.postSignedOver(t, "/v1/games", tt.sent, tt.signedOver)
			if r.Status != tt.status {
				t.Fatalf("status = %d, want %d: %s", r.Status, tt.status, r.Raw)
			}
		})
	}
}

// Rule LIM-1 AMB-26: the window is symmetric and 4:59 either way is inside it.
func TestSignatureWindow(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, d := range []time.Duration{-4*time.Minute - 59*time.Second, 4*time.Minute + 59*time.Second, 0} {
		r := e.post(t, "/v1/games", fmt.Sprintf(`{"operator":"acme","timestamp":%d}`, e.ts(d)), acmeSecret)
		if r.Status != http.StatusOK {
			t.Fatalf("timestamp %v from now: %d %s", d, r.Status, r.Raw)
		}
	}
}

// Rule AUTH-6 AUTH-10: the Authorization header is never read on the game routes:
// even the Bearer key that the game presents on wallet calls opens nothing here.
func TestAuthorizationHeaderIgnored(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	body := e.body("")
	for _, auth := range []string{"", "Bearer nonsense", "Basic Zm9vOmJhcg==", "bearer acme_live_key", "Bearer acme_live_key"} {
		if r := e.post(t, "/v1/games", body, acmeSecret, "Authorization", auth); r.Status != http.StatusOK {
			t.Fatalf("Authorization %q: %d", auth, r.Status)
		}
		if r := e.post(t, "/v1/games", body, "", "Authorization", auth); r.Status != http.StatusUnauthorized {
			t.Fatalf("Authorization %q without signature: %d", auth, r.Status)
		}
	}
}

// Rule AUTH-8 AMB-20: an operator configured without a secret (demo only) is
// not signed and has no window; its requests still carry an integer timestamp.
func TestUnsignedDemoOnlyOperator(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	old := fmt.Sprintf(`{"operator":"showroom","timestamp":%d}`, e.ts(-time.Hour))
	if r := e.post(t, "/v1/games", old, ""); r.Status != http.StatusOK {
		t.Fatalf("unsigned demo-only operator refused: %d %s", r.Status, r.Raw)
	}
	r := e.post(t, "/v1/games", `{"operator":"showroom"}`, "")
	wantError(t, r, http.StatusBadRequest, "INTERNAL_ERROR")
}

// Rule GAME-11: an unreadable, oversized or non-JSON body is 400 INTERNAL_ERROR,
// before any signature check.
func TestUnreadableBodies(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	big := fmt.Sprintf(`{"operator":"acme","timestamp":%d,"pad":"%s"}`, e.ts(0), strings.Repeat("x", 64<<10))
	tests := []struct{ name, body string }{
		{"empty", ""},
		{"not JSON", "operator=acme&timestamp=1"},
		{"truncated JSON", `{"operator":"acme",`},
		{"JSON array", `[{"operator":"acme"}]`},
		{"JSON string", `"acme"`},
		{"over 64 KiB", big},
	}
	for _, path := range []string{"/v1/games", "/v1/launch"} {
		for _, tt := range tests {
			t.Run(path+" "+tt.name, func(t *testing.T) {
				t.Parallel()
				r := e.post(t, path, tt.body, acmeSecret)
				wantError(t, r, http.StatusBadRequest, "INTERNAL_ERROR")
			})
		}
	}
}

// postSignedOver sends sent with the signature of signedOver.
func (e *env) postSignedOver(t *testing.T, path, sent, signedOver string) reply {
	t.Helper()
	return e.postWithSignature(t, path, sent, sign(acmeSecret, signedOver))
}

// Every route of the document, the ones added in 1.1.0 included, refuses an
// unsigned request and one signed with another secret with the same 401
// INVALID_SIGNATURE, before it reads anything else of the body: none of the
// back office's data leaves without the operator's signature.
func TestEveryRouteIsSigned(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for path := range documentedPaths(t) {
		for _, secret := range []string{"", otherSecret} {
			r := e.post(t, path, e.body(`,"round_id":"crash-1","transaction_id":"x","chain_id":"c","from":1,"to":2,"player_id":"p1"`), secret)
			wantError(t, r, http.StatusUnauthorized, "INVALID_SIGNATURE")
		}
	}
}
