package table_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/crashstudio/crashgame/internal/apitest"
	"github.com/crashstudio/crashgame/internal/backoffice"
	"github.com/crashstudio/crashgame/internal/engine"
	"github.com/crashstudio/crashgame/internal/freebets"
	"github.com/crashstudio/crashgame/internal/logtest"
	"github.com/crashstudio/crashgame/internal/movements"
	"github.com/crashstudio/crashgame/internal/round"
	"github.com/crashstudio/crashgame/internal/seal"
	"github.com/crashstudio/crashgame/internal/sessions"
	"github.com/crashstudio/crashgame/internal/store"
	"github.com/crashstudio/crashgame/internal/store/storetest"
	"github.com/crashstudio/crashgame/internal/table"
	"github.com/crashstudio/crashgame/internal/tickets"
	"github.com/crashstudio/crashgame/internal/wallet"
)

func ptr(v int64) *int64 { return &v }

// betWallet is the engine's wallet for real-money tests: /bet answers what
// the test sets.
type betWallet struct {
	mu     sync.Mutex
	answer wallet.Result
}

func (b *betWallet) set(r wallet.Result) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.answer = r
}

func (b *betWallet) BetUntil(context.Context, wallet.BetCall, time.Time) (wallet.Result, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.answer, nil
}

func (b *betWallet) BreakerOpen() bool { return false }

// balancer answers /balance for session entry.
type balancer struct {
	mu     sync.Mutex
	answer wallet.Result
}

func (b *balancer) set(r wallet.Result) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.answer = r
}

func (b *balancer) Balance(context.Context, wallet.BalanceCall) (wallet.Result, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.answer, nil
}

type env struct {
	st       *store.Store
	tickets  *tickets.Service
	sessions *sessions.Service
	table    *engine.Table
	srv      *table.Server
	handler  http.Handler
	v        *apitest.Validator
	bets     *betWallet
	balance  *balancer
	bank     *engine.DemoBank
	bo       *backoffice.Service
}

type envOptions struct {
	rate  float64 // reads and money actions, unless action* is set
	burst int
	// actionRate and actionBurst, when set, limit money actions apart.
	actionRate  float64
	actionBurst int
	hello       time.Duration
	// betting is the betting window (default 2 s). A test whose steps must
	// all land inside one window under -race on a loaded machine sets more.
	betting time.Duration
	// sessionsNow is the sessions' clock (the responsible gambling controls'); nil: time.Now.
	sessionsNow func() time.Time
	// registerer receives the server's metrics; nil: none.
	registerer prometheus.Registerer
	// boardFrames is the server's BoardFrames; 0: its default.
	boardFrames int
	// heartbeat is the server's Heartbeat; 0: its default.
	heartbeat time.Duration
	// addressRate/addressBurst and streamRate/streamBurst are the
	// per-address budgets (session creations, stream openings); 0: the
	// defaults. trusted are the load balancers (TrustedProxies).
	addressRate, streamRate   float64
	addressBurst, streamBurst int
	// cutOff is the server's CutOff (a replica cut off from the cluster);
	// nil: never.
	cutOff  func() error
	trusted []netip.Prefix
	// tables finds a session's table; nil: the env's one table, "crash".
	tables func(id string) (table.Game, bool)
	// logger is the server's Logger; nil: the test's own (logtest.New), as is
	// every other part's.
	logger *slog.Logger
	// sessionsRepo wraps the sessions' repository (a failing database);
	// nil: the store's.
	sessionsRepo func(sessions.Repo) sessions.Repo
}

