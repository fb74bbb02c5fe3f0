package engine_test

import (
	"os"
	"strings"
	"testing"

	"github.com/crashstudio/crashgame/api"
	"github.com/crashstudio/crashgame/internal/engine"
)

// Rule RB-11: every reason the game sends with a /rollback is the one the
// wallet document and docs/failover.md name, in their words, so an operator
// who logs it can look it up.
func TestRollbackReasonsDocumented(t *testing.T) {
	t.Parallel()
	wallet, err := api.Documents.ReadFile("wallet.v1.yaml")
	if err != nil {
		t.Fatal(err)
	}
	failover, err := os.ReadFile("../../docs/failover.md")
	if err != nil {
		t.Fatal(err)
	}
	// The document wraps its lines: compare with the whitespace folded.
	fold := func(b []byte) string { return strings.Join(strings.Fields(string(b)), " ") }
	doc := fold(wallet)
	for _, r := range engine.RollbackReasons {
		if !strings.Contains(doc, "`"+r+"`") {
			t.Errorf("api/wallet.v1.yaml does not name the rollback reason %q", r)
		}
		if !strings.Contains(string(failover), "| `"+r+"` |") {
			t.Errorf("docs/failover.md's table does not name the rollback reason %q", r)
		}
	}
}
