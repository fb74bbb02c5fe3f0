// Package backoffice answers an operator's support and finance teams: what
// happened in a round (its times, its outcome once revealed, the operator's
// bets in it and every wallet movement of those bets), a player's bet
// history, and the signed links (a round's support page, a CSV export) the
// operator hands to its staff; and a player's own view of a past round.
// It gives these values their published shapes, one function per shape
// (published.go), for the operator routes and the player API alike.
//
// It only reads, but for the links it records. It must never show one
// operator another operator's bets, players or movements, never reveal a
// round's hash or crash point before the round has ended, never store a
// link's token (only its SHA-256), and never show a player's session token.
package backoffice

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/crashstudio/crashgame/internal/cursor"
	"github.com/crashstudio/crashgame/internal/engine"
	"github.com/crashstudio/crashgame/internal/movements"
)

// Errors of the service.
var (
	// ErrRoundNotFound: no round of the operator's games has that id.
	ErrRoundNotFound = errors.New("backoffice: round not found")
	// ErrPlayerNotFound: the operator has no bet of that player in the round.
	ErrPlayerNotFound = errors.New("backoffice: no bet of that player in the round")
	// ErrInvalidQuery: a history or transactions query out of its bounds.
	ErrInvalidQuery = errors.New("invalid query")
)

// Records is what the service reads, and for the links writes, as this
// package's own types: the rounds, the bets (never their session token), the
// movements and their re-deliveries, the chains' salts and the links.
// (*store.Store).BackOffice implements it.
type Records interface {
	TransactionReader
	movements.MovementReader
	// Round is round id of game gameID; ErrRoundNotFound when there is none.
	Round(ctx context.Context, gameID, id string) (StoredRound, error)
	// ChainSalt is the salt of chain chainID, "" while it is not fixed.
	ChainSalt(ctx context.Context, chainID string) (string, error)
	// Bets are the bets f selects, in its order.
	Bets(ctx context.Context, f BetQuery) ([]StoredBet, error)
	// InsertLink stores a new link; Link reads one by the SHA-256 of its
	// token (ErrLinkNotFound when there is none).
	InsertLink(ctx context.Context, l Link) error
	Link(ctx context.Context, idHash []byte) (Link, error)
	// PurgeSettled deletes up to limit bets of rounds that ended before
	// before, with their movements, once their money is settled, and says
	// how many it deleted.
	PurgeSettled(ctx context.Context, before time.Time, limit int) (int, error)
}

// StoredRound is a round as stored. Hash and CrashPoint are "" and 0 until
// it ends; the zero time.Time is an instant not reached (or not stored).
type StoredRound struct {
	ID, GameID    string
	Seq           int64
	ChainID       string // "" for a round of no chain
	Position      int64
	Hash          string
	CrashPoint    int64
	Status        string // an engine.Round* state
	BettingEndsAt time.Time
	StartedAt     time.Time
	CrashedAt     time.Time // of a finished round
	VoidedAt      time.Time // of a void round (zero for one voided before it was stored)
	CreatedAt     time.Time
}

// StoredBet is a bet as stored, without its session token, which the back
// office never reads.
type StoredBet struct {
	ID, RoundID, GameID string
	Operator, PlayerID  string
	PlayerName          string // masked
	Currency            string
	Demo                bool
	Amount              int64 // cents
	AutoCashout         int64 // 0: none
	FreebetID           *string
	Status              string // pending, accepted, refused, won, lost, cancelled, void
	Multiplier          int64  // of a cashout
	Payout              *int64 // of a settled bet
	Refusal             string // the wallet's error_code of a refused debit
	OperatorTxID        string
	PlacedAt            time.Time
	SettledAt           time.Time // zero until settled
}

// BetQuery selects bets: empty fields select everything. PlacedFrom (when
// not zero) and PlacedBefore bound placed_at; AfterPlaced and AfterID, when
// AfterID is set, select the bets strictly after that bet in the order
// (placed_at, id), ascending: a cursor of pages.
type BetQuery struct {
	RoundIDs     []string
	GameID       string
	SessionHash  []byte // a demo session's bets
	Operator     string
	PlayerID     string
	PlacedFrom   time.Time
	PlacedBefore time.Time
	AfterPlaced  time.Time
	AfterID      string
	Limit        int // 0: no limit
}

// Service reads the records for the back office.
type Service struct {
	records Records
	// games are the game ids each operator may see.
	games     map[string][]string
	ttl       time.Duration // of a signed link
	retention time.Duration // 0: forever
}

// Config is what the service is built from.
type Config struct {
	Records Records
	Games   map[string][]string // the game ids each operator may see
	LinkTTL time.Duration       // how long a signed link is valid (0: DefaultLinkTTL)
	// Retention is how long the bets and movements of an ended round are
	// kept once their money is settled (0: forever). See Purge.
	Retention time.Duration
}

// New returns the service of cfg.
func New(cfg Config) *Service {
	if cfg.LinkTTL <= 0 {
		cfg.LinkTTL = DefaultLinkTTL
	}
	return &Service{records: cfg.Records, games: cfg.Games, ttl: cfg.LinkTTL, retention: cfg.Retention}
}

