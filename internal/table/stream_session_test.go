package table_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	gt "github.com/crashstudio/crashgame/gen/table"
	"github.com/crashstudio/crashgame/internal/sessions"
	"github.com/crashstudio/crashgame/internal/tickets"
)

var errDatabaseAway = errors.New("database away")

// failingSessions is the sessions' repository of a database that stops
// answering while fail is set: its reads of a session fail.
type failingSessions struct {
	sessions.Repo
	fail   atomic.Bool
	failed atomic.Int64 // reads refused
}

func (f *failingSessions) SessionByHash(ctx context.Context, hash []byte) (sessions.Session, error) {
	if f.fail.Load() {
		f.failed.Add(1)
		return sessions.Session{}, errDatabaseAway
	}
	return f.Repo.SessionByHash(ctx, hash)
}

func (f *failingSessions) SessionHasBets(ctx context.Context, hash []byte, statuses ...string) (bool, error) {
	if f.fail.Load() {
		f.failed.Add(1)
		return false, errDatabaseAway
	}
	return f.Repo.SessionHasBets(ctx, hash, statuses...)
}

// A session the server cannot read because its database does not answer is
// not an expired one: 4401 tells the page never to reconnect and to send
// the player back to the casino. At the hello the stream gets SERVER_ERROR
// and closes with 1011, after which the page reconnects with a back-off and
// keeps its session; at the session's idle deadline the stream stays open
// and reads the session again later, and a session inactive indeed then
// ends with 4408.
func TestStreamSessionUnreadIsNotExpired(t *testing.T) {
	t.Parallel()
	var skew atomic.Int64 // how far the sessions' clock runs ahead
	repo := &failingSessions{}
	e := newEnv(t, envOptions{
		sessionsNow:  func() time.Time { return time.Now().Add(time.Duration(skew.Load())) },
		sessionsRepo: func(r sessions.Repo) sessions.Repo { repo.Repo = r; return repo },
	})
	srv := httptest.NewServer(e.handler)
	t.Cleanup(srv.Close)

	// The hello: a session not yet read in this process, read while the
	// database does not answer.
	repo.fail.Store(true)
	c := e.dial(t, srv)
	c.send(map[string]any{"type": "hello", "session": "ps_" + strings.Repeat("B", 43)})
	code, got := c.closedAfterError()
	if code != websocket.StatusInternalError {
		t.Fatalf("hello while the session cannot be read: closed with %d, want %d", code, websocket.StatusInternalError)
	}
	if got != gt.ErrorCodeServerError {
		t.Fatalf("error event %q, want %q", got, gt.ErrorCodeServerError)
	}
	repo.fail.Store(false)

	// The idle deadline: a session with a 3-minute inactivity timeout whose
	// deadline comes a moment after its stream opens.
	sid := e.ticket(t, tickets.Session{Token: "tok-0123456789abcdef", PlayerID: "p-1", Currency: "BRL", Language: "en",
		Controls: tickets.Controls{InactivityMinutes: 3}})
	rec := e.call(t, "POST", "/api/v1/sessions", "", map[string]any{"sid": sid})
	if rec.Code != http.StatusCreated {
		t.Fatalf("create session: %d %s", rec.Code, rec.Body)
	}
	session := decode[map[string]any](t, rec)["session"].(string)
	// The hello reads the session this process holds, before its deadline:
	// nothing of it reaches the database.
	c = e.dial(t, srv)
	repo.failed.Store(0)
	repo.fail.Store(true)
	// 8 s before the deadline: room for the hello on a loaded machine
	// (with 3 s, a starved run read the session past its deadline).
	skew.Store(int64(3*time.Minute - 8*time.Second))
	c.send(map[string]any{"type": "hello", "session": session})
	c.until("bets", nil)
	for deadline := time.Now().Add(30 * time.Second); repo.failed.Load() == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) { // a guard, not a speed check
			t.Fatal("the stream never read the session again at its idle deadline")
		}
	}
	c.send(map[string]any{"type": "ping", "t": 7})
	c.until("pong", func(ev map[string]any) bool { return ev["t"] == float64(7) })

	// The database answers again: the next read finds the session inactive.
	repo.fail.Store(false)
	for {
		ev, err := c.next()
		if err != nil {
			if code := websocket.CloseStatus(err); code != 4408 {
				t.Fatalf("after the retried read: closed with %d (%v), want 4408", code, err)
			}
			break
		}
		if ev["type"] == "error" && ev["error_code"] != string(gt.ErrorCodeSessionInactive) {
			t.Fatalf("error event %v, want %s", ev, gt.ErrorCodeSessionInactive)
		}
	}
}
