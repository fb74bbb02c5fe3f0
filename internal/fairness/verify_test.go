package fairness_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/crashstudio/crashgame/internal/fairness"
)

// published is a chain as its public document and round list show it.
type published struct {
	doc    fairness.ChainDocument
	hashes []string // by position, from 1
	crash  []int64  // the crash points the round list shows
}

// publish makes a chain from seed and shows what the game would publish of
// it once n rounds ended, with a checkpoint every `every` positions.
func publish(seed [32]byte, length, n int, contributions [][32]byte, rtp, maxM int64, every int) published {
	c := fairness.NewChain(seed, length)
	p := published{doc: fairness.ChainDocument{Terminal: fairness.FormatHash(c.Terminal()), RTPBasisPoints: rtp, MaxMultiplier: maxM,
		Length: int64(length), Checkpoints: map[int64]string{}}}
	p.doc.Salt = fairness.Salt(c.Terminal(), contributions)
	for _, v := range contributions {
		p.doc.Contributions = append(p.doc.Contributions, hex.EncodeToString(v[:]))
	}
	for pos := 1; pos <= n; pos++ {
		h, _ := c.Hash(pos)
		p.hashes = append(p.hashes, fairness.FormatHash(h))
		p.crash = append(p.crash, fairness.CrashPoint(h, p.doc.Salt, rtp, maxM))
		if pos%every == 0 {
			p.doc.Checkpoints[int64(pos)] = fairness.FormatHash(h)
		}
	}
	return p
}

// verifyAll verifies every listed round against the document as
// `crashgame verify` does, and compares with the round list: nil when all
// agree.
func verifyAll(p published) error {
	for i, h := range p.hashes {
		res, err := fairness.VerifyChainRound(h, p.doc)
		if err != nil {
			return err
		}
		if res.CrashPoint != p.crash[i] || res.Position != int64(i+1) {
			return errors.New("a round's crash point or position differs from the list's")
		}
	}
	return nil
}

// A property of the public data: for random seeds, contributions and
// settings, the chain's document, its round list and the verification
// (fairness.VerifyChainRound, which `crashgame verify` runs) agree; and a
// change to a setting, a contribution, the salt or a hash makes the
// verification fail.
func TestPublishedChainsVerifyAndTamperingFails(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(16, 2026))
	for trial := range 60 {
		var seed [32]byte
		for i := range seed {
			seed[i] = byte(rng.UintN(256))
		}
		contributions := make([][32]byte, 1+rng.IntN(4))
		for i := range contributions {
			contributions[i] = sha256.Sum256([]byte{byte(trial), byte(i), byte(rng.UintN(256))})
		}
		rtp := int64(9000 + rng.IntN(1000))
		maxM := int64(200 + rng.IntN(100000))
		length := 40 + rng.IntN(200)
		n := 30 + rng.IntN(length-29)
		p := publish(seed, length, n, contributions, rtp, maxM, 1+rng.IntN(25))
		if err := verifyAll(p); err != nil {
			t.Fatalf("trial %d: the honest chain does not verify: %v", trial, err)
		}
		tampered := map[string]func(q *published){
			"rtp_bp":         func(q *published) { q.doc.RTPBasisPoints = rtp - 1 - int64(rng.IntN(500)) },
			"max_multiplier": func(q *published) { q.doc.MaxMultiplier = 101 },
			"salt":           func(q *published) { q.doc.Salt = fairness.Salt(contributions[0], contributions) },
			"a contribution": func(q *published) {
				b, _ := hex.DecodeString(q.doc.Contributions[0])
				b[rng.IntN(32)] ^= 1 << rng.IntN(8)
				q.doc.Contributions = append([]string{hex.EncodeToString(b)}, q.doc.Contributions[1:]...)
			},
			"a contribution left out": func(q *published) { q.doc.Contributions = q.doc.Contributions[:len(q.doc.Contributions)-1] },
			"the terminal":            func(q *published) { q.doc.Terminal = q.hashes[0] },
			"a hash": func(q *published) {
				i := rng.IntN(len(q.hashes))
				b, _ := hex.DecodeString(q.hashes[i])
				b[rng.IntN(32)] ^= 1 << rng.IntN(8)
				q.hashes = append([]string(nil), q.hashes...)
				q.hashes[i] = hex.EncodeToString(b)
			},
			"a crash point": func(q *published) {
				q.crash = append([]int64(nil), q.crash...)
				q.crash[rng.IntN(len(q.crash))]++
			},
		}
		for name, change := range tampered {
			q := p
			q.doc.Checkpoints = p.doc.Checkpoints
			change(&q)
			if err := verifyAll(q); err == nil {
				t.Errorf("trial %d: a changed %s still verifies", trial, name)
			}
		}
	}
}
