package fairness

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

// naiveChain is every hash h(0)..h(length), kept in full.
func naiveChain(seed [32]byte, length int) [][32]byte {
	hs := [][32]byte{sha256.Sum256(seed[:])}
	for range length {
		hs = append(hs, sha256.Sum256(hs[len(hs)-1][:]))
	}
	return hs
}

// TestChain: at lengths around the checkpoint interval, the checkpointed chain
// is the naive one used backwards, each round's hash hashes to the previous
// round's, round 1's to the terminal, and the chain holds N/K+1 checkpoints.
func TestChain(t *testing.T) {
	t.Parallel()
	const k = CheckpointInterval
	for _, n := range []int{1, 2, k - 1, k, k + 1, 2 * k, 3*k + 7} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			t.Parallel()
			seed := [32]byte{byte(n), byte(n >> 8), 0xc5}
			c, want := NewChain(seed, n), naiveChain(seed, n)
			if c.Len() != n {
				t.Errorf("Len() = %d, want %d", c.Len(), n)
			}
			if c.Terminal() != want[n] {
				t.Errorf("Terminal() is not h(N)")
			}
			if got := len(c.checkpoints); got != n/k+1 {
				t.Errorf("%d checkpoints, want %d", got, n/k+1)
			}
			prev := c.Terminal()
			for round := 1; round <= n; round++ {
				h, err := c.Hash(round)
				if err != nil {
					t.Fatalf("Hash(%d): %v", round, err)
				}
				if h != want[n-round] {
					t.Fatalf("Hash(%d) is not h(N-%d)", round, round)
				}
				if !Verify(h, prev) {
					t.Fatalf("SHA-256 of round %d's hash is not round %d's", round, round-1)
				}
				if Verify(prev, h) {
					t.Fatalf("Verify accepts rounds %d and %d the wrong way round", round-1, round)
				}
				prev = h
			}
			for _, round := range []int{-1, 0, n + 1, n + 1000} {
				if _, err := c.Hash(round); !errors.Is(err, ErrNoSuchRound) {
					t.Errorf("Hash(%d) error = %v, want ErrNoSuchRound", round, err)
				}
			}
		})
	}
}

func TestNewChainPanicsOnEmpty(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, -1} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("NewChain(seed, %d) did not panic", n)
				}
			}()
			NewChain([32]byte{}, n)
		}()
	}
}

func TestChainPosition(t *testing.T) {
	t.Parallel()
	const n = 50
	c := NewChain([32]byte{1, 2, 3}, n)
	other := NewChain([32]byte{4, 5, 6}, n)
	hash := func(c *Chain, round int) [32]byte {
		h, err := c.Hash(round)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	tests := []struct {
		name  string
		hash  [32]byte
		limit int
		want  int // 0: ErrNotInChain
	}{
		{"round 1", hash(c, 1), n, 1},
		{"round 17", hash(c, 17), n, 17},
		{"last round", hash(c, n), n, n},
		{"round 17, limit exactly 17", hash(c, 17), 17, 17},
		{"round 17, limit 16", hash(c, 17), 16, 0},
		{"the terminal itself", c.Terminal(), n, 0},
		{"another chain's round", hash(other, 3), 10 * n, 0},
		{"limit 0", hash(c, 1), 0, 0},
		{"negative limit", hash(c, 1), -5, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := ChainPosition(tt.hash, c.Terminal(), tt.limit)
			if tt.want == 0 {
				if !errors.Is(err, ErrNotInChain) {
					t.Errorf("ChainPosition = %d, %v; want ErrNotInChain", got, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("ChainPosition = %d, %v; want %d", got, err, tt.want)
			}
		})
	}
}

// TestChainHidesSecrets: printing or logging a Chain shows its terminal hash
// and never a round's hash (nor h(0), the last round's).
func TestChainHidesSecrets(t *testing.T) {
	t.Parallel()
	const n = 3 * CheckpointInterval
	seed := [32]byte{9, 9, 9}
	c := NewChain(seed, n)
	var logged bytes.Buffer
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("chain", "chain", c)
	shown := fmt.Sprintf("%v %+v %#v %s", c, c, c, c) + logged.String()
	if !strings.Contains(shown, FormatHash(c.Terminal())) {
		t.Errorf("the terminal hash is not shown: %s", shown)
	}
	all := naiveChain(seed, n)
	for i, h := range all[:n] {
		for _, form := range []string{FormatHash(h), fmt.Sprintf("%v", h[:8]), fmt.Sprintf("%x", h[:8])} {
			if strings.Contains(shown, form) {
				t.Fatalf("h(%d) shows in %s", i, shown)
			}
		}
	}
	if strings.Contains(shown, FormatHash(seed)) {
		t.Errorf("the seed shows in %s", shown)
	}
}

func TestNewSeed(t *testing.T) {
	t.Parallel()
	a, err := NewSeed()
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewSeed()
	if err != nil {
		t.Fatal(err)
	}
	if a == b || a == [32]byte{} {
		t.Errorf("NewSeed returned %x and %x", a, b)
	}
}

// BenchmarkChainHash: the worst and average cost of a round's hash, K-1 and
// about K/2 SHA-256 from the checkpoint below it.
func BenchmarkChainHash(b *testing.B) {
	const n = 1 << 20
	c := NewChain([32]byte{42}, n)
	b.Run("worst", func(b *testing.B) {
		round := n - (CheckpointInterval - 1) // h(K-1): K-1 steps from h(0)
		for b.Loop() {
			if _, err := c.Hash(round); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("sequential", func(b *testing.B) {
		round := 0
		for b.Loop() {
			round = round%n + 1
			if _, err := c.Hash(round); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkNewChain1e6(b *testing.B) {
	for b.Loop() {
		NewChain([32]byte{42}, 1_000_000)
	}
}
