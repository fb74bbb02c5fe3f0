package wallet

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/integration/pgtest"
	"github.com/crashstudio/crashgame/internal/apitest"
	"github.com/crashstudio/crashgame/internal/store"
	"github.com/crashstudio/crashgame/internal/store/storetest"
)

// The helpers of the queue, movements and bet-loop tests. Their names start
// with mq so that they never collide with the client tests' helpers.

const (
	mqOperatorID = "mq-operator"
	mqToken      = "tok-3f9a1c77e0b24d5a8c6e"
	mqPlayer     = "mq-player-1"
)

// mqBackend opens a fresh, migrated database of one dialect.
type mqBackend struct {
	name string
	dsn  func(t testing.TB) string
}

var mqBackends = []mqBackend{
	{name: store.DialectSQLite, dsn: func(t testing.TB) string {
		return storetest.SQLite(t)
	}},
	{name: store.DialectPostgres, dsn: pgtest.Start},
}

// mqOpen opens and migrates dsn, closed when t ends.
func mqOpen(t testing.TB, dsn string) *store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), dsn)
	if err != nil {
		t.Fatalf("store.Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if err := s.Migrate(context.Background()); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	return s
}

// mqEachBackend runs f, in parallel, on a fresh database of every dialect.
func mqEachBackend(t *testing.T, f func(t *testing.T, s *store.Store)) {
	t.Helper()
	for _, b := range mqBackends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			f(t, mqOpen(t, b.dsn(t)))
		})
	}
}

// mqClock is a clock that moves only when told.
type mqClock struct{ ms atomic.Int64 }

func newMQClock() *mqClock {
	c := &mqClock{}
	c.ms.Store(1795000000000)
	return c
}

func (c *mqClock) Now() time.Time { return time.UnixMilli(c.ms.Load()) }

// AdvanceTo moves the clock to t if t is later.
func (c *mqClock) AdvanceTo(t time.Time) {
	for {
		cur := c.ms.Load()
		if t.UnixMilli() <= cur || c.ms.CompareAndSwap(cur, t.UnixMilli()) {
			return
		}
	}
}

// mqAttempt is one request as the fake operator received it.
type mqAttempt struct {
	Route     string
	TxID      string
	RequestID string
	Timestamp int64
	Body      map[string]any
	Raw       []byte
	N         int // this attempt's number for its transaction_id, from 1
}

// mqAnswer is the fake operator's answer: HTTP status and body.
type mqAnswer struct {
	Status int
	Body   string
}

var (
	mqOK       = mqAnswer{200, `{"status":"ok","balance":5000,"currency":"BRL","transaction_id":"op-77"}`}
	mq500      = mqAnswer{500, `{"status":"error","error_code":"INTERNAL_ERROR"}`}
	mq503Plain = mqAnswer{503, `upstream unavailable`}
	mq404Win   = mqAnswer{404, `{"status":"error","error_code":"BET_NOT_FOUND"}`}
	mqRefusal  = mqAnswer{200, `{"status":"error","error_code":"BET_NOT_FOUND","error_message":"no such bet"}`}
	mqNoFunds  = mqAnswer{402, `{"status":"error","error_code":"INSUFFICIENT_FUNDS","balance":120}`}
)

// mqOp is a fake operator wallet: it validates every request against
// api/wallet.v1.yaml, records every attempt, answers with answer(attempt),
// and checks that no two attempts of one transaction_id are ever in flight
// at once.
type mqOp struct {
	t        testing.TB
	srv      *httptest.Server
	answer   func(a mqAttempt) mqAnswer
	delay    time.Duration
	mu       sync.Mutex
	attempts []mqAttempt
	perTx    map[string]int
	inFlight map[string]int
	overlaps atomic.Int64 // attempts that started while another of the same transaction_id was in flight
	first    chan struct{}
	once     sync.Once
}

