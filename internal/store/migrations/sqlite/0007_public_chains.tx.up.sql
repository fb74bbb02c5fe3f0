-- Hash chains as permanent public commitments (issue 16). Every chain, past
-- and present, keeps its row: a new chain is a new row, the previous one is
-- retired (last_seq set), nothing is overwritten. A chain's settings (rtp_bp,
-- max_multiplier, formula_version) are part of its commitment: a round is
-- verified with its chain's settings, so rounds keep no copy of them. The
-- seed is sealed (AES-GCM with a key from the environment, package seal):
-- sealed_seed is nonce || ciphertext, NULL for a chain recorded before the
-- seal (its seed is dropped here, since it was stored in plain text).
-- The salt is fixed after the commitment, at seeding_ends_at, from the
-- contributions (chain_contributions): NULL until then.
CREATE TABLE IF NOT EXISTS hash_chains (
    id              TEXT    NOT NULL PRIMARY KEY CHECK (id <> ''),
    game_id         TEXT    NOT NULL,
    number          INTEGER NOT NULL CHECK (number > 0),
    first_seq       INTEGER NOT NULL CHECK (first_seq > 0),
    length          INTEGER NOT NULL CHECK (length > 0),
    last_seq        INTEGER NULL,
    terminal        TEXT    NOT NULL CHECK (length(terminal) = 64),
    rtp_bp          INTEGER NOT NULL CHECK (rtp_bp BETWEEN 1 AND 10000),
    max_multiplier  INTEGER NOT NULL CHECK (max_multiplier >= 101),
    formula_version INTEGER NOT NULL CHECK (formula_version > 0),
    sealed_seed     BLOB    NULL,
    created_at      INTEGER NOT NULL,
    seeding_ends_at INTEGER NOT NULL,
    salt            TEXT    NULL,
    salt_source     TEXT    NULL CHECK (salt_source IN ('contributions', 'game_draw', 'legacy')),
    salt_fixed_at   INTEGER NULL,
    UNIQUE (game_id, number)
) STRICT;
--bun:split
-- The values a chain's salt is made of: an operator's (name: its id), the
-- installation's beacon (name: its label) or the game's own draw, made when
-- the window closed and only when no operator contributed (name: '').
CREATE TABLE IF NOT EXISTS chain_contributions (
    chain_id    TEXT    NOT NULL REFERENCES hash_chains (id),
    source      TEXT    NOT NULL CHECK (source IN ('operator', 'beacon', 'game')),
    name        TEXT    NOT NULL,
    value       TEXT    NOT NULL CHECK (length(value) = 64),
    received_at INTEGER NOT NULL,
    PRIMARY KEY (chain_id, source, name)
) STRICT, WITHOUT ROWID;
--bun:split
-- The chain of each game as it stood: retired at its game's last round, with
-- the settings of that round. Rounds of chains overwritten before this
-- migration name no chain (their commitment was not kept).
INSERT INTO hash_chains (id, game_id, number, first_seq, length, last_seq, terminal, rtp_bp, max_multiplier,
                         formula_version, sealed_seed, created_at, seeding_ends_at, salt, salt_source, salt_fixed_at)
SELECT c.game_id || '-c1', c.game_id, 1, c.first_seq, c.length, r.seq, c.terminal, r.rtp_bp, r.max_multiplier,
       1, NULL, c.created_at, c.created_at, c.salt, 'legacy', c.created_at
FROM chains AS c
JOIN rounds AS r ON r.game_id = c.game_id AND r.seq = (SELECT MAX(seq) FROM rounds WHERE game_id = c.game_id)
WHERE r.seq >= c.first_seq;
--bun:split
DROP TABLE chains;
--bun:split
-- A round names its chain and its position there (seq - first_seq + 1).
-- Its hash and crash point are written when it crashes (or is voided),
-- never before: the database alone no longer predicts a round.
ALTER TABLE rounds ADD COLUMN chain_id TEXT NULL REFERENCES hash_chains (id);
--bun:split
ALTER TABLE rounds ADD COLUMN chain_position INTEGER NULL CHECK (chain_position IS NULL OR chain_position > 0);
--bun:split
UPDATE rounds SET chain_id = h.id, chain_position = rounds.seq - h.first_seq + 1
FROM hash_chains AS h WHERE h.game_id = rounds.game_id AND rounds.seq BETWEEN h.first_seq AND h.last_seq;
--bun:split
ALTER TABLE rounds ADD COLUMN revealed_hash TEXT NULL;
--bun:split
ALTER TABLE rounds ADD COLUMN revealed_crash INTEGER NULL CHECK (revealed_crash IS NULL OR revealed_crash >= 100);
--bun:split
UPDATE rounds SET revealed_hash = hash, revealed_crash = crash_point;
--bun:split
ALTER TABLE rounds DROP COLUMN hash;
--bun:split
ALTER TABLE rounds DROP COLUMN crash_point;
--bun:split
ALTER TABLE rounds RENAME COLUMN revealed_hash TO hash;
--bun:split
ALTER TABLE rounds RENAME COLUMN revealed_crash TO crash_point;
--bun:split
ALTER TABLE rounds DROP COLUMN salt;
--bun:split
ALTER TABLE rounds DROP COLUMN rtp_bp;
--bun:split
ALTER TABLE rounds DROP COLUMN max_multiplier;
--bun:split
CREATE INDEX IF NOT EXISTS rounds_chain_idx ON rounds (chain_id, chain_position);
