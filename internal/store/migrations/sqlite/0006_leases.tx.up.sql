-- Table leases (issue 13, cluster mode): each game's table is run by one
-- leader, the holder of its lease; one process has one candidate. Acquiring
-- the lease increments epoch, the fencing epoch; every transaction the leader
-- commits for the table checks the epoch inside that transaction (the one
-- writer serializes it with any takeover), so a former leader commits nothing
-- once another took the lease over. expires_at and acquired_at are Unix
-- milliseconds of the database's clock (unixepoch('subsec')); expires_at 0 is
-- a released lease, free at once.
CREATE TABLE IF NOT EXISTS leases (
    game_id     TEXT    NOT NULL PRIMARY KEY CHECK (game_id <> ''),
    holder      TEXT    NOT NULL CHECK (holder <> ''),
    epoch       INTEGER NOT NULL CHECK (epoch > 0),
    expires_at  INTEGER NOT NULL CHECK (expires_at >= 0),
    acquired_at INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
--bun:split
-- The fencing epoch of the leader that opened the round; 0 for the rounds
-- opened before leases. SQLite has no ADD COLUMN IF NOT EXISTS: Migrate skips
-- this file when rounds.epoch exists (sqliteAddedColumns, migrate.go), which
-- keeps it re-runnable like the others.
ALTER TABLE rounds ADD COLUMN epoch INTEGER NOT NULL DEFAULT 0;
