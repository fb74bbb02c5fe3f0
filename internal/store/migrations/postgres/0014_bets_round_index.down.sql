-- Back to the index of round and status, built without stopping writes.
CREATE INDEX CONCURRENTLY IF NOT EXISTS bets_round_idx ON bets (round_id, status);
--bun:split
DROP INDEX CONCURRENTLY IF EXISTS bets_by_round_idx;
