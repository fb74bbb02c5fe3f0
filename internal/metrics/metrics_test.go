package metrics_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/crashstudio/crashgame/internal/metrics"
)

// Two parts registering the same collector share the first one; a different
// collector under a taken name is refused.
func TestRegister(t *testing.T) {
	t.Parallel()
	r := prometheus.NewRegistry()
	opts := prometheus.CounterOpts{Name: "crashgame_test_total", Help: "test"}
	first, err := metrics.Register(r, prometheus.NewCounter(opts))
	if err != nil {
		t.Fatal(err)
	}
	again, err := metrics.Register(r, prometheus.NewCounter(opts))
	if err != nil || again != first {
		t.Fatalf("the second registration got %v, %v; want the first collector", again, err)
	}
	if _, err := metrics.Register(r, prometheus.NewGauge(prometheus.GaugeOpts{Name: "crashgame_test_total", Help: "other"})); err == nil {
		t.Fatal("a gauge under a counter's name was accepted")
	}
}
