package replica_test

import (
	"errors"
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
)

// link is one replica's TCP path to a server (PostgreSQL or NATS), which a
// test holds or cuts as the network and the operating system do to a
// replica:
//   - hold: the bytes the replica or the server sends wait in the link, in
//     order, and nothing is lost; release delivers them. That is a replica
//     paused (SIGSTOP, a long GC, a VM stolen from its host) or partitioned
//     and healed, as the server sees it: a statement sent before the pause
//     arrives after it, with whatever the world did in between.
//   - cut: every connection is reset and no new one opens. That is a replica
//     killed, as the server sees it.
type link struct {
	ln     net.Listener
	target string

	mu      sync.Mutex
	held    bool
	release chan struct{} // closed when the link is released or cut
	cutOff  bool
	conns   map[net.Conn]struct{}
	wg      sync.WaitGroup
}

// newLink listens on a local port and forwards each connection to target
// (host:port).
func newLink(t testing.TB, target string) *link {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("link to %s: %v", target, err)
	}
	l := &link{ln: ln, target: target, release: make(chan struct{}), conns: map[net.Conn]struct{}{}}
	close(l.release) // not held
	l.wg.Add(1)
	go l.accept()
	t.Cleanup(l.cut)
	return l
}

// linkURL is raw (a DSN or a NATS URL) with its host and port replaced by a
// new link's, which forwards to them.
func linkURL(t testing.TB, raw string) (*link, string) {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("link to %q: %v", raw, err)
	}
	l := newLink(t, u.Host)
	u.Host = l.ln.Addr().String()
	return l, u.String()
}

func (l *link) accept() {
	defer l.wg.Done()
	for {
		in, err := l.ln.Accept()
		if err != nil {
			return
		}
		out, err := net.Dial("tcp", l.target)
		if err != nil {
			_ = in.Close()
			continue
		}
		l.mu.Lock()
		if l.cutOff {
			l.mu.Unlock()
			_ = in.Close()
			_ = out.Close()
			return
		}
		l.conns[in], l.conns[out] = struct{}{}, struct{}{}
		l.mu.Unlock()
		l.wg.Add(2)
		go l.pipe(out, in)
		go l.pipe(in, out)
	}
}

// pipe copies src to dst, each chunk waiting while the link is held.
func (l *link) pipe(dst, src net.Conn) {
	defer l.wg.Done()
	defer func() { _ = dst.Close(); _ = src.Close() }()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if !l.wait() {
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				return
			}
			if tc, ok := dst.(*net.TCPConn); ok {
				_ = tc.CloseWrite()
			}
			return
		}
	}
}

// wait blocks while the link is held; false once it is cut.
func (l *link) wait() bool {
	l.mu.Lock()
	release, cut := l.release, l.cutOff
	l.mu.Unlock()
	if cut {
		return false
	}
	<-release
	l.mu.Lock()
	defer l.mu.Unlock()
	return !l.cutOff
}

// hold makes the bytes wait from now on.
func (l *link) hold() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.held && !l.cutOff {
		l.held, l.release = true, make(chan struct{})
	}
}

// unhold delivers what waits, and lets bytes through again.
func (l *link) unhold() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held {
		l.held = false
		close(l.release)
	}
}

// cut resets every connection and refuses new ones, for good.
func (l *link) cut() {
	l.mu.Lock()
	if l.cutOff {
		l.mu.Unlock()
		return
	}
	l.cutOff = true
	if l.held {
		l.held = false
		close(l.release)
	}
	for c := range l.conns {
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetLinger(0) // a reset, as a killed process's sockets
		}
		_ = c.Close()
	}
	l.mu.Unlock()
	_ = l.ln.Close()
	l.wg.Wait()
}
