package replica

import (
	"context"
	crand "crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/crashstudio/crashgame/internal/cluster"
	"github.com/crashstudio/crashgame/internal/engine"
)

// Database is the database as Health probes it: one statement that reads
// its server's clock, timed on this replica's clock (now) from just before
// it was sent (sent) to its answer (received). *store.Store satisfies it.
type Database interface {
	Clock(ctx context.Context, now func() time.Time) (sent, at, received time.Time, err error)
}

// SkewBound is how far this replica's clock may be from the database
// server's before the replica is cut off. It is half of
// engine.DebitClockMargin, the margin that a new leader adds to a round's
// debit deadline before it settles the round (a replica sends a bet's /bet
// until that deadline on its own clock): two replicas each within SkewBound
// of the database's clock are within the margin of each other.
const SkewBound = engine.DebitClockMargin / 2

// PriceBound is how far this replica's clock may be from the database
// server's for it to price cashouts itself: half of engine.CashoutGuard,
// the guard band before the crash within which a replica that does not lead
// refuses a cashout, so that two replicas each within PriceBound of the
// database (the pricing one and the leader, which keeps the crash) are
// within the guard of each other. Beyond it (or while the offset is not
// known that precisely), the replica's cashouts go to the leader.
const PriceBound = engine.CashoutGuard / 2

// clockSamples is how many of the latest clock samples the offset is
// judged from.
const clockSamples = 5

// probesMissed is how many probes of a link in a row must go unanswered,
// besides the limit passing, for the link to count as unreached: a process
// that does not get the CPU (a noisy neighbour, a CPU limit) sends no probe
// while it does not run, and the time it did not run says nothing of its
// links. A link really lost has missed Limit/Every probes (4) by the limit.
const probesMissed = 3

// HealthConfig is what a Health is built from.
type HealthConfig struct {
	Bus      *cluster.Bus
	Database Database
	// Limit is how long this replica may go without reaching NATS or the
	// database before it is cut off: the lease TTL, the time after which
	// the other replicas take its tables. Required.
	Limit time.Duration
	// Drain is how long a replica whose streams are stale (NATS unreached,
	// or its clock out of step) keeps them open, /readyz failing, before
	// Away: the load balancer's time to stop sending it players
	// (cluster.drain_ms), so that the streams it closes reopen on another
	// replica.
	Drain time.Duration
	// Away is called at every probe (from Run) while the replica's streams
	// have been stale for Drain or longer: they must close and send their
	// players elsewhere, those opened since the last call too. nil: nothing
	// to call.
	Away func()
	// Every is how often NATS and the database are probed; zero: Limit/4.
	Every  time.Duration
	Now    func() time.Time // nil: time.Now
	Logger *slog.Logger     // nil: slog.Default()
}

// Health tells whether this replica still reaches the cluster and keeps its
// time: NATS, by a message it publishes to itself coming back through the
// server (which a link that died without a reset shows at once, unlike the
// connection's own pings), and the database, by a statement that reads the
// database server's clock. Either one unreached for longer than the limit,
// with probesMissed of its probes in a row unanswered (a starved process
// sends none while it does not run: that time is not held against its
// links), or this replica's clock more than SkewBound from the database's, cuts the
// replica off: CutOff says so (for /readyz, for taking bets and for opening
// streams), until both are reached again and the clock is back in step.
// LeadBlocked, for leading a table, leaves the database out (the lease's
// own renewals judge it). Its streams close (Away) only when NATS is
// unreached or the clock is out of step, for the drain (streamsStale): the
// database alone leaves the streams it holds open. Its methods are safe for
// concurrent use.
//
// The clock's offset is judged from the last clockSamples probes: the
// sample with the shortest round trip bounds it best (|offset| + half its
// round trip must be within SkewBound), and the latest sample alone cuts the
// replica off at once when even its most favourable reading (|offset| - half
// its round trip) is beyond SkewBound: a clock that jumped.
type Health struct {
	cfg     HealthConfig
	subject string
	logger  *slog.Logger

	mu        sync.Mutex
	lastBus   time.Time     // the last probe that came back
	lastDB    time.Time     // the last ping the database answered
	busMissed int           // probes sent since the last one came back
	dbMissed  int           // probes of the database failed since the last answered
	since     time.Time     // when the replica was last found cut off; zero: it is not
	samples   []clockSample // the latest clock samples, oldest first, at most clockSamples
	clock     error         // why the clock is out of step; nil: it is not, or no sample yet
	stale     time.Time     // since when its streams no longer show the table (streamsStale); zero: they do
	away      bool          // the drain has passed since stale: Away is called
}

