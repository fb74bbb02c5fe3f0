package table

import (
	"bufio"
	"errors"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// corkLimit is how many bytes a corked stream holds before it writes them
// anyway: a stream that is never idle still writes at least every 16 KiB.
const corkLimit = 16 << 10

// corkedConn is a stream's connection under coder/websocket. While corked,
// what the library writes (each message is one frame, flushed on its own) is
// held in memory; flush writes it all in one system call. The stream's
// forward loop corks while it handles what is ready and flushes before it
// waits or returns, so every message due to one connection at one moment
// leaves in one write, in the order the library wrote them (the frames are
// whole and never interleaved: the library writes one frame at a time).
//
// Every write to the socket is made under mu: a write while not corked (a
// close frame or a ping from another goroutine) goes out at once, after
// anything held.
type corkedConn struct {
	net.Conn
	mu     sync.Mutex
	corked bool
	held   []byte
	writes *atomic.Int64 // the server's count of writes to its streams' sockets
}

// Write holds p while corked, and writes it otherwise.
func (c *corkedConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.corked {
		c.held = append(c.held, p...)
		return len(p), nil
	}
	c.writes.Add(1)
	return c.Conn.Write(p)
}

// cork holds every write until flush.
func (c *corkedConn) cork() {
	c.mu.Lock()
	c.corked = true
	c.mu.Unlock()
}

// heldBytes is how much a flush would write.
func (c *corkedConn) heldBytes() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.held)
}

// flush writes what was held in one write, which must finish within wait,
// and uncorks. It reports whether it wrote anything. The buffer is kept for
// the next batch unless it grew past corkLimit's double (a resync's burst).
func (c *corkedConn) flush(wait time.Duration) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.corked = false
	if len(c.held) == 0 {
		return false, nil
	}
	held := c.held
	c.held = c.held[:0]
	if cap(c.held) > 2*corkLimit {
		c.held = nil
	}
	if err := c.Conn.SetWriteDeadline(time.Now().Add(wait)); err != nil {
		return false, err
	}
	c.writes.Add(1)
	_, err := c.Conn.Write(held)
	if derr := c.Conn.SetWriteDeadline(time.Time{}); err == nil && derr != nil {
		err = derr
	}
	return true, err
}

// corkingWriter hands coder/websocket a corkedConn when it hijacks the
// connection of the stream's upgrade.
type corkingWriter struct {
	http.ResponseWriter
	conn *corkedConn
}

// Hijack takes the connection over through the chain of writers (the
// server's middleware unwrap to the net/http one) and wraps it. The library
// writes through the returned bufio.Writer after resetting it onto the
// returned connection, so every frame goes through the corkedConn.
func (w corkingWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, brw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	if brw.Writer.Buffered() > 0 {
		if err := brw.Writer.Flush(); err != nil {
			_ = conn.Close()
			return nil, nil, errors.Join(errors.New("table: flushing the upgrade's answer"), err)
		}
	}
	w.conn.Conn = conn
	brw.Writer.Reset(w.conn)
	return w.conn, brw, nil
}
