package freebets

import (
	"context"
	"errors"
	"fmt"
	"slices"
)

// maxSubstitutionAttempts bounds how many times Spend retries a substitution
// whose candidate a concurrent spend took first. Each lost attempt means
// another bet spent a grant of that value, so the bound is only reached under
// pathological contention.
const maxSubstitutionAttempts = 100

// Open returns the owner's open grants in its currency, oldest first.
func (s *Service) Open(ctx context.Context, owner Owner) ([]Grant, error) {
	if err := owner.validate(); err != nil {
		return nil, fmt.Errorf("freebets: open: %w", err)
	}
	grants, err := s.repo.OpenGrants(ctx, owner)
	if err != nil {
		return nil, fmt.Errorf("freebets: open: %w", err)
	}
	return grants, nil
}

// OpenByValue summarizes the owner's open grants by value, smallest first, for
// the table: each value with its count and the id a bet of that value spends
// first.
func (s *Service) OpenByValue(ctx context.Context, owner Owner) ([]Value, error) {
	grants, err := s.Open(ctx, owner)
	if err != nil {
		return nil, err
	}
	return byValue(grants), nil
}

// byValue groups grants (oldest first) by amount.
func byValue(grants []Grant) []Value {
	var values []Value
	index := make(map[int64]int)
	for _, g := range grants {
		i, ok := index[g.Amount]
		if !ok {
			i = len(values)
			index[g.Amount] = i
			values = append(values, Value{Amount: g.Amount, OldestID: g.ID})
		}
		values[i].Count++
	}
	slices.SortFunc(values, func(a, b Value) int {
		switch {
		case a.Amount < b.Amount:
			return -1
		case a.Amount > b.Amount:
			return 1
		}
		return 0
	})
	return values
}

// Spend spends a grant for a freebet bet, inside the caller's transaction
// (store.InTx: the one that writes the bet row): the grant requestedID if it is open
// (FB-21), otherwise the oldest open grant of exactly the same amount (FB-22).
// The returned grant's ID is the freebet_id to send on /bet, and its Amount the
// bet's amount (BET-7). With neither, or an id the owner never had, it returns
// ErrUnavailable and the bet must be refused.
//
// Each spend is one conditional UPDATE: of concurrent spends of one grant
// exactly one succeeds. On PostgreSQL tx must be READ COMMITTED (the default).
func (s *Service) Spend(ctx context.Context, owner Owner, requestedID string) (Grant, error) {
	if err := owner.validate(); err != nil {
		return Grant{}, fmt.Errorf("freebets: spend: %w", err)
	}
	if requestedID == "" {
		return Grant{}, ErrUnavailable
	}
	now := s.now()

	// FB-21: the requested grant, if still open.
	g, err := s.repo.SpendGrant(ctx, owner, requestedID, now)
	switch {
	case err == nil:
		return g, nil
	case !errors.Is(err, ErrGrantNotOpen):
		return Grant{}, fmt.Errorf("freebets: spend: %w", err)
	}

	// FB-22: spent (or being spent), so the oldest open grant of its value.
	requested, err := s.repo.Grant(ctx, owner, requestedID)
	switch {
	case errors.Is(err, ErrGrantNotFound):
		return Grant{}, ErrUnavailable // never granted to this owner: no value to substitute
	case err != nil:
		return Grant{}, fmt.Errorf("freebets: spend: read requested grant: %w", err)
	}
	amount := requested.Amount
	for range maxSubstitutionAttempts {
		seq, err := s.repo.OldestOpenGrant(ctx, owner, amount)
		switch {
		case errors.Is(err, ErrGrantNotFound):
			return Grant{}, ErrUnavailable
		case err != nil:
			return Grant{}, fmt.Errorf("freebets: spend: find a substitute: %w", err)
		}
		g, err := s.repo.SpendGrantBySeq(ctx, seq, now)
		switch {
		case err == nil:
			s.log.DebugContext(ctx, "freebets: requested grant not open, spent the oldest of equal value",
				"operator", owner.Operator, "requested", requestedID, "spent", g.ID, "amount", amount)
			return g, nil
		case !errors.Is(err, ErrGrantNotOpen):
			return Grant{}, fmt.Errorf("freebets: spend: substitute: %w", err)
		}
		// A concurrent spend took that one first: look again.
	}
	return Grant{}, fmt.Errorf("freebets: spend: gave up after %d substitutions lost to concurrent spends", maxSubstitutionAttempts)
}

// Return puts the spent grant id back in the owner's queue (spent → open),
// inside the caller's transaction: the wallet refused its freebet /bet (any
// refusal, FB-23, AMB-18 reading A), or the bet was rolled back. A later bet
// may spend it again under the same id with a new transaction_id (FB-24).
// Returning an open grant changes nothing; an id the owner never had is
// ErrUnknown. Call it at most once per spend (see the package documentation).
func (s *Service) Return(ctx context.Context, owner Owner, id string) error {
	if err := owner.validate(); err != nil {
		return fmt.Errorf("freebets: return: %w", err)
	}
	err := s.repo.ReturnGrant(ctx, owner, id)
	switch {
	case err == nil:
		return nil
	case !errors.Is(err, ErrGrantNotSpent):
		return fmt.Errorf("freebets: return: %w", err)
	}
	g, err := s.repo.Grant(ctx, owner, id)
	switch {
	case errors.Is(err, ErrGrantNotFound):
		return ErrUnknown
	case err != nil:
		return fmt.Errorf("freebets: return: read grant: %w", err)
	}
	s.log.WarnContext(ctx, "freebets: return of a grant already open: nothing to do",
		"operator", owner.Operator, "id", id, "state", g.State)
	return nil
}
