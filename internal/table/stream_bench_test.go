package table_test

import (
	"net"
	"net/http/httptest"
	"runtime"
	"testing"
	"time"
)

// BenchmarkStreamHeld measures what one connected player costs the server
// at rest: its session and its open stream (the connection, its buffers, the
// stream's goroutines and their stacks), each iteration one more player. It
// reports the live heap and the goroutine stacks per player after a
// collection, and the goroutines per player; time is not the point. The
// clients are bare TCP connections in the same process (a few hundred bytes
// each, counted in the heap figure). Run it with a fixed count, e.g.
// -benchtime 2000x.
func BenchmarkStreamHeld(b *testing.B) {
	e := newEnv(b, envOptions{rate: 1e6, burst: 1e6, addressRate: 1e6, addressBurst: 1e6, streamRate: 1e6, streamBurst: 1e6})
	srv := httptest.NewServer(e.handler)
	b.Cleanup(srv.Close)
	conns := make([]net.Conn, 0, b.N)

	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	goroutines := runtime.NumGoroutine()
	for b.Loop() {
		c, _ := rawStream(b, srv, e.openDemo(b))
		conns = append(conns, c)
	}
	// The streams' first batches are written and their loops wait.
	time.Sleep(200 * time.Millisecond)
	// Twice: a sync.Pool's buffers go at the second collection after their
	// last use, as they do between the bursts of a running server.
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&after)
	n := float64(len(conns))
	b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/n, "heap-B/player")
	b.ReportMetric(float64(int64(after.StackInuse)-int64(before.StackInuse))/n, "stack-B/player")
	b.ReportMetric(float64(runtime.NumGoroutine()-goroutines)/n, "goroutines/player")
	b.ReportMetric(0, "ns/op")
}
