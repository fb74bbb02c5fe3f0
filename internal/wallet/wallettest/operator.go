// Package wallettest is a fake operator wallet for the tests of the game's
// wallet calls: package wallet's bet loop and package movements' queue. It
// validates every request against api/wallet.v1.yaml, records every attempt,
// answers each with a function of the attempt, and counts the attempts of one
// transaction_id that were ever in flight at once.
//
// It is imported by tests only; it must never be imported by the game.
package wallettest

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/internal/apitest"
	"github.com/crashstudio/crashgame/internal/wallet"
)

// The fake operator's identity and its player's.
const (
	OperatorID = "mq-operator"
	Token      = "tok-3f9a1c77e0b24d5a8c6e"
	Player     = "mq-player-1"
)

// Attempt is one request as the fake operator received it.
type Attempt struct {
	Route     string
	TxID      string
	RequestID string
	Timestamp int64
	Body      map[string]any
	Raw       []byte
	N         int // this attempt's number for its transaction_id, from 1
}

// Answer is the fake operator's answer: HTTP status and body.
type Answer struct {
	Status int
	Body   string
}

// Answers of every kind the tests need.
var (
	OK        = Answer{200, `{"status":"ok","balance":5000,"currency":"BRL","transaction_id":"op-77"}`}
	Error500  = Answer{500, `{"status":"error","error_code":"INTERNAL_ERROR"}`}
	Plain503  = Answer{503, `upstream unavailable`}
	Win404    = Answer{404, `{"status":"error","error_code":"BET_NOT_FOUND"}`}
	Refusal   = Answer{200, `{"status":"error","error_code":"BET_NOT_FOUND","error_message":"no such bet"}`}
	NoFunds   = Answer{402, `{"status":"error","error_code":"INSUFFICIENT_FUNDS","balance":120}`}
	discarded = slog.New(slog.DiscardHandler)
)

// Operator is a fake operator wallet. Delay, when set before the first
// request, holds every answer that long.
type Operator struct {
	Delay time.Duration

	t        testing.TB
	srv      *httptest.Server
	answer   func(a Attempt) Answer
	mu       sync.Mutex
	attempts []Attempt
	perTx    map[string]int
	inFlight map[string]int
	overlaps atomic.Int64 // attempts that started while another of the same transaction_id was in flight
	first    chan struct{}
	once     sync.Once
}

// New starts a fake operator that answers each attempt with answer(attempt),
// stopped when t ends.
func New(t testing.TB, answer func(a Attempt) Answer) *Operator {
	t.Helper()
	op := &Operator{t: t, answer: answer, perTx: map[string]int{}, inFlight: map[string]int{}, first: make(chan struct{})}
	v := apitest.New(t, "wallet.v1.yaml")
	op.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, err := io.ReadAll(r.Body)
		if err != nil {
			t.Errorf("fake operator: read body: %v", err)
			return
		}
		if err := v.Request(r, raw); err != nil {
			t.Errorf("request %s breaks wallet.v1.yaml: %v", r.URL.Path, err)
		}
		a := op.record(r.URL.Path, raw)
		if op.Delay > 0 {
			time.Sleep(op.Delay)
		}
		ans := op.answer(a)
		op.mu.Lock()
		op.inFlight[a.TxID]--
		op.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(ans.Status)
		_, _ = io.WriteString(w, ans.Body)
	}))
	t.Cleanup(op.srv.Close)
	return op
}

// record notes an attempt as it arrives and returns it.
func (op *Operator) record(route string, raw []byte) Attempt {
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		op.t.Errorf("fake operator: body not JSON: %v", err)
	}
	a := Attempt{Route: route, Raw: raw, Body: body}
	a.TxID, _ = body["transaction_id"].(string)
	a.RequestID, _ = body["request_id"].(string)
	if ts, ok := body["timestamp"].(float64); ok {
		a.Timestamp = int64(ts)
	}
	op.mu.Lock()
	op.perTx[a.TxID]++
	a.N = op.perTx[a.TxID]
	op.inFlight[a.TxID]++
	if op.inFlight[a.TxID] > 1 {
		op.overlaps.Add(1)
	}
	op.attempts = append(op.attempts, a)
	op.mu.Unlock()
	op.once.Do(func() { close(op.first) })
	return a
}

// URL is the wallet_url of the fake operator.
func (op *Operator) URL() string { return op.srv.URL }

// First is closed when the first attempt arrives.
func (op *Operator) First() <-chan struct{} { return op.first }

// Overlaps is how many attempts started while another of the same
// transaction_id was in flight.
func (op *Operator) Overlaps() int64 { return op.overlaps.Load() }

// ByTx returns the attempts of one transaction_id, in arrival order.
func (op *Operator) ByTx(txID string) []Attempt {
	op.mu.Lock()
	defer op.mu.Unlock()
	var out []Attempt
	for _, a := range op.attempts {
		if a.TxID == txID {
			out = append(out, a)
		}
	}
	return out
}

// Count is how many attempts arrived.
func (op *Operator) Count() int {
	op.mu.Lock()
	defer op.mu.Unlock()
	return len(op.attempts)
}

// Counts is how many attempts arrived per transaction_id.
func (op *Operator) Counts() map[string]int {
	op.mu.Lock()
	defer op.mu.Unlock()
	out := make(map[string]int, len(op.perTx))
	for k, v := range op.perTx {
		out[k] = v
	}
	return out
}

// Sequence answers the n-th attempt of every transaction_id with seq[n-1],
// and the last entry for every later attempt.
func Sequence(seq ...Answer) func(Attempt) Answer {
	return func(a Attempt) Answer { return seq[min(a.N, len(seq))-1] }
}

// Client returns a wallet client of the fake operator, logging nowhere.
func Client(t testing.TB, op *Operator, opts ...wallet.Option) *wallet.Client {
	t.Helper()
	cfg := wallet.Settings{Operator: OperatorID, Secret: "mq-secret-0123456789abcdef",
		APIKey: "mq_k3y0a9z1_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdefg", URL: op.srv.URL}
	c, err := wallet.NewClient(cfg, append([]wallet.Option{wallet.WithLogger(discarded)}, opts...)...)
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	return c
}

// StripEnvelope returns a body without the per-attempt fields.
func StripEnvelope(t testing.TB, raw []byte) string {
	t.Helper()
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatalf("body: %v", err)
	}
	delete(body, "request_id")
	delete(body, "timestamp")
	out, err := json.Marshal(body)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	return string(out)
}

// ContainsToken reports whether s holds the player's token.
func ContainsToken(s string) bool { return strings.Contains(s, Token) }
