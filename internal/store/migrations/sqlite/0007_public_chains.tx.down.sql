-- Back to one chain row per game. The sealed seeds cannot be unsealed in
-- SQL: the restored row of each game's latest chain has an empty seed, which
-- the older code cannot use, so it publishes a new chain at its next round.
CREATE TABLE IF NOT EXISTS chains (
    game_id     TEXT    NOT NULL PRIMARY KEY,
    seed        TEXT    NOT NULL,
    first_seq   BIGINT  NOT NULL CHECK (first_seq > 0),
    length      BIGINT  NOT NULL CHECK (length > 0),
    terminal    TEXT    NOT NULL,
    salt        TEXT    NOT NULL,
    created_at  BIGINT  NOT NULL
);
--bun:split
INSERT INTO chains (game_id, seed, first_seq, length, terminal, salt, created_at)
SELECT h.game_id, '', h.first_seq, h.length, h.terminal, COALESCE(h.salt, ''), h.created_at
FROM hash_chains AS h WHERE h.number = (SELECT MAX(number) FROM hash_chains WHERE game_id = h.game_id);
--bun:split
DROP INDEX IF EXISTS rounds_chain_idx;
--bun:split
ALTER TABLE rounds ADD COLUMN salt TEXT NOT NULL DEFAULT '';
--bun:split
ALTER TABLE rounds ADD COLUMN rtp_bp INTEGER NOT NULL DEFAULT 0;
--bun:split
ALTER TABLE rounds ADD COLUMN max_multiplier INTEGER NOT NULL DEFAULT 0;
--bun:split
UPDATE rounds SET salt = COALESCE(h.salt, ''), rtp_bp = h.rtp_bp, max_multiplier = h.max_multiplier
FROM hash_chains AS h WHERE h.id = rounds.chain_id;
--bun:split
ALTER TABLE rounds ADD COLUMN sealed_hash TEXT NOT NULL DEFAULT '';
--bun:split
ALTER TABLE rounds ADD COLUMN sealed_crash INTEGER NOT NULL DEFAULT 100 CHECK (sealed_crash >= 100);
--bun:split
UPDATE rounds SET sealed_hash = COALESCE(hash, ''), sealed_crash = COALESCE(crash_point, 100);
--bun:split
ALTER TABLE rounds DROP COLUMN hash;
--bun:split
ALTER TABLE rounds DROP COLUMN crash_point;
--bun:split
ALTER TABLE rounds RENAME COLUMN sealed_hash TO hash;
--bun:split
ALTER TABLE rounds RENAME COLUMN sealed_crash TO crash_point;
--bun:split
ALTER TABLE rounds DROP COLUMN chain_position;
--bun:split
ALTER TABLE rounds DROP COLUMN chain_id;
--bun:split
DROP TABLE IF EXISTS chain_contributions;
--bun:split
DROP TABLE IF EXISTS hash_chains;
