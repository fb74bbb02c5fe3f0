package fairness

import (
	"math"
	"math/big"
	"strconv"
)

// The void test: are a chain's void rounds' crash points distributed as the
// formula predicts, or do they lean high? The house holds the seed key, so it
// knows every crash point ahead; stopping the process voids the round. A
// round interrupted in betting refunds every bet, among them the
// auto-cashouts that would have won. The test counts, among the void rounds
// that never took off, those whose crash point is at or above 2x, 10x and
// 100x, against the formula's share RTP/x.
//
// Only voids that never took off are tested. Under honest operation, the
// moment a process stops during betting does not depend on the round's crash
// point (it is not revealed, and the betting window has the same length for
// every round), so each such void's crash point is a fresh draw of the
// formula. A void in flight is different: a round still flying when the
// process stops has not crashed yet, so an honest interruption picks rounds
// that fly long, whose crash points are high; counting them would flag honest
// installations.

// VoidThresholds are the crash points, in hundredths, the void test counts
// at or above: 2x, 10x and 100x.
var VoidThresholds = [3]int64{200, 1000, 10000}

// VoidFlagLevel is the family-wise false-alarm rate of the void flag: a chain
// is flagged when any of the three p-values is below VoidFlagLevel / 3
// (Bonferroni), so an honest chain is flagged with probability at most
// VoidFlagLevel, however many voids it has.
const VoidFlagLevel = 0.001

// VoidFlagRule says, in words, when a chain is flagged; published with the
// test.
const VoidFlagRule = `Tested: the void rounds that never took off (no started_at). For x = 2x, 10x and 100x, observed = how many of them have a crash point >= x; under the formula each has that chance independently, share = RTP / x with RTP = rtp_bp / 10000 (0 when x > max_multiplier), and p_value = P[X >= observed] for X ~ Binomial(tested, share). Flagged when any p_value < 0.001 / 3 (Bonferroni over the 3 thresholds): an honest chain is flagged with probability at most 0.001.`

// VoidTest is the test at one threshold.
type VoidTest struct {
	AtLeast  int64 // the threshold, a crash point in hundredths
	Tested   int64 // voids tested
	Observed int64 // of them, with a crash point >= AtLeast
	// Share is the formula's chance of a crash point >= AtLeast: RTP/x, 0
	// above maxMultiplier.
	Share  *big.Rat
	PValue float64 // P[X >= Observed], X ~ Binomial(Tested, Share)
}

// ShareText is Share as an exact decimal: for the thresholds 2x, 10x and
// 100x its denominator divides a power of ten, so the text is exact.
func (v VoidTest) ShareText() string {
	return decimalText(v.Share)
}

// PValueText is PValue with 4 significant digits, as published ("1",
// "0.04851", "8.41e-06").
func (v VoidTest) PValueText() string {
	return strconv.FormatFloat(v.PValue, 'g', 4, 64)
}

// VoidTests runs the test at every VoidThresholds on the crash points of the
// voids tested, for a chain of rtpBP and maxMultiplier.
func VoidTests(rtpBP, maxMultiplier int64, crashPoints []int64) []VoidTest {
	out := make([]VoidTest, 0, len(VoidThresholds))
	n := int64(len(crashPoints))
	for _, x := range VoidThresholds {
		var k int64
		for _, c := range crashPoints {
			if c >= x {
				k++
			}
		}
		share := new(big.Rat)
		if x <= maxMultiplier {
			share.SetFrac64(rtpBP, 100*x) // (rtp_bp / 10000) / (x / 100)
		}
		out = append(out, VoidTest{AtLeast: x, Tested: n, Observed: k, Share: share, PValue: BinomialTail(n, k, share)})
	}
	return out
}

// VoidsFlagged reports whether a chain's voids lean high beyond chance: any
// p-value below VoidFlagLevel divided by the number of tests.
func VoidsFlagged(tests []VoidTest) bool {
	for _, t := range tests {
		if t.PValue < VoidFlagLevel/float64(len(tests)) {
			return true
		}
	}
	return false
}

// BinomialTail returns P[X >= k] for X ~ Binomial(n, p), 0 <= p <= 1,
// summed in log space (each term from math.Lgamma), so that it neither
// overflows nor loses the small tails: its relative error stays far below
// the 4 significant digits published for n up to millions.
func BinomialTail(n, k int64, p *big.Rat) float64 {
	switch {
	case k <= 0:
		return 1
	case k > n:
		return 0
	case p.Sign() == 0:
		return 0
	case p.Cmp(big.NewRat(1, 1)) >= 0:
		return 1
	}
	pf, _ := p.Float64()
	q := new(big.Rat).Sub(big.NewRat(1, 1), p)
	qf, _ := q.Float64()
	logP, logQ := math.Log(pf), math.Log(qf)
	lgN := lgamma(n + 1)
	terms := make([]float64, 0, n-k+1)
	top := math.Inf(-1)
	for i := k; i <= n; i++ {
		t := lgN - lgamma(i+1) - lgamma(n-i+1) + float64(i)*logP + float64(n-i)*logQ
		terms = append(terms, t)
		top = max(top, t)
	}
	var sum float64
	for _, t := range terms {
		sum += math.Exp(t - top)
	}
	return min(1, math.Exp(top+math.Log(sum)))
}

