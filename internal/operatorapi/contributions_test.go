package operatorapi_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/internal/chains"
	"github.com/crashstudio/crashgame/internal/store"
)

const strictSecret = "strict-secret-0123456789abcdef"

// seedingChain stores a commit_reveal chain whose seeding window runs for
// another minute of the env's clock, and its reveal window a minute more.
func (e *env) seedingChain(t *testing.T, id string) {
	t.Helper()
	e.insertChain(t, id, chains.RuleCommitReveal)
}

func (e *env) insertChain(t *testing.T, id, rule string) {
	t.Helper()
	now := store.MillisOf(e.now)
	rec := store.ChainRecord{ID: id, GameID: "crash", Number: 1, FirstSeq: 1, Length: 10,
		Terminal: strings.Repeat("ab", 32), RTPBasisPts: 9700, MaxMultiplier: 100000, FormulaVersion: 1,
		SealedSeed: []byte("sealed"), CreatedAt: now, SeedingEndsAt: store.MillisOf(e.now.Add(time.Minute)), ContributionRule: rule}
	if rule == chains.RuleCommitReveal {
		ends := store.MillisOf(e.now.Add(2 * time.Minute))
		rec.RevealEndsAt = &ends
	}
	if err := e.store.InsertChain(t.Context(), rec); err != nil {
		t.Fatal(err)
	}
}

