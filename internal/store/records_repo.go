package store

import (
	"context"
	"time"

	"github.com/crashstudio/crashgame/internal/engine"
)

// GameRecords is the rounds, the bets and the tables' leases over package
// engine's records: what a table needs of the database (engine.Store) and
// what the player API reads of it (table.Records). It converts engine's
// records to this package's rows and back; Round's refusal is
// engine.ErrRoundNotFound, which this package returns as it is.
type GameRecords struct{ s *Store }

// Records returns the rounds, bets and leases over engine's records.
func (s *Store) Records() GameRecords { return GameRecords{s} }

// roundOf converts a stored round.
func roundOf(r *RoundRecord) engine.RoundRecord {
	return engine.RoundRecord{
		ID: r.ID, GameID: r.GameID, Seq: r.Seq, ChainID: r.ChainID, Position: r.Position, Hash: r.Hash,
		CrashPoint: r.CrashPoint, Status: r.Status, BettingEndsAt: r.BettingEndsAt.Time(), StartedAt: r.StartedAt.Time(),
		CrashedAt: r.CrashedAt.Time(), VoidedAt: r.VoidedAt.Time(), VoidRule: r.VoidRule, CreatedAt: r.CreatedAt.Time(),
		Epoch: r.Epoch,
	}
}

func roundsOf(recs []RoundRecord) []engine.RoundRecord {
	out := make([]engine.RoundRecord, len(recs))
	for i := range recs {
		out[i] = roundOf(&recs[i])
	}
	return out
}

func roundRow(r *engine.RoundRecord) RoundRecord {
	return RoundRecord{
		ID: r.ID, GameID: r.GameID, Seq: r.Seq, ChainID: r.ChainID, Position: r.Position, Hash: r.Hash,
		CrashPoint: r.CrashPoint, Status: r.Status, BettingEndsAt: MillisOf(r.BettingEndsAt), StartedAt: MillisOf(r.StartedAt),
		CrashedAt: MillisOf(r.CrashedAt), VoidedAt: MillisOf(r.VoidedAt), VoidRule: r.VoidRule, CreatedAt: MillisOf(r.CreatedAt),
		Epoch: r.Epoch,
	}
}

// betOf converts a stored bet.
func betOf(b *BetRecord) engine.BetRecord {
	return engine.BetRecord{
		ID: b.ID, RoundID: b.RoundID, GameID: b.GameID, SessionHash: b.SessionHash, Operator: b.Operator,
		PlayerID: b.PlayerID, Token: b.Token, PlayerName: b.PlayerName, Currency: b.Currency, Demo: b.Demo,
		Amount: b.Amount, AutoCashout: b.AutoCashout, FreebetID: b.FreebetID, Status: b.Status, Multiplier: b.Multiplier,
		Payout: b.Payout, Refusal: b.Refusal, OperatorTxID: b.OperatorTxID, PlacedAt: b.PlacedAt.Time(),
		SettledAt: b.SettledAt.Time(),
	}
}

func betRow(b *engine.BetRecord) BetRecord {
	return BetRecord{
		ID: b.ID, RoundID: b.RoundID, GameID: b.GameID, SessionHash: b.SessionHash, Operator: b.Operator,
		PlayerID: b.PlayerID, Token: b.Token, PlayerName: b.PlayerName, Currency: b.Currency, Demo: b.Demo,
		Amount: b.Amount, AutoCashout: b.AutoCashout, FreebetID: b.FreebetID, Status: b.Status, Multiplier: b.Multiplier,
		Payout: b.Payout, Refusal: b.Refusal, OperatorTxID: b.OperatorTxID, PlacedAt: MillisOf(b.PlacedAt),
		SettledAt: MillisOf(b.SettledAt),
	}
}

// betFilterOf is f as this package's filter.
func betFilterOf(f engine.BetFilter) BetFilter {
	return BetFilter{
		ID: f.ID, GameID: f.GameID, RoundIDs: f.RoundIDs, ExceptRound: f.ExceptRound, RoundEnded: f.RoundEnded, SessionHash: f.SessionHash,
		Operator: f.Operator, PlayerID: f.PlayerID, Statuses: f.Statuses, PlacedBefore: MillisOf(f.PlacedBefore),
		PlacedFrom: MillisOf(f.PlacedFrom), AfterPlaced: MillisOf(f.AfterPlaced), AfterID: f.AfterID,
		NewestFirst: f.NewestFirst, Limit: f.Limit,
	}
}

// InTx runs fn in one transaction that travels in its ctx (Store.InTx).
func (g GameRecords) InTx(ctx context.Context, fn func(ctx context.Context) error) error {
	return g.s.InTx(ctx, fn)
}

func (g GameRecords) LastRoundSeq(ctx context.Context, gameID string) (int64, error) {
	return g.s.LastRoundSeq(ctx, gameID)
}

func (g GameRecords) InsertRound(ctx context.Context, r engine.RoundRecord) error {
	return g.s.InsertRound(ctx, roundRow(&r))
}

