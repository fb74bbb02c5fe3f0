package store_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/internal/chains"
	"github.com/crashstudio/crashgame/internal/store"
)

var commitRevealCases = []contractCase{
	{"CommitmentsInSeedingRevealsAfter", testCommitThenReveal},
	{"RevealsRaceTheFixingOfTheSalt", testRevealsRaceFixSalt},
}

func sum(v string) string {
	raw, _ := hex.DecodeString(v)
	s := sha256.Sum256(raw)
	return hex.EncodeToString(s[:])
}

// commitRevealChain is testChain under commit_reveal: seeding until
// created+1000, revealing until created+2000.
func commitRevealChain(game string, number, first int64, created store.Millis) store.ChainRecord {
	c := testChain(game, number, first, created)
	ends := created + 2000
	c.ContributionRule, c.RevealEndsAt = chains.RuleCommitReveal, &ends
	return c
}

// A commit_reveal chain takes commitments in its seeding window only, and
// the values that hash to them in its reveal window only; no value before
// the seeding window's end; a plain chain takes neither, and a commit_reveal
// one takes no plain value.
func testCommitThenReveal(t *testing.T, s *store.Store, _ string) {
	ctx := t.Context()
	c := commitRevealChain("crash", 1, 1, 10) // seeding 10..1010, revealing 1010..2010
	if err := s.InsertChain(ctx, c); err != nil {
		t.Fatal(err)
	}
	commit := func(name string, v byte, at store.Millis) (store.ContributionRecord, error) {
		return s.AddCommitment(ctx, store.ContributionRecord{ChainID: c.ID, Source: chains.SourceOperator, Name: name, Commitment: sum(value(v)), ReceivedAt: at})
	}
	if got, err := commit("acme", 'a', 500); err != nil || got.Commitment != sum(value('a')) || got.Value != "" || got.ReceivedAt != 500 {
		t.Fatalf("a commitment = %+v, %v", got, err)
	}
	if got, err := commit("acme", 'a', 2500); err != nil || got.ReceivedAt != 500 {
		t.Fatalf("the same commitment again = %+v, %v; want the first", got, err)
	}
	if _, err := commit("acme", 'b', 600); !errors.Is(err, chains.ErrContributionConflict) {
		t.Fatalf("another commitment = %v, want ErrContributionConflict", err)
	}
	if _, err := commit("beta", 'b', 1010); !errors.Is(err, chains.ErrSeedingClosed) {
		t.Fatalf("a commitment at the window's end = %v, want ErrSeedingClosed", err)
	}
	if _, err := s.AddContribution(ctx, store.ContributionRecord{ChainID: c.ID, Source: chains.SourceOperator, Name: "gamma", Value: value('c'), ReceivedAt: 600}); !errors.Is(err, chains.ErrCommitRequired) {
		t.Fatalf("a plain value to a commit_reveal chain = %v, want ErrCommitRequired", err)
	}
	if _, err := commit("beta", 'b', 900); err != nil {
		t.Fatal(err)
	}
	reveal := func(name string, v byte, at store.Millis) (store.ContributionRecord, error) {
		return s.RevealContribution(ctx, c.ID, name, value(v), at)
	}
	if _, err := reveal("acme", 'a', 1009); !errors.Is(err, chains.ErrRevealNotOpen) {
		t.Fatalf("a value in the seeding window = %v, want ErrRevealNotOpen", err)
	}
	// An operator that did not commit and sends its value in the window (a
	// client of the plain rule) is told the window, not that it did not commit.
	if _, err := reveal("gamma", 'c', 1009); !errors.Is(err, chains.ErrRevealNotOpen) {
		t.Fatalf("a value in the seeding window without a commitment = %v, want ErrRevealNotOpen", err)
	}
	rows, err := s.Contributions(ctx, c.ID)
	if err != nil || len(rows) != 2 || rows[0].Value != "" || rows[1].Value != "" {
		t.Fatalf("before the seeding window's end the rows hold %+v, %v; want commitments only", rows, err)
	}
	if _, err := reveal("gamma", 'c', 1100); !errors.Is(err, chains.ErrNoCommitment) {
		t.Fatalf("a value with no commitment = %v, want ErrNoCommitment", err)
	}
	if _, err := reveal("acme", 'b', 1100); !errors.Is(err, chains.ErrRevealMismatch) {
		t.Fatalf("another value = %v, want ErrRevealMismatch", err)
	}
	got, err := reveal("acme", 'a', 1010)
	if err != nil || got.Value != value('a') || got.RevealedAt == nil || *got.RevealedAt != 1010 {
		t.Fatalf("the reveal = %+v, %v", got, err)
	}
	if again, err := reveal("acme", 'a', 5000); err != nil || *again.RevealedAt != 1010 {
		t.Fatalf("the same value again = %+v, %v; want the first", again, err)
	}
	// A replica whose clock lags cannot add a commitment once a value is out.
	if _, err := commit("late", 'd', 1000); !errors.Is(err, chains.ErrSeedingClosed) {
		t.Fatalf("a commitment after a reveal = %v, want ErrSeedingClosed", err)
	}
	if _, err := reveal("beta", 'b', 2010); !errors.Is(err, chains.ErrRevealClosed) {
		t.Fatalf("a value at the reveal window's end = %v, want ErrRevealClosed", err)
	}
	// As package chains reads them (through the store's repository).
	shown, err := s.HashChains().Contributions(ctx, c.ID)
	if err != nil || len(shown) != 2 || shown[1].Name != "beta" || !shown[1].Withheld() || shown[1].SaltValue() != sum(value('b')) ||
		shown[0].Withheld() || shown[0].SaltValue() != value('a') {
		t.Fatalf("contributions %+v, %v; want acme revealed, beta withheld (its commitment stands in)", shown, err)
	}

	plain := testChain("crash", 2, 1001, 10)
	if err := s.InsertChain(ctx, plain); err != nil {
		t.Fatal(err)
	}
	if got, err := s.ChainByID(ctx, plain.ID); err != nil || got.ContributionRule != chains.RulePlain || got.RevealEndsAt != nil {
		t.Fatalf("a chain inserted with no rule = %+v, %v; want plain", got, err)
	}
	if _, err := s.AddCommitment(ctx, store.ContributionRecord{ChainID: plain.ID, Source: chains.SourceOperator, Name: "acme", Commitment: sum(value('a')), ReceivedAt: 20}); !errors.Is(err, chains.ErrPlainChain) {
		t.Fatalf("a commitment to a plain chain = %v, want ErrPlainChain", err)
	}
	if _, err := s.RevealContribution(ctx, plain.ID, "acme", value('a'), 20); !errors.Is(err, chains.ErrPlainChain) {
		t.Fatalf("a reveal to a plain chain = %v, want ErrPlainChain", err)
	}
}

