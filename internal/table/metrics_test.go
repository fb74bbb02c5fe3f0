package table_test

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// gauge reads the value of the unlabelled metric name from r (-1: absent).
func gauge(t *testing.T, r *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := r.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name || len(mf.GetMetric()) != 1 {
			continue
		}
		m := mf.GetMetric()[0]
		switch {
		case m.GetCounter() != nil:
			return m.GetCounter().GetValue()
		case m.GetGauge() != nil:
			return m.GetGauge().GetValue()
		}
	}
	return -1
}

// waitFor polls until cond holds; the guard is generous and no speed is checked.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after 10 s", what)
		}
	}
}

// The streams' metrics count what the streams were sent (the fan-out an
// operator of a cluster reads per replica), the writes that carried it, and
// the streams held.
func TestStreamMetrics(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	e := newEnv(t, envOptions{rate: 1000, burst: 1000, registerer: reg})
	srv := httptest.NewServer(e.handler)
	t.Cleanup(srv.Close)
	if got := gauge(t, reg, "crashgame_streams_open"); got != 0 {
		t.Fatalf("crashgame_streams_open before any stream = %v, want 0", got)
	}
	if got := gauge(t, reg, "crashgame_stream_messages_total"); got != 0 {
		t.Fatalf("crashgame_stream_messages_total before any stream = %v, want 0", got)
	}

	c := e.dial(t, srv)
	c.send(map[string]any{"type": "hello", "session": e.openDemo(t)})
	// After the hello: balance, the current phase, the round's board.
	for range 3 {
		if _, err := c.next(); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "three messages counted", func() bool { return gauge(t, reg, "crashgame_stream_messages_total") >= 3 })
	// The three were due at once and left in one write: every write counted
	// carries at least one message, and this one carried three.
	if msgs, writes := gauge(t, reg, "crashgame_stream_messages_total"), gauge(t, reg, "crashgame_stream_writes_total"); writes < 1 || writes >= msgs {
		t.Fatalf("after the hello: %v writes for %v messages, want fewer writes than messages", writes, msgs)
	}
	waitFor(t, "one stream open", func() bool { return gauge(t, reg, "crashgame_streams_open") == 1 })

	// Every later event counts too: the next phase change.
	before := gauge(t, reg, "crashgame_stream_messages_total")
	c.until("round.flying", nil)
	waitFor(t, "the phase change counted", func() bool { return gauge(t, reg, "crashgame_stream_messages_total") > before })

	e.srv.Close()
	c.closedWith()
	waitFor(t, "no stream open after the close", func() bool { return gauge(t, reg, "crashgame_streams_open") == 0 })
}
