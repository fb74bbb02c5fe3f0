package table_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/crashstudio/crashgame/internal/cluster"
	"github.com/crashstudio/crashgame/internal/cluster/natstest"
	"github.com/crashstudio/crashgame/internal/logtest"
	"github.com/crashstudio/crashgame/internal/replica"
)

// cutDatabase is the replica's PostgreSQL as its health sees it: it answers
// until cut, with its clock ahead of the replica's by ahead.
type cutDatabase struct {
	cut   atomic.Bool
	ahead atomic.Int64 // nanoseconds
}

func (d *cutDatabase) Clock(_ context.Context, now func() time.Time) (sent, at, received time.Time, err error) {
	if d.cut.Load() {
		return time.Time{}, time.Time{}, time.Time{}, errors.New("the database does not answer")
	}
	sent = now()
	return sent, sent.Add(time.Duration(d.ahead.Load())), now(), nil
}

// A replica that has lost NATS, or its database, for longer than the lease
// TTL, or whose clock is out of step with the database's, is not ready
// (/readyz reads Health.CutOff). Without NATS or with its clock out of step,
// after the drain, it closes its streams with 1001, which the page (app.js)
// and the stream document answer by reconnecting at once through the load
// balancer; a stream opened on it meanwhile is closed too. Without its
// database only, it keeps its streams: they are fed through NATS. Once it
// reaches both again, its clock in step, it is ready and keeps its streams.
func TestStreamClosedWhileTheReplicaIsCutOff(t *testing.T) {
	t.Parallel()
	const drain = 200 * time.Millisecond
	e := newEnv(t, envOptions{rate: 1000, burst: 1000})
	srv := httptest.NewServer(e.handler)
	t.Cleanup(srv.Close)
	nats := natstest.Start(t)
	logger := logtest.New(t)
	bus, err := cluster.Connect(t.Context(), cluster.Options{URLs: []string{nats.URL()}, Name: "replica-a", Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = bus.Close() })
	db := &cutDatabase{}
	var leaves atomic.Int64
	h, err := replica.NewHealth(replica.HealthConfig{
		Bus: bus, Database: db, Limit: time.Second, Drain: drain, Logger: logger,
		Away: func() { e.srv.Leave(); leaves.Add(1) },
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = h.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	session := e.openDemo(t)

	open := func() *client {
		t.Helper()
		c := e.dial(t, srv)
		c.send(map[string]any{"type": "hello", "session": session})
		c.until("bets", nil)
		return c
	}
	cuts := []struct {
		what     string
		cut, fix func()
		closes   bool // the streams close with 1001; false: they stay open
	}{
		{"NATS", nats.Shutdown, nats.Restart, true},
		{"the database", func() { db.cut.Store(true) }, func() { db.cut.Store(false) }, false},
		{"the clock in step", func() { db.ahead.Store(int64(2 * time.Second)) }, func() { db.ahead.Store(0) }, true},
	}
	for _, cut := range cuts {
		c := open()
		if err := h.CutOff(); err != nil {
			t.Fatalf("before %s is cut: %v", cut.what, err)
		}
		before := leaves.Load()
		cut.cut()
		if cut.closes {
			if code := c.closedWith(); code != websocket.StatusGoingAway {
				t.Fatalf("%s cut: the stream closed with %d, want 1001", cut.what, code)
			}
			if h.CutOff() == nil {
				t.Fatalf("%s cut: the stream closed while the replica was ready", cut.what)
			}
			// A stream opened on the cut-off replica is closed too.
			c = e.dial(t, srv)
			c.send(map[string]any{"type": "hello", "session": session})
			if code := c.closedWith(); code != websocket.StatusGoingAway {
				t.Fatalf("%s cut: a stream opened meanwhile closed with %d, want 1001", cut.what, code)
			}
		} else {
			waitFor(t, "cut off once "+cut.what+" is lost", func() bool { return h.CutOff() != nil })
			// Past the drain and the next probes: the stream still answers,
			// and nothing was closed.
			time.Sleep(3 * drain)
			c.send(map[string]any{"type": "ping", "t": 9})
			c.until("pong", func(ev map[string]any) bool { return ev["t"] == float64(9) })
			if h.CutOff() == nil || leaves.Load() != before {
				t.Fatalf("%s cut: cut off %v, streams closed %d times", cut.what, h.CutOff(), leaves.Load()-before)
			}
			_ = c.c.Close(websocket.StatusNormalClosure, "")
		}
		cut.fix()
		waitFor(t, "ready again once "+cut.what+" is back", func() bool { return h.CutOff() == nil })
		c = open()
		before = leaves.Load()
		// Two heartbeats later, several probes have found the replica
		// connected: the stream stays open and nothing was closed.
		c.until("ping", nil)
		c.until("ping", nil)
		if h.CutOff() != nil || leaves.Load() != before {
			t.Fatalf("%s back: cut off %v, streams closed %d times since", cut.what, h.CutOff(), leaves.Load()-before)
		}
		_ = c.c.Close(websocket.StatusNormalClosure, "")
	}
}
