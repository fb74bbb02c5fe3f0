package cluster

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/crashstudio/crashgame/internal/cluster/natstest"
)

// eventually bounds every wait of these tests for something that happens by
// itself (a reconnection). It is a bound against hanging, never an assertion
// on how long anything took.
const eventually = 30 * time.Second

// connect connects a Bus named name to srv, with its own registry, and closes
// it when the test ends.
func connect(t *testing.T, srv *natstest.Server, name string, mod ...func(*Options)) (*Bus, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	o := Options{URLs: []string{srv.URL()}, Name: name, Logger: slog.New(slog.DiscardHandler), Registerer: reg}
	for _, m := range mod {
		m(&o)
	}
	ctx, cancel := context.WithTimeout(t.Context(), eventually)
	defer cancel()
	b, err := Connect(ctx, o)
	if err != nil {
		t.Fatalf("Connect(%s): %v", name, err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b, reg
}

// waitFor polls cond until it holds, failing the test if it never does.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(eventually); !cond(); {
		if time.Now().After(end) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitConnected waits until every bus is connected again and the server
// knows each one's subscriptions (a PING answered after they were sent).
func waitConnected(t *testing.T, buses ...*Bus) {
	t.Helper()
	for _, b := range buses {
		waitFor(t, "the bus to reconnect", func() bool { return b.Connected() && b.nc.Flush() == nil })
	}
}

// metric finds the sample of name with these label values in reg.
func metric(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) *dto.Metric {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	next:
		for _, m := range mf.GetMetric() {
			got := map[string]string{}
			for _, lp := range m.GetLabel() {
				got[lp.GetName()] = lp.GetValue()
			}
			for k, v := range labels {
				if got[k] != v {
					continue next
				}
			}
			return m
		}
	}
	return nil
}

func counterValue(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) float64 {
	t.Helper()
	if m := metric(t, reg, name, labels); m != nil {
		return m.GetCounter().GetValue()
	}
	return 0
}

func histogramCount(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) uint64 {
	t.Helper()
	if m := metric(t, reg, name, labels); m != nil {
		return m.GetHistogram().GetSampleCount()
	}
	return 0
}
