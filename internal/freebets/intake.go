package freebets

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/uptrace/bun"

	"github.com/crashstudio/crashgame/internal/store"
)

// batchSize bounds the ids of one IN list and the rows of one INSERT.
const batchSize = 1000

// sourceRow is one entry taken from /balance: a family of grants.
type sourceRow struct {
	bun.BaseModel `bun:"table:freebet_sources"`

	Operator   string       `bun:"operator,pk"`
	PlayerID   string       `bun:"player_id,pk"`
	SourceID   string       `bun:"source_id,pk"`
	Currency   string       `bun:"currency"`
	Amount     int64        `bun:"amount"`
	Quantity   int          `bun:"quantity"`
	ReceivedAt store.Millis `bun:"received_at"`
}

// grantRow is one round's grant.
type grantRow struct {
	bun.BaseModel `bun:"table:freebet_grants"`

	Seq       int64        `bun:"seq,pk,autoincrement"`
	Operator  string       `bun:"operator"`
	PlayerID  string       `bun:"player_id"`
	GrantID   string       `bun:"grant_id"`
	SourceID  string       `bun:"source_id"`
	Currency  string       `bun:"currency"`
	Amount    int64        `bun:"amount"`
	State     State        `bun:"state"`
	CreatedAt store.Millis `bun:"created_at"`
	SpentAt   store.Millis `bun:"spent_at,nullzero"`
}

// grantColumns lists every column of grantRow, for RETURNING and SELECT.
const grantColumns = "seq, operator, player_id, grant_id, source_id, currency, amount, state, created_at, spent_at"

func (r *grantRow) grant() Grant {
	return Grant{
		ID:       r.GrantID,
		SourceID: r.SourceID,
		Amount:   r.Amount,
		Currency: r.Currency,
		State:    r.State,
		Seq:      r.Seq,
		Created:  r.CreatedAt.Time(),
		Spent:    r.SpentAt.Time(),
	}
}

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

	known, err := s.knownSources(ctx, s.db, owner, valid)
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
func (s *Service) knownSources(ctx context.Context, db bun.IDB, owner Owner, entries []entry) (map[string]struct{}, error) {
	known := make(map[string]struct{})
	ids := make([]string, 0, min(len(entries), batchSize))
	for chunk := range slices.Chunk(entries, batchSize) {
		ids = ids[:0]
		for _, e := range chunk {
			ids = append(ids, e.id)
		}
		var found []string
		err := db.NewSelect().Model((*sourceRow)(nil)).Column("source_id").
			Where("operator = ?", owner.Operator).
			Where("player_id = ?", owner.PlayerID).
			Where("source_id IN (?)", bun.List(ids)).
			Scan(ctx, &found)
		if err != nil {
			return nil, fmt.Errorf("read known grant ids: %w", err)
		}
		for _, id := range found {
			known[id] = struct{}{}
		}
	}
	return known, nil
}

// create stores the new entries and their per-round grants in one transaction
// and reports how many entries it took (a concurrent intake may have taken some)
// and how many grants it created.
func (s *Service) create(ctx context.Context, owner Owner, fresh []entry) (families, created int, err error) {
	now := store.MillisOf(s.now())
	sources := make([]sourceRow, len(fresh))
	for i, e := range fresh {
		sources[i] = sourceRow{
			Operator: owner.Operator, PlayerID: owner.PlayerID, SourceID: e.id,
			Currency: owner.Currency, Amount: e.amount, Quantity: e.quantity, ReceivedAt: now,
		}
	}
	// Rows are locked in id order, so two concurrent intakes never deadlock on
	// each other's families.
	slices.SortFunc(sources, func(a, b sourceRow) int { return strings.Compare(a.SourceID, b.SourceID) })

	err = s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		families, created = 0, 0
		taken := make(map[string]struct{}, len(sources))
		for chunk := range slices.Chunk(sources, batchSize) {
			var ids []string
			_, err := tx.NewInsert().Model(&chunk).On("CONFLICT DO NOTHING").Returning("source_id").Exec(ctx, &ids)
			if err != nil {
				return fmt.Errorf("insert grant entries: %w", err)
			}
			for _, id := range ids {
				taken[id] = struct{}{}
			}
		}
		families = len(taken)

		// Grants in list order, rounds in order: the intake sequence is the
		// order of the VALUES rows.
		batch := make([]grantRow, 0, batchSize)
		flush := func() error {
			if len(batch) == 0 {
				return nil
			}
			res, err := tx.NewInsert().Model(&batch).ExcludeColumn("seq").
				On("CONFLICT DO NOTHING").Returning("NULL").Exec(ctx)
			if err != nil {
				return fmt.Errorf("insert grants: %w", err)
			}
			n, err := res.RowsAffected()
			if err != nil {
				return fmt.Errorf("insert grants: rows affected: %w", err)
			}
			created += int(n)
			batch = batch[:0]
			return nil
		}
		for _, e := range fresh {
			if _, ok := taken[e.id]; !ok {
				continue
			}
			for n := 1; n <= e.quantity; n++ {
				batch = append(batch, grantRow{
					Operator: owner.Operator, PlayerID: owner.PlayerID,
					GrantID: RoundID(e.id, e.quantity, n), SourceID: e.id,
					Currency: owner.Currency, Amount: e.amount, State: StateOpen, CreatedAt: now,
				})
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
