package leadership

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// ErrFenced: the lease of the table is held at another epoch; the caller is
// no longer its leader. The database's fence (a check inside each of a
// leader's transactions) answers it, and the transaction rolls back.
var ErrFenced = errors.New("leadership: fenced: the table's lease is held at another epoch")

// Store is the lease in the database, named by the table's game. The
// database counts a lease's TTL on its own clock, from a moment no earlier
// than the statement's start.
type Store interface {
	// AcquireLease takes the lease for holder when it is free or expired; ok
	// is false while a holder (holder included) has it live. The epoch is
	// the previous one plus one.
	AcquireLease(ctx context.Context, name, holder string, ttl time.Duration) (epoch int64, ok bool, err error)
	// RenewLease extends holder's lease at epoch; false when it was taken
	// over or released.
	RenewLease(ctx context.Context, name, holder string, epoch int64, ttl time.Duration) (bool, error)
	// ReleaseLease ends holder's lease at epoch at once, so that another
	// process need not wait for its expiry.
	ReleaseLease(ctx context.Context, name, holder string, epoch int64) error
}

// Clock is the elector's time: the real one in production (the database's
// lease runs on real time), a manual one in tests. engine.Clock satisfies it.
type Clock interface {
	Now() time.Time
	// After fires once, at or after d from now.
	After(d time.Duration) <-chan time.Time
}

// at fires once c reaches t. A clock that can wait for a moment rather than
// a duration (Until(t time.Time) <-chan time.Time, a test's) is asked to:
// a duration counted from a Now read earlier would shift the moment by
// whatever the clock moved in between.
func at(c Clock, t time.Time) <-chan time.Time {
	if u, ok := c.(interface {
		Until(t time.Time) <-chan time.Time
	}); ok {
		return u.Until(t)
	}
	return c.After(t.Sub(c.Now()))
}

// systemClock is the real clock.
type systemClock struct{}

func (systemClock) Now() time.Time                         { return time.Now() }
func (systemClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Settings say how a process leads a table: it plays rounds only while it
// holds the game's lease in the database, and every transaction it commits
// checks the lease's fencing epoch.
type Settings struct {
	// Holder names this process in the lease (default: a random id per
	// elector, so a restarted process is a new holder).
	Holder string
	// TTL is how long a lease lives without renewal (default 2 s): the
	// longest a dead leader keeps its table from the others.
	TTL time.Duration
	// Renew is how often the leader renews it (default TTL/4).
	Renew time.Duration
	// Hold is how long a term lasts, counted from the start of the
	// statement that took or last renewed its lease, while no renewal
	// answers (default 2×TTL): a renewal that is slow to answer (a starved
	// process, a loaded database) keeps the term until then, and the
	// answer decides. It is at least the TTL.
	Hold time.Duration
	// Retry is how often a process that does not lead tries to take the
	// lease (default 250 ms).
	Retry time.Duration
	// Able, when set, tells whether this process can lead at all (in a
	// cluster: it is connected to the other replicas). A process that is not
	// able neither takes the lease nor renews it, so that a replica cut off
	// from the others hands its tables to one that is not, within a TTL.
	Able func() bool
	// Sole says that no other process can lead the table: this one owns its
	// database (one process on a SQLite file it locked, store's Own). Its
	// lease is taken as usual, for the fencing epoch, then never renewed:
	// a sole term has no deadline and ends only when its owner ends it or
	// Run returns, so that a slow database (a starved machine, a long
	// write) never ends a term that nobody else could take over. Able is
	// not consulted while a sole term lasts.
	Sole bool
	// Clock is the lease's time (nil: the real clock). It is not the
	// table's clock: the lease runs on the database's, real time, whatever
	// a test does with the table's.
	Clock Clock
}

func (s *Settings) setDefaults() {
	if s.Holder == "" {
		s.Holder = randomID()
	}
	if s.TTL <= 0 {
		s.TTL = 2 * time.Second
	}
	if s.Renew <= 0 || s.Renew >= s.TTL {
		s.Renew = s.TTL / 4
	}
	if s.Hold < s.TTL {
		s.Hold = 2 * s.TTL
	}
	if s.Retry <= 0 {
		s.Retry = 250 * time.Millisecond
	}
	if s.Clock == nil {
		s.Clock = systemClock{}
	}
}

// Elector takes, keeps and gives up one table's lease (Run) and announces
// each term to its subscribers.
type Elector struct {
	name   string
	set    Settings
	store  Store
	clock  Clock
	logger *slog.Logger

	epoch atomic.Int64 // the current term's, 0 while not leading

	mu   sync.Mutex
	term *Term // the current term, nil while not leading
	subs map[*Subscription]struct{}
}

// New returns the elector of the lease name (the table's game id). Call Run.
func New(name string, store Store, set Settings, logger *slog.Logger) *Elector {
	set.setDefaults()
	if logger == nil {
		logger = slog.Default()
	}
	return &Elector{name: name, set: set, store: store, clock: set.Clock, logger: logger,
		subs: map[*Subscription]struct{}{}}
}

// Settings returns the settings in use, defaults applied.
func (e *Elector) Settings() Settings { return e.set }

// Leading reports whether this process leads now (holds a term).
func (e *Elector) Leading() bool { return e.epoch.Load() != 0 }

// Epoch returns the fencing epoch of the current term, 0 while not leading.
func (e *Elector) Epoch() int64 { return e.epoch.Load() }

// Run takes the lease whenever it is free, keeps it renewed while a term
// lasts, and takes it again (Retry after a term ended, letting the others
// try first) until ctx ends. A term still held then ends, and its lease is
// released: cancel ctx only once the term's owner wrote its last.
func (e *Elector) Run(ctx context.Context) {
	var next time.Time // at once
	for {
		term := e.campaign(ctx, next)
		if term == nil {
			return
		}
		e.keep(ctx, term)
		next = term.ended.Add(e.set.Retry)
	}
}

// campaign tries to take the lease from next on, and then a Retry after the
// start of each attempt, until it holds a live term, which it announces; nil
// once ctx ends.
func (e *Elector) campaign(ctx context.Context, next time.Time) *Term {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-at(e.clock, next):
		}
		next = e.clock.Now().Add(e.set.Retry)
		if !e.able() {
			continue
		}
		if term := e.acquire(ctx); term != nil {
			e.begin(term)
			return term
		}
	}
}

