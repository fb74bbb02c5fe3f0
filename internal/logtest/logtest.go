// Package logtest holds what tests do with what a component logs: the
// logger a test hands the code it tests, whose lines are the test's own
// output (New), and a buffer that a component's goroutines (or a process's
// output copier) write to while the test reads it (Buffer).
// It is imported by tests only, must never hold a logger's configuration
// for production code, and never writes to a test's output once the test
// has ended.
package logtest

import (
	"bytes"
	"io"
	"log/slog"
	"sync"
	"testing"
)

// New returns a logger, at level Info, whose lines are t's output: go test
// prints them only for a test that failed, under its name, or with -v. Lines
// logged once t's cleanups have begun to end (a goroutine the test started
// that outlives it) are dropped: testing forbids writing to a finished
// test's output.
func New(t testing.TB) *slog.Logger {
	w := &output{out: t.Output()}
	t.Cleanup(w.close)
	return slog.New(slog.NewTextHandler(w, nil))
}

// output is a test's output until close.
type output struct {
	mu     sync.Mutex
	out    io.Writer
	closed bool
}

func (w *output) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return len(p), nil
	}
	return w.out.Write(p)
}

func (w *output) close() {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
}

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
