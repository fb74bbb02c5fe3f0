package wallet

import "time"

// Metrics receives the Client's measurements. Implementations must be safe for
// concurrent use and fast: they are called on every attempt.
//
// NewPrometheusMetrics (client_prometheus.go) is the implementation the game
// uses: attempts by operator, route and outcome, latency by route, breaker
// rejections and state. Without WithMetrics a Client measures nothing.
type Metrics interface {
	// Attempt is called once per request sent, with its outcome and duration.
	Attempt(operator string, route Route, outcome Outcome, d time.Duration)
	// BreakerRejected is called for a call refused by the open breaker.
	BreakerRejected(operator string, route Route)
	// BreakerState is called with the initial state and on every change.
	BreakerState(operator string, s BreakerState)
}

type noMetrics struct{}

func (noMetrics) Attempt(string, Route, Outcome, time.Duration) {}
func (noMetrics) BreakerRejected(string, Route)                 {}
func (noMetrics) BreakerState(string, BreakerState)             {}
