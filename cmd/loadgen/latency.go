package main

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// The game's request histogram (crashgame_http_request_duration_seconds):
// the time the game itself took to answer, from a request's headers read to
// its handler's return. The load tool's own latencies add the network, its
// own scheduling and, in a cluster, the balancer; on two shared cores a
// saturated load tool adds most. The difference says whose time a latency
// is.
const (
	metricRequestBucket = "crashgame_http_request_duration_seconds_bucket"
	routeBet            = "POST /api/v1/bets"
	routeCashout        = "POST /api/v1/bets/{bet_id}/cashout"
	targetSeconds       = 0.010 // the cashout target's bound, one of the buckets'

	// The table committer's histograms (since the 29th of November): a
	// cashout's answer waits for a batch's wait and then its commit.
	metricCommitWaitBucket = "crashgame_table_commit_wait_seconds_bucket"
	metricCommitBucket     = "crashgame_table_commit_seconds_bucket"
	commitWait             = "commit_wait" // latencyReading's keys for them
	commitTook             = "commit"
)

// gameLatency is the game's own time to answer the players' bets and
// cashouts over the play, every status together, from its histogram read at
// the play's start and end (each replica's, summed, in a cluster).
type gameLatency struct {
	Bets     histogramSummary `json:"bets"`
	Cashouts histogramSummary `json:"cashouts"`
	// CommitWait and Commit are the tables' committers' batches: how long
	// a batch's first job waited behind the others, and how long its
	// transaction took (nil from a build without them).
	CommitWait *histogramSummary `json:"commit_wait,omitempty"`
	Commit     *histogramSummary `json:"commit,omitempty"`
	// Unread names the processes left out: their /metrics did not answer at
	// one end, or their histogram restarted between the two reads.
	Unread []string `json:"unread,omitempty"`
}

// histogramSummary is what a histogram's buckets say of one route. The
// quantiles are interpolated within a bucket, as Prometheus'
// histogram_quantile does; Within10ms is exact (10 ms is a bucket's bound).
type histogramSummary struct {
	N          float64 `json:"n"`
	P50        float64 `json:"p50_ms"`
	P99        float64 `json:"p99_ms"`
	Within10ms float64 `json:"share_within_10ms"`
}

// buckets are one route's cumulative bucket counts by upper bound (seconds;
// +Inf included).
type buckets map[float64]float64

// routeBuckets gathers from m, a scrape of /metrics, the cumulative counts of
// route's requests by bucket, every status code summed.
func routeBuckets(m map[string]float64, route string) buckets {
	return metricBuckets(m, metricRequestBucket, func(labels string) bool { return label(labels, "route") == route })
}

// metricBuckets gathers from m the cumulative counts by bucket of the
// histogram whose bucket series is metric, summed over the label sets that
// keep accepts.
func metricBuckets(m map[string]float64, metric string, keep func(labels string) bool) buckets {
	out := buckets{}
	for k, v := range m {
		labels, ok := strings.CutPrefix(k, metric+"{")
		if !ok || !keep(labels) {
			continue
		}
		le, err := strconv.ParseFloat(label(labels, "le"), 64)
		if err != nil {
			continue
		}
		out[le] += v
	}
	return out
}

// label is the value of name in a label set as the text format writes it
// (`a="x",b="y"}`); the game's route patterns hold no quote or comma.
func label(set, name string) string {
	i := strings.Index(set, name+`="`)
	if i < 0 || (i > 0 && set[i-1] != ',') {
		return ""
	}
	v := set[i+len(name)+2:]
	if j := strings.IndexByte(v, '"'); j >= 0 {
		return v[:j]
	}
	return ""
}

// minus is b less an earlier reading of the same counters; false when any
// count went down (the process restarted between the two readings).
func (b buckets) minus(earlier buckets) (buckets, bool) {
	out := buckets{}
	for le, v := range b {
		d := v - earlier[le]
		if d < 0 {
			return nil, false
		}
		out[le] = d
	}
	return out, true
}

// add adds o's counts to b.
func (b buckets) add(o buckets) {
	for le, v := range o {
		b[le] += v
	}
}

// summary is what b says: its count, p50 and p99 in ms, and the share within
// 10 ms.
func (b buckets) summary() histogramSummary {
	n := b[math.Inf(1)]
	if n == 0 {
		return histogramSummary{}
	}
	return histogramSummary{N: n, P50: 1000 * b.quantile(0.5), P99: 1000 * b.quantile(0.99), Within10ms: b[targetSeconds] / n}
}