func (g GameRecords) TakeOffRound(ctx context.Context, id string, at time.Time) error {
	return g.s.TakeOffRound(ctx, id, MillisOf(at))
}

func (g GameRecords) FinishRound(ctx context.Context, id string, crashedAt time.Time, hash string, crashPoint int64) error {
	return g.s.FinishRound(ctx, id, MillisOf(crashedAt), hash, crashPoint)
}

func (g GameRecords) VoidRound(ctx context.Context, id, hash string, crashPoint int64, voidedAt time.Time, rule string) error {
	return g.s.VoidRound(ctx, id, hash, crashPoint, MillisOf(voidedAt), rule)
}

func (g GameRecords) UnfinishedRounds(ctx context.Context, gameID string) ([]string, error) {
	return g.s.UnfinishedRounds(ctx, gameID)
}

func (g GameRecords) RecentRounds(ctx context.Context, gameID string, limit int) ([]engine.RoundRecord, error) {
	recs, err := g.s.RecentRounds(ctx, gameID, limit)
	if err != nil {
		return nil, err
	}
	return roundsOf(recs), nil
}

func (g GameRecords) Round(ctx context.Context, gameID, id string) (engine.RoundRecord, error) {
	r, err := g.s.Round(ctx, gameID, id)
	if err != nil {
		return engine.RoundRecord{}, err
	}
	return roundOf(&r), nil
}

func (g GameRecords) AcquireLease(ctx context.Context, gameID, holder string, ttl time.Duration) (int64, bool, error) {
	return g.s.AcquireLease(ctx, gameID, holder, ttl)
}

func (g GameRecords) RenewLease(ctx context.Context, gameID, holder string, epoch int64, ttl time.Duration) (bool, error) {
	return g.s.RenewLease(ctx, gameID, holder, epoch, ttl)
}

func (g GameRecords) ReleaseLease(ctx context.Context, gameID, holder string, epoch int64) error {
	return g.s.ReleaseLease(ctx, gameID, holder, epoch)
}

func (g GameRecords) CheckLease(ctx context.Context, gameID string, epoch int64) error {
	return g.s.CheckLease(ctx, gameID, epoch)
}

func (g GameRecords) InsertBet(ctx context.Context, b *engine.BetRecord) error {
	row := betRow(b)
	return g.s.InsertBet(ctx, &row)
}

func (g GameRecords) MoveBet(ctx context.Context, id, from, to string, ch engine.BetChange) (bool, error) {
	return g.s.MoveBet(ctx, id, from, to, BetChange{SettledAt: MillisOf(ch.SettledAt), OperatorTxID: ch.OperatorTxID,
		Refusal: ch.Refusal, Multiplier: ch.Multiplier, Payout: ch.Payout})
}

func (g GameRecords) UnsettledBets(ctx context.Context, gameID string, pendingBefore time.Time) (int64, error) {
	return g.s.UnsettledBets(ctx, gameID, MillisOf(pendingBefore))
}

func (g GameRecords) MoveOpenBet(ctx context.Context, id, to string, ch engine.BetChange) (bool, error) {
	return g.s.MoveOpenBet(ctx, id, to, BetChange{SettledAt: MillisOf(ch.SettledAt), OperatorTxID: ch.OperatorTxID,
		Refusal: ch.Refusal, Multiplier: ch.Multiplier, Payout: ch.Payout})
}

func (g GameRecords) MoveDecidedBets(ctx context.Context, roundID, from, to string, txIDs map[string]string) (int, error) {
	return g.s.MoveDecidedBets(ctx, roundID, from, to, txIDs)
}

func (g GameRecords) LoseRoundBets(ctx context.Context, roundID string, crashPoint int64, crashedAt time.Time) ([]string, error) {
	return g.s.MoveRoundBets(ctx, roundID, engine.StatusAccepted, engine.StatusLost, 0, MillisOf(crashedAt), crashPoint)
}

func (g GameRecords) Bets(ctx context.Context, f engine.BetFilter) ([]engine.BetRecord, error) {
	recs, err := g.s.Bets(ctx, betFilterOf(f))
	if err != nil {
		return nil, err
	}
	out := make([]engine.BetRecord, len(recs))
	for i := range recs {
		out[i] = betOf(&recs[i])
	}
	return out, nil
}

func (g GameRecords) ChainRounds(ctx context.Context, chainID string, from int64, limit int) ([]engine.RoundRecord, error) {
	recs, err := g.s.ChainRounds(ctx, chainID, from, limit)
	if err != nil {
		return nil, err
	}
	return roundsOf(recs), nil
}

func (g GameRecords) ChainCheckpoints(ctx context.Context, chainID string, every, through int64) ([]engine.RoundRecord, error) {
	recs, err := g.s.ChainCheckpoints(ctx, chainID, every, through)
	if err != nil {
		return nil, err
	}
	return roundsOf(recs), nil
}

func (g GameRecords) ChainVoids(ctx context.Context, chainID string) ([]engine.RoundRecord, error) {
	recs, err := g.s.ChainVoids(ctx, chainID)
	if err != nil {
		return nil, err
	}
	return roundsOf(recs), nil
}
