-- Back to void rounds without their rule: the older code stores no end for a
-- void round, so voided_at is dropped with the rule; retired_at likewise.
ALTER TABLE hash_chains DROP COLUMN retired_at;
--bun:split
ALTER TABLE rounds DROP COLUMN void_rule;
--bun:split
ALTER TABLE rounds DROP COLUMN voided_at;
