package fairness

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"slices"
)

// CheckpointInterval is K, the spacing of the hashes a Chain keeps: it holds
// h(0), h(K), h(2K), ... and recomputes any other hash from the checkpoint
// below it, so Hash costs at most K-1 SHA-256 of 32 bytes (70 µs on the
// reference machine, 35 µs on average) and a chain of N rounds holds
// 32*(N/K+1) bytes of checkpoints: 306 KiB for N = 10^7.
const CheckpointInterval = 1024

// Chain is a hash chain of Len rounds, generated from a secret seed and used
// backwards: h(0) = SHA-256(seed), h(i+1) = SHA-256(h(i)) up to h(N), N = Len.
// Round k (1 <= k <= N) uses h(N-k), so SHA-256 of round k's hash is round
// k-1's hash, SHA-256 of round 1's hash is the terminal h(N), which is
// published before round 1, and the last round, N, uses h(0).
//
// A Chain does not keep the seed, but its checkpoints are as secret as the
// seed: they give away every round's hash. It is immutable and safe for
// concurrent use.
type Chain struct {
	length      int
	terminal    [32]byte
	checkpoints [][32]byte // checkpoints[j] = h(j*CheckpointInterval)
}

// NewSeed returns a new secret seed: 32 bytes from crypto/rand.
func NewSeed() ([32]byte, error) {
	var seed [32]byte
	if _, err := rand.Read(seed[:]); err != nil {
		return seed, fmt.Errorf("fairness: new seed: %w", err)
	}
	return seed, nil
}

// NewChain computes the chain of length rounds from seed: length+1 SHA-256
// (0.07 s per 10^6 rounds on the reference machine, so 0.7 s for 10^7). It
// panics when length < 1.
func NewChain(seed [32]byte, length int) *Chain {
	if length < 1 {
		panic(fmt.Sprintf("fairness: chain length %d is below 1", length))
	}
	c := &Chain{
		length:      length,
		checkpoints: make([][32]byte, 0, length/CheckpointInterval+1),
	}
	h := sha256.Sum256(seed[:])
	for i := 0; ; i++ {
		if i%CheckpointInterval == 0 {
			c.checkpoints = append(c.checkpoints, h)
		}
		if i == length {
			break
		}
		h = sha256.Sum256(h[:])
	}
	c.terminal = h
	return c
}

// Len returns the number of rounds the chain serves.
func (c *Chain) Len() int { return c.length }

// Terminal returns h(N), the hash to publish before the chain's first round.
func (c *Chain) Terminal() [32]byte { return c.terminal }

// Hash returns round's hash, h(Len-round), for 1 <= round <= Len. It is secret
// until that round has crashed. Past Len the chain is exhausted: a new seed,
// a new chain and a newly published terminal hash are needed. The error wraps
// ErrNoSuchRound.
func (c *Chain) Hash(round int) ([32]byte, error) {
	if round < 1 || round > c.length {
		return [32]byte{}, fmt.Errorf("%w: round %d is outside 1..%d", ErrNoSuchRound, round, c.length)
	}
	i := c.length - round
	h := c.checkpoints[i/CheckpointInterval]
	for range i % CheckpointInterval {
		h = sha256.Sum256(h[:])
	}
	return h, nil
}

// String shows the chain's length and terminal hash, never a secret hash.
func (c *Chain) String() string {
	return fmt.Sprintf("fairness.Chain{Len: %d, Terminal: %s}", c.length, FormatHash(c.terminal))
}

// GoString is String, so that %#v shows no secret either.
func (c *Chain) GoString() string { return c.String() }

// LogValue logs the chain as its length and terminal hash only.
func (c *Chain) LogValue() slog.Value {
	return slog.GroupValue(slog.Int("len", c.length), slog.String("terminal", FormatHash(c.terminal)))
}

// Verify reports whether SHA-256(hash) == next: whether hash can be the round
// that follows the round whose hash is next (or, for round 1, whether next is
// the published terminal hash).
func Verify(hash, next [32]byte) bool {
	return sha256.Sum256(hash[:]) == next
}

// ChainPosition checks that hash belongs to the chain that ends at terminal:
// it hashes forward from hash until it reaches terminal, at most limit times.
// The number of steps it took is the round's number in that chain (round k's
// hash reaches the terminal after exactly k hashes). The terminal itself is not
// a round. The error wraps ErrNotInChain when terminal is not reached within
// limit steps; limit bounds the work (one SHA-256 per step), so pass the
// chain's length, or the number of rounds played so far.
func ChainPosition(hash, terminal [32]byte, limit int) (round int, err error) {
	h := hash
	for k := 1; k <= limit; k++ {
		h = sha256.Sum256(h[:])
		if h == terminal {
			return k, nil
		}
	}
	if hash == terminal {
		return 0, fmt.Errorf("%w: it is the terminal hash itself, not a round's", ErrNotInChain)
	}
	return 0, fmt.Errorf("%w within %d steps", ErrNotInChain, limit)
}

// FormulaVersion numbers the rules of Formula and the salt rule (Salt); a
// chain publishes the version it is played with, and any change to the rules
// is a new version, played only on a new chain.
const FormulaVersion = 1

// Salt is the salt rule: the lowercase hex of SHA-256 over the terminal
// hash's 32 bytes followed by the 32 bytes of every contribution, sorted
// ascending bytewise (duplicates kept). A chain's salt is fixed after its
// terminal is published, from values the game did not choose alone, and the
// contributions are published with it, so anyone can recompute it.
func Salt(terminal [32]byte, contributions [][32]byte) string {
	sorted := slices.Clone(contributions)
	slices.SortFunc(sorted, func(a, b [32]byte) int { return bytes.Compare(a[:], b[:]) })
	h := sha256.New()
	h.Write(terminal[:])
	for _, c := range sorted {
		h.Write(c[:])
	}
	return hex.EncodeToString(h.Sum(nil))
}
