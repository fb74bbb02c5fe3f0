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
//
// The durable movement queue that delivers /win and /rollback with these
// calls is package movements; the back office's reads of it are package
// backoffice's. internal/wallet/wallettest is a fake operator wallet for
// tests.
//
// A Client method makes exactly one attempt. It never retries, never sleeps and
// never stores anything: whether and when to try again is decided by BetUntil
// and the movement queue (package movements), always with the same transaction_id and a fresh request_id and
// timestamp.
//
// What it must never do:
//   - store anything, or hold a table, a bun model or an SQL statement;
//   - decide an outcome from the HTTP status alone, round a money amount, or
//     take a Temporary answer for a refusal (a refused /win would lose a prize);
//   - sign anything but the bytes that go on the wire;
//   - log or put into an error a secret, an API key, a session token, a
//     player id or a signature, or show an operator's error_message anywhere
//     but the game's log (AUTH-18);
//   - count a 4xx or a business refusal against the circuit breaker (AUTH-17).
package wallet
