package replica

import (
	"testing"

	"github.com/crashstudio/crashgame/internal/engine"
)

// A forwarded action stops waiting once the round in view is past every
// round it can be in: N when sent in N's betting or flight, N+1 when sent in
// the pause after N.
func TestGone(t *testing.T) {
	t.Parallel()
	view := func(seq int64, phase string) engine.RoundView {
		return engine.RoundView{RoundID: "rd", Seq: seq, Phase: phase}
	}
	cases := []struct {
		name      string
		sent, now engine.RoundView
		want      bool
	}{
		{"betting, same round", view(7, engine.PhaseBetting), view(7, engine.PhaseFlying), false},
		{"betting, next round", view(7, engine.PhaseBetting), view(8, engine.PhaseBetting), true},
		{"flying, same round crashed", view(7, engine.PhaseFlying), view(7, engine.PhaseCrashed), false},
		{"flying, next round", view(7, engine.PhaseFlying), view(8, engine.PhaseBetting), true},
		{"pause after 7, round 8", view(7, engine.PhaseCrashed), view(8, engine.PhaseFlying), false},
		{"pause after 7, round 9", view(7, engine.PhaseCrashed), view(9, engine.PhaseBetting), true},
		{"no round in view when sent", engine.RoundView{}, view(100, engine.PhaseBetting), false},
		{"a view read again from an older state", view(7, engine.PhaseBetting), view(6, engine.PhaseCrashed), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := gone(tc.sent, tc.now); got != tc.want {
				t.Fatalf("gone(%d %s, %d %s) = %v, want %v", tc.sent.Seq, tc.sent.Phase, tc.now.Seq, tc.now.Phase, got, tc.want)
			}
		})
	}
}
