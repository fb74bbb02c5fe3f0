//go:build integration

package suite

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/crashstudio/crashgame/internal/apitest"
)

// streamSchemas validates the live stream's messages as the stream's
// AsyncAPI document declares them (api/table-stream.asyncapi.yaml, each
// payload in its declared schema format): what the server sends, and what the
// client sends, by type.
type streamSchemas struct {
	send, receive map[string]apitest.StreamMessage
}

func loadStreamSchemas(t testing.TB) *streamSchemas {
	t.Helper()
	return &streamSchemas{send: apitest.StreamMessages(t, "send"), receive: apitest.StreamMessages(t, "receive")}
}

// validateMessage checks raw against the message of its type in msgs.
func validateMessage(msgs map[string]apitest.StreamMessage, raw []byte) error {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return err
	}
	obj, _ := v.(map[string]any)
	m, ok := msgs[fmt.Sprint(obj["type"])]
	if !ok {
		return fmt.Errorf("the stream document declares no message of type %v", obj["type"])
	}
	return m.Validate(v)
}

// Event is one stream message from the server.
type Event struct {
	Type string          `json:"type"`
	Raw  json.RawMessage `json:"-"`
	// a few fields the scenarios read
	RoundID string `json:"round_id"`
	Balance int64  `json:"balance"`
	Bet     *Bet   `json:"bet"`
}

// Stream is an open live stream of a session.
type Stream struct {
	t      testing.TB
	conn   *websocket.Conn
	cancel context.CancelFunc

	mu     sync.Mutex
	events []Event
	closed error
	notify chan struct{}
}

// OpenStream dials /api/v1/stream with the table page's Origin and sends hello.
// Every event received is validated against the stream's AsyncAPI document.
func (s *Session) OpenStream(t testing.TB) *Stream {
	t.Helper()
	st, status, err := s.TryOpenStream(t)
	if err != nil {
		t.Fatalf("suite: open stream (HTTP %d): %v", status, err)
	}
	return st
}

// TryOpenStream is OpenStream for a scenario where the dial may fail (a
// replica stopping, a rate limit): it returns the HTTP status of a refused
// upgrade (0 without an answer) and the error instead of failing t.
func (s *Session) TryOpenStream(t testing.TB) (*Stream, int, error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	dctx, dcancel := context.WithTimeout(ctx, 10*time.Second)
	defer dcancel()
	wsURL := "ws" + strings.TrimPrefix(s.url(), "http") + "/api/v1/stream"
	conn, resp, err := websocket.Dial(dctx, wsURL, &websocket.DialOptions{
		HTTPHeader: http.Header{"Origin": []string{baseURL}, "X-Forwarded-For": []string{s.From}},
	})
	if err != nil {
		cancel()
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		return nil, status, err
	}
	st := &Stream{t: t, conn: conn, cancel: cancel, notify: make(chan struct{}, 1)}
	hello, _ := json.Marshal(map[string]string{"type": "hello", "session": s.ID})
	if err := validateMessage(s.e.stream.receive, hello); err != nil {
		t.Errorf("suite: the suite's hello breaks the stream document: %v", err)
	}
	if err := conn.Write(ctx, websocket.MessageText, hello); err != nil {
		st.Close()
		return nil, 0, fmt.Errorf("stream hello: %w", err)
	}
	go st.read(ctx, s.e.stream)
	t.Cleanup(st.drop)
	return st, http.StatusSwitchingProtocols, nil
}

func (st *Stream) read(ctx context.Context, schemas *streamSchemas) {
	for {
		_, raw, err := st.conn.Read(ctx)
		st.mu.Lock()
		if err != nil {
			st.closed = err
			st.mu.Unlock()
			st.wake()
			return
		}
		var ev Event
		if jerr := json.Unmarshal(raw, &ev); jerr != nil {
			st.t.Errorf("stream: not JSON: %s", raw)
		}
		if verr := validateMessage(schemas.send, raw); verr != nil {
			st.t.Errorf("stream: event breaks the stream document (api/table-stream.asyncapi.yaml): %v\n%s", verr, raw)
		}
		ev.Raw = raw
		st.events = append(st.events, ev)
		st.mu.Unlock()
		st.wake()
	}
}

func (st *Stream) wake() {
	select {
	case st.notify <- struct{}{}:
	default:
	}
}

// Events returns what arrived so far.
func (st *Stream) Events() []Event {
	st.mu.Lock()
	defer st.mu.Unlock()
	return append([]Event(nil), st.events...)
}

// Await waits for the first event from index from on that satisfies ok, and
// returns its index.
func (st *Stream) Await(t testing.TB, from int, within time.Duration, what string, ok func(Event) bool) int {
	t.Helper()
	deadline := time.After(within)
	for {
		st.mu.Lock()
		for i := from; i < len(st.events); i++ {
			if ok(st.events[i]) {
				st.mu.Unlock()
				return i
			}
		}
		closed := st.closed
		st.mu.Unlock()
		if closed != nil {
			t.Fatalf("stream: closed before %s: %v", what, closed)
		}
		select {
		case <-st.notify:
		case <-deadline:
			t.Fatalf("stream: no %s within %s", what, within)
		}
	}
}

// Closed is why the stream ended (its close status is
// websocket.CloseStatus(err)), or nil while it is open.
func (st *Stream) Closed() error {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.closed
}

// Close closes the stream normally; one the game already closed is let go
// at once (no closing handshake to wait for).
func (st *Stream) Close() {
	if st.Closed() != nil {
		_ = st.conn.CloseNow()
	} else {
		_ = st.conn.Close(websocket.StatusNormalClosure, "")
	}
	st.cancel()
}

// drop lets the stream go without a closing handshake: the test's cleanup,
// which may close hundreds of streams of a failed test at once.
func (st *Stream) drop() {
	_ = st.conn.CloseNow()
	st.cancel()
}
