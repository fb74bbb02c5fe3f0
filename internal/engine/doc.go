// Package engine runs the rounds of the crash game: one table per game, whose
// single goroutine feeds the round's rules (package round) and carries out
// what they decide: it commits bets, cashouts and settlements, calls the
// wallet's /bet, queues wins, zero_wins and rollbacks, publishes the stream's
// events, and recovers what a crash of the process left unfinished.
//
// The rules decide; the engine never decides a bet's fate itself. What it
// keeps:
//   - A bet's intent (its transaction_id) is committed before the first /bet
//     attempt; a bet joins the round only after the wallet answered success
//     within the betting window. An outcome still unknown when the window closes,
//     or a success that arrives after it, is refused to the player and rolled back
//     through the durable queue (RB-3).
//   - A cashout's state change and its /win movement commit in one transaction
//     before the player is told; the crash settles every bet the round lost in
//     one statement, conditional on the stored status, so that a bet whose
//     cashout commit failed is settled once too.
//   - Wins, zero_wins and rollbacks leave only through the outbox of package
//     wallet; the engine never calls /win or /rollback itself.
//
// It knows nothing of HTTP and must never log a token.
package engine
