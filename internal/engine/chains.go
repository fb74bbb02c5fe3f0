package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/crashstudio/crashgame/internal/fairness"
	"github.com/crashstudio/crashgame/internal/seal"
	"github.com/crashstudio/crashgame/internal/store"
)

// Beacon is a public randomness beacon's value that an installation names
// to be part of every new chain's salt (e.g. a drand round): Label says
// which beacon and round, Value is its output as 64 hex digits.
type Beacon struct {
	Label string
	Value string
}

// DefaultSeedingWindow is how long a new chain takes contributions to its
// salt after its terminal hash is published, before its first round.
const DefaultSeedingWindow = 5 * time.Minute

// DefaultRevealWindow is how long, after its seeding window, a new chain
// takes the reveals of the values committed to in the window.
const DefaultRevealWindow = 2 * time.Minute

// chainID names a game's chain number n.
func chainID(gameID string, n int64) string { return fmt.Sprintf("%s-c%d", gameID, n) }

// chainUsable reports whether rec may serve round seq of this table: it is
// sealed (a chain recorded before seeds were sealed serves no more rounds),
// not retired, covers seq, and was committed with the game's settings.
func (t *Table) chainUsable(rec store.ChainRecord, seq int64) bool {
	return rec.SealedSeed != nil && rec.LastSeq == nil &&
		seq >= rec.FirstSeq && seq < rec.FirstSeq+rec.Length &&
		rec.RTPBasisPts == t.game.RTPBasisPoints && rec.MaxMultiplier == t.game.MaxMultiplier &&
		rec.FormulaVersion == fairness.FormulaVersion
}

// loadChain makes the table's chain the one that serves round seq: the
// game's current chain when it is usable, else a new one, published (its row
// inserted, the previous one retired at seq-1) in one fenced transaction.
// Loop only, while leading.
func (t *Table) loadChain(ctx context.Context, seq int64) error {
	cur, err := t.store.CurrentChain(ctx, t.game.ID)
	switch {
	case err == nil && t.chainUsable(cur, seq):
		chain, err := t.openChain(cur)
		switch {
		case err == nil:
			t.chain, t.chainRec = chain, cur
			return nil
		case !errors.Is(err, seal.ErrOpen):
			return err
		}
		// The chain's seed does not open with this installation's seed_key
		// (the key was changed or lost): no round of it can be drawn any
		// more. It is retired below, its commitment unchanged, and a new
		// chain is published under the key in use.
		t.logger.Warn("the current hash chain's seed does not open with fairness.seed_key (the key was changed or lost): retiring the chain and publishing a new one",
			"chain_id", cur.ID, "retired_after_round", max(seq-1, cur.FirstSeq-1))
	case err != nil && !errors.Is(err, store.ErrChainNotFound):
		return fmt.Errorf("engine: load chain of %s: %w", t.game.ID, err)
	}
	if err := fairness.CheckParams("salt", t.game.RTPBasisPoints, t.game.MaxMultiplier); err != nil {
		return fmt.Errorf("engine: game %s: %w", t.game.ID, err)
	}
	seed, err := fairness.NewSeed()
	if err != nil {
		return err
	}
	number := cur.Number + 1 // 1 when the game has no chain yet
	id := chainID(t.game.ID, number)
	sealed, err := t.cfg.Sealer.Seal(seed[:], id)
	if err != nil {
		return fmt.Errorf("engine: seal the seed of %s: %w", id, err)
	}
	chain := fairness.NewChain(seed, t.cfg.ChainLength)
	now := t.clock.Now()
	seedingEnds := store.MillisOf(now.Add(t.cfg.SeedingWindow))
	revealEnds := store.MillisOf(now.Add(t.cfg.SeedingWindow + t.cfg.RevealWindow))
	rec := store.ChainRecord{
		ID: id, GameID: t.game.ID, Number: number, FirstSeq: seq, Length: int64(t.cfg.ChainLength),
		Terminal:    fairness.FormatHash(chain.Terminal()),
		RTPBasisPts: t.game.RTPBasisPoints, MaxMultiplier: t.game.MaxMultiplier, FormulaVersion: fairness.FormulaVersion,
		SealedSeed: sealed, CreatedAt: store.MillisOf(now), SeedingEndsAt: seedingEnds,
		ContributionRule: store.RuleCommitReveal, RevealEndsAt: &revealEnds,
	}
	err = t.fenced(ctx, t.epoch, func(ctx context.Context) error {
		if cur.ID != "" && cur.LastSeq == nil {
			if err := t.store.RetireChain(ctx, cur.ID, max(seq-1, cur.FirstSeq-1), rec.CreatedAt); err != nil {
				return err
			}
		}
		return t.store.InsertChain(ctx, rec)
	})
	if err != nil {
		return fmt.Errorf("engine: %w", err)
	}
	t.logger.Info("new hash chain published", "chain_id", id, "first_round", seq, "rounds", t.cfg.ChainLength,
		"terminal", rec.Terminal, "seeding_ends_at", rec.SeedingEndsAt.Time(), "reveal_ends_at", revealEnds.Time())
	t.chain, t.chainRec = chain, rec
	return nil
}

