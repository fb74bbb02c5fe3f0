-- The back office (issue 17). Re-delivery of parked movements: an exhausted movement, once the
-- operator fixed its wallet, is delivered again with the same transaction_id
-- and a fresh 20 attempts. Each re-delivery is kept here, with who asked and
-- how the movement stood before, so the movement's history shows it.
CREATE TABLE IF NOT EXISTS movement_redeliveries (
    transaction_id    TEXT    NOT NULL REFERENCES movements (transaction_id),
    number            INTEGER NOT NULL CHECK (number > 0),
    requested_at      INTEGER NOT NULL,
    requested_by      TEXT    NOT NULL CHECK (requested_by <> ''),
    attempts_before   INTEGER NOT NULL,
    last_error_before TEXT    NOT NULL,
    PRIMARY KEY (transaction_id, number)
) STRICT, WITHOUT ROWID;
--bun:split
-- The back office's reads (issue 17): an operator's movements over a time
-- range, all or of one status, paged by (created_at, transaction_id). A
-- player's bets are read through bets_player_idx (0002).
CREATE INDEX IF NOT EXISTS movements_operator_created_idx ON movements (operator, created_at, transaction_id);
--bun:split
CREATE INDEX IF NOT EXISTS movements_operator_status_created_idx ON movements (operator, status, created_at, transaction_id);
