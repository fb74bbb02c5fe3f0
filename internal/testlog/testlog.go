// Package testlog holds the logger that tests hand to the code they test:
// its lines go to the test's own output, so that `go test` shows them only
// for a test that failed (or under -v), and only that test's. It must never
// be used outside tests, and never writes once its test has ended.
package testlog

import (
	"io"
	"log/slog"
	"sync"
	"testing"
)

// New returns a logger, at level Info, whose lines are t's output. Lines
// logged once t's cleanups have begun to end (a goroutine the test started
// that outlives it) are dropped: testing forbids writing to a finished
// test's output.
func New(t testing.TB) *slog.Logger {
	w := &writer{out: t.Output()}
	t.Cleanup(w.close)
	return slog.New(slog.NewTextHandler(w, nil))
}

// writer is t's output until close.
type writer struct {
	mu     sync.Mutex
	out    io.Writer
	closed bool
}

func (w *writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return len(p), nil
	}
	return w.out.Write(p)
}

func (w *writer) close() {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
}
