-- A void round says when and by which rule it ended, and a retired chain
-- says when it was retired (issue 26). A void round never crashed: its end is
-- voided_at, never crashed_at, and void_rule names the rule that settled it:
-- 'failover_betting' and 'failover_flight' (the fail-over rule, round
-- interrupted in betting or in flight, docs/failover.md), 'planned_stop' (a
-- planned stop whose shutdown grace ran out in flight), 'takeoff_failed' (the
-- database refused the take-off) or 'unknown' (voided before this migration,
-- which did not keep the rule). Times are Unix milliseconds (UTC).
ALTER TABLE rounds ADD COLUMN voided_at INTEGER NULL;
--bun:split
ALTER TABLE rounds ADD COLUMN void_rule TEXT NULL CHECK (void_rule IS NULL OR
    void_rule IN ('failover_betting', 'failover_flight', 'planned_stop', 'takeoff_failed', 'unknown'));
--bun:split
-- Void rounds stored before: a crashed_at they held is when they were voided;
-- without one, their end was not stored and voided_at stays NULL.
UPDATE rounds SET voided_at = crashed_at, crashed_at = NULL, void_rule = 'unknown'
WHERE status = 'void' AND void_rule IS NULL;
--bun:split
-- A chain is retired in the transaction that publishes the next chain of its
-- game: a chain retired before this migration gets that chain's created_at.
ALTER TABLE hash_chains ADD COLUMN retired_at INTEGER NULL;
--bun:split
UPDATE hash_chains SET retired_at = (SELECT MIN(n.created_at) FROM hash_chains AS n
                                     WHERE n.game_id = hash_chains.game_id AND n.number > hash_chains.number)
WHERE last_seq IS NOT NULL AND retired_at IS NULL;
