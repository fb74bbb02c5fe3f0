package store

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"github.com/uptrace/bun"
)

// Errors of the session reads: no row for that id hash.
var (
	ErrSessionNotFound         = errors.New("store: session not found")
	ErrSessionControlsNotFound = errors.New("store: session controls not found")
)

// SessionRecord is one player session as stored (table sessions, migration
// 0002), keyed by the SHA-256 of the session id (the id itself is never
// stored). Balance is display only: the last one the wallet reported.
type SessionRecord struct {
	bun.BaseModel `bun:"table:sessions"`

	IDHash     []byte `bun:"id_hash,pk"`
	Operator   string `bun:"operator"`
	GameID     string `bun:"game_id"`
	Token      string `bun:"token"`
	PlayerID   string `bun:"player_id"`
	PlayerName string `bun:"player_name"`
	Currency   string `bun:"currency"`
	Language   string `bun:"language"`
	Theme      string `bun:"theme"`
	Demo       bool   `bun:"demo"`
	Mobile     bool   `bun:"mobile"`
	LobbyURL   string `bun:"lobby_url"`
	DepositURL string `bun:"deposit_url"`
	Balance    int64  `bun:"balance"`
	CreatedAt  Millis `bun:"created_at"`
	ExpiresAt  Millis `bun:"expires_at"`
}

// SessionControlsRecord is a session's responsible gambling controls and their
// state (table session_controls, migration 0005); a row only when a control is
// on.
type SessionControlsRecord struct {
	bun.BaseModel `bun:"table:session_controls"`

	IDHash              []byte `bun:"id_hash,pk"`
	SessionClock        bool   `bun:"session_clock"`
	RealityCheckMinutes int    `bun:"reality_check_minutes"` // 0: off
	InactivityMinutes   int    `bun:"inactivity_minutes"`    // 0: off
	LastActionAt        Millis `bun:"last_action_at"`
	RealityCheckAckAt   Millis `bun:"reality_check_ack_at"` // zero before the first acknowledgement
}

// SessionBalance is a session's display balance to persist: the session
// IDHash, or, when IDHash is nil, every session of Operator's PlayerID in
// Currency ("" every currency) that is not demo, was opened at or before At
// and is not expired at At: a balance heard before a session opened is not
// that session's (its opening asked the wallet).
type SessionBalance struct {
	IDHash  []byte
	Balance int64

	Operator, PlayerID, Currency string
	At                           Millis
}

