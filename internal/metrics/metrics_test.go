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

// RegisterAll leaves in each variable the collector registered first, and
// stops at the first collector refused.
func TestRegisterAll(t *testing.T) {
	t.Parallel()
	r := prometheus.NewRegistry()
	newVars := func() (prometheus.Counter, *prometheus.GaugeVec) {
		return prometheus.NewCounter(prometheus.CounterOpts{Name: "crashgame_test_a_total", Help: "a"}),
			prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "crashgame_test_b", Help: "b"}, []string{"x"})
	}
	a1, b1 := newVars()
	if err := metrics.RegisterAll(r, metrics.VarOf(&a1), metrics.VarOf(&b1)); err != nil {
		t.Fatal(err)
	}
	a2, b2 := newVars()
	if err := metrics.RegisterAll(r, metrics.VarOf(&a2), metrics.VarOf(&b2)); err != nil || a2 != a1 || b2 != b1 {
		t.Fatalf("the second registration got %v, %v, %v; want the first collectors", a2 == a1, b2 == b1, err)
	}
	clash := prometheus.NewGauge(prometheus.GaugeOpts{Name: "crashgame_test_a_total", Help: "other"})
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "crashgame_test_c_total", Help: "c"})
	if err := metrics.RegisterAll(r, metrics.VarOf(&clash), metrics.VarOf(&c)); err == nil {
		t.Fatal("a gauge under a counter's name was accepted")
	}
	if r.Unregister(c) {
		t.Fatal("a collector after the refused one was registered")
	}
}
