package operatorapi_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/internal/store"
)

// seedingChain stores a chain whose seeding window runs for another minute
// of the env's clock.
func (e *env) seedingChain(t *testing.T, id string) {
	t.Helper()
	now := store.MillisOf(e.now)
	if err := e.store.InsertChain(t.Context(), store.ChainRecord{ID: id, GameID: "crash", Number: 1, FirstSeq: 1, Length: 10,
		Terminal: strings.Repeat("ab", 32), RTPBasisPts: 9700, MaxMultiplier: 100000, FormulaVersion: 1,
		SealedSeed: []byte("sealed"), CreatedAt: now, SeedingEndsAt: store.MillisOf(e.now.Add(time.Minute))}); err != nil {
		t.Fatal(err)
	}
}

// An operator contributes to a chain in its seeding window, once: the same
// value again answers as the first time, another is refused; a closed window,
// an unknown chain and a malformed value are refused in the game direction's
// error shape, each with an example of the document; the signature is
// checked like on every game route. Both backends.
func TestContributionsToASeedingChain(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e *env) {
		e.seedingChain(t, "crash-c1")
		documented := documentedRefusals(t)
		const path = "/v1/fairness/contributions"
		body := func(op, chain, value string) string {
			return fmt.Sprintf(`{"operator":%q,"timestamp":%d,"chain_id":%q,"value":%q}`, op, e.ts(0), chain, value)
		}
		v1, v2 := strings.Repeat("0a", 32), strings.Repeat("0b", 32)
		r := e.post(t, path, body("acme", "crash-c1", v1), acmeSecret)
		if r.Status != 200 || r.Body["status"] != "ok" || r.Body["value"] != v1 || r.Body["received_at"] != float64(e.ts(0)) ||
			r.Body["seeding_ends_at"] != float64(e.ts(time.Minute)) {
			t.Fatalf("a contribution: %d %s", r.Status, r.Raw)
		}
		e.now = e.now.Add(time.Second)
		if again := e.post(t, path, body("acme", "crash-c1", v1), acmeSecret); again.Status != 200 || again.Body["received_at"] != r.Body["received_at"] {
			t.Fatalf("the same value again: %d %s; want the first answer", again.Status, again.Raw)
		}
		if other := e.post(t, path, body("strict", "crash-c1", v2), "strict-secret-0123456789abcdef"); other.Status != 200 {
			t.Fatalf("another operator's value: %d %s", other.Status, other.Raw)
		}
		refusals := []struct {
			name, body, secret string
			status             int
			code               string
		}{
			{"another value of the same operator", body("acme", "crash-c1", v2), acmeSecret, 409, "CONTRIBUTION_CONFLICT"},
			{"an unknown chain", body("acme", "crash-c9", v1), acmeSecret, 404, "CHAIN_NOT_FOUND"},
			{"a value not 32 bytes", body("acme", "crash-c1", "abc"), acmeSecret, 400, "INVALID_CONTRIBUTION"},
			{"an uppercase value", body("acme", "crash-c1", strings.ToUpper(v2)), acmeSecret, 400, "INVALID_CONTRIBUTION"},
			{"not JSON", "{not json", acmeSecret, 400, "INTERNAL_ERROR"},
			{"signature refused", body("acme", "crash-c1", v2), "another-secret-0123456789abcdef", 401, "INVALID_SIGNATURE"},
		}
		for _, tt := range refusals {
			r := e.post(t, path, tt.body, tt.secret)
			wantError(t, r, tt.status, tt.code)
			key := path + " " + strconv.Itoa(r.Status)
			if got := fmt.Sprint(r.Body["error_code"]) + " " + masked(r.Body["error_message"]); !documented[key][got] {
				t.Errorf("%s answers %s, which no example of %s shows", tt.name, r.Raw, key)
			}
		}
		// The window closes: no more contributions.
		e.now = e.now.Add(time.Minute)
		r = e.post(t, path, body("showroom", "crash-c1", v2), "")
		wantError(t, r, 409, "SEEDING_CLOSED")
		if got := fmt.Sprint(r.Body["error_code"]) + " " + masked(r.Body["error_message"]); !documented[path+" 409"][got] {
			t.Errorf("the closed window answers %s, which no example shows", r.Raw)
		}
		list, err := e.store.Contributions(t.Context(), "crash-c1")
		if err != nil || len(list) != 2 || list[0].Name != "acme" || list[0].Value != v1 || list[1].Name != "strict" {
			t.Fatalf("stored contributions %+v, %v; want acme's first value and strict's", list, err)
		}
	})
}
