//go:build !unix

package store

import (
	"errors"
	"os"
)

// errLocked: another process holds the lock (lockFile).
var errLocked = errors.New("locked by another process")

// lockFile cannot lock a file on this system: Own fails, and the process
// keeps its tables by renewing their leases instead.
func lockFile(*os.File) error {
	return errors.New("no file lock on this system")
}
