package store

import "context"

// MaxOpenConns reports the pool's bound, for the tests of Open.
func MaxOpenConns(s *Store) int { return s.db.Stats().MaxOpenConnections }

// HoldConnection takes a connection of the pool out of use (on SQLite the
// only one) without beginning a transaction, until release is called: what a
// busy process's other statements do to a statement that queues for it.
func HoldConnection(s *Store) (release func(), err error) {
	c, err := s.db.Conn(context.Background())
	if err != nil {
		return nil, err
	}
	return func() { _ = c.Close() }, nil
}
