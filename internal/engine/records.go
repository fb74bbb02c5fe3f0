package engine

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/uptrace/bun"

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

// Round states as stored.
const (
	RoundBetting  = "betting"
	RoundFlying   = "flying"
	RoundFinished = "finished"
	RoundVoid     = "void"
)

// RoundRecord is one round as stored.
type RoundRecord struct {
	bun.BaseModel `bun:"table:rounds"`

	ID            string       `bun:"id,pk"`
	GameID        string       `bun:"game_id"`
	Seq           int64        `bun:"seq"`
	Hash          string       `bun:"hash"` // secret until the round crashed
	Salt          string       `bun:"salt"` // the published salt it was drawn with
	CrashPoint    int64        `bun:"crash_point"`
	RTPBasisPts   int64        `bun:"rtp_bp"`
	MaxMultiplier int64        `bun:"max_multiplier"`
	Status        string       `bun:"status"`
	BettingEndsAt store.Millis `bun:"betting_ends_at"`
	StartedAt     store.Millis `bun:"started_at,nullzero"`
	CrashedAt     store.Millis `bun:"crashed_at,nullzero"`
	CreatedAt     store.Millis `bun:"created_at"`
}

// BetRecord is one bet as stored. ID is the transaction_id of its debit.
type BetRecord struct {
	bun.BaseModel `bun:"table:bets"`

	ID           string       `bun:"id,pk"`
	RoundID      string       `bun:"round_id"`
	GameID       string       `bun:"game_id"`
	SessionHash  []byte       `bun:"session_hash"`
	Operator     string       `bun:"operator"`
	PlayerID     string       `bun:"player_id"`
	Token        string       `bun:"token"`
	PlayerName   string       `bun:"player_name"` // masked
	Currency     string       `bun:"currency"`
	Demo         bool         `bun:"demo"`
	Amount       int64        `bun:"amount"`
	AutoCashout  int64        `bun:"auto_cashout,nullzero"`
	FreebetID    *string      `bun:"freebet_id"`
	Status       string       `bun:"status"`
	Multiplier   int64        `bun:"multiplier,nullzero"`
	Payout       *int64       `bun:"payout"`
	Refusal      string       `bun:"refusal"`
	OperatorTxID string       `bun:"operator_tx_id"`
	PlacedAt     store.Millis `bun:"placed_at"`
	SettledAt    store.Millis `bun:"settled_at,nullzero"`
}

// ChainRecord is the current hash chain of a game. Seed is secret.
type ChainRecord struct {
	bun.BaseModel `bun:"table:chains"`

	GameID    string       `bun:"game_id,pk"`
	Seed      string       `bun:"seed"`
	FirstSeq  int64        `bun:"first_seq"`
	Length    int64        `bun:"length"`
	Terminal  string       `bun:"terminal"`
	Salt      string       `bun:"salt"`
	CreatedAt store.Millis `bun:"created_at"`
}

// setBetStatus moves a bet from one status to another, conditionally. It
// reports whether the bet was in status from: the database decides races.
func setBetStatus(ctx context.Context, db bun.IDB, id, from, to string, at store.Millis, set func(*bun.UpdateQuery) *bun.UpdateQuery) (bool, error) {
	q := db.NewUpdate().Model((*BetRecord)(nil)).
		Set("status = ?", to).
		Where("id = ?", id).
		Where("status = ?", from)
	if at != 0 {
		q = q.Set("settled_at = ?", at)
	}
	if set != nil {
		q = set(q)
	}
	res, err := q.Exec(ctx)
	if err != nil {
		return false, fmt.Errorf("bet %s %s -> %s: %w", id, from, to, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("bet %s %s -> %s: rows: %w", id, from, to, err)
	}
	return n == 1, nil
}

// RecentRounds lists the finished rounds of a game, newest first.
func RecentRounds(ctx context.Context, db bun.IDB, gameID string, limit int) ([]RoundRecord, error) {
	var out []RoundRecord
	err := db.NewSelect().Model(&out).
		Where("game_id = ?", gameID).Where("status = ?", RoundFinished).
		OrderExpr("seq DESC").Limit(int64(limit)).Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("recent rounds of %s: %w", gameID, err)
	}
	return out, nil
}

