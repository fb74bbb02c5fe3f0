-- Contributions committed before they are revealed (issue 26). A chain
-- published from now on uses contribution_rule 'commit_reveal': during its
-- seeding window an operator stores only the SHA-256 of its value
-- (commitment); from seeding_ends_at to reveal_ends_at it reveals the value,
-- which must hash to the commitment; at reveal_ends_at the salt is fixed, and
-- a commitment whose value was not revealed stands in for it. Chains already
-- published keep 'plain' (their values were sent in plain text in the
-- window), and their rows and salts stay as they are. reveal_ends_at is NULL
-- for a 'plain' chain.
ALTER TABLE hash_chains ADD COLUMN IF NOT EXISTS contribution_rule TEXT NOT NULL DEFAULT 'plain' CHECK (contribution_rule IN ('plain', 'commit_reveal'));
--bun:split
ALTER TABLE hash_chains ADD COLUMN IF NOT EXISTS reveal_ends_at BIGINT NULL;
--bun:split
-- value becomes NULL-able: an operator's value is unknown until revealed,
-- and stays NULL when withheld.
ALTER TABLE chain_contributions ALTER COLUMN value DROP NOT NULL;
--bun:split
ALTER TABLE chain_contributions ADD COLUMN IF NOT EXISTS commitment TEXT NULL CHECK (commitment IS NULL OR length(commitment) = 64);
--bun:split
ALTER TABLE chain_contributions ADD COLUMN IF NOT EXISTS revealed_at BIGINT NULL;
--bun:split
ALTER TABLE chain_contributions DROP CONSTRAINT IF EXISTS chain_contributions_value_or_commitment;
--bun:split
ALTER TABLE chain_contributions ADD CONSTRAINT chain_contributions_value_or_commitment CHECK (value IS NOT NULL OR commitment IS NOT NULL);
