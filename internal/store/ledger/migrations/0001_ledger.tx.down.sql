DROP TABLE freebet_grants;
--bun:split
DROP TABLE transactions;
--bun:split
DROP TABLE sessions;
--bun:split
DROP TABLE players;
