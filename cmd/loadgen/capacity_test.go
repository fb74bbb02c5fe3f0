package main

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

// The fit recovers the costs that made a set of observations, and check's
// prediction of each of them is then exact: the model, not the numbers.
func TestCapacityFitRecoversTheCosts(t *testing.T) {
	t.Parallel()
	want := capacityCosts{IdleFixed: 0.02, IdlePerStream: 0.00001, Frame: 0.000005, Bet: 0.0004, Lead: 0.0001,
		Cashout: 0.0002, LeadCashout: 0.0003, FramesPerPlayer: 1.5, FramesPerBet: 2.5, FramesPerCashout: 12,
		NATSFanoutPerBet: 4, NATSPointPerBet: 5, NATSFanoutPerSecond: 10, NATSPointPerSecond: 6, Broadcast: 0.000008,
		RowsPerBet: 9, RowsPerSecond: 50, CommitsPerBet: 4, CommitsPerSecond: 90, WALPerBet: 3000, WALPerSecond: 20000,
		WALSyncsPerBet: 1.5, WALSyncsPerSecond: 30}
	var obs []replicaObs
	for _, run := range []struct {
		players, rate, cash float64
	}{{1500, 900, 300}, {1500, 300, 30}, {900, 540, 200}, {600, 400, 60}} {
		for i := range 3 {
			o := replicaObs{run: fmt.Sprintf("run%.0fx%.0f", run.players, run.rate), name: "game", leads: i == 0,
				streams: run.players / 3, betsRecv: run.rate / 3, betsRound: run.rate,
				perPlayer: run.rate / run.players, cashPerPlayer: run.cash / run.players, cashRecv: run.cash / 3, cashRound: run.cash, replicas: 3}
			// Over 100 s: the fan-out is in once and out three times; the
			// requests and replies in once and out once.
			fan := want.NATSFanoutPerSecond + want.NATSFanoutPerBet*run.rate
			point := want.NATSPointPerSecond + want.NATSPointPerBet*run.rate
			o.natsSeconds, o.accepted, o.natsIn, o.natsOut = 100, 100*run.rate, 100*(fan+point), 100*(3*fan+point)
			// PostgreSQL over the same 100 s.
			line := func(perSecond, perBet float64) int64 { return int64(math.Round(100 * (perSecond + perBet*run.rate))) }
			o.pg = &pgActivity{Seconds: 100, Commits: line(want.CommitsPerSecond, want.CommitsPerBet),
				Inserted: line(want.RowsPerSecond, want.RowsPerBet), WALBytes: line(want.WALPerSecond, want.WALPerBet),
				WALSyncs: line(want.WALSyncsPerSecond, want.WALSyncsPerBet)}
			o.frames = want.frames(o)
			o.idle = want.IdleFixed + want.IdlePerStream*o.streams
			o.cpu = want.predictCPU(o)
			obs = append(obs, o)
		}
	}
	got, held, err := fitCosts(obs, capacityCosts{Broadcast: want.Broadcast})
	if err != nil {
		t.Fatal(err)
	}
	if held != nil {
		t.Errorf("held at zero: %v, though every cost that made the runs is positive", held)
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"idle", got.IdleFixed, want.IdleFixed}, {"idle per stream", got.IdlePerStream, want.IdlePerStream},
		{"frame", got.Frame, want.Frame}, {"bet", got.Bet, want.Bet}, {"lead", got.Lead, want.Lead},
		{"cashout", got.Cashout, want.Cashout}, {"lead cashout", got.LeadCashout, want.LeadCashout},
		{"frames per player", got.FramesPerPlayer, want.FramesPerPlayer}, {"frames per bet", got.FramesPerBet, want.FramesPerBet},
		{"frames per cashout", got.FramesPerCashout, want.FramesPerCashout},
		{"NATS fan-out per bet", got.NATSFanoutPerBet, want.NATSFanoutPerBet}, {"NATS point to point per bet", got.NATSPointPerBet, want.NATSPointPerBet},
		{"NATS fan-out a second", got.NATSFanoutPerSecond, want.NATSFanoutPerSecond}, {"NATS point to point a second", got.NATSPointPerSecond, want.NATSPointPerSecond},
		{"PostgreSQL rows per bet", got.RowsPerBet, want.RowsPerBet}, {"PostgreSQL rows a second", got.RowsPerSecond, want.RowsPerSecond},
		{"PostgreSQL commits per bet", got.CommitsPerBet, want.CommitsPerBet}, {"PostgreSQL commits a second", got.CommitsPerSecond, want.CommitsPerSecond},
		{"WAL bytes per bet", got.WALPerBet, want.WALPerBet}, {"WAL bytes a second", got.WALPerSecond, want.WALPerSecond},
		{"WAL syncs per bet", got.WALSyncsPerBet, want.WALSyncsPerBet}, {"WAL syncs a second", got.WALSyncsPerSecond, want.WALSyncsPerSecond},
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

// The NATS messages of a bet grow with the replicas by its fan-out: each
// message published to every replica is in once and out once a replica; a
// request or a reply, in once and out once. So does what every replica
// spends receiving the fan-out, with the round's bets, whatever its share.
func TestCapacityFanoutGrowsWithTheReplicas(t *testing.T) {
	t.Parallel()
	c := capacityCosts{NATSFanoutPerBet: 4, NATSPointPerBet: 5, NATSFanoutPerSecond: 10, NATSPointPerSecond: 6, Broadcast: 0.00001}
	for _, tc := range []struct {
		replicas int
		want     float64
	}{
		{1, (10+1_000*4)*2 + 2*(6+1_000*5)},
		{3, (10+1_000*4)*4 + 2*(6+1_000*5)},
		{60, (10+1_000*4)*61 + 2*(6+1_000*5)},
	} {
		if got := c.natsPerSecond(1_000, tc.replicas); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%d replicas: %g messages a second, want %g", tc.replicas, got, tc.want)
		}
	}
	if got := c.fanout(100_000); math.Abs(got-4) > 1e-9 {
		t.Errorf("100,000 bets a second: %g cores receiving the fan-out, want 4", got)
	}
}

