DROP TABLE IF EXISTS bets;
--bun:split
DROP TABLE IF EXISTS rounds;
--bun:split
DROP TABLE IF EXISTS chains;
--bun:split
DROP TABLE IF EXISTS sessions;
