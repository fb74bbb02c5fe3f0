package wallet

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/crashstudio/crashgame/internal/metrics"
)

// NewPrometheusMetrics registers the wallet client's metrics with r and
// returns the Metrics to give every Client (WithMetrics); one value serves
// every operator:
//
//   - crashgame_wallet_attempts_total{operator,route,outcome}: requests sent;
//   - crashgame_wallet_attempt_duration_seconds{operator,route}: their latency;
//   - crashgame_wallet_breaker_rejections_total{operator,route}: calls refused
//     by an open breaker, nothing sent;
//   - crashgame_wallet_breaker_state{operator}: 0 closed, 1 half-open, 2 open.
//
// Registering twice with the same r reuses the collectors already there.
func NewPrometheusMetrics(r prometheus.Registerer) (Metrics, error) {
	m := &promMetrics{
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "crashgame_wallet_attempts_total",
			Help: "Wallet requests sent, by operator, route and outcome (success, refused, temporary).",
		}, []string{"operator", "route", "outcome"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "crashgame_wallet_attempt_duration_seconds",
			Help:    "Duration of one wallet request, answer read, by operator and route.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
		}, []string{"operator", "route"}),
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "crashgame_wallet_breaker_rejections_total",
			Help: "Wallet calls refused at once by an open circuit breaker (nothing sent).",
		}, []string{"operator", "route"}),
		state: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "crashgame_wallet_breaker_state",
			Help: "Circuit breaker state per operator: 0 closed, 1 half-open, 2 open.",
		}, []string{"operator"}),
	}
	if err := metrics.RegisterAll(r, metrics.VarOf(&m.attempts), metrics.VarOf(&m.latency),
		metrics.VarOf(&m.rejected), metrics.VarOf(&m.state)); err != nil {
		return nil, err
	}
	return m, nil
}

type promMetrics struct {
	attempts *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	rejected *prometheus.CounterVec
	state    *prometheus.GaugeVec
}

func (m *promMetrics) Attempt(operator string, route Route, o Outcome, d time.Duration) {
	m.attempts.WithLabelValues(operator, string(route), o.String()).Inc()
	m.latency.WithLabelValues(operator, string(route)).Observe(d.Seconds())
}

func (m *promMetrics) BreakerRejected(operator string, route Route) {
	m.rejected.WithLabelValues(operator, string(route)).Inc()
}

func (m *promMetrics) BreakerState(operator string, s BreakerState) {
	m.state.WithLabelValues(operator).Set(float64(s))
}
