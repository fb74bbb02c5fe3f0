package store

import (
	"context"
	"fmt"

	"github.com/crashstudio/crashgame/internal/engine"
	"github.com/uptrace/bun"
)

// RoundRecord is one round as stored.
type RoundRecord struct {
	bun.BaseModel `bun:"table:rounds"`

	ID     string `bun:"id,pk"`
	GameID string `bun:"game_id"`
	Seq    int64  `bun:"seq"`
	// ChainID and Position say which hash of which chain the round uses
	// (position = seq - the chain's first_seq + 1); its settings are the
	// chain's.
	ChainID  string `bun:"chain_id,nullzero"`
	Position int64  `bun:"chain_position,nullzero"`
	// Hash and CrashPoint are written when the round ends (crashed or void),
	// never before: "" and 0 until then.
	Hash          string `bun:"hash,nullzero"`
	CrashPoint    int64  `bun:"crash_point,nullzero"`
	Status        string `bun:"status"`
	BettingEndsAt Millis `bun:"betting_ends_at"`
	StartedAt     Millis `bun:"started_at,nullzero"`
	// CrashedAt is the crash of a finished round; a void round never
	// crashed: VoidedAt is its end (0 only for a round voided before
	// migration 0012 whose end was not stored) and VoidRule the rule that
	// settled it.
	CrashedAt Millis `bun:"crashed_at,nullzero"`
	VoidedAt  Millis `bun:"voided_at,nullzero"`
	VoidRule  string `bun:"void_rule,nullzero"`
	CreatedAt Millis `bun:"created_at"`
	// Epoch is the fencing epoch of the leader that opened the round (its
	// lease, leases.go); 0 for a round opened before leases.
	Epoch int64 `bun:"epoch"`
}

// LastRoundSeq returns the highest round number of a game, 0 when it has none.
func (s *Store) LastRoundSeq(ctx context.Context, gameID string) (int64, error) {
	var seq int64
	err := s.conn(ctx).NewSelect().Model((*RoundRecord)(nil)).ColumnExpr("COALESCE(MAX(seq), 0)").
		Where("game_id = ?", gameID).Scan(ctx, &seq)
	if err != nil {
		return 0, fmt.Errorf("store: last round of %s: %w", gameID, err)
	}
	return seq, nil
}

// InsertRound stores a new round, with the epoch of the leader that opens it.
func (s *Store) InsertRound(ctx context.Context, rec RoundRecord) error {
	if _, err := s.conn(ctx).NewInsert().Model(&rec).Exec(ctx); err != nil {
		return fmt.Errorf("store: insert round %s: %w", rec.ID, err)
	}
	return nil
}

// TakeOffRound marks a round flying since at.
func (s *Store) TakeOffRound(ctx context.Context, id string, at Millis) error {
	_, err := s.conn(ctx).NewUpdate().Model((*RoundRecord)(nil)).
		Set("status = ?", engine.RoundFlying).Set("started_at = ?", at).Where("id = ?", id).Exec(ctx)
	if err != nil {
		return fmt.Errorf("store: round %s flying: %w", id, err)
	}
	return nil
}

// FinishRound marks a round finished: it crashed at crashedAt, and its hash
// and crash point are revealed.
func (s *Store) FinishRound(ctx context.Context, id string, crashedAt Millis, hash string, crashPoint int64) error {
	_, err := s.conn(ctx).NewUpdate().Model((*RoundRecord)(nil)).
		Set("status = ?", engine.RoundFinished).Set("crashed_at = ?", crashedAt).
		Set("hash = ?", hash).Set("crash_point = ?", crashPoint).
		Where("id = ?", id).Exec(ctx)
	if err != nil {
		return fmt.Errorf("store: round %s finished: %w", id, err)
	}
	return nil
}

// VoidRound marks a round void at voidedAt, settled by rule (engine.VoidFailoverBetting...):
// it ended without a crash on screen. Its hash and crash point are revealed
// like a crashed round's, so that the chain has no gap.
func (s *Store) VoidRound(ctx context.Context, id, hash string, crashPoint int64, voidedAt Millis, rule string) error {
	_, err := s.conn(ctx).NewUpdate().Model((*RoundRecord)(nil)).Set("status = ?", engine.RoundVoid).
		Set("hash = ?", hash).Set("crash_point = ?", crashPoint).
		Set("voided_at = ?", voidedAt).Set("void_rule = ?", rule).
		Where("id = ?", id).Exec(ctx)
	if err != nil {
		return fmt.Errorf("store: void round %s: %w", id, err)
	}
	return nil
}

// UnfinishedRounds lists the ids of a game's rounds still betting or flying.
func (s *Store) UnfinishedRounds(ctx context.Context, gameID string) ([]string, error) {
	ids := make([]string, 0)
	err := s.conn(ctx).NewSelect().Model((*RoundRecord)(nil)).Column("id").Where("game_id = ?", gameID).
		Where("status IN (?)", bun.List([]string{engine.RoundBetting, engine.RoundFlying})).Order("seq").Scan(ctx, &ids)
	if err != nil {
		return nil, fmt.Errorf("store: unfinished rounds of %s: %w", gameID, err)
	}
	return ids, nil
}

// RecentRounds lists the ended rounds of a game, finished or void, newest
// first: every ended round reveals its hash, so the list's chain has no gap.
func (s *Store) RecentRounds(ctx context.Context, gameID string, limit int) ([]RoundRecord, error) {
	var out []RoundRecord
	err := s.conn(ctx).NewSelect().Model(&out).
		Where("game_id = ?", gameID).Where("status IN (?)", bun.List([]string{engine.RoundFinished, engine.RoundVoid})).
		OrderExpr("seq DESC").Limit(int64(limit)).Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("store: recent rounds of %s: %w", gameID, err)
	}
	return out, nil
}

// Round returns one round of a game whatever its state, or engine.ErrRoundNotFound.
// The caller decides what of it may be shown: the hash of a round that has not
// crashed is secret.
func (s *Store) Round(ctx context.Context, gameID, id string) (RoundRecord, error) {
	var r RoundRecord
	err := s.conn(ctx).NewSelect().Model(&r).Where("id = ?", id).Where("game_id = ?", gameID).Scan(ctx)
	if err := one(err, engine.ErrRoundNotFound, "read round"); err != nil {
		return r, err
	}
	return r, nil
}
