-- Freebet grants (internal/freebets). Times are Unix milliseconds (UTC), the same as on
-- SQLite.
--
-- freebet_sources: one row per grant id first seen in a /balance answer (the id as the
-- operator sent it, before splitting). Its primary key is what makes a repeated id a
-- no-op (FB-15 FB-16 FB-17): the first amount, quantity and currency prevail.
CREATE TABLE IF NOT EXISTS freebet_sources (
    operator    TEXT    NOT NULL,
    player_id   TEXT    NOT NULL,
    source_id   TEXT    NOT NULL CHECK (source_id <> ''),
    currency    TEXT    NOT NULL,
    amount      BIGINT  NOT NULL CHECK (amount > 0),
    quantity    INTEGER NOT NULL CHECK (quantity BETWEEN 1 AND 1000),
    received_at BIGINT  NOT NULL,
    PRIMARY KEY (operator, player_id, source_id)
);
--bun:split
-- freebet_grants: one row per round (FB-6 FB-7). grant_id is the freebet_id of /bet.
-- seq is the intake order: "oldest" means lowest seq (FB-22).
CREATE TABLE IF NOT EXISTS freebet_grants (
    seq        BIGINT  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    operator   TEXT    NOT NULL,
    player_id  TEXT    NOT NULL,
    grant_id   TEXT    NOT NULL CHECK (grant_id <> ''),
    source_id  TEXT    NOT NULL,
    currency   TEXT    NOT NULL,
    amount     BIGINT  NOT NULL CHECK (amount > 0),
    state      TEXT    NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'spent')),
    created_at BIGINT  NOT NULL,
    spent_at   BIGINT  NULL,
    CHECK ((state = 'spent') = (spent_at IS NOT NULL)),
    UNIQUE (operator, player_id, grant_id),
    FOREIGN KEY (operator, player_id, source_id) REFERENCES freebet_sources (operator, player_id, source_id)
);
--bun:split
-- Spend and substitution: the oldest open grant of one value of one player.
CREATE INDEX IF NOT EXISTS freebet_grants_open_idx
    ON freebet_grants (operator, player_id, currency, amount, seq) WHERE state = 'open';
