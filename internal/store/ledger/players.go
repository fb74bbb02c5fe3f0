package ledger

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"
)

// PlayerRecord is a row of players: an account and its balance in cents.
type PlayerRecord struct {
	bun.BaseModel `bun:"table:players"`

	PlayerID  string `bun:"player_id,pk"`
	Name      string `bun:"name"`
	Currency  string `bun:"currency"`
	Balance   int64  `bun:"balance"`
	Blocked   bool   `bun:"blocked"`
	CreatedAt int64  `bun:"created_at"` // Unix ms
}

// InsertPlayer inserts p. A player with the same id is left as it is and the
// answer is ErrDuplicate.
func (s *Store) InsertPlayer(ctx context.Context, p *PlayerRecord) error {
	res, err := s.conn(ctx).NewInsert().Model(p).On("CONFLICT (player_id) DO NOTHING").Exec(ctx)
	if err != nil {
		return fmt.Errorf("ledger: insert player: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return fmt.Errorf("ledger: insert player %s: %w", p.PlayerID, ErrDuplicate)
	}
	return nil
}

// Player reads one player; ErrNotFound if there is none.
func (s *Store) Player(ctx context.Context, playerID string) (*PlayerRecord, error) {
	p := new(PlayerRecord)
	err := s.queryRow(ctx, "player", "read player", []any{playerID},
		&p.PlayerID, &p.Name, &p.Currency, &p.Balance, &p.Blocked, &p.CreatedAt)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// Players lists every player by id.
func (s *Store) Players(ctx context.Context) ([]PlayerRecord, error) {
	var ps []PlayerRecord
	if err := s.conn(ctx).NewSelect().Model(&ps).Order("player_id").Scan(ctx); err != nil {
		return nil, fmt.Errorf("ledger: list players: %w", err)
	}
	return ps, nil
}

// AddBalance moves the player's balance by delta cents (negative: a debit) in
// one conditional UPDATE whose WHERE is the decision: it applies only if the
// player exists and the balance stays at or above zero. Otherwise nothing
// moves and the answer is ErrBalance.
func (s *Store) AddBalance(ctx context.Context, playerID string, delta int64) error {
	res, err := s.exec(ctx, "addBalance", delta, playerID, delta)
	return changedOne(res, err, "update balance", ErrBalance)
}

// SetBlocked sets (or clears) the player's blocked flag; ErrNotFound if there
// is no such player.
func (s *Store) SetBlocked(ctx context.Context, playerID string, blocked bool) error {
	res, err := s.conn(ctx).NewUpdate().Model((*PlayerRecord)(nil)).Set("blocked = ?", blocked).
		Where("player_id = ?", playerID).Exec(ctx)
	return changedOne(res, err, "block player", ErrNotFound)
}
