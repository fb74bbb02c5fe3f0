DROP INDEX IF EXISTS movements_operator_status_created_idx;
--bun:split
DROP INDEX IF EXISTS movements_operator_created_idx;
--bun:split
DROP TABLE IF EXISTS movement_redeliveries;
