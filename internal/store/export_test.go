package store

import (
	"context"
	"database/sql"
)

// MaxOpenConns reports the pool's bound, for the tests of Open.
func MaxOpenConns(s *Store) int { return s.db.Stats().MaxOpenConnections }

// HoldConnection takes every connection of the pool out of use (on SQLite
// the only one, on PostgreSQL all of pgMaxOpenConns) without beginning a
// transaction, until release is called: what a busy process's other
// statements do to a statement that queues for one.
func HoldConnection(s *Store) (release func(), err error) {
	var held []*sql.Conn
	release = func() {
		for _, c := range held {
			_ = c.Close()
		}
	}
	for range s.db.Stats().MaxOpenConnections {
		c, err := s.db.DB.Conn(context.Background())
		if err != nil {
			release()
			return nil, err
		}
		held = append(held, c)
	}
	return release, nil
}
