-- A chain names a future round of a public randomness beacon (issue 26).
-- When a chain is published, the game names the first round of the beacon
-- (drand's quicknet) emitted more than one period after the chain's salt is
-- due (reveal_ends_at; seeding_ends_at on a plain chain), with the network's
-- published facts: its name, chain hash, public key (compressed G2 point,
-- hex), genesis (Unix seconds of round 1) and period (seconds), and the
-- round's time (Unix milliseconds). The salt is fixed only once that round's
-- value has been fetched and its signature verified; beacon_signature
-- (compressed G1 point, hex) is set with the salt, and the value, SHA-256 of
-- the signature, is the chain's 'beacon' contribution. Every column is NULL
-- on a chain that names no beacon round: every chain published before this
-- migration (a beacon value configured then stays its 'beacon'
-- contribution), and every chain of an installation with no fairness.beacon.
ALTER TABLE hash_chains ADD COLUMN IF NOT EXISTS beacon_network TEXT NULL;
--bun:split
ALTER TABLE hash_chains ADD COLUMN IF NOT EXISTS beacon_chain_hash TEXT NULL CHECK (beacon_chain_hash IS NULL OR length(beacon_chain_hash) = 64);
--bun:split
ALTER TABLE hash_chains ADD COLUMN IF NOT EXISTS beacon_public_key TEXT NULL;
--bun:split
ALTER TABLE hash_chains ADD COLUMN IF NOT EXISTS beacon_genesis BIGINT NULL;
--bun:split
ALTER TABLE hash_chains ADD COLUMN IF NOT EXISTS beacon_period_s BIGINT NULL CHECK (beacon_period_s IS NULL OR beacon_period_s >= 1);
--bun:split
ALTER TABLE hash_chains ADD COLUMN IF NOT EXISTS beacon_round BIGINT NULL CHECK (beacon_round IS NULL OR beacon_round >= 1);
--bun:split
ALTER TABLE hash_chains ADD COLUMN IF NOT EXISTS beacon_round_at BIGINT NULL;
--bun:split
ALTER TABLE hash_chains ADD COLUMN IF NOT EXISTS beacon_signature TEXT NULL;
