package beacon

import (
	"encoding/hex"
	"fmt"
	"math"
	"time"

	"github.com/cloudflare/circl/sign/bls"
)

// Scheme is the only signature scheme this package verifies, named as drand
// names it: unchained rounds (a round's message depends on its number only),
// signatures on G1, hash-to-curve per RFC 9380.
const Scheme = "bls-unchained-g1-rfc9380"

// Sizes of the scheme's encodings, compressed as drand publishes them.
const (
	PublicKeySize = 96 // a point on G2
	SignatureSize = 48 // a point on G1
)

// Network is a drand network's published facts: what a caller needs to name
// a future round and to check its value. Quicknet returns drand's; package
// beacontest builds one around a key of its own.
type Network struct {
	// Name is a short name for people, e.g. "quicknet".
	Name string
	// ChainHash identifies the network at its HTTP relays, 64 hex digits.
	ChainHash string
	// PublicKey is the network's public key, a compressed point on G2
	// (96 bytes).
	PublicKey []byte
	// Genesis is the time of round 1.
	Genesis time.Time
	// Period is the time between two rounds.
	Period time.Duration
	// Scheme must be the package's Scheme.
	Scheme string
}

// Quicknet facts, as drand publishes them at
// https://api.drand.sh/52db9ba70e0cc0f6eaf7803dd07447a1f5477735fd3f661792ba94600c84e971/info
// (also in drand's documentation, https://docs.drand.love/developer/http-api,
// and in drand/tlock-js, src/drand/defaults.ts).
const (
	quicknetChainHash = "52db9ba70e0cc0f6eaf7803dd07447a1f5477735fd3f661792ba94600c84e971"
	quicknetPublicKey = "83cf0f2896adee7eb8b5f01fcad3912212c437e0073e911fb90022d3e760183c" +
		"8c4b450b6a0a6c3ac6a5776a2d1064510d1fec758c921cc22b0e17e63aaf4bcb" +
		"5ed66304de9cf809bd274ca73bab4af5a6e9c76a4bc09e76eae8991ef5ece45a"
	quicknetGenesis = 1692803367 // Unix seconds: 2023-08-23 15:09:27 UTC
	quicknetPeriod  = 3 * time.Second
)

// Quicknet returns drand's quicknet network on the League of Entropy's
// mainnet: a round every 3 seconds since 2023-08-23 15:09:27 UTC.
func Quicknet() Network {
	key, err := hex.DecodeString(quicknetPublicKey)
	if err != nil {
		panic("beacon: quicknet's public key is not hex: " + err.Error())
	}
	return Network{
		Name:      "quicknet",
		ChainHash: quicknetChainHash,
		PublicKey: key,
		Genesis:   time.Unix(quicknetGenesis, 0).UTC(),
		Period:    quicknetPeriod,
		Scheme:    Scheme,
	}
}

// Lookup returns the network a configuration names. Only "quicknet" is known.
func Lookup(name string) (Network, error) {
	switch name {
	case "quicknet":
		return Quicknet(), nil
	default:
		return Network{}, fmt.Errorf("beacon: unknown network %q, the known one is quicknet", name)
	}
}

// Validate reports whether n can be used: a chain hash of 64 hex digits, a
// public key that is a point of G2's prime-order subgroup other than the
// identity, a genesis, a period of at least a millisecond, and the scheme
// this package verifies.
func (n Network) Validate() error {
	_, err := n.check()
	return err
}

// check validates n and returns its parsed public key.
func (n Network) check() (*bls.PublicKey[bls.KeyG2SigG1], error) {
	if h, err := hex.DecodeString(n.ChainHash); err != nil || len(h) != 32 {
		return nil, fmt.Errorf("beacon: network %q: the chain hash must be 64 hex digits", n.Name)
	}
	if n.Genesis.IsZero() {
		return nil, fmt.Errorf("beacon: network %q has no genesis time", n.Name)
	}
	if n.Period < time.Millisecond {
		return nil, fmt.Errorf("beacon: network %q: the period must be at least 1ms, got %s", n.Name, n.Period)
	}
	if n.Scheme != Scheme {
		return nil, fmt.Errorf("beacon: network %q: scheme %q is not supported, only %s", n.Name, n.Scheme, Scheme)
	}
	return n.publicKey()
}

func (n Network) publicKey() (*bls.PublicKey[bls.KeyG2SigG1], error) {
	if len(n.PublicKey) != PublicKeySize {
		return nil, fmt.Errorf("beacon: network %q: the public key must be %d bytes (compressed G2), got %d",
			n.Name, PublicKeySize, len(n.PublicKey))
	}
	var pk bls.PublicKey[bls.KeyG2SigG1]
	if err := pk.UnmarshalBinary(n.PublicKey); err != nil || !pk.Validate() {
		return nil, fmt.Errorf("beacon: network %q: the public key is not a valid point of G2", n.Name)
	}
	return &pk, nil
}

// RoundAt returns the round current at t: floor((t - genesis) / period) + 1,
// or 0 when t is before genesis (no round yet).
func (n Network) RoundAt(t time.Time) uint64 {
	since := t.Sub(n.Genesis)
	if since < 0 || n.Period <= 0 {
		return 0
	}
	// since is not negative and the period is positive: the unsigned
	// quotient is the signed one.
	return uint64(since)/uint64(n.Period) + 1
}

// TimeOf returns the time at which the network emits round: genesis +
// (round - 1) × period. Round 0 is not a round; its time is genesis. A round
// too far to count in nanoseconds (about 292 years after genesis) gets
// genesis + 292 years, so it is never due.
func (n Network) TimeOf(round uint64) time.Time {
	if round == 0 || n.Period <= 0 {
		return n.Genesis
	}
	periods := round - 1
	if periods > math.MaxInt64 || int64(periods) > math.MaxInt64/int64(n.Period) {
		return n.Genesis.Add(math.MaxInt64)
	}
	return n.Genesis.Add(time.Duration(periods) * n.Period)
}

// FirstRoundAfter returns the first round emitted strictly after t: the
// round whose value cannot exist at t, by the network's schedule. It is
// RoundAt(t) + 1 (round 1 when t is before genesis). The schedule is kept by
// the network's nodes' clocks: a caller that must allow for their skew names
// FirstRoundAfter(t.Add(margin)).
func (n Network) FirstRoundAfter(t time.Time) uint64 {
	return n.RoundAt(t) + 1
}
