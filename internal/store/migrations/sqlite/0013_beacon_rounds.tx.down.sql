-- Back to chains that name no beacon round. A chain whose salt is fixed
-- keeps its beacon contribution (its value) but loses the round's published
-- facts and signature; a chain still waiting for its round would have its
-- salt fixed by the older code without it, so roll back only between chains.
ALTER TABLE hash_chains DROP COLUMN beacon_signature;
--bun:split
ALTER TABLE hash_chains DROP COLUMN beacon_round_at;
--bun:split
ALTER TABLE hash_chains DROP COLUMN beacon_round;
--bun:split
ALTER TABLE hash_chains DROP COLUMN beacon_period_s;
--bun:split
ALTER TABLE hash_chains DROP COLUMN beacon_genesis;
--bun:split
ALTER TABLE hash_chains DROP COLUMN beacon_public_key;
--bun:split
ALTER TABLE hash_chains DROP COLUMN beacon_chain_hash;
--bun:split
ALTER TABLE hash_chains DROP COLUMN beacon_network;
