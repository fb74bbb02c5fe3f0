package fairness

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
)

// The statistics here are test-side only and use float64; the package itself
// never does.

// game is a setting of the formula and the cashout targets whose return the
// simulation measures.
type game struct {
	salt          string
	rtpBP, maxMul int64
	targets       []int64 // hundredths, 101..maxMul
}

// tally counts, over rounds, how many crashed at 1.00x and how many reached
// each target.
type tally struct {
	rounds, ones int64
	atLeast      []int64
}

func (t *tally) add(u tally) {
	t.rounds += u.rounds
	t.ones += u.ones
	if t.atLeast == nil {
		t.atLeast = make([]int64, len(u.atLeast))
	}
	for i, n := range u.atLeast {
		t.atLeast[i] += n
	}
}

// simulate plays n rounds on workers goroutines, each with its own ChaCha8
// stream keyed by (seed, worker), so the result depends only on n, workers and
// seed. With hashes, each round is 32 random bytes through CrashPoint (HMAC and
// all); without, r itself is drawn uniformly from [0, 2^52) and goes through
// CrashFromDraw: the HMAC taken as the uniform random function it is assumed to
// be, at 1/100 of the cost.
func (g game) simulate(n int64, workers int, seed uint64, hashes bool) tally {
	parts := make([]tally, workers)
	var wg sync.WaitGroup
	for w := range workers {
		share := n / int64(workers)
		if int64(w) < n%int64(workers) {
			share++
		}
		wg.Go(func() { parts[w] = g.play(share, seed, uint64(w), hashes) })
	}
	wg.Wait()
	var sum tally
	for _, p := range parts {
		sum.add(p)
	}
	return sum
}

func (g game) play(n int64, seed, worker uint64, hashes bool) tally {
	var key [32]byte
	binary.LittleEndian.PutUint64(key[0:], seed)
	binary.LittleEndian.PutUint64(key[8:], worker)
	rng := rand.NewChaCha8(key)
	t := tally{rounds: n, atLeast: make([]int64, len(g.targets))}
	var h [32]byte
	for range n {
		var c int64
		if hashes {
			_, _ = rng.Read(h[:]) // ChaCha8.Read never fails
			c = CrashPoint(h, g.salt, g.rtpBP, g.maxMul)
		} else {
			c = CrashFromDraw(rng.Uint64()>>(64-DrawBits), g.rtpBP, g.maxMul)
		}
		if c == MinCrash {
			t.ones++
		}
		for i, x := range g.targets {
			if c >= x {
				t.atLeast[i]++
			}
		}
	}
	return t
}

// exactP is P(crash >= x) for 101 <= x <= max_multiplier, exactly
// floor(R*2^52/(100x))/2^52 (TestCrashPointCountIsExact), as a float64.
func exactP(rtpBP, x int64) float64 {
	return float64(bigCount(rtpBP, x)) / float64(DrawRange)
}

// check is one estimate against its exact expectation: the observed value, the
// exact one and its standard error over the simulated rounds.
type check struct {
	name               string
	observed, expected float64
	se                 float64
}

// z is the deviation in standard errors.
func (c check) z() float64 { return (c.observed - c.expected) / c.se }

// checks turns a tally into the estimates the tests bound.
//
// The return of a cashout at target x (multiplier m = x/100) in one round is
// m with probability p = P(crash >= x) and 0 otherwise: mean m*p (the RTP, up
// to 2^-52), variance m^2 p(1-p). Over n independent rounds the empirical
// return m*k/n has standard error m*sqrt(p(1-p)/n). At 97 % and n = 10^6 that
// is 0.020 points at 1.01x, 0.061 at 1.5x, 0.100 at 2x and 0.296 at 10x; at
// n = 10^8 ten times less (0.010 at 2x, 0.030 at 10x). Likewise the share of
// 1.00x crashes, q = 1 - P(crash >= 101), has standard error sqrt(q(1-q)/n).
func (g game) checks(t tally) []check {
	n := float64(t.rounds)
	var cs []check
	for i, x := range g.targets {
		m, p := float64(x)/100, exactP(g.rtpBP, x)
		cs = append(cs, check{
			name:     fmt.Sprintf("return at %d.%02dx", x/100, x%100),
			observed: m * float64(t.atLeast[i]) / n,
			expected: m * p,
			se:       m * math.Sqrt(p*(1-p)/n),
		})
	}
	q := 1 - exactP(g.rtpBP, MinCrash+1)
	cs = append(cs, check{
		name:     "share of 1.00x",
		observed: float64(t.ones) / n,
		expected: q,
		se:       math.Sqrt(q * (1 - q) / n),
	})
	return cs
}

