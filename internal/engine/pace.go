package engine

import (
	"slices"
	"sync"
	"time"
)

// debitPace keeps how long this process's recent debits took to learn their
// outcome, from the start of the bet's intent commit to the wallet's answer
// of its /bet (Debit), so that a bet which would learn it after its round's
// debit deadline is refused before it moves any money (Debit, ErrTableBusy).
// Only debits the wallet answered count (a success or a final refusal): one
// whose outcome stayed unknown (a wallet or a network away) measured no
// latency, and its bet moved no money the game knows of. Only debits of the
// last paceWindow count, so that a spell of slowness (a partition, a
// stall) stops refusing bets once it is over, even though no bet refused
// meanwhile adds a sample.
type debitPace struct {
	mu      sync.Mutex
	samples [paceSamples]paceSample
	n       int // samples taken, all time
}

type paceSample struct {
	at   time.Time // when the debit's outcome was learnt
	took time.Duration
}

const (
	// paceSamples is how many of the last debits the estimate reads at most.
	paceSamples = 64
	// paceMinSamples is how many recent ones it needs before it refuses
	// anything: a fresh process, or one that takes few bets, sheds nothing.
	paceMinSamples = 8
	// paceWindow is how recent a debit must be to count: about a round.
	paceWindow = 10 * time.Second
	// paceMargin is added to the estimate for what follows the wallet's
	// answer before the round must know it: the leader's decision (one
	// round trip over NATS in a cluster) and the acceptance's commit.
	paceMargin = 100 * time.Millisecond
)

// took records, at at, one answered debit's time to its outcome.
func (p *debitPace) took(at time.Time, d time.Duration) {
	p.mu.Lock()
	p.samples[p.n%paceSamples] = paceSample{at: at, took: d}
	p.n++
	p.mu.Unlock()
}

// estimate is the time a debit started at now should allow for to learn its
// outcome: the 90th percentile of the debits answered in the paceWindow
// before now (of the last paceSamples) plus paceMargin; zero while fewer
// than paceMinSamples are that recent.
func (p *debitPace) estimate(now time.Time) time.Duration {
	from := now.Add(-paceWindow)
	s := make([]time.Duration, 0, paceSamples)
	p.mu.Lock()
	for _, x := range p.samples[:min(p.n, paceSamples)] {
		if !x.at.Before(from) {
			s = append(s, x.took)
		}
	}
	p.mu.Unlock()
	if len(s) < paceMinSamples {
		return 0
	}
	slices.Sort(s)
	return s[(len(s)*9)/10] + paceMargin
}
