-- Launch tickets (internal/tickets). One row per issued ticket; the raw ticket is never
-- stored, only its SHA-256. Times are Unix milliseconds (UTC), the same as on PostgreSQL.
-- STRICT: SQLite refuses a value of the wrong type instead of storing it.
CREATE TABLE IF NOT EXISTS tickets (
    hash        BLOB    NOT NULL PRIMARY KEY CHECK (length(hash) = 32),
    operator    TEXT    NOT NULL,
    game_id     TEXT    NOT NULL,
    token       TEXT    NOT NULL DEFAULT '',
    player_id   TEXT    NOT NULL DEFAULT '',
    currency    TEXT    NOT NULL DEFAULT '',
    language    TEXT    NOT NULL DEFAULT '',
    player_name TEXT    NOT NULL DEFAULT '',
    theme       TEXT    NOT NULL DEFAULT '',
    demo        INTEGER NOT NULL DEFAULT 0 CHECK (demo IN (0, 1)),
    mobile      INTEGER NOT NULL DEFAULT 0 CHECK (mobile IN (0, 1)),
    lobby_url   TEXT    NOT NULL DEFAULT '',
    deposit_url TEXT    NOT NULL DEFAULT '',
    created_at  INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL,
    used_at     INTEGER NULL,
    CHECK (expires_at > created_at)
) STRICT, WITHOUT ROWID;
--bun:split
-- Housekeeping (DeleteExpiredTickets) scans by expiry.
CREATE INDEX IF NOT EXISTS tickets_expires_at_idx ON tickets (expires_at);
