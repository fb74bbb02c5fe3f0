package wallet

import (
	"math/rand/v2"
	"time"
)

// MaxAttempts is how many attempts a movement gets, the first included, always
// with the same transaction_id (LIM-2, AMB-7 reading A: 5xx and /rollback
// included). After the last one the movement is parked for reconciliation.
const MaxAttempts = 20

// The back-off between attempts (the contract leaves it open).
const (
	BackoffBase  = 200 * time.Millisecond // ceiling after the first attempt
	BackoffCap   = 30 * time.Second       // largest ceiling
	BackoffFloor = 10 * time.Millisecond  // shortest wait
)

// Backoff returns how long to wait after failed attempt number attempt (1 for
// the first) before the next one: capped exponential with full jitter, a
// uniformly random duration in [BackoffFloor, min(BackoffCap,
// BackoffBase·2^(attempt-1))]. The ceilings run 0.2 s, 0.4 s, 0.8 s ... 25.6 s,
// then 30 s from attempt 9 on, so the 19 waits of a movement add up to about
// 3 minutes on average and at most about 6.4 minutes.
//
// The floor keeps two attempts of one movement at least a few milliseconds
// apart, so that their millisecond timestamps differ (ENV-4). Jitter spreads
// the retries of many movements that failed together, so that a recovering
// wallet is not hit by all of them at once. An attempt below 1 counts as 1.
func Backoff(attempt int) time.Duration {
	if attempt < 1 {
		attempt = 1
	}
	ceiling := BackoffCap
	if attempt <= 30 { // beyond, the shift would only exceed the cap (or overflow)
		if d := BackoffBase << (attempt - 1); d < ceiling {
			ceiling = d
		}
	}
	return BackoffFloor + rand.N(ceiling-BackoffFloor+1)
}
