package table_test

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/gen/table"
	"github.com/crashstudio/crashgame/internal/chains"
	"github.com/crashstudio/crashgame/internal/store"
)

// A commit_reveal chain's document publishes each operator's commitment as
// it arrives and never a value before the salt is fixed, not even one
// revealed in the reveal window; once the salt is fixed it publishes the
// revealed values, and names the operator that withheld, whose commitment
// stands in for its value.
func TestChainDocumentPublishesCommitmentsThenValues(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{betting: 300 * time.Millisecond})
	ctx := t.Context()
	ends, revealEnds := store.Millis(2000), store.Millis(3000)
	rec := store.ChainRecord{ID: "other-c1", GameID: "other", Number: 1, FirstSeq: 1, Length: 10,
		Terminal: strings.Repeat("ab", 32), RTPBasisPts: 9700, MaxMultiplier: 100000, FormulaVersion: 1,
		SealedSeed: []byte("sealed"), CreatedAt: 1000, SeedingEndsAt: ends, ContributionRule: chains.RuleCommitReveal, RevealEndsAt: &revealEnds}
	if err := e.st.InsertChain(ctx, rec); err != nil {
		t.Fatal(err)
	}
	acme, zeta := strings.Repeat("a1", 32), strings.Repeat("c4", 32)
	commit := func(v string) string {
		raw, _ := hex.DecodeString(v)
		sum := sha256.Sum256(raw)
		return hex.EncodeToString(sum[:])
	}
	for op, v := range map[string]string{"acme": acme, "zeta": zeta} {
		if _, err := e.st.AddCommitment(ctx, store.ContributionRecord{ChainID: rec.ID, Source: chains.SourceOperator, Name: op, Commitment: commit(v), ReceivedAt: 1500}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.st.RevealContribution(ctx, rec.ID, "acme", acme, ends+1); err != nil {
		t.Fatal(err)
	}
	raw := e.call(t, "GET", "/fairness/chains/"+rec.ID, "", nil)
	doc := decode[table.Chain](t, raw)
	if doc.Status != table.ChainStatusSeeding || doc.ContributionRule == nil || *doc.ContributionRule != "commit_reveal" ||
		doc.RevealEndsAt == nil || *doc.RevealEndsAt != int64(revealEnds) || len(doc.Contributions) != 2 {
		t.Fatalf("the document before the salt: %+v", doc)
	}
	for _, c := range doc.Contributions {
		if c.Value != nil || c.Commitment == nil || c.Withheld != nil {
			t.Fatalf("a contribution before the salt: %+v; want its commitment alone", c)
		}
	}
	if body := raw.Body.String(); strings.Contains(body, acme) {
		t.Fatalf("a revealed value is published before the salt is fixed: %s", body)
	}
	saltValues := func(_ store.ChainRecord, all []store.ContributionRecord) (string, string, error) {
		return strings.Repeat("5a", 32), chains.SaltFromContributions, nil
	}
	if _, err := e.st.FixSalt(ctx, rec.ID, revealEnds, func([]store.ContributionRecord) []store.ContributionRecord { return nil }, saltValues); err != nil {
		t.Fatal(err)
	}
	doc = decode[table.Chain](t, e.call(t, "GET", "/fairness/chains/"+rec.ID, "", nil))
	byOp := map[string]table.Contribution{}
	for _, c := range doc.Contributions {
		byOp[*c.Operator] = c
	}
	a, z := byOp["acme"], byOp["zeta"]
	if a.Value == nil || *a.Value != acme || a.Withheld == nil || *a.Withheld || a.RevealedAt == nil || *a.RevealedAt != int64(ends+1) {
		t.Fatalf("acme after the salt: %+v", a)
	}
	if z.Value == nil || *z.Value != commit(zeta) || z.Withheld == nil || !*z.Withheld || z.RevealedAt != nil {
		t.Fatalf("zeta after the salt: %+v; want withheld, its commitment as its value", z)
	}
}
