package cluster

import (
	"context"
	crand "crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"
)

// Defaults of Options.
const (
	DefaultRequestTimeout        = 2 * time.Second
	DefaultMaxConcurrentHandlers = 4096
)

// The connection's fixed settings.
const (
	// reconnectWaitMin and reconnectWaitMax bound the wait between two rounds
	// of reconnection attempts: it doubles from the first up to the second and
	// stays there, plus up to a tenth of jitter, for ever.
	reconnectWaitMin = 100 * time.Millisecond
	reconnectWaitMax = 2 * time.Second
	// pingInterval and maxPingsOut: a link that died without a TCP reset (a
	// partition) is noticed after about three intervals, not the library's
	// default of several minutes.
	pingInterval = 5 * time.Second
	maxPingsOut  = 2
	// drainTimeout bounds Close's drain.
	drainTimeout = 10 * time.Second
)

// Options configure Connect.
type Options struct {
	// URLs are the NATS servers, e.g. nats://nats-1:4222; at least one. A
	// URL may carry credentials: they are never logged.
	URLs []string
	// Name is this replica's id: the NATS connection's name and the first
	// part of its publisher identity on events. Required; no white space.
	Name string
	// Logger receives the connection's events (disconnected, reconnected,
	// closed, asynchronous errors); slog.Default() when nil.
	Logger *slog.Logger
	// Registerer, when not nil, registers the Bus's metrics (see metrics).
	Registerer prometheus.Registerer
	// RequestTimeout is how long Request waits for an answer when its
	// context has no deadline; DefaultRequestTimeout when zero.
	RequestTimeout time.Duration
	// MaxConcurrentHandlers bounds the handlers one Serve runs at once;
	// further requests wait in the subscription's queue, their requesters'
	// time running. DefaultMaxConcurrentHandlers when zero.
	MaxConcurrentHandlers int
}

// ErrUnavailable is the transport's failure: the Bus is not connected, the
// requester's time ran out, or the connection was lost while it waited. For
// a Request the outcome is unknown: the leader may have executed the action.
// The message of the wrapping error says which case it was.
var ErrUnavailable = errors.New("cluster: NATS unavailable, outcome unknown")

// ErrNoLeader answers a Request that nobody serves now (NATS's "no
// responders"): nothing was executed. During a hand-over or right after a
// leader started serving it may last a moment; the caller may retry.
var ErrNoLeader = errors.New("cluster: no leader serves this table now")

// Causes wrapped with ErrUnavailable.
var (
	errNotConnected   = errors.New("not connected to NATS, nothing sent")
	errConnectionLost = errors.New("the connection to NATS was lost while waiting for the answer")
	errClosed         = errors.New("the bus is closed")
)

// Bus is one replica's connection to NATS. Its methods are safe for
// concurrent use.
type Bus struct {
	nc          *nats.Conn
	log         *slog.Logger
	m           *metrics
	timeout     time.Duration
	maxHandlers int
	publisher   string // Name/random: a restarted replica is a new publisher

	mu       sync.Mutex
	link     context.Context // cancelled when the current connection is lost
	unlink   context.CancelCauseFunc
	pubs     map[string]*pubState
	services map[*service]struct{}

	up        chan struct{} // closed at the first connection
	upOnce    sync.Once
	closed    chan struct{} // closed when the connection is closed for good
	closeOnce sync.Once
}

// Connect connects to NATS and returns once connected, or with an error when
// ctx ends first. Once connected the Bus reconnects by itself for ever, with
// a wait between attempts that grows to at most 2 s; Connected says whether
// it is connected now. Close it when done.
func Connect(ctx context.Context, o Options) (*Bus, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	m, err := newMetrics(o.Registerer)
	if err != nil {
		return nil, fmt.Errorf("cluster: connect: %w", err)
	}
	servers := redactedURLs(o.URLs)
	b := &Bus{
		log:         o.Logger.With(slog.String("component", "cluster"), slog.String("replica", o.Name)),
		m:           m,
		timeout:     o.RequestTimeout,
		maxHandlers: o.MaxConcurrentHandlers,
		publisher:   o.Name + "/" + crand.Text()[:10],
		pubs:        make(map[string]*pubState),
		services:    make(map[*service]struct{}),
		up:          make(chan struct{}),
		closed:      make(chan struct{}),
	}
	b.link, b.unlink = context.WithCancelCause(context.Background())
	b.unlink(errNotConnected)

	nc, err := nats.Connect(strings.Join(o.URLs, ","), b.natsOptions(o.Name)...)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its text holds the URL, credentials included
		}
		return nil, fmt.Errorf("cluster: connect to NATS %s: %w", servers, err)
	}
	b.nc = nc
	select {
	case <-b.up:
		return b, nil
	case <-ctx.Done():
		nc.Close()
		return nil, fmt.Errorf("cluster: connect to NATS %s: %w", servers, context.Cause(ctx))
	}
}

// withDefaults checks o and returns it with the defaults filled in for what it
// leaves out.
func (o Options) withDefaults() (Options, error) {
	if len(o.URLs) == 0 {
		return o, errors.New("cluster: connect: no NATS URL")
	}
	if o.Name == "" || strings.ContainsFunc(o.Name, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return o, fmt.Errorf("cluster: connect: the replica name %q must be non-empty, without white space", o.Name)
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = DefaultRequestTimeout
	}
	if o.MaxConcurrentHandlers <= 0 {
		o.MaxConcurrentHandlers = DefaultMaxConcurrentHandlers
	}
	return o, nil
}

