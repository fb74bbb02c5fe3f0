package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/crashstudio/crashgame/internal/chains"
	"github.com/crashstudio/crashgame/internal/round"
)

// Bet states as stored: the round's (package round).
const (
	StatusPending   = string(round.Pending)
	StatusAccepted  = string(round.Accepted)
	StatusRefused   = string(round.Refused)
	StatusCashedOut = string(round.CashedOut)
	StatusLost      = string(round.Lost)
	StatusCancelled = string(round.Cancelled)
	StatusVoid      = string(round.Voided)
)

// Round states as recorded. A round is betting, then flying, then finished
// (it crashed) or void (it ended without a crash: its bets were rolled back).
const (
	RoundBetting  = string(round.Betting)
	RoundFlying   = string(round.Flying)
	RoundFinished = "finished"
	RoundVoid     = string(round.Void)
)

// Void rules as recorded: the rule a void round was settled by
// (docs/failover.md).
const (
	VoidFailoverBetting = "failover_betting" // the fail-over rule: interrupted in betting
	VoidFailoverFlight  = "failover_flight"  // the fail-over rule: interrupted in flight
	VoidPlannedStop     = "planned_stop"     // a planned stop in flight: its grace ran out, or no bet was in play
	VoidTakeOffFailed   = "takeoff_failed"   // the database refused the take-off
	VoidUnknown         = "unknown"          // voided before the rule was recorded (migration 0012)
)

// ErrRoundNotFound: the database has no such round.
var ErrRoundNotFound = errors.New("engine: round not found")

// toMillis is t as the records (rounds, bets, chains) keep it: whole
// milliseconds in UTC, so that what a table holds in memory equals what it
// reads back.
func toMillis(t time.Time) time.Time { return time.UnixMilli(t.UnixMilli()).UTC() }

// RoundRecord is a round as the table records it. Its instants are whole
// milliseconds in UTC, the zero time.Time for one not reached (or, for a
// round recorded before it was, not recorded).
type RoundRecord struct {
	ID     string
	GameID string
	Seq    int64
	// ChainID and Position say which hash of which chain the round uses
	// (position = seq - the chain's first_seq + 1).
	ChainID  string
	Position int64
	// Hash and CrashPoint are recorded when the round ends (crashed or
	// void), never before: "" and 0 until then.
	Hash          string
	CrashPoint    int64
	Status        string // a Round* state
	BettingEndsAt time.Time
	StartedAt     time.Time
	// CrashedAt is the crash of a finished round; a void round never
	// crashed: VoidedAt is its end and VoidRule (a Void* rule) the rule
	// that settled it.
	CrashedAt time.Time
	VoidedAt  time.Time
	VoidRule  string
	CreatedAt time.Time
	// Epoch is the fencing epoch of the leader that opened the round.
	Epoch int64
}

// BetRecord is a bet as the table records it: its intent before the debit,
// then each move of its status. Instants as in RoundRecord.
type BetRecord struct {
	ID           string
	RoundID      string
	GameID       string
	SessionHash  []byte
	Operator     string
	PlayerID     string
	Token        string // the session's wallet token, for the settlement's movement; never shown
	PlayerName   string // masked
	Currency     string
	Demo         bool
	Amount       int64 // cents
	AutoCashout  int64 // 0: none
	FreebetID    *string
	Status       string // a Status* state
	Multiplier   int64  // of a cashout
	Payout       *int64 // of a settled bet
	Refusal      string // the wallet's error_code of a refused debit
	OperatorTxID string
	PlacedAt     time.Time
	SettledAt    time.Time // zero until settled
}

// BetChange is what a bet's move to another status writes besides the
// status. Zero fields are left as they are.
type BetChange struct {
	SettledAt    time.Time
	OperatorTxID string // the operator's id of the accepted debit
	Refusal      string // the wallet's error_code of a refused debit
	Multiplier   int64  // of a cashout
	Payout       *int64 // of a cashout
}

// BetFilter selects bets. Every field set narrows the selection; Statuses and
// RoundIDs match any of theirs. Limit 0 means no limit.
type BetFilter struct {
	ID           string
	GameID       string
	RoundIDs     []string
	ExceptRound  string // not of this round
	RoundEnded   bool   // only of rounds that ended (finished or void)
	SessionHash  []byte
	Operator     string
	PlayerID     string
	Statuses     []string
	PlacedBefore time.Time // zero: no bound
	// PlacedFrom, when not zero, selects bets placed at or after it;
	// AfterPlaced and AfterID, when AfterID is set, those strictly after that
	// bet in the order (placed_at, id): a cursor of ascending pages.
	PlacedFrom  time.Time
	AfterPlaced time.Time
	AfterID     string
	NewestFirst bool // by placed_at then id, descending; else ascending
	Limit       int
}

