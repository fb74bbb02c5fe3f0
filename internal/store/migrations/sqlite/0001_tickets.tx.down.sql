DROP INDEX IF EXISTS tickets_expires_at_idx;
--bun:split
DROP TABLE IF EXISTS tickets;
