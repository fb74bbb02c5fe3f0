package wallet

import (
	"errors"
	"net/http"
	"testing"
	"time"
)

// Rule WERR-20 AUTH-17: a storm of 5xx opens the breaker after 5 in a row;
// while open nothing reaches the operator and every call is temporary at once.
func TestBreakerOpensOn5xxStorm(t *testing.T) {
	t.Parallel()
	f := newFakeOperator(t, reply(503, `{"status":"error","error_code":"INTERNAL_ERROR"}`))
	c := newTestClient(t, f.srv.URL, WithBreaker(BreakerSettings{OpenFor: time.Hour}))
	for i := range 5 {
		if c.BreakerOpen() {
			t.Fatalf("breaker open after %d failures", i)
		}
		if res, _ := c.Win(t.Context(), sampleWin()); res.Outcome != Temporary || res.Reason != ReasonHTTP5xx {
			t.Fatalf("attempt %d: %s/%s", i, res.Outcome, res.Reason)
		}
	}
	if !c.BreakerOpen() || c.BreakerState() != BreakerStateOpen {
		t.Fatalf("breaker %s after 5 consecutive 5xx, want open", c.BreakerState())
	}
	for _, route := range allRoutes {
		start := time.Now()
		res, err := call(t, c, route)
		if res.Outcome != Temporary || res.Reason != ReasonBreakerOpen || !errors.Is(err, ErrBreakerOpen) || !errors.Is(err, ErrTemporary) {
			t.Fatalf("%s while open: %s/%s %v", route, res.Outcome, res.Reason, err)
		}
		if d := time.Since(start); d > 100*time.Millisecond {
			t.Fatalf("%s while open took %s", route, d)
		}
	}
	if n := f.hits.Load(); n != 5 {
		t.Fatalf("operator received %d requests, want 5: nothing may pass an open breaker", n)
	}
}

// Rule AUTH-17 BET-10 BAL-7 WIN-12: 4xx answers and business refusals never
// open the breaker, however many.
func TestBreakerIgnoresRefusals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		route  Route
		status int
		body   string
	}{
		{"402 INSUFFICIENT_FUNDS", RouteBet, 402, errBody(CodeInsufficientFunds)},
		{"200 INSUFFICIENT_FUNDS", RouteBet, 200, errBody(CodeInsufficientFunds)},
		{"401 INVALID_SIGNATURE", RouteBet, 401, errBody(CodeInvalidSignature)},
		{"/balance 401 token refused", RouteBalance, 401, errBody(CodeTokenInvalid)},
		{"/win 404 orphan", RouteWin, 404, errBody(CodeBetNotFound)},
		{"409 DUPLICATE_TRANSACTION", RouteBet, 409, errBody(CodeDuplicateTransaction)},
		{"400 malformed", RouteRollback, 400, errBody(CodeInternalError)},
		{"200 INTERNAL_ERROR", RouteRollback, 200, errBody(CodeInternalError)},
		{"200 HTML", RouteBet, 200, `<html>`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFakeOperator(t, reply(tt.status, tt.body))
			c := newTestClient(t, f.srv.URL)
			const n = 40
			for range n {
				if res, _ := call(t, c, tt.route); res.Reason == ReasonBreakerOpen {
					t.Fatal("breaker opened")
				}
			}
			if c.BreakerOpen() || f.hits.Load() != n {
				t.Fatalf("breaker %s, %d of %d requests reached the operator", c.BreakerState(), f.hits.Load(), n)
			}
		})
	}
}

// More than half of at least 20 attempts failing opens the breaker even
// without 5 failures in a row.
func TestBreakerFailureRatio(t *testing.T) {
	t.Parallel()
	var i int
	f := newFakeOperator(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		i++ // the client below sends one request at a time
		if i%3 == 0 {
			okReply(w, r, nil)
			return
		}
		reply(502, ``)(w, r, nil)
	})
	c := newTestClient(t, f.srv.URL, WithBreaker(BreakerSettings{OpenFor: time.Hour}))
	for n := 1; n <= 20; n++ {
		_, _ = c.Bet(t.Context(), sampleBet())
		if open := c.BreakerOpen(); open != (n == 20) {
			t.Fatalf("after %d attempts (2 failures for 1 success) breaker open = %v", n, open)
		}
	}
}

// Timeouts are transport failures: they count.
func TestBreakerCountsTimeouts(t *testing.T) {
	t.Parallel()
	f := newFakeOperator(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	c := newTestClient(t, f.srv.URL, WithHTTPClient(&http.Client{Timeout: 30 * time.Millisecond}),
		WithBreaker(BreakerSettings{ConsecutiveFailures: 3, OpenFor: time.Hour}))
	for range 3 {
		if res, _ := c.Bet(t.Context(), sampleBet()); res.Reason != ReasonTimeout {
			t.Fatalf("reason %s, want timeout", res.Reason)
		}
	}
	if !c.BreakerOpen() {
		t.Fatal("breaker closed after 3 timeouts")
	}
}

// After OpenFor one probe passes: its success closes the breaker, its failure
// opens it again.
func TestBreakerHalfOpen(t *testing.T) {
	t.Parallel()
	f := newFakeOperator(t, reply(500, ``))
	const openFor = 50 * time.Millisecond
	c := newTestClient(t, f.srv.URL, WithBreaker(BreakerSettings{ConsecutiveFailures: 2, OpenFor: openFor}))
	for range 2 {
		_, _ = c.Bet(t.Context(), sampleBet())
	}
	if !c.BreakerOpen() {
		t.Fatal("breaker not open")
	}
	time.Sleep(openFor + 20*time.Millisecond)
	if c.BreakerState() != BreakerStateHalfOpen {
		t.Fatalf("state %s after OpenFor, want half-open", c.BreakerState())
	}
	// A failed probe opens it again.
	if res, _ := c.Bet(t.Context(), sampleBet()); res.Reason != ReasonHTTP5xx {
		t.Fatalf("probe: %s", res.Reason)
	}
	if !c.BreakerOpen() {
		t.Fatal("a failed probe did not reopen the breaker")
	}
	time.Sleep(openFor + 20*time.Millisecond)
	f.setReply(nil)
	if res, err := c.Bet(t.Context(), sampleBet()); err != nil {
		t.Fatalf("probe: %v (%s)", err, res.Reason)
	}
	if c.BreakerState() != BreakerStateClosed {
		t.Fatalf("state %s after a successful probe, want closed", c.BreakerState())
	}
	if f.hits.Load() != 4 {
		t.Fatalf("%d requests, want 4", f.hits.Load())
	}
}

func TestBreakerSettingsDefaults(t *testing.T) {
	t.Parallel()
	d := DefaultBreakerSettings()
	if d != (BreakerSettings{ConsecutiveFailures: 5, FailureRatio: 0.5, MinRequests: 20, Window: 10 * time.Second, OpenFor: 5 * time.Second, HalfOpenProbes: 1}) {
		t.Fatalf("defaults %+v", d)
	}
	if got := (BreakerSettings{}).withDefaults(); got != d {
		t.Fatalf("zero settings %+v, want the defaults", got)
	}
	got := BreakerSettings{ConsecutiveFailures: 3, OpenFor: time.Second}.withDefaults()
	if got.ConsecutiveFailures != 3 || got.OpenFor != time.Second || got.MinRequests != 20 {
		t.Fatalf("partial settings %+v", got)
	}
}