// InsertSession stores a new session and, when controls is not nil, its
// controls row, both or neither (one transaction, joining the one of ctx if
// any).
func (s *Store) InsertSession(ctx context.Context, rec *SessionRecord, controls *SessionControlsRecord) error {
	if controls == nil {
		if _, err := s.conn(ctx).NewInsert().Model(rec).Exec(ctx); err != nil {
			return fmt.Errorf("store: insert session: %w", err)
		}
		return nil
	}
	err := s.InTx(ctx, func(ctx context.Context) error {
		db := s.conn(ctx)
		if _, err := db.NewInsert().Model(rec).Exec(ctx); err != nil {
			return err
		}
		_, err := db.NewInsert().Model(controls).Exec(ctx)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: insert session: %w", err)
	}
	return nil
}

// SessionByHash returns the session stored under this id hash, or
// ErrSessionNotFound.
func (s *Store) SessionByHash(ctx context.Context, hash []byte) (*SessionRecord, error) {
	return rowWhere[SessionRecord](ctx, s.conn(ctx), "id_hash", hash, ErrSessionNotFound, "read session")
}

// SessionControls returns the controls row of the session with this id hash,
// or ErrSessionControlsNotFound when it has none.
func (s *Store) SessionControls(ctx context.Context, hash []byte) (*SessionControlsRecord, error) {
	return rowWhere[SessionControlsRecord](ctx, s.conn(ctx), "id_hash", hash, ErrSessionControlsNotFound, "read session controls")
}

// sqlitePlayerBalances is how many players' balances WriteSessionStates
// writes in one transaction on SQLite: about 3 ms of the one writer's time
// (a player's statement takes about 50 µs there), so a bet's or a
// cashout's commit never waits longer behind a flush, and a flush of 2,000
// players commits 32 times, not 2,000.
const sqlitePlayerBalances = 64

// WriteSessionStates persists the display balances and the controls' state
// (last action, last reality check acknowledgement) of sessions. A player's
// balances (IDHash nil) are written first; then those of sessions and the
// controls in one transaction (joining the one of ctx if any): all or none.
// A hash with no row changes nothing.
//
// On PostgreSQL the players' balances are one transaction: it first locks
// every session of those players, in the order of their hashes, in one
// statement, then writes each player's among those rows only. Concurrent
// writers (the replicas of a cluster) never deadlock, because every
// transaction locks rows in the order of their hashes; and a flush is one
// commit and two statements, not a commit and a statement a player (until 29 November it was one a player: about
// half a commit an accepted bet, PostgreSQL's first limit in
// docs/capacity.md). On SQLite, whose one writer excludes every other, the
// players' balances are written sqlitePlayerBalances to a transaction:
// each commit is an fsync that the table's commits would otherwise queue
// behind, one a player.
func (s *Store) WriteSessionStates(ctx context.Context, balances []SessionBalance, controls []*SessionControlsRecord) error {
	var own, players []SessionBalance
	for _, b := range balances {
		if b.IDHash != nil {
			own = append(own, b)
		} else {
			players = append(players, b)
		}
	}
	if err := s.writePlayerBalances(ctx, players); err != nil {
		return err
	}
	balances = own
	if len(balances) == 0 && len(controls) == 0 {
		return nil
	}
	// Rows are locked in one order, by id hash, whatever the caller's: two
	// replicas writing overlapping batches then wait for each other rather
	// than deadlock.
	balances = slices.SortedFunc(slices.Values(balances), func(a, b SessionBalance) int { return bytes.Compare(a.IDHash, b.IDHash) })
	controls = slices.SortedFunc(slices.Values(controls), func(a, b *SessionControlsRecord) int { return bytes.Compare(a.IDHash, b.IDHash) })
	err := s.InTx(ctx, func(ctx context.Context) error {
		db := s.conn(ctx)
		for _, b := range balances {
			if _, err := db.NewUpdate().Model((*SessionRecord)(nil)).Set("balance = ?", b.Balance).
				Where("id_hash = ?", b.IDHash).Exec(ctx); err != nil {
				return err
			}
		}
		for _, c := range controls {
			if _, err := db.NewUpdate().Model(c).Column("last_action_at", "reality_check_ack_at").
				WherePK().Exec(ctx); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: write session states: %w", err)
	}
	return nil
}

// writePlayerBalances writes each player's balance: in one transaction on
// PostgreSQL (writePlayerBalancesLocked), sqlitePlayerBalances to a
// transaction on SQLite (writePlayerBalance).
func (s *Store) writePlayerBalances(ctx context.Context, players []SessionBalance) error {
	if len(players) == 0 {
		return nil
	}
	if s.dialect != DialectSQLite {
		return s.InTx(ctx, func(ctx context.Context) error { return s.writePlayerBalancesLocked(ctx, players) })
	}
	for chunk := range slices.Chunk(players, sqlitePlayerBalances) {
		err := s.InTx(ctx, func(ctx context.Context) error {
			for _, b := range chunk {
				if err := s.writePlayerBalance(ctx, b); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// writePlayerBalancesLocked is writePlayerBalances on PostgreSQL, inside
// a transaction: the sessions of every player of players locked at once,
// in the order of their hashes, then every balance written among the
// locked rows in one statement (as writePlayerBalance: not demo, not
// expired at b.At, in b's currency or every one; of two that match one
// session, the later in players). A session opened since the lock is left
// as its opening wrote it (the wallet's /balance then).
func (s *Store) writePlayerBalancesLocked(ctx context.Context, players []SessionBalance) error {
	ops, ids := make([]string, len(players)), make([]string, len(players))
	for i, b := range players {
		ops[i], ids[i] = b.Operator, b.PlayerID
	}
	var locked [][]byte
	err := s.query(ctx, "lockPlayerSessions", []any{ops, ids}, func(rows *sql.Rows) error {
		var h []byte
		if err := rows.Scan(&h); err != nil {
			return err
		}
		locked = append(locked, h)
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: lock the sessions of %d players: %w", len(players), err)
	}
	if len(locked) == 0 {
		return nil
	}
	currencies, amounts, ats := make([]string, len(players)), make([]int64, len(players)), make([]int64, len(players))
	for i, b := range players {
		currencies[i], amounts[i], ats[i] = b.Currency, b.Balance, int64(b.At)
	}
	if _, err := s.exec(ctx, "playerBalancesLocked", locked, ops, ids, currencies, amounts, ats); err != nil {
		return fmt.Errorf("store: write the balances of %d players: %w", len(players), err)
	}
	return nil
}

// writePlayerBalance sets the balance of every session of b's player in b's
// currency ("" every currency) that is not demo, opened at or before b.At
// and not expired at b.At, locking them in the order of their hashes (on PostgreSQL; SQLite has one
// writer).
func (s *Store) writePlayerBalance(ctx context.Context, b SessionBalance) error {
	if _, err := s.exec(ctx, "playerBalance", b.Balance, b.Operator, b.PlayerID, false, int64(b.At), int64(b.At), b.Currency, b.Currency); err != nil {
		return fmt.Errorf("store: write the balance of player %s of %s: %w", b.PlayerID, b.Operator, err)
	}
	return nil
}
