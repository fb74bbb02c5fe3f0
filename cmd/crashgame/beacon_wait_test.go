package main

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/crashstudio/crashgame/internal/beacon"
	"github.com/crashstudio/crashgame/internal/beacon/beacontest"
	"github.com/crashstudio/crashgame/internal/chains"
	"github.com/crashstudio/crashgame/internal/engine"
	"github.com/crashstudio/crashgame/internal/seal"
	"github.com/crashstudio/crashgame/internal/server"
	"github.com/crashstudio/crashgame/internal/store"
	"github.com/crashstudio/crashgame/internal/store/storetest"
)

// testClock is an engine.Clock that moves only when the test sets it.
type testClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []testTimer
}

type testTimer struct {
	at time.Time
	ch chan time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	if d <= 0 {
		ch <- c.now
		return ch
	}
	c.timers = append(c.timers, testTimer{at: c.now.Add(d), ch: ch})
	return ch
}

// Set moves the clock to t and fires every timer due by then.
func (c *testClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
	keep := c.timers[:0]
	for _, w := range c.timers {
		if w.at.After(t) {
			keep = append(keep, w)
			continue
		}
		w.ch <- t
	}
	c.timers = keep
}

// silentBeacon is a relay that never answers: every fetch fails at once.
type silentBeacon struct{ network beacon.Network }

func (s silentBeacon) Network() beacon.Network { return s.network }

func (s silentBeacon) Fetch(context.Context, uint64) (beacon.Value, error) {
	return beacon.Value{}, errors.New("dial tcp: connection refused")
}

// While a game's chain waits for a beacon that never answers, /readyz
// answers 503 with the reason (the game, its chain, the round, the error),
// and crashgame_chain_waiting_seconds{game_id} says for how long on the
// table's clock; both are 0 and 200 before the round's time.
func TestReadyzAndMetricWhileAChainWaitsForItsBeacon(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := store.Open(ctx, storetest.SQLite(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	key := sha256.Sum256([]byte("readyz test: the seed key"))
	sealer, err := seal.New(key[:])
	if err != nil {
		t.Fatal(err)
	}
	clock := &testClock{now: time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)}
	network := beacontest.New(t, beacontest.Options{Genesis: clock.Now().Add(-time.Hour)}).Network
	tbl, err := engine.New(ctx, engine.Config{
		Game:  engine.Game{ID: "crash", RTPBasisPoints: 9700, MaxMultiplier: 100000, Betting: 5 * time.Second, Pause: 3 * time.Second},
		Store: st.Records(), Chains: st.HashChains(), Sealer: sealer, Clock: clock, Logger: slog.New(slog.DiscardHandler),
		ChainLength: 100, SeedingWindow: 10 * time.Second, RevealWindow: 5 * time.Second,
		Beacon: silentBeacon{network}, Lease: engine.LeaseSettings{TTL: 10 * time.Second},
	})
	if err != nil {
		t.Fatal(err)
	}
	a := &app{store: st, logger: slog.New(slog.DiscardHandler), registry: prometheus.NewRegistry(),
		tables: map[string]*engine.Table{"crash": tbl}}
	if err := registerChainWaiting(a.registry, tbl); err != nil {
		t.Fatal(err)
	}
	srv := server.New(server.Config{Logger: slog.New(slog.DiscardHandler), Documents: http.NotFoundHandler(), Ready: readiness(a, nil)})
	readyz := func() (int, map[string]string) {
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
		var body map[string]string
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
			t.Fatalf("/readyz body %q: %v", rec.Body.String(), err)
		}
		return rec.Code, body
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- tbl.Run(runCtx) }()
	t.Cleanup(func() {
		cancel()
		tbl.Stop()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	chain := waitChain(t, st)
	if code, body := readyz(); code != http.StatusOK {
		t.Fatalf("/readyz in the seeding window: %d %v; want 200", code, body)
	}
	if got := gauge(t, a.registry); got != 0 {
		t.Fatalf("crashgame_chain_waiting_seconds in the seeding window = %v, want 0", got)
	}
	clock.Set(chain.Beacon.RoundAt)
	waitUntil(t, "the table to report its wait", func() bool { _, _, w := tbl.BeaconWaiting(); return w })
	clock.Set(chain.Beacon.RoundAt.Add(90 * time.Second))
	code, body := readyz()
	if code != http.StatusServiceUnavailable || body["status"] != "unavailable" {
		t.Fatalf("/readyz while the chain waits: %d %v; want 503", code, body)
	}
	for _, want := range []string{"game crash plays no round", chain.ID, "connection refused"} {
		if !strings.Contains(body["reason"], want) {
			t.Fatalf("/readyz's reason %q does not say %q", body["reason"], want)
		}
	}
	if got := gauge(t, a.registry); got != 90 {
		t.Fatalf("crashgame_chain_waiting_seconds 90 s after the round's time = %v, want 90", got)
	}
}

// gauge reads crashgame_chain_waiting_seconds{game_id="crash"} from r.
func gauge(t *testing.T, r *prometheus.Registry) float64 {
	t.Helper()
	mfs, err := r.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "crashgame_chain_waiting_seconds" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "game_id" && l.GetValue() == "crash" {
					return m.GetGauge().GetValue()
				}
			}
		}
	}
	t.Fatal("no crashgame_chain_waiting_seconds{game_id=\"crash\"}")
	return 0
}

// waitChain waits for the table to publish its first chain.
func waitChain(t *testing.T, st *store.Store) chains.Chain {
	t.Helper()
	var c chains.Chain
	waitUntil(t, "the first chain", func() bool {
		var err error
		c, err = st.HashChains().CurrentChain(context.Background(), "crash")
		return err == nil
	})
	return c
}

// waitUntil polls cond, which reads state, until it holds; it fails the
// test after 5 s.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}
