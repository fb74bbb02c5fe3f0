-- Signed links of the back office (issue 17): a URL an operator asks for
-- with a signed route and hands to its support or finance staff, valid
-- until expires_at: a round's support page, or a CSV export of its
-- transactions. The link's token is a bearer credential: only its SHA-256 is
-- stored, as for sessions and tickets.
CREATE TABLE IF NOT EXISTS back_office_links (
    id_hash    BLOB    NOT NULL PRIMARY KEY CHECK (length(id_hash) = 32),
    operator   TEXT    NOT NULL CHECK (operator <> ''),
    kind       TEXT    NOT NULL CHECK (kind IN ('round', 'transactions')),
    round_id   TEXT    NOT NULL DEFAULT '',
    player_id  TEXT    NOT NULL DEFAULT '',
    from_ms    INTEGER NOT NULL DEFAULT 0,
    to_ms      INTEGER NOT NULL DEFAULT 0,
    status     TEXT    NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
