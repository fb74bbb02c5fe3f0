//go:build unix

package store

import (
	"errors"
	"os"
	"syscall"
)

// errLocked: another process holds the lock (lockFile).
var errLocked = errors.New("locked by another process")

// lockFile takes an exclusive advisory lock (flock) on f without waiting; it
// lasts until f is closed or the process ends, however it ends.
func lockFile(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return errLocked
	}
	return err
}
