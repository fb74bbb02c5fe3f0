// Package logtest holds what tests use to read what a component logged or
// a process printed: a buffer that the component's goroutines (or the
// process's output copier) write to while the test reads it.
// It is imported by tests only, and must never hold a logger's
// configuration for production code.
package logtest

import (
	"bytes"
	"sync"
)

// Buffer is a bytes.Buffer safe for concurrent writes and reads: the
// destination of a slog handler whose lines a test reads.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