func commitmentOf(value string) string {
	raw, _ := hex.DecodeString(value)
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

const contributionsPath = "/v1/fairness/contributions"

func (e *env) commit(op, chain, commitment string) string {
	return fmt.Sprintf(`{"operator":%q,"timestamp":%d,"chain_id":%q,"commitment":%q}`, op, e.ts(0), chain, commitment)
}

func (e *env) reveal(op, chain, value string) string {
	return fmt.Sprintf(`{"operator":%q,"timestamp":%d,"chain_id":%q,"value":%q}`, op, e.ts(0), chain, value)
}

// wantDocumented fails unless r's code and message are those of an example
// of the game document for its route and status.
func wantDocumented(t *testing.T, documented map[string]map[string]bool, what string, r reply) {
	t.Helper()
	key := contributionsPath + " " + strconv.Itoa(r.Status)
	if got := fmt.Sprint(r.Body["error_code"]) + " " + masked(r.Body["error_message"]); !documented[key][got] {
		t.Errorf("%s answers %s, which no example of %s shows", what, r.Raw, key)
	}
}

// An operator commits to a value in a chain's seeding window and reveals it
// in the reveal window: the receipts echo the chain, its terminal hash and
// the commitment; a repeat answers as the first time; a value in the seeding
// window, a second commitment, a late commitment, a reveal without a
// commitment, a value that is not the committed one, a late reveal, a
// degenerate value or commitment, an unknown chain and a malformed body are
// refused in the game direction's error shape, each with an example of the
// document. Both backends.
func TestCommitThenReveal(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e *env) {
		e.seedingChain(t, "crash-c1")
		documented := documentedRefusals(t)
		v1, v2 := strings.Repeat("0a", 32), strings.Repeat("0b", 32)
		c1, c2 := commitmentOf(v1), commitmentOf(v2)
		terminal := strings.Repeat("ab", 32)

		r := e.post(t, contributionsPath, e.commit("acme", "crash-c1", c1), acmeSecret)
		if r.Status != 200 || r.Body["status"] != "ok" || r.Body["chain_id"] != "crash-c1" || r.Body["terminal_hash"] != terminal ||
			r.Body["commitment"] != c1 || r.Body["value"] != nil || r.Body["received_at"] != float64(e.ts(0)) ||
			r.Body["seeding_ends_at"] != float64(e.ts(time.Minute)) || r.Body["reveal_ends_at"] != float64(e.ts(2*time.Minute)) {
			t.Fatalf("a commitment: %d %s", r.Status, r.Raw)
		}
		e.now = e.now.Add(time.Second)
		if again := e.post(t, contributionsPath, e.commit("acme", "crash-c1", c1), acmeSecret); again.Status != 200 || again.Body["received_at"] != r.Body["received_at"] {
			t.Fatalf("the same commitment again: %d %s; want the first answer", again.Status, again.Raw)
		}
		if other := e.post(t, contributionsPath, e.commit("strict", "crash-c1", c2), strictSecret); other.Status != 200 {
			t.Fatalf("another operator's commitment: %d %s", other.Status, other.Raw)
		}
		inSeeding := []struct {
			name, body, secret string
			status             int
			code               string
			example            bool
		}{
			{"a value in the seeding window", e.reveal("acme", "crash-c1", v1), acmeSecret, 409, "REVEAL_NOT_OPEN", true},
			{"another commitment of the same operator", e.commit("acme", "crash-c1", c2), acmeSecret, 409, "CONTRIBUTION_CONFLICT", true},
			{"an unknown chain", e.commit("acme", "crash-c9", c1), acmeSecret, 404, "CHAIN_NOT_FOUND", true},
			{"a commitment not 32 bytes", e.commit("acme", "crash-c1", "abc"), acmeSecret, 400, "INVALID_CONTRIBUTION", true},
			{"an uppercase commitment", e.commit("acme", "crash-c1", strings.ToUpper(c2)), acmeSecret, 400, "INVALID_CONTRIBUTION", true},
			{"both a commitment and a value", fmt.Sprintf(`{"operator":"acme","timestamp":%d,"chain_id":"crash-c1","commitment":%q,"value":%q}`, e.ts(0), c1, v1), acmeSecret, 400, "INVALID_CONTRIBUTION", true},
			{"neither a commitment nor a value", fmt.Sprintf(`{"operator":"acme","timestamp":%d,"chain_id":"crash-c1"}`, e.ts(0)), acmeSecret, 400, "INVALID_CONTRIBUTION", true},
			{"a commitment of 32 zero bytes", e.commit("showroom", "crash-c1", strings.Repeat("00", 32)), "", 400, "DEGENERATE_CONTRIBUTION", true},
			{"a commitment of 32 0xff bytes", e.commit("showroom", "crash-c1", strings.Repeat("ff", 32)), "", 400, "DEGENERATE_CONTRIBUTION", false},
			{"a commitment that is SHA-256 of nothing", e.commit("showroom", "crash-c1", commitmentOf("")), "", 400, "DEGENERATE_CONTRIBUTION", false},
			{"a commitment that is SHA-256 of 32 zero bytes", e.commit("showroom", "crash-c1", commitmentOf(strings.Repeat("00", 32))), "", 400, "DEGENERATE_CONTRIBUTION", false},
			{"a commitment that is the terminal hash", e.commit("showroom", "crash-c1", terminal), "", 400, "DEGENERATE_CONTRIBUTION", false},
			{"not JSON", "{not json", acmeSecret, 400, "INTERNAL_ERROR", true},
			{"signature refused", e.commit("acme", "crash-c1", c2), "another-secret-0123456789abcdef", 401, "INVALID_SIGNATURE", false},
		}
		for _, tt := range inSeeding {
			r := e.post(t, contributionsPath, tt.body, tt.secret)
			wantError(t, r, tt.status, tt.code)
			if tt.example {
				wantDocumented(t, documented, tt.name, r)
			}
		}

		// The seeding window closes: no more commitments; the reveal window opens.
		e.now = e.now.Add(time.Minute)
		r = e.post(t, contributionsPath, e.commit("showroom", "crash-c1", commitmentOf(strings.Repeat("0c", 32))), "")
		wantError(t, r, 409, "SEEDING_CLOSED")
		wantDocumented(t, documented, "a late commitment", r)
		for _, tt := range []struct {
			name, body, secret, code string
			status                   int
		}{
			{"a value that is not the committed one", e.reveal("acme", "crash-c1", v2), acmeSecret, "COMMITMENT_MISMATCH", 409},
			{"a value without a commitment", e.reveal("showroom", "crash-c1", strings.Repeat("0c", 32)), "", "NO_COMMITMENT", 409},
			{"a value of 32 zero bytes", e.reveal("acme", "crash-c1", strings.Repeat("00", 32)), acmeSecret, "DEGENERATE_CONTRIBUTION", 400},
			{"a value that is the terminal hash", e.reveal("acme", "crash-c1", terminal), acmeSecret, "DEGENERATE_CONTRIBUTION", 400},
		} {
			r := e.post(t, contributionsPath, tt.body, tt.secret)
			wantError(t, r, tt.status, tt.code)
			if tt.code != "DEGENERATE_CONTRIBUTION" {
				wantDocumented(t, documented, tt.name, r)
			}
		}
		r = e.post(t, contributionsPath, e.reveal("acme", "crash-c1", v1), acmeSecret)
		if r.Status != 200 || r.Body["value"] != v1 || r.Body["commitment"] != c1 || r.Body["terminal_hash"] != terminal ||
			r.Body["revealed_at"] != float64(e.ts(0)) {
			t.Fatalf("the reveal: %d %s", r.Status, r.Raw)
		}
		e.now = e.now.Add(time.Second)
		if again := e.post(t, contributionsPath, e.reveal("acme", "crash-c1", v1), acmeSecret); again.Status != 200 || again.Body["revealed_at"] != r.Body["revealed_at"] {
			t.Fatalf("the same value again: %d %s; want the first answer", again.Status, again.Raw)
		}

		// The reveal window closes: strict, who did not reveal, cannot any more.
		e.now = e.now.Add(time.Minute)
		r = e.post(t, contributionsPath, e.reveal("strict", "crash-c1", v2), strictSecret)
		wantError(t, r, 409, "REVEAL_CLOSED")
		wantDocumented(t, documented, "a late reveal", r)
		list, err := e.store.HashChains().Contributions(t.Context(), "crash-c1")
		if err != nil || len(list) != 2 || list[0].Name != "acme" || list[0].Value != v1 || list[1].Name != "strict" ||
			list[1].Value != "" || list[1].Commitment != c2 || !list[1].Withheld() || list[1].SaltValue() != c2 {
			t.Fatalf("stored contributions %+v, %v; want acme's revealed value and strict's commitment alone", list, err)
		}
	})
}

