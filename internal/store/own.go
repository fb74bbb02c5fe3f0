package store

import (
	"errors"
	"fmt"
	"os"
)

// ErrOwned: another process owns the SQLite file (Own).
var ErrOwned = errors.New("store: the database file is owned by another process")

// Own takes the store's SQLite file for this process alone, until Close or
// the process ends: an exclusive lock on the file beside it named by
// OwnerFile, which no other process's Own can take meanwhile (ErrOwned). A
// process that owns its database is the only one that can lead its tables,
// so it needs no lease renewals to keep them. An in-memory database is
// this process's alone already. A PostgreSQL database is shared: Own fails.
func (s *Store) Own() error {
	switch {
	case s.dialect != DialectSQLite:
		return errors.New("store: own: a PostgreSQL database is shared by the processes that reach it; only a SQLite file can be owned")
	case s.path == ":memory:":
		return nil
	}
	s.ownMu.Lock()
	defer s.ownMu.Unlock()
	if s.owner != nil {
		return nil
	}
	name := OwnerFile(s.path)
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600) //nolint:gosec // G304: beside the installation's own database file, which its configuration names
	if err != nil {
		return fmt.Errorf("store: own %s: %w", s.path, err)
	}
	if err := lockFile(f); err != nil {
		_ = f.Close()
		if errors.Is(err, errLocked) {
			return fmt.Errorf("%w: %s (its lock %s is held)", ErrOwned, s.path, name)
		}
		return fmt.Errorf("store: own %s: lock %s: %w", s.path, name, err)
	}
	s.owner = f
	return nil
}

// OwnerFile is the file beside the SQLite file at path whose lock says which
// process owns it (Own).
func OwnerFile(path string) string { return path + ".owner" }

// disown gives the SQLite file up (Close): the lock ends with its file.
func (s *Store) disown() error {
	s.ownMu.Lock()
	defer s.ownMu.Unlock()
	if s.owner == nil {
		return nil
	}
	err := s.owner.Close()
	s.owner = nil
	if err != nil {
		return fmt.Errorf("store: give up %s: %w", OwnerFile(s.path), err)
	}
	return nil
}
