-- Launch tickets (internal/tickets). One row per issued ticket; the raw ticket is never
-- stored, only its SHA-256. Times are Unix milliseconds (UTC), the same as on SQLite.
CREATE TABLE IF NOT EXISTS tickets (
    hash        BYTEA   NOT NULL PRIMARY KEY CHECK (octet_length(hash) = 32),
    operator    TEXT    NOT NULL,
    game_id     TEXT    NOT NULL,
    token       TEXT    NOT NULL DEFAULT '',
    player_id   TEXT    NOT NULL DEFAULT '',
    currency    TEXT    NOT NULL DEFAULT '',
    language    TEXT    NOT NULL DEFAULT '',
    player_name TEXT    NOT NULL DEFAULT '',
    theme       TEXT    NOT NULL DEFAULT '',
    demo        BOOLEAN NOT NULL DEFAULT FALSE,
    mobile      BOOLEAN NOT NULL DEFAULT FALSE,
    lobby_url   TEXT    NOT NULL DEFAULT '',
    deposit_url TEXT    NOT NULL DEFAULT '',
    created_at  BIGINT  NOT NULL,
    expires_at  BIGINT  NOT NULL,
    used_at     BIGINT  NULL,
    CHECK (expires_at > created_at)
);
--bun:split
-- Housekeeping (DeleteExpiredTickets) scans by expiry.
CREATE INDEX IF NOT EXISTS tickets_expires_at_idx ON tickets (expires_at);
