package api_test

import (
	"os"
	"regexp"
	"strconv"
	"testing"

	"github.com/crashstudio/crashgame/internal/signature"
)

var (
	vectorInDocument = regexp.MustCompile("Test vector: the (\\d+) bytes `([^`]+)`\\s+\\(no trailing newline\\) signed with the secret `([^`]+)`\\s+give `X-Signature: ([0-9a-f]{64})`")
	vectorInGuide    = regexp.MustCompile("\\| body \\((\\d+) bytes, no trailing newline\\) \\| `([^`]+)` \\|\\n\\| secret \\| `([^`]+)` \\|\\n\\| `X-Signature` \\| `([0-9a-f]{64})` \\|")
)

// Rule AUTH-1: the signature test vector published in both documents'
// X-Signature scheme and in docs/operators.md is what the game's own signer
// computes and accepts, and the three places give the same vector.
func TestSignatureVector(t *testing.T) {
	t.Parallel()
	type vector struct{ size, body, secret, hex string }
	check := func(where string, m []string) vector {
		t.Helper()
		if m == nil {
			t.Fatalf("%s: no signature test vector found", where)
		}
		v := vector{m[1], m[2], m[3], m[4]}
		if n, _ := strconv.Atoi(v.size); n != len(v.body) {
			t.Errorf("%s: the vector's body is %d bytes, the text says %s", where, len(v.body), v.size)
		}
		if got := signature.Sign([]byte(v.secret), []byte(v.body)); got != v.hex {
			t.Errorf("%s: the vector says %s, the signer computes %s", where, v.hex, got)
		}
		if err := signature.Verify([]byte(v.secret), []byte(v.body), v.hex); err != nil {
			t.Errorf("%s: the vector's signature is refused: %v", where, err)
		}
		return v
	}
	var all []vector
	for _, name := range []string{"game.v1.yaml", "wallet.v1.yaml"} {
		scheme := gwLoadDocument(t, name).Components.SecuritySchemes["XSignature"]
		if scheme == nil || scheme.Value == nil {
			t.Fatalf("%s: no XSignature security scheme", name)
		}
		all = append(all, check(name, vectorInDocument.FindStringSubmatch(scheme.Value.Description)))
	}
	guide, err := os.ReadFile("../docs/operators.md")
	if err != nil {
		t.Fatal(err)
	}
	all = append(all, check("docs/operators.md", vectorInGuide.FindStringSubmatch(string(guide))))
	for _, v := range all[1:] {
		if v != all[0] {
			t.Errorf("the vectors differ: %+v and %+v", all[0], v)
		}
	}
}