func lgamma(n int64) float64 {
	v, _ := math.Lgamma(float64(n))
	return v
}

// decimalText writes r, whose denominator has no prime factor but 2 and 5,
// as an exact decimal; another r is written with 12 decimals.
func decimalText(r *big.Rat) string {
	d := new(big.Int).Set(r.Denom())
	digits := 0
	for _, f := range []int64{2, 5} {
		m := big.NewInt(f)
		for new(big.Int).Mod(d, m).Sign() == 0 {
			d.Quo(d, m)
			digits++
		}
	}
	if d.Cmp(big.NewInt(1)) != 0 {
		digits = 12
	}
	s := r.FloatString(digits)
	for len(s) > 1 && digits > 0 && s[len(s)-1] == '0' {
		s = s[:len(s)-1]
	}
	if s[len(s)-1] == '.' {
		s = s[:len(s)-1]
	}
	return s
}

// The in-flight void test: do the rounds voided in flight lean high? The
// house, which knows the crash point, gains by voiding in flight a round it
// knows will fly high: every bet without an auto-cashout is refunded instead
// of cashing out on the way up. Honest interruptions pick rounds still
// flying, so their crash points are high too, but by a known law: a round
// stopped in flight at multiplier m (a moment that does not depend on its
// crash point) has crash point >= c with probability m / c for c >= m (the
// formula gives P[crash >= c] = RTP / c on the hundredths grid up to
// max_multiplier, and 0 above it).
//
// So u = m / crash is at least uniform on (0, 1] under honesty: P[u <= s] =
// m / (the first grid point >= m / s) <= s, the point mass at max_multiplier
// included. The test takes m at voided_at, which is no earlier than the
// interruption (a new leader voids the round when it takes over), so m is
// at least the multiplier reached and u = min(1, m / crash) only grows: the
// test errs toward not flagging. Fisher's statistic S = sum of -ln u over
// the n rounds tested is then at most Gamma(n, 1) in the stochastic order,
// and p_value = P[Gamma(n, 1) >= S] = e^-S * sum_{k<n} S^k / k! bounds the
// chance of a statistic as large under honesty.

// InFlightFlagLevel is the false-alarm rate of the in-flight void flag: an
// honest chain is flagged with probability at most InFlightFlagLevel.
const InFlightFlagLevel = 0.001

// InFlightFlagRule says, in words, what the in-flight test does; published
// with it.
const InFlightFlagRule = `Tested: the void rounds that took off (started_at) and record voided_at. For each, m = the multiplier at voided_at, floor(100 * e^(0.00006 t)) with t = voided_at - started_at in ms (multiplier_at_void; at least the multiplier the round had reached when it was interrupted), and u = min(1, m / crash_point). Under honest voiding a round still flying at m crashes at or above c with chance m / c, so u is at least uniform on (0, 1]. S = sum of -ln u, and p_value = P[Gamma(tested, 1) >= S] = e^-S * sum_{k < tested} S^k / k! (Fisher's method), an upper bound under honesty. Flagged when p_value < 0.001: an honest chain is flagged with probability at most 0.001.`

// InFlightVoid is a round voided in flight, as the test takes it: the
// multiplier at its void and its crash point, in hundredths.
type InFlightVoid struct {
	Multiplier int64
	CrashPoint int64
}

// InFlightTest is the in-flight void test of a chain.
type InFlightTest struct {
	Tested int64
	// Statistic is S, the sum over the voids tested of ln(crash / m) where
	// crash > m, 0 otherwise.
	Statistic float64
	PValue    float64 // P[Gamma(Tested, 1) >= Statistic]
}

// PValueText is PValue with 4 significant digits, as published.
func (v InFlightTest) PValueText() string {
	return strconv.FormatFloat(v.PValue, 'g', 4, 64)
}

// Flagged reports whether the voids in flight lean high beyond chance.
func (v InFlightTest) Flagged() bool { return v.PValue < InFlightFlagLevel }

// InFlightTests runs the in-flight test on voids.
func InFlightTests(voids []InFlightVoid) InFlightTest {
	var s float64
	for _, v := range voids {
		if v.CrashPoint > v.Multiplier && v.Multiplier > 0 {
			s += math.Log(float64(v.CrashPoint) / float64(v.Multiplier))
		}
	}
	n := int64(len(voids))
	return InFlightTest{Tested: n, Statistic: s, PValue: GammaTail(n, s)}
}

// GammaTail returns P[G >= s] for G ~ Gamma(n, 1), n a whole number: the
// chance of at most n-1 events of a Poisson process of rate 1 by time s,
// e^-s * sum_{k<n} s^k / k!, summed in log space. 1 when n is 0 or s <= 0.
func GammaTail(n int64, s float64) float64 {
	if n <= 0 || s <= 0 {
		return 1
	}
	logS := math.Log(s)
	terms := make([]float64, 0, n)
	top := math.Inf(-1)
	for k := range n {
		t := -s + float64(k)*logS - lgamma(k+1)
		terms = append(terms, t)
		top = max(top, t)
	}
	var sum float64
	for _, t := range terms {
		sum += math.Exp(t - top)
	}
	return min(1, math.Exp(top+math.Log(sum)))
}
