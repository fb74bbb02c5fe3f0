-- The responsible gambling controls of each player's latest /v1/launch, per
-- operator (issue 25). The legacy launch (POST /api/v1/sessions with the
-- operator's own token) carries no controls: its session takes these, so that
-- launching a player once with a reality check or an inactivity timeout cannot
-- be bypassed by the legacy path. One row per operator and player, replaced by
-- each later launch (a launch with every control off writes zeros); no token.
-- Written in the same transaction as the launch's ticket. Minutes: 0 is off;
-- launched_at is the ticket's created_at, Unix milliseconds (UTC), the same
-- as on SQLite.
CREATE TABLE IF NOT EXISTS launch_controls (
    operator              TEXT    NOT NULL CHECK (operator <> ''),
    player_id             TEXT    NOT NULL CHECK (player_id <> ''),
    session_clock         BOOLEAN NOT NULL DEFAULT FALSE,
    reality_check_minutes INTEGER NOT NULL DEFAULT 0 CHECK (reality_check_minutes BETWEEN 0 AND 1440),
    inactivity_minutes    INTEGER NOT NULL DEFAULT 0 CHECK (inactivity_minutes BETWEEN 0 AND 1440),
    launched_at           BIGINT  NOT NULL,
    PRIMARY KEY (operator, player_id)
);
