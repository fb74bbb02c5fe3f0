package table

import (
	"context"
	"time"

	"github.com/crashstudio/crashgame/gen/table"
	"github.com/crashstudio/crashgame/internal/chains"
	"github.com/crashstudio/crashgame/internal/fairness"
	"github.com/crashstudio/crashgame/internal/round"
)

// chainVoids is a chain's void rounds as published, with the tests of
// whether those that never took off, and those voided in flight, lean toward
// high crash points (package fairness, docs/fairness.md).
func (a *api) chainVoids(ctx context.Context, rec chains.Chain) (table.ChainVoids, error) {
	recs, err := a.s.records.ChainVoids(ctx, rec.ID)
	if err != nil {
		return table.ChainVoids{}, err
	}
	out := table.ChainVoids{Rounds: make([]table.ChainVoid, 0, len(recs)), FlagRule: fairness.VoidFlagRule}
	var tested []int64
	var inFlight []fairness.InFlightVoid
	for _, r := range recs {
		v := table.ChainVoid{RoundId: r.ID, Seq: r.Seq, Position: r.Position, Hash: r.Hash, CrashPoint: r.CrashPoint}
		end := endOf(r)
		v.VoidedAt, v.VoidRule = end.voidedAt, end.rule
		if !r.StartedAt.IsZero() {
			at := r.StartedAt.UnixMilli()
			v.StartedAt = &at
			if v.VoidedAt != nil {
				m := MultiplierAtVoid(at, *v.VoidedAt)
				v.MultiplierAtVoid = &m
				inFlight = append(inFlight, fairness.InFlightVoid{Multiplier: m, CrashPoint: r.CrashPoint})
			}
		} else {
			tested = append(tested, r.CrashPoint)
		}
		out.Rounds = append(out.Rounds, v)
	}
	f := fairness.InFlightTests(inFlight)
	out.InFlight = table.InFlightVoidTest{Tested: f.Tested, PValue: f.PValueText(), Flagged: f.Flagged(), FlagRule: fairness.InFlightFlagRule}
	tests := fairness.VoidTests(rec.RTPBasisPts, rec.MaxMultiplier, tested)
	out.Tested = int64(len(tested))
	out.Flagged = fairness.VoidsFlagged(tests)
	for _, t := range tests {
		out.Tests = append(out.Tests, table.VoidTest{AtLeast: t.AtLeast, Observed: t.Observed, Share: t.ShareText(), PValue: t.PValueText()})
	}
	return out, nil
}

// MultiplierAtVoid is the multiplier of a round that took off at startedAt
// and was voided at voidedAt (Unix milliseconds, as published): the game's
// curve at the elapsed whole milliseconds.
// An hour or more is read as an hour (the curve saturates at about 11
// minutes), so that no duration overflows.
func MultiplierAtVoid(startedAt, voidedAt int64) int64 {
	ms := min(voidedAt-startedAt, int64(time.Hour/time.Millisecond))
	return round.Multiplier(time.Duration(ms) * time.Millisecond)
}
