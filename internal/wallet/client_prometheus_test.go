package wallet

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func TestPrometheusMetrics(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	m, err := NewPrometheusMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewPrometheusMetrics(reg); err != nil {
		t.Fatalf("second registration: %v", err)
	}
	f := newFakeOperator(t, reply(500, ``))
	c := newTestClient(t, f.srv.URL, WithMetrics(m), WithBreaker(BreakerSettings{ConsecutiveFailures: 2}))
	for range 3 {
		_, _ = c.Bet(t.Context(), sampleBet())
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range families {
		for _, mt := range f.GetMetric() {
			switch {
			case mt.GetCounter() != nil:
				got[f.GetName()] += mt.GetCounter().GetValue()
			case mt.GetGauge() != nil:
				got[f.GetName()] = mt.GetGauge().GetValue()
			case mt.GetHistogram() != nil:
				got[f.GetName()] += float64(mt.GetHistogram().GetSampleCount())
			}
		}
	}
	want := map[string]float64{
		"crashgame_wallet_attempts_total":           2,
		"crashgame_wallet_attempt_duration_seconds": 2,
		"crashgame_wallet_breaker_rejections_total": 1,
		"crashgame_wallet_breaker_state":            float64(BreakerStateOpen),
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v (all: %v)", k, got[k], v, got)
		}
	}
}
