package table_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	gt "github.com/crashstudio/crashgame/gen/table"
	"github.com/crashstudio/crashgame/internal/apitest"
	"github.com/crashstudio/crashgame/internal/engine"
	"github.com/crashstudio/crashgame/internal/table"
)

const origin = "https://games.example.com"

type client struct {
	t    *testing.T
	c    *websocket.Conn
	msgs map[string]apitest.StreamMessage
}

func (e *env) dial(t *testing.T, srv *httptest.Server) *client {
	t.Helper()
	// The messages the server sends, as the stream's AsyncAPI document
	// (api/table-stream.asyncapi.yaml) declares them: read before the dial,
	// since the server's hello timeout starts with the connection (under
	// -race reading them takes seconds on a loaded machine).
	msgs := apitest.StreamMessages(t, "send")
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"/api/v1/stream",
		&websocket.DialOptions{HTTPHeader: http.Header{"Origin": {origin}}})
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { _ = c.CloseNow() })
	return &client{t: t, c: c, msgs: msgs}
}

func (c *client) send(v any) {
	c.t.Helper()
	b, _ := json.Marshal(v)
	if err := c.c.Write(c.t.Context(), websocket.MessageText, b); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// next reads one event, validated against the message of its type in the
// stream's AsyncAPI document.
func (c *client) next() (map[string]any, error) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(c.t.Context(), 15*time.Second)
	defer cancel()
	_, data, err := c.c.Read(ctx)
	if err != nil {
		return nil, err
	}
	var v map[string]any
	if err := json.Unmarshal(data, &v); err != nil {
		c.t.Fatalf("not JSON: %s", data)
	}
	var generic any
	_ = json.Unmarshal(data, &generic)
	m, ok := c.msgs[fmt.Sprint(v["type"])]
	if !ok {
		c.t.Errorf("the server sent a message the stream document does not declare: %s", data)
	} else if err := m.Validate(generic); err != nil {
		c.t.Errorf("a %s message breaks the stream document (%s as %q): %v\n%s", m.Type, m.Schema, m.Format, err, data)
	}
	return v, nil
}

// until reads events until one of type typ (and pred) arrives, for at most
// 20 seconds.
func (c *client) until(typ string, pred func(map[string]any) bool) map[string]any {
	c.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		ev, err := c.next()
		if err != nil {
			c.t.Fatalf("waiting for %s: %v", typ, err)
		}
		if ev["type"] == typ && (pred == nil || pred(ev)) {
			return ev
		}
	}
	c.t.Fatalf("no %s event within 20 s", typ)
	return nil
}

// untilAll reads events until one of each type (matching its predicate) has
// arrived, in any order, for at most 20 seconds.
func (c *client) untilAll(want map[string]func(map[string]any) bool) {
	c.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for len(want) > 0 && time.Now().Before(deadline) {
		ev, err := c.next()
		if err != nil {
			c.t.Fatalf("waiting for %v: %v", want, err)
		}
		typ, _ := ev["type"].(string)
		if pred, ok := want[typ]; ok && pred(ev) {
			delete(want, typ)
		}
	}
	if len(want) > 0 {
		c.t.Fatalf("events not seen within 20 s: %v", want)
	}
}

// closedWith reads until the connection ends and returns its close code.
func (c *client) closedWith() websocket.StatusCode {
	c.t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); {
		if _, err := c.next(); err != nil {
			return websocket.CloseStatus(err)
		}
	}
	c.t.Fatal("the stream did not close within 20 s") // a guard, not a speed check
	return 0
}

// closedAfterError reads until the stream closes and returns its close code
// and the error_code of the last error event before it ("": none).
func (c *client) closedAfterError() (websocket.StatusCode, gt.ErrorCode) {
	c.t.Helper()
	var got gt.ErrorCode
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); {
		ev, err := c.next()
		if err != nil {
			return websocket.CloseStatus(err), got
		}
		if ev["type"] == "error" {
			got = gt.ErrorCode(ev["error_code"].(string))
		}
	}
	c.t.Fatal("the stream did not close within 20 s") // a guard, not a speed check
	return 0, got
}

