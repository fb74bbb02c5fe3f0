package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// A player's stream that the server closes with 1001 (a replica going away
// in a rolling deploy), or that falls silent (a paused replica), is counted
// by its cause and reopened through the same address, each time with a new
// hello, until the run ends; the first opening is the only one reported to
// the set-up.
func TestPlayerReopensStream(t *testing.T) {
	t.Parallel()
	hellos := make(chan int, 8)
	// Counted atomically: the silent connection's handler is still in its
	// Read when the player opens the next one (the race detector cannot see
	// the network ordering them).
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		if _, _, err := c.Read(r.Context()); err != nil { // the hello
			return
		}
		k := int(n.Add(1))
		hellos <- k
		switch k {
		case 1:
			_ = c.Close(websocket.StatusGoingAway, "shutting down")
		default: // silent until the player gives up on it
			_, _, _ = c.Read(context.WithoutCancel(r.Context()))
		}
	}))
	t.Cleanup(srv.Close)

	lg := &loadgen{
		// silence is the player's own clock: a close that a starved player
		// reads after it counts as a silent stream, so it leaves room.
		o:   &options{url: srv.URL, silence: time.Second},
		rec: &recorder{start: time.Now(), by: map[string][]sample{}}, dropCodes: map[string]int{}, failCauses: map[string]int{},
		crashed: map[string]bool{}, roundTimes: map[string]*roundStat{},
	}
	p := &player{session: "ps_test", g: newGroup(0, 1, true, "", ""), lg: lg}
	ctx, cancel := context.WithCancel(t.Context())
	opened := make(chan error, 1)
	done := make(chan struct{})
	go func() { defer close(done); p.play(ctx, opened) }()
	if err := <-opened; err != nil {
		t.Fatalf("first opening: %v", err)
	}
	for want := 1; want <= 3; want++ {
		select {
		case got := <-hellos:
			if got != want {
				t.Fatalf("hello %d, want %d", got, want)
			}
		case <-time.After(time.Minute):
			t.Fatalf("no hello %d within a minute: the stream was not reopened", want)
		}
	}
	cancel()
	<-done
	lg.dropMu.Lock()
	codes := maps.Clone(lg.dropCodes)
	lg.dropMu.Unlock()
	if codes["1001"] != 1 || codes[causeSilent] != 1 || len(codes) != 2 {
		t.Errorf("drops by cause %v, want one 1001 and one %s", codes, causeSilent)
	}
	if got := lg.reopenedN.Load(); got != 2 {
		t.Errorf("reopened %d streams, want 2", got)
	}
	if len(opened) != 0 {
		t.Error("a reopening was reported as a first opening")
	}
	// Each reconnection is timed, from its drop to its new stream open;
	// the first opening is not a reconnection.
	if r := summarise(lg.rec.get(kindReconnect)); r.N != 2 || r.Outcomes["reopened"] != 2 {
		t.Errorf("reconnections timed %d (%v), want the 2 reopenings", r.N, r.Outcomes)
	}
}

// The summary's refusals are every answer but the success, by status and
// code, transport errors included.
func TestRefusals(t *testing.T) {
	t.Parallel()
	got := refusals(map[string]int{"201": 40, "409 BETTING_CLOSED": 3, "503 TABLE_UNAVAILABLE": 2, "error": 1}, "201")
	want := map[string]int{"409 BETTING_CLOSED": 3, "503 TABLE_UNAVAILABLE": 2, "error": 1}
	if !maps.Equal(got, want) {
		t.Fatalf("refusals = %v, want %v", got, want)
	}
}

// A failed reopening is counted by what stopped it, so a run that cannot get
// its players back says whether the server refused them (an HTTP status) or
// the connection never reached it.
func TestFailureCause(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		status int
		err    error
		want   string
	}{
		{http.StatusTooManyRequests, errors.New("expected handshake response status code 101 but got 429"), "429"},
		{http.StatusServiceUnavailable, errors.New("got 503"), "503"},
		{0, fmt.Errorf("dial: %w", context.DeadlineExceeded), "timeout"},
		{0, &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}, "refused"},
		{0, &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}, "reset"},
		{0, &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.EADDRNOTAVAIL)}, "no local port"},
		{0, &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("socket", syscall.EMFILE)}, "no file descriptor"},
		{0, fmt.Errorf("failed to WebSocket dial: %w", io.EOF), "eof"},
		{0, &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("no route")}, "other: dial no route"},
		{0, errors.New("something else"), "other: something else"},
	} {
		if got := failureCause(tt.status, tt.err); got != tt.want {
			t.Errorf("failureCause(%d, %v) = %q, want %q", tt.status, tt.err, got, tt.want)
		}
	}
}

// --connect sends the game's connections to another address (the balancer
// on the compose network) while the requests still name the game's public
// host, which its Origin check and launch URLs use; other hosts are dialled
// as asked.
func TestConnectTo(t *testing.T) {
	t.Parallel()
	hosts := make(chan string, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hosts <- r.Host }))
	t.Cleanup(srv.Close)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hosts <- "other " + r.Host }))
	t.Cleanup(other.Close)
	const public = "http://games.example.test:8080"
	dial := connectTo(&net.Dialer{Timeout: time.Second}, hostPort(public), strings.TrimPrefix(srv.URL, "http://"))
	hc := &http.Client{Transport: &http.Transport{DialContext: dial}}
	for _, tt := range []struct{ url, want string }{
		{public + "/api/v1/stream", "games.example.test:8080"},
		{other.URL + "/admin", "other " + strings.TrimPrefix(other.URL, "http://")},
	} {
		resp, err := hc.Get(tt.url)
		if err != nil {
			t.Fatalf("GET %s: %v", tt.url, err)
		}
		resp.Body.Close()
		if got := <-hosts; got != tt.want {
			t.Errorf("GET %s reached %q, want %q", tt.url, got, tt.want)
		}
	}
	if got := hostPort("https://games.example.test/x"); got != "games.example.test:443" {
		t.Errorf("hostPort of an https URL without a port = %q", got)
	}
}