// acquire makes one attempt to take the lease. The term's deadline and the
// lease's expiry are counted from the moment the statement started, never
// from its answer: the database counts the TTL from no earlier than that. A
// lease whose expiry passed before the answer arrived (a database stall) is
// released at once: nil.
func (e *Elector) acquire(ctx context.Context) *Term {
	since := e.clock.Now()
	epoch, ok, err := e.store.AcquireLease(context.WithoutCancel(ctx), e.name, e.set.Holder, e.set.TTL)
	switch {
	case err != nil:
		e.logger.Error("taking the table's lease failed; retrying", "err", err)
		return nil
	case !ok:
		return nil
	}
	term := newTerm(ctx, e, epoch, since)
	if ctx.Err() == nil && e.clock.Now().Before(expiry(since, e.set.TTL)) {
		return term
	}
	term.cancel()
	if ctx.Err() == nil {
		e.logger.Warn("the table's lease ran out while it was being taken; releasing it", "epoch", epoch)
	}
	if err := e.release(ctx, epoch); err != nil {
		e.logger.Warn("releasing the table's lease failed; it expires by itself", "epoch", epoch, "err", err)
	}
	return nil
}

// keep renews term's lease every Renew until the term ends. The lease's
// expiry as this process counts it (expires: the TTL less an eighth from
// the start of the statement that last landed) decides only for a process
// that chose not to renew (not Able) and for a renewal the database
// answered with an error: either steps down then. A renewal that has not
// answered holds the term until the term's deadline (Hold from that same
// start): a starved process or a slow database does not end a term whose
// lease nobody took. The answer decides: landed, the term goes on; the lease
// taken over or released, it steps down at once. Between the lease's expiry
// in the database and the deadline another process may take the lease and
// lead: every write of this term is fenced by its epoch, so none commits
// once another took over, and the next renewal that lands says so.
func (e *Elector) keep(ctx context.Context, term *Term) {
	if e.set.Sole {
		<-term.Done() // ended by its owner, or ctx ended
		if ctx.Err() != nil {
			e.end(term)
			if err := e.release(ctx, term.epoch); err != nil {
				e.logger.Warn("releasing the table's lease failed; it expires by itself", "epoch", term.epoch, "err", err)
			}
		}
		return
	}
	ttl := e.set.TTL
	expires := expiry(term.since, ttl)
	lapse := at(e.clock, expires)
	hold := at(e.clock, term.Deadline())
	// Renewals keep to a grid of Renew from the lease's taking, as a ticker
	// does: one that took longer than Renew is followed by the next at once.
	tick := term.since.Add(e.set.Renew)
	for {
		select {
		case <-term.Done(): // ended by its owner, or ctx ended
			if ctx.Err() != nil {
				e.end(term)
				if err := e.release(ctx, term.epoch); err != nil {
					e.logger.Warn("releasing the table's lease failed; it expires by itself", "epoch", term.epoch, "err", err)
				}
			}
			return
		case <-hold:
			e.stepDown(term, "no renewal of the table's lease answered in time; stepping down")
			return
		case <-lapse:
			// No renewal landed before the lease may expire: one that was
			// due did not run (a starved process), or the ticks that ran
			// did not renew (not able, or the database answered errors).
			if !e.able() {
				e.stepDown(term, "the table's lease could not be renewed in time (this process cannot lead now); stepping down")
				return
			}
			lapse = nil
			tick = e.clock.Now() // renew now: the answer decides
		case <-at(e.clock, tick):
		}
		for now := e.clock.Now(); !tick.After(now); {
			tick = tick.Add(e.set.Renew)
		}
		// A process that is not able to lead does not renew: its lease runs
		// out and another one leads.
		if !e.able() {
			e.logger.Warn("not renewing the table's lease: this process cannot lead now (cut off from the cluster)", "epoch", term.epoch)
			if !e.clock.Now().Before(expires) {
				e.stepDown(term, "the table's lease could not be renewed in time (this process cannot lead now); stepping down")
				return
			}
			continue
		}
		start := e.clock.Now()
		rctx, cancel := withDeadline(term.ctx, e.clock, term.Deadline())
		ok, err := e.store.RenewLease(rctx, e.name, e.set.Holder, term.epoch, ttl)
		cancel()
		if took := e.clock.Now().Sub(start); took > e.set.Renew {
			e.logger.Warn("renewing the table's lease was slow", "epoch", term.epoch, "took_ms", took.Milliseconds(), "ok", ok, "err", err)
		}
		switch {
		case term.ctx.Err() != nil: // ended meanwhile (its owner, or ctx)
			continue
		case err == nil && ok:
			expires = expiry(start, ttl)
			term.until.Store(start.Add(e.set.Hold).UnixNano())
			lapse, hold = at(e.clock, expires), at(e.clock, term.Deadline())
		case err == nil:
			e.stepDown(term, "the table's lease was taken over")
			return
		case !e.clock.Now().Before(term.Deadline()):
			e.stepDown(term, "no renewal of the table's lease answered in time; stepping down", "err", err)
			return
		case e.clock.Now().Before(expires):
			e.logger.Warn("renewing the table's lease failed; retrying", "epoch", term.epoch, "err", err)
		default:
			e.stepDown(term, "the table's lease could not be renewed in time; stepping down", "err", err)
			return
		}
	}
}

