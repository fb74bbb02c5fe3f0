// Package engine runs the rounds of the crash game: one table per game, whose
// single goroutine feeds the round's rules (package round) and carries out
// what they decide: it commits bets, cashouts and settlements, calls the
// wallet's /bet, queues wins, zero_wins and rollbacks, publishes the stream's
// events, and recovers what a crash of the process, or of the replica that led
// the table before, left unfinished.
//
// The rules decide; the engine never decides a bet's fate itself, except by
// the written fail-over rule when it recovers a round no table finished. What
// it keeps:
//   - A bet takes five steps (PlaceBet): CheckBet, Debit and Accept where it
//     was received, Admit and Decide at the table that leads. In one process
//     they all run here; in a cluster package replica carries Admit and
//     Decide to the leader, so that a bet's money path (its intent's commit,
//     its /bet and its acceptance's commit) runs on the replica that
//     received it. The round's take-off commits every acceptance its round
//     decided that has not committed by then, so a round flies only with
//     its bets accepted in the database. The intent (the bet's
//     transaction_id) commits for the admitting term before the first /bet
//     attempt; a bet joins the round only after the wallet answered success
//     within the betting window. An outcome still unknown when the window closes,
//     or a success that arrives after it, is refused to the player and rolled back
//     through the durable queue (RB-3).
//   - A cashout is priced where it was received (Cashout), from the flying
//     round's take-off and crash instant, and its state change and its /win
//     movement commit in one transaction before the player is told. Every
//     move of an accepted bet (cashout, auto-cashout, loss, void, fail-over)
//     is conditional on the stored status, so exactly one settles it,
//     whichever replica commits first. An auto-cashout is committed where
//     its bet was debited (the leader's loop for its own; PayDebitedAutos on
//     another replica, from the flight it holds, once its clock is past the
//     target's instant). The crash settles every bet the round lost in one
//     statement: in the crash's transaction in one process, LossDelay later
//     in a cluster, so that a cashout priced before the crash on another
//     replica commits first. That statement never takes a bet whose target
//     the round reached: the leader pays any still accepted after it
//     (payAutosLeft).
//   - Wins, zero_wins and rollbacks leave only through the outbox of package
//     wallet; the engine never calls /win or /rollback itself.
//   - A table plays only within a term of its game's lease, and every
//     transaction it commits checks the term's fencing epoch in that
//     transaction: of the processes that run a game's table (one, or the
//     replicas of a cluster) exactly one leads, and one that lost the lease
//     (a pause, a partition) commits nothing more. The lease itself (taking,
//     renewing, stepping down before its deadline) is package leadership's:
//     the table's elector announces each term, the loop leads it (Run, lead),
//     begins no write once the term is not Live and bounds the writes that
//     must not outlive it by its deadline. Each term starts with Recover,
//     which settles what the previous leader left (a round left betting only
//     once its debits' deadline has passed, since another replica may still
//     be sending a /bet of it); then rounds (playRound:
//     betting, flying, the pause). A stopping leader finishes its round and
//     hands the lease over at the round boundary (Term.Release), after what
//     the term queued committed.
//   - Recover (at the start of each term, and for a round a stopping leader
//     could not finish within its grace) settles each round left betting or
//     flying by the fail-over rule of docs/failover.md, which
//     never favours the house: in a round that flew, an auto-cashout at or
//     below the committed crash point is paid at its target (priced by package
//     round); every other live bet is rolled back; the round is void.
//
// It knows nothing of HTTP and must never log a token.
package engine