// openChain unseals a chain's seed and recomputes the chain.
func (t *Table) openChain(rec store.ChainRecord) (*fairness.Chain, error) {
	if rec.SealedSeed == nil {
		return nil, fmt.Errorf("engine: chain %s has no sealed seed", rec.ID)
	}
	plain, err := t.cfg.Sealer.Open(rec.SealedSeed, rec.ID)
	if err != nil {
		return nil, fmt.Errorf("engine: open the seed of %s: %w", rec.ID, err) // wraps seal.ErrOpen
	}
	var seed [32]byte
	if copy(seed[:], plain) != len(seed) || len(plain) != len(seed) {
		return nil, fmt.Errorf("engine: the seed of %s is not 32 bytes", rec.ID)
	}
	return fairness.NewChain(seed, int(rec.Length)), nil
}

// fixSalt fixes the salt of the table's chain once its reveal window (a
// plain chain: its seeding window) is over: from every operator's revealed
// value, the commitment of every operator that committed but did not reveal,
// the installation's beacon when one is named, and, when no operator
// committed, a value the game draws now, after the commitment (the chain
// page says so). A salt another leader fixed first is kept.
func (t *Table) fixSalt(ctx context.Context) error {
	extra := func(contributed []store.ContributionRecord) []store.ContributionRecord {
		at := store.MillisOf(t.clock.Now())
		var out []store.ContributionRecord
		if b := t.cfg.Beacon; b != nil {
			out = append(out, store.ContributionRecord{ChainID: t.chainRec.ID, Source: store.SourceBeacon, Name: b.Label, Value: b.Value, ReceivedAt: at})
		}
		for _, c := range contributed {
			if c.Source == store.SourceOperator {
				return out
			}
		}
		var draw [32]byte
		_, _ = rand.Read(draw[:]) // crypto/rand.Read never fails (Go 1.24+)
		return append(out, store.ContributionRecord{ChainID: t.chainRec.ID, Source: store.SourceGame, Value: hex.EncodeToString(draw[:]), ReceivedAt: at})
	}
	var rec store.ChainRecord
	err := t.fenced(ctx, t.epoch, func(ctx context.Context) error {
		var err error
		rec, err = t.store.FixSalt(ctx, t.chainRec.ID, store.MillisOf(t.clock.Now()), extra, MakeSalt)
		return err
	})
	if err != nil {
		return fmt.Errorf("engine: fix the salt of %s: %w", t.chainRec.ID, err)
	}
	t.logger.Info("the chain's salt is fixed", "chain_id", rec.ID, "salt", *rec.Salt, "salt_source", *rec.SaltSource)
	t.chainRec = rec
	return nil
}

// MakeSalt is the salt rule applied to a chain and its contributions
// (fairness.Salt over each row's SaltValue: the value, or the commitment of
// a value withheld): "contributions" when an operator contributed,
// "game_draw" otherwise.
func MakeSalt(chain store.ChainRecord, all []store.ContributionRecord) (salt, source string, err error) {
	terminal, err := fairness.ParseHash(chain.Terminal)
	if err != nil {
		return "", "", fmt.Errorf("engine: terminal of %s: %w", chain.ID, err)
	}
	source = store.SaltFromGameDraw
	values := make([][32]byte, 0, len(all))
	for _, c := range all {
		v, err := fairness.ParseHash(c.SaltValue())
		if err != nil {
			return "", "", fmt.Errorf("engine: a contribution to %s: %w", chain.ID, err)
		}
		values = append(values, v)
		if c.Source == store.SourceOperator {
			source = store.SaltFromContributions
		}
	}
	return fairness.Salt(terminal, values), source, nil
}

// prepareChain makes sure round seq can be drawn: a chain that serves it,
// whose salt is fixed, waiting out the seeding and reveal windows of a new
// chain. It
// returns false when the lease was lost (or the table is stopping) while it
// waited.
func (t *Table) prepareChain(ctx context.Context, seq int64, flush *<-chan time.Time) (bool, error) {
	if t.chain == nil || !t.chainUsable(t.chainRec, seq) {
		if err := t.loadChain(ctx, seq); err != nil {
			return false, err
		}
	}
	if t.chainRec.Salt != nil {
		return true, nil
	}
	if !t.wait(t.chainRec.SaltDueAt().Time(), flush, true) || t.isStopping() {
		return false, nil
	}
	return true, t.fixSalt(ctx)
}

// reveal returns the hash and the crash point of round r,
// for a round interrupted before it crashed (Recover): from the table's
// chain, or by opening the sealed seed of rec.
func (t *Table) reveal(ctx context.Context, r store.RoundRecord) (hash string, crash int64, err error) {
	if r.Hash != "" {
		return r.Hash, r.CrashPoint, nil // revealed already (a round recorded before migration 0007)
	}
	rec, chain := t.chainRec, t.chain
	if chain == nil || rec.ID != r.ChainID {
		if rec, err = t.store.ChainByID(ctx, r.ChainID); err != nil {
			return "", 0, fmt.Errorf("engine: the chain of round %s: %w", r.ID, err)
		}
		if chain, err = t.openChain(rec); err != nil {
			return "", 0, err
		}
	}
	if rec.Salt == nil {
		return "", 0, fmt.Errorf("engine: round %s is on chain %s, whose salt is not fixed", r.ID, rec.ID)
	}
	h, err := chain.Hash(int(r.Position))
	if err != nil {
		return "", 0, fmt.Errorf("engine: round %s: %w", r.ID, err)
	}
	return fairness.FormatHash(h), fairness.CrashPoint(h, *rec.Salt, rec.RTPBasisPts, rec.MaxMultiplier), nil
}
