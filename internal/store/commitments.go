package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
)

// Errors of commit-reveal contributions (issue 26).
var (
	// ErrPlainChain: the chain was published before commit-reveal (its
	// contribution_rule is "plain"); it takes no commitment and no reveal.
	ErrPlainChain = errors.New("store: the chain takes plain contributions, not commitments")
	// ErrCommitRequired: a plain value offered to a commit_reveal chain.
	ErrCommitRequired = errors.New("store: the chain takes commitments, not plain values")
	// ErrRevealNotOpen: a value is revealed before the chain's seeding
	// window is over (while other commitments may still arrive).
	ErrRevealNotOpen = errors.New("store: the chain's reveal window is not open yet")
	// ErrRevealClosed: the chain's reveal window is over, or its salt is fixed.
	ErrRevealClosed = errors.New("store: the chain's reveal window is closed")
	// ErrNoCommitment: the operator committed to nothing in the chain's
	// seeding window, so it has nothing to reveal.
	ErrNoCommitment = errors.New("store: no commitment to reveal")
	// ErrRevealMismatch: the SHA-256 of the revealed value is not the
	// operator's commitment.
	ErrRevealMismatch = errors.New("store: the value does not hash to the commitment")
)

// Contribution rules, as stored: how a chain takes its operators' values.
const (
	// RulePlain: the value itself is sent in the seeding window (chains
	// published before migration 0011).
	RulePlain = "plain"
	// RuleCommitReveal: the SHA-256 of the value (its commitment) is sent in
	// the seeding window, the value in the reveal window after it; an
	// unrevealed value is replaced by its commitment in the salt.
	RuleCommitReveal = "commit_reveal"
)

// SaltDueAt is when the chain's salt is fixed: the end of its reveal window
// (commit_reveal), else of its seeding window (plain).
func (c ChainRecord) SaltDueAt() Millis {
	if c.RevealEndsAt != nil {
		return *c.RevealEndsAt
	}
	return c.SeedingEndsAt
}

// SaltValue is the 32 bytes (in hex) the row gives the salt: its value, or
// its commitment when the value was not revealed.
func (c ContributionRecord) SaltValue() string {
	if c.Value == "" {
		return c.Commitment
	}
	return c.Value
}

// Withheld reports whether the row is a commitment whose value was not
// revealed (final once the chain's salt is fixed).
func (c ContributionRecord) Withheld() bool { return c.Value == "" && c.Commitment != "" }

// AddCommitment stores an operator's commitment (c.Commitment, the SHA-256
// of a value it keeps) to a commit_reveal chain while the chain takes
// commitments: its salt is not fixed, c.ReceivedAt is before its seeding
// window's end, and no value of it is revealed yet (else ErrSeedingClosed).
// The same commitment again from the same operator returns the stored row,
// even after the window; another one in the window is
// ErrContributionConflict. A plain chain is ErrPlainChain.
func (s *Store) AddCommitment(ctx context.Context, c ContributionRecord) (ContributionRecord, error) {
	var out ContributionRecord
	err := s.InTx(ctx, func(ctx context.Context) error {
		chain, err := s.lockChain(ctx, c.ChainID)
		if err != nil {
			return err
		}
		if chain.ContributionRule != RuleCommitReveal {
			return ErrPlainChain
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
			return ErrSeedingClosed
		case had != nil:
			return ErrContributionConflict
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
// seeding_ends_at (before: ErrRevealNotOpen, whether the operator committed
// or not) to reveal_ends_at, while the
// salt is not fixed (else ErrRevealClosed). The operator must have
// committed (else ErrNoCommitment) and SHA-256 of value must be its
// commitment (else ErrRevealMismatch). The same value again returns the
// stored row, whenever it comes.
func (s *Store) RevealContribution(ctx context.Context, chainID, operator, value string, at Millis) (ContributionRecord, error) {
	var out ContributionRecord
	err := s.InTx(ctx, func(ctx context.Context) error {
		chain, err := s.lockChain(ctx, chainID)
		if err != nil {
			return err
		}
		if chain.ContributionRule != RuleCommitReveal {
			return ErrPlainChain
		}
		if at < chain.SeedingEndsAt {
			// Before anything else, committed or not: a value sent now would
			// be readable, and an operator still sending values (a client of
			// the plain rule) learns to send its SHA-256 instead.
			return ErrRevealNotOpen
		}
		var had ContributionRecord
		err = s.conn(ctx).NewSelect().Model(&had).Where("chain_id = ?", chainID).
			Where("source = ?", SourceOperator).Where("name = ?", operator).Scan(ctx)
		switch err := one(err, ErrNoCommitment, "read a commitment"); {
		case err != nil:
			return err
		case had.Value != "" && had.Value == value:
			out = had // a repeat, whenever it comes
			return nil
		case chain.Salt != nil || at >= chain.SaltDueAt():
			return ErrRevealClosed
		}
		raw, err := hex.DecodeString(value)
		if sum := sha256.Sum256(raw); err != nil || hex.EncodeToString(sum[:]) != had.Commitment {
			return ErrRevealMismatch
		}
		_, err = s.conn(ctx).NewUpdate().Model((*ContributionRecord)(nil)).
			Set("value = ?", value).Set("revealed_at = ?", at).
			Where("chain_id = ?", chainID).Where("source = ?", SourceOperator).Where("name = ?", operator).
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
