package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/crashstudio/crashgame/internal/leadership"
	"github.com/uptrace/bun"
)

// Errors of the leases.
var (
	// ErrLeaseNotFound: no lease of this game was ever taken.
	ErrLeaseNotFound = errors.New("store: lease not found")
)

// LeaseRecord is the lease of one game's table (table leases, migration
// 0006): who leads the table, at which fencing epoch, and until when. Times
// are the database's clock.
type LeaseRecord struct {
	bun.BaseModel `bun:"table:leases"`

	GameID     string `bun:"game_id,pk"`
	Holder     string `bun:"holder"`
	Epoch      int64  `bun:"epoch"`       // 1 for the first holder, +1 at each acquisition
	ExpiresAt  Millis `bun:"expires_at"`  // live while the database's now < ExpiresAt; 0: released
	AcquiredAt Millis `bun:"acquired_at"` // when Holder acquired it at Epoch
}

// dbNowMillis is the SQL expression of the database's clock in Unix
// milliseconds, read when the statement runs: PostgreSQL's clock_timestamp(),
// never now() (the start of the transaction), and SQLite's
// unixepoch('subsec'), the same within one statement.
func (s *Store) dbNowMillis() string {
	if s.dialect == DialectPostgres {
		return "floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint"
	}
	return "CAST(unixepoch('subsec') * 1000 AS INTEGER)"
}

// leaseTTL checks a lease's time to live and returns it in milliseconds.
func leaseTTL(ttl time.Duration) (int64, error) {
	if ttl < time.Millisecond {
		return 0, fmt.Errorf("ttl %s is under a millisecond", ttl)
	}
	return ttl.Milliseconds(), nil
}

// AcquireLease takes the lease of gameID for holder for ttl when no row
// exists, or the lease expired (database clock), or its expires_at is 0
// (released). The epoch becomes the previous epoch + 1 (1 for the first). ok
// is false, with no error, while another holder's lease is live. A holder
// that already holds a live lease gets ok=false too (it must Renew).
//
// It is one statement (INSERT ... ON CONFLICT DO UPDATE ... WHERE the lease
// is free, RETURNING epoch): of concurrent acquirers of a free lease exactly
// one gets it. On PostgreSQL it first locks the lease row FOR UPDATE, in the
// same transaction: an acquirer waits for the winner's commit and then finds
// the lease live, and waits for every transaction that passed CheckLease on
// this lease to end. The database's now is read once, after any such wait,
// and is both the new acquired_at and the instant at which the old lease must
// have expired.
func (s *Store) AcquireLease(ctx context.Context, gameID, holder string, ttl time.Duration) (epoch int64, ok bool, err error) {
	ms, err := leaseTTL(ttl)
	if err != nil {
		return 0, false, fmt.Errorf("store: acquire lease of %s: %w", gameID, err)
	}
	// SELECT ... WHERE true rather than VALUES: the clock is read once for
	// both columns, and SQLite needs the WHERE to parse the ON CONFLICT of
	// an INSERT ... SELECT.
	query := "INSERT INTO leases (game_id, holder, epoch, expires_at, acquired_at) " +
		"SELECT ?, ?, 1, clock.now_ms + ?, clock.now_ms FROM (SELECT " + s.dbNowMillis() + " AS now_ms) AS clock WHERE true " +
		"ON CONFLICT (game_id) DO UPDATE SET holder = excluded.holder, epoch = leases.epoch + 1, " +
		"expires_at = excluded.expires_at, acquired_at = excluded.acquired_at " +
		"WHERE leases.expires_at <= excluded.acquired_at " +
		"RETURNING epoch"
	err = s.InTx(ctx, func(ctx context.Context) error {
		if s.dialect == DialectPostgres {
			// FOR UPDATE waits for every transaction that passed CheckLease
			// (FOR KEY SHARE); the upsert alone changes no key and would not.
			if _, err := s.conn(ctx).NewSelect().Model((*LeaseRecord)(nil)).Column("epoch").
				Where("game_id = ?", gameID).For("UPDATE").Exec(ctx); err != nil {
				return err
			}
		}
		return s.conn(ctx).QueryRowContext(ctx, query, gameID, holder, ms).Scan(&epoch)
	})
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return 0, false, nil // live, held by someone (holder included)
	case err != nil:
		return 0, false, fmt.Errorf("store: acquire lease of %s: %w", gameID, err)
	}
	return epoch, true, nil
}

