package replica

import (
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// A replica is cut off (/readyz fails) only once NATS or the database has
// gone unreached for longer than the limit (the lease TTL), its streams are
// closed only once the drain has passed since, and both end as soon as it
// reaches both again. The clock is the test's: no probe runs.
func TestHealthCutOffAfterTheLimit(t *testing.T) {
	t.Parallel()
	const (
		limit = 2 * time.Second
		drain = 2500 * time.Millisecond
		ms    = time.Millisecond
	)
	type step struct {
		at         time.Duration // since the start
		bus, db    bool          // reached at this moment
		cutOff     bool          // CutOff() != nil
		closeNow   bool          // check's answer: Away is due
		whatIsLost string        // a word CutOff's error must hold
	}
	cases := []struct {
		name  string
		steps []step
	}{
		{"NATS lost, then back", []step{
			{at: limit, db: true},
			{at: limit + ms, db: true, cutOff: true, whatIsLost: "NATS"},
			{at: limit + drain, db: true, cutOff: true},
			{at: limit + ms + drain, db: true, cutOff: true, closeNow: true},
			{at: limit + 2*drain, db: true, cutOff: true, closeNow: true}, // streams opened since close too
			{at: limit + 2*drain + ms, bus: true, db: true},
			{at: limit + 2*drain + 2*ms, bus: true, db: true},
		}},
		{"the database lost, then back", []step{
			{at: limit / 2, bus: true},
			{at: limit, bus: true}, // the limit itself: not yet
			{at: limit + ms, bus: true, cutOff: true, whatIsLost: "database"},
			{at: limit + ms + drain, bus: true, cutOff: true, closeNow: true},
			{at: 3 * limit, bus: true, db: true},
		}},
		{"a blip shorter than the limit", []step{
			{at: limit - ms, bus: true, db: true},
			{at: 2*limit - ms},
			{at: 2 * limit, bus: true, db: true},
		}},
		{"back before the drain ends: no stream closed", []step{
			{at: limit + ms, cutOff: true},
			{at: limit + drain, bus: true, db: true},
			{at: limit + 2*drain + ms, bus: true, db: true},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
			now := start
			h := &Health{cfg: HealthConfig{Limit: limit, Drain: drain, Now: func() time.Time { return now }},
				logger: slog.New(slog.NewTextHandler(io.Discard, nil)), lastBus: start, lastDB: start}
			for _, s := range tc.steps {
				now = start.Add(s.at)
				if s.bus {
					h.reachedBus(now)
				}
				if s.db {
					h.reachedDB(now)
				}
				closeNow := h.check(now)
				err := h.CutOff()
				if (err != nil) != s.cutOff || closeNow != s.closeNow {
					t.Fatalf("at %s: cut off %v (%v), close the streams %v; want %v, %v", s.at, err != nil, err, closeNow, s.cutOff, s.closeNow)
				}
				if s.whatIsLost != "" && !strings.Contains(err.Error(), s.whatIsLost) {
					t.Fatalf("at %s: %v does not name %s", s.at, err, s.whatIsLost)
				}
			}
		})
	}
}
