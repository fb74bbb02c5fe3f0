//go:build integration

package suite

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

type publicChain struct {
	ChainID       string `json:"chain_id"`
	Status        string `json:"status"`
	Salt          string `json:"salt"`
	SaltSource    string `json:"salt_source"`
	SeedingEndsAt int64  `json:"seeding_ends_at"`
	Contributions []struct {
		Source     string `json:"source"`
		Operator   string `json:"operator"`
		Value      string `json:"value"`
		Commitment string `json:"commitment"`
	} `json:"contributions"`
}

// TestPublicFairness: the chain is public before its first round, with no
// salt; the operator commits to a value through the signed route in the
// seeding window (its SHA-256; the value itself and another commitment are
// refused) and reveals it after the window; then the salt is made of that
// value, a value after the reveal window is refused, and a third party
// holding only the public documents verifies every round with a program
// outside the Go code (docs/examples/fairness/verify_chains.py).
func TestPublicFairness(t *testing.T) {
	laneSingle.join(t)
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed: the third party's verifier cannot run")
	}
	e := Start(t, Options{SeedingWindowMS: 6000, MaxMultiplier: 150, Seeding: true})

	var list struct {
		Items []publicChain `json:"items"`
	}
	e.publicGet(t, "/fairness/chains?game_id="+gameID, &list)
	if len(list.Items) != 1 || list.Items[0].Status != "seeding" || list.Items[0].Salt != "" {
		t.Fatalf("before the first round: %+v; want one chain, seeding, no salt", list.Items)
	}
	chain := list.Items[0]
	value := strings.Repeat("c0ffee", 10) + "abcd"
	raw, _ := hex.DecodeString(value)
	sum := sha256.Sum256(raw)
	commitment := hex.EncodeToString(sum[:])
	r := e.Operator(t, "/v1/fairness/contributions", map[string]any{"chain_id": chain.ChainID, "value": value})
	if r.Status != http.StatusConflict || r.ErrorCode() != "REVEAL_NOT_OPEN" {
		t.Fatalf("a value in the seeding window: %s, want 409 REVEAL_NOT_OPEN", r)
	}
	r = e.Operator(t, "/v1/fairness/contributions", map[string]any{"chain_id": chain.ChainID, "commitment": commitment})
	if r.Status != http.StatusOK {
		t.Fatalf("the commitment: %s", r)
	}
	r = e.Operator(t, "/v1/fairness/contributions", map[string]any{"chain_id": chain.ChainID, "commitment": strings.Repeat("ab", 32)})
	if r.Status != http.StatusConflict || r.ErrorCode() != "CONTRIBUTION_CONFLICT" {
		t.Fatalf("another commitment: %s, want 409 CONTRIBUTION_CONFLICT", r)
	}
	// The seeding window closes; the value is revealed in the reveal window.
	time.Sleep(time.Until(time.UnixMilli(chain.SeedingEndsAt)) + 200*time.Millisecond)
	r = e.Operator(t, "/v1/fairness/contributions", map[string]any{"chain_id": chain.ChainID, "value": value})
	if r.Status != http.StatusOK {
		t.Fatalf("the reveal: %s", r)
	}

	// The reveal window closes; rounds are played.
	deadline := time.Now().Add(90 * time.Second)
	var rounds struct {
		Items []map[string]any `json:"items"`
	}
	for time.Now().Before(deadline) {
		e.publicGet(t, "/fairness/chains/"+chain.ChainID+"/rounds", &rounds)
		if len(rounds.Items) >= 3 {
			break
		}
		time.Sleep(time.Second)
	}
	if len(rounds.Items) < 3 {
		t.Fatalf("%d rounds ended in 90 s", len(rounds.Items))
	}
	var fixed publicChain
	e.publicGet(t, "/fairness/chains/"+chain.ChainID, &fixed)
	if fixed.Status != "active" || fixed.SaltSource != "contributions" || len(fixed.Contributions) != 1 ||
		fixed.Contributions[0].Operator != operatorID || fixed.Contributions[0].Value != value || fixed.Contributions[0].Commitment != commitment {
		t.Fatalf("the chain after its window: %+v; want the salt made of acme's contribution", fixed)
	}
	r = e.Operator(t, "/v1/fairness/contributions", map[string]any{"chain_id": chain.ChainID, "commitment": strings.Repeat("cd", 32)})
	if r.Status != http.StatusConflict || r.ErrorCode() != "SEEDING_CLOSED" {
		t.Fatalf("a commitment after the window: %s, want 409 SEEDING_CLOSED", r)
	}

	script := filepath.Join("..", "..", "docs", "examples", "fairness", "verify_chains.py")
	out, err := exec.Command("python3", script, e.GameURL(), "--game", gameID).CombinedOutput()
	if err != nil {
		t.Fatalf("the third party's verifier failed (%v):\n%s", err, out)
	}
	t.Logf("verify_chains.py:\n%s", out)
	if !strings.Contains(string(out), chain.ChainID) {
		t.Fatalf("the verifier did not check chain %s:\n%s", chain.ChainID, out)
	}
}
