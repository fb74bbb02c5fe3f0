-- Contributions committed before they are revealed (issue 26). A chain
-- published from now on uses contribution_rule 'commit_reveal': during its
-- seeding window an operator stores only the SHA-256 of its value
-- (commitment); from seeding_ends_at to reveal_ends_at it reveals the value,
-- which must hash to the commitment; at reveal_ends_at the salt is fixed, and
-- a commitment whose value was not revealed stands in for it. Chains already
-- published keep 'plain' (their values were sent in plain text in the
-- window), and their rows and salts stay as they are. reveal_ends_at is NULL
-- for a 'plain' chain.
ALTER TABLE hash_chains ADD COLUMN contribution_rule TEXT NOT NULL DEFAULT 'plain' CHECK (contribution_rule IN ('plain', 'commit_reveal'));
--bun:split
ALTER TABLE hash_chains ADD COLUMN reveal_ends_at INTEGER NULL;
--bun:split
-- value becomes NULL-able (an operator's value is unknown until revealed, and
-- stays NULL when withheld); SQLite changes a column's NOT NULL only by
-- rebuilding the table.
CREATE TABLE chain_contributions_0011 (
    chain_id    TEXT    NOT NULL REFERENCES hash_chains (id),
    source      TEXT    NOT NULL CHECK (source IN ('operator', 'beacon', 'game')),
    name        TEXT    NOT NULL,
    value       TEXT    NULL CHECK (value IS NULL OR length(value) = 64),
    received_at INTEGER NOT NULL,
    commitment  TEXT    NULL CHECK (commitment IS NULL OR length(commitment) = 64),
    revealed_at INTEGER NULL,
    PRIMARY KEY (chain_id, source, name),
    CHECK (value IS NOT NULL OR commitment IS NOT NULL)
) STRICT, WITHOUT ROWID;
--bun:split
INSERT INTO chain_contributions_0011 (chain_id, source, name, value, received_at)
SELECT chain_id, source, name, value, received_at FROM chain_contributions;
--bun:split
DROP TABLE chain_contributions;
--bun:split
ALTER TABLE chain_contributions_0011 RENAME TO chain_contributions;
