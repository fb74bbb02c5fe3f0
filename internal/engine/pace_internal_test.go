package engine

import (
	"testing"
	"time"
)

var paceT0 = time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)

// The estimate is zero until paceMinSamples debits were answered in the
// last paceWindow, then their 90th percentile plus paceMargin; older
// samples leave it, so a spell of slow debits stops refusing bets once it
// is paceWindow past, with no new debit.
func TestDebitPaceEstimate(t *testing.T) {
	t.Parallel()
	var p debitPace
	for range paceMinSamples - 1 {
		p.took(paceT0, time.Second)
	}
	if got := p.estimate(paceT0); got != 0 {
		t.Fatalf("estimate after %d samples = %s, want 0", paceMinSamples-1, got)
	}
	p.took(paceT0, time.Second)
	if got, want := p.estimate(paceT0), time.Second+paceMargin; got != want {
		t.Fatalf("estimate after %d samples of 1 s = %s, want %s", paceMinSamples, got, want)
	}
	if got := p.estimate(paceT0.Add(paceWindow + time.Millisecond)); got != 0 {
		t.Fatalf("estimate %s after the last sample = %s, want 0: the slow spell is over", paceWindow, got)
	}
	at := paceT0.Add(time.Minute)
	for i := range paceSamples {
		d := 10 * time.Millisecond
		if i%16 == 0 {
			d = 5 * time.Second // 4 of 64: under a tenth
		}
		p.took(at, d)
	}
	if got, want := p.estimate(at), 10*time.Millisecond+paceMargin; got != want {
		t.Fatalf("estimate of 60 samples of 10 ms and 4 of 5 s = %s, want %s", got, want)
	}
}