// A chain published before commit-reveal (contribution_rule plain) takes no
// more contributions, neither a commitment nor a value.
func TestPlainChainTakesNoMoreContributions(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e *env) {
		e.insertChain(t, "crash-c1", chains.RulePlain)
		v := strings.Repeat("0a", 32)
		wantError(t, e.post(t, contributionsPath, e.commit("acme", "crash-c1", commitmentOf(v)), acmeSecret), 409, "SEEDING_CLOSED")
		wantError(t, e.post(t, contributionsPath, e.reveal("acme", "crash-c1", v), acmeSecret), 409, "SEEDING_CLOSED")
	})
}

// The done-when test of issue 26: an operator contributing last cannot
// change the salt after seeing the others: it has only its commitment.
// Operator strict commits first; acme, the last, commits knowing everything
// the game stores and publishes; none of strict's value is readable
// anywhere (the store's rows) before the seeding window closed, since the
// game refuses it until then; and once values are revealed, acme can reveal
// no value but the one it committed to. Both backends.
func TestLastContributorHasOnlyItsCommitment(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e *env) {
		e.seedingChain(t, "crash-c1")
		strictValue, acmeValue := strings.Repeat("5a", 32), strings.Repeat("3c", 32)
		if r := e.post(t, contributionsPath, e.commit("strict", "crash-c1", commitmentOf(strictValue)), strictSecret); r.Status != 200 {
			t.Fatalf("strict's commitment: %d %s", r.Status, r.Raw)
		}
		// strict cannot hand its value over early either: the game refuses it.
		wantError(t, e.post(t, contributionsPath, e.reveal("strict", "crash-c1", strictValue), strictSecret), 409, "REVEAL_NOT_OPEN")
		// Everything stored about the chain, as acme (or the house) would read it.
		seen := func() string {
			rows, err := e.store.Contributions(t.Context(), "crash-c1")
			if err != nil {
				t.Fatal(err)
			}
			chain, err := e.store.ChainByID(t.Context(), "crash-c1")
			if err != nil {
				t.Fatal(err)
			}
			return fmt.Sprintf("%+v %+v", rows, chain)
		}
		e.now = e.now.Add(time.Minute - time.Millisecond) // the window's last millisecond
		if r := e.post(t, contributionsPath, e.commit("acme", "crash-c1", commitmentOf(acmeValue)), acmeSecret); r.Status != 200 {
			t.Fatalf("acme's commitment, last: %d %s", r.Status, r.Raw)
		}
		if s := seen(); strings.Contains(s, strictValue) {
			t.Fatalf("strict's value is readable before the seeding window closed: %s", s)
		}
		// The window closes; strict reveals. acme now knows strict's value and
		// tries every other value it might prefer: each is refused.
		e.now = e.now.Add(time.Millisecond)
		if r := e.post(t, contributionsPath, e.reveal("strict", "crash-c1", strictValue), strictSecret); r.Status != 200 {
			t.Fatalf("strict's reveal: %d %s", r.Status, r.Raw)
		}
		for i := range 50 {
			other := fmt.Sprintf("%064x", i+1)
			wantError(t, e.post(t, contributionsPath, e.reveal("acme", "crash-c1", other), acmeSecret), 409, "COMMITMENT_MISMATCH")
		}
		wantError(t, e.post(t, contributionsPath, e.commit("acme", "crash-c1", commitmentOf(strings.Repeat("77", 32))), acmeSecret), 409, "SEEDING_CLOSED")
		if r := e.post(t, contributionsPath, e.reveal("acme", "crash-c1", acmeValue), acmeSecret); r.Status != 200 {
			t.Fatalf("acme's own value: %d %s", r.Status, r.Raw)
		}
	})
}

