// Package movements is the durable queue of the game's /win and /rollback
// movements (the outbox): what a settlement owes a player at the operator's
// wallet, stored in the same transaction as the settlement, then delivered
// until the operator has it.
//
// What it owns:
//   - movements*.go: Movement and its rules. Enqueue and EnqueueMany validate
//     a /win or /rollback (the wallet client's own checks of the call, so that
//     nothing stored could only be refused), check it against its debit
//     (RB-6, WIN-17) and write it in the caller's transaction (the one its ctx
//     carries), together with the state change that causes it; Outbox wraps
//     them for the engine and wakes the queue after the commit.
//     ListMovements and WriteMovements are the reconciliation view and its
//     CSV; Redeliver sends a parked (exhausted) movement again.
//   - queue*.go: Queue sends each movement with the same transaction_id and
//     body on every attempt (package wallet's Client makes each attempt and
//     classifies its answer), backs off (wallet.Backoff), pauses an operator
//     whose breaker is open, parks a movement as exhausted after
//     wallet.MaxAttempts, and hands each applied movement's answer to
//     WithOnSettled (the game shows the balance to the player's sessions).
//
// The movements table, its statements (the claim with a lease, FOR UPDATE
// SKIP LOCKED on PostgreSQL, the fenced record of attempts) and the read of the
// debits live in package store: this package declares what it needs over its
// own types (Repository: MovementWriter, MovementReader, QueueStore,
// Redeliverer) and (*store.Store).Movements implements it.
//
// What it must never do:
//   - send a movement with another transaction_id or another body than the
//     first attempt's, or two attempts of one movement at once;
//   - take a Temporary answer for a refusal (a refused /win would lose a
//     prize), or give up on a movement before wallet.MaxAttempts;
//   - hold a table, a bun model or an SQL statement: they belong to package
//     store;
//   - log or put into an error a token, a secret or a player id.
package movements
