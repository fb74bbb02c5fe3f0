// Package engine owns the rounds of the crash game: one table per game, whose
// single goroutine owns the round state (phases betting, flying, crashed), and
// the bets of players on it: admission, cashout, auto-cashout, cancellation,
// settlement at the crash, and the recovery of what a crash of the process left
// unfinished.
//
// Money rules it keeps:
//   - A bet's intent (its transaction_id) is committed before the first /bet
//     attempt; a bet joins the round only after the wallet answered success
//     within the betting window. An outcome still unknown when the window closes,
//     or a success that arrives after it, is refused to the player and rolled back
//     through the durable queue (RB-3).
//   - A cashout's state change and its /win movement commit in one transaction
//     before the player is told; conditional updates (WHERE status = 'accepted')
//     make the database the arbiter between a cashout and the crash, so a bet is
//     settled exactly once.
//   - Wins, zero_wins and rollbacks leave only through the outbox of package
//     wallet; the engine never calls /win or /rollback itself.
//
// The multiplier t milliseconds after take-off is floor(100 * e^(0.00006 t))
// hundredths. It is computed with float64 exp and then only compared and used as
// an integer; money is int64 cents and payouts are computed with 128-bit integer
// arithmetic. The engine knows nothing of HTTP and must never log a token.
package engine
