package table

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/crashstudio/crashgame/internal/engine"
)

// Every refusal of a player's action (engine.Refusals, the one list) has the
// player's answer here, as the leader's own error and as it arrives from the
// leader on another replica (wrapped, with the same code): none becomes a
// 500, and the player API answers none it does not know.
func TestEveryRefusalHasTheSameAnswerOnEveryReplica(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, r := range engine.Refusals {
		seen[r.Code] = true
		ans, ok := answers[r.Code]
		if !ok {
			t.Errorf("refusal %s (%v) has no player answer: add it to answers", r.Code, r.Err)
			continue
		}
		if ans.status == http.StatusInternalServerError || ans.code == "" {
			t.Errorf("refusal %s answers %d %q", r.Code, ans.status, ans.code)
		}
		for _, err := range []error{r.Err, fmt.Errorf("engine: an action: %w", r.Err), fmt.Errorf("the table's leader refused: %w", r.Err)} {
			if got, ok := engine.RefusalOf(err); !ok || got.Code != r.Code {
				t.Errorf("%v is refusal %q (%v), want %s", err, got.Code, ok, r.Code)
			}
		}
	}
	for code := range answers {
		if !seen[code] {
			t.Errorf("answers maps %s, which engine.Refusals does not list", code)
		}
	}
}
