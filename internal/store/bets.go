package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"

	"github.com/crashstudio/crashgame/internal/engine"
	"github.com/uptrace/bun"
)

// BetRecord is one bet as stored. ID is the transaction_id of its debit.
// Status is the round's name of its state (package round), which the store
// stores and compares but never interprets.
type BetRecord struct {
	bun.BaseModel `bun:"table:bets"`

	ID           string  `bun:"id,pk"`
	RoundID      string  `bun:"round_id"`
	GameID       string  `bun:"game_id"`
	SessionHash  []byte  `bun:"session_hash"`
	Operator     string  `bun:"operator"`
	PlayerID     string  `bun:"player_id"`
	Token        string  `bun:"token"`
	PlayerName   string  `bun:"player_name"` // masked
	Currency     string  `bun:"currency"`
	Demo         bool    `bun:"demo"`
	Amount       int64   `bun:"amount"`
	AutoCashout  int64   `bun:"auto_cashout,nullzero"`
	FreebetID    *string `bun:"freebet_id"`
	Status       string  `bun:"status"`
	Multiplier   int64   `bun:"multiplier,nullzero"`
	Payout       *int64  `bun:"payout"`
	Refusal      string  `bun:"refusal"`
	OperatorTxID string  `bun:"operator_tx_id"`
	PlacedAt     Millis  `bun:"placed_at"`
	SettledAt    Millis  `bun:"settled_at,nullzero"`
}

// InsertBet stores a new bet (its intent, before the debit): one prepared
// statement (prepared.go). Zero AutoCashout, Multiplier and SettledAt are
// stored NULL.
func (s *Store) InsertBet(ctx context.Context, rec *BetRecord) error {
	_, err := s.exec(ctx, "insertBet", rec.ID, rec.RoundID, rec.GameID, rec.SessionHash, rec.Operator, rec.PlayerID,
		rec.Token, rec.PlayerName, rec.Currency, rec.Demo, rec.Amount, nullIfZero(rec.AutoCashout), rec.FreebetID,
		rec.Status, nullIfZero(rec.Multiplier), rec.Payout, rec.Refusal, rec.OperatorTxID, rec.PlacedAt,
		nullIfZero(rec.SettledAt))
	if err != nil {
		return fmt.Errorf("store: insert bet %s: %w", rec.ID, err)
	}
	return nil
}

// BetChange is what a bet's move to another status writes besides the status.
// Zero fields are left as they are.
type BetChange struct {
	SettledAt    Millis
	OperatorTxID string // the operator's id of the accepted debit
	Refusal      string // the wallet's error_code of a refused debit
	Multiplier   int64  // of a cashout
	Payout       *int64 // of a cashout
}

// MoveBet moves a bet from status from to status to, writing ch, in one
// conditional statement (prepared: prepared.go). It reports whether the bet
// was in status from: of two moves that race from the same status, exactly
// one is applied.
func (s *Store) MoveBet(ctx context.Context, id, from, to string, ch BetChange) (bool, error) {
	n, err := affected("move bet")(s.exec(ctx, "moveBet", to, nullIfZero(ch.SettledAt), nullIfZero(ch.OperatorTxID),
		nullIfZero(ch.Refusal), nullIfZero(ch.Multiplier), ch.Payout, id, from))
	if err != nil {
		return false, fmt.Errorf("%w (bet %s %s -> %s)", err, id, from, to)
	}
	return n == 1, nil
}

// MoveOpenBet moves bet id to status to from whichever unsettled status
// it is in (pending: its intent committed and its acceptance not yet;
// accepted), in one statement on the bet's row; it reports whether it moved
// the bet. On PostgreSQL a transaction that is moving the row (another
// replica committing the bet's acceptance) is waited for and the row is
// judged as that transaction left it, so the bet is moved whichever commits
// first, and never left between two statements that each miss it.
func (s *Store) MoveOpenBet(ctx context.Context, id, to string, ch BetChange) (bool, error) {
	n, err := affected("move open bet")(s.exec(ctx, "moveOpenBet", to, nullIfZero(ch.SettledAt), nullIfZero(ch.OperatorTxID),
		nullIfZero(ch.Refusal), nullIfZero(ch.Multiplier), ch.Payout, id))
	if err != nil {
		return false, fmt.Errorf("%w (bet %s open -> %s)", err, id, to)
	}
	return n == 1, nil
}

