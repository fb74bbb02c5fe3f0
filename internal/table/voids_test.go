package table_test

import (
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/crashstudio/crashgame/gen/table"
	"github.com/crashstudio/crashgame/internal/engine"
	"github.com/crashstudio/crashgame/internal/fairness"
	"github.com/crashstudio/crashgame/internal/store"
)

// A house that knows every crash point ahead (it holds the seed key) and
// stops the process in the betting of the rounds it knows will be costly
// leaves void rounds whose crash points lean high: the chain's document
// raises the flag. Voids at random, or voids in flight (which lean high even
// when honest: a round still flying has not crashed yet), raise none. A
// house that voids in flight the rounds it knows fly high raises the
// in-flight flag; voiding at random the rounds still flying raises none. Each
// case plays 300 rounds of a real chain through the store, voiding by its
// own rule, and reads GET /fairness/chains/{id}.
func TestSelectiveVoidingIsFlagged(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	e.waitPhase(t, engine.PhaseBetting, 0) // the table's chain is published and salted
	ctx := t.Context()
	base, err := e.st.CurrentChain(ctx, "crash")
	if err != nil || base.Salt == nil {
		t.Fatalf("the table's chain: %+v, %v", base, err)
	}
	const rounds = 300
	cases := []struct {
		name string
		// void tells whether the house voids the round of crash point c,
		// and whether in flight.
		void    func(c int64, rng *rand.Rand) (void, inFlight bool)
		flagged bool
		// inFlightFlagged is the flag of the test of the voids in flight;
		// each is voided 1 s after take-off, at 1.06x.
		inFlightFlagged bool
	}{
		{"every round of 10x or more voided in betting", func(c int64, _ *rand.Rand) (bool, bool) { return c >= 1000, false }, true, false},
		{"a third of the rounds of 10x or more voided in betting", func(c int64, rng *rand.Rand) (bool, bool) {
			return c >= 1000 && rng.IntN(3) == 0, false
		}, true, false},
		{"one round in ten voided in betting, at random", func(_ int64, rng *rand.Rand) (bool, bool) { return rng.IntN(10) == 0, false }, false, false},
		{"every round of 2x or more voided in flight", func(c int64, _ *rand.Rand) (bool, bool) { return c >= 200, true }, false, true},
		{"a fifth of the rounds of 10x or more voided in flight", func(c int64, rng *rand.Rand) (bool, bool) {
			return c >= 1000 && rng.IntN(5) == 0, true
		}, false, true},
		{"one round in ten still flying at 1.06x voided in flight, at random", func(c int64, rng *rand.Rand) (bool, bool) {
			return c > 106 && rng.IntN(10) == 0, true
		}, false, false},
	}
	for i, c := range cases {
		game := fmt.Sprintf("voids-%d", i)
		seed := sha256.Sum256([]byte(game))
		chain := fairness.NewChain(seed, rounds)
		salt := fairness.Salt(chain.Terminal(), [][32]byte{sha256.Sum256([]byte("draw " + game))})
		rec := base // the table's chain as stored, with another game, seed and salt
		rec.ID, rec.GameID, rec.Number, rec.FirstSeq, rec.Length = game+"-c1", game, 1, 1, rounds
		rec.Terminal, rec.Salt, rec.LastSeq, rec.RetiredAt = fairness.FormatHash(chain.Terminal()), &salt, nil, nil
		rec.RTPBasisPts, rec.MaxMultiplier = 9700, 1_000_000 // the table's own caps rounds at 1.50x
		if err := e.st.InsertChain(ctx, rec); err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(uint64(i), 26))
		var voids, inBetting, flying int
		for pos := int64(1); pos <= rounds; pos++ {
			h, err := chain.Hash(int(pos))
			if err != nil {
				t.Fatal(err)
			}
			crash := fairness.CrashPoint(h, salt, rec.RTPBasisPts, rec.MaxMultiplier)
			id := fmt.Sprintf("%s-%d", game, pos)
			at := store.Millis(1_000_000 + pos*10_000)
			if err := e.st.InsertRound(ctx, store.RoundRecord{ID: id, GameID: game, Seq: pos, ChainID: rec.ID, Position: pos,
				Status: engine.RoundBetting, BettingEndsAt: at, CreatedAt: at - 5_000}); err != nil {
				t.Fatal(err)
			}
			void, inFlight := c.void(crash, rng)
			rule := engine.VoidFailoverBetting
			if inFlight {
				rule = engine.VoidFailoverFlight
				if err := e.st.TakeOffRound(ctx, id, at); err != nil {
					t.Fatal(err)
				}
			}
			switch {
			case void:
				voids++
				if !inFlight {
					inBetting++
				} else {
					flying++
				}
				err = e.st.VoidRound(ctx, id, fairness.FormatHash(h), crash, at+1_000, rule)
			default:
				err = e.st.FinishRound(ctx, id, at+2_000, fairness.FormatHash(h), crash)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		doc := decode[table.Chain](t, e.call(t, "GET", "/fairness/chains/"+rec.ID, "", nil))
		v := doc.Voids
		if v == nil || len(v.Rounds) != voids || v.Tested != int64(inBetting) || len(v.Tests) != 3 || v.Flagged != c.flagged {
			t.Errorf("%s: %d voids, %d in betting; published %+v, want flagged %t", c.name, voids, inBetting, v, c.flagged)
			continue
		}
		if f := v.InFlight; f.Tested != int64(flying) || f.Flagged != c.inFlightFlagged || f.FlagRule != fairness.InFlightFlagRule {
			t.Errorf("%s: %d voids in flight; published %+v, want flagged %t", c.name, flying, f, c.inFlightFlagged)
		}
		for _, r := range v.Rounds {
			if (r.StartedAt != nil) != (r.MultiplierAtVoid != nil) || (r.MultiplierAtVoid != nil && *r.MultiplierAtVoid != 106) {
				t.Errorf("%s: round %s started %v, multiplier_at_void %v; want 106 (1 s of flight) for a round that took off", c.name, r.RoundId, r.StartedAt, r.MultiplierAtVoid)
			}
		}
		t.Logf("%s: %d voids, %d in betting: %+v flagged %t; in flight %+v", c.name, voids, inBetting, v.Tests, v.Flagged, v.InFlight)
	}
}