func TestStream(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{rate: 1000, burst: 1000})
	srv := httptest.NewServer(e.handler)
	t.Cleanup(srv.Close)
	s := e.openDemo(t)

	c := e.dial(t, srv)
	c.send(map[string]any{"type": "hello", "session": s})
	// After a hello: balance, the current phase, the round's board.
	ev, err := c.next()
	if err != nil || ev["type"] != "balance" || ev["balance"] != float64(1_000_000) || ev["currency"] != "BRL" {
		t.Fatalf("first event = %v, %v", ev, err)
	}
	if ev, _ = c.next(); !strings.HasPrefix(ev["type"].(string), "round.") {
		t.Fatalf("second event = %v", ev)
	}
	if ev, _ = c.next(); ev["type"] != "bets" || ev["count"] == nil || ev["cashed_out"] == nil || ev["items"] == nil {
		t.Fatalf("third event = %v, want the round's board", ev)
	}

	// Latency probe.
	c.send(map[string]any{"type": "ping", "t": 123})
	pong := c.until("pong", nil)
	if pong["t"] != float64(123) || pong["server_time"] == nil {
		t.Fatalf("pong = %v", pong)
	}

	// Own bet and balance, then the round's phases.
	e.waitPhase(t, engine.PhaseBetting, 1500*time.Millisecond)
	rec := e.call(t, "POST", "/api/v1/bets", s, map[string]any{"amount": 1000})
	if rec.Code != http.StatusCreated {
		t.Fatalf("bet: %d %s", rec.Code, rec.Body)
	}
	placed := decode[gt.BetPlaced](t, rec)
	// The own bet, the balance and the board that lists it, in whatever
	// order the table's flush interleaves them.
	c.untilAll(map[string]func(map[string]any) bool{
		"bet":     func(ev map[string]any) bool { return ev["bet"].(map[string]any)["bet_id"] == placed.BetId },
		"balance": func(ev map[string]any) bool { return ev["balance"] == float64(999_000) },
		"bets": func(ev map[string]any) bool {
			items, _ := ev["items"].([]any)
			return ev["count"] == float64(1) && len(items) == 1 && items[0].(map[string]any)["bet_id"] == placed.BetId &&
				items[0].(map[string]any)["name"] == "Demo"
		},
	})
	c.until("round.flying", nil)
	c.until("round.crashed", func(ev map[string]any) bool { return ev["hash"] != "" })
	c.until("round.betting", nil)

	// A second stream of the session replaces the first (one stream per session).
	c2 := e.dial(t, srv)
	c2.send(map[string]any{"type": "hello", "session": s})
	c2.until("balance", nil)
	if code := c.closedWith(); code != table.CloseReplaced {
		t.Fatalf("replaced stream closed with %d, want %d", code, table.CloseReplaced)
	}
	// Shutting down closes with 1001.
	e.srv.Close()
	if code := c2.closedWith(); code != websocket.StatusGoingAway {
		t.Fatalf("shutdown closed with %d", code)
	}
}