func newEnv(t testing.TB, o envOptions) *env {
	t.Helper()
	logger := logtest.New(t)
	if o.logger == nil {
		o.logger = logger
	}
	st, err := store.Open(t.Context(), storetest.SQLite(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	st.SetLogger(logger)
	if err := st.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	bank := engine.NewDemoBank()
	tk := tickets.New(st.Tickets(), nil)
	bal := &balancer{answer: wallet.Result{Outcome: wallet.Success, PlayerID: "p-1", Balance: 10000, HasBalance: true, Currency: "BRL", PlayerName: "Maria Silva"}}
	var repo sessions.Repo = st.Sessions()
	if o.sessionsRepo != nil {
		repo = o.sessionsRepo(repo)
	}
	ss, err := sessions.New(sessions.Options{
		Operators: []sessions.Operator{{ID: "acme", Enabled: true, Games: []string{"crash"},
			Currencies: []sessions.Currency{{Code: "BRL", Limits: freebets.Limits{MinBet: ptr(100), MaxBet: ptr(100000)}}}}},
		Games: []string{"crash"}, Languages: []string{"pt", "en", "es"}, DefaultLanguage: "pt",
		Store: repo, Tickets: tk, Demo: bank, Now: o.sessionsNow, Logger: logger,
		Wallets: func(string) (sessions.Balancer, bool) { return bal, true },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	bw := &betWallet{answer: wallet.Result{Outcome: wallet.Success, Balance: 9000, HasBalance: true}}
	tbl, err := engine.New(t.Context(), engine.Config{
		Game: engine.Game{ID: "crash", RTPBasisPoints: 9900, MaxMultiplier: 150,
			Betting: cmp.Or(o.betting, 2*time.Second), Pause: 300 * time.Millisecond, Freebet: true},
		Operators: map[string]engine.Operator{"acme": {Currencies: map[string]round.Limits{
			"BRL": {MinBet: 100, MaxBet: 100000, MaxWin: 10000000}}}},
		Store: st.Records(), Chains: st.HashChains(), Outbox: movements.NewOutbox(st.Movements()), Balances: ss, Demo: bank, ChainLength: 2000,
		Sealer: testSealer(t), SeedingWindow: -1, Logger: logger,
		Wallets: func(string) (engine.BetWallet, bool) { return bw, true },
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { _ = tbl.Run(ctx) }()
	tables := o.tables
	if tables == nil {
		tables = func(id string) (table.Game, bool) { return tbl, id == "crash" }
	}
	t.Cleanup(func() {
		cancel()
		tbl.Stop()
		<-tbl.Done()
	})

	bo := backoffice.New(backoffice.Config{Records: st.BackOffice(), Games: map[string][]string{"acme": {"crash"}}, LinkTTL: time.Hour})
	srv, err := table.New(table.Config{
		BaseURL: "https://games.example.com", DefaultLanguage: "pt",
		Limits:   map[table.Currency]table.Limits{{Operator: "acme", Code: "BRL"}: {MinBet: ptr(100), MaxBet: ptr(100000), MaxWin: ptr(10000000)}},
		Sessions: ss, Records: st.Records(), Chains: st.HashChains(), BackOffice: bo, Movements: st.BackOffice(), HelloTimeout: o.hello, Registerer: o.registerer, BoardFrames: o.boardFrames, Heartbeat: o.heartbeat,
		ReadRate: o.rate, ReadBurst: o.burst, ActionRate: cmp.Or(o.actionRate, o.rate), ActionBurst: cmp.Or(o.actionBurst, o.burst),
		AddressRate: o.addressRate, AddressBurst: o.addressBurst, StreamRate: o.streamRate, StreamBurst: o.streamBurst, TrustedProxies: o.trusted,
		Tables: tables, CutOff: o.cutOff, Logger: o.logger,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return &env{st: st, tickets: tk, sessions: ss, table: tbl, srv: srv, handler: srv.Handler(),
		v: apitest.New(t, "table.v1.yaml"), bets: bw, balance: bal, bank: bank, bo: bo}
}

// call sends one request and validates the response against the document.
func (e *env) call(t testing.TB, method, path, session string, body any) *httptest.ResponseRecorder {
	t.Helper()
	var raw []byte
	switch b := body.(type) {
	case nil:
	case string:
		raw = []byte(b)
	default:
		raw, _ = json.Marshal(b)
	}
	req := httptest.NewRequest(method, path, bytes.NewReader(raw))
	if raw != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if session != "" {
		req.Header.Set("Authorization", "Bearer "+session)
	}
	rec := httptest.NewRecorder()
	e.handler.ServeHTTP(rec, req)
	e.v.Recorded(t, req, rec)
	return rec
}

func decode[T any](t testing.TB, rec *httptest.ResponseRecorder) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
		t.Fatalf("decode %s: %v", rec.Body.String(), err)
	}
	return v
}

func (e *env) ticket(t testing.TB, s tickets.Session) string {
	t.Helper()
	s.Operator, s.GameID = "acme", "crash"
	raw, err := e.tickets.Issue(t.Context(), s)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// openDemo opens a demo session and returns its id.
func (e *env) openDemo(t testing.TB) string {
	t.Helper()
	rec := e.call(t, "POST", "/api/v1/sessions", "", map[string]any{"sid": e.ticket(t, tickets.Session{Demo: true, Currency: "BRL", Language: "en"})})
	if rec.Code != http.StatusCreated {
		t.Fatalf("create demo session: %d %s", rec.Code, rec.Body)
	}
	return decode[map[string]any](t, rec)["session"].(string)
}

// openReal opens a real-money session and returns its id.
func (e *env) openReal(t testing.TB) string {
	t.Helper()
	sid := e.ticket(t, tickets.Session{Token: "tok-0123456789abcdef", PlayerID: "p-1", Currency: "BRL", Language: "pt"})
	rec := e.call(t, "POST", "/api/v1/sessions", "", map[string]any{"sid": sid})
	if rec.Code != http.StatusCreated {
		t.Fatalf("create session: %d %s", rec.Code, rec.Body)
	}
	return decode[map[string]any](t, rec)["session"].(string)
}

// waitPhase waits until the table is in phase with at least left of it to go
// (betting) or just in it (other phases).
func (e *env) waitPhase(t testing.TB, phase string, left time.Duration) engine.RoundView {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		v, _ := e.table.Round()
		if v.Phase == phase && (phase != engine.PhaseBetting || time.Until(v.BettingEndsAt) >= left) {
			return v
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Fatalf("the table never reached %s", phase)
	return engine.RoundView{}
}

// testSealer seals the test tables' chain seeds with a fixed key.
func testSealer(t testing.TB) *seal.Sealer {
	t.Helper()
	s, err := seal.New(make([]byte, seal.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	return s
}