// purgeBatch bounds one transaction of Purge.
const purgeBatch = 1000

// Purge applies the retention at now: the bets of rounds that ended more
// than Retention ago, with their movements, once their money is settled
// (Records.PurgeSettled), in batches, until none is left or ctx ends. The
// rounds stay: the chain's public record. It does nothing without a
// retention, and returns how many bets it purged.
func (s *Service) Purge(ctx context.Context, now time.Time) (int, error) {
	if s.retention <= 0 {
		return 0, nil
	}
	before := now.Add(-s.retention)
	total := 0
	for ctx.Err() == nil {
		n, err := s.records.PurgeSettled(ctx, before, purgeBatch)
		if err != nil {
			return total, fmt.Errorf("backoffice: retention: %w", err)
		}
		if total += n; n < purgeBatch {
			break
		}
	}
	return total, nil
}

// Phase is one change of a round's phase.
type Phase struct {
	Name string // betting, flying, crashed, void
	At   time.Time
}

// Round is a round as the back office shows it. Hash, CrashPoint and Salt
// are set only once the round has ended.
type Round struct {
	ID, GameID    string
	Seq           int64
	Status        string // betting, flying, finished, void
	Phases        []Phase
	BettingEndsAt time.Time
	CrashPoint    int64
	Hash          string
	ChainID       string
	Position      int64
	Salt          string
}

// Bet is one bet with every wallet movement of it: its debit (/bet, whose
// transaction_id is the bet's id) and the /win or /rollback that settles it.
type Bet struct {
	StoredBet
	Movements []Movement
}

// Movement is one wallet call of a bet.
type Movement struct {
	TransactionID string
	Kind          string // bet, win, rollback
	Amount        int64
	// Status: delivered, pending, exhausted or refused (a debit: refused
	// when the wallet refused the bet, pending while its outcome is not
	// known, delivered otherwise).
	Status       string
	OperatorTxID string
	Attempts     int
	LastError    string
	WinType      string
	Reason       string
	CreatedAt    time.Time
	DeliveredAt  time.Time
	Redeliveries []movements.Redelivery
}

// RoundDetails returns round id as the operator sees it, with its bets
// (those of playerID only, when not "") and their movements.
func (s *Service) RoundDetails(ctx context.Context, operator, id, playerID string) (Round, []Bet, error) {
	var rec StoredRound
	found := false
	for _, g := range s.games[operator] {
		r, err := s.records.Round(ctx, g, id)
		if errors.Is(err, ErrRoundNotFound) {
			continue
		}
		if err != nil {
			return Round{}, nil, fmt.Errorf("backoffice: round %s: %w", id, err)
		}
		rec, found = r, true
		break
	}
	if !found {
		return Round{}, nil, ErrRoundNotFound
	}
	round, err := s.roundOf(ctx, rec)
	if err != nil {
		return Round{}, nil, err
	}
	recs, err := s.records.Bets(ctx, BetQuery{RoundIDs: []string{id}, Operator: operator, PlayerID: playerID})
	if err != nil {
		return Round{}, nil, fmt.Errorf("backoffice: bets of round %s: %w", id, err)
	}
	if playerID != "" && len(recs) == 0 {
		return Round{}, nil, ErrPlayerNotFound
	}
	bets, err := s.withMovements(ctx, operator, recs)
	return round, bets, err
}

// roundOf shows a round, its outcome only once it ended.
func (s *Service) roundOf(ctx context.Context, r StoredRound) (Round, error) {
	out := Round{ID: r.ID, GameID: r.GameID, Seq: r.Seq, Status: r.Status, BettingEndsAt: r.BettingEndsAt,
		ChainID: r.ChainID, Position: r.Position, Phases: []Phase{{"betting", r.CreatedAt}}}
	if !r.StartedAt.IsZero() {
		out.Phases = append(out.Phases, Phase{"flying", r.StartedAt})
	}
	switch r.Status {
	case engine.RoundFinished:
		out.Phases = append(out.Phases, Phase{"crashed", r.CrashedAt})
	case engine.RoundVoid:
		out.Phases = append(out.Phases, Phase{"void", latest(r.StartedAt, r.BettingEndsAt, r.CrashedAt)})
	default:
		return out, nil // not ended: its outcome is secret
	}
	out.Hash, out.CrashPoint = r.Hash, r.CrashPoint
	if r.ChainID != "" {
		salt, err := s.records.ChainSalt(ctx, r.ChainID)
		if err != nil {
			return out, fmt.Errorf("backoffice: chain of round %s: %w", r.ID, err)
		}
		out.Salt = salt
	}
	return out, nil
}

// latest is the latest of ts.
func latest(ts ...time.Time) time.Time {
	var out time.Time
	for _, t := range ts {
		if t.After(out) {
			out = t
		}
	}
	return out
}