// Reveals racing the fixing of the salt: every reveal is either in the salt
// or refused as closed, and every commitment without a stored value is in
// the salt as itself.
func testRevealsRaceFixSalt(t *testing.T, s *store.Store, _ string) {
	ctx := t.Context()
	c := commitRevealChain("crash", 1, 1, 10)
	far := store.Millis(1 << 40)
	c.RevealEndsAt = &far // the reveal window is open for the revealers; the fixers close it
	if err := s.InsertChain(ctx, c); err != nil {
		t.Fatal(err)
	}
	const n = 8
	for i := range n {
		if _, err := s.AddCommitment(ctx, store.ContributionRecord{ChainID: c.ID, Source: chains.SourceOperator,
			Name: fmt.Sprint("op-", i), Commitment: sum(value("0123456789"[i])), ReceivedAt: 20}); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	salts := make([]string, n)
	revealed := make([]bool, n)
	errs := make(chan error, 2*n)
	saltValues := func(_ chains.Chain, all []chains.Contribution) (string, string, error) {
		var vs []string
		for _, r := range all {
			vs = append(vs, r.SaltValue())
		}
		slices.Sort(vs)
		return strings.Join(vs, ""), chains.SaltFromContributions, nil
	}
	for i := range n {
		wg.Add(2)
		go func() {
			defer wg.Done()
			_, err := s.RevealContribution(ctx, c.ID, fmt.Sprint("op-", i), value("0123456789"[i]), 1500)
			switch {
			case err == nil:
				revealed[i] = true
			case !errors.Is(err, chains.ErrRevealClosed):
				errs <- err
			}
		}()
		go func() {
			defer wg.Done()
			got, err := s.HashChains().FixSalt(ctx, c.ID, time.UnixMilli(2000),
				func([]chains.Contribution) []chains.Contribution { return nil }, saltValues)
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
	var want []string
	for i := range n {
		if salts[i] != salts[0] {
			t.Fatalf("fixers got different salts: %q and %q", salts[0], salts[i])
		}
		if revealed[i] {
			want = append(want, value("0123456789"[i]))
		} else {
			want = append(want, sum(value("0123456789"[i])))
		}
	}
	slices.Sort(want)
	if salts[0] != strings.Join(want, "") {
		t.Fatalf("the salt is made of %q; want every revealed value and every other commitment, %q", salts[0], strings.Join(want, ""))
	}
}

// An installation upgraded across migration 0011 keeps every chain and
// contribution as it was: its chains take the rule "plain" (their values
// were sent in plain text), with no reveal window, and their contributions
// keep their values and arrival times, with no commitment. Both backends.
func TestMigration0011KeepsPlainChains(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			s := openMigrated(t, b.open(t))
			ctx := t.Context()
			runFile(t, s, "0011_commit_reveal.tx.down.sql")
			// The old shape: a salted chain with an operator's value and the beacon's.
			for _, q := range []string{
				`INSERT INTO hash_chains (id, game_id, number, first_seq, length, terminal, rtp_bp, max_multiplier, formula_version,
				 created_at, seeding_ends_at, salt, salt_source, salt_fixed_at)
				 VALUES ('crash-c1', 'crash', 1, 1, 100, '` + strings.Repeat("7e", 32) + `', 9700, 100000, 1, 5, 1005, '` + strings.Repeat("5a", 32) + `', 'contributions', 1006)`,
				`INSERT INTO chain_contributions (chain_id, source, name, value, received_at)
				 VALUES ('crash-c1', 'operator', 'acme', '` + value('a') + `', 600), ('crash-c1', 'beacon', 'drand 1', '` + value('b') + `', 1006)`,
			} {
				if _, err := s.ExecForTest(ctx, q); err != nil {
					t.Fatal(err)
				}
			}
			runFile(t, s, "0011_commit_reveal.tx.up.sql")
			c, err := s.ChainByID(ctx, "crash-c1")
			if err != nil || c.ContributionRule != chains.RulePlain || c.RevealEndsAt != nil || c.SeedingEndsAt != 1005 ||
				c.Salt == nil || *c.Salt != strings.Repeat("5a", 32) {
				t.Fatalf("the chain after 0011: %+v, %v; want it plain, its salt kept", c, err)
			}
			rows, err := s.Contributions(ctx, "crash-c1")
			if err != nil || len(rows) != 2 || rows[0].Value != value('a') || rows[0].ReceivedAt != 600 || rows[0].Commitment != "" ||
				rows[1].Value != value('b') {
				t.Fatalf("contributions after 0011: %+v, %v; want them as they were", rows, err)
			}
			// The upgraded store takes commit_reveal chains.
			if err := s.InsertChain(ctx, commitRevealChain("crash", 2, 101, 2000)); err != nil {
				t.Fatal(err)
			}
			if _, err := s.AddCommitment(ctx, store.ContributionRecord{ChainID: "crash-c2", Source: chains.SourceOperator, Name: "acme",
				Commitment: sum(value('c')), ReceivedAt: 2500}); err != nil {
				t.Fatal(err)
			}
		})
	}
}
