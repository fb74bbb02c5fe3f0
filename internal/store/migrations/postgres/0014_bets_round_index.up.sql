-- The bets of a round are found by round_id alone (issue 30): the index no
-- longer holds status, so a bet's moves no longer rewrite it (on SQLite,
-- where make cost measures 12 % fewer instructions per bet; here a move
-- still writes every index while bets_status_idx holds status).
--
-- Outside a transaction and CONCURRENTLY: the bets table of an installation
-- that keeps five years of bets is large, and a plain CREATE INDEX would
-- stop every bet's write until it is built. The replicas still running keep
-- taking bets meanwhile; the migrating one becomes ready when it is done
-- (docs/deploy.md). A build that failed leaves an invalid index, which the
-- first statement drops when the migration runs again.
DROP INDEX CONCURRENTLY IF EXISTS bets_by_round_idx;
--bun:split
CREATE INDEX CONCURRENTLY bets_by_round_idx ON bets (round_id);
--bun:split
DROP INDEX CONCURRENTLY IF EXISTS bets_round_idx;
