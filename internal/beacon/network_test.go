package beacon_test

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/internal/beacon"
)

func TestQuicknetRoundArithmetic(t *testing.T) {
	t.Parallel()
	qn := beacon.Quicknet()
	genesis := time.Unix(1692803367, 0)
	cases := []struct {
		name  string
		at    time.Time
		round uint64 // RoundAt(at)
		first uint64 // FirstRoundAfter(at)
	}{
		{"a year before genesis", genesis.AddDate(-1, 0, 0), 0, 1},
		{"1ns before genesis", genesis.Add(-time.Nanosecond), 0, 1},
		{"genesis", genesis, 1, 2},
		{"just before round 2", genesis.Add(3*time.Second - time.Nanosecond), 1, 2},
		{"round 2", genesis.Add(3 * time.Second), 2, 3},
		{"round 42", genesis.Add(41 * 3 * time.Second), 42, 43},
		// The drand Ruby gem's README (https://www.ruby-toolbox.com/projects/drand)
		// publishes these two quicknet rounds for these UTC times.
		{"2026-04-20 00:00:00 UTC", time.Date(2026, 4, 20, 0, 0, 0, 0, time.UTC), 27946612, 27946613},
		{"2026-04-20 12:30:45 UTC", time.Date(2026, 4, 20, 12, 30, 45, 0, time.UTC), 27961627, 27961628},
		{"1ns before 2026-04-20", time.Date(2026, 4, 19, 23, 59, 59, 999999999, time.UTC), 27946611, 27946612},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := qn.RoundAt(c.at); got != c.round {
				t.Errorf("RoundAt = %d, want %d", got, c.round)
			}
			if got := qn.FirstRoundAfter(c.at); got != c.first {
				t.Errorf("FirstRoundAfter = %d, want %d", got, c.first)
			}
		})
	}
	if got, want := qn.TimeOf(27946612), time.Date(2026, 4, 20, 0, 0, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("TimeOf(27946612) = %s, want %s", got, want)
	}
	if far := qn.TimeOf(math.MaxUint64); !far.After(time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("TimeOf(MaxUint64) = %s: a round that far must never be due", far)
	}
	if got := qn.TimeOf(1); !got.Equal(genesis) {
		t.Errorf("TimeOf(1) = %s, want genesis %s", got, genesis)
	}
}

// TestFirstRoundAfterIsStrictlyAfter: the round FirstRoundAfter names is
// emitted strictly after the instant, and the one before it is not.
func TestFirstRoundAfterIsStrictlyAfter(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(26, 2))
	for _, n := range []beacon.Network{beacon.Quicknet(), withPeriod(beacon.Quicknet(), 30*time.Second), withPeriod(beacon.Quicknet(), 7*time.Millisecond)} {
		for range 10000 {
			// Instants from a day before genesis to about five years after,
			// and exactly on round boundaries one time in four.
			at := n.Genesis.Add(time.Duration(rng.Int64N(int64(5*365*24*time.Hour))) - 24*time.Hour)
			if rng.IntN(4) == 0 {
				at = n.TimeOf(n.RoundAt(at))
			}
			r := n.FirstRoundAfter(at)
			if !n.TimeOf(r).After(at) {
				t.Fatalf("%s: FirstRoundAfter(%s) = %d, emitted at %s, not after", n.Period, at, r, n.TimeOf(r))
			}
			if r > 1 && n.TimeOf(r-1).After(at) {
				t.Fatalf("%s: FirstRoundAfter(%s) = %d, but round %d is emitted after it too", n.Period, at, r, r-1)
			}
			if cur := n.RoundAt(at); cur > 0 && (n.TimeOf(cur).After(at) || !n.TimeOf(cur+1).After(at)) {
				t.Fatalf("%s: RoundAt(%s) = %d is not the round current then", n.Period, at, cur)
			}
		}
	}
}

func withPeriod(n beacon.Network, p time.Duration) beacon.Network {
	n.Period = p
	return n
}
