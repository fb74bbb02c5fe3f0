package table

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// corkLimit is how many bytes a corked stream holds before it writes them
// anyway: a stream that is never idle still writes at least every 16 KiB.
const corkLimit = 16 << 10

// The buffers of a stream's connection. The library writes each frame
// through the writer (a frame larger than it goes past it, into the batch)
// and reads the client's few, small messages through the reader; net/http's
// 4 KiB each would be most of what an idle player holds.
const (
	streamWriteBuffer = 256 // a control frame (at most 131 bytes) fits
	streamReadBuffer  = 512
)

// heldPool holds the batches' buffers between flushes: a stream holds one
// only while its forward loop has messages in hand, so an idle player holds
// none.
var heldPool = sync.Pool{New: func() any { b := make([]byte, 0, 4<<10); return &b }}

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
	held   *[]byte       // the batch, from heldPool; nil when empty
	writes *atomic.Int64 // the server's count of writes to its streams' sockets
}

// Write holds p while corked, and writes it otherwise.
func (c *corkedConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.corked {
		if c.held == nil {
			c.held = heldPool.Get().(*[]byte)
		}
		*c.held = append(*c.held, p...)
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
	if c.held == nil {
		return 0
	}
	return len(*c.held)
}

// flush writes what was held in one write, which must finish within wait,
// and uncorks. It reports whether it wrote anything. The buffer goes back
// to heldPool unless it grew past corkLimit's double (a resync's burst).
func (c *corkedConn) flush(wait time.Duration) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.corked = false
	held := c.held
	if held == nil {
		return false, nil
	}
	c.held = nil
	defer func() {
		if cap(*held) <= 2*corkLimit {
			*held = (*held)[:0]
			heldPool.Put(held)
		}
	}()
	if err := c.Conn.SetWriteDeadline(time.Now().Add(wait)); err != nil {
		return false, err
	}
	c.writes.Add(1)
	_, err := c.Conn.Write(*held)
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
// reads and writes through the returned bufio.ReadWriter: its writer writes
// to the corkedConn, so every frame goes through it, and both are the small
// buffers above. What the client sent after the upgrade request (its hello,
// at once) is carried over into the new reader.
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
	sent, _ := brw.Reader.Peek(brw.Reader.Buffered())
	sent = bytes.Clone(sent)
	r := bufio.NewReaderSize(io.MultiReader(bytes.NewReader(sent), w.conn), max(streamReadBuffer, len(sent)))
	if len(sent) > 0 {
		// Buffered in r, where the library looks for what was read ahead.
		if _, err := r.Peek(len(sent)); err != nil {
			_ = conn.Close()
			return nil, nil, errors.Join(errors.New("table: carrying over the bytes sent after the upgrade"), err)
		}
	}
	return w.conn, bufio.NewReadWriter(r, bufio.NewWriterSize(w.conn, streamWriteBuffer)), nil
}
