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
)

// Pinger is the database as Health probes it. *store.Store satisfies it.
type Pinger interface {
	Ping(ctx context.Context) error
}

// HealthConfig is what a Health is built from.
type HealthConfig struct {
	Bus      *cluster.Bus
	Database Pinger
	// Limit is how long this replica may go without reaching NATS or the
	// database before it is cut off: the lease TTL, the time after which
	// the other replicas take its tables. Required.
	Limit time.Duration
	// Drain is how long a cut-off replica keeps its streams open, /readyz
	// failing, before Away(true): the load balancer's time to stop sending
	// it players (cluster.drain_ms), so that the streams it closes reopen on
	// another replica.
	Drain time.Duration
	// Away is called at every probe (from Run) while the replica has been
	// cut off for Drain or longer: its streams must close and send their
	// players elsewhere, those opened since the last call too. nil: nothing
	// to call.
	Away func()
	// Every is how often NATS and the database are probed; zero: Limit/4.
	Every  time.Duration
	Now    func() time.Time // nil: time.Now
	Logger *slog.Logger     // nil: slog.Default()
}

// Health tells whether this replica still reaches the cluster: NATS, by a
// message it publishes to itself coming back through the server (which a
// link that died without a reset shows at once, unlike the connection's own
// pings), and the database, by a ping. Either one unreached for longer than
// the limit cuts the replica off: CutOff says so (for /readyz), and after
// the drain Away closes its streams, until both are reached again. Its
// methods are safe for concurrent use.
type Health struct {
	cfg     HealthConfig
	subject string
	logger  *slog.Logger

	mu      sync.Mutex
	lastBus time.Time // the last probe that came back
	lastDB  time.Time // the last ping the database answered
	since   time.Time // when the replica was last found cut off; zero: it is not
	away    bool      // the drain has passed since: Away is called
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
		pctx, cancel := context.WithTimeout(ctx, h.cfg.Every)
		if err := h.cfg.Database.Ping(pctx); err == nil {
			h.reachedDB(h.cfg.Now())
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
	h.mu.Unlock()
}

func (h *Health) reachedDB(at time.Time) {
	h.mu.Lock()
	h.lastDB = later(h.lastDB, at)
	h.mu.Unlock()
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
	if d := now.Sub(h.lastBus); d > h.cfg.Limit {
		lost = append(lost, fmt.Errorf("NATS unreached for %s", d.Round(time.Millisecond)))
	}
	if d := now.Sub(h.lastDB); d > h.cfg.Limit {
		lost = append(lost, fmt.Errorf("the database unreached for %s", d.Round(time.Millisecond)))
	}
	if lost == nil {
		return nil
	}
	return fmt.Errorf("cut off from the cluster (longer than the lease TTL, %s): %w", h.cfg.Limit, errors.Join(lost...))
}

// CutOff returns why this replica is cut off from the cluster now, or nil:
// NATS or the database unreached for longer than the limit. /readyz fails
// while it is not nil.
func (h *Health) CutOff() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.cutOff(h.cfg.Now())
}

// check updates the state at now and reports whether the replica has been
// cut off for the drain (Away is due).
func (h *Health) check(now time.Time) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	err := h.cutOff(now)
	switch {
	case err != nil && h.since.IsZero():
		h.since = now
		h.logger.Warn("this replica is cut off from the cluster: /readyz fails; its streams close after the drain", "err", err, "drain", h.cfg.Drain.String())
	case err == nil && !h.since.IsZero():
		h.since, h.away = time.Time{}, false
		h.logger.Info("this replica reaches NATS and the database again: /readyz answers, streams stay open")
	}
	if err != nil && !h.away && now.Sub(h.since) >= h.cfg.Drain {
		h.away = true
		h.logger.Warn("closing this replica's streams while it is cut off: its players reconnect through the load balancer")
	}
	return h.away
}
