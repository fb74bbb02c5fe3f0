-- Back to plain contributions: a commitment whose value was never revealed
-- is dropped (the older code has no column for it).
DELETE FROM chain_contributions WHERE value IS NULL;
--bun:split
CREATE TABLE chain_contributions_0010 (
    chain_id    TEXT    NOT NULL REFERENCES hash_chains (id),
    source      TEXT    NOT NULL CHECK (source IN ('operator', 'beacon', 'game')),
    name        TEXT    NOT NULL,
    value       TEXT    NOT NULL CHECK (length(value) = 64),
    received_at INTEGER NOT NULL,
    PRIMARY KEY (chain_id, source, name)
) STRICT, WITHOUT ROWID;
--bun:split
INSERT INTO chain_contributions_0010 (chain_id, source, name, value, received_at)
SELECT chain_id, source, name, value, received_at FROM chain_contributions;
--bun:split
DROP TABLE chain_contributions;
--bun:split
ALTER TABLE chain_contributions_0010 RENAME TO chain_contributions;
--bun:split
ALTER TABLE hash_chains DROP COLUMN reveal_ends_at;
--bun:split
ALTER TABLE hash_chains DROP COLUMN contribution_rule;
