package wallet

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrBetWindowClosed: BetUntil sent nothing because the deadline had passed.
var ErrBetWindowClosed = errors.New("wallet: betting window closed before the first attempt")

// BetUntil debits a stake while the player waits: it sends call, and sends it
// again with the same transaction_id and body (a new request_id and timestamp
// each time: ENV-4, ENV-5, ENV-11) after Backoff while the outcome is
// Temporary, the deadline (the end of the betting window, on the Client's
// clock) has not passed, and fewer than MaxAttempts were sent (LIM-2). No
// attempt starts at or after the deadline, and an attempt in flight is cut at
// the deadline.
//
// It returns the last Result and its error (nil exactly on Success):
//   - Success: the bet exists (BET-2).
//   - Refused: a final refusal; the bet does not exist. On
//     INSUFFICIENT_FUNDS the Result may carry the balance (WERR-7).
//   - Temporary: the outcome is UNKNOWN (the debit may have happened). The
//     caller refuses the bet to the player and queues a rollback of it.
//
// An open circuit breaker ends the loop at once. Before the first attempt the
// error wraps ErrBreakerOpen: nothing was sent, and the bet is refused. After
// an attempt was sent, the last sent attempt's Temporary Result and error are
// returned: the outcome is unknown. A
// deadline already passed returns ErrBetWindowClosed without sending. When ctx
// ends, the last Result is returned with ctx's error.
func (c *Client) BetUntil(ctx context.Context, call BetCall, deadline time.Time) (Result, error) {
	if !c.now().Before(deadline) {
		return Result{Route: RouteBet, Reason: ReasonWindowClosed},
			fmt.Errorf("wallet /bet %s: %w", short(call.TransactionID), ErrBetWindowClosed)
	}
	var last Result
	var lastErr error
	for n := 1; ; n++ {
		actx, cancel := context.WithTimeout(ctx, deadline.Sub(c.now()))
		res, err := c.Bet(actx, call)
		cancel()
		if n > 1 && errors.Is(err, ErrBreakerOpen) {
			// Nothing was sent this time, but an earlier attempt was: the
			// outcome stays unknown, so the caller must see that attempt's
			// Temporary, not a breaker refusal that suggests nothing was sent.
			return last, lastErr
		}
		last, lastErr = res, err
		switch {
		case err == nil, res.Outcome != Temporary, errors.Is(err, ErrBreakerOpen), errors.Is(err, ErrInvalidCall):
			return res, err
		case ctx.Err() != nil:
			return res, fmt.Errorf("wallet /bet %s: %w", short(call.TransactionID), ctx.Err())
		case n >= MaxAttempts:
			return res, err
		}
		wait := Backoff(n)
		if !c.now().Add(wait).Before(deadline) {
			return res, err // the next attempt would start at or after the deadline
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return res, fmt.Errorf("wallet /bet %s: %w", short(call.TransactionID), ctx.Err())
		case <-t.C:
		}
		if !c.now().Before(deadline) {
			// The wait ended at or after the deadline (a starved process
			// wakes late): no attempt may start now, and the result is the
			// last one sent's, never one of an attempt that was not.
			return res, err
		}
	}
}
