package freebets

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// batchSize bounds the grants handed to the store at once (one INSERT).
const batchSize = 1000

func (o Owner) validate() error {
	if o.Operator == "" || o.PlayerID == "" || o.Currency == "" {
		return errors.New("owner needs an operator, a player id and a currency")
	}
	return nil
}

// RoundID returns the per-round grant id of round n (1-based) of an entry with
// this id and quantity: the bare id for quantity 1, <id>#<n> otherwise (FB-6
// FB-7).
func RoundID(sourceID string, quantity, n int) string {
	if quantity == 1 {
		return sourceID
	}
	return sourceID + Separator + strconv.Itoa(n)
}

// Intake takes the freebets list of one /balance answer for owner, whose
// session currency has these limits and is accepted for the operator or not.
// Each entry is validated alone; invalid ones are discarded silently, known ids
// are no-ops, and each new valid entry becomes its per-round open grants. See
// the package documentation for every rule. An error means nothing new could
// be stored (the player may still enter; the next /balance tries again).
//
// Intake must not be called inside a transaction.
func (s *Service) Intake(ctx context.Context, owner Owner, entries []json.RawMessage, limits Limits,
	currencyAccepted bool) (Summary, error) {
	sum := Summary{Entries: len(entries)}
	if err := owner.validate(); err != nil {
		return sum, fmt.Errorf("freebets: intake: %w", err)
	}

	valid := make([]entry, 0, len(entries))
	inList := make(map[string]struct{}, len(entries))
	for i, raw := range entries {
		e, id, reason := parseEntry(raw, limits)
		if reason == "" && !currencyAccepted {
			reason = ReasonCurrency // FB-19
		}
		if reason != "" {
			s.discard(ctx, &sum, owner, i, id, reason)
			continue
		}
		if _, dup := inList[e.id]; dup {
			sum.Repeated++ // the first entry with an id in the list counts
			continue
		}
		inList[e.id] = struct{}{}
		valid = append(valid, e)
	}
	if len(valid) == 0 {
		return sum, nil
	}

	known, err := s.knownSources(ctx, owner, valid)
	if err != nil {
		return sum, fmt.Errorf("freebets: intake: %w", err)
	}
	fresh := valid[:0:0]
	for _, e := range valid {
		if _, ok := known[e.id]; !ok {
			fresh = append(fresh, e)
		}
	}
	sum.Repeated += len(valid) - len(fresh)
	if len(fresh) == 0 {
		return sum, nil // the normal case: the same list again
	}

	families, created, err := s.create(ctx, owner, fresh)
	if err != nil {
		return sum, fmt.Errorf("freebets: intake: %w", err)
	}
	sum.Repeated += len(fresh) - families // taken meanwhile by a concurrent intake
	sum.Created = created
	s.created.Add(float64(created))
	return sum, nil
}

func (s *Service) discard(ctx context.Context, sum *Summary, owner Owner, index int, id string, reason Reason) {
	if sum.Discarded == nil {
		sum.Discarded = make(map[Reason]int)
	}
	sum.Discarded[reason]++
	s.discarded.WithLabelValues(string(reason)).Inc()
	// Never the token or the player id; the grant id and the operator are not secret.
	s.log.DebugContext(ctx, "freebets: entry discarded",
		"operator", owner.Operator, "currency", owner.Currency, "index", index, "id", id, "reason", string(reason))
}

// knownSources returns which of the entries' ids the owner's player already has.
func (s *Service) knownSources(ctx context.Context, owner Owner, entries []entry) (map[string]struct{}, error) {
	ids := make([]string, len(entries))
	for i, e := range entries {
		ids[i] = e.id
	}
	found, err := s.repo.KnownSources(ctx, owner.Operator, owner.PlayerID, ids)
	if err != nil {
		return nil, err
	}
	known := make(map[string]struct{}, len(found))
	for _, id := range found {
		known[id] = struct{}{}
	}
	return known, nil
}

// create stores the new entries and their per-round grants in one transaction
// and reports how many entries it took (a concurrent intake may have taken some)
// and how many grants it created.
func (s *Service) create(ctx context.Context, owner Owner, fresh []entry) (families, created int, err error) {
	now := s.now()
	sources := make([]Source, len(fresh))
	for i, e := range fresh {
		sources[i] = Source{Owner: owner, ID: e.id, Amount: e.amount, Quantity: e.quantity, ReceivedAt: now}
	}
	err = s.repo.InTx(ctx, func(ctx context.Context) error {
		families, created = 0, 0
		ids, err := s.repo.InsertSources(ctx, sources)
		if err != nil {
			return err
		}
		taken := make(map[string]struct{}, len(ids))
		for _, id := range ids {
			taken[id] = struct{}{}
		}
		families = len(taken)

		// Grants in list order, rounds in order: the intake sequence is the
		// order of the VALUES rows.
		batch := make([]OwnedGrant, 0, batchSize)
		flush := func() error {
			if len(batch) == 0 {
				return nil
			}
			n, err := s.repo.InsertGrants(ctx, batch)
			if err != nil {
				return err
			}
			created += n
			batch = batch[:0]
			return nil
		}
		for _, e := range fresh {
			if _, ok := taken[e.id]; !ok {
				continue
			}
			for n := 1; n <= e.quantity; n++ {
				batch = append(batch, OwnedGrant{Owner: owner, Grant: Grant{
					ID: RoundID(e.id, e.quantity, n), SourceID: e.id,
					Currency: owner.Currency, Amount: e.amount, State: StateOpen, Created: now,
				}})
				if len(batch) == batchSize {
					if err := flush(); err != nil {
						return err
					}
				}
			}
		}
		return flush()
	})
	if err != nil {
		return 0, 0, err
	}
	return families, created, nil
}