// NewHealth returns the watcher of this replica's links. Call Run.
func NewHealth(cfg HealthConfig) (*Health, error) {
	switch {
	case cfg.Bus == nil:
		return nil, errors.New("replica: health: no bus")
	case cfg.Database == nil:
		return nil, errors.New("replica: health: no database")
	case cfg.Limit <= 0:
		return nil, errors.New("replica: health: no limit")
	}
	if cfg.Every <= 0 {
		cfg.Every = cfg.Limit / 4
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	now := cfg.Now()
	return &Health{
		cfg: cfg, logger: cfg.Logger.With("component", "health"),
		// A subject of this process alone: its probes reach no other replica.
		subject: cluster.SubjectPrefix + "._probe." + crand.Text(),
		lastBus: now, lastDB: now,
	}, nil
}

// Run probes NATS and the database every Every until ctx ends, and calls
// Away after each probe while the replica has been cut off for the drain.
func (h *Health) Run(ctx context.Context) error {
	stop, err := h.cfg.Bus.Subscribe(h.subject, func([]byte, bool) { h.reachedBus(h.cfg.Now()) })
	if err != nil {
		return fmt.Errorf("replica: health: subscribe to its probes: %w", err)
	}
	defer stop()
	tick := time.NewTicker(h.cfg.Every)
	defer tick.Stop()
	for {
		// Not connected: nothing is sent, and nothing comes back.
		_ = h.cfg.Bus.Publish(h.subject, []byte("probe"))
		h.sentBus()
		pctx, cancel := context.WithTimeout(ctx, h.cfg.Every)
		if sent, at, received, err := h.cfg.Database.Clock(pctx, h.cfg.Now); err == nil {
			h.reachedDB(received)
			h.sampled(sent, at, received)
		} else {
			h.missedDB()
		}
		cancel()
		if h.check(h.cfg.Now()) && h.cfg.Away != nil {
			h.cfg.Away()
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

func (h *Health) reachedBus(at time.Time) {
	h.mu.Lock()
	h.lastBus = later(h.lastBus, at)
	h.busMissed = 0
	h.mu.Unlock()
}

// sentBus counts a probe sent to NATS (or tried, while not connected).
func (h *Health) sentBus() {
	h.mu.Lock()
	h.busMissed++
	h.mu.Unlock()
}

func (h *Health) reachedDB(at time.Time) {
	h.mu.Lock()
	h.lastDB = later(h.lastDB, at)
	h.dbMissed = 0
	h.mu.Unlock()
}

// missedDB counts a probe of the database that failed or timed out.
func (h *Health) missedDB() {
	h.mu.Lock()
	h.dbMissed++
	h.mu.Unlock()
}

// busLost and dbLost say how long NATS and the database have gone unreached
// at now, when that counts (longer than the limit, with probesMissed probes
// in a row unanswered); zero otherwise. Callers hold mu.
func (h *Health) busLost(now time.Time) time.Duration {
	if d := now.Sub(h.lastBus); d > h.cfg.Limit && h.busMissed >= probesMissed {
		return d
	}
	return 0
}

func (h *Health) dbLost(now time.Time) time.Duration {
	if d := now.Sub(h.lastDB); d > h.cfg.Limit && h.dbMissed >= probesMissed {
		return d
	}
	return 0
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// cutOff is why the replica is cut off at now, or nil. Callers hold mu.
func (h *Health) cutOff(now time.Time) error {
	var lost []error
	if d := h.busLost(now); d > 0 {
		lost = append(lost, fmt.Errorf("NATS unreached for %s", d.Round(time.Millisecond)))
	}
	if d := h.dbLost(now); d > 0 {
		lost = append(lost, fmt.Errorf("the database unreached for %s", d.Round(time.Millisecond)))
	}
	if lost == nil {
		return h.clock
	}
	err := fmt.Errorf("cut off from the cluster (longer than the lease TTL, %s): %w", h.cfg.Limit, errors.Join(lost...))
	if h.clock != nil {
		return errors.Join(err, h.clock)
	}
	return err
}

// clockSample is one reading of the database's clock: offset is this
// replica's clock minus the database's, taken at the middle of the round
// trip, and uncertain by half of rtt.
type clockSample struct {
	offset, rtt time.Duration
}

// sampled records the database's clock at, read between sent and received
// on this replica's clock, and judges the offset again.
func (h *Health) sampled(sent, at, received time.Time) {
	rtt := received.Sub(sent)
	s := clockSample{offset: sent.Add(rtt / 2).Sub(at), rtt: rtt}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.samples) > 0 && !consistent(precise(h.samples), s) {
		// The clock stepped (a jump, or a fix after one): the earlier
		// samples describe a clock that is gone, and the quickest of them
		// would otherwise outweigh the new readings until it aged out (a
		// replica cut off again after it was back in step).
		h.samples = h.samples[:0]
	}
	if len(h.samples) == clockSamples {
		h.samples = append(h.samples[:0], h.samples[1:]...)
	}
	h.samples = append(h.samples, s)
	h.clock = outOfStep(h.samples)
}

// consistent reports whether two samples can be readings of one clock:
// their offsets within the sum of their uncertainties.
func consistent(a, b clockSample) bool {
	return abs(a.offset-b.offset) <= a.rtt/2+b.rtt/2+time.Millisecond
}

// precise is the sample of samples with the shortest round trip, the
// latest of those as short.
func precise(samples []clockSample) clockSample {
	best := samples[0]
	for _, s := range samples[1:] {
		if s.rtt <= best.rtt {
			best = s
		}
	}
	return best
}

// outOfStep judges the clock from samples (oldest first): why it is more
// than SkewBound from the database's, or nil.
func outOfStep(samples []clockSample) error {
	if len(samples) == 0 {
		return nil
	}
	best, latest := precise(samples), samples[len(samples)-1]
	switch {
	case abs(latest.offset)-latest.rtt/2 > SkewBound:
		best = latest
	case abs(best.offset)+best.rtt/2 <= SkewBound:
		return nil
	}
	return fmt.Errorf("this replica's clock is out of step: %s from the database's (± %s), more than %s (bets are refused: a bet's debit deadline is read on this clock)",
		best.offset.Round(time.Millisecond), (best.rtt / 2).Round(time.Millisecond), SkewBound)
}

func abs(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// PriceClock returns why this replica's clock is not known to be within
// PriceBound of the database's, from the most precise of the last samples
// (|offset| + half its round trip), or nil: it may price cashouts.
func (h *Health) PriceClock() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.samples) == 0 {
		return errors.New("this replica's clock has not been measured yet")
	}
	best := precise(h.samples)
	if abs(best.offset)+best.rtt/2 > PriceBound {
		return fmt.Errorf("this replica's clock is %s from the database's (± %s), not known within %s", best.offset.Round(time.Microsecond), (best.rtt / 2).Round(time.Microsecond), PriceBound)
	}
	return nil
}

// ClockOffset returns this replica's clock minus the database server's, and
// its uncertainty (half the round trip), from the most precise of the last
// samples; ok is false before the first sample.
func (h *Health) ClockOffset() (offset, uncertainty time.Duration, ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.samples) == 0 {
		return 0, 0, false
	}
	best := precise(h.samples)
	return best.offset, best.rtt / 2, true
}

// CutOff returns why this replica is cut off from the cluster now, or nil:
// NATS or the database unreached for longer than the limit, or its clock out
// of step with the database's. /readyz fails while it is not nil, and the
// replica takes no bet and opens no stream.
func (h *Health) CutOff() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.cutOff(h.cfg.Now())
}

// LeadBlocked returns why this replica must not lead a table now, or nil:
// NATS unreached for longer than the limit (the rounds it would publish
// would reach no stream, and the other replicas' bets would not reach it) or
// its clock out of step (a bet's debit deadline is read on it). The
// database unreached is no reason here, as it is for CutOff: a leader
// renews its lease on a connection of its own, and one that really cannot
// reach the database stops renewing and steps down within the TTL by
// itself, while a probe that waited for a busy pool (statements held up by
// another replica's row locks, a loaded host) says nothing about the lease.
// Stepping down on it handed the table over mid-round, and the next leader
// voided the round by the fail-over rule.
func (h *Health) LeadBlocked() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.streamsStale(h.cfg.Now())
}

