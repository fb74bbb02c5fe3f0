package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/uptrace/bun"
)

// LaunchControlsRecord is the responsible gambling controls of a player's
// latest /v1/launch for an operator (table launch_controls, migration 0010).
// The legacy launch carries no controls of its own: its session takes these.
// Each launch that is not demo replaces the row, in the same transaction as its
// ticket; the zero controls are stored too (a later launch with every control
// off switches them off). No token is stored.
type LaunchControlsRecord struct {
	bun.BaseModel `bun:"table:launch_controls"`

	Operator            string `bun:"operator,pk"`
	PlayerID            string `bun:"player_id,pk"`
	SessionClock        bool   `bun:"session_clock"`
	RealityCheckMinutes int    `bun:"reality_check_minutes"` // 0: off
	InactivityMinutes   int    `bun:"inactivity_minutes"`    // 0: off
	LaunchedAt          Millis `bun:"launched_at"`           // the ticket's created_at
}

// LaunchControls returns the controls of the player's latest launch for the
// operator; ok is false when the player was never launched with /v1/launch
// (outside demo) since migration 0010.
func (s *Store) LaunchControls(ctx context.Context, operator, playerID string) (rec LaunchControlsRecord, ok bool, err error) {
	err = s.db.NewSelect().Model(&rec).Where("operator = ? AND player_id = ?", operator, playerID).Scan(ctx)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return LaunchControlsRecord{}, false, nil
	case err != nil:
		return LaunchControlsRecord{}, false, fmt.Errorf("store: launch controls: %w", err)
	}
	return rec, true, nil
}

// launchControlsOf are the launch_controls rows of a batch of tickets: one per
// operator and player of the tickets that are not demo, the latest issued
// winning (of two issued in the same millisecond, the later in the batch).
func launchControlsOf(recs []TicketRecord) []LaunchControlsRecord {
	type key struct{ operator, player string }
	at := map[key]int{}
	var out []LaunchControlsRecord
	for _, r := range recs {
		if r.Demo || r.PlayerID == "" {
			continue
		}
		c := LaunchControlsRecord{Operator: r.Operator, PlayerID: r.PlayerID, SessionClock: r.Controls.SessionClock,
			RealityCheckMinutes: r.Controls.RealityCheckMinutes, InactivityMinutes: r.Controls.InactivityMinutes, LaunchedAt: r.CreatedAt}
		k := key{r.Operator, r.PlayerID}
		if i, seen := at[k]; seen {
			if c.LaunchedAt >= out[i].LaunchedAt {
				out[i] = c
			}
			continue
		}
		at[k] = len(out)
		out = append(out, c)
	}
	return out
}

// launchControlsUpsert is the statement that writes recs, each replacing the
// stored row of its operator and player unless that row is of a later launch
// (two replicas' batches may commit out of order).
func launchControlsUpsert(db bun.IDB, recs []LaunchControlsRecord) *bun.InsertQuery {
	return db.NewInsert().Model(&recs).
		On("CONFLICT (operator, player_id) DO UPDATE").
		Set("session_clock = EXCLUDED.session_clock").
		Set("reality_check_minutes = EXCLUDED.reality_check_minutes").
		Set("inactivity_minutes = EXCLUDED.inactivity_minutes").
		Set("launched_at = EXCLUDED.launched_at").
		Where("?TableAlias.launched_at <= EXCLUDED.launched_at")
}
