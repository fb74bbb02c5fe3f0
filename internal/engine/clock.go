package engine

import "time"

// Clock is the engine's time: the real one in production, a manual one in tests.
type Clock interface {
	Now() time.Time
	// After fires once, at or after d from now.
	After(d time.Duration) <-chan time.Time
}

// SystemClock is the real clock.
type SystemClock struct{}

// Now returns time.Now.
func (SystemClock) Now() time.Time { return time.Now() }

// After returns time.After(d).
func (SystemClock) After(d time.Duration) <-chan time.Time { return time.After(d) }