// predict names NATS as what saturates when the messages a second it needs
// are more than the installation says its NATS sustains, and not otherwise.
func TestCapacityPredictJudgesNATS(t *testing.T) {
	t.Parallel()
	c := capacityCosts{NATSFanoutPerBet: 3, NATSPointPerBet: 3}
	need := c.natsPerSecond(100_000*3/3.0, 60) // in the betting window
	for _, tc := range []struct {
		given float64
		want  bool
	}{{need / 2, true}, {need * 2, false}, {0, false}} {
		var out strings.Builder
		predict(&out, c, 60, 8, 100_000, 3, 0.3, 20, 3, 0, tc.given)
		if got := strings.Contains(out.String(), "NATS's messages"); got != tc.want {
			t.Errorf("NATS given %.0f/s, needing %.0f/s: saturated %t, want %t:\n%s", tc.given, need, got, tc.want, out.String())
		}
	}
}

// No fitted cost is negative. Where the free fit gives one (the runs moved
// two terms together), that term is held at zero and the others are the
// least-squares fit without it, and fit names it: rows·(3, −1) = ys exactly,
// so the free fit is (3, −1); with x₂ held at 0 the best x₁ is 13/6, whose
// residual (11/6) is below that of x₁ held at 0 (16.5).
func TestCapacityFitHoldsNegativeCostsAtZero(t *testing.T) {
	t.Parallel()
	rows := [][]float64{{1, 1}, {1, 2}, {2, 1}}
	ys := []float64{2, 1, 5}
	if free, err := leastSquares(rows, ys); err != nil || math.Abs(free[0]-3) > 1e-9 || math.Abs(free[1]+1) > 1e-9 {
		t.Fatalf("the free fit: %v, %v; want (3, -1)", free, err)
	}
	x, zeroed, err := nonNegative(rows, ys)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(x[0]-13.0/6) > 1e-9 || x[1] != 0 || fmt.Sprint(zeroed) != "[1]" {
		t.Errorf("non-negative fit: %v, held %v; want (13/6, 0), held [1]", x, zeroed)
	}
	// A fit that is non-negative already is the free fit, nothing held.
	x, zeroed, err = nonNegative(rows, []float64{3, 4, 5})
	if err != nil || math.Abs(x[0]-2) > 1e-9 || math.Abs(x[1]-1) > 1e-9 || zeroed != nil {
		t.Errorf("non-negative fit of (2, 1): %v, held %v, %v", x, zeroed, err)
	}

	// Through fitCosts: runs whose cashouts nearly follow their bets, the
	// measured CPU falling with them: the cashout's cost is held at zero and
	// named.
	var obs []replicaObs
	for _, run := range []struct{ players, rate, cash float64 }{{300, 200, 0.5}, {600, 300, 0.45}, {900, 500, 0.55}, {450, 350, 0.4}} {
		for i := range 3 {
			o := replicaObs{run: fmt.Sprint(run), name: fmt.Sprint("game", i), leads: i == 0, streams: run.players / 3,
				betsRecv: run.rate / 3, betsRound: run.rate, perPlayer: run.rate / run.players, cashPerPlayer: run.rate * run.cash / run.players,
				cashRecv: run.rate * run.cash / 3, cashRound: run.rate * run.cash, replicas: 3, idle: 0.01}
			o.frames = o.streams * 2
			o.cpu = 0.01 + 0.00001*o.frames + 0.003*o.betsRecv - 0.004*o.cashRecv
			obs = append(obs, o)
		}
	}
	c, held, err := fitCosts(obs, capacityCosts{})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []float64{c.IdleFixed, c.IdlePerStream, c.Frame, c.Bet, c.Cashout, c.Lead, c.LeadCashout, c.FramesPerPlayer, c.FramesPerBet} {
		if v < 0 {
			t.Errorf("a negative cost: %+v", c)
		}
	}
	if !slices.Contains(held, "cost_cashout_received_s") {
		t.Errorf("held %v, want the cashout's cost among them", held)
	}
}