// streamsStale is why this replica's streams no longer show the table, or
// nil: NATS unreached for longer than the limit (the leader's events no
// longer reach it) or its clock out of step (the server time it stamps on
// them is wrong). The database alone is not a reason: the streams are fed
// through NATS, a player's bets go through the load balancer to a replica
// that is ready, and a database slow for every replica at once would
// otherwise close every stream of the cluster at the same moment, each page
// reconnecting to a replica that must read its session from that database.
// Callers hold mu.
func (h *Health) streamsStale(now time.Time) error {
	if d := h.busLost(now); d > 0 {
		return fmt.Errorf("NATS unreached for %s", d.Round(time.Millisecond))
	}
	return h.clock
}

// check updates the state at now and reports whether the replica's streams
// have been stale for the drain (Away is due).
func (h *Health) check(now time.Time) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	err := h.cutOff(now)
	switch {
	case err != nil && h.since.IsZero():
		h.since = now
		h.logger.Warn("this replica is cut off from the cluster: /readyz fails; its streams close after the drain unless only the database is unreached", "err", err, "drain", h.cfg.Drain.String())
	case err == nil && !h.since.IsZero():
		h.since = time.Time{}
		h.logger.Info("this replica reaches NATS and the database again: /readyz answers, streams stay open")
	}
	stale := h.streamsStale(now)
	switch {
	case stale != nil && h.stale.IsZero():
		h.stale = now
	case stale == nil:
		h.stale, h.away = time.Time{}, false
	}
	if stale != nil && !h.away && now.Sub(h.stale) >= h.cfg.Drain {
		h.away = true
		h.logger.Warn("closing this replica's streams while it is cut off: its players reconnect through the load balancer", "err", stale)
	}
	return h.away
}
