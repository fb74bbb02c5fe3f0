package store_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/internal/chains"
	"github.com/crashstudio/crashgame/internal/store"
)

// ms is an instant as the chains record it: whole milliseconds in UTC.
func ms(n int64) time.Time { return time.UnixMilli(n).UTC() }

// Package chains' repository over the store: every field of a chain and of
// a contribution comes back as it was given, the optional ones as nil when
// not set, and the refusals are chains' own errors.
func testHashChainsRoundTrip(t *testing.T, s *store.Store, _ string) {
	ctx := t.Context()
	repo := s.HashChains()
	reveal, lastSeq := ms(1_800_000_300_000), int64(0)
	full := chains.Chain{
		ID: "crash-c1", GameID: "crash", Number: 1, FirstSeq: 1, Length: 10, Terminal: strings.Repeat("ab", 32),
		RTPBasisPts: 9700, MaxMultiplier: 100000, FormulaVersion: 1, SealedSeed: []byte("sealed"),
		CreatedAt: ms(1_800_000_000_000), SeedingEndsAt: ms(1_800_000_180_000),
		ContributionRule: chains.RuleCommitReveal, RevealEndsAt: &reveal,
		Beacon: chains.Beacon{Network: "quicknet", ChainHash: strings.Repeat("cd", 32), PublicKey: strings.Repeat("ef", 48),
			Genesis: 1_692_803_367, PeriodS: 3, Round: 12345678, RoundAt: ms(1_800_000_310_000)},
	}
	if err := repo.InsertChain(ctx, full); err != nil {
		t.Fatal(err)
	}
	got, err := repo.ChainByID(ctx, full.ID)
	if err != nil || !reflect.DeepEqual(got, full) {
		t.Fatalf("ChainByID = %+v, %v;\nwant %+v", got, err, full)
	}
	if cur, err := repo.CurrentChain(ctx, "crash"); err != nil || !reflect.DeepEqual(cur, full) {
		t.Fatalf("CurrentChain = %+v, %v", cur, err)
	}
	if _, err := repo.ChainByID(ctx, "crash-c9"); !errors.Is(err, chains.ErrChainNotFound) {
		t.Fatalf("an unknown chain = %v, want chains.ErrChainNotFound", err)
	}

	commitment := strings.Repeat("c4", 32)
	c, err := repo.AddCommitment(ctx, chains.Contribution{ChainID: full.ID, Source: chains.SourceOperator, Name: "acme",
		Commitment: commitment, ReceivedAt: ms(1_800_000_100_000)})
	if err != nil || c.RevealedAt != nil || c.Value != "" || !c.ReceivedAt.Equal(ms(1_800_000_100_000)) || c.Commitment != commitment {
		t.Fatalf("AddCommitment = %+v, %v", c, err)
	}
	if _, err := repo.RevealContribution(ctx, full.ID, "acme", strings.Repeat("a1", 32), ms(1_800_000_100_001)); !errors.Is(err, chains.ErrRevealNotOpen) {
		t.Fatalf("a reveal in the seeding window = %v, want chains.ErrRevealNotOpen", err)
	}

	fixedAt := ms(1_800_000_300_000)
	fixed, err := repo.FixSalt(ctx, full.ID, fixedAt,
		func(got []chains.Contribution) []chains.Contribution {
			if len(got) != 1 || got[0].Name != "acme" || !got[0].Withheld() {
				t.Errorf("FixSalt's extra saw %+v, want acme's commitment withheld", got)
			}
			return []chains.Contribution{{ChainID: full.ID, Source: chains.SourceGame, Value: strings.Repeat("0f", 32), ReceivedAt: fixedAt}}
		},
		func(chain chains.Chain, all []chains.Contribution) (string, string, error) {
			if chain.ID != full.ID || len(all) != 2 || all[1].Source != chains.SourceGame {
				t.Errorf("FixSalt's compute saw %s with %+v", chain.ID, all)
			}
			return strings.Repeat("5a", 32), chains.SaltFromContributions, nil
		})
	if err != nil || fixed.Salt == nil || *fixed.Salt != strings.Repeat("5a", 32) || fixed.SaltFixedAt == nil || !fixed.SaltFixedAt.Equal(fixedAt) {
		t.Fatalf("FixSalt = %+v, %v", fixed, err)
	}
	if err := repo.RetireChain(ctx, full.ID, lastSeq, ms(1_800_000_400_000)); err != nil {
		t.Fatal(err)
	}
	got, err = repo.ChainByID(ctx, full.ID)
	if err != nil || got.LastSeq == nil || *got.LastSeq != lastSeq || got.RetiredAt == nil || !got.RetiredAt.Equal(ms(1_800_000_400_000)) ||
		got.SaltSource == nil || *got.SaltSource != chains.SaltFromContributions {
		t.Fatalf("the chain retired = %+v, %v", got, err)
	}
	list, err := repo.Contributions(ctx, full.ID)
	if err != nil || len(list) != 2 || list[0].Name != "acme" || list[1].Source != chains.SourceGame || !list[1].ReceivedAt.Equal(fixedAt) {
		t.Fatalf("Contributions = %+v, %v", list, err)
	}
}
