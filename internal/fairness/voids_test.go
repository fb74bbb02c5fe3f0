package fairness_test

import (
	"math"
	"math/big"
	"testing"

	"github.com/crashstudio/crashgame/internal/fairness"
)

// The tails were computed independently, exactly, in Python:
//
//	from fractions import Fraction as F
//	from math import comb
//	tail = lambda n, k, p: sum(comb(n, i) * p**i * (1 - p)**(n - i) for i in range(k, n + 1))
//	float(tail(10, 3, F(97, 1000)))  # 0.065120370975516581
//	float(tail(5, 5, F(97, 200)))    # 0.026835438303125 (TestVoidTests: "0.02684")
func TestBinomialTail(t *testing.T) {
	t.Parallel()
	cases := []struct {
		n, k     int64
		num, den int64
		want     float64
	}{
		{1, 1, 9700, 20000, 0.48499999999999999},
		{10, 3, 97, 1000, 0.065120370975516581},
		{20, 10, 97, 1000, 5.4322083016785494e-06},
		{50, 0, 1, 2, 1},
		{100, 60, 9700, 20000, 0.013754300814564488},
		{5, 5, 97, 1000, 8.5873402570000006e-06},
		{200, 7, 97, 10000, 0.0036469335728298176},
		{3000, 1, 97, 10000, 0.99999999999980027},
		{4, 5, 1, 2, 0}, // more than n: impossible
		{4, 1, 0, 1, 0}, // a share of 0 (threshold above max_multiplier)
		{4, 0, 0, 1, 1},
	}
	for _, c := range cases {
		got := fairness.BinomialTail(c.n, c.k, big.NewRat(c.num, c.den))
		if math.Abs(got-c.want) > 1e-12*c.want || (c.want == 0 && got != 0) {
			t.Errorf("BinomialTail(%d, %d, %d/%d) = %.17g, want %.17g", c.n, c.k, c.num, c.den, got, c.want)
		}
	}
}

func TestVoidTests(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name          string
		maxMultiplier int64
		crashes       []int64
		observed      [3]int64
		shares        [3]string
		pValues       [3]string
		flagged       bool
	}{
		{"no voids", 1000000, nil, [3]int64{}, [3]string{"0.485", "0.097", "0.0097"}, [3]string{"1", "1", "1"}, false},
		{"one void at 3.18x", 1000000, []int64{318}, [3]int64{1, 0, 0}, [3]string{"0.485", "0.097", "0.0097"}, [3]string{"0.485", "1", "1"}, false},
		// Five voids, all at 10x or more: P = 0.097^5 at 10x, below 0.001/3.
		{"five voids at 10x or more", 1000000, []int64{1000, 1500, 2200, 5000, 40000}, [3]int64{5, 5, 1},
			[3]string{"0.485", "0.097", "0.0097"}, [3]string{"0.02684", "8.587e-06", "0.04757"}, true},
		// 100x is above max_multiplier: its share is 0 and nothing reaches it.
		{"100x above max_multiplier", 5000, []int64{120, 4999}, [3]int64{1, 1, 0}, [3]string{"0.485", "0.097", "0"},
			[3]string{"0.7348", "0.1846", "1"}, false},
	}
	for _, c := range cases {
		tests := fairness.VoidTests(9700, c.maxMultiplier, c.crashes)
		for i, v := range tests {
			if v.AtLeast != fairness.VoidThresholds[i] || v.Tested != int64(len(c.crashes)) || v.Observed != c.observed[i] ||
				v.ShareText() != c.shares[i] || v.PValueText() != c.pValues[i] {
				t.Errorf("%s: at %d: tested %d observed %d share %s p %s; want %d %d %s %s", c.name, v.AtLeast,
					v.Tested, v.Observed, v.ShareText(), v.PValueText(), len(c.crashes), c.observed[i], c.shares[i], c.pValues[i])
			}
		}
		if got := fairness.VoidsFlagged(tests); got != c.flagged {
			t.Errorf("%s: flagged %t, want %t", c.name, got, c.flagged)
		}
	}
}
