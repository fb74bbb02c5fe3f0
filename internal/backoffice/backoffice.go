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
	"github.com/crashstudio/crashgame/internal/store"
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

// Records is what the service reads. *store.Store satisfies it.
type Records interface {
	Round(ctx context.Context, gameID, id string) (store.RoundRecord, error)
	ChainByID(ctx context.Context, id string) (store.ChainRecord, error)
	Bets(ctx context.Context, f store.BetFilter) ([]store.BetRecord, error)
	ListMovements(ctx context.Context, f store.MovementFilter) ([]store.MovementRecord, error)
	RedeliveriesOf(ctx context.Context, ids []string) (map[string][]store.RedeliveryRecord, error)
	InsertLink(ctx context.Context, rec store.LinkRecord) error
	Link(ctx context.Context, idHash []byte) (store.LinkRecord, error)
	PurgeSettled(ctx context.Context, before store.Millis, limit int) (int, error)
}

var _ Records = (*store.Store)(nil)

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
// (store.PurgeSettled), in batches, until none is left or ctx ends. The
// rounds stay: the chain's public record. It does nothing without a
// retention, and returns how many bets it purged.
func (s *Service) Purge(ctx context.Context, now time.Time) (int, error) {
	if s.retention <= 0 {
		return 0, nil
	}
	before := store.MillisOf(now.Add(-s.retention))
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
	store.BetRecord
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
	Redeliveries []store.RedeliveryRecord
}

// RoundDetails returns round id as the operator sees it, with its bets
// (those of playerID only, when not "") and their movements.
func (s *Service) RoundDetails(ctx context.Context, operator, id, playerID string) (Round, []Bet, error) {
	var rec store.RoundRecord
	found := false
	for _, g := range s.games[operator] {
		r, err := s.records.Round(ctx, g, id)
		if errors.Is(err, store.ErrRoundNotFound) {
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
	recs, err := s.records.Bets(ctx, store.BetFilter{RoundIDs: []string{id}, Operator: operator, PlayerID: playerID})
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
func (s *Service) roundOf(ctx context.Context, r store.RoundRecord) (Round, error) {
	out := Round{ID: r.ID, GameID: r.GameID, Seq: r.Seq, Status: r.Status, BettingEndsAt: r.BettingEndsAt.Time(),
		ChainID: r.ChainID, Position: r.Position, Phases: []Phase{{"betting", r.CreatedAt.Time()}}}
	if r.StartedAt != 0 {
		out.Phases = append(out.Phases, Phase{"flying", r.StartedAt.Time()})
	}
	switch r.Status {
	case store.RoundFinished:
		out.Phases = append(out.Phases, Phase{"crashed", r.CrashedAt.Time()})
	case store.RoundVoid:
		out.Phases = append(out.Phases, Phase{"void", max(r.StartedAt, r.BettingEndsAt, r.CrashedAt).Time()})
	default:
		return out, nil // not ended: its outcome is secret
	}
	out.Hash, out.CrashPoint = r.Hash, r.CrashPoint
	if r.ChainID != "" {
		c, err := s.records.ChainByID(ctx, r.ChainID)
		if err != nil {
			return out, fmt.Errorf("backoffice: chain of round %s: %w", r.ID, err)
		}
		if c.Salt != nil {
			out.Salt = *c.Salt
		}
	}
	return out, nil
}

// withMovements attaches to each bet its debit and its settling movements.
func (s *Service) withMovements(ctx context.Context, operator string, recs []store.BetRecord) ([]Bet, error) {
	out := make([]Bet, len(recs))
	if len(recs) == 0 {
		return out, nil
	}
	ids := make([]string, len(recs))
	for i := range recs {
		recs[i].Token = ""
		ids[i] = recs[i].ID
	}
	mvs, err := s.records.ListMovements(ctx, store.MovementFilter{Operator: operator, BetIDs: ids, Limit: 2 * len(ids)})
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
	byBet := map[string][]store.MovementRecord{}
	for _, m := range mvs {
		byBet[m.BetID] = append(byBet[m.BetID], m)
	}
	for i, b := range recs {
		out[i] = Bet{BetRecord: b, Movements: []Movement{debitOf(b)}}
		for _, m := range byBet[b.ID] {
			out[i].Movements = append(out[i].Movements, movementOf(m, hist[m.TransactionID]))
		}
	}
	return out, nil
}

// debitOf is a bet's /bet as a movement.
func debitOf(b store.BetRecord) Movement {
	m := Movement{TransactionID: b.ID, Kind: "bet", Amount: b.Amount, Status: "delivered", OperatorTxID: b.OperatorTxID,
		Attempts: 1, CreatedAt: b.PlacedAt.Time()}
	switch b.Status {
	case "pending":
		m.Status = "pending"
	case "refused":
		m.Status, m.LastError = "refused", b.Refusal
	}
	return m
}

func movementOf(m store.MovementRecord, hist []store.RedeliveryRecord) Movement {
	out := Movement{TransactionID: m.TransactionID, Kind: m.Kind, Amount: m.Amount, Status: m.Status, OperatorTxID: m.OperatorTxID,
		Attempts: m.Attempts, LastError: m.LastError, WinType: m.WinType, Reason: m.Reason, CreatedAt: m.CreatedAt.Time(),
		Redeliveries: hist}
	if m.Status == store.MovementDone {
		out.Status, out.DeliveredAt = "delivered", m.DoneAt.Time()
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
	f := store.BetFilter{Operator: q.Operator, PlayerID: q.PlayerID, PlacedFrom: store.MillisOf(q.From),
		PlacedBefore: store.MillisOf(to), Limit: limit}
	if !to.After(q.From) {
		return []Bet{}, "", nil
	}
	if q.Cursor != "" {
		at, id, ok := cursor.Decode(q.Cursor)
		if !ok {
			return nil, "", fmt.Errorf("%w: the cursor is not one this route gave", ErrInvalidQuery)
		}
		f.AfterPlaced, f.AfterID = store.Millis(at), id
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
		next = cursor.Encode(int64(last.PlacedAt), last.ID)
	}
	return bets, next, nil
}