// MoveDecidedBets moves to status to each bet of round roundID that txIDs
// names (bet id -> the operator's transaction id of its debit, written
// where not empty) and that is still in status from; it returns how many it
// moved. It runs outside any transaction of ctx's and never holds one bet's
// row while it waits for another's: on PostgreSQL the rows no other
// transaction holds move in one statement that skips the others, and each
// skipped row then moves in a statement of its own, which waits for the
// transaction holding it. So it cannot deadlock with a transaction that
// moves several of these bets in any order (another replica's group commit
// of their acceptances); a bet that transaction moved first is left as it
// is. SQLite has one writer: the bets move in one transaction. Called with a
// context that carries a transaction, it fails and moves nothing.
func (s *Store) MoveDecidedBets(ctx context.Context, roundID, from, to string, txIDs map[string]string) (int, error) {
	if len(txIDs) == 0 {
		return 0, nil
	}
	if s.tx.Carries(ctx) {
		return 0, fmt.Errorf("store: move the decided bets of round %s: called inside a transaction, which would hold each row it moves until it ends", roundID)
	}
	var left []string
	err := s.query(ctx, "roundBetsIn", []any{roundID, from}, func(rows *sql.Rows) error {
		var id string
		if err := rows.Scan(&id); err != nil {
			return err
		}
		if _, ok := txIDs[id]; ok {
			left = append(left, id)
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("store: bets of round %s in %s: %w", roundID, from, err)
	}
	if len(left) == 0 {
		return 0, nil
	}
	moved := 0
	if s.dialect == DialectPostgres {
		txs := make([]string, len(left))
		for i, id := range left {
			txs[i] = txIDs[id]
		}
		done := map[string]bool{}
		err := s.query(ctx, "moveDecidedBets", []any{to, left, txs, left, from}, func(rows *sql.Rows) error {
			var id string
			if err := rows.Scan(&id); err != nil {
				return err
			}
			done[id] = true
			return nil
		})
		if err != nil {
			return 0, fmt.Errorf("store: move %d bets of round %s %s -> %s: %w", len(left), roundID, from, to, err)
		}
		moved = len(done)
		left = slices.DeleteFunc(left, func(id string) bool { return done[id] })
		for _, id := range left {
			ok, err := s.MoveBet(ctx, id, from, to, BetChange{OperatorTxID: txIDs[id]})
			if err != nil {
				return moved, err
			}
			if ok {
				moved++
			}
		}
		return moved, nil
	}
	err = s.InTx(ctx, func(ctx context.Context) error {
		moved = 0
		for _, id := range left {
			ok, err := s.MoveBet(ctx, id, from, to, BetChange{OperatorTxID: txIDs[id]})
			if err != nil {
				return err
			}
			if ok {
				moved++
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return moved, nil
}

// MoveRoundBets moves every bet of a round still in status from to status to,
// with payout and settledAt, in one statement, and returns their ids: the bets
// a crash settles. A bet whose auto_cashout is between 1 and keepAutosTo is
// not moved (keepAutosTo 0: none is kept).
func (s *Store) MoveRoundBets(ctx context.Context, roundID, from, to string, payout int64, settledAt Millis, keepAutosTo int64) ([]string, error) {
	var ids []string
	err := s.conn(ctx).NewUpdate().Model((*BetRecord)(nil)).
		Set("status = ?", to).Set("settled_at = ?", settledAt).Set("payout = ?", payout).
		Where("round_id = ?", roundID).Where("status = ?", from).
		Where("(auto_cashout IS NULL OR auto_cashout > ?)", keepAutosTo).
		Returning("id").Scan(ctx, &ids)
	if err != nil {
		return nil, fmt.Errorf("store: bets of round %s %s -> %s: %w", roundID, from, to, err)
	}
	return ids, nil
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
	PlacedBefore Millis
	// PlacedFrom, when set, selects bets placed at or after it; AfterPlaced
	// and AfterID, when AfterID is set, those strictly after that bet in
	// the order (placed_at, id): a cursor of ascending pages.
	PlacedFrom  Millis
	AfterPlaced Millis
	AfterID     string
	NewestFirst bool // by placed_at then id, descending; else ascending
	Limit       int
}

// Bets lists the bets that f selects, ordered by placed_at then id.
func (s *Store) Bets(ctx context.Context, f BetFilter) ([]BetRecord, error) {
	out := make([]BetRecord, 0)
	q := s.conn(ctx).NewSelect().Model(&out)
	if f.ID != "" {
		q = q.Where("id = ?", f.ID)
	}
	if f.GameID != "" {
		q = q.Where("game_id = ?", f.GameID)
	}
	q = whereIn(q, "round_id", f.RoundIDs)
	if f.ExceptRound != "" {
		q = q.Where("round_id <> ?", f.ExceptRound)
	}
	if f.RoundEnded {
		q = q.Where("round_id IN (SELECT id FROM rounds WHERE status IN (?))", bun.List(endedRounds))
	}
	if f.SessionHash != nil {
		q = q.Where("session_hash = ?", f.SessionHash)
	}
	if f.Operator != "" {
		q = q.Where("operator = ?", f.Operator)
	}
	if f.PlayerID != "" {
		q = q.Where("player_id = ?", f.PlayerID)
	}
	q = whereIn(q, "status", f.Statuses)
	if f.PlacedBefore != 0 {
		q = q.Where("placed_at < ?", f.PlacedBefore)
	}
	if f.PlacedFrom != 0 {
		q = q.Where("placed_at >= ?", f.PlacedFrom)
	}
	if f.AfterID != "" {
		q = q.Where("(placed_at > ? OR (placed_at = ? AND id > ?))", f.AfterPlaced, f.AfterPlaced, f.AfterID)
	}
	if f.NewestFirst {
		q = q.OrderExpr("placed_at DESC, id DESC")
	} else {
		q = q.OrderExpr("placed_at, id")
	}
	if f.Limit > 0 {
		q = q.Limit(int64(f.Limit))
	}
	if err := q.Scan(ctx); err != nil {
		return nil, fmt.Errorf("store: list bets: %w", err)
	}
	return out, nil
}

// endedRounds are the statuses of a round that ended.
var endedRounds = []string{engine.RoundFinished, engine.RoundVoid}

// UnsettledBets counts the bets of game gameID left unsettled in rounds that
// ended (finished or void): accepted, or pending and placed before
// pendingBefore (a pending bet's /bet may still be answered until then).
// Every such bet is one a settlement missed: the tables' sweeps settle them.
func (s *Store) UnsettledBets(ctx context.Context, gameID string, pendingBefore Millis) (int64, error) {
	n, err := s.conn(ctx).NewSelect().Model((*BetRecord)(nil)).
		Where("game_id = ?", gameID).
		Where("(status = ? OR (status = ? AND placed_at < ?))", engine.StatusAccepted, engine.StatusPending, pendingBefore).
		Where("round_id IN (SELECT id FROM rounds WHERE status IN (?))", bun.List(endedRounds)).
		Count(ctx)
	if err != nil {
		return 0, fmt.Errorf("store: count the unsettled bets of %s: %w", gameID, err)
	}
	return int64(n), nil
}

// whereIn narrows q to rows whose column is one of vals; no vals, no
// narrowing.
func whereIn(q *bun.SelectQuery, column string, vals []string) *bun.SelectQuery {
	switch len(vals) {
	case 0:
		return q
	case 1:
		return q.Where("? = ?", bun.Ident(column), vals[0])
	default:
		return q.Where("? IN (?)", bun.Ident(column), bun.List(vals))
	}
}
