package replica

import (
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// A replica is cut off (/readyz fails) only once NATS or the database has
// gone unreached for longer than the limit (the lease TTL), and its streams
// are closed only once NATS has, for the drain since: the streams are fed
// through NATS, so the database alone closes none (a database slow for every
// replica would close every stream of the cluster at once). Both end as soon
// as it reaches both again. It may lead a table (LeadBlocked) while NATS is
// reached, whatever the database: the lease's own renewals judge that. A
// link counts as unreached only with probesMissed of its probes in a row
// unanswered: a starved process that sent one probe and did not run again
// for longer than the limit is not cut off. The clock is the test's: a step
// sends the probes it says (each step of a link not reached sends
// probesMissed of them unless it says how many), and no probe runs.
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
		noLead     bool          // LeadBlocked() != nil
		closeNow   bool          // check's answer: Away is due
		whatIsLost string        // a word CutOff's error must hold
		probes     int           // probes sent (and missed) before the step; 0: probesMissed
	}
	cases := []struct {
		name  string
		steps []step
	}{
		{"NATS lost, then back", []step{
			{at: limit, db: true},
			{at: limit + ms, db: true, cutOff: true, noLead: true, whatIsLost: "NATS"},
			{at: limit + drain, db: true, cutOff: true, noLead: true},
			{at: limit + ms + drain, db: true, cutOff: true, noLead: true, closeNow: true},
			{at: limit + 2*drain, db: true, cutOff: true, noLead: true, closeNow: true}, // streams opened since close too
			{at: limit + 2*drain + ms, bus: true, db: true},
			{at: limit + 2*drain + 2*ms, bus: true, db: true},
		}},
		{"the database lost, then back: the streams stay", []step{
			{at: limit / 2, bus: true},
			{at: limit, bus: true}, // the limit itself: not yet
			{at: limit + ms, bus: true, cutOff: true, whatIsLost: "database"},
			{at: limit + ms + drain, bus: true, cutOff: true},
			{at: limit + 2*drain, bus: true, cutOff: true},
			{at: 3 * limit, bus: true, db: true},
		}},
		{"the database lost, then NATS too: the drain counts from NATS", []step{
			{at: limit, bus: true},
			{at: limit + ms, bus: true, cutOff: true, whatIsLost: "database"},
			{at: 2*limit + ms, cutOff: true},                                     // NATS: the limit itself
			{at: 2*limit + 2*ms, cutOff: true, noLead: true, whatIsLost: "NATS"}, // NATS lost
			{at: 2*limit + ms + drain, cutOff: true, noLead: true},               // not yet the drain since
			{at: 2*limit + 2*ms + drain, cutOff: true, noLead: true, closeNow: true},
			{at: 3*limit + drain, bus: true, cutOff: true}, // NATS back: the streams stay open again
			{at: 4 * limit, bus: true, db: true},
		}},
		{"a blip shorter than the limit", []step{
			{at: limit - ms, bus: true, db: true},
			{at: 2*limit - ms},
			{at: 2 * limit, bus: true, db: true},
		}},
		{"a starved process: one probe out, then nothing ran for longer than the limit", []step{
			{at: limit / 4, bus: true, db: true},
			{at: limit/4 + limit + ms, probes: 1},
			{at: limit/4 + limit + 2*ms, bus: true, db: true},
		}},
		{"starved, then really cut off", []step{
			{at: limit + ms, probes: 1},
			{at: limit + 2*ms, probes: 1},
			{at: limit + 3*ms, probes: 1, cutOff: true, noLead: true, whatIsLost: "NATS"},
		}},
		{"back before the drain ends: no stream closed", []step{
			{at: limit + ms, cutOff: true, noLead: true},
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
				probes := s.probes
				if probes == 0 {
					probes = probesMissed
				}
				if s.bus {
					h.reachedBus(now)
				} else {
					for range probes {
						h.sentBus()
					}
				}
				if s.db {
					h.reachedDB(now)
				} else {
					for range probes {
						h.missedDB()
					}
				}
				closeNow := h.check(now)
				err := h.CutOff()
				if (err != nil) != s.cutOff || closeNow != s.closeNow {
					t.Fatalf("at %s: cut off %v (%v), close the streams %v; want %v, %v", s.at, err != nil, err, closeNow, s.cutOff, s.closeNow)
				}
				if lead := h.LeadBlocked(); (lead != nil) != s.noLead {
					t.Fatalf("at %s: may not lead: %v; want blocked %v", s.at, lead, s.noLead)
				}
				if s.whatIsLost != "" && !strings.Contains(err.Error(), s.whatIsLost) {
					t.Fatalf("at %s: %v does not name %s", s.at, err, s.whatIsLost)
				}
			}
		})
	}
}