// maxZ is the tolerance of TestRTPDistribution, in standard errors.
//
// The simulation is seeded, so the test is deterministic; the bound must still
// be one a correct implementation meets for almost every seed, or it is tuned
// to a lucky stream. The counts are binomial with n*p >= 10^4 here, so the
// normal approximation holds, and |z| > 5 has probability 5.7e-7 per check:
// with the 9 checks below (some correlated) fewer than one seed in 10^5 would
// fail a correct formula. Sampling only guards against gross mistakes (wrong
// bit count, r read backwards, floats, a missing floor or cap), e.g. at 1.01x a
// 0.1 point bias at n = 10^6; exactness is TestCrashPointCountIsExact's job.
const maxZ = 5

// TestRTPDistribution simulates 10^6 rounds per game from random hashes through
// the whole formula (HMAC included) and bounds the return of several cashout
// targets and the share of 1.00x crashes within maxZ standard errors of their
// exact values. Under -race (about 8 times slower) it simulates 10^5 rounds; the
// tolerance, in standard errors, is the same.
func TestRTPDistribution(t *testing.T) {
	t.Parallel()
	n := int64(1_000_000)
	if raceEnabled {
		n = 100_000
	}
	games := []game{
		{publishedSalt, 9700, 1000000, []int64{101, 150, 200, 1000}},
		{"crashgame", 9900, 500, []int64{101, 200, 500}}, // 500: the cap itself
	}
	for i, g := range games {
		t.Run(fmt.Sprintf("rtp %d max %d", g.rtpBP, g.maxMul), func(t *testing.T) {
			t.Parallel()
			tl := g.simulate(n, runtime.GOMAXPROCS(0), uint64(i)+1, true)
			for _, c := range g.checks(tl) {
				t.Logf("%s over %d rounds: %.4f %% (exact %.4f %%, off by %+.4f points, %+.2f standard errors)",
					c.name, n, 100*c.observed, 100*c.expected, 100*(c.observed-c.expected), c.z())
				if math.Abs(c.z()) > maxZ {
					t.Errorf("%s: %.4f %%, more than %d standard errors (%.4f points) from %.4f %%",
						c.name, 100*c.observed, maxZ, 100*maxZ*c.se, 100*c.expected)
				}
			}
		})
	}
}

// BenchmarkRTP1e8 simulates 10^8 rounds per iteration on all cores (r drawn
// uniformly, through CrashFromDraw; see simulate) for a 97 % game capped at
// 10000x, and reports how far the empirical return of each cashout target is
// from the configured RTP, in percentage points, over all b.N*10^8 rounds
// (dev-pp@2.00x etc.), and the largest deviation in standard errors (max-|z|).
// The brief's target is 0.05 points; at 10^8 rounds one standard error is
// 0.002 points at 1.01x, 0.010 at 2x and 0.030 at 10x, so 0.05 points is 25,
// 5 and 1.7 standard errors: a sure pass at low targets, a coin flip's cousin
// at 10x.
func BenchmarkRTP1e8(b *testing.B) {
	const perIteration = 100_000_000
	g := game{publishedSalt, 9700, 1000000, []int64{101, 150, 200, 1000}}
	var total tally
	seed := uint64(0)
	for b.Loop() {
		seed++
		total.add(g.simulate(perIteration, runtime.GOMAXPROCS(0), seed, false))
	}
	worst := 0.0
	for i, c := range g.checks(total) {
		worst = max(worst, math.Abs(c.z()))
		if i < len(g.targets) {
			x := g.targets[i]
			// Against the configured RTP itself, not the exact expectation:
			// they differ by less than x/(100*2^52).
			dev := 100 * (c.observed - float64(g.rtpBP)/MaxRTPBasisPoints)
			b.ReportMetric(dev, fmt.Sprintf("dev-pp@%d.%02dx", x/100, x%100))
		}
	}
	b.ReportMetric(worst, "max-|z|")
}