// quantile is the q-quantile in seconds, interpolated linearly within the
// bucket that holds it (from the bound below, 0 for the first); in the +Inf
// bucket it is the highest finite bound, as histogram_quantile answers.
func (b buckets) quantile(q float64) float64 {
	les := slices.Sorted(maps.Keys(b))
	n := b[math.Inf(1)]
	rank := q * n
	lower, below := 0.0, 0.0
	for _, le := range les {
		c := b[le]
		if c >= rank {
			if math.IsInf(le, 1) {
				return lower
			}
			if c == below {
				return le
			}
			return lower + (le-lower)*(rank-below)/(c-below)
		}
		lower, below = le, c
	}
	return lower
}

// latencyTarget is a process whose histogram the run reads.
type latencyTarget struct{ name, url string }

// latencyTargets are the game, or every replica of the cluster.
func (lg *loadgen) latencyTargets() []latencyTarget {
	if len(lg.o.replicas) == 0 {
		return []latencyTarget{{"game", lg.o.metricsURL}}
	}
	out := make([]latencyTarget, len(lg.o.replicas))
	for i, r := range lg.o.replicas {
		out[i] = latencyTarget{r.Name, r.URL}
	}
	return out
}

// latencyReading is one reading of every target's bet and cashout buckets;
// nil for a target that did not answer.
type latencyReading []map[string]buckets

// readLatency reads every target's histogram at once.
func (lg *loadgen) readLatency(ctx context.Context) latencyReading {
	ts := lg.latencyTargets()
	out := make(latencyReading, len(ts))
	var wg sync.WaitGroup
	for i, t := range ts {
		wg.Go(func() {
			if ctx.Err() != nil {
				return
			}
			m, err := scrapeMetrics(t.url)
			if err != nil {
				return
			}
			every := func(string) bool { return true }
			out[i] = map[string]buckets{
				routeBet: routeBuckets(m, routeBet), routeCashout: routeBuckets(m, routeCashout),
				commitWait: metricBuckets(m, metricCommitWaitBucket, every), commitTook: metricBuckets(m, metricCommitBucket, every),
			}
		})
	}
	wg.Wait()
	return out
}

// gameLatencyOver is the game's own latency between two readings.
func (lg *loadgen) gameLatencyOver(from, to latencyReading) *gameLatency {
	ts := lg.latencyTargets()
	keys := []string{routeBet, routeCashout, commitWait, commitTook}
	sum := map[string]buckets{}
	for _, k := range keys {
		sum[k] = buckets{}
	}
	var unread []string
targets:
	for i, t := range ts {
		if from[i] == nil || to[i] == nil {
			unread = append(unread, t.name)
			continue
		}
		diff := map[string]buckets{}
		for _, k := range keys {
			d, ok := to[i][k].minus(from[i][k])
			if !ok {
				unread = append(unread, t.name)
				continue targets
			}
			diff[k] = d
		}
		for _, k := range keys {
			sum[k].add(diff[k])
		}
	}
	bets, cashouts := sum[routeBet], sum[routeCashout]
	if len(unread) == len(ts) || (bets[math.Inf(1)] == 0 && cashouts[math.Inf(1)] == 0) {
		return nil // nothing read, or a build without the histogram
	}
	l := &gameLatency{Bets: bets.summary(), Cashouts: cashouts.summary(), Unread: unread}
	if sum[commitTook][math.Inf(1)] > 0 {
		w, c := sum[commitWait].summary(), sum[commitTook].summary()
		l.CommitWait, l.Commit = &w, &c
	}
	return l
}

// describe is the summary's line of l.
func (l *gameLatency) describe() string {
	s := fmt.Sprintf("the game's own time to answer (its request histogram, from headers read to the handler's return, every status): bets %.0f, p50 %.1f p99 %.1f ms, %.1f %% within 10 ms; cashouts %.0f, p50 %.1f p99 %.1f ms, %.1f %% within 10 ms",
		l.Bets.N, l.Bets.P50, l.Bets.P99, 100*l.Bets.Within10ms, l.Cashouts.N, l.Cashouts.P50, l.Cashouts.P99, 100*l.Cashouts.Within10ms)
	if l.Commit != nil {
		s += fmt.Sprintf("; the tables' commits %.0f, waited p50 %.1f p99 %.1f ms, took p50 %.1f p99 %.1f ms (%.1f %% within 10 ms)",
			l.Commit.N, l.CommitWait.P50, l.CommitWait.P99, l.Commit.P50, l.Commit.P99, 100*l.Commit.Within10ms)
	}
	if len(l.Unread) > 0 {
		s += fmt.Sprintf(" (without %s: not read at both ends)", strings.Join(l.Unread, ", "))
	}
	return s
}