// A replica's clock is judged against the database's from the last samples:
// the one with the shortest round trip bounds the offset (|offset| + half
// its round trip within SkewBound), and the latest alone cuts the replica off
// when even its most favourable reading is beyond SkewBound (a clock that
// jumped). A slow database is not taken for a clock out of step while one
// recent sample was quick.
func TestHealthClockOutOfStep(t *testing.T) {
	t.Parallel()
	const ms = time.Millisecond
	s := func(offset, rtt time.Duration) clockSample { return clockSample{offset: offset, rtt: rtt} }
	cases := []struct {
		name    string
		samples []clockSample
		out     string // a word the error must hold; "": in step
	}{
		{"no sample yet", nil, ""},
		{"in step", []clockSample{s(ms, 2*ms), s(-ms, 3*ms)}, ""},
		{"at the bound", []clockSample{s(SkewBound-ms, 2*ms)}, ""},
		{"ahead by more than the bound", []clockSample{s(600*ms, 2*ms)}, "600ms"},
		{"behind by more than the bound", []clockSample{s(-600*ms, 2*ms)}, "-600ms"},
		{"uncertain beyond the bound: nothing shows it in step", []clockSample{s(0, 1200*ms), s(0, 1100*ms)}, "± 550ms"},
		{"one quick sample among slow ones shows it in step", []clockSample{s(100*ms, 2*ms), s(0, 1500*ms), s(0, 1400*ms)}, ""},
		{"jumped: the latest sample alone", []clockSample{s(0, ms), s(0, ms), s(0, ms), s(2*time.Second, 5*ms)}, "2s"},
		{"set right again: the latest of the quickest", []clockSample{s(2*time.Second, ms), s(2*time.Second, ms), s(0, ms)}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := outOfStep(tc.samples)
			switch {
			case tc.out == "" && err != nil:
				t.Fatalf("out of step: %v", err)
			case tc.out != "" && err == nil:
				t.Fatal("in step, want out of step")
			case tc.out != "" && !strings.Contains(err.Error(), tc.out):
				t.Fatalf("%v: want it to say %q", err, tc.out)
			}
		})
	}
}

// A probe's sample is taken at the middle of its round trip, and the replica
// is cut off while its clock is out of step, whatever NATS and the database
// answer; only the latest clockSamples samples count.
func TestHealthSamplesTheClock(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	h := &Health{cfg: HealthConfig{Limit: time.Second, Drain: time.Second, Now: func() time.Time { return now }},
		logger: slog.New(slog.NewTextHandler(io.Discard, nil)), lastBus: now, lastDB: now}
	// Sent at now, answered 10 ms later; the database read its clock 600 ms
	// behind this replica's midpoint.
	h.sampled(now, now.Add(5*time.Millisecond-600*time.Millisecond), now.Add(10*time.Millisecond))
	if off, unc, ok := h.ClockOffset(); !ok || off != 600*time.Millisecond || unc != 5*time.Millisecond {
		t.Fatalf("offset %s ± %s (%v), want 600ms ± 5ms", off, unc, ok)
	}
	if err := h.CutOff(); err == nil || !strings.Contains(err.Error(), "clock") {
		t.Fatalf("cut off: %v, want the clock", err)
	}
	for range clockSamples {
		h.sampled(now, now.Add(time.Millisecond), now.Add(2*time.Millisecond))
	}
	if err := h.CutOff(); err != nil {
		t.Fatalf("back in step: %v", err)
	}
	if len(h.samples) != clockSamples {
		t.Fatalf("%d samples kept, want %d", len(h.samples), clockSamples)
	}
}

// A clock that steps (a jump, then a fix) is judged on the readings after
// the step: once back in step, a quicker reading from before the fix does not
// cut the replica off again while it ages out of the window.
func TestHealthClockStepForgetsTheOldSamples(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	h := &Health{cfg: HealthConfig{Limit: time.Second, Drain: time.Second, Now: func() time.Time { return now }},
		logger: slog.New(slog.NewTextHandler(io.Discard, nil)), lastBus: now, lastDB: now}
	probe := func(ahead, rtt time.Duration) { // the database's clock ahead of this one's by ahead
		h.sampled(now, now.Add(rtt/2+ahead), now.Add(rtt))
	}
	probe(0, 2*time.Millisecond)
	probe(0, 2*time.Millisecond)
	if err := h.CutOff(); err != nil {
		t.Fatalf("in step: %v", err)
	}
	// Two seconds ahead, read by quick probes.
	for range 3 {
		probe(2*time.Second, 200*time.Microsecond)
	}
	if err := h.CutOff(); err == nil {
		t.Fatal("2 s ahead: not cut off")
	}
	// Fixed, read by slower probes than the ones before the fix.
	for i := range clockSamples {
		probe(0, time.Millisecond)
		if err := h.CutOff(); err != nil {
			t.Fatalf("probe %d after the fix: %v", i+1, err)
		}
	}
}

// A replica prices cashouts itself only while its clock is known within
// PriceBound of the database's (|offset| + half the quickest round trip):
// not before its first probe, not when the offset or the uncertainty is too
// large; then its cashouts go to the leader.
func TestHealthPriceClock(t *testing.T) {
	t.Parallel()
	const ms = time.Millisecond
	cases := []struct {
		name    string
		samples []clockSample
		prices  bool
	}{
		{"not measured yet", nil, false},
		{"in step", []clockSample{{offset: ms, rtt: 2 * ms}}, true},
		{"at the bound", []clockSample{{offset: PriceBound - ms, rtt: 2 * ms}}, true},
		{"offset beyond the bound", []clockSample{{offset: PriceBound + ms, rtt: 0}}, false},
		{"too uncertain", []clockSample{{offset: 0, rtt: 2*PriceBound + 2*ms}}, false},
		{"one quick probe among slow ones", []clockSample{{offset: 0, rtt: 40 * ms}, {offset: ms, rtt: ms}, {offset: 0, rtt: 30 * ms}}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := &Health{samples: tc.samples}
			if err := h.PriceClock(); (err == nil) != tc.prices {
				t.Fatalf("PriceClock: %v; want pricing %v", err, tc.prices)
			}
		})
	}
}
