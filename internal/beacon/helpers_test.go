package beacon_test

import (
	"encoding/hex"
	"testing"

	bls12381 "github.com/cloudflare/circl/ecc/bls12381"
)

// uncompressedG1 returns the uncompressed encoding of a compressed G1 point.
func uncompressedG1(t *testing.T, compressed []byte) []byte {
	t.Helper()
	var p bls12381.G1
	if err := p.SetBytes(compressed); err != nil {
		t.Fatal(err)
	}
	b := p.Bytes()
	if len(b) != 96 {
		t.Fatalf("uncompressed G1 is %d bytes", len(b))
	}
	return b
}

func hexDecode(s string) ([]byte, error) { return hex.DecodeString(s) }
