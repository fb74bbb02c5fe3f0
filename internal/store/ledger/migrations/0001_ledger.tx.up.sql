-- The reference operator's ledger. Money is INTEGER cents; times are Unix
-- milliseconds (UTC). The balance lives in players.balance and every change of
-- it has exactly one row in transactions, written in the same transaction.
CREATE TABLE players (
    player_id  TEXT    NOT NULL PRIMARY KEY,
    name       TEXT    NOT NULL DEFAULT '',
    currency   TEXT    NOT NULL CHECK (length(currency) = 3),
    balance    INTEGER NOT NULL DEFAULT 0 CHECK (balance >= 0),
    blocked    INTEGER NOT NULL DEFAULT 0 CHECK (blocked IN (0, 1)),
    created_at INTEGER NOT NULL
);
--bun:split
-- Session tokens issued to the game at launch. A token is random, at least 16
-- characters, never equal to the player id.
CREATE TABLE sessions (
    token      TEXT    NOT NULL PRIMARY KEY,
    player_id  TEXT    NOT NULL REFERENCES players (player_id),
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    revoked    INTEGER NOT NULL DEFAULT 0 CHECK (revoked IN (0, 1))
);
--bun:split
-- One row per movement the wallet accepted: bet, win or rollback. id is the
-- operator's own transaction id (answered as transaction_id); transaction_id is
-- the game's, the idempotency key with player_id. amount is what the game
-- declared; delta is what the balance actually moved (negative for a debit, 0
-- for a freebet bet, a zero_win or a rollback with nothing to undo).
-- request_hash and response_* let a retry with identical content replay the
-- stored answer. settlement is set on bet rows once a win or a rollback closes
-- them; settled_by is the operator id of that closing movement.
CREATE TABLE transactions (
    id              INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    player_id       TEXT    NOT NULL REFERENCES players (player_id),
    transaction_id  TEXT    NOT NULL,
    kind            TEXT    NOT NULL CHECK (kind IN ('bet', 'win', 'rollback')),
    amount          INTEGER NOT NULL CHECK (amount >= 0),
    delta           INTEGER NOT NULL,
    balance_after   INTEGER NOT NULL CHECK (balance_after >= 0),
    currency        TEXT    NOT NULL,
    bet_id          TEXT    NULL,
    round_id        TEXT    NOT NULL DEFAULT '',
    freebet_id      TEXT    NULL,
    win_type        TEXT    NOT NULL DEFAULT '',
    reason          TEXT    NOT NULL DEFAULT '',
    request_hash    BLOB    NOT NULL,
    response_status INTEGER NOT NULL,
    response_body   BLOB    NOT NULL,
    settlement      TEXT    NULL CHECK (settlement IN ('win', 'zero_win', 'lose', 'freebet', 'rollback')),
    settled_by      INTEGER NULL,
    created_at      INTEGER NOT NULL,
    UNIQUE (player_id, transaction_id)
);
--bun:split
CREATE INDEX transactions_bet_idx ON transactions (player_id, bet_id);
--bun:split
-- Freebet grants listed on /balance while any of their rounds is unspent.
CREATE TABLE freebet_grants (
    player_id  TEXT    NOT NULL REFERENCES players (player_id),
    grant_id   TEXT    NOT NULL CHECK (grant_id <> ''),
    amount     INTEGER NOT NULL CHECK (amount > 0),
    quantity   INTEGER NOT NULL CHECK (quantity BETWEEN 1 AND 1000),
    created_at INTEGER NOT NULL,
    PRIMARY KEY (player_id, grant_id)
);
