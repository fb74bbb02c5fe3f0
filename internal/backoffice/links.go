package backoffice

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/crashstudio/crashgame/internal/engine"
)

// DefaultLinkTTL is how long a signed link stays valid by default.
const DefaultLinkTTL = 7 * 24 * time.Hour

// Link is a signed link as stored: the SHA-256 of its token, never the token,
// and what it shows to whom until when.
type Link struct {
	IDHash   []byte
	Operator string
	Kind     string // LinkRound or LinkTransactions
	// RoundID and PlayerID (all players when "") are a round link's.
	RoundID, PlayerID string
	// From, To and Status are an export's (TransactionQuery).
	From, To  time.Time
	Status    string
	CreatedAt time.Time
	ExpiresAt time.Time
}

// The kinds of link.
const (
	LinkRound        = "round"        // a round's support page
	LinkTransactions = "transactions" // a CSV export of transactions
)

// ErrLinkNotFound: the link is unknown, of another kind, or has expired.
var ErrLinkNotFound = errors.New("backoffice: the link is unknown or has expired")

// ErrRoundInProgress: the round has not ended; its replay would show its
// outcome.
var ErrRoundInProgress = errors.New("backoffice: the round has not ended")

// newToken returns a random link token and the SHA-256 that is stored.
func newToken() (token string, hash []byte) {
	var b [32]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	token = base64.RawURLEncoding.EncodeToString(b[:])
	return token, tokenHash(token)
}

func tokenHash(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}

// RoundLink makes a link to the support page of round id for operator,
// showing only playerID's bets when it is set; the round must be one
// RoundDetails would answer (else its error). It returns the token, which
// only the caller ever sees, and when the link expires.
func (s *Service) RoundLink(ctx context.Context, operator, id, playerID string, now time.Time) (string, time.Time, error) {
	if _, _, err := s.RoundDetails(ctx, operator, id, playerID); err != nil {
		return "", time.Time{}, err
	}
	token, hash := newToken()
	expires := now.Add(s.ttl)
	rec := Link{IDHash: hash, Operator: operator, Kind: LinkRound, RoundID: id, PlayerID: playerID,
		CreatedAt: now, ExpiresAt: expires}
	if err := s.records.InsertLink(ctx, rec); err != nil {
		return "", time.Time{}, fmt.Errorf("backoffice: %w", err)
	}
	return token, expires, nil
}

// OpenRoundLink returns what a round link shows, as RoundDetails answers it
// now, and when the link expires.
func (s *Service) OpenRoundLink(ctx context.Context, token string, now time.Time) (Round, []Bet, time.Time, error) {
	rec, err := s.open(ctx, token, LinkRound, now)
	if err != nil {
		return Round{}, nil, time.Time{}, err
	}
	round, bets, err := s.RoundDetails(ctx, rec.Operator, rec.RoundID, rec.PlayerID)
	return round, bets, rec.ExpiresAt, err
}

// TransactionsLink makes a link to a CSV export of the transactions q
// selects (its cursor and limit are not kept: an export holds the range).
func (s *Service) TransactionsLink(ctx context.Context, q TransactionQuery, now time.Time) (string, time.Time, error) {
	q.Cursor, q.Limit = "", 0
	if err := q.Check(); err != nil {
		return "", time.Time{}, err
	}
	token, hash := newToken()
	expires := now.Add(s.ttl)
	rec := Link{IDHash: hash, Operator: q.Operator, Kind: LinkTransactions, Status: q.Status,
		From: q.From, To: q.To, CreatedAt: now, ExpiresAt: expires}
	if err := s.records.InsertLink(ctx, rec); err != nil {
		return "", time.Time{}, fmt.Errorf("backoffice: %w", err)
	}
	return token, expires, nil
}

// OpenTransactionsLink returns the query an export link stands for.
func (s *Service) OpenTransactionsLink(ctx context.Context, token string, now time.Time) (TransactionQuery, error) {
	rec, err := s.open(ctx, token, LinkTransactions, now)
	if err != nil {
		return TransactionQuery{}, err
	}
	return TransactionQuery{Operator: rec.Operator, From: rec.From, To: rec.To, Status: rec.Status}, nil
}

// open reads a link of kind that has not expired at now.
func (s *Service) open(ctx context.Context, token, kind string, now time.Time) (Link, error) {
	rec, err := s.records.Link(ctx, tokenHash(token))
	switch {
	case errors.Is(err, ErrLinkNotFound):
		return rec, ErrLinkNotFound
	case err != nil:
		return rec, fmt.Errorf("backoffice: %w", err)
	case rec.Kind != kind || !now.Before(rec.ExpiresAt):
		return rec, ErrLinkNotFound
	}
	return rec, nil
}

// PlayerRound returns an ended round of game with the bets mine selects (a
// player's own, by operator and player id, or by session for a demo), for
// the player's last-game recall; their wallet calls are not shown.
func (s *Service) PlayerRound(ctx context.Context, game, id string, mine BetQuery) (Round, []StoredBet, error) {
	rec, err := s.records.Round(ctx, game, id)
	switch {
	case errors.Is(err, ErrRoundNotFound):
		return Round{}, nil, ErrRoundNotFound
	case err != nil:
		return Round{}, nil, fmt.Errorf("backoffice: round %s: %w", id, err)
	case rec.Status != engine.RoundFinished && rec.Status != engine.RoundVoid:
		return Round{}, nil, ErrRoundInProgress
	}
	round, err := s.roundOf(ctx, rec)
	if err != nil {
		return Round{}, nil, err
	}
	mine.RoundIDs = []string{id}
	bets, err := s.records.Bets(ctx, mine)
	if err != nil {
		return Round{}, nil, fmt.Errorf("backoffice: bets of round %s: %w", id, err)
	}
	return round, bets, nil
}