// natsOptions are the NATS connection's settings for the replica name: retry
// and reconnect for ever, notice a dead link within about three pings, and
// handlers that follow the connection's state and log its events.
func (b *Bus) natsOptions(name string) []nats.Option {
	return []nats.Option{
		nats.Name(name),
		nats.RetryOnFailedConnect(true),
		nats.MaxReconnects(-1),
		nats.ReconnectBufSize(-1),
		nats.CustomReconnectDelay(reconnectDelay),
		nats.PingInterval(pingInterval),
		nats.MaxPingsOutstanding(maxPingsOut),
		nats.DrainTimeout(drainTimeout),
		nats.ConnectHandler(func(nc *nats.Conn) {
			b.log.Info("connected to NATS", slog.String("server", redactedURLs([]string{nc.ConnectedUrl()})))
			b.linkUp()
		}),
		nats.DisconnectErrHandler(func(nc *nats.Conn, err error) {
			b.linkDown(errConnectionLost)
			if nc.IsClosed() {
				return // Close: ClosedHandler logs it
			}
			attrs := []any{}
			if err != nil {
				attrs = append(attrs, slog.String("error", err.Error()))
			}
			b.log.Warn("disconnected from NATS; reconnecting", attrs...)
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			b.m.reconnects.Inc()
			b.log.Info("reconnected to NATS", slog.String("server", redactedURLs([]string{nc.ConnectedUrl()})))
			b.linkUp()
		}),
		nats.ReconnectErrHandler(func(_ *nats.Conn, err error) {
			b.log.Debug("NATS reconnection attempt failed", slog.String("error", err.Error()))
		}),
		nats.ClosedHandler(func(*nats.Conn) {
			b.linkDown(errClosed)
			b.log.Info("NATS connection closed")
			b.closeOnce.Do(func() { close(b.closed) })
		}),
		nats.ErrorHandler(func(_ *nats.Conn, sub *nats.Subscription, err error) {
			attrs := []any{slog.String("error", err.Error())}
			if sub != nil {
				attrs = append(attrs, slog.String("subject", sub.Subject))
			}
			b.log.Warn("NATS asynchronous error", attrs...)
		}),
	}
}

// Connected reports whether the Bus is connected to a NATS server now (for
// /readyz).
func (b *Bus) Connected() bool { return b.nc.IsConnected() }

// Close stops every Serve (each answers the requests it already received,
// their handlers finish), drains the subscriptions (events already received
// are delivered) and the publications, then closes the connection. It
// returns once the connection is closed; the drain is bounded (10 s).
func (b *Bus) Close() error {
	b.mu.Lock()
	stops := make([]func(), 0, len(b.services))
	for s := range b.services {
		stops = append(stops, s.stop)
	}
	b.mu.Unlock()
	for _, stop := range stops {
		stop()
	}
	err := b.nc.Drain()
	switch {
	case err == nil, errors.Is(err, nats.ErrConnectionClosed):
		err = nil
	case errors.Is(err, nats.ErrConnectionReconnecting):
		// Drain closed the connection: nothing could be drained.
		b.log.Warn("closed NATS while reconnecting: nothing drained")
		err = nil
	default:
		b.nc.Close()
		err = fmt.Errorf("cluster: close: drain: %w", err)
	}
	<-b.closed
	return err
}

// linkUp starts a new connection's context, once per connection.
func (b *Bus) linkUp() {
	b.mu.Lock()
	if b.link.Err() != nil {
		b.link, b.unlink = context.WithCancelCause(context.Background())
	}
	b.mu.Unlock()
	b.upOnce.Do(func() { close(b.up) })
}

// linkDown ends the current connection's context: requests waiting on it
// fail with ErrUnavailable.
func (b *Bus) linkDown(cause error) {
	b.mu.Lock()
	b.unlink(cause)
	b.mu.Unlock()
}

// currentLink is the context of the current connection, done when there is
// none.
func (b *Bus) currentLink() context.Context {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.link
}

// reconnectDelay is the wait before the next round of reconnection attempts
// (attempts counts the rounds made, from 1): 100 ms, doubling up to 2 s, with
// up to a tenth of jitter so replicas do not reconnect in step.
func reconnectDelay(attempts int) time.Duration {
	d := reconnectWaitMin
	for i := 1; i < attempts && d < reconnectWaitMax; i++ {
		d *= 2
	}
	d = min(d, reconnectWaitMax)
	return d + rand.N(d/10)
}

// redactedURLs lists the servers' hosts for messages: user information (a
// user, a password or a token) is dropped, never printed (url.Redacted and
// nats's ConnectedUrlRedacted would print a token).
func redactedURLs(urls []string) string {
	hosts := make([]string, 0, len(urls))
	for _, raw := range urls {
		for part := range strings.SplitSeq(raw, ",") {
			part = strings.TrimSpace(part)
			if !strings.Contains(part, "://") {
				part = "nats://" + part // as nats.go reads it
			}
			u, err := url.Parse(part)
			if err != nil || u.Host == "" {
				hosts = append(hosts, "(unparsable URL)")
				continue
			}
			hosts = append(hosts, u.Host)
		}
	}
	return "[" + strings.Join(hosts, " ") + "]"
}
