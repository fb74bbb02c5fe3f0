package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/uptrace/bun"
)

// States of a freebet grant as stored (the CHECK of freebet_grants).
const (
	FreebetOpen  = "open"
	FreebetSpent = "spent"
)

// freebetBatch bounds the ids of one IN list and the rows of one INSERT.
const freebetBatch = 1000

// Errors of the freebet grant statements: which condition held no row.
var (
	ErrFreebetGrantNotFound = errors.New("store: freebet grant not found")
	ErrFreebetGrantNotOpen  = errors.New("store: freebet grant not open")
	ErrFreebetGrantNotSpent = errors.New("store: freebet grant not spent")
)

// FreebetOwner names whose grants a statement reads or writes: one operator's
// player, in one currency.
type FreebetOwner struct {
	Operator, PlayerID, Currency string
}

// FreebetSourceRecord is one entry taken from a /balance answer: a family of
// grants (table freebet_sources, migration 0004). Its primary key (operator,
// player, source id) is what makes a repeated id create nothing.
type FreebetSourceRecord struct {
	bun.BaseModel `bun:"table:freebet_sources"`

	Operator   string `bun:"operator,pk"`
	PlayerID   string `bun:"player_id,pk"`
	SourceID   string `bun:"source_id,pk"`
	Currency   string `bun:"currency"`
	Amount     int64  `bun:"amount"`
	Quantity   int    `bun:"quantity"`
	ReceivedAt Millis `bun:"received_at"`
}

// FreebetGrantRecord is one round's grant (table freebet_grants, migration
// 0004). Seq is the intake order, set by the database: lower is older.
type FreebetGrantRecord struct {
	bun.BaseModel `bun:"table:freebet_grants"`

	Seq       int64  `bun:"seq,pk,autoincrement"`
	Operator  string `bun:"operator"`
	PlayerID  string `bun:"player_id"`
	GrantID   string `bun:"grant_id"`
	SourceID  string `bun:"source_id"`
	Currency  string `bun:"currency"`
	Amount    int64  `bun:"amount"`
	State     string `bun:"state"` // FreebetOpen or FreebetSpent
	CreatedAt Millis `bun:"created_at"`
	SpentAt   Millis `bun:"spent_at,nullzero"` // zero (NULL) while open
}

// freebetGrantColumns lists every column of FreebetGrantRecord, for RETURNING.
const freebetGrantColumns = "seq, operator, player_id, grant_id, source_id, currency, amount, state, created_at, spent_at"

// KnownFreebetSources returns which of ids the player already has a family
// of, in any currency (one indexed read per 1,000 ids).
func (s *Store) KnownFreebetSources(ctx context.Context, operator, playerID string, ids []string) ([]string, error) {
	var known []string
	for chunk := range slices.Chunk(ids, freebetBatch) {
		var found []string
		err := s.conn(ctx).NewSelect().Model((*FreebetSourceRecord)(nil)).Column("source_id").
			Where("operator = ?", operator).
			Where("player_id = ?", playerID).
			Where("source_id IN (?)", bun.List(chunk)).
			Scan(ctx, &found)
		if err != nil {
			return nil, fmt.Errorf("store: read known freebet sources: %w", err)
		}
		known = append(known, found...)
	}
	return known, nil
}

// InsertFreebetSources inserts the families that are not stored yet (one
// INSERT … ON CONFLICT DO NOTHING per 1,000) and returns the source ids it
// inserted: of concurrent inserts of one family exactly one takes it. Rows are
// inserted, and so locked, in source id order, so two concurrent intakes never
// deadlock on each other's families. Call it in the transaction (InTx) that
// inserts the families' grants.
func (s *Store) InsertFreebetSources(ctx context.Context, recs []FreebetSourceRecord) ([]string, error) {
	sorted := slices.Clone(recs)
	slices.SortFunc(sorted, func(a, b FreebetSourceRecord) int { return strings.Compare(a.SourceID, b.SourceID) })
	var taken []string
	for chunk := range slices.Chunk(sorted, freebetBatch) {
		var ids []string
		_, err := s.conn(ctx).NewInsert().Model(&chunk).On("CONFLICT DO NOTHING").Returning("source_id").Exec(ctx, &ids)
		if err != nil {
			return nil, fmt.Errorf("store: insert freebet sources: %w", err)
		}
		taken = append(taken, ids...)
	}
	return taken, nil
}

// InsertFreebetGrants inserts grants in their order (which gives their Seq;
// one INSERT per 1,000), skipping a grant whose id the player already has, and
// reports how many it inserted. Seq and SpentAt of recs are ignored.
func (s *Store) InsertFreebetGrants(ctx context.Context, recs []FreebetGrantRecord) (int, error) {
	created := 0
	for chunk := range slices.Chunk(recs, freebetBatch) {
		n, err := affected("insert freebet grants")(s.conn(ctx).NewInsert().Model(&chunk).ExcludeColumn("seq").
			On("CONFLICT DO NOTHING").Returning("NULL").Exec(ctx))
		if err != nil {
			return created, err
		}
		created += int(n)
	}
	return created, nil
}

// OpenFreebetGrants returns the owner's open grants, by Seq.
func (s *Store) OpenFreebetGrants(ctx context.Context, owner FreebetOwner) ([]FreebetGrantRecord, error) {
	return s.freebetGrants(ctx, owner, FreebetOpen)
}

