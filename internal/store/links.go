package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/uptrace/bun"
)

// Kinds of back office links.
const (
	LinkRound        = "round"        // a round's support page
	LinkTransactions = "transactions" // a CSV export of transactions
)

// ErrLinkNotFound: no link has that token's hash.
var ErrLinkNotFound = errors.New("store: link not found")

// LinkRecord is a signed link of the back office. IDHash is the SHA-256 of
// its token: the token itself is never stored.
type LinkRecord struct {
	bun.BaseModel `bun:"table:back_office_links"`

	IDHash    []byte `bun:"id_hash,pk"`
	Operator  string `bun:"operator"`
	Kind      string `bun:"kind"`
	RoundID   string `bun:"round_id"`
	PlayerID  string `bun:"player_id"`
	FromMS    Millis `bun:"from_ms"`
	ToMS      Millis `bun:"to_ms"`
	Status    string `bun:"status"`
	CreatedAt Millis `bun:"created_at"`
	ExpiresAt Millis `bun:"expires_at"`
}

// InsertLink stores a new link.
func (s *Store) InsertLink(ctx context.Context, rec LinkRecord) error {
	if _, err := s.conn(ctx).NewInsert().Model(&rec).Exec(ctx); err != nil {
		return fmt.Errorf("store: insert link: %w", err)
	}
	return nil
}

// Link returns the link whose token hashes to idHash, or ErrLinkNotFound.
// The caller decides whether it has expired.
func (s *Store) Link(ctx context.Context, idHash []byte) (LinkRecord, error) {
	rec, err := rowWhere[LinkRecord](ctx, s.conn(ctx), "id_hash", idHash, ErrLinkNotFound, "read link")
	if err != nil {
		return LinkRecord{}, err
	}
	return *rec, nil
}
