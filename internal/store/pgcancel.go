package store

import (
	"context"
	"database/sql/driver"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
)

// A statement whose context ends is cancelled by PostgreSQL: the client
// opens a second connection and sends the backend's id and key on it, and
// the server signals the backend. The signal cancels whatever statement that
// backend runs when it arrives, not the statement it was sent for. If it
// arrives late (a loaded server forks the process that reads the request
// late), it cancels the next statement of the connection: another request's
// session read, answered 500, or the lease's renewal (seen in the cluster
// suite's rolling restart, 28 November, "canceling statement due to user
// request" on statements whose own context was live).
//
// The server closes the cancel connection once it has signalled the
// backend, so a cancel that was acknowledged can no longer hit a later
// statement (a signal that reaches an idle backend is ignored; pgx's own
// handler waits a further 100 ms for its delivery, and so does this one). A
// cancel that was not acknowledged within pgCancelGrace may still be on its
// way: the connection is then never used again (the pool's session reset
// discards it), at the price of a new connection. For the lease's own
// connection, that price is paid at once in the background (warmLease),
// not by the next renewal inside its budget.
const pgCancelSettle = 100 * time.Millisecond

// pgCancelKey is where a connection's pgCancel is kept in its CustomData.
const pgCancelKey = "crashgame.cancel"

// pgCancel is the context watcher of one PostgreSQL connection: it asks the
// server to cancel a statement whose context ended, gives the connection up
// pgCancelGrace later if the statement is still running, and marks the
// connection stale when the server did not acknowledge the cancel in time.
type pgCancel struct {
	conn   *pgconn.PgConn
	grace  time.Duration
	done   chan struct{}
	stale  atomic.Bool
	staled *atomic.Int64 // the store's count of connections marked stale
}

// newPGCancel is pgx's BuildContextWatcherHandler: it is called once for
// each connection, while it is opened, before any statement.
func newPGCancel(grace time.Duration, staled *atomic.Int64) func(*pgconn.PgConn) ctxwatch.Handler {
	return func(c *pgconn.PgConn) ctxwatch.Handler {
		h := &pgCancel{conn: c, grace: grace, staled: staled}
		c.CustomData()[pgCancelKey] = h
		return h
	}
}

// HandleCancel runs when the context of the statement in flight ends.
func (h *pgCancel) HandleCancel(stmt context.Context) {
	deadline := time.Now().Add(h.grace)
	_ = h.conn.Conn().SetDeadline(deadline) // the statement's last resort
	h.done = make(chan struct{})
	go func() {
		defer close(h.done)
		// The statement's context has ended: the request lives until the
		// deadline.
		ctx, cancel := context.WithDeadline(context.WithoutCancel(stmt), deadline)
		defer cancel()
		// CancelRequest returns once the server closed the cancel
		// connection, or at the deadline; it reports neither apart, the
		// context does.
		if err := h.conn.CancelRequest(ctx); err != nil || ctx.Err() != nil {
			h.stale.Store(true)
			h.staled.Add(1)
			return
		}
		time.Sleep(pgCancelSettle)
	}()
}

// HandleUnwatchAfterCancel runs when the statement returned after its
// context ended: it waits for the cancel's fate (at most the grace and the
// settle), so that the connection is reused only once a cancel sent for it
// can hit nothing, or is marked stale.
func (h *pgCancel) HandleUnwatchAfterCancel() {
	<-h.done
	_ = h.conn.Conn().SetDeadline(time.Time{})
}

// resetSession is the pool's check before it reuses a connection: one
// whose cancel may still arrive is discarded.
func resetSession(_ context.Context, c *pgx.Conn) error {
	if h, ok := c.PgConn().CustomData()[pgCancelKey].(*pgCancel); ok && h.stale.Load() {
		return driver.ErrBadConn
	}
	return nil
}
