package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"
)

// Errors of RedeemTicket: why no row was redeemed. Exactly one applies; a used
// ticket reports ErrTicketUsed even once it has also expired.
var (
	ErrTicketNotFound = errors.New("store: ticket not found")
	ErrTicketUsed     = errors.New("store: ticket already used")
	ErrTicketExpired  = errors.New("store: ticket expired")
)

// Millis is an instant stored as BIGINT Unix milliseconds (UTC), so that both
// dialects store, compare and return exactly the same value. Zero means unset
// (stored as NULL where the column is nullable and tagged nullzero).
type Millis int64

// MillisOf returns t truncated to the millisecond, and 0 for the zero
// time.Time (the inverse of Time).
func MillisOf(t time.Time) Millis {
	if t.IsZero() {
		return 0
	}
	return Millis(t.UnixMilli())
}

// Time returns the instant in UTC, or the zero time.Time for zero.
func (m Millis) Time() time.Time {
	if m == 0 {
		return time.Time{}
	}
	return time.UnixMilli(int64(m)).UTC()
}

// TicketRecord is one launch ticket as stored: the session it carries, keyed by
// the SHA-256 of the raw ticket (the raw ticket itself is never stored).
type TicketRecord struct {
	bun.BaseModel `bun:"table:tickets"`

	Hash       []byte `bun:"hash,pk"` // SHA-256 of the raw ticket, 32 bytes
	Operator   string `bun:"operator"`
	GameID     string `bun:"game_id"`
	Token      string `bun:"token"`
	PlayerID   string `bun:"player_id"`
	Currency   string `bun:"currency"`
	Language   string `bun:"language"`
	PlayerName string `bun:"player_name"`
	Theme      string `bun:"theme"`
	Demo       bool   `bun:"demo"`
	Mobile     bool   `bun:"mobile"`
	LobbyURL   string `bun:"lobby_url"`
	DepositURL string `bun:"deposit_url"`
	CreatedAt  Millis `bun:"created_at"`
	ExpiresAt  Millis `bun:"expires_at"`       // valid while now < ExpiresAt
	UsedAt     Millis `bun:"used_at,nullzero"` // zero (NULL) until redeemed
	// Controls are stored in their own table, and only when one is on.
	Controls TicketControls `bun:"-"`
}

// TicketControls are the responsible gambling controls a ticket carries to its
// session (table ticket_controls, migration 0005); the zero value is every
// control off, and is not stored.
type TicketControls struct {
	bun.BaseModel `bun:"table:ticket_controls"`

	Hash                []byte `bun:"hash,pk"`
	SessionClock        bool   `bun:"session_clock"`
	RealityCheckMinutes int    `bun:"reality_check_minutes"` // 0: off
	InactivityMinutes   int    `bun:"inactivity_minutes"`    // 0: off
	ExpiresAt           Millis `bun:"expires_at"`            // the ticket's
}

// On reports whether any control is switched on.
func (c TicketControls) On() bool {
	return c.SessionClock || c.RealityCheckMinutes > 0 || c.InactivityMinutes > 0
}

// ticketColumns is the RETURNING list: every column of TicketRecord.
const ticketColumns = "hash, operator, game_id, token, player_id, currency, language, player_name, theme, " +
	"demo, mobile, lobby_url, deposit_url, created_at, expires_at, used_at"

// InsertTicket stores a newly issued ticket. A ticket whose hash is already
// stored is refused with an error (it would mean a broken random source).
func (s *Store) InsertTicket(ctx context.Context, rec *TicketRecord) error {
	switch {
	case len(rec.Hash) != sha256.Size:
		return fmt.Errorf("store: insert ticket: hash is %d bytes, want %d", len(rec.Hash), sha256.Size)
	case rec.CreatedAt == 0 || rec.ExpiresAt <= rec.CreatedAt:
		return fmt.Errorf("store: insert ticket: expires_at %d must follow created_at %d", rec.ExpiresAt, rec.CreatedAt)
	case rec.UsedAt != 0:
		return errors.New("store: insert ticket: a new ticket cannot be used already")
	}
	return s.writeTicket(ctx, rec)
}

// RedeemTicket marks the ticket with this hash used at now and returns it, if
// and only if it exists, is unused and now is before its expiry. The decision
// is one conditional UPDATE, so of any number of concurrent redemptions of one
// ticket, on any number of processes, exactly one succeeds.
//
// Otherwise it returns ErrTicketNotFound, ErrTicketUsed or ErrTicketExpired
// (told apart by a read after the decision) or another error.
func (s *Store) RedeemTicket(ctx context.Context, hash []byte, now time.Time) (*TicketRecord, error) {
	at := MillisOf(now)
	rec := new(TicketRecord)
	err := s.db.NewRaw(
		"UPDATE tickets SET used_at = ? WHERE hash = ? AND used_at IS NULL AND expires_at > ? RETURNING "+ticketColumns,
		at, hash, at,
	).Scan(ctx, rec)
	switch {
	case err == nil:
		err = s.db.NewSelect().Model(&rec.Controls).Where("hash = ?", hash).Scan(ctx)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			rec.Controls = TicketControls{} // every control off
		case err != nil:
			// The ticket is spent; a retry answers ErrTicketUsed, so the
			// player is launched again rather than let in without controls.
			return nil, fmt.Errorf("store: redeem ticket: read its controls: %w", err)
		}
		return rec, nil
	case !errors.Is(err, sql.ErrNoRows):
		return nil, fmt.Errorf("store: redeem ticket: %w", err)
	}

	// Nothing redeemed: say why. The decision is already taken; this read only
	// classifies it, and the states it reads never go back (used stays used,
	// expired stays expired), except that housekeeping may delete the row.
	var (
		usedAt    sql.NullInt64
		expiresAt int64
	)
	err = s.db.QueryRowContext(ctx, "SELECT used_at, expires_at FROM tickets WHERE hash = ?", hash).Scan(&usedAt, &expiresAt)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, ErrTicketNotFound
	case err != nil:
		return nil, fmt.Errorf("store: redeem ticket: classify refusal: %w", err)
	case usedAt.Valid:
		return nil, ErrTicketUsed
	case Millis(expiresAt) <= at:
		return nil, ErrTicketExpired
	default:
		return nil, fmt.Errorf("store: redeem ticket: no row updated but ticket is unused and unexpired (expires_at %d, now %d)",
			expiresAt, at)
	}
}

// DeleteExpiredTickets deletes every ticket, used or not, whose expiry is
// strictly before before, and reports how many. A deleted ticket redeems as
// ErrTicketNotFound, which still refuses it.
func (s *Store) DeleteExpiredTickets(ctx context.Context, before time.Time) (int64, error) {
	if _, err := s.db.ExecContext(ctx, "DELETE FROM ticket_controls WHERE expires_at < ?", MillisOf(before)); err != nil {
		return 0, fmt.Errorf("store: delete expired ticket controls: %w", err)
	}
	return affected("delete expired tickets")(s.db.ExecContext(ctx, "DELETE FROM tickets WHERE expires_at < ?", MillisOf(before)))
}
