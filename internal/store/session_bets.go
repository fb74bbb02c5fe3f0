package store

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"
)

// SessionBetTotal is the sum of the bets of one session in one status, told
// apart by whether they were freebet bets.
type SessionBetTotal struct {
	Status  string // the bet status as stored (pending, accepted, cashed_out, ...)
	Freebet bool   // bets with a freebet_id
	Count   int64
	Amount  int64 // sum of amount
	Payout  int64 // sum of payout (NULL counts 0)
}

// SessionBetTotals sums the bets of the session with this id hash by status
// and by freebet or not, in one read (no row: no bets). What counts as staked
// or won is the caller's.
func (s *Store) SessionBetTotals(ctx context.Context, sessionHash []byte) ([]SessionBetTotal, error) {
	var totals []SessionBetTotal
	rows, err := s.conn(ctx).QueryContext(ctx,
		"SELECT status, CASE WHEN freebet_id IS NULL THEN 0 ELSE 1 END AS freebet, CAST(COUNT(*) AS BIGINT),"+
			" CAST(COALESCE(SUM(amount), 0) AS BIGINT), CAST(COALESCE(SUM(payout), 0) AS BIGINT)"+
			" FROM bets WHERE session_hash = ? GROUP BY status, CASE WHEN freebet_id IS NULL THEN 0 ELSE 1 END",
		sessionHash)
	if err != nil {
		return nil, fmt.Errorf("store: session bet totals: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			t       SessionBetTotal
			freebet int
		)
		if err := rows.Scan(&t.Status, &freebet, &t.Count, &t.Amount, &t.Payout); err != nil {
			return nil, fmt.Errorf("store: session bet totals: %w", err)
		}
		t.Freebet = freebet == 1
		totals = append(totals, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: session bet totals: %w", err)
	}
	return totals, nil
}

// SessionHasBets reports whether the session with this id hash has at least
// one bet in one of statuses.
func (s *Store) SessionHasBets(ctx context.Context, sessionHash []byte, statuses ...string) (bool, error) {
	if len(statuses) == 0 {
		return false, nil
	}
	ok, err := s.conn(ctx).NewSelect().Table("bets").
		Where("session_hash = ?", sessionHash).
		Where("status IN (?)", bun.List(statuses)).
		Exists(ctx)
	if err != nil {
		return false, fmt.Errorf("store: session has bets: %w", err)
	}
	return ok, nil
}
