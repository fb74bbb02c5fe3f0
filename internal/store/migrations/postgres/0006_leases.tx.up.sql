-- Table leases (issue 13, cluster mode): each game's table is run by one
-- leader, the holder of its lease. Acquiring the lease increments epoch, the
-- fencing epoch; every transaction the leader commits for the table checks
-- the epoch inside that transaction (FOR KEY SHARE on this row; a takeover
-- locks it FOR UPDATE first), so a former
-- leader commits nothing once another replica took the lease over.
-- expires_at and acquired_at are Unix milliseconds of the DATABASE's clock
-- (clock_timestamp()), so replicas with skewed clocks agree; expires_at 0 is a
-- released lease, free at once.
CREATE TABLE IF NOT EXISTS leases (
    game_id     TEXT   NOT NULL PRIMARY KEY CHECK (game_id <> ''),
    holder      TEXT   NOT NULL CHECK (holder <> ''),
    epoch       BIGINT NOT NULL CHECK (epoch > 0),
    expires_at  BIGINT NOT NULL CHECK (expires_at >= 0),
    acquired_at BIGINT NOT NULL
);
--bun:split
-- The fencing epoch of the leader that opened the round; 0 for the rounds
-- opened before leases (one process).
ALTER TABLE rounds ADD COLUMN IF NOT EXISTS epoch BIGINT NOT NULL DEFAULT 0;
