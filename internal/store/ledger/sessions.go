package ledger

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"
)

// SessionRecord is a row of sessions: a session token issued to the game.
type SessionRecord struct {
	bun.BaseModel `bun:"table:sessions"`

	Token     string `bun:"token,pk"`
	PlayerID  string `bun:"player_id"`
	CreatedAt int64  `bun:"created_at"` // Unix ms
	ExpiresAt int64  `bun:"expires_at"` // Unix ms
	Revoked   bool   `bun:"revoked"`
}

// InsertSession inserts a session.
func (s *Store) InsertSession(ctx context.Context, sess *SessionRecord) error {
	if _, err := s.conn(ctx).NewInsert().Model(sess).Exec(ctx); err != nil {
		return fmt.Errorf("ledger: insert session: %w", err)
	}
	return nil
}

// Session reads the session of a token; ErrNotFound if there is none. The
// token is never part of the error.
func (s *Store) Session(ctx context.Context, token string) (*SessionRecord, error) {
	r := new(SessionRecord)
	err := s.queryRow(ctx, "session", "read session", []any{token},
		&r.Token, &r.PlayerID, &r.CreatedAt, &r.ExpiresAt, &r.Revoked)
	if err != nil {
		return nil, err
	}
	return r, nil
}

// RevokeSession marks a token revoked; ErrNotFound if there is no such token.
func (s *Store) RevokeSession(ctx context.Context, token string) error {
	return s.endSession(ctx, token, "revoked = ?", true)
}

// ExpireSession moves a token's expiry to at (Unix ms); ErrNotFound if there
// is no such token.
func (s *Store) ExpireSession(ctx context.Context, token string, at int64) error {
	return s.endSession(ctx, token, "expires_at = ?", at)
}

func (s *Store) endSession(ctx context.Context, token, set string, arg any) error {
	res, err := s.conn(ctx).NewUpdate().Model((*SessionRecord)(nil)).Set(set, arg).
		Where("token = ?", token).Exec(ctx)
	return changedOne(res, err, "end session", ErrNotFound)
}