func (e *Elector) able() bool { return e.set.Able == nil || e.set.Able() }

// begin makes term the current one and announces it.
func (e *Elector) begin(term *Term) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.term = term
	e.epoch.Store(term.epoch)
	e.announce(Notification{Term: term})
	e.logger.Info("leading the table", "epoch", term.epoch, "holder", e.set.Holder)
}

// end ends term: its context ends and, if it is the current one, it is
// announced over. Idempotent.
func (e *Elector) end(term *Term) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if term.ended.IsZero() {
		term.ended = e.clock.Now()
	}
	term.cancel()
	if e.term != term {
		return
	}
	e.term = nil
	e.epoch.Store(0)
	e.announce(Notification{})
}

// stepDown ends term because its lease is lost or may be: a /bet still being
// attempted in it stops at once, since another process may lead now and roll
// that bet back.
func (e *Elector) stepDown(term *Term, msg string, args ...any) {
	e.end(term)
	e.logger.Warn(msg, append(args, "epoch", term.epoch)...)
}

// release gives the lease of epoch up in the database, within a TTL; one
// that fails (the database is away) is left to the lease's own expiry.
func (e *Elector) release(ctx context.Context, epoch int64) error {
	rctx, cancel := withDeadline(context.WithoutCancel(ctx), e.clock, e.clock.Now().Add(e.set.TTL))
	defer cancel()
	return e.store.ReleaseLease(rctx, e.name, e.set.Holder, epoch)
}

// expiry is the process's own count of the expiry of a lease whose taking
// or renewing statement started at start: the TTL less an eighth of it,
// before the database may let another one in.
func expiry(start time.Time, ttl time.Duration) time.Time {
	return start.Add(ttl - ttl/8)
}

// withDeadline is ctx ending at deadline on clock c (context.WithDeadline
// counts on real time only).
func withDeadline(ctx context.Context, c Clock, deadline time.Time) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	fire := at(c, deadline)
	go func() {
		select {
		case <-fire:
			cancel(context.DeadlineExceeded)
		case <-ctx.Done():
		}
	}()
	return ctx, func() { cancel(context.Canceled) }
}

func randomID() string {
	b := make([]byte, 10)
	_, _ = rand.Read(b)
	return strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b))
}