// No stream goes a heartbeat without a message: when nothing else was
// written for half of it, the server writes a `ping` of the stream document
// (so that a page, which never sees WebSocket ping frames, can tell a live
// server from a silent one). The rounds here leave silences of seconds (a
// betting window with no bet, a flight, the pause), longer than the
// heartbeat of 300 ms; the client's `pong` answer is taken silently and the
// heartbeats go on.
func TestStreamHeartbeat(t *testing.T) {
	t.Parallel()
	const heartbeat = 300 * time.Millisecond
	e := newEnv(t, envOptions{rate: 1000, burst: 1000, heartbeat: heartbeat})
	srv := httptest.NewServer(e.handler)
	t.Cleanup(srv.Close)
	c := e.dial(t, srv)
	c.send(map[string]any{"type": "hello", "session": e.openDemo(t)})
	var (
		pings, others int
		last          int64 // the last ping's t
		worst         time.Duration
		crashes       int
	)
	prev := time.Now()
	// Until the third crash: two whole rounds at least, each with its
	// silences.
	for crashes < 3 {
		ev, err := c.next()
		if err != nil {
			t.Fatalf("reading the stream: %v", err)
		}
		worst = max(worst, time.Since(prev))
		prev = time.Now()
		switch ev["type"] {
		case "error":
			t.Fatalf("error event: %v", ev)
		case "ping":
			ts, ok := ev["t"].(float64)
			if !ok || ts <= 0 {
				t.Fatalf("heartbeat %v: want t, the server's clock in ms", ev)
			}
			if int64(ts) < last {
				t.Fatalf("a heartbeat's t %d, before the last one's %d", int64(ts), last)
			}
			last = int64(ts)
			pings++
			c.send(map[string]any{"type": "pong", "t": last})
		case "round.crashed":
			crashes++
			others++
		default:
			others++
		}
	}
	t.Logf("%d pings and %d other messages over two rounds; the longest silence %v", pings, others, worst)
	if pings == 0 {
		t.Fatal("no heartbeat in two rounds' silences")
	}
	// The promise is one heartbeat; the margin is the scheduler's under
	// -race on a loaded machine, far below the seconds a missing heartbeat
	// leaves silent here.
	if worst > heartbeat+time.Second {
		t.Fatalf("the stream was silent for %v, want at most the heartbeat (%v)", worst, heartbeat)
	}
}

// A stream paced to one board a second (BoardFrames 1, one stream) still
// gets the latest board: bets placed faster than its turns all show on it.
// (TestBoardPacer checks the pacing itself, without a clock.)
func TestStreamBoardPaced(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{rate: 1000, burst: 1000, betting: 6 * time.Second, boardFrames: 1})
	srv := httptest.NewServer(e.handler)
	t.Cleanup(srv.Close)
	s := e.openDemo(t)
	c := e.dial(t, srv)
	c.send(map[string]any{"type": "hello", "session": s})
	c.until("bets", nil)
	e.waitPhase(t, engine.PhaseBetting, 1500*time.Millisecond)
	c.until("round.betting", nil) // a fresh round with its whole window ahead
	for range 3 {
		if rec := e.call(t, "POST", "/api/v1/bets", s, map[string]any{"amount": 1000}); rec.Code != http.StatusCreated {
			t.Fatalf("bet: %d %s", rec.Code, rec.Body)
		}
	}
	c.until("bets", func(ev map[string]any) bool {
		items, _ := ev["items"].([]any)
		return ev["count"] == float64(3) && len(items) == 3
	})
}

func TestStreamBalanceFromWallet(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{rate: 1000, burst: 1000})
	srv := httptest.NewServer(e.handler)
	t.Cleanup(srv.Close)
	s := e.openReal(t)
	c := e.dial(t, srv)
	c.send(map[string]any{"type": "hello", "session": s})
	c.until("bets", nil)
	// Rule BAL-4: a delivered /win's balance reaches the session's stream:
	// the movement queue hands it to the sessions, which publish it.
	e.sessions.OnWalletBalance("acme", "p-1", "BRL", 777)
	c.until("balance", func(ev map[string]any) bool { return ev["balance"] == float64(777) })
}

func TestStreamRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{hello: 3 * time.Second}) // short for the "no hello" case, long enough for a loaded -race run
	srv := httptest.NewServer(e.handler)
	t.Cleanup(srv.Close)

	// Origin and upgrade are checked before any WebSocket: plain answers,
	// validated against the document.
	for _, tc := range []struct {
		origin  string
		upgrade bool
		status  int
		code    gt.ErrorCode
	}{
		{"https://evil.example", true, 403, gt.ErrorCodeOriginNotAllowed},
		{"", true, 403, gt.ErrorCodeOriginNotAllowed},
		{"http://games.example.com", true, 403, gt.ErrorCodeOriginNotAllowed},
		{origin, false, 400, gt.ErrorCodeBadRequest},
	} {
		req := streamRequest(tc.origin, tc.upgrade)
		rec := httptest.NewRecorder()
		e.handler.ServeHTTP(rec, req)
		e.v.Recorded(t, req, rec)
		if got := decode[gt.Error](t, rec); rec.Code != tc.status || got.ErrorCode != tc.code {
			t.Fatalf("origin %q: %d %+v", tc.origin, rec.Code, got)
		}
	}

	cases := []struct {
		name  string
		first any // nil: send nothing
		want  websocket.StatusCode
		event gt.ErrorCode // an error event expected before the close
	}{
		{"no hello", nil, table.CloseNoHello, ""},
		{"not a hello first", map[string]any{"type": "ping", "t": 1}, table.CloseNoHello, ""},
		{"unknown session", map[string]any{"type": "hello", "session": "ps_" + strings.Repeat("A", 43)}, table.CloseSession, gt.ErrorCodeSessionExpired},
		{"garbage", "{", table.CloseNoHello, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := e.dial(t, srv)
			switch f := tc.first.(type) {
			case nil:
			case string:
				_ = c.c.Write(t.Context(), websocket.MessageText, []byte(f))
			default:
				c.send(f)
			}
			code, got := c.closedAfterError()
			if code != tc.want {
				t.Fatalf("closed with %d, want %d", code, tc.want)
			}
			if got != tc.event {
				t.Fatalf("error event %q, want %q", got, tc.event)
			}
		})
	}

	// A message over 1 KiB closes with 1009.
	s := e.openDemo(t)
	c := e.dial(t, srv)
	c.send(map[string]any{"type": "hello", "session": s})
	c.until("bets", nil)
	_ = c.c.Write(t.Context(), websocket.MessageText, []byte(`{"type":"ping","t":1,"x":"`+strings.Repeat("x", 2000)+`"}`))
	if code := c.closedWith(); code != websocket.StatusMessageTooBig {
		t.Fatalf("big message closed with %d", code)
	}
}

// A replica cut off from the cluster refuses a new stream before the
// upgrade, with the document's 503 TABLE_UNAVAILABLE: the page opens it again
// through the load balancer, which sends it elsewhere, instead of opening one
// that the drain would close. Once the replica is back, streams open again.
func TestStreamRefusedWhileCutOff(t *testing.T) {
	t.Parallel()
	var cut atomic.Bool
	cut.Store(true)
	e := newEnv(t, envOptions{rate: 1000, burst: 1000, cutOff: func() error {
		if cut.Load() {
			return errors.New("cut off from the cluster: NATS unreached for 3s")
		}
		return nil
	}})
	srv := httptest.NewServer(e.handler)
	t.Cleanup(srv.Close)
	s := e.openDemo(t)

	req := streamRequest(origin, true)
	rec := httptest.NewRecorder()
	e.handler.ServeHTTP(rec, req)
	e.v.Recorded(t, req, rec)
	if got := decode[gt.Error](t, rec); rec.Code != http.StatusServiceUnavailable || got.ErrorCode != gt.ErrorCodeTableUnavailable {
		t.Fatalf("a stream opened on a cut-off replica: %d %+v, want 503 TABLE_UNAVAILABLE", rec.Code, got)
	}

	cut.Store(false)
	c := e.dial(t, srv)
	c.send(map[string]any{"type": "hello", "session": s})
	c.until("balance", nil)
}

// streamRequest is a GET /api/v1/stream from origin ("" for none), with the
// WebSocket upgrade headers when upgrade is set, for the answers given before
// any upgrade.
func streamRequest(origin string, upgrade bool) *http.Request {
	req := httptest.NewRequest("GET", "/api/v1/stream", nil)
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	if upgrade {
		req.Header.Set("Connection", "Upgrade")
		req.Header.Set("Upgrade", "websocket")
		req.Header.Set("Sec-WebSocket-Version", "13")
		req.Header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
	}
	return req
}

