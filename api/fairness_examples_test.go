package api_test

import (
	"fmt"
	"testing"

	"github.com/crashstudio/crashgame/internal/apitest"
	"github.com/crashstudio/crashgame/internal/fairness"
	"github.com/crashstudio/crashgame/internal/round"
)

// exampleValue returns the value of the example named name of the response
// status of GET path in table.v1.yaml.
func exampleValue(t *testing.T, path, status, name string) map[string]any {
	t.Helper()
	op := gwLoadDocument(t, "table.v1.yaml").Paths.Find(path).Get
	ex := op.Responses.Status(atoi(t, status)).Value.Content.Get("application/json").Examples[name]
	if ex == nil || ex.Value == nil {
		t.Fatalf("GET %s %s: no example %q", path, status, name)
	}
	v, ok := ex.Value.Value.(map[string]any)
	if !ok {
		t.Fatalf("GET %s %s %s: not an object", path, status, name)
	}
	return v
}

func atoi(t *testing.T, s string) int {
	var n int
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// num reads a number of an example, as JSON (float64) or YAML (int) gives it.
func num(v any) int64 {
	switch n := v.(type) {
	case float64:
		return int64(n)
	case int:
		return int64(n)
	case int64:
		return n
	}
	return -1
}

// Every fairness example of the table's documents verifies: each revealed
// hash gives its crash point under the published salt and settings, the round
// list's hashes link (SHA-256 of a round's hash is the previous round's), they
// reach the published terminal hash, and a round flew exactly as long as its
// crash point takes. A reader who checks the documents' own examples with the
// documented formula finds them true.
func TestFairnessExamplesVerify(t *testing.T) {
	t.Parallel()
	pub := exampleValue(t, "/api/v1/fairness", "200", "fairness")
	salt, rtp, maxM := pub["salt"].(string), num(pub["rtp_bp"]), num(pub["max_multiplier"])
	terminal, err := fairness.ParseHash(pub["terminal_hash"].(string))
	if err != nil {
		t.Fatal(err)
	}
	check := func(where string, r map[string]any) [32]byte {
		t.Helper()
		h, err := fairness.ParseHash(fmt.Sprint(r["hash"]))
		if err != nil {
			t.Fatalf("%s: %v", where, err)
		}
		if got, want := fairness.CrashPoint(h, salt, rtp, maxM), num(r["crash_point"]); got != want {
			t.Errorf("%s: the hash gives %d under the published salt, the example shows %d", where, got, want)
		}
		if _, err := fairness.ChainPosition(h, terminal, 1000); err != nil {
			t.Errorf("%s: the hash does not reach the published terminal: %v", where, err)
		}
		if started, crashed := r["started_at"], r["crashed_at"]; started != nil && crashed != nil {
			if got, want := num(crashed)-num(started), round.TimeToReach(num(r["crash_point"])).Milliseconds(); got != want {
				t.Errorf("%s: flew %d ms, a crash at %d takes %d ms", where, got, num(r["crash_point"]), want)
			}
		}
		return h
	}
	detail := exampleValue(t, "/api/v1/rounds/{round_id}", "200", "finished")
	if detail["salt"] != salt || num(detail["rtp_bp"]) != rtp || num(detail["max_multiplier"]) != maxM {
		t.Errorf("the round's settings %v differ from the published ones", detail)
	}
	check("GET /api/v1/rounds/{round_id}", detail)
	check("GET /api/v1/round (crashed)", exampleValue(t, "/api/v1/round", "200", "crashed"))

	list := exampleValue(t, "/api/v1/rounds", "200", "rounds")["items"].([]any)
	var prev [32]byte
	for i, it := range list {
		h := check(fmt.Sprintf("GET /api/v1/rounds item %d", i), it.(map[string]any))
		// Newest first: the next item is the previous round.
		if i > 0 && !fairness.Verify(prev, h) {
			t.Errorf("GET /api/v1/rounds: item %d does not link to item %d", i-1, i)
		}
		prev = h
	}
	// The stream's crash, in both documents.
	msgs := apitest.StreamMessages(t, "send")
	for _, ex := range msgs["round.crashed"].Examples {
		check("stream round.crashed", ex.(map[string]any))
	}
	ev := gwLoadDocument(t, "table.v1.yaml").Components.Schemas["RoundCrashedEvent"].Value.Example.(map[string]any)
	check("RoundCrashedEvent", ev)
}
