package engine

// Transitional (issue 12): these two reads move to the store with sessions.

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/crashstudio/crashgame/internal/store"
)

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
	err := db.NewSelect().Model((*store.BetRecord)(nil)).
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
	ok, err := db.NewSelect().Model((*store.BetRecord)(nil)).
		Where("session_hash = ?", sessionHash).
		Where("status IN (?)", bun.List([]string{StatusPending, StatusAccepted})).
		Exists(ctx)
	if err != nil {
		return false, fmt.Errorf("session live bets: %w", err)
	}
	return ok, nil
}