// PlayerFreebetGrants returns every grant of one operator's player, in any
// state and currency, by Seq (audits and tests).
func (s *Store) PlayerFreebetGrants(ctx context.Context, operator, playerID string) ([]FreebetGrantRecord, error) {
	return s.freebetGrants(ctx, FreebetOwner{Operator: operator, PlayerID: playerID}, "")
}

// freebetGrants returns the grants of owner's player, by Seq: of its currency
// and in state only when they are set.
func (s *Store) freebetGrants(ctx context.Context, owner FreebetOwner, state string) ([]FreebetGrantRecord, error) {
	var recs []FreebetGrantRecord
	q := s.conn(ctx).NewSelect().Model(&recs).
		Where("operator = ?", owner.Operator).
		Where("player_id = ?", owner.PlayerID)
	if owner.Currency != "" {
		q = q.Where("currency = ?", owner.Currency)
	}
	if state != "" {
		q = q.Where("state = ?", state)
	}
	if err := q.Order("seq").Scan(ctx); err != nil {
		return nil, fmt.Errorf("store: read freebet grants: %w", err)
	}
	return recs, nil
}

// FreebetGrant returns the owner's grant grantID, in any state, or
// ErrFreebetGrantNotFound.
func (s *Store) FreebetGrant(ctx context.Context, owner FreebetOwner, grantID string) (*FreebetGrantRecord, error) {
	rec := new(FreebetGrantRecord)
	err := s.conn(ctx).NewSelect().Model(rec).
		Where("operator = ?", owner.Operator).
		Where("player_id = ?", owner.PlayerID).
		Where("currency = ?", owner.Currency).
		Where("grant_id = ?", grantID).
		Scan(ctx)
	if err := one(err, ErrFreebetGrantNotFound, "read freebet grant"); err != nil {
		return nil, err
	}
	return rec, nil
}

// SpendFreebetGrant marks the owner's grant grantID spent at at and returns
// it, if and only if it is open: one conditional UPDATE, so of concurrent
// spends of one grant exactly one succeeds (on PostgreSQL at READ COMMITTED).
// Otherwise (spent, or no such grant) it returns ErrFreebetGrantNotOpen.
func (s *Store) SpendFreebetGrant(ctx context.Context, owner FreebetOwner, grantID string, at Millis) (*FreebetGrantRecord, error) {
	rec := new(FreebetGrantRecord)
	err := s.conn(ctx).NewRaw("UPDATE freebet_grants SET state = ?, spent_at = ?"+
		" WHERE operator = ? AND player_id = ? AND currency = ? AND grant_id = ? AND state = ?"+
		" RETURNING "+freebetGrantColumns,
		FreebetSpent, at, owner.Operator, owner.PlayerID, owner.Currency, grantID, FreebetOpen,
	).Scan(ctx, rec)
	if err := one(err, ErrFreebetGrantNotOpen, "spend freebet grant"); err != nil {
		return nil, err
	}
	return rec, nil
}

// OldestOpenFreebetGrant returns the Seq of the owner's oldest open grant of
// exactly amount, or ErrFreebetGrantNotFound. It decides nothing: spend it
// with SpendFreebetGrantBySeq, which a concurrent spend may win first.
func (s *Store) OldestOpenFreebetGrant(ctx context.Context, owner FreebetOwner, amount int64) (int64, error) {
	var seq int64
	err := s.conn(ctx).NewRaw("SELECT seq FROM freebet_grants"+
		" WHERE operator = ? AND player_id = ? AND currency = ? AND amount = ? AND state = ?"+
		" ORDER BY seq LIMIT 1",
		owner.Operator, owner.PlayerID, owner.Currency, amount, FreebetOpen,
	).Scan(ctx, &seq)
	if err := one(err, ErrFreebetGrantNotFound, "find oldest open freebet grant"); err != nil {
		return 0, err
	}
	return seq, nil
}

// SpendFreebetGrantBySeq marks the grant seq spent at at and returns it, if
// and only if it is still open (one conditional UPDATE); otherwise
// ErrFreebetGrantNotOpen.
func (s *Store) SpendFreebetGrantBySeq(ctx context.Context, seq int64, at Millis) (*FreebetGrantRecord, error) {
	rec := new(FreebetGrantRecord)
	err := s.conn(ctx).NewRaw("UPDATE freebet_grants SET state = ?, spent_at = ? WHERE seq = ? AND state = ? RETURNING "+freebetGrantColumns,
		FreebetSpent, at, seq, FreebetOpen,
	).Scan(ctx, rec)
	if err := one(err, ErrFreebetGrantNotOpen, "spend freebet grant by seq"); err != nil {
		return nil, err
	}
	return rec, nil
}

// ReturnFreebetGrant puts the owner's spent grant grantID back to open, if and
// only if it is spent (one conditional UPDATE: of concurrent returns of one
// spend exactly one succeeds). Otherwise (open, or no such grant) it returns
// ErrFreebetGrantNotSpent.
func (s *Store) ReturnFreebetGrant(ctx context.Context, owner FreebetOwner, grantID string) error {
	n, err := affected("return freebet grant")(s.conn(ctx).ExecContext(ctx, "UPDATE freebet_grants SET state = ?, spent_at = NULL"+
		" WHERE operator = ? AND player_id = ? AND currency = ? AND grant_id = ? AND state = ?",
		FreebetOpen, owner.Operator, owner.PlayerID, owner.Currency, grantID, FreebetSpent))
	if err != nil {
		return err
	}
	if n == 0 {
		return ErrFreebetGrantNotSpent
	}
	return nil
}
