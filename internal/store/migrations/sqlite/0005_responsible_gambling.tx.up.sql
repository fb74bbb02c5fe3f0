-- Responsible gambling controls, switched per launch (POST /v1/launch
-- responsible_gambling). Minutes: 0 is off. Times are Unix milliseconds (UTC);
-- 0 is "not yet". New tables rather than new columns: SQLite has no ADD COLUMN
-- IF NOT EXISTS, and a migration must be re-runnable.
--
-- ticket_controls: the controls a ticket carries to its session; a row only
-- when the launch switched something on. Deleted with its ticket (expires_at).
CREATE TABLE IF NOT EXISTS ticket_controls (
    hash                  BLOB    NOT NULL PRIMARY KEY CHECK (length(hash) = 32),
    session_clock         INTEGER NOT NULL DEFAULT 0 CHECK (session_clock IN (0, 1)),
    reality_check_minutes INTEGER NOT NULL DEFAULT 0 CHECK (reality_check_minutes BETWEEN 0 AND 1440),
    inactivity_minutes    INTEGER NOT NULL DEFAULT 0 CHECK (inactivity_minutes BETWEEN 0 AND 1440),
    expires_at            INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
--bun:split
CREATE INDEX IF NOT EXISTS ticket_controls_expires_at_idx ON ticket_controls (expires_at);
--bun:split
-- session_controls: the controls of a session and the state that must survive a
-- restart: the player's last action (the idle clock) and the last acknowledged
-- reality check (the next is due reality_check_minutes after it, or after the
-- session's created_at before the first). A row only when a control is on.
CREATE TABLE IF NOT EXISTS session_controls (
    id_hash               BLOB    NOT NULL PRIMARY KEY CHECK (length(id_hash) = 32),
    session_clock         INTEGER NOT NULL DEFAULT 0 CHECK (session_clock IN (0, 1)),
    reality_check_minutes INTEGER NOT NULL DEFAULT 0 CHECK (reality_check_minutes BETWEEN 0 AND 1440),
    inactivity_minutes    INTEGER NOT NULL DEFAULT 0 CHECK (inactivity_minutes BETWEEN 0 AND 1440),
    last_action_at        INTEGER NOT NULL,
    reality_check_ack_at  INTEGER NOT NULL DEFAULT 0
) STRICT, WITHOUT ROWID;
