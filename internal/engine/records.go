package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/crashstudio/crashgame/internal/chains"
	"github.com/crashstudio/crashgame/internal/round"
	"github.com/crashstudio/crashgame/internal/store"
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
// ctx, and the Chains, the Outbox and Freebets write inside it too).
// *store.Store satisfies it.
type Store interface {
	InTx(ctx context.Context, fn func(ctx context.Context) error) error

	LastRoundSeq(ctx context.Context, gameID string) (int64, error)
	InsertRound(ctx context.Context, rec store.RoundRecord) error
	TakeOffRound(ctx context.Context, id string, at store.Millis) error
	FinishRound(ctx context.Context, id string, crashedAt store.Millis, hash string, crashPoint int64) error
	VoidRound(ctx context.Context, id, hash string, crashPoint int64, voidedAt store.Millis, rule string) error
	UnfinishedRounds(ctx context.Context, gameID string) ([]string, error)
	RecentRounds(ctx context.Context, gameID string, limit int) ([]store.RoundRecord, error)
	Round(ctx context.Context, gameID, id string) (store.RoundRecord, error)

	AcquireLease(ctx context.Context, gameID, holder string, ttl time.Duration) (epoch int64, ok bool, err error)
	RenewLease(ctx context.Context, gameID, holder string, epoch int64, ttl time.Duration) (bool, error)
	ReleaseLease(ctx context.Context, gameID, holder string, epoch int64) error
	CheckLease(ctx context.Context, gameID string, epoch int64) error

	InsertBet(ctx context.Context, rec *store.BetRecord) error
	MoveBet(ctx context.Context, id, from, to string, ch store.BetChange) (bool, error)
	MoveRoundBets(ctx context.Context, roundID, from, to string, payout int64, settledAt store.Millis) ([]string, error)
	Bets(ctx context.Context, f store.BetFilter) ([]store.BetRecord, error)
}

var _ Store = (*store.Store)(nil)

// EndedRound returns one finished or void round of the table. The hash of a
// round that has not ended is never returned: such a round is
// ErrRoundInProgress, and one the table never had is ErrUnknownRound.
func (t *Table) EndedRound(ctx context.Context, id string) (store.RoundRecord, error) {
	r, err := t.store.Round(ctx, t.game.ID, id)
	switch {
	case errors.Is(err, store.ErrRoundNotFound):
		return store.RoundRecord{}, ErrUnknownRound
	case err != nil:
		return store.RoundRecord{}, fmt.Errorf("engine: %w", err)
	case r.Status != store.RoundFinished && r.Status != store.RoundVoid:
		return store.RoundRecord{}, ErrRoundInProgress
	}
	return r, nil
}
