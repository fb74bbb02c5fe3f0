package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/crashstudio/crashgame/internal/chains"
)

// AddCommitment stores an operator's commitment (c.Commitment, the SHA-256
// of a value it keeps) to a commit_reveal chain while the chain takes
// commitments: its salt is not fixed, c.ReceivedAt is before its seeding
// window's end, and no value of it is revealed yet (else chains.ErrSeedingClosed).
// The same commitment again from the same operator returns the stored row,
// even after the window; another one in the window is
// chains.ErrContributionConflict. A plain chain is chains.ErrPlainChain.
func (s *Store) AddCommitment(ctx context.Context, c ContributionRecord) (ContributionRecord, error) {
	var out ContributionRecord
	err := s.InTx(ctx, func(ctx context.Context) error {
		chain, err := s.lockChain(ctx, c.ChainID)
		if err != nil {
			return err
		}
		if chain.ContributionRule != chains.RuleCommitReveal {
			return chains.ErrPlainChain
		}
		all, err := s.Contributions(ctx, c.ChainID)
		if err != nil {
			return err
		}
		var had *ContributionRecord
		revealed := false
		for i := range all {
			if all[i].Source == c.Source && all[i].Name == c.Name {
				had = &all[i]
			}
			revealed = revealed || all[i].RevealedAt != nil
		}
		switch {
		case had != nil && had.Commitment == c.Commitment:
			out = *had // a repeat, whenever it comes
			return nil
		case chain.Salt != nil || c.ReceivedAt >= chain.SeedingEndsAt || revealed:
			return chains.ErrSeedingClosed
		case had != nil:
			return chains.ErrContributionConflict
		}
		c.Value, c.RevealedAt = "", nil
		if _, err := s.conn(ctx).NewInsert().Model(&c).Exec(ctx); err != nil {
			return fmt.Errorf("store: add a commitment to %s: %w", c.ChainID, err)
		}
		out = c
		return nil
	})
	return out, err
}

// RevealContribution stores the value an operator committed to in a
// commit_reveal chain's seeding window, in its reveal window: from
// seeding_ends_at (before: chains.ErrRevealNotOpen, whether the operator committed
// or not) to reveal_ends_at, while the
// salt is not fixed (else chains.ErrRevealClosed). The operator must have
// committed (else chains.ErrNoCommitment) and SHA-256 of value must be its
// commitment (else chains.ErrRevealMismatch). The same value again returns the
// stored row, whenever it comes.
func (s *Store) RevealContribution(ctx context.Context, chainID, operator, value string, at Millis) (ContributionRecord, error) {
	var out ContributionRecord
	err := s.InTx(ctx, func(ctx context.Context) error {
		chain, err := s.lockChain(ctx, chainID)
		if err != nil {
			return err
		}
		if chain.ContributionRule != chains.RuleCommitReveal {
			return chains.ErrPlainChain
		}
		if at < chain.SeedingEndsAt {
			// Before anything else, committed or not: a value sent now would
			// be readable, and an operator still sending values (a client of
			// the plain rule) learns to send its SHA-256 instead.
			return chains.ErrRevealNotOpen
		}
		var had ContributionRecord
		err = s.conn(ctx).NewSelect().Model(&had).Where("chain_id = ?", chainID).
			Where("source = ?", chains.SourceOperator).Where("name = ?", operator).Scan(ctx)
		switch err := one(err, chains.ErrNoCommitment, "read a commitment"); {
		case err != nil:
			return err
		case had.Value != "" && had.Value == value:
			out = had // a repeat, whenever it comes
			return nil
		case chain.Salt != nil || at.Time().Compare(chainOf(&chain).SaltDueAt()) >= 0:
			return chains.ErrRevealClosed
		}
		raw, err := hex.DecodeString(value)
		if sum := sha256.Sum256(raw); err != nil || hex.EncodeToString(sum[:]) != had.Commitment {
			return chains.ErrRevealMismatch
		}
		_, err = s.conn(ctx).NewUpdate().Model((*ContributionRecord)(nil)).
			Set("value = ?", value).Set("revealed_at = ?", at).
			Where("chain_id = ?", chainID).Where("source = ?", chains.SourceOperator).Where("name = ?", operator).
			Where("value IS NULL").Exec(ctx)
		if err != nil {
			return fmt.Errorf("store: reveal a contribution to %s: %w", chainID, err)
		}
		had.Value, had.RevealedAt = value, &at
		out = had
		return nil
	})
	return out, err
}
