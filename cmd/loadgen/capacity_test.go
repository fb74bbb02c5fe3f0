package main

import (
	"math"
	"testing"
)

// The fit recovers the costs that made a set of observations, and check's
// prediction of each of them is then exact: the model, not the numbers.
func TestCapacityFitRecoversTheCosts(t *testing.T) {
	t.Parallel()
	want := capacityCosts{IdleFixed: 0.02, IdlePerStream: 0.00001, Frame: 0.000005, Bet: 0.0004, Lead: 0.0001,
		Cashout: 0.0002, LeadCashout: 0.0003, FramesPerPlayer: 1.5, FramesPerBet: 2.5}
	var obs []replicaObs
	for _, run := range []struct {
		players, rate, cash float64
	}{{1500, 900, 300}, {1500, 300, 30}, {900, 540, 200}, {600, 400, 60}} {
		for i := range 3 {
			o := replicaObs{name: "game", leads: i == 0, streams: run.players / 3, betsRecv: run.rate / 3, betsRound: run.rate,
				perPlayer: run.rate / run.players, cashRecv: run.cash / 3, cashRound: run.cash}
			o.frames = o.streams * (want.FramesPerPlayer + want.FramesPerBet*o.perPlayer)
			o.idle = want.IdleFixed + want.IdlePerStream*o.streams
			o.cpu = want.predictCPU(o)
			obs = append(obs, o)
		}
	}
	got, err := fitCosts(obs, capacityCosts{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"idle", got.IdleFixed, want.IdleFixed}, {"idle per stream", got.IdlePerStream, want.IdlePerStream},
		{"frame", got.Frame, want.Frame}, {"bet", got.Bet, want.Bet}, {"lead", got.Lead, want.Lead},
		{"cashout", got.Cashout, want.Cashout}, {"lead cashout", got.LeadCashout, want.LeadCashout},
		{"frames per player", got.FramesPerPlayer, want.FramesPerPlayer}, {"frames per bet", got.FramesPerBet, want.FramesPerBet},
	} {
		if math.Abs(c.got-c.want) > 1e-9*math.Max(1, math.Abs(c.want)) {
			t.Errorf("%s: fitted %g, made with %g", c.name, c.got, c.want)
		}
	}
	for _, o := range obs {
		if p := got.predictCPU(o); math.Abs(p-o.cpu) > 1e-9 {
			t.Errorf("%+v: predicted %g", o, p)
		}
	}
}

// Observations that cannot tell two costs apart are refused, not fitted to
// a made-up split.
func TestCapacityFitRefusesWhatItCannotTellApart(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		rows [][]float64
		ys   []float64
	}{
		{"too few", [][]float64{{1, 2, 3}}, []float64{1}},
		{"collinear", [][]float64{{1, 2}, {2, 4}, {3, 6}}, []float64{1, 2, 3}},
		{"none", nil, nil},
	}
	for _, tc := range tests {
		if _, err := leastSquares(tc.rows, tc.ys); err == nil {
			t.Errorf("%s: fitted", tc.name)
		}
	}
}
