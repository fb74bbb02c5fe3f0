package round

import (
	"math"
	"math/bits"
	"time"
)

// growth is the exponent rate of the curve, per millisecond.
const growth = 0.00006

// Multiplier returns the multiplier in hundredths elapsed after take-off:
// floor(100 * e^(0.00006 t)), t in whole milliseconds. It saturates at
// math.MaxInt64 (about 10.9 minutes into a flight), far above any crash
// point: a clock that jumped ahead, or a process resumed after a long
// pause, must read a multiplier above every target, not a converted
// overflow.
func Multiplier(elapsed time.Duration) int64 {
	ms := elapsed.Milliseconds()
	if ms <= 0 {
		return 100
	}
	m := math.Floor(100 * math.Exp(growth*float64(ms)))
	if m >= math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(m)
}

// TimeToReach returns the first whole millisecond after take-off at which the
// multiplier is at least m hundredths.
func TimeToReach(m int64) time.Duration {
	if m <= 100 {
		return 0
	}
	ms := int64(math.Ceil(math.Log(float64(m)/100) / growth))
	// The float estimate may be one millisecond off either way: settle it
	// against Multiplier itself, which is what pricing uses.
	for ms > 0 && Multiplier(time.Duration(ms-1)*time.Millisecond) >= m {
		ms--
	}
	for Multiplier(time.Duration(ms)*time.Millisecond) < m {
		ms++
	}
	return time.Duration(ms) * time.Millisecond
}

// Payout returns floor(stake * multiplier / 100) capped at maxWin (0 = no
// cap), with a 128-bit product so that no stake and multiplier overflow.
func Payout(stake, multiplier, maxWin int64) int64 {
	if stake <= 0 || multiplier <= 0 {
		return 0
	}
	hi, lo := bits.Mul64(uint64(stake), uint64(multiplier))
	q, _ := bits.Div64(hi%100, lo, 100) // hi%100 keeps Div64 from panicking
	if hi >= 100 || q > math.MaxInt64 {
		q = math.MaxInt64
	}
	p := int64(q)
	if maxWin > 0 && p > maxWin {
		return maxWin
	}
	return p
}
