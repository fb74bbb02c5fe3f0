package table_test

import (
	"context"
	"encoding/hex"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/gen/table"
	"github.com/crashstudio/crashgame/internal/beacon"
	"github.com/crashstudio/crashgame/internal/beacon/beacontest"
	"github.com/crashstudio/crashgame/internal/chains"
	"github.com/crashstudio/crashgame/internal/engine"
)

// A chain that names a beacon round publishes the round and the network's
// facts from its creation, with no signature or randomness while its salt
// waits; once the salt is fixed, the round's signature, its randomness
// (SHA-256 of the signature) and the beacon contribution that carries it.
// A chain that names none publishes no beacon.
func TestChainDocumentPublishesItsBeaconRound(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{betting: 300 * time.Millisecond})
	ctx := t.Context()
	bn := beacontest.New(t, beacontest.Options{})
	revealEnds := time.UnixMilli(bn.Network.Genesis.Add(time.Hour).UnixMilli()).UTC()
	round := bn.Network.FirstRoundAfter(revealEnds.Add(bn.Network.Period))
	named := chains.Beacon{Network: bn.Network.Name, ChainHash: bn.Network.ChainHash, PublicKey: hex.EncodeToString(bn.Network.PublicKey),
		Genesis: bn.Network.Genesis.Unix(), PeriodS: 3, Round: int64(round), RoundAt: time.UnixMilli(bn.Network.TimeOf(round).UnixMilli()).UTC()}
	rec := chains.Chain{ID: "other-c1", GameID: "other", Number: 1, FirstSeq: 1, Length: 10,
		Terminal: strings.Repeat("ab", 32), RTPBasisPts: 9700, MaxMultiplier: 100000, FormulaVersion: 1,
		SealedSeed: []byte("sealed"), CreatedAt: revealEnds.Add(-7 * time.Second), SeedingEndsAt: revealEnds.Add(-2 * time.Second),
		ContributionRule: chains.RuleCommitReveal, RevealEndsAt: &revealEnds, Beacon: named}
	if err := e.st.HashChains().InsertChain(ctx, rec); err != nil {
		t.Fatal(err)
	}
	doc := decode[table.Chain](t, e.call(t, "GET", "/fairness/chains/"+rec.ID, "", nil))
	if b := doc.Beacon; b == nil || b.Round != int64(round) || b.RoundTime != named.RoundAt.UnixMilli() || b.Network != "beacontest" ||
		b.ChainHash != named.ChainHash || b.PublicKey != named.PublicKey || b.GenesisTime != named.Genesis || b.PeriodS != 3 ||
		b.Scheme != beacon.Scheme || b.Signature != nil || b.Randomness != nil || doc.Status != table.ChainStatusSeeding {
		t.Fatalf("the beacon of a chain waiting for its round: %+v (status %s)", b, doc.Status)
	}
	v := bn.Sign(round)
	err := e.st.InTx(ctx, func(ctx context.Context) error {
		if err := e.st.SetBeaconSignature(ctx, rec.ID, v.SignatureHex()); err != nil {
			return err
		}
		_, err := e.st.HashChains().FixSalt(ctx, rec.ID, named.RoundAt, func([]chains.Contribution) []chains.Contribution {
			return []chains.Contribution{{ChainID: rec.ID, Source: chains.SourceBeacon, Name: engine.BeaconLabel(named),
				Value: v.RandomnessHex(), ReceivedAt: named.RoundAt}}
		}, engine.MakeSalt)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	doc = decode[table.Chain](t, e.call(t, "GET", "/fairness/chains/"+rec.ID, "", nil))
	if b := doc.Beacon; b == nil || b.Signature == nil || *b.Signature != v.SignatureHex() || b.Randomness == nil || *b.Randomness != v.RandomnessHex() {
		t.Fatalf("the beacon once the salt is fixed: %+v; want the round's signature and randomness", b)
	}
	if len(doc.Contributions) != 1 || doc.Contributions[0].Source != "beacon" || doc.Contributions[0].Label == nil ||
		*doc.Contributions[0].Label != "drand beacontest round "+strconv.FormatUint(round, 10) || *doc.Contributions[0].Value != v.RandomnessHex() ||
		doc.SaltSource == nil || *doc.SaltSource != table.ChainSaltSourceContributions {
		t.Fatalf("the contributions once the salt is fixed: %+v (salt source %v)", doc.Contributions, doc.SaltSource)
	}
	// The game's own chain names no beacon (the test table has none).
	list := decode[table.ChainList](t, e.call(t, "GET", "/fairness/chains?game_id=crash", "", nil))
	if len(list.Items) == 0 || list.Items[0].Beacon != nil {
		t.Fatalf("a chain of an installation without a beacon: %+v", list.Items)
	}
}
