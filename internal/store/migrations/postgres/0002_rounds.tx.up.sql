-- Player sessions (internal/sessions), rounds, hash chains and bets (internal/engine).
-- Times are Unix milliseconds (UTC); money is BIGINT cents; multipliers are BIGINT
-- hundredths (153 = 1.53x).

-- One row per opened session. The session id is a bearer credential of the
-- browser: only its SHA-256 is stored. token is the operator's session token,
-- needed on every wallet call.
CREATE TABLE IF NOT EXISTS sessions (
    id_hash      BYTEA   NOT NULL PRIMARY KEY CHECK (octet_length(id_hash) = 32),
    operator     TEXT    NOT NULL,
    game_id      TEXT    NOT NULL,
    token        TEXT    NOT NULL DEFAULT '',
    player_id    TEXT    NOT NULL DEFAULT '',
    player_name  TEXT    NOT NULL DEFAULT '',
    currency     TEXT    NOT NULL,
    language     TEXT    NOT NULL,
    theme        TEXT    NOT NULL DEFAULT '',
    demo         BOOLEAN NOT NULL DEFAULT FALSE,
    mobile       BOOLEAN NOT NULL DEFAULT FALSE,
    lobby_url    TEXT    NOT NULL DEFAULT '',
    deposit_url  TEXT    NOT NULL DEFAULT '',
    balance      BIGINT  NOT NULL DEFAULT 0 CHECK (balance >= 0),
    created_at   BIGINT  NOT NULL,
    expires_at   BIGINT  NOT NULL
);
--bun:split
CREATE INDEX IF NOT EXISTS sessions_player_idx ON sessions (operator, player_id);
--bun:split
-- The provably fair hash chain of a game: the seed is secret, the terminal hash is
-- published before the first round. Round seq uses the chain's hash number
-- length-(seq-first_seq+1); a new chain replaces an exhausted one.
CREATE TABLE IF NOT EXISTS chains (
    game_id     TEXT    NOT NULL PRIMARY KEY,
    seed        TEXT    NOT NULL,
    first_seq   BIGINT  NOT NULL CHECK (first_seq > 0),
    length      BIGINT  NOT NULL CHECK (length > 0),
    terminal    TEXT    NOT NULL,
    salt        TEXT    NOT NULL,
    created_at  BIGINT  NOT NULL
);
--bun:split
CREATE TABLE IF NOT EXISTS rounds (
    id              TEXT    NOT NULL PRIMARY KEY,
    game_id         TEXT    NOT NULL,
    seq             BIGINT  NOT NULL CHECK (seq > 0),
    hash            TEXT    NOT NULL,
    salt            TEXT    NOT NULL DEFAULT '',
    crash_point     BIGINT  NOT NULL CHECK (crash_point >= 100),
    rtp_bp          BIGINT  NOT NULL,
    max_multiplier  BIGINT  NOT NULL,
    status          TEXT    NOT NULL CHECK (status IN ('betting', 'flying', 'finished', 'void')),
    betting_ends_at BIGINT  NOT NULL,
    started_at      BIGINT  NULL,
    crashed_at      BIGINT  NULL,
    created_at      BIGINT  NOT NULL,
    UNIQUE (game_id, seq)
);
--bun:split
CREATE INDEX IF NOT EXISTS rounds_status_idx ON rounds (status);
--bun:split
-- One row per bet. id is the transaction_id of its debit (/bet), and the bet_id of
-- its win or rollback. status: pending (intent committed, /bet under way), accepted,
-- refused, cashed_out, lost, cancelled (rolled back at the player's request) and
-- void (rolled back by the game: outcome unknown, refused after the debit, round
-- voided).
CREATE TABLE IF NOT EXISTS bets (
    id              TEXT    NOT NULL PRIMARY KEY,
    round_id        TEXT    NOT NULL REFERENCES rounds (id),
    game_id         TEXT    NOT NULL,
    session_hash    BYTEA   NOT NULL,
    operator        TEXT    NOT NULL,
    player_id       TEXT    NOT NULL DEFAULT '',
    token           TEXT    NOT NULL DEFAULT '',
    player_name     TEXT    NOT NULL DEFAULT '',
    currency        TEXT    NOT NULL,
    demo            BOOLEAN NOT NULL DEFAULT FALSE,
    amount          BIGINT  NOT NULL CHECK (amount > 0),
    auto_cashout    BIGINT  NULL CHECK (auto_cashout IS NULL OR auto_cashout >= 101),
    freebet_id      TEXT    NULL,
    status          TEXT    NOT NULL CHECK (status IN ('pending', 'accepted', 'refused', 'cashed_out', 'lost', 'cancelled', 'void')),
    multiplier      BIGINT  NULL,
    payout          BIGINT  NULL CHECK (payout IS NULL OR payout >= 0),
    refusal         TEXT    NOT NULL DEFAULT '',
    operator_tx_id  TEXT    NOT NULL DEFAULT '',
    placed_at       BIGINT  NOT NULL,
    settled_at      BIGINT  NULL
);
--bun:split
CREATE INDEX IF NOT EXISTS bets_round_idx ON bets (round_id, status);
--bun:split
CREATE INDEX IF NOT EXISTS bets_player_idx ON bets (operator, player_id, placed_at);
--bun:split
CREATE INDEX IF NOT EXISTS bets_session_idx ON bets (session_hash, placed_at);
--bun:split
CREATE INDEX IF NOT EXISTS bets_status_idx ON bets (status);
