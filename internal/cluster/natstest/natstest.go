// Package natstest starts a NATS server inside a test's process (the
// nats-server module, no Docker), for the tests of package cluster and of the
// packages wired to it. A server can be shut down and restarted on the same
// port, so tests can cut every client off and let it reconnect.
//
// It must never be imported by a program: only by tests.
package natstest

import (
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// readyWait bounds the wait for a started server to accept connections.
const readyWait = 10 * time.Second

// Server is one in-process NATS server on 127.0.0.1.
type Server struct {
	tb   testing.TB
	mu   sync.Mutex
	srv  *server.Server // nil while shut down
	port int
}

// Start starts a server on a free port of 127.0.0.1 and shuts it down when
// the test ends. It fails the test when the server does not start.
func Start(tb testing.TB) *Server {
	tb.Helper()
	s := &Server{tb: tb, port: server.RANDOM_PORT}
	s.start()
	tb.Cleanup(s.Shutdown)
	return s
}

// URL is the server's client URL, the same across restarts.
func (s *Server) URL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fmt.Sprintf("nats://127.0.0.1:%d", s.port)
}

// Shutdown stops the server and returns once it is stopped: every client
// connection is cut. Shutting down a stopped server does nothing.
func (s *Server) Shutdown() {
	s.mu.Lock()
	srv := s.srv
	s.srv = nil
	s.mu.Unlock()
	if srv == nil {
		return
	}
	srv.Shutdown()
	srv.WaitForShutdown()
}

// Restart shuts the server down if it runs and starts a new one on the same
// port (clients reconnect to it by themselves). It knows none of the old
// one's subscriptions: clients send theirs again when they reconnect.
func (s *Server) Restart() {
	s.tb.Helper()
	s.Shutdown()
	s.start()
}

func (s *Server) start() {
	s.tb.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	srv, err := server.NewServer(&server.Options{
		Host:   "127.0.0.1",
		Port:   s.port,
		NoLog:  true,
		NoSigs: true,
	})
	if err != nil {
		s.tb.Fatalf("natstest: new server: %v", err)
	}
	srv.Start()
	if !srv.ReadyForConnections(readyWait) {
		srv.Shutdown()
		s.tb.Fatalf("natstest: the server on port %d did not accept connections within %s", s.port, readyWait)
	}
	s.srv = srv
	s.port = srv.Addr().(*net.TCPAddr).Port
}