// FinishedRound returns one finished or void round; the hash of a round that
// has not crashed is never returned (ErrUnknownRound).
func FinishedRound(ctx context.Context, db bun.IDB, id string) (RoundRecord, error) {
	var r RoundRecord
	err := db.NewSelect().Model(&r).Where("id = ?", id).Where("status IN (?)", bun.List([]string{RoundFinished, RoundVoid})).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return r, ErrUnknownRound
	}
	if err != nil {
		return r, fmt.Errorf("round %s: %w", id, err)
	}
	return r, nil
}

// SessionBets lists the bets of one session, newest first.
func SessionBets(ctx context.Context, db bun.IDB, sessionHash []byte, limit int) ([]BetRecord, error) {
	var out []BetRecord
	err := db.NewSelect().Model(&out).Where("session_hash = ?", sessionHash).
		OrderExpr("placed_at DESC, id DESC").Limit(int64(limit)).Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("session bets: %w", err)
	}
	return out, nil
}

// PlayerBets lists the bets of one operator's player in one game, from every
// session, newest first.
func PlayerBets(ctx context.Context, db bun.IDB, operator, playerID, gameID string, limit int) ([]BetRecord, error) {
	var out []BetRecord
	err := db.NewSelect().Model(&out).Where("operator = ?", operator).Where("player_id = ?", playerID).
		Where("game_id = ?", gameID).OrderExpr("placed_at DESC, id DESC").Limit(int64(limit)).Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("player bets: %w", err)
	}
	return out, nil
}

// NetPosition is what one session's player staked and won, in cents.
type NetPosition struct {
	Staked int64 // the player's own money the wallet debited and kept
	Won    int64 // payouts of cashed-out bets
}

// Net is won minus staked: negative when the player is down.
func (n NetPosition) Net() int64 { return n.Won - n.Staked }

// SessionNetPosition sums the bets of one session. Staked counts the amount of
// every bet the wallet accepted and kept (accepted, cashed_out, lost) that was
// paid with the player's money: a freebet stakes nothing of the player's, and
// a pending, refused, cancelled or void bet has no debit or had it rolled
// back. Won counts the payout of every cashed-out bet, a freebet's included
// (it is paid to the player).
func SessionNetPosition(ctx context.Context, db bun.IDB, sessionHash []byte) (NetPosition, error) {
	var n NetPosition
	err := db.NewSelect().Model((*BetRecord)(nil)).
		ColumnExpr("CAST(COALESCE(SUM(CASE WHEN status IN (?) AND freebet_id IS NULL THEN amount ELSE 0 END), 0) AS BIGINT)",
			bun.List([]string{StatusAccepted, StatusCashedOut, StatusLost})).
		ColumnExpr("CAST(COALESCE(SUM(CASE WHEN status = ? THEN payout ELSE 0 END), 0) AS BIGINT)", StatusCashedOut).
		Where("session_hash = ?", sessionHash).
		Scan(ctx, &n.Staked, &n.Won)
	if err != nil {
		return NetPosition{}, fmt.Errorf("session net position: %w", err)
	}
	return n, nil
}

// SessionHasLiveBets reports whether the session holds a bet still in play:
// pending (its debit not yet decided) or accepted (in a round not yet settled).
func SessionHasLiveBets(ctx context.Context, db bun.IDB, sessionHash []byte) (bool, error) {
	ok, err := db.NewSelect().Model((*BetRecord)(nil)).
		Where("session_hash = ?", sessionHash).
		Where("status IN (?)", bun.List([]string{StatusPending, StatusAccepted})).
		Exists(ctx)
	if err != nil {
		return false, fmt.Errorf("session live bets: %w", err)
	}
	return ok, nil
}
