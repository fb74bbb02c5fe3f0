package main

import (
	"strings"
	"testing"

	"github.com/crashstudio/crashgame/gen/table"
	"github.com/crashstudio/crashgame/internal/fairness"
)

// voidsDoc is a chain's voids as the game publishes them: one void in
// betting at 3.18x, and, 1 s into their flight (1.06x), voids at the crash
// points flying.
func voidsDoc(flying ...int64) table.Chain {
	c := table.Chain{RtpBp: 9700, MaxMultiplier: 1_000_000, Voids: &table.ChainVoids{}}
	v := c.Voids
	v.Rounds = append(v.Rounds, table.ChainVoid{RoundId: "crash-1", CrashPoint: 318})
	var in []fairness.InFlightVoid
	for i, cp := range flying {
		start, end, m := int64(1_000_000+i*60_000), int64(1_001_000+i*60_000), int64(106)
		v.Rounds = append(v.Rounds, table.ChainVoid{RoundId: "crash-f", CrashPoint: cp, StartedAt: &start, VoidedAt: &end, MultiplierAtVoid: &m})
		in = append(in, fairness.InFlightVoid{Multiplier: m, CrashPoint: cp})
	}
	tests := fairness.VoidTests(9700, 1_000_000, []int64{318})
	v.Tested, v.Flagged = 1, fairness.VoidsFlagged(tests)
	for _, t := range tests {
		v.Tests = append(v.Tests, table.VoidTest{AtLeast: t.AtLeast, Observed: t.Observed, Share: t.ShareText(), PValue: t.PValueText()})
	}
	f := fairness.InFlightTests(in)
	v.InFlight = table.InFlightVoidTest{Tested: f.Tested, PValue: f.PValueText(), Flagged: f.Flagged(), FlagRule: fairness.InFlightFlagRule}
	return c
}

// crashgame verify recomputes both void tests: figures as published pass,
// a flag is a warning, a changed figure an error.
func TestVerifyRecomputesTheVoidTests(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		chain  func() table.Chain
		want   string // in the summary, or in the error
		failed bool
	}{
		{"honest voids", func() table.Chain { return voidsDoc(150, 230, 107, 1200) }, "4 voided in flight", false},
		{"rounds of 100x voided at 1.06x", func() table.Chain { return voidsDoc(15000, 22000, 48000, 10100) }, "WARNING", false},
		{"in_flight p_value changed", func() table.Chain {
			c := voidsDoc(150, 230)
			c.Voids.InFlight.PValue = "0.5"
			return c
		}, "in_flight", true},
		{"multiplier_at_void changed", func() table.Chain {
			c := voidsDoc(150)
			*c.Voids.Rounds[1].MultiplierAtVoid = 105
			return c
		}, "multiplier_at_void 105", true},
		{"a void in betting uncounted", func() table.Chain {
			c := voidsDoc()
			c.Voids.Tested = 0
			return c
		}, "voids: tested 0", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got, err := checkVoids(c.chain())
			if (err != nil) != c.failed {
				t.Fatalf("checkVoids = %q, %v; want failed %t", got, err, c.failed)
			}
			if err != nil {
				got = err.Error()
			}
			if !strings.Contains(got, c.want) {
				t.Fatalf("checkVoids = %q; want it to say %q", got, c.want)
			}
		})
	}
}