// A commitment racing the seeding window's end, and a reveal racing the
// reveal window's end, are each either in or refused, never half: every
// answered 200 is stored, every refusal is SEEDING_CLOSED / REVEAL_CLOSED and
// stores nothing. Both backends.
func TestCommitmentsAndRevealsRacingTheWindows(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e *env) {
		e.seedingChain(t, "crash-c1")
		ctx := t.Context()
		chain, err := e.store.ChainByID(ctx, "crash-c1")
		if err != nil {
			t.Fatal(err)
		}
		const n = 12
		values := make([]string, n)
		var wg sync.WaitGroup
		accepted := make([]bool, n)
		for i := range n {
			values[i] = fmt.Sprintf("%064x", 1000+i)
			wg.Add(1)
			go func() {
				defer wg.Done()
				// Half just before the end, half at it.
				at := chain.SeedingEndsAt - store.Millis(1-i%2)
				_, err := e.store.AddCommitment(ctx, store.ContributionRecord{ChainID: "crash-c1", Source: chains.SourceOperator,
					Name: fmt.Sprintf("op%d", i), Commitment: commitmentOf(values[i]), ReceivedAt: at})
				switch {
				case err == nil:
					accepted[i] = true
				case err != chains.ErrSeedingClosed:
					t.Errorf("commitment %d: %v", i, err)
				}
			}()
		}
		wg.Wait()
		for i := range n {
			if accepted[i] != (i%2 == 0) {
				t.Errorf("commitment %d at %d ms before the end: accepted %v", i, 1-i%2, accepted[i])
			}
		}
		revealed := make([]bool, n)
		for i := 0; i < n; i += 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				at := *chain.RevealEndsAt - store.Millis(i/2%2)
				_, err := e.store.RevealContribution(ctx, "crash-c1", fmt.Sprintf("op%d", i), values[i], at)
				switch {
				case err == nil:
					revealed[i] = true
				case err != chains.ErrRevealClosed:
					t.Errorf("reveal %d: %v", i, err)
				}
			}()
		}
		wg.Wait()
		rows, err := e.store.Contributions(ctx, "crash-c1")
		if err != nil || len(rows) != n/2 {
			t.Fatalf("stored %d commitments (%v), want %d", len(rows), err, n/2)
		}
		for _, r := range rows {
			var i int
			if _, err := fmt.Sscanf(r.Name, "op%d", &i); err != nil {
				t.Fatalf("commitment of %q: %v", r.Name, err)
			}
			if revealed[i] != (r.Value == values[i]) || revealed[i] != (i/2%2 == 1) {
				t.Errorf("%s: revealed %v, stored value %q", r.Name, revealed[i], r.Value)
			}
		}
	})
}
