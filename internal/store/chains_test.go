package store_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/crashstudio/crashgame/internal/chains"
	"github.com/crashstudio/crashgame/internal/engine"
	"github.com/crashstudio/crashgame/internal/store"
)

// The contract of the hash chains: permanent rows, contributions only while
// a chain is seeding, one salt however many fix it at once.
var chainCases = []contractCase{
	{"ChainsAreNeverOverwritten", testChainsPermanent},
	{"ContributionsOnlyWhileSeeding", testContributions},
	{"SaltFixedOnceUnderRaces", testFixSaltRaces},
	{"ChainRoundsAndCheckpoints", testChainRounds},
	{"BeaconRoundNamedThenSigned", testChainBeacon},
	{"HashChainsRoundTrip", testHashChainsRoundTrip},
}

// A chain names its beacon round when it is published; the round's
// signature is stored once, while the salt is not fixed, and never after.
func testChainBeacon(t *testing.T, s *store.Store, _ string) {
	ctx := t.Context()
	named := testChain("crash", 1, 1, 10)
	named.Beacon = store.ChainBeacon{Network: "quicknet", ChainHash: value('5'), PublicKey: strings.Repeat("83", 96),
		Genesis: 1692803367, PeriodS: 3, Round: 1234567, RoundAt: 1696506864000}
	plain := testChain("other", 1, 1, 10)
	for _, c := range []store.ChainRecord{named, plain} {
		if err := s.InsertChain(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := s.ChainByID(ctx, named.ID); err != nil || got.Beacon != named.Beacon || got.Beacon.Network == "" {
		t.Fatalf("the chain's beacon = %+v, %v; want %+v", got.Beacon, err, named.Beacon)
	}
	sig := strings.Repeat("a5", 48)
	for _, id := range []string{named.ID, plain.ID} {
		if err := s.SetBeaconSignature(ctx, id, sig); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := s.ChainByID(ctx, plain.ID); err != nil || got.Beacon != (store.ChainBeacon{}) || got.Beacon.Network != "" {
		t.Fatalf("a chain that names no beacon round got %+v, %v", got.Beacon, err)
	}
	if _, err := s.FixSalt(ctx, named.ID, 1700000000000, noExtra, joinValues); err != nil {
		t.Fatal(err)
	}
	if err := s.SetBeaconSignature(ctx, named.ID, strings.Repeat("b6", 48)); err != nil {
		t.Fatal(err)
	}
	if got, err := s.ChainByID(ctx, named.ID); err != nil || got.Beacon.Signature != sig || got.Beacon.Round != 1234567 {
		t.Fatalf("the signature after the salt was fixed = %+v, %v; want the first one, %s", got.Beacon, err, sig)
	}
}

func testChain(game string, number, first int64, created store.Millis) store.ChainRecord {
	return store.ChainRecord{ID: fmt.Sprintf("%s-c%d", game, number), GameID: game, Number: number, FirstSeq: first, Length: 1000,
		Terminal: strings.Repeat(fmt.Sprint(number%10), 64), RTPBasisPts: 9700, MaxMultiplier: 100000, FormulaVersion: 1,
		SealedSeed: []byte("sealed"), CreatedAt: created, SeedingEndsAt: created + 1000}
}

func value(c byte) string { return strings.Repeat(string(c), 64) }

func testChainsPermanent(t *testing.T, s *store.Store, _ string) {
	ctx := t.Context()
	if _, err := s.CurrentChain(ctx, "crash"); !errors.Is(err, chains.ErrChainNotFound) {
		t.Fatalf("CurrentChain of a game without one = %v, want ErrChainNotFound", err)
	}
	first, second := testChain("crash", 1, 1, 10), testChain("crash", 2, 51, 20)
	for _, c := range []store.ChainRecord{first, testChain("other", 1, 1, 15), second} {
		if err := s.InsertChain(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	// A chain of the same game and number is never written over the first.
	again := testChain("crash", 2, 51, 30)
	again.ID, again.Terminal = "crash-c2-again", value('f')
	if err := s.InsertChain(ctx, again); err == nil {
		t.Fatal("a second chain number 2 of one game was stored")
	}
	if err := s.RetireChain(ctx, first.ID, 50, 1234); err != nil {
		t.Fatal(err)
	}
	if err := s.RetireChain(ctx, first.ID, 70, 5678); err != nil { // retired once: its last round and time stay
		t.Fatal(err)
	}
	got, err := s.CurrentChain(ctx, "crash")
	if err != nil || got.ID != second.ID || got.LastSeq != nil || got.Terminal != second.Terminal || string(got.SealedSeed) != "sealed" {
		t.Fatalf("CurrentChain = %+v, %v; want chain 2", got, err)
	}
	old, err := s.ChainByID(ctx, first.ID)
	if err != nil || old.LastSeq == nil || *old.LastSeq != 50 || old.RetiredAt == nil || *old.RetiredAt != 1234 ||
		old.Terminal != first.Terminal || old.RTPBasisPts != 9700 {
		t.Fatalf("ChainByID(retired) = %+v, %v; want last_seq 50, retired at 1234, its terminal and settings", old, err)
	}
	all, err := s.Chains(ctx, "", "", 10)
	ids := func(cs []store.ChainRecord) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.ID)
		}
		return out
	}
	if err != nil || !slices.Equal(ids(all), []string{"crash-c2", "other-c1", "crash-c1"}) {
		t.Fatalf("Chains() = %v, %v; want newest first", ids(all), err)
	}
	page, err := s.Chains(ctx, "", "crash-c2", 1)
	if err != nil || !slices.Equal(ids(page), []string{"other-c1"}) {
		t.Fatalf("Chains(before crash-c2, 1) = %v, %v", ids(page), err)
	}
	if page, err := s.Chains(ctx, "crash", "crash-c2", 10); err != nil || !slices.Equal(ids(page), []string{"crash-c1"}) {
		t.Fatalf("Chains(crash, before crash-c2) = %v, %v", ids(page), err)
	}
	if _, err := s.Chains(ctx, "", "nope", 10); !errors.Is(err, chains.ErrChainNotFound) {
		t.Fatalf("Chains(before an unknown chain) = %v, want ErrChainNotFound", err)
	}
}

func testContributions(t *testing.T, s *store.Store, _ string) {
	ctx := t.Context()
	c := testChain("crash", 1, 1, 10) // seeding until 1010
	if err := s.InsertChain(ctx, c); err != nil {
		t.Fatal(err)
	}
	add := func(name string, v byte, at store.Millis) (store.ContributionRecord, error) {
		return s.AddContribution(ctx, store.ContributionRecord{ChainID: c.ID, Source: chains.SourceOperator, Name: name, Value: value(v), ReceivedAt: at})
	}
	if got, err := add("acme", 'a', 500); err != nil || got.ReceivedAt != 500 {
		t.Fatalf("a contribution in the window = %+v, %v", got, err)
	}
	if got, err := add("acme", 'a', 600); err != nil || got.ReceivedAt != 500 || got.Value != value('a') {
		t.Fatalf("the same value again = %+v, %v; want the first one", got, err)
	}
	if _, err := add("acme", 'b', 700); !errors.Is(err, chains.ErrContributionConflict) {
		t.Fatalf("another value of the same operator = %v, want ErrContributionConflict", err)
	}
	if _, err := add("beta", 'b', 1010); !errors.Is(err, chains.ErrSeedingClosed) {
		t.Fatalf("a contribution at the window's end = %v, want ErrSeedingClosed", err)
	}
	if _, err := s.AddContribution(ctx, store.ContributionRecord{ChainID: "nope", Source: chains.SourceOperator, Name: "x", Value: value('c'), ReceivedAt: 1}); !errors.Is(err, chains.ErrChainNotFound) {
		t.Fatalf("a contribution to an unknown chain = %v, want ErrChainNotFound", err)
	}
	if _, err := add("beta", 'b', 900); err != nil {
		t.Fatal(err)
	}
	fixed, err := s.FixSalt(ctx, c.ID, 1100, noExtra, joinValues)
	if err != nil || fixed.Salt == nil || *fixed.Salt != value('a')+value('b') || *fixed.SaltSource != chains.SaltFromContributions || *fixed.SaltFixedAt != 1100 {
		t.Fatalf("FixSalt = %+v, %v", fixed, err)
	}
	if _, err := add("gamma", 'c', 900); !errors.Is(err, chains.ErrSeedingClosed) {
		t.Fatalf("a contribution after the salt was fixed = %v, want ErrSeedingClosed", err)
	}
	list, err := s.Contributions(ctx, c.ID)
	if err != nil || len(list) != 2 || list[0].Name != "acme" || list[1].Name != "beta" {
		t.Fatalf("Contributions = %+v, %v", list, err)
	}
}

func noExtra([]store.ContributionRecord) []store.ContributionRecord { return nil }

// joinValues is a stand-in for the salt rule (package fairness): it shows
// which contributions the salt was made of, in the order given.
func joinValues(_ store.ChainRecord, all []store.ContributionRecord) (string, string, error) {
	var vs []string
	for _, c := range all {
		vs = append(vs, c.Value)
	}
	slices.Sort(vs)
	return strings.Join(vs, ""), chains.SaltFromContributions, nil
}

// Many fixers and contributors at once: one salt is fixed, every fixer
// returns it, and every contribution was either in it or refused as closed.
func testFixSaltRaces(t *testing.T, s *store.Store, _ string) {
	ctx := t.Context()
	c := testChain("crash", 1, 1, 10)
	c.SeedingEndsAt = 1 << 40 // the window is open for the contributors; the fixers close it
	if err := s.InsertChain(ctx, c); err != nil {
		t.Fatal(err)
	}
	const n = 8
	var wg sync.WaitGroup
	salts := make([]string, n)
	accepted := make([]bool, n)
	errs := make(chan error, 2*n)
	for i := range n {
		wg.Add(2)
		go func() {
			defer wg.Done()
			_, err := s.AddContribution(ctx, store.ContributionRecord{ChainID: c.ID, Source: chains.SourceOperator,
				Name: fmt.Sprint("op-", i), Value: value("0123456789"[i]), ReceivedAt: 20})
			switch {
			case err == nil:
				accepted[i] = true
			case !errors.Is(err, chains.ErrSeedingClosed):
				errs <- err
			}
		}()
		go func() {
			defer wg.Done()
			extra := func(all []store.ContributionRecord) []store.ContributionRecord {
				return []store.ContributionRecord{{ChainID: c.ID, Source: chains.SourceGame, Value: value('f'), ReceivedAt: 30}}
			}
			got, err := s.FixSalt(ctx, c.ID, 30, extra, joinValues)
			if err != nil {
				errs <- err
				return
			}
			salts[i] = *got.Salt
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for i := range n {
		if salts[i] != salts[0] {
			t.Fatalf("fixers got different salts: %q and %q", salts[0], salts[i])
		}
	}
	want := []string{value('f')}
	for i := range n {
		if accepted[i] {
			want = append(want, value("0123456789"[i]))
		}
	}
	slices.Sort(want)
	if salts[0] != strings.Join(want, "") {
		t.Fatalf("the salt is made of %q; want every accepted contribution and the game's value, %q", salts[0], strings.Join(want, ""))
	}
	if list, err := s.Contributions(ctx, c.ID); err != nil || len(list) != len(want) {
		t.Fatalf("Contributions = %d, %v; want %d", len(list), err, len(want))
	}
}

func testChainRounds(t *testing.T, s *store.Store, _ string) {
	ctx := t.Context()
	c := testChain("crash", 1, 11, 10)
	if err := s.InsertChain(ctx, c); err != nil {
		t.Fatal(err)
	}
	for pos := int64(1); pos <= 7; pos++ {
		r := testRound(fmt.Sprint("crash-", 10+pos), 10+pos, engine.RoundBetting)
		r.ChainID, r.Position = c.ID, pos
		mustInsertRound(t, s, r)
		switch {
		case pos == 4:
			if err := s.VoidRound(ctx, r.ID, fmt.Sprint("h", pos), 300, 25, engine.VoidFailoverBetting); err != nil {
				t.Fatal(err)
			}
		case pos < 7:
			if err := s.FinishRound(ctx, r.ID, 20, fmt.Sprint("h", pos), 200); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Round 7 is still betting: it is not listed, and nothing of it is stored
	// that would give away its outcome.
	live, err := s.Round(ctx, "crash", "crash-17")
	if err != nil || live.Hash != "" || live.CrashPoint != 0 || live.ChainID != c.ID || live.Position != 7 {
		t.Fatalf("a betting round = %+v, %v; want its chain and position, no hash nor crash point", live, err)
	}
	got, err := s.ChainRounds(ctx, c.ID, 3, 3)
	if err != nil || len(got) != 3 || got[0].Position != 3 || got[1].Status != engine.RoundVoid || got[1].Hash != "h4" || got[2].Position != 5 {
		t.Fatalf("ChainRounds(from 3, 3) = %+v, %v", got, err)
	}
	if got, err := s.ChainRounds(ctx, c.ID, 6, 10); err != nil || len(got) != 1 || got[0].Position != 6 {
		t.Fatalf("ChainRounds(from 6) = %+v, %v; want only the ended round 6", got, err)
	}
	voids, err := s.ChainVoids(ctx, c.ID)
	if err != nil || len(voids) != 1 || voids[0].Position != 4 || voids[0].Hash != "h4" || voids[0].CrashPoint != 300 ||
		voids[0].VoidedAt != 25 || voids[0].VoidRule != engine.VoidFailoverBetting {
		t.Fatalf("ChainVoids = %+v, %v; want round 4, voided at 25 in betting", voids, err)
	}
	cps, err := s.ChainCheckpoints(ctx, c.ID, 2, 7)
	if err != nil || len(cps) != 3 || cps[0].Position != 2 || cps[1].Position != 4 || cps[2].Position != 6 {
		t.Fatalf("ChainCheckpoints(every 2) = %+v, %v; want positions 2, 4, 6", cps, err)
	}
}
