package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/internal/beacon"
	"github.com/crashstudio/crashgame/internal/engine"
	"github.com/crashstudio/crashgame/internal/logtest"
)

// downBeacon is a relay that fails every fetch at once while down, telling
// the test each fetch's instant on the table's clock; healed, it answers as
// the local beacon does.
type downBeacon struct {
	real    *beacon.Client
	clock   *manualClock
	down    atomic.Bool
	fetches chan time.Time
}

func (d *downBeacon) Network() beacon.Network { return d.real.Network() }

func (d *downBeacon) Fetch(ctx context.Context, round uint64) (beacon.Value, error) {
	if d.down.Load() {
		d.fetches <- d.clock.Now()
		return beacon.Value{}, errors.New("relay unreachable")
	}
	return d.real.Fetch(ctx, round)
}

// hasTimer reports whether a timer of the clock fires at at: the table
// waits until then.
func (c *manualClock) hasTimer(at time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, w := range c.waiters {
		if w.at.Equal(at) {
			return true
		}
	}
	return false
}

// A chain whose beacon does not answer is a visible wait: BeaconWaiting
// reports it from the first failed fetch, with how long it has waited since
// the round's time on the table's clock, until the round verifies. The log
// warns at once, then once a minute on that clock, however long each try
// takes: here 7 s a try (a relay that drops requests costs the 5 s fetch
// bound and the 2 s retry), which counting 30 tries turned into 210 s.
func TestBeaconWaitIsReportedAndWarnedOnceAMinute(t *testing.T) {
	t.Parallel()
	var h *harness
	bn := newBeacon(t, func() time.Time { return h.clock.Now() })
	var logs logtest.Buffer
	down := &downBeacon{real: bn.client, fetches: make(chan time.Time, 1)}
	down.down.Store(true)
	h = newHarnessAdjusted(t, "", nil, nil, func(c *engine.Config) {
		c.SeedingWindow, c.RevealWindow, c.Beacon = 10*time.Second, 5*time.Second, down
		c.Logger = slog.New(slog.NewJSONHandler(&logs, nil))
	})
	down.clock = h.clock
	if _, _, waiting := h.table.BeaconWaiting(); waiting {
		t.Fatal("a table that has not started reports a beacon wait")
	}
	h.start()
	c := h.seedingChain()
	if _, _, waiting := h.table.BeaconWaiting(); waiting {
		t.Fatal("a chain in its seeding window reports a beacon wait")
	}
	const try = 7 * time.Second
	h.clock.Set(c.Beacon.RoundAt)
	for k := range 86 { // 10 minutes of tries
		var at time.Time
		select {
		case at = <-down.fetches:
		case <-time.After(5 * time.Second):
			t.Fatalf("no fetch number %d", k+1)
		}
		if want := c.Beacon.RoundAt.Add(time.Duration(k) * try); !at.Equal(want) {
			t.Fatalf("fetch %d at %s, want %s", k+1, at, want)
		}
		waitFor(t, "the table to wait before its next try", func() bool { return h.clock.hasTimer(at.Add(2 * time.Second)) })
		w, waited, waiting := h.table.BeaconWaiting()
		if !waiting || waited != time.Duration(k)*try || w.ChainID != c.ID || w.Round != c.Beacon.Round || !w.Since.Equal(c.Beacon.RoundAt) {
			t.Fatalf("after fetch %d: BeaconWaiting = %+v, %s, %v; want chain %s round %d waiting %s", k+1, w, waited, waiting, c.ID, c.Beacon.Round, time.Duration(k)*try)
		}
		if !strings.Contains(w.Error(), "game crash plays no round") || !strings.Contains(w.Error(), "relay unreachable") {
			t.Fatalf("the wait's reason %q names neither the game nor the relay's error", w.Error())
		}
		h.clock.Set(at.Add(try))
	}
	var waited []string
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var rec struct{ Msg, Waited string }
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if strings.HasPrefix(rec.Msg, "waiting for the beacon round") {
			waited = append(waited, rec.Waited)
		}
	}
	// At once, then at the first try a minute or more after the last warning.
	want := []string{"0s", "1m3s", "2m6s", "3m9s", "4m12s", "5m15s", "6m18s", "7m21s", "8m24s", "9m27s"}
	if strings.Join(waited, " ") != strings.Join(want, " ") {
		t.Fatalf("warnings after waiting %v; want %v (once a minute of the table's clock)", waited, want)
	}
	down.down.Store(false)
	h.clock.Set(h.clock.Now().Add(try))
	waitFor(t, "the wait to end once the round verifies", func() bool {
		_, _, waiting := h.table.BeaconWaiting()
		return !waiting
	})
	h.waitPhase(engine.PhaseBetting)
}