// withMovements attaches to each bet its debit and its settling movements.
func (s *Service) withMovements(ctx context.Context, operator string, recs []StoredBet) ([]Bet, error) {
	out := make([]Bet, len(recs))
	if len(recs) == 0 {
		return out, nil
	}
	ids := make([]string, len(recs))
	for i := range recs {
		ids[i] = recs[i].ID
	}
	mvs, err := s.records.ListMovements(ctx, movements.MovementFilter{Operator: operator, BetIDs: ids, Limit: 2 * len(ids)})
	if err != nil {
		return nil, fmt.Errorf("backoffice: movements of %d bets: %w", len(ids), err)
	}
	txIDs := make([]string, len(mvs))
	for i := range mvs {
		txIDs[i] = mvs[i].TransactionID
	}
	hist, err := s.records.RedeliveriesOf(ctx, txIDs)
	if err != nil {
		return nil, fmt.Errorf("backoffice: redeliveries: %w", err)
	}
	byBet := map[string][]movements.MovementRecord{}
	for _, m := range mvs {
		byBet[m.BetID] = append(byBet[m.BetID], m)
	}
	for i, b := range recs {
		out[i] = Bet{StoredBet: b, Movements: []Movement{debitOf(b)}}
		for _, m := range byBet[b.ID] {
			out[i].Movements = append(out[i].Movements, movementOf(m, hist[m.TransactionID]))
		}
	}
	return out, nil
}

// debitOf is a bet's /bet as a movement.
func debitOf(b StoredBet) Movement {
	m := Movement{TransactionID: b.ID, Kind: "bet", Amount: b.Amount, Status: "delivered", OperatorTxID: b.OperatorTxID,
		Attempts: 1, CreatedAt: b.PlacedAt}
	switch b.Status {
	case "pending":
		m.Status = "pending"
	case "refused":
		m.Status, m.LastError = "refused", b.Refusal
	}
	return m
}

func movementOf(m movements.MovementRecord, hist []movements.Redelivery) Movement {
	out := Movement{TransactionID: m.TransactionID, Kind: string(m.Kind), Amount: m.Amount, Status: string(m.Status),
		OperatorTxID: m.OperatorTxID, Attempts: m.Attempts, LastError: m.LastError, WinType: string(m.WinType),
		Reason: m.Reason, CreatedAt: m.CreatedAt, Redeliveries: hist}
	if m.Status == movements.StatusDone {
		out.Status, out.DeliveredAt = "delivered", m.DoneAt
	}
	return out
}

// HistoryQuery selects a player's bets placed in [From, To).
type HistoryQuery struct {
	Operator, PlayerID string
	From, To           time.Time
	Cursor             string // the previous page's next cursor, or ""
	Limit              int    // 1..MaxHistoryPage; 0: MaxHistoryPage
}

// Bounds of a history query.
const (
	MaxHistoryRange = 31 * 24 * time.Hour
	MaxHistoryPage  = 1000
	// SettleHorizon: only bets placed, and movements created, this long ago
	// are listed, so that one whose insert commits a moment after its
	// timestamp never lands behind a page already read. Far above a
	// commit's time, far below a support agent's patience.
	SettleHorizon = 10 * time.Second
)

// BetHistory returns one page of a player's bets, oldest first, with their
// movements, and the cursor of the next page ("" when the page is not full).
func (s *Service) BetHistory(ctx context.Context, q HistoryQuery, now time.Time) ([]Bet, string, error) {
	limit := q.Limit
	switch {
	case q.PlayerID == "":
		return nil, "", fmt.Errorf("%w: player_id is required", ErrInvalidQuery)
	case !q.From.Before(q.To):
		return nil, "", fmt.Errorf("%w: from must be before to", ErrInvalidQuery)
	case q.To.Sub(q.From) > MaxHistoryRange:
		return nil, "", fmt.Errorf("%w: the range from..to is more than 31 days", ErrInvalidQuery)
	case limit < 0 || limit > MaxHistoryPage:
		return nil, "", fmt.Errorf("%w: limit must be 1 to %d", ErrInvalidQuery, MaxHistoryPage)
	case limit == 0:
		limit = MaxHistoryPage
	}
	to := q.To
	if h := now.Add(-SettleHorizon); h.Before(to) {
		to = h
	}
	f := BetQuery{Operator: q.Operator, PlayerID: q.PlayerID, PlacedFrom: q.From, PlacedBefore: to, Limit: limit}
	if !to.After(q.From) {
		return []Bet{}, "", nil
	}
	if q.Cursor != "" {
		at, id, ok := cursor.Decode(q.Cursor)
		if !ok {
			return nil, "", fmt.Errorf("%w: the cursor is not one this route gave", ErrInvalidQuery)
		}
		f.AfterPlaced, f.AfterID = time.UnixMilli(at), id
	}
	recs, err := s.records.Bets(ctx, f)
	if err != nil {
		return nil, "", fmt.Errorf("backoffice: history: %w", err)
	}
	bets, err := s.withMovements(ctx, q.Operator, recs)
	if err != nil {
		return nil, "", err
	}
	next := ""
	if len(recs) == limit {
		last := recs[len(recs)-1]
		next = cursor.Encode(last.PlacedAt.UnixMilli(), last.ID)
	}
	return bets, next, nil
}
