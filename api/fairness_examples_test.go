package api_test

import (
	"fmt"
	"reflect"
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

// Every fairness example of the table's documents verifies: the published
// chain's salt is the salt rule applied to its terminal and contributions;
// each revealed hash gives its crash point under the chain's salt and
// settings, reaches the chain's terminal hash in exactly its position's
// number of steps, and links to the previous round's; and a round flew
// exactly as long as its crash point takes. A reader who checks the
// documents' own examples with the documented rules finds them true.
func TestFairnessExamplesVerify(t *testing.T) {
	t.Parallel()
	chain := exampleValue(t, "/api/v1/fairness", "200", "chain")
	salt, rtp, maxM := chain["salt"].(string), num(chain["rtp_bp"]), num(chain["max_multiplier"])
	terminal, err := fairness.ParseHash(chain["terminal_hash"].(string))
	if err != nil {
		t.Fatal(err)
	}
	var values [][32]byte
	for _, c := range chain["contributions"].([]any) {
		v, err := fairness.ParseHash(c.(map[string]any)["value"].(string))
		if err != nil {
			t.Fatal(err)
		}
		values = append(values, v)
	}
	if got := fairness.Salt(terminal, values); got != salt {
		t.Errorf("the chain's salt %s is not the rule's %s", salt, got)
	}
	if got := exampleValue(t, "/fairness/chains/{chain_id}", "200", "chain"); !reflect.DeepEqual(got, chain) {
		t.Errorf("GET /fairness/chains/{chain_id} shows another chain than GET /api/v1/fairness")
	}
	if items := exampleValue(t, "/fairness/chains", "200", "chains")["items"].([]any); len(items) != 1 || !reflect.DeepEqual(items[0], chain) {
		t.Errorf("GET /fairness/chains lists another chain than GET /api/v1/fairness")
	}
	firstSeq, length := num(chain["first_seq"]), num(chain["length"])
	check := func(where string, r map[string]any) [32]byte {
		t.Helper()
		h, err := fairness.ParseHash(fmt.Sprint(r["hash"]))
		if err != nil {
			t.Fatalf("%s: %v", where, err)
		}
		if got, want := fairness.CrashPoint(h, salt, rtp, maxM), num(r["crash_point"]); got != want {
			t.Errorf("%s: the hash gives %d under the chain's salt, the example shows %d", where, got, want)
		}
		pos, err := fairness.ChainPosition(h, terminal, int(length))
		if err != nil {
			t.Errorf("%s: the hash does not reach the chain's terminal: %v", where, err)
		}
		if p, ok := r["position"]; ok && num(p) != int64(pos) {
			t.Errorf("%s: position %d, the hash is at %d", where, num(p), pos)
		}
		if id, ok := r["chain_id"]; ok && id != chain["chain_id"] {
			t.Errorf("%s: chain %v, want %v", where, id, chain["chain_id"])
		}
		if seq, ok := r["seq"]; ok && num(seq)-firstSeq+1 != int64(pos) {
			t.Errorf("%s: seq %d is not at position %d of a chain from %d", where, num(seq), pos, firstSeq)
		}
		if started, crashed := r["started_at"], r["crashed_at"]; started != nil && crashed != nil {
			if got, want := num(crashed)-num(started), round.TimeToReach(num(r["crash_point"])).Milliseconds(); got != want {
				t.Errorf("%s: flew %d ms, a crash at %d takes %d ms", where, got, num(r["crash_point"]), want)
			}
		}
		return h
	}
	check("GET /api/v1/rounds/{round_id}", exampleValue(t, "/api/v1/rounds/{round_id}", "200", "finished"))
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
	rounds := exampleValue(t, "/fairness/chains/{chain_id}/rounds", "200", "rounds")["items"].([]any)
	for i, it := range rounds {
		h := check(fmt.Sprintf("GET /fairness/chains/{chain_id}/rounds item %d", i), it.(map[string]any))
		// By position: the previous item is the previous round.
		if i > 0 && !fairness.Verify(h, prev) {
			t.Errorf("GET /fairness/chains/{chain_id}/rounds: item %d does not link to item %d", i, i-1)
		}
		prev = h
	}
	// The chain's void rounds verify, each is the void round listed at its
	// position, and the void test's figures are the rule's (fairness.VoidTests).
	voids := chain["voids"].(map[string]any)
	listed := map[int64]map[string]any{}
	for _, it := range rounds {
		r := it.(map[string]any)
		listed[num(r["position"])] = r
	}
	var tested []int64
	var flying []fairness.InFlightVoid
	for i, it := range voids["rounds"].([]any) {
		v := it.(map[string]any)
		check(fmt.Sprintf("the chain's voids item %d", i), v)
		if r := listed[num(v["position"])]; r == nil || r["status"] != "void" || r["hash"] != v["hash"] {
			t.Errorf("the chain's void %v is not a void round of GET /fairness/chains/{chain_id}/rounds", v["round_id"])
		}
		switch {
		case v["started_at"] == nil:
			tested = append(tested, num(v["crash_point"]))
		case v["voided_at"] != nil:
			flying = append(flying, fairness.InFlightVoid{Multiplier: num(v["multiplier_at_void"]), CrashPoint: num(v["crash_point"])})
		}
	}
	f, inFlight := fairness.InFlightTests(flying), voids["in_flight"].(map[string]any)
	if num(inFlight["tested"]) != f.Tested || inFlight["p_value"] != f.PValueText() || inFlight["flagged"] != f.Flagged() || inFlight["flag_rule"] != fairness.InFlightFlagRule {
		t.Errorf("the chain's in-flight void test: %v; want tested %d, p_value %s, flagged %t and fairness.InFlightFlagRule", inFlight, f.Tested, f.PValueText(), f.Flagged())
	}
	want := fairness.VoidTests(rtp, maxM, tested)
	if num(voids["tested"]) != int64(len(tested)) || voids["flagged"] != fairness.VoidsFlagged(want) || voids["flag_rule"] != fairness.VoidFlagRule {
		t.Errorf("the chain's voids: tested %v, flagged %v, flag_rule %v; want %d, %t and fairness.VoidFlagRule",
			voids["tested"], voids["flagged"], voids["flag_rule"], len(tested), fairness.VoidsFlagged(want))
	}
	for i, it := range voids["tests"].([]any) {
		v, w := it.(map[string]any), want[i]
		if num(v["at_least"]) != w.AtLeast || num(v["observed"]) != w.Observed || v["share"] != w.ShareText() || v["p_value"] != w.PValueText() {
			t.Errorf("the chain's void test %d: %v; want at_least %d, observed %d, share %s, p_value %s",
				i, v, w.AtLeast, w.Observed, w.ShareText(), w.PValueText())
		}
	}
	// The stream's crash, in both documents.
	msgs := apitest.StreamMessages(t, "send")
	for _, ex := range msgs["round.crashed"].Examples {
		check("stream round.crashed", ex.(map[string]any))
	}
	ev := gwLoadDocument(t, "table.v1.yaml").Components.Schemas["RoundCrashedEvent"].Value.Example.(map[string]any)
	check("RoundCrashedEvent", ev)
}
