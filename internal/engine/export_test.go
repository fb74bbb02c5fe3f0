package engine

import (
	"context"
	"crypto/sha256"
	"time"

	"github.com/crashstudio/crashgame/internal/fairness"
	"github.com/crashstudio/crashgame/internal/seal"
)

// CrashPointForTest computes a round's crash point the way only the game
// can before its crash: from the round's chain position and its chain's
// sealed seed, read from the database and opened with the table's key. It
// touches none of the loop's state.
func (t *Table) CrashPointForTest(ctx context.Context, roundID string) (int64, error) {
	r, err := t.store.Round(ctx, t.game.ID, roundID)
	if err != nil {
		return 0, err
	}
	rec, err := t.chains.ChainByID(ctx, r.ChainID)
	if err != nil {
		return 0, err
	}
	chain, err := t.openChain(rec)
	if err != nil {
		return 0, err
	}
	h, err := chain.Hash(int(r.Position))
	if err != nil {
		return 0, err
	}
	return fairness.CrashPoint(h, *rec.Salt, rec.RTPBasisPts, rec.MaxMultiplier), nil
}

// FixedSealer is a sealer with a fixed key, for tests.
func FixedSealer() *seal.Sealer {
	s, err := seal.New(FixedKeyForTest())
	if err != nil {
		panic(err)
	}
	return s
}

// FixedKeyForTest is FixedSealer's key.
func FixedKeyForTest() []byte {
	key := sha256.Sum256([]byte("engine tests: the seed key"))
	return key[:]
}

// DebitsTookForTest records n debits of this process answered now, on the
// table's clock, that each took d to learn their outcome, as Debit records
// its own.
func (t *Table) DebitsTookForTest(d time.Duration, n int) {
	now := t.clock.Now()
	for range n {
		t.pace.took(now, d)
	}
}
