package round_test

import (
	"math"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/internal/round"
)

func TestMultiplierCurve(t *testing.T) {
	t.Parallel()
	tests := []struct {
		elapsed time.Duration
		want    int64
	}{
		{0, 100},
		{-time.Second, 100},
		{165 * time.Millisecond, 100}, // 100*e^0.0099 = 100.99...
		{166 * time.Millisecond, 101},
		{11552 * time.Millisecond, 199},
		{11553 * time.Millisecond, 200}, // 2.00x at about 11.6 s
		{time.Minute, 3659},
		// Saturated, never an overflow: a flight's clock read an hour late
		// (a process resumed after a long pause) is above every target.
		{652 * time.Second, math.MaxInt64},
		{time.Hour, math.MaxInt64},
		{1000 * time.Hour, math.MaxInt64},
	}
	for _, tt := range tests {
		if got := round.Multiplier(tt.elapsed); got != tt.want {
			t.Errorf("Multiplier(%v) = %d, want %d", tt.elapsed, got, tt.want)
		}
	}
	// Up to the saturation, the curve only rises.
	prev := int64(0)
	for ms := int64(640000); ms <= 660000; ms += 100 {
		m := round.Multiplier(time.Duration(ms) * time.Millisecond)
		if m < prev {
			t.Fatalf("Multiplier(%d ms) = %d, below the %d before it", ms, m, prev)
		}
		prev = m
	}
}

func TestTimeToReachIsTheFirstMillisecond(t *testing.T) {
	t.Parallel()
	for _, m := range []int64{100, 101, 150, 199, 200, 1000, 12345, 100000} {
		d := round.TimeToReach(m)
		if round.Multiplier(d) < m {
			t.Fatalf("TimeToReach(%d) = %v reaches only %d", m, d, round.Multiplier(d))
		}
		if d > 0 && round.Multiplier(d-time.Millisecond) >= m {
			t.Fatalf("TimeToReach(%d) = %v is not the first millisecond", m, d)
		}
	}
}

// Rule LIM-14 GEN-4: payout = floor(stake * multiplier / 100) in cents, capped
// at max_win, without overflow.
func TestPayout(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                      string
		stake, multiplier, maxWin int64
		want                      int64
	}{
		{"whole", 1000, 200, 0, 2000},
		{"rounds down", 333, 153, 0, 509}, // 509.49
		{"1.00x returns the stake", 500, 100, 0, 500},
		{"capped at max_win", 100000, 100000, 500000, 500000},
		{"just under the cap", 2500, 200, 5000, 5000},
		{"no overflow", math.MaxInt64 / 10, 100000, 0, math.MaxInt64},
		{"no stake", 0, 200, 0, 0},
	}
	for _, tt := range tests {
		if got := round.Payout(tt.stake, tt.multiplier, tt.maxWin); got != tt.want {
			t.Errorf("%s: Payout(%d, %d, %d) = %d, want %d", tt.name, tt.stake, tt.multiplier, tt.maxWin, got, tt.want)
		}
	}
}
