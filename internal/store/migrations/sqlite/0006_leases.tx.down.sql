ALTER TABLE rounds DROP COLUMN epoch;
--bun:split
DROP TABLE IF EXISTS leases;
