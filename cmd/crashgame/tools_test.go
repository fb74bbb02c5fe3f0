package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The chain of api/table.v1.yaml's examples (GET /fairness/chains/{chain_id}),
// a real one: its round at position 8 has the hash below and crashes at 1.34x.
const (
	exampleTerminal = "260f1ea4b53d8ee1cf9d176ef5de6f46a57b77c32571290ff541d068193c5f85"
	exampleSalt     = "770e53c9761b9672d3bab05c9fc85fea1a62a690e95d4527272313007ff02489"
	exampleValue    = "7c7bf6ec70c9882985fa0f28ea4ff7decf10db6e4b115933628e2b7c4067bdb2"
	exampleHash     = "8c83fcc1a8955dee821c6c60b88f3943bd37f1d83cae562e7ff5ba6d5adc49aa"
	exampleHash6    = "454cd71b8c4d8fc4b552f663579fa4e9fe548ff1db13fd4c0fdfae2a2bb4980a"
)

// exampleChain is the example chain's document with what change does to it.
func exampleChain(change func(doc map[string]any)) []byte {
	doc := map[string]any{"chain_id": "crash-classic-c3", "game_id": "crash-classic", "number": 3, "status": "active",
		"terminal_hash": exampleTerminal, "length": 8, "first_seq": 184226, "rtp_bp": 9700, "max_multiplier": 1000000,
		"formula_version": 1, "formula": "-", "created_at": 1, "seeding_ends_at": 2, "salt": exampleSalt, "salt_fixed_at": 3,
		"salt_source": "contributions", "checkpoints": []any{},
		"contributions": []any{map[string]any{"source": "operator", "operator": "acme-bet", "value": exampleValue, "received_at": 1}}}
	if change != nil {
		change(doc)
	}
	b, _ := json.Marshal(doc)
	return b
}

// crashgame verify recomputes a round with its chain's published settings
// and salt, checks the salt against the contributions and walks the hash to
// the terminal or a checkpoint; it assumes nothing, and any change to a
// setting, the salt, a contribution or the hash changes its answer.
func TestVerifyCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name string, body []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, body, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	doc := write("chain.json", exampleChain(nil))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/fairness/chains/crash-classic-c3" || r.Header.Get("Accept") != "application/json" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(exampleChain(nil))
	}))
	t.Cleanup(srv.Close)
	tests := []struct {
		name    string
		args    []string
		want    []string // in the output
		wantErr string
	}{
		{"the chain's document", []string{"--hash", exampleHash, "--chain", doc},
			[]string{"crash point: 1.34x (134 hundredths), with chain crash-classic-c3's rtp_bp 9700 and max_multiplier 1000000",
				"chain: position 8 of chain crash-classic-c3 (round 184233), reached the published terminal hash after 8 steps",
				"salt: the salt rule applied to the terminal hash and the 1 published contributions gives it"}, ""},
		{"fetched from the game", []string{"--hash", exampleHash, "--server", srv.URL, "--chain-id", "crash-classic-c3"},
			[]string{"crash point: 1.34x", "position 8"}, ""},
		{"a checkpoint shortens the walk", []string{"--hash", exampleHash, "--chain", write("cp.json", exampleChain(func(d map[string]any) {
			d["checkpoints"] = []any{map[string]any{"position": 6, "seq": 184231, "hash": exampleHash6}}
		}))}, []string{"position 8", "reached the published checkpoint at position 6 after 2 steps"}, ""},
		{"another rtp_bp gives another crash point", []string{"--hash", exampleHash, "--chain", write("rtp.json", exampleChain(func(d map[string]any) { d["rtp_bp"] = 9000 }))},
			[]string{"crash point: 1.24x"}, ""},
		{"a changed salt", []string{"--hash", exampleHash, "--chain", write("salt.json", exampleChain(func(d map[string]any) { d["salt"] = strings.Repeat("77", 32) }))},
			nil, "the salt is not made of the published contributions"},
		{"a changed contribution", []string{"--hash", exampleHash, "--chain", write("contrib.json", exampleChain(func(d map[string]any) {
			d["contributions"] = []any{map[string]any{"source": "operator", "operator": "acme-bet", "value": strings.Repeat("7c", 32), "received_at": 1}}
		}))}, nil, "the salt is not made of the published contributions"},
		{"a hash outside the chain", []string{"--hash", strings.Repeat("ab", 32), "--chain", doc}, nil, "does not lead to the terminal"},
		{"a seeding chain", []string{"--hash", exampleHash, "--chain", write("seeding.json", exampleChain(func(d map[string]any) { delete(d, "salt"); d["status"] = "seeding" }))},
			nil, "has no salt yet"},
		{"no chain assumed", []string{"--hash", exampleHash}, nil, "none is assumed"},
		{"the document or where to fetch it, not both", []string{"--hash", exampleHash, "--chain", doc, "--server", srv.URL}, nil, "not both"},
		{"an unknown chain", []string{"--hash", exampleHash, "--server", srv.URL, "--chain-id", "nope"}, nil, "404"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var out, errOut bytes.Buffer
			err := verifyCmd(t.Context(), tc.args, &out, &errOut)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
				}
			}
		})
	}
}
