// Package wallet is the game's side of the seamless wallet (game to operator):
// one Client per operator that sends /balance, /bet, /win and /rollback through
// the client generated from api/wallet.v1.yaml, signs the exact bytes it sends,
// puts the Envelope on every attempt, classifies every answer once into Success,
// Refused or Temporary, and guards the operator with a circuit breaker. The
// retry schedule that the callers (the bet loop and the durable movement queue)
// follow is here too: MaxAttempts and Backoff.
//
// What it owns:
//   - client*.go: Client, the call types, Result, the Envelope, the
//     Authorization and X-Signature headers, per-attempt logs and metrics.
//   - classify*.go: the one classification of a wallet answer. It branches on
//     the body's status, never on the HTTP status (WERR-3); the table is in
//     the documentation of classify.
//   - breaker*.go: the per-operator circuit breaker (sony/gobreaker).
//   - backoff*.go: MaxAttempts and Backoff.
//   - betloop.go: BetUntil, the /bet attempts while the betting window is open.
//   - movements*.go, queue*.go: the rules of the durable movement queue
//     (outbox). Enqueue validates a /win or /rollback, checks it against its
//     debit (RB-6, WIN-17) and writes it in the caller's transaction (the one
//     its ctx carries), together with the state change that causes it; Queue
//     sends each with the same transaction_id and body on every attempt,
//     classifies the answer, backs off, pauses an operator whose breaker is
//     open, and after MaxAttempts parks it as exhausted; ListMovements is the
//     reconciliation view. The movements table, its statements (the claim
//     with a lease, FOR UPDATE SKIP LOCKED on PostgreSQL, the fenced record of
//     attempts) and the read of the debits live in package store: this
//     package reaches them through the interfaces it declares
//     (MovementWriter, MovementReader, QueueStore), which *store.Store
//     satisfies.
//
// A Client method makes exactly one attempt. It never retries, never sleeps and
// never stores anything: whether and when to try again is decided by BetUntil
// and the Queue, always with the same transaction_id and a fresh request_id and
// timestamp.
//
// What it must never do:
//   - hold a table, a bun model or an SQL statement: they belong to package
//     store, and no dialect difference shows here;
//   - decide an outcome from the HTTP status alone, round a money amount, or
//     take a Temporary answer for a refusal (a refused /win would lose a prize);
//   - sign anything but the bytes that go on the wire;
//   - log or put into an error a secret, an API key, a session token, a
//     player id or a signature, or show an operator's error_message anywhere
//     but the game's log (AUTH-18);
//   - count a 4xx or a business refusal against the circuit breaker (AUTH-17).
package wallet
