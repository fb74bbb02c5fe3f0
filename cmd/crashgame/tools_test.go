package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The published fairness document of api/table.v1.yaml's examples: a real
// chain whose round 8 has the hash below and crashes at 1.17x.
const (
	exampleFairness = `{"terminal_hash":"260f1ea4b53d8ee1cf9d176ef5de6f46a57b77c32571290ff541d068193c5f85",` +
		`"salt":"0000000000000000000301e2801a9a9598bfb114e574a91a887f2132f33047e6","rtp_bp":9700,"max_multiplier":1000000}`
	exampleHash = "8c83fcc1a8955dee821c6c60b88f3943bd37f1d83cae562e7ff5ba6d5adc49aa"
	exampleSalt = "0000000000000000000301e2801a9a9598bfb114e574a91a887f2132f33047e6"
)

// crashgame verify recomputes a round with the settings the game published,
// from its fairness document or given by hand, and assumes none: a missing
// setting is an error, and other settings give another crash point.
func TestVerifyCommand(t *testing.T) {
	t.Parallel()
	doc := filepath.Join(t.TempDir(), "fairness.json")
	if err := os.WriteFile(doc, []byte(exampleFairness), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		args    []string
		want    []string // in the output
		wantErr string
	}{
		{"the published document", []string{"--hash", exampleHash, "--fairness", doc},
			[]string{"crash point: 1.17x (117 hundredths), with rtp_bp 9700 and max_multiplier 1000000", "chain: round 8 of the chain"}, ""},
		{"by hand", []string{"--hash", exampleHash, "--salt", exampleSalt, "--rtp-bp", "9700", "--max-multiplier", "1000000"},
			[]string{"crash point: 1.17x"}, ""},
		{"another RTP gives another crash point", []string{"--hash", exampleHash, "--salt", exampleSalt, "--rtp-bp", "9000", "--max-multiplier", "1000000"},
			[]string{"crash point: 1.08x"}, ""},
		{"no settings assumed", []string{"--hash", exampleHash, "--salt", exampleSalt}, nil, "--rtp-bp, --max-multiplier required"},
		{"the document or the flags, not both", []string{"--hash", exampleHash, "--fairness", doc, "--rtp-bp", "9000"}, nil, "leave out"},
		{"a hash outside the chain", []string{"--hash", strings.Repeat("ab", 32), "--fairness", doc, "--limit", "100"}, nil, "not in the chain"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var out, errOut bytes.Buffer
			err := verifyCmd(tc.args, &out, &errOut)
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
