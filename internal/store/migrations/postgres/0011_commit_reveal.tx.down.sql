-- Back to plain contributions: a commitment whose value was never revealed
-- is dropped (the older code has no column for it).
DELETE FROM chain_contributions WHERE value IS NULL;
--bun:split
ALTER TABLE chain_contributions DROP CONSTRAINT IF EXISTS chain_contributions_value_or_commitment;
--bun:split
ALTER TABLE chain_contributions DROP COLUMN IF EXISTS revealed_at, DROP COLUMN IF EXISTS commitment;
--bun:split
ALTER TABLE chain_contributions ALTER COLUMN value SET NOT NULL;
--bun:split
ALTER TABLE hash_chains DROP COLUMN IF EXISTS reveal_ends_at, DROP COLUMN IF EXISTS contribution_rule;
