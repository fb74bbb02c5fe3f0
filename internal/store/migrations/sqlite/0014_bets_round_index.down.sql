-- Back to the index of round and status.
CREATE INDEX IF NOT EXISTS bets_round_idx ON bets (round_id, status);
--bun:split
DROP INDEX IF EXISTS bets_by_round_idx;
