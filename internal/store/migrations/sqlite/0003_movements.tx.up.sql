-- The durable movement queue (internal/wallet): the outbox of /win and /rollback.
-- A row is written in the same transaction as the state change that causes it
-- (a cashout, a lost round, a cancellation) and is then delivered to the
-- operator's wallet with the same transaction_id and body on every attempt
-- (ENV-11, RB-7), up to 20 attempts (LIM-2), until it is done, refused (a final
-- refusal, parked for reconciliation) or exhausted (parked after the last
-- attempt). Times are Unix milliseconds (UTC); money is INTEGER cents.
-- STRICT: SQLite refuses a value of the wrong type instead of storing it.
--
-- transaction_id is the primary key: one transaction_id never names two
-- movements (ENV-13). token is the player's session token, needed on every
-- attempt; it is never logged. claimed_by is the lease of the worker sending
-- the movement: while it is set, next_attempt_at is the end of the lease.
CREATE TABLE IF NOT EXISTS movements (
    transaction_id  TEXT    NOT NULL PRIMARY KEY CHECK (transaction_id <> ''),
    kind            TEXT    NOT NULL CHECK (kind IN ('win', 'rollback')),
    operator        TEXT    NOT NULL CHECK (operator <> ''),
    game_id         TEXT    NOT NULL DEFAULT '',
    currency        TEXT    NOT NULL,
    player_id       TEXT    NOT NULL CHECK (player_id <> ''),
    token           TEXT    NOT NULL,
    round_id        TEXT    NOT NULL CHECK (round_id <> ''),
    bet_id          TEXT    NOT NULL CHECK (bet_id <> ''),
    amount          INTEGER NOT NULL CHECK (amount >= 0),
    win_type        TEXT    NOT NULL DEFAULT '',
    freebet_id      TEXT    NULL,
    reason          TEXT    NOT NULL DEFAULT '',
    status          TEXT    NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'done', 'refused', 'exhausted')),
    attempts        INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    next_attempt_at INTEGER NOT NULL,
    claimed_by      TEXT    NOT NULL DEFAULT '',
    last_error      TEXT    NOT NULL DEFAULT '',
    last_request_id TEXT    NOT NULL DEFAULT '',
    operator_tx_id  TEXT    NOT NULL DEFAULT '',
    balance_after   INTEGER NULL,
    created_at      INTEGER NOT NULL,
    done_at         INTEGER NULL,
    -- A win has a type; a zero_win moves nothing (WIN-5).
    CHECK (kind <> 'win' OR win_type IN ('win', 'freebet', 'zero_win')),
    CHECK (win_type <> 'zero_win' OR amount = 0),
    -- A rollback has no type and no freebet_id (RB-1).
    CHECK (kind <> 'rollback' OR (win_type = '' AND freebet_id IS NULL)),
    CHECK (freebet_id IS NULL OR freebet_id <> '')
) STRICT;
--bun:split
-- The worker picks due pending movements in next_attempt_at order.
CREATE INDEX IF NOT EXISTS movements_status_next_idx ON movements (status, next_attempt_at);
--bun:split
-- Reconciliation: a round's or a player's movements.
CREATE INDEX IF NOT EXISTS movements_round_idx ON movements (round_id);
--bun:split
CREATE INDEX IF NOT EXISTS movements_player_idx ON movements (player_id);
--bun:split
-- A debit ends in exactly one settlement (a win, a zero_win or a rollback): a
-- second movement for one bet_id is refused.
CREATE UNIQUE INDEX IF NOT EXISTS movements_bet_idx ON movements (bet_id);
