package operatorapi_test

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// The link routes: a round's support page and a CSV export, each a URL on
// the installation's address whose last segment is a fresh token, valid for
// the configured time; a round the operator could not see, or a query out of
// bounds, gets no link. Both backends.
func TestLinks(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e *env) {
		e.round(t, "crash", "crash-1", 1, true)
		e.bet(t, "acme", "p1", "crash-1", "b-1", e.now.Add(-time.Hour), false)
		documented := documentedRefusals(t)
		link := func(path, fields, prefix string) string {
			t.Helper()
			r := e.post(t, path, e.body(fields), acmeSecret)
			url, _ := r.Body["url"].(string)
			if r.Status != 200 || !strings.HasPrefix(url, installation.BaseURL+prefix) || r.Body["expires_at"] != float64(e.ts(time.Hour)) {
				t.Fatalf("%s: %d %s", path, r.Status, r.Raw)
			}
			return strings.TrimPrefix(url, installation.BaseURL+prefix)
		}
		a := link("/v1/rounds/support-link", `,"round_id":"crash-1","player_id":"p1"`, "/support/rounds/")
		b := link("/v1/rounds/support-link", `,"round_id":"crash-1"`, "/support/rounds/")
		if a == b || len(a) < 40 {
			t.Fatalf("tokens %q and %q: want two distinct random tokens", a, b)
		}
		link("/v1/transactions/export", fmt.Sprintf(`,"from":%d,"to":%d,"status":"exhausted"`, e.ts(-time.Hour), e.ts(0)), "/exports/transactions/")

		for _, tc := range []struct {
			path, fields, code string
			status             int
		}{
			{"/v1/rounds/support-link", `,"round_id":"crash-9"`, "ROUND_NOT_FOUND", 404},
			{"/v1/rounds/support-link", `,"round_id":"crash-1","player_id":"s1"`, "ROUND_NOT_FOUND", 404},
			{"/v1/transactions/export", fmt.Sprintf(`,"from":%d,"to":%d`, e.ts(-40*24*time.Hour), e.ts(0)), "INVALID_QUERY", 400},
		} {
			r := e.post(t, tc.path, e.body(tc.fields), acmeSecret)
			wantError(t, r, tc.status, tc.code)
			if !documented[fmt.Sprintf("%s %d", tc.path, tc.status)][tc.code+" "+masked(r.Body["error_message"])] {
				t.Errorf("%s answers %s, which no example shows", tc.path, r.Raw)
			}
		}
	})
}
