DROP INDEX IF EXISTS freebet_grants_open_idx;
--bun:split
DROP TABLE IF EXISTS freebet_grants;
--bun:split
DROP TABLE IF EXISTS freebet_sources;
