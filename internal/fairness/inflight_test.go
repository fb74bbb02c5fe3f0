package fairness_test

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/internal/fairness"
	"github.com/crashstudio/crashgame/internal/round"
)

// The tails were computed independently in Python:
//
//	g = lambda n, s: math.exp(-s) * sum(s**k / math.factorial(k) for k in range(n))
func TestGammaTail(t *testing.T) {
	t.Parallel()
	cases := []struct {
		n    int64
		s    float64
		want float64
	}{
		{0, 5, 1},
		{3, 0, 1},
		{1, math.Log(1000), 0.0010000000000000002},
		{2, 3, 0.19914827347145578},
		{10, 10, 0.45792971447185227},
		{50, 80, 0.00013078397659141034},
	}
	for _, c := range cases {
		if got := fairness.GammaTail(c.n, c.s); math.Abs(got-c.want) > 1e-12*c.want {
			t.Errorf("GammaTail(%d, %v) = %.17g, want %.17g", c.n, c.s, got, c.want)
		}
	}
}

// crashOf draws the crash point of a round from the formula (a random hash,
// the chain's salt) as the chain would.
func crashOf(rng *rand.Rand, salt string) int64 {
	var h [32]byte
	for i := range h {
		h[i] = byte(rng.Uint32())
	}
	return fairness.CrashPoint(h, salt, 9700, 1_000_000)
}

// honestInFlight is a round interrupted in flight at a moment that does not
// depend on its crash point: a flight time up to 20 s, drawn until the
// round is still flying then, and voided by the next leader up to 3 s later.
func honestInFlight(rng *rand.Rand, salt string) fairness.InFlightVoid {
	for {
		crash := crashOf(rng, salt)
		stop := time.Duration(rng.IntN(20_000)) * time.Millisecond
		if round.Multiplier(stop) >= crash {
			continue // crashed before the interruption: not a void in flight
		}
		voided := stop + time.Duration(rng.IntN(3_000))*time.Millisecond
		return fairness.InFlightVoid{Multiplier: round.Multiplier(voided), CrashPoint: crash}
	}
}

// Honest voids in flight are not flagged and their p-values are not small
// more often than chance; a house that voids in flight the rounds it knows
// fly high, early in their flight, is flagged, even among honest voids.
// Seeded: the same draws every run.
func TestInFlightVoidsFlagTheHouseNotHonesty(t *testing.T) {
	t.Parallel()
	const salt = "in-flight test salt"
	// house: a round the house knows reaches 10x (or 100x) voided at 1.00x
	// to 1.50x, which refunds every bet without an auto-cashout.
	house := func(rng *rand.Rand, atLeast int64) fairness.InFlightVoid {
		for {
			if crash := crashOf(rng, salt); crash >= atLeast {
				return fairness.InFlightVoid{Multiplier: 100 + rng.Int64N(51), CrashPoint: crash}
			}
		}
	}
	cases := []struct {
		name          string
		honest, house int
		atLeast       int64
		chains        int
		// how many of the chains are flagged, at least and at most
		least, most int
	}{
		{"honest voids, 40 a chain", 40, 0, 0, 300, 0, 0},
		{"one honest void a chain", 1, 0, 0, 300, 0, 0},
		{"3 rounds of 100x voided early", 0, 3, 10000, 50, 50, 50},
		{"5 rounds of 100x voided early among 20 honest voids", 20, 5, 10000, 50, 30, 50}, // 37 with these draws
		{"15 rounds of 10x voided early among 20 honest voids", 20, 15, 1000, 50, 45, 50}, // 48
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(uint64(i), 51))
			flagged, small := 0, 0
			for range c.chains {
				var voids []fairness.InFlightVoid
				for range c.honest {
					voids = append(voids, honestInFlight(rng, salt))
				}
				for range c.house {
					voids = append(voids, house(rng, c.atLeast))
				}
				res := fairness.InFlightTests(voids)
				if res.Tested != int64(len(voids)) {
					t.Fatalf("tested %d of %d voids", res.Tested, len(voids))
				}
				if res.Flagged() {
					flagged++
				}
				if res.PValue < 0.05 {
					small++
				}
			}
			if flagged < c.least || flagged > c.most {
				t.Fatalf("%d of %d chains flagged, want %d to %d", flagged, c.chains, c.least, c.most)
			}
			t.Logf("%d of %d chains flagged, %d with a p-value below 0.05", flagged, c.chains, small)
			// The p-value bounds the chance under honesty: at most about 5 %
			// of honest chains below 0.05 (here 3 standard errors over).
			if c.house == 0 && float64(small) > float64(c.chains)*(0.05+3*math.Sqrt(0.05*0.95/float64(c.chains))) {
				t.Fatalf("%d of %d honest chains have a p-value below 0.05", small, c.chains)
			}
		})
	}
}

// A round voided at or above its crash point (its recorded void came after
// the interruption) counts u = 1: it adds nothing to the statistic.
func TestInFlightVoidAboveItsCrashPointCountsNothing(t *testing.T) {
	t.Parallel()
	res := fairness.InFlightTests([]fairness.InFlightVoid{{Multiplier: 300, CrashPoint: 250}, {Multiplier: 100, CrashPoint: 100}})
	if res.Tested != 2 || res.Statistic != 0 || res.PValue != 1 || res.Flagged() || res.PValueText() != "1" {
		t.Fatalf("InFlightTests = %+v, want 2 tested, S 0, p 1", res)
	}
	if none := fairness.InFlightTests(nil); none.Tested != 0 || none.PValue != 1 || none.Flagged() {
		t.Fatalf("InFlightTests(nil) = %+v", none)
	}
}
