package chains_test

import (
	"testing"
	"time"

	"github.com/crashstudio/crashgame/internal/chains"
)

func TestSaltDueAt(t *testing.T) {
	t.Parallel()
	seeding := time.UnixMilli(1_800_000_000_000).UTC()
	reveal := seeding.Add(2 * time.Minute)
	cases := []struct {
		name  string
		chain chains.Chain
		want  time.Time
	}{
		{"a plain chain: the end of its seeding window", chains.Chain{ContributionRule: chains.RulePlain, SeedingEndsAt: seeding}, seeding},
		{"a commit_reveal chain: the end of its reveal window", chains.Chain{ContributionRule: chains.RuleCommitReveal, SeedingEndsAt: seeding, RevealEndsAt: &reveal}, reveal},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := tc.chain.SaltDueAt(); !got.Equal(tc.want) {
				t.Fatalf("SaltDueAt = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestContributionSaltValue(t *testing.T) {
	t.Parallel()
	value, commitment := "a1", "c4"
	cases := []struct {
		name         string
		c            chains.Contribution
		wantValue    string
		wantWithheld bool
	}{
		{"a plain value", chains.Contribution{Source: chains.SourceOperator, Value: value}, value, false},
		{"a commitment revealed: its value", chains.Contribution{Source: chains.SourceOperator, Value: value, Commitment: commitment}, value, false},
		{"a commitment withheld: the commitment stands in", chains.Contribution{Source: chains.SourceOperator, Commitment: commitment}, commitment, true},
		{"the game's draw", chains.Contribution{Source: chains.SourceGame, Value: value}, value, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := tc.c.SaltValue(); got != tc.wantValue {
				t.Errorf("SaltValue = %q, want %q", got, tc.wantValue)
			}
			if got := tc.c.Withheld(); got != tc.wantWithheld {
				t.Errorf("Withheld = %v, want %v", got, tc.wantWithheld)
			}
		})
	}
}

func TestBeaconNamed(t *testing.T) {
	t.Parallel()
	if (chains.Beacon{}).Named() {
		t.Error("the zero Beacon names a round")
	}
	if !(chains.Beacon{Network: "quicknet", Round: 1}).Named() {
		t.Error("a Beacon with a network names no round")
	}
}
