package store

// MaxOpenConns reports the pool's bound, for the tests of Open.
func MaxOpenConns(s *Store) int { return s.db.Stats().MaxOpenConnections }
