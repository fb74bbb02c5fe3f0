package table

import (
	"errors"
	"net"
	"os"
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

// recordingConn records each write that reaches the socket.
type recordingConn struct {
	net.Conn
	writes []string
}

func (c *recordingConn) Write(p []byte) (int, error) {
	c.writes = append(c.writes, string(p))
	return len(p), nil
}

func (c *recordingConn) SetWriteDeadline(time.Time) error { return nil }

// What is written while the stream's socket is corked leaves in one write, in
// order, at the flush; what is written while it is not leaves at once.
func TestCorkedConn(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		corked bool
		frames []string
		before []string // the socket's writes before the flush
		after  []string // and after it
		wrote  bool     // flush's report
	}{
		{name: "corked: one write at the flush", corked: true, frames: []string{"a", "bb", "ccc"}, before: nil, after: []string{"abbccc"}, wrote: true},
		{name: "not corked: each at once", corked: false, frames: []string{"a", "bb"}, before: []string{"a", "bb"}, after: []string{"a", "bb"}, wrote: false},
		{name: "corked, nothing written: no write", corked: true, frames: nil, before: nil, after: nil, wrote: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := &recordingConn{}
			var count atomic.Int64
			c := &corkedConn{Conn: rec, writes: &count}
			if tc.corked {
				c.cork()
			}
			for _, f := range tc.frames {
				if n, err := c.Write([]byte(f)); n != len(f) || err != nil {
					t.Fatalf("Write(%q) = %d, %v", f, n, err)
				}
			}
			if !slices.Equal(rec.writes, tc.before) {
				t.Fatalf("socket writes before the flush = %q, want %q", rec.writes, tc.before)
			}
			wrote, err := c.flush(time.Second)
			if err != nil || wrote != tc.wrote {
				t.Fatalf("flush = %v, %v; want %v, nil", wrote, err, tc.wrote)
			}
			if !slices.Equal(rec.writes, tc.after) || count.Load() != int64(len(tc.after)) {
				t.Fatalf("socket writes after the flush = %q (counted %d), want %q", rec.writes, count.Load(), tc.after)
			}
			// The flush uncorked it: the next write leaves at once.
			if _, err := c.Write([]byte("z")); err != nil || rec.writes[len(rec.writes)-1] != "z" {
				t.Fatalf("write after the flush: %v, socket writes %q", err, rec.writes)
			}
		})
	}
}

// A batch the peer does not read within the wait fails the flush, which
// closes the stream as too slow.
func TestCorkedConnFlushTimesOut(t *testing.T) {
	t.Parallel()
	server, client := net.Pipe() // nobody reads client
	t.Cleanup(func() { _ = server.Close(); _ = client.Close() })
	var count atomic.Int64
	c := &corkedConn{Conn: server, writes: &count}
	c.cork()
	if _, err := c.Write([]byte("frame")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.flush(20 * time.Millisecond); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("flush to a peer that does not read = %v, want the deadline exceeded", err)
	}
}
