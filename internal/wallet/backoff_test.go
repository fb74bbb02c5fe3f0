package wallet

import (
	"testing"
	"time"
)

// Rule LIM-2: 20 attempts, with a capped exponential back-off with full jitter
// between them.
func TestBackoff(t *testing.T) {
	t.Parallel()
	if MaxAttempts != 20 {
		t.Fatalf("MaxAttempts = %d, want 20", MaxAttempts)
	}
	tests := []struct {
		attempt int
		ceiling time.Duration
	}{
		{-3, 200 * time.Millisecond},
		{0, 200 * time.Millisecond},
		{1, 200 * time.Millisecond},
		{2, 400 * time.Millisecond},
		{3, 800 * time.Millisecond},
		{8, 25600 * time.Millisecond},
		{9, 30 * time.Second},
		{19, 30 * time.Second},
		{64, 30 * time.Second},
		{1 << 30, 30 * time.Second},
	}
	for _, tt := range tests {
		lo, hi := tt.ceiling, time.Duration(0)
		for range 2000 {
			d := Backoff(tt.attempt)
			if d < BackoffFloor || d > tt.ceiling {
				t.Fatalf("Backoff(%d) = %s, outside [%s, %s]", tt.attempt, d, BackoffFloor, tt.ceiling)
			}
			lo, hi = min(lo, d), max(hi, d)
		}
		// Full jitter: the draws spread over the whole range.
		if lo > BackoffFloor+tt.ceiling/10 || hi < tt.ceiling-tt.ceiling/10 {
			t.Fatalf("Backoff(%d) drew only [%s, %s] of [%s, %s]", tt.attempt, lo, hi, BackoffFloor, tt.ceiling)
		}
	}
}