// Chains is what a table needs of the hash chains (package chains'
// repository): its game's current chain, a past one, publishing and retiring
// a chain, and fixing its salt, in the transaction ctx carries if any.
type Chains interface {
	CurrentChain(ctx context.Context, gameID string) (chains.Chain, error)
	ChainByID(ctx context.Context, id string) (chains.Chain, error)
	InsertChain(ctx context.Context, c chains.Chain) error
	RetireChain(ctx context.Context, id string, lastSeq int64, at time.Time) error
	FixSalt(ctx context.Context, id string, at time.Time, extra func([]chains.Contribution) []chains.Contribution,
		compute func(chains.Chain, []chains.Contribution) (string, string, error)) (chains.Chain, error)
	SetBeaconSignature(ctx context.Context, id, signature string) error
}

// Store is what a table needs of the database: its rounds, its bets, the
// game's lease (who leads the table, at which fencing epoch), and
// transactions that carry several writes (InTx: the transaction travels in
// ctx, and the Chains, the Outbox and Freebets write inside it too), over
// the engine's own records. (*store.Store).Records implements it.
type Store interface {
	InTx(ctx context.Context, fn func(ctx context.Context) error) error

	LastRoundSeq(ctx context.Context, gameID string) (int64, error)
	InsertRound(ctx context.Context, rec RoundRecord) error
	TakeOffRound(ctx context.Context, id string, at time.Time) error
	FinishRound(ctx context.Context, id string, crashedAt time.Time, hash string, crashPoint int64) error
	VoidRound(ctx context.Context, id, hash string, crashPoint int64, voidedAt time.Time, rule string) error
	UnfinishedRounds(ctx context.Context, gameID string) ([]string, error)
	RecentRounds(ctx context.Context, gameID string, limit int) ([]RoundRecord, error)
	Round(ctx context.Context, gameID, id string) (RoundRecord, error)

	AcquireLease(ctx context.Context, gameID, holder string, ttl time.Duration) (epoch int64, ok bool, err error)
	RenewLease(ctx context.Context, gameID, holder string, epoch int64, ttl time.Duration) (bool, error)
	ReleaseLease(ctx context.Context, gameID, holder string, epoch int64) error
	CheckLease(ctx context.Context, gameID string, epoch int64) error

	InsertBet(ctx context.Context, rec *BetRecord) error
	MoveBet(ctx context.Context, id, from, to string, ch BetChange) (bool, error)
	// MoveOpenBet moves the bet to status to from whichever unsettled
	// status it is in (pending or accepted), in one statement on its row:
	// an acceptance another replica commits meanwhile cannot slip between
	// two statements that each miss the bet.
	MoveOpenBet(ctx context.Context, id, to string, ch BetChange) (bool, error)
	// LoseRoundBets moves every bet of the round still accepted to lost
	// (payout 0, settled at crashedAt), except one whose auto-cashout target
	// is at or below crashPoint, and returns the ids it moved.
	LoseRoundBets(ctx context.Context, roundID string, crashPoint int64, crashedAt time.Time) ([]string, error)
	// MoveDecidedBets moves each bet of the round that txIDs names (bet id
	// -> its operator transaction id) still in status from to status to,
	// outside any transaction, never holding one bet's row while waiting
	// for another's: it cannot deadlock with another writer's batch.
	MoveDecidedBets(ctx context.Context, roundID, from, to string, txIDs map[string]string) (int, error)
	Bets(ctx context.Context, f BetFilter) ([]BetRecord, error)
	// UnsettledBets counts the game's bets left unsettled in rounds that
	// ended: accepted, or pending and placed before pendingBefore.
	UnsettledBets(ctx context.Context, gameID string, pendingBefore time.Time) (int64, error)
}

// EndedRound returns one finished or void round of the table. The hash of a
// round that has not ended is never returned: such a round is
// ErrRoundInProgress, and one the table never had is ErrUnknownRound.
func (t *Table) EndedRound(ctx context.Context, id string) (RoundRecord, error) {
	r, err := t.store.Round(ctx, t.game.ID, id)
	switch {
	case errors.Is(err, ErrRoundNotFound):
		return RoundRecord{}, ErrUnknownRound
	case err != nil:
		return RoundRecord{}, fmt.Errorf("engine: %w", err)
	case r.Status != RoundFinished && r.Status != RoundVoid:
		return RoundRecord{}, ErrRoundInProgress
	}
	return r, nil
}
