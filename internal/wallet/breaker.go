package wallet

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/sony/gobreaker/v2"
)

// BreakerSettings configures the per-operator circuit breaker. A zero field
// takes its default (see DefaultBreakerSettings).
//
// Only transport failures (connection errors, timeouts, a broken answer) and
// 5xx answers count as failures. Any other answer, a 4xx or a business refusal
// included, counts as a success (AUTH-17); a call whose caller gave up first is
// not counted at all.
type BreakerSettings struct {
	// ConsecutiveFailures opens the breaker after this many failures in a row.
	ConsecutiveFailures uint32
	// FailureRatio and MinRequests open it when, within Window, at least
	// MinRequests attempts were counted and more than FailureRatio of them
	// failed.
	FailureRatio float64
	MinRequests  uint32
	// Window is the rolling window of the counts while closed, in buckets of
	// one tenth of it.
	Window time.Duration
	// OpenFor is how long the breaker stays open before it lets probes through
	// (half-open).
	OpenFor time.Duration
	// HalfOpenProbes is how many attempts pass while half-open; that many
	// successes in a row close the breaker, one failure opens it again.
	HalfOpenProbes uint32
}

// DefaultBreakerSettings returns the defaults: open after 5 consecutive failures, or when more than
// half of at least 20 attempts within 10 s failed; half-open after 5 s, with one
// probe.
func DefaultBreakerSettings() BreakerSettings {
	return BreakerSettings{
		ConsecutiveFailures: 5,
		FailureRatio:        0.5,
		MinRequests:         20,
		Window:              10 * time.Second,
		OpenFor:             5 * time.Second,
		HalfOpenProbes:      1,
	}
}

func (s BreakerSettings) withDefaults() BreakerSettings {
	d := DefaultBreakerSettings()
	if s.ConsecutiveFailures == 0 {
		s.ConsecutiveFailures = d.ConsecutiveFailures
	}
	if s.FailureRatio <= 0 {
		s.FailureRatio = d.FailureRatio
	}
	if s.MinRequests == 0 {
		s.MinRequests = d.MinRequests
	}
	if s.Window <= 0 {
		s.Window = d.Window
	}
	if s.OpenFor <= 0 {
		s.OpenFor = d.OpenFor
	}
	if s.HalfOpenProbes == 0 {
		s.HalfOpenProbes = d.HalfOpenProbes
	}
	return s
}

// BreakerState is the state of a Client's circuit breaker.
type BreakerState int

// Breaker states.
const (
	BreakerStateClosed   BreakerState = iota // attempts pass
	BreakerStateHalfOpen                     // a few probes pass, the rest are rejected
	BreakerStateOpen                         // every attempt is rejected, nothing is sent
)

func (s BreakerState) String() string {
	switch s {
	case BreakerStateHalfOpen:
		return "half-open"
	case BreakerStateOpen:
		return "open"
	default:
		return "closed"
	}
}

// The verdicts reported to gobreaker: nil is a success.
var (
	errFailure  = errors.New("wallet breaker: failure")
	errExcluded = errors.New("wallet breaker: not counted")
)

type breaker struct {
	cb *gobreaker.TwoStepCircuitBreaker[struct{}]
}

func newBreaker(operator string, s BreakerSettings, logger *slog.Logger, m Metrics) *breaker {
	s = s.withDefaults()
	bucket := s.Window / 10
	if bucket <= 0 {
		bucket = s.Window
	}
	m.BreakerState(operator, BreakerStateClosed)
	return &breaker{cb: gobreaker.NewTwoStepCircuitBreaker[struct{}](gobreaker.Settings{
		Name:         "wallet " + operator,
		MaxRequests:  s.HalfOpenProbes,
		Interval:     s.Window,
		BucketPeriod: bucket,
		Timeout:      s.OpenFor,
		ReadyToTrip: func(c gobreaker.Counts) bool {
			if c.ConsecutiveFailures >= s.ConsecutiveFailures {
				return true
			}
			n := c.TotalSuccesses + c.TotalFailures
			return n >= s.MinRequests && float64(c.TotalFailures) > s.FailureRatio*float64(n)
		},
		IsExcluded: func(err error) bool { return errors.Is(err, errExcluded) },
		OnStateChange: func(_ string, from, to gobreaker.State) {
			st := breakerState(to)
			m.BreakerState(operator, st)
			level := slog.LevelInfo
			if st == BreakerStateOpen {
				level = slog.LevelWarn
			}
			logger.Log(context.Background(), level, "wallet circuit breaker changed state",
				slog.String("from", breakerState(from).String()), slog.String("to", st.String()))
		},
	})}
}

// allow reserves an attempt; done reports its verdict. While open, or while
// half-open with every probe taken, it refuses.
func (b *breaker) allow() (done func(error), err error) {
	done, err = b.cb.Allow()
	if err != nil {
		return nil, ErrBreakerOpen
	}
	return done, nil
}

func (b *breaker) state() BreakerState { return breakerState(b.cb.State()) }

func breakerState(s gobreaker.State) BreakerState {
	switch s {
	case gobreaker.StateOpen:
		return BreakerStateOpen
	case gobreaker.StateHalfOpen:
		return BreakerStateHalfOpen
	default:
		return BreakerStateClosed
	}
}

// BreakerOpen reports whether the breaker is open: every call returns
// ErrBreakerOpen at once, without sending anything. Callers refuse new bets
// and let queued movements wait without spending an attempt.
func (c *Client) BreakerOpen() bool { return c.breaker.state() == BreakerStateOpen }

// BreakerState returns the breaker's state.
func (c *Client) BreakerState() BreakerState { return c.breaker.state() }
