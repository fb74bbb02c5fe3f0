// Package tickets owns launch tickets: the credential POST /v1/launch puts in
// the launch URL in exchange for the operator's token and player_id. A ticket
// is random (256 bits from crypto/rand), stored only as its SHA-256, single use,
// and valid for 15 minutes from issue.
//
// It must never store, log or put in an error the raw ticket, and never derive a
// ticket from the session it carries (token, player_id): a ticket says nothing
// about the player, it only points to the stored session. It knows nothing of
// HTTP or of how the session is used once redeemed.
//
// Expiry: a ticket issued at T redeems while now < T+TTL; at exactly T+15:00.000
// it is expired (14:59.999 still opens).
package tickets

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"
)

const (
	// TTL is how long an issued ticket can be redeemed (contract: 15 minutes).
	TTL = 15 * time.Minute
	// Prefix starts every ticket, so a ticket is told apart from a legacy
	// operator token arriving in the same sid parameter.
	Prefix = "tk_"

	secretBytes = 32 // 256 bits of crypto/rand
)

// encoding is base64url without padding; Strict refuses non-canonical
// trailing bits, so each 32-byte secret has exactly one ticket string.
var encoding = base64.RawURLEncoding.Strict()

// Player-facing refusals of Redeem. Any other error is an internal failure.
var (
	ErrUnknown = errors.New("tickets: unknown ticket")
	ErrUsed    = errors.New("tickets: ticket already used")
	ErrExpired = errors.New("tickets: ticket expired")
)

// Session is what a ticket carries: the launch request, minus its envelope.
type Session struct {
	Operator, GameID, Token, PlayerID, Currency, Language, PlayerName, Theme string
	Demo, Mobile                                                             bool
	LobbyURL, DepositURL                                                     string
	Controls                                                                 Controls
}

// Controls are the responsible gambling controls a launch switched on for its
// session; the zero value is every control off.
type Controls struct {
	SessionClock        bool // show the session clock and the net position
	RealityCheckMinutes int  // 0: no reality check
	InactivityMinutes   int  // 0: no inactivity timeout
}

// Stored is an issued ticket as its repository keeps it: the session it
// carries, under the SHA-256 of the raw ticket (never the ticket itself), and
// when it was issued and stops being valid.
type Stored struct {
	Hash      []byte
	Session   Session
	CreatedAt time.Time
	ExpiresAt time.Time // valid while now is before it
}

// Repository stores tickets: the tickets table, in package store
// ((*store.Store).Tickets). Redeem must be atomic: of concurrent redemptions
// of one hash exactly one succeeds; the others, and a redemption of a hash
// never stored, expired or used, answer an error that wraps ErrUnknown,
// ErrUsed or ErrExpired.
type Repository interface {
	Insert(ctx context.Context, t Stored) error
	Redeem(ctx context.Context, hash []byte, now time.Time) (Session, error)
}

// Service issues and redeems tickets. It is safe for concurrent use.
type Service struct {
	repo Repository
	now  func() time.Time
}

// New returns a Service over repo. now is the clock (time.Now when nil);
// tests inject their own.
func New(repo Repository, now func() time.Time) *Service {
	if now == nil {
		now = time.Now
	}
	return &Service{repo: repo, now: now}
}

// Issue stores sess under a new ticket, valid for TTL from now, and returns
// the raw ticket: the only place it ever exists. A session that is not demo
// needs a token and a player id; every session needs an operator and a game.
func (s *Service) Issue(ctx context.Context, sess Session) (raw string, err error) {
	if err := validate(sess); err != nil {
		return "", fmt.Errorf("tickets: issue: %w", err)
	}
	secret := make([]byte, secretBytes)
	_, _ = rand.Read(secret) // Go 1.24+: always fills secret or crashes the program, never returns an error
	raw = Prefix + encoding.EncodeToString(secret)

	now := s.now()
	t := Stored{Hash: hash(raw), Session: sess, CreatedAt: now, ExpiresAt: now.Add(TTL)}
	if err := s.repo.Insert(ctx, t); err != nil {
		return "", fmt.Errorf("tickets: issue: %w", err)
	}
	return raw, nil
}

// Redeem uses the ticket and returns the session it carries. It succeeds once
// per ticket, within TTL of issue; otherwise it returns ErrUnknown (malformed
// or never issued), ErrUsed, ErrExpired, or a wrapped internal error.
func (s *Service) Redeem(ctx context.Context, raw string) (Session, error) {
	if !IsTicket(raw) {
		return Session{}, ErrUnknown
	}
	sess, err := s.repo.Redeem(ctx, hash(raw), s.now())
	switch {
	case errors.Is(err, ErrUnknown):
		return Session{}, ErrUnknown
	case errors.Is(err, ErrUsed):
		return Session{}, ErrUsed
	case errors.Is(err, ErrExpired):
		return Session{}, ErrExpired
	case err != nil:
		return Session{}, fmt.Errorf("tickets: redeem: %w", err)
	}
	return sess, nil
}

// IsTicket reports whether s has the shape of a ticket: Prefix followed by the
// canonical unpadded base64url encoding of 32 bytes. It says nothing about
// whether the ticket was issued; anything else (a legacy token) is not one.
func IsTicket(s string) bool {
	body, ok := strings.CutPrefix(s, Prefix)
	if !ok || len(body) != encoding.EncodedLen(secretBytes) {
		return false
	}
	b, err := encoding.DecodeString(body)
	return err == nil && len(b) == secretBytes
}

// hash is what the store keys a ticket by: SHA-256 of the raw ticket string.
func hash(raw string) []byte {
	h := sha256.Sum256([]byte(raw))
	return h[:]
}

func validate(sess Session) error {
	var missing []string
	if sess.Operator == "" {
		missing = append(missing, "operator")
	}
	if sess.GameID == "" {
		missing = append(missing, "game_id")
	}
	if !sess.Demo && sess.Token == "" {
		missing = append(missing, "token")
	}
	if !sess.Demo && sess.PlayerID == "" {
		missing = append(missing, "player_id")
	}
	if len(missing) > 0 {
		return fmt.Errorf("session without %s", strings.Join(missing, ", "))
	}
	return nil
}