// A client may send its hello in the same packet as the upgrade request
// (nothing in RFC 6455 makes it wait for the 101): the server reads it, and
// answers with the stream's first message, the balance.
func TestStreamHelloSentWithTheUpgrade(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{rate: 1000, burst: 1000})
	srv := httptest.NewServer(e.handler)
	t.Cleanup(srv.Close)
	_, first := rawStream(t, srv, e.openDemo(t))
	if first["type"] != "balance" {
		t.Fatalf("first message %v, want the balance", first)
	}
}

// rawStream opens a stream on a bare TCP connection, the upgrade request and
// the hello in one write, and returns the connection and the stream's first
// message, which must be a text frame.
func rawStream(t testing.TB, srv *httptest.Server, session string) (net.Conn, map[string]any) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	defer func() { _ = conn.SetDeadline(time.Time{}) }()
	hello, _ := json.Marshal(map[string]any{"type": "hello", "session": session})
	if len(hello) > 125 {
		t.Fatalf("hello of %d bytes: the test's frame holds at most 125", len(hello))
	}
	// A client's frame is masked (RFC 6455, 5.3): a text frame, its length,
	// the key, the masked payload.
	key := [4]byte{0x12, 0x34, 0x56, 0x78}
	frame := append([]byte{0x81, 0x80 | byte(len(hello))}, key[:]...)
	for i, b := range hello {
		frame = append(frame, b^key[i%4])
	}
	upgrade := "GET /api/v1/stream HTTP/1.1\r\nHost: " + strings.TrimPrefix(srv.URL, "http://") +
		"\r\nOrigin: " + origin + "\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n" +
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
	if _, err := conn.Write(append([]byte(upgrade), frame...)); err != nil {
		t.Fatal(err)
	}

	r := bufio.NewReader(conn)
	status, err := r.ReadString('\n')
	if err != nil || !strings.HasPrefix(status, "HTTP/1.1 101") {
		t.Fatalf("upgrade answer %q, %v", status, err)
	}
	for line := ""; line != "\r\n"; {
		if line, err = r.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
	}
	// The server's first frame: unmasked text, its length in 7 or 16 bits.
	head := make([]byte, 2)
	if _, err := io.ReadFull(r, head); err != nil {
		t.Fatalf("no frame after the hello sent with the upgrade: %v", err)
	}
	n := int(head[1] & 0x7f)
	if n == 126 {
		ext := make([]byte, 2)
		if _, err := io.ReadFull(r, ext); err != nil {
			t.Fatal(err)
		}
		n = int(ext[0])<<8 | int(ext[1])
	}
	payload := make([]byte, n)
	if _, err := io.ReadFull(r, payload); err != nil {
		t.Fatal(err)
	}
	var first map[string]any
	if head[0] != 0x81 || json.Unmarshal(payload, &first) != nil {
		t.Fatalf("first frame %#x %s, want a text message", head[0], payload)
	}
	return conn, first
}

// A stream runs apart from the HTTP handler that upgraded it: a panic while
// it is served ends that stream with 1011, and the server goes on serving
// others.
func TestStreamPanicEndsOnlyThatStream(t *testing.T) {
	t.Parallel()
	var panics atomic.Bool
	panics.Store(true)
	var e *env
	e = newEnv(t, envOptions{rate: 1000, burst: 1000, tables: func(id string) (table.Game, bool) {
		if panics.Load() {
			panic("a bug in finding the table")
		}
		return e.table, id == "crash"
	}})
	srv := httptest.NewServer(e.handler)
	t.Cleanup(srv.Close)

	c := e.dial(t, srv)
	c.send(map[string]any{"type": "hello", "session": e.openDemo(t)})
	if code := c.closedWith(); code != websocket.StatusInternalError {
		t.Fatalf("stream closed with %d, want %d", code, websocket.StatusInternalError)
	}
	panics.Store(false)
	c2 := e.dial(t, srv)
	c2.send(map[string]any{"type": "hello", "session": e.openDemo(t)})
	c2.until("balance", nil)
}
