package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/uptrace/bun"
)

// Round states as stored. A round is betting, then flying, then finished (it
// crashed) or void (it ended without a crash: its bets were rolled back).
const (
	RoundBetting  = "betting"
	RoundFlying   = "flying"
	RoundFinished = "finished"
	RoundVoid     = "void"
)

// Errors of the round and chain reads.
var (
	ErrRoundNotFound = errors.New("store: round not found")
	ErrChainNotFound = errors.New("store: chain not found")
)

// RoundRecord is one round as stored.
type RoundRecord struct {
	bun.BaseModel `bun:"table:rounds"`

	ID            string `bun:"id,pk"`
	GameID        string `bun:"game_id"`
	Seq           int64  `bun:"seq"`
	Hash          string `bun:"hash"` // secret until the round crashed
	Salt          string `bun:"salt"` // the published salt it was drawn with
	CrashPoint    int64  `bun:"crash_point"`
	RTPBasisPts   int64  `bun:"rtp_bp"`
	MaxMultiplier int64  `bun:"max_multiplier"`
	Status        string `bun:"status"`
	BettingEndsAt Millis `bun:"betting_ends_at"`
	StartedAt     Millis `bun:"started_at,nullzero"`
	CrashedAt     Millis `bun:"crashed_at,nullzero"`
	CreatedAt     Millis `bun:"created_at"`
	// Epoch is the fencing epoch of the leader that opened the round (its
	// lease, leases.go); 0 for a round opened before leases.
	Epoch int64 `bun:"epoch"`
}

// ChainRecord is the current hash chain of a game. Seed is secret.
type ChainRecord struct {
	bun.BaseModel `bun:"table:chains"`

	GameID    string `bun:"game_id,pk"`
	Seed      string `bun:"seed"`
	FirstSeq  int64  `bun:"first_seq"`
	Length    int64  `bun:"length"`
	Terminal  string `bun:"terminal"`
	Salt      string `bun:"salt"`
	CreatedAt Millis `bun:"created_at"`
}

// Chain returns the current chain of a game, or ErrChainNotFound.
func (s *Store) Chain(ctx context.Context, gameID string) (ChainRecord, error) {
	rec, err := rowWhere[ChainRecord](ctx, s.conn(ctx), "game_id", gameID, ErrChainNotFound, "read chain")
	if err != nil {
		return ChainRecord{}, err
	}
	return *rec, nil
}

// SaveChain makes rec the current chain of its game, replacing the one before.
func (s *Store) SaveChain(ctx context.Context, rec ChainRecord) error {
	_, err := s.conn(ctx).NewInsert().Model(&rec).On("CONFLICT (game_id) DO UPDATE").
		Set("seed = EXCLUDED.seed, first_seq = EXCLUDED.first_seq, length = EXCLUDED.length, terminal = EXCLUDED.terminal, salt = EXCLUDED.salt, created_at = EXCLUDED.created_at").
		Exec(ctx)
	if err != nil {
		return fmt.Errorf("store: save chain of %s: %w", rec.GameID, err)
	}
	return nil
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
	return s.setRound(ctx, id, RoundFlying, "started_at", at)
}

// FinishRound marks a round finished: it crashed at crashedAt.
func (s *Store) FinishRound(ctx context.Context, id string, crashedAt Millis) error {
	return s.setRound(ctx, id, RoundFinished, "crashed_at", crashedAt)
}

// setRound sets a round's status and the time column that goes with it.
func (s *Store) setRound(ctx context.Context, id, status, column string, at Millis) error {
	_, err := s.conn(ctx).NewUpdate().Model((*RoundRecord)(nil)).
		Set("status = ?", status).Set("? = ?", bun.Ident(column), at).
		Where("id = ?", id).Exec(ctx)
	if err != nil {
		return fmt.Errorf("store: round %s %s: %w", id, status, err)
	}
	return nil
}

// VoidRounds marks rounds void.
func (s *Store) VoidRounds(ctx context.Context, ids ...string) error {
	if len(ids) == 0 {
		return nil
	}
	_, err := s.conn(ctx).NewUpdate().Model((*RoundRecord)(nil)).Set("status = ?", RoundVoid).
		Where("id IN (?)", bun.List(ids)).Exec(ctx)
	if err != nil {
		return fmt.Errorf("store: void %d rounds: %w", len(ids), err)
	}
	return nil
}

// UnfinishedRounds lists the ids of a game's rounds still betting or flying.
func (s *Store) UnfinishedRounds(ctx context.Context, gameID string) ([]string, error) {
	ids := make([]string, 0)
	err := s.conn(ctx).NewSelect().Model((*RoundRecord)(nil)).Column("id").Where("game_id = ?", gameID).
		Where("status IN (?)", bun.List([]string{RoundBetting, RoundFlying})).Order("seq").Scan(ctx, &ids)
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
		Where("game_id = ?", gameID).Where("status IN (?)", bun.List([]string{RoundFinished, RoundVoid})).
		OrderExpr("seq DESC").Limit(int64(limit)).Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("store: recent rounds of %s: %w", gameID, err)
	}
	return out, nil
}

// Round returns one round of a game whatever its state, or ErrRoundNotFound.
// The caller decides what of it may be shown: the hash of a round that has not
// crashed is secret.
func (s *Store) Round(ctx context.Context, gameID, id string) (RoundRecord, error) {
	var r RoundRecord
	err := s.conn(ctx).NewSelect().Model(&r).Where("id = ?", id).Where("game_id = ?", gameID).Scan(ctx)
	if err := one(err, ErrRoundNotFound, "read round"); err != nil {
		return r, err
	}
	return r, nil
}