func newMQOp(t testing.TB, answer func(a mqAttempt) mqAnswer) *mqOp {
	t.Helper()
	op := &mqOp{t: t, answer: answer, perTx: map[string]int{}, inFlight: map[string]int{}, first: make(chan struct{})}
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
		var body map[string]any
		if err := json.Unmarshal(raw, &body); err != nil {
			t.Errorf("fake operator: body not JSON: %v", err)
		}
		a := mqAttempt{Route: r.URL.Path, Raw: raw, Body: body}
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

		if op.delay > 0 {
			time.Sleep(op.delay)
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

// byTx returns the attempts of one transaction_id, in arrival order.
func (op *mqOp) byTx(txID string) []mqAttempt {
	op.mu.Lock()
	defer op.mu.Unlock()
	var out []mqAttempt
	for _, a := range op.attempts {
		if a.TxID == txID {
			out = append(out, a)
		}
	}
	return out
}

func (op *mqOp) count() int {
	op.mu.Lock()
	defer op.mu.Unlock()
	return len(op.attempts)
}

func (op *mqOp) counts() map[string]int {
	op.mu.Lock()
	defer op.mu.Unlock()
	out := make(map[string]int, len(op.perTx))
	for k, v := range op.perTx {
		out[k] = v
	}
	return out
}

// mqSequence answers the n-th attempt of every transaction_id with seq[n-1],
// and the last entry for every later attempt.
func mqSequence(seq ...mqAnswer) func(mqAttempt) mqAnswer {
	return func(a mqAttempt) mqAnswer { return seq[min(a.N, len(seq))-1] }
}

// mqClient returns a Client of the fake operator.
func mqClient(t testing.TB, op *mqOp, opts ...Option) *Client {
	t.Helper()
	cfg := Settings{Operator: mqOperatorID, Secret: "mq-secret-0123456789abcdef",
		APIKey: "mq_k3y0a9z1_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdefg", URL: op.srv.URL}
	c, err := NewClient(cfg, append([]Option{WithLogger(mqDiscard())}, opts...)...)
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	return c
}

// mqQueue returns a Queue over s sending through c.
func mqQueue(t testing.TB, s *store.Store, c *Client, opts ...QueueOption) *Queue {
	t.Helper()
	clients := func(op string) (*Client, bool) { return c, op == mqOperatorID }
	q, err := NewQueue(s, NewOutbox(s), clients, append([]QueueOption{WithQueueLogger(mqDiscard()),
		WithPollInterval(20 * time.Millisecond)}, opts...)...)
	if err != nil {
		t.Fatalf("NewQueue: %v", err)
	}
	return q
}

// mqStart runs q until the returned stop is called (or t ends); stop waits
// for Run to return.
func mqStart(t testing.TB, q *Queue) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- q.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// mqWin and mqRollback are sample movements.
func mqWin(txID string) Movement {
	return Movement{TransactionID: txID, Kind: KindWin, Operator: mqOperatorID, GameID: "crash-classic",
		Currency: "BRL", PlayerID: mqPlayer, Token: mqToken, RoundID: "round-1", BetID: "bet-" + txID,
		Amount: 2350, WinType: WinTypeWin}
}

func mqRollback(txID string) Movement {
	return Movement{TransactionID: txID, Kind: KindRollback, Operator: mqOperatorID, GameID: "crash-classic",
		Currency: "BRL", PlayerID: mqPlayer, Token: mqToken, RoundID: "round-1", BetID: "bet-" + txID,
		Amount: 1000, Reason: "cancelled_by_player"}
}

// mqEnqueue queues ms in one committed transaction.
func mqEnqueue(t testing.TB, s *store.Store, now time.Time, ms ...Movement) {
	t.Helper()
	err := s.InTx(context.Background(), func(ctx context.Context) error {
		for _, m := range ms {
			if err := Enqueue(ctx, s, m, now); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("enqueue: %v", err)
	}
}

// mqGet reads one movement, token included.
func mqGet(t testing.TB, s *store.Store, txID string) MovementRecord {
	t.Helper()
	rec, err := s.GetMovement(context.Background(), txID)
	if err != nil {
		t.Fatalf("read movement %s: %v", txID, err)
	}
	return recordOf(&rec)
}

// mqDrive plays time for the queue: whenever the movement waits for a later
// attempt, it moves clock to that instant and wakes the queue, until the
// movement reaches a final status (or timeout).
func mqDrive(t testing.TB, s *store.Store, q *Queue, clock *mqClock, txID string, timeout time.Duration) MovementRecord {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		rec := mqGet(t, s, txID)
		if rec.Status != StatusPending {
			return rec
		}
		if rec.ClaimedBy == "" && rec.NextAttemptAt.Time().After(clock.Now()) {
			clock.AdvanceTo(rec.NextAttemptAt.Time())
			q.outbox.Notify()
		}
		time.Sleep(2 * time.Millisecond)
	}
	rec := mqGet(t, s, txID)
	t.Fatalf("movement %s still %s after %s (attempts %d, last error %q)", txID, rec.Status, timeout, rec.Attempts, rec.LastError)
	return rec
}

// mqWaitFor polls cond until it holds or timeout passes.
func mqWaitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// mqStripEnvelope returns a body without the per-attempt fields.
func mqStripEnvelope(t testing.TB, raw []byte) string {
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

// mqCountStatus counts movements by status.
func mqCountStatus(t testing.TB, s *store.Store) map[MovementStatus]int {
	t.Helper()
	n, err := s.CountMovements(context.Background(),
		string(StatusPending), string(StatusDone), string(StatusRefused), string(StatusExhausted))
	if err != nil {
		t.Fatalf("count: %v", err)
	}
	out := map[MovementStatus]int{}
	for status, k := range n {
		if k > 0 { // a status without movements is absent, as with GROUP BY
			out[MovementStatus(status)] = int(k)
		}
	}
	return out
}

// mqCountAll counts every movement.
func mqCountAll(t testing.TB, s *store.Store) int {
	t.Helper()
	var n int
	if err := s.QueryRowForTest(context.Background(), "SELECT COUNT(*) FROM movements").Scan(&n); err != nil {
		t.Fatalf("count: %v", err)
	}
	return n
}

func mqIDs(prefix string, n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s-%06d", prefix, i)
	}
	return ids
}

func mqContainsToken(s string) bool { return strings.Contains(s, mqToken) }

func mqDiscard() *slog.Logger { return slog.New(slog.DiscardHandler) }
