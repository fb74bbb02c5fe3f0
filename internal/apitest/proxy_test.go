package apitest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// errorsOf is a test that records its errors instead of failing.
type errorsOf struct {
	*testing.T
	errs []string
}

func (e *errorsOf) Errorf(format string, args ...any) {
	e.errs = append(e.errs, fmt.Sprintf(format, args...))
}

// A load balancer's own page (its 408 for a request sent too slowly, its 502)
// is what a route's default and 5XX declare, with any body, HTML included;
// the game itself never answers a status the route does not list by number.
func TestProxyResponse(t *testing.T) {
	t.Parallel()
	v := New(t, "table.v1.yaml")
	req := httptest.NewRequest(http.MethodPost, "/api/v1/bets", strings.NewReader(`{"amount":100}`))
	html := http.Header{"Content-Type": {"text/html"}}
	for _, tt := range []struct {
		name   string
		status int
		body   string
	}{
		{"a proxy's 408", http.StatusRequestTimeout, "<html><body><h1>408 Request Time-out</h1></body></html>"},
		{"a proxy's 502", http.StatusBadGateway, "<html><body><h1>502 Bad Gateway</h1></body></html>"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			proxy := &errorsOf{T: t}
			v.ProxyResponse(proxy, req, tt.status, html, []byte(tt.body))
			if len(proxy.errs) != 0 {
				t.Errorf("as the proxy's answer: %q, want none", proxy.errs)
			}
			game := &errorsOf{T: t}
			v.Response(game, req, tt.status, html, []byte(tt.body))
			if len(game.errs) == 0 {
				t.Errorf("as the game's own answer: no error, want the status refused")
			}
		})
	}
}
