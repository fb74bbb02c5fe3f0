-- Responsible gambling controls, switched per launch (POST /v1/launch
-- responsible_gambling). Minutes: 0 is off. Times are Unix milliseconds (UTC),
-- the same as on SQLite; 0 is "not yet". New tables rather than new columns, the
-- same as on SQLite (which has no ADD COLUMN IF NOT EXISTS).
--
-- ticket_controls: the controls a ticket carries to its session; a row only
-- when the launch switched something on. Deleted with its ticket (expires_at).
CREATE TABLE IF NOT EXISTS ticket_controls (
    hash                  BYTEA   NOT NULL PRIMARY KEY CHECK (octet_length(hash) = 32),
    session_clock         BOOLEAN NOT NULL DEFAULT FALSE,
    reality_check_minutes INTEGER NOT NULL DEFAULT 0 CHECK (reality_check_minutes BETWEEN 0 AND 1440),
    inactivity_minutes    INTEGER NOT NULL DEFAULT 0 CHECK (inactivity_minutes BETWEEN 0 AND 1440),
    expires_at            BIGINT  NOT NULL
);
--bun:split
CREATE INDEX IF NOT EXISTS ticket_controls_expires_at_idx ON ticket_controls (expires_at);
--bun:split
-- session_controls: the controls of a session and the state that must survive a
-- restart: the player's last action (the idle clock) and the last acknowledged
-- reality check (the next is due reality_check_minutes after it, or after the
-- session's created_at before the first). A row only when a control is on.
CREATE TABLE IF NOT EXISTS session_controls (
    id_hash               BYTEA   NOT NULL PRIMARY KEY CHECK (octet_length(id_hash) = 32),
    session_clock         BOOLEAN NOT NULL DEFAULT FALSE,
    reality_check_minutes INTEGER NOT NULL DEFAULT 0 CHECK (reality_check_minutes BETWEEN 0 AND 1440),
    inactivity_minutes    INTEGER NOT NULL DEFAULT 0 CHECK (inactivity_minutes BETWEEN 0 AND 1440),
    last_action_at        BIGINT  NOT NULL,
    reality_check_ack_at  BIGINT  NOT NULL DEFAULT 0
);
