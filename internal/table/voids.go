package table

import (
	"context"

	"github.com/crashstudio/crashgame/gen/table"
	"github.com/crashstudio/crashgame/internal/chains"
	"github.com/crashstudio/crashgame/internal/fairness"
)

// chainVoids is a chain's void rounds as published, with the test of whether
// those that never took off lean toward high crash points (package fairness,
// docs/fairness.md).
func (a *api) chainVoids(ctx context.Context, rec chains.Chain) (table.ChainVoids, error) {
	recs, err := a.s.records.ChainVoids(ctx, rec.ID)
	if err != nil {
		return table.ChainVoids{}, err
	}
	out := table.ChainVoids{Rounds: make([]table.ChainVoid, 0, len(recs)), FlagRule: fairness.VoidFlagRule}
	var tested []int64
	for _, r := range recs {
		v := table.ChainVoid{RoundId: r.ID, Seq: r.Seq, Position: r.Position, Hash: r.Hash, CrashPoint: r.CrashPoint}
		if !r.StartedAt.IsZero() {
			at := r.StartedAt.UnixMilli()
			v.StartedAt = &at
		} else {
			tested = append(tested, r.CrashPoint)
		}
		end := endOf(r)
		v.VoidedAt, v.VoidRule = end.voidedAt, end.rule
		out.Rounds = append(out.Rounds, v)
	}
	tests := fairness.VoidTests(rec.RTPBasisPts, rec.MaxMultiplier, tested)
	out.Tested = int64(len(tested))
	out.Flagged = fairness.VoidsFlagged(tests)
	for _, t := range tests {
		out.Tests = append(out.Tests, table.VoidTest{AtLeast: t.AtLeast, Observed: t.Observed, Share: t.ShareText(), PValue: t.PValueText()})
	}
	return out, nil
}
