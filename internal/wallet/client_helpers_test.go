package wallet

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/internal/apitest"
)

const (
	testOperator = "acme-bet"
	testSecret   = "s3cret-0123456789abcdef-wallet"
	testKey      = "acme_k3y0a9z1_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdefg"
	testToken    = "7d1f0c9a4e3b4b6f9a2c5e8d1b7f3a60"
	testPlayer   = "player-100234"
)

// received is one request as the fake operator read it off the wire.
type received struct {
	Path   string
	Header http.Header
	Body   []byte
}

// fakeOperator plays the operator's wallet: it validates every request against
// api/wallet.v1.yaml, records it, and answers with reply.
type fakeOperator struct {
	t     *testing.T
	srv   *httptest.Server
	hits  atomic.Int64
	mu    sync.Mutex
	reqs  []received
	reply atomic.Pointer[func(w http.ResponseWriter, r *http.Request, body []byte)]
}

func newFakeOperator(t *testing.T, reply func(w http.ResponseWriter, r *http.Request, body []byte)) *fakeOperator {
	t.Helper()
	f := &fakeOperator{t: t}
	f.setReply(reply)
	v := apitest.New(t, "wallet.v1.yaml")
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.hits.Add(1)
		body, err := io.ReadAll(r.Body)
		if err != nil {
			t.Errorf("fake operator: reading body: %v", err)
			return
		}
		if err := v.Request(r, body); err != nil {
			t.Errorf("request %s breaks wallet.v1.yaml: %v\nbody: %s", r.URL.Path, err, body)
		}
		f.mu.Lock()
		f.reqs = append(f.reqs, received{Path: r.URL.Path, Header: r.Header.Clone(), Body: body})
		f.mu.Unlock()
		(*f.reply.Load())(w, r, body)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeOperator) setReply(reply func(w http.ResponseWriter, r *http.Request, body []byte)) {
	if reply == nil {
		reply = okReply
	}
	f.reply.Store(&reply)
}

func (f *fakeOperator) requests() []received {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]received(nil), f.reqs...)
}

func (f *fakeOperator) last() received {
	f.t.Helper()
	reqs := f.requests()
	if len(reqs) == 0 {
		f.t.Fatal("the fake operator received nothing")
	}
	return reqs[len(reqs)-1]
}

// reply returns a handler with this status, JSON content type and body.
func reply(status int, body string) func(http.ResponseWriter, *http.Request, []byte) {
	return func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

// okReply answers each route with a valid success body.
func okReply(w http.ResponseWriter, r *http.Request, _ []byte) {
	if r.URL.Path == "/balance" {
		reply(200, `{"status":"ok","player_id":"player-100234","player_name":"Joana Silva","balance":152050,"currency":"BRL"}`)(w, r, nil)
		return
	}
	reply(200, `{"status":"ok","balance":151050,"currency":"BRL","transaction_id":"88412093"}`)(w, r, nil)
}

func testOperatorConfig(url string) Settings {
	return Settings{Operator: testOperator, Secret: testSecret, APIKey: testKey, URL: url}
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

func newTestClient(t *testing.T, url string, opts ...Option) *Client {
	t.Helper()
	c, err := NewClient(testOperatorConfig(url), append([]Option{WithLogger(discardLogger())}, opts...)...)
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	return c
}

// steppingClock starts at a fixed instant and moves 7 ms forward on each read.
func steppingClock() func() time.Time {
	var n atomic.Int64
	start := time.UnixMilli(1795000045120)
	return func() time.Time { return start.Add(time.Duration(n.Add(1)) * 7 * time.Millisecond) }
}

func ptr[T any](v T) *T { return &v }

func sampleBet() BetCall {
	return BetCall{PlayerID: testPlayer, Token: testToken, Currency: "BRL", GameID: "crash-classic",
		Amount: 1000, TransactionID: "bet-5c2a1d7e", RoundID: "round-1795000040000"}
}

func sampleWin() WinCall {
	return WinCall{PlayerID: testPlayer, Token: testToken, Currency: "BRL", GameID: "crash-classic",
		Amount: 2350, TransactionID: "win-5c2a1d7e", BetID: "bet-5c2a1d7e", RoundID: "round-1795000040000", Type: WinTypeWin}
}

func sampleRollback() RollbackCall {
	return RollbackCall{PlayerID: testPlayer, Token: testToken, Currency: "BRL", GameID: "crash-classic",
		Amount: 1000, TransactionID: "rb-5c2a1d7e", BetID: "bet-5c2a1d7e", RoundID: "round-1795000040000", Reason: "cancelled_by_player"}
}

func sampleBalance() BalanceCall {
	return BalanceCall{Token: testToken, Currency: "BRL", GameID: "crash-classic"}
}

// call sends one sample call on route.
func call(t *testing.T, c *Client, route Route) (Result, error) {
	t.Helper()
	ctx := t.Context()
	switch route {
	case RouteBalance:
		return c.Balance(ctx, sampleBalance())
	case RouteBet:
		return c.Bet(ctx, sampleBet())
	case RouteWin:
		return c.Win(ctx, sampleWin())
	case RouteRollback:
		return c.Rollback(ctx, sampleRollback())
	}
	t.Fatalf("no route %q", route)
	return Result{}, nil
}

var allRoutes = []Route{RouteBalance, RouteBet, RouteWin, RouteRollback}

// fields decodes a JSON object body into its members.
func fields(t *testing.T, body []byte) map[string]json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	d := json.NewDecoder(bytes.NewReader(body))
	if err := d.Decode(&m); err != nil {
		t.Fatalf("body is not a JSON object: %v: %s", err, body)
	}
	return m
}
