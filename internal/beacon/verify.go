package beacon

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/cloudflare/circl/sign/bls"
)

// ErrInvalid: a round's value does not verify. The beacon, or whoever
// answered in its name, gave a value that must not be used.
var ErrInvalid = errors.New("beacon: the value does not verify")

// Value is a verified round of a beacon.
type Value struct {
	// Round is the round's number.
	Round uint64
	// Signature is the network's BLS signature of the round (compressed G1,
	// 48 bytes).
	Signature []byte
	// Randomness is the round's output: SHA-256 of Signature.
	Randomness [32]byte
}

// SignatureHex returns the signature as lowercase hex, as drand publishes it.
func (v Value) SignatureHex() string { return hex.EncodeToString(v.Signature) }

// RandomnessHex returns the randomness as 64 lowercase hex digits, as drand
// publishes it.
func (v Value) RandomnessHex() string { return hex.EncodeToString(v.Randomness[:]) }

// Message returns what the network signs for round in an unchained scheme:
// SHA-256 of the round number as 8 bytes, big-endian.
func Message(round uint64) [32]byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], round)
	return sha256.Sum256(b[:])
}

// Randomness returns a round's output for its signature: SHA-256 of the
// signature's bytes.
func Randomness(signature []byte) [32]byte { return sha256.Sum256(signature) }

// Verify checks that signature is the network's signature of round and
// returns the round's value. The check is BLS on BLS12-381 with the
// signature on G1 and the key on G2: e(signature, g2) = e(H(m), key), where
// m is Message(round) and H hashes to G1 per RFC 9380 with the domain
// separation tag BLS_SIG_BLS12381G1_XMD:SHA-256_SSWU_RO_NUL_. The signature
// must be 48 bytes, a compressed point of G1's prime-order subgroup other
// than the identity. Every failure wraps ErrInvalid, except a network that
// does not validate (see Validate), which verifies nothing.
func (n Network) Verify(round uint64, signature []byte) (Value, error) {
	pk, err := n.check()
	if err != nil {
		return Value{}, err
	}
	if round == 0 {
		return Value{}, fmt.Errorf("%w: round 0 is not a round", ErrInvalid)
	}
	if len(signature) != SignatureSize {
		return Value{}, fmt.Errorf("%w: round %d: a signature is %d bytes (compressed G1), got %d",
			ErrInvalid, round, SignatureSize, len(signature))
	}
	msg := Message(round)
	// circl's KeyG2SigG1 puts keys on G2 and signatures on G1 and hashes
	// messages to G1 with BLS_SIG_BLS12381G1_XMD:SHA-256_SSWU_RO_NUL_,
	// quicknet's tag; a test against real quicknet rounds holds it to that.
	if !bls.Verify(pk, msg[:], signature) {
		return Value{}, fmt.Errorf("%w: round %d: the signature is not the network %q's signature of this round",
			ErrInvalid, round, n.Name)
	}
	return Value{
		Round:      round,
		Signature:  append([]byte(nil), signature...),
		Randomness: Randomness(signature),
	}, nil
}
