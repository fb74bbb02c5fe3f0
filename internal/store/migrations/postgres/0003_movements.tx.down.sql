DROP INDEX IF EXISTS movements_bet_idx;
--bun:split
DROP INDEX IF EXISTS movements_player_idx;
--bun:split
DROP INDEX IF EXISTS movements_round_idx;
--bun:split
DROP INDEX IF EXISTS movements_status_next_idx;
--bun:split
DROP TABLE IF EXISTS movements;
