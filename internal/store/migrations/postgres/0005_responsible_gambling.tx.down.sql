DROP TABLE IF EXISTS session_controls;
--bun:split
DROP INDEX IF EXISTS ticket_controls_expires_at_idx;
--bun:split
DROP TABLE IF EXISTS ticket_controls;