// RenewLease extends holder's lease at epoch to now+ttl (database clock).
// false, nil when the row has another epoch or holder (taken over), or when
// the lease was released (ReleaseLease: a release is final, a renewal racing
// it never revives the lease under a successor's feet). A lease that expired
// but was not taken over is renewed (nobody else committed).
//
// It runs on the lease's own connection, never queued behind the process's
// other statements nor waiting for a connection to open. On PostgreSQL it
// does not wait for the leader's transactions that passed CheckLease (FOR
// KEY SHARE: it changes no key of the row). On a SQLite file it waits only
// for the write transaction in progress (one writer), trying again every
// millisecond until ctx ends.
func (s *Store) RenewLease(ctx context.Context, gameID, holder string, epoch int64, ttl time.Duration) (bool, error) {
	ms, err := leaseTTL(ttl)
	if err != nil {
		return false, fmt.Errorf("store: renew lease of %s: %w", gameID, err)
	}
	db := s.conn(ctx)
	own := s.lease != nil && !s.tx.Carries(ctx) // not inside a caller's transaction
	if own {
		db = s.lease
	}
	for {
		q := db.NewUpdate().Model((*LeaseRecord)(nil)).
			Set("expires_at = "+s.dbNowMillis()+" + ?", ms).
			Where("game_id = ?", gameID).Where("holder = ?", holder).Where("epoch = ?", epoch).
			Where("expires_at <> 0")
		n, err := affected("renew lease of " + gameID)(q.Exec(ctx))
		// A renewal whose context ended while it ran, failed or not, may
		// leave its connection stale (pgCancel): open the next one now.
		if own && (err != nil || ctx.Err() != nil) && !sqliteBusy(err) {
			s.warmLease()
		}
		if !own || !sqliteBusy(err) {
			return n == 1, err
		}
		// The main connection holds the write lock: try again as soon as
		// its transaction may have ended.
		select {
		case <-ctx.Done():
			return false, fmt.Errorf("store: renew lease of %s: %w (the database stayed locked)", gameID, ctx.Err())
		case <-time.After(time.Millisecond):
		}
	}
}

// ReleaseLease ends holder's lease at epoch at once (expires_at = 0) so that
// another replica acquires it without waiting out the ttl; the epoch is
// unchanged. No error when it was already taken over (nothing is changed).
func (s *Store) ReleaseLease(ctx context.Context, gameID, holder string, epoch int64) error {
	q := s.conn(ctx).NewUpdate().Model((*LeaseRecord)(nil)).Set("expires_at = 0").
		Where("game_id = ?", gameID).Where("holder = ?", holder).Where("epoch = ?", epoch)
	_, err := affected("release lease of " + gameID)(q.Exec(ctx))
	return err
}

// CheckLease fails with leadership.ErrFenced unless the lease of gameID has epoch (no
// lease at all is fenced too). Call it inside InTx: on PostgreSQL it locks the
// lease row FOR KEY SHARE until the transaction ends. A takeover
// (AcquireLease) locks the row FOR UPDATE first, so it waits for the
// transaction to end and can never interleave with it (the transaction
// commits under the epoch it checked); a renewal, an UPDATE of a column that
// is no key, takes FOR NO KEY UPDATE and does not wait. On SQLite the
// transaction holds the one writer, which a takeover and a renewal wait for.
// It checks the epoch only, not the expiry.
func (s *Store) CheckLease(ctx context.Context, gameID string, epoch int64) error {
	var held int64
	err := s.queryRow(ctx, "checkLease", []any{gameID}, &held)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("%w: %s has no lease, checked at epoch %d", leadership.ErrFenced, gameID, epoch)
	case err != nil:
		return fmt.Errorf("store: check lease of %s: %w", gameID, err)
	case held != epoch:
		return fmt.Errorf("%w: %s is held at epoch %d, checked at %d", leadership.ErrFenced, gameID, held, epoch)
	}
	return nil
}

// Lease reads the lease of gameID; ErrLeaseNotFound when none.
func (s *Store) Lease(ctx context.Context, gameID string) (LeaseRecord, error) {
	rec, err := rowWhere[LeaseRecord](ctx, s.conn(ctx), "game_id", gameID, ErrLeaseNotFound, "read lease")
	if err != nil {
		return LeaseRecord{}, err
	}
	return *rec, nil
}
