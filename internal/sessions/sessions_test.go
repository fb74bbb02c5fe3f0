package sessions_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/internal/engine"
	"github.com/crashstudio/crashgame/internal/freebets"
	"github.com/crashstudio/crashgame/internal/sessions"
	"github.com/crashstudio/crashgame/internal/store"
	"github.com/crashstudio/crashgame/internal/store/storetest"
	"github.com/crashstudio/crashgame/internal/tickets"
	"github.com/crashstudio/crashgame/internal/wallet"
)

func ptr(v int64) *int64 { return &v }

// fakeWallet speaks the /balance route of wallet.v1.yaml: per token, a status
// and a body. It records every request body.
type fakeWallet struct {
	mu      sync.Mutex
	answers map[string]answer
	calls   []map[string]any
}

type answer struct {
	status int
	body   string
}

func (f *fakeWallet) set(token string, status int, body string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.answers[token] = answer{status, body}
}

func (f *fakeWallet) requests() []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]map[string]any(nil), f.calls...)
}

func (f *fakeWallet) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	_ = json.Unmarshal(raw, &body)
	f.mu.Lock()
	f.calls = append(f.calls, body)
	tok, _ := body["token"].(string)
	a, ok := f.answers[tok]
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if r.URL.Path != "/balance" || !ok {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, `{"status":"error","error_code":"TOKEN_INVALID","error_message":"secret operator text"}`)
		return
	}
	w.WriteHeader(a.status)
	_, _ = io.WriteString(w, a.body)
}

// clock is a settable time source.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

type fixture struct {
	svc     *sessions.Service
	st      *store.Store
	opts    sessions.Options
	tickets *tickets.Service
	wallet  *fakeWallet
	clock   *clock
	fb      *freebets.Service
	bank    *engine.DemoBank
}

// testOperators are the operators of the tests: acme with two currencies and
// sleepy, disabled.
func testOperators() []sessions.Operator {
	return []sessions.Operator{
		{
			ID: "acme", Enabled: true, Games: []string{"crash"},
			Currencies: []sessions.Currency{
				{Code: "BRL", Limits: freebets.Limits{MinBet: ptr(100), MaxBet: ptr(100000)}},
				{Code: "EUR", Limits: freebets.Limits{MinBet: ptr(10), MaxBet: ptr(10000)}},
			},
		},
		{ID: "sleepy", Enabled: false, Games: []string{"crash"}, Currencies: []sessions.Currency{{Code: "BRL"}}},
	}
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	return newFixtureOn(t, storetest.SQLite(t), testOperators())
}

// newFixtureOn is newFixture on the database dsn, with these operators.
func newFixtureOn(t *testing.T, dsn string, ops []sessions.Operator) *fixture {
	t.Helper()
	fw := &fakeWallet{answers: map[string]answer{}}
	srv := httptest.NewServer(fw)
	t.Cleanup(srv.Close)

	st, err := store.Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	if err := st.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	c := &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	tk := tickets.New(st.Tickets(), c.Now)
	fb, err := freebets.New(st.Freebets(), freebets.Options{Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	clients := map[string]sessions.Balancer{}
	for _, op := range ops {
		cl, err := wallet.NewClient(wallet.Settings{Operator: op.ID, URL: srv.URL, Secret: "0123456789abcdef0123", APIKey: "key_abcdefgh_x"})
		if err != nil {
			t.Fatal(err)
		}
		clients[op.ID] = cl
	}
	bank := engine.NewDemoBank()
	opts := sessions.Options{
		Operators: ops, Games: []string{"crash", "other"}, Languages: []string{"pt", "en", "es"}, DefaultLanguage: "es",
		Store: st.Sessions(), Tickets: tk, Freebets: fb, Demo: bank, Now: c.Now,
		Wallets:     func(op string) (sessions.Balancer, bool) { b, ok := clients[op]; return b, ok },
		DemoBalance: map[string]int64{"EUR": 50_000},
	}
	svc, err := sessions.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close() })
	return &fixture{svc: svc, st: st, opts: opts, tickets: tk, wallet: fw, clock: c, fb: fb, bank: bank}
}

const token = "tok-0123456789abcdef"

func (f *fixture) ticket(t *testing.T, s tickets.Session) string {
	t.Helper()
	if s.Operator == "" {
		s.Operator = "acme"
	}
	if s.GameID == "" {
		s.GameID = "crash"
	}
	raw, err := f.tickets.Issue(t.Context(), s)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// openReal10000 opens on svc a real-money BRL session of player p-42, whose
// /balance answers 10,000 cents.
func (f *fixture) openReal10000(t *testing.T, svc *sessions.Service) sessions.Session {
	t.Helper()
	f.wallet.set(token, 200, `{"status":"ok","player_id":"p-42","balance":10000,"currency":"BRL"}`)
	s, err := svc.Open(t.Context(), sessions.OpenRequest{SID: f.ticket(t, realLaunch("BRL"))})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func realLaunch(currency string) tickets.Session {
	return tickets.Session{Token: token, PlayerID: "p-42", Currency: currency, Language: "pt", PlayerName: "Launch Name", Theme: "dark"}
}

func TestOpenRefusals(t *testing.T) {
	t.Parallel()
	okBRL := `{"status":"ok","player_id":"p-42","balance":25000,"currency":"BRL","player_name":"Maria Silva"}`
	cases := []struct {
		name   string
		status int
		body   string
		launch tickets.Session
		legacy *sessions.OpenRequest // instead of a ticket
		want   error
	}{
		// Rule BAL-7 BAL-5: a 401 from /balance refuses entry.
		{"balance 401", 401, `{"status":"error","error_code":"TOKEN_INVALID","error_message":"no such token"}`, realLaunch("BRL"), nil, sessions.ErrSessionRefused},
		// Rule BAL-6: a revoked or expired token is refused at the next entry.
		{"token expired", 200, `{"status":"error","error_code":"TOKEN_EXPIRED"}`, realLaunch("BRL"), nil, sessions.ErrSessionRefused},
		{"player blocked", 200, `{"status":"error","error_code":"PLAYER_BLOCKED"}`, realLaunch("BRL"), nil, sessions.ErrSessionRefused},
		// A temporary failure is no decision: the player is told to retry.
		{"wallet 5xx", 503, `{"status":"error","error_code":"INTERNAL_ERROR"}`, realLaunch("BRL"), nil, sessions.ErrWalletUnavailable},
		{"unknown code", 200, `{"status":"error","error_code":"SOMETHING"}`, realLaunch("BRL"), nil, sessions.ErrWalletUnavailable},
		// Rule BAL-11: a currency other than the launch's refuses the session.
		{"currency differs", 200, `{"status":"ok","player_id":"p-42","balance":1,"currency":"USD"}`, realLaunch("BRL"), nil, sessions.ErrCurrencyMismatch},
		// A currency the operator does not accept refuses the session.
		{"currency not enabled", 200, `{"status":"ok","player_id":"p-42","balance":1,"currency":"USD"}`, realLaunch(""), nil, sessions.ErrCurrencyMismatch},
		// Issue 4: a player_id other than the launch's refuses the session.
		{"other player", 200, `{"status":"ok","player_id":"p-43","balance":1,"currency":"BRL"}`, realLaunch("BRL"), nil, sessions.ErrSessionRefused},
		// Rule VER-6: on the legacy path /balance is the only source of currency.
		{"legacy without currency", 200, `{"status":"ok","player_id":"p-42","balance":1}`, tickets.Session{},
			&sessions.OpenRequest{SID: token, Operator: "acme", GameID: "crash"}, sessions.ErrCurrencyMismatch},
		{"legacy unknown operator", 200, okBRL, tickets.Session{}, &sessions.OpenRequest{SID: token, Operator: "nobody", GameID: "crash"}, sessions.ErrTicketInvalid},
		{"legacy disabled operator", 200, okBRL, tickets.Session{}, &sessions.OpenRequest{SID: token, Operator: "sleepy", GameID: "crash"}, sessions.ErrTicketInvalid},
		{"legacy game not enabled", 200, okBRL, tickets.Session{}, &sessions.OpenRequest{SID: token, Operator: "acme", GameID: "other"}, sessions.ErrTicketInvalid},
		{"legacy unknown game", 200, okBRL, tickets.Session{}, &sessions.OpenRequest{SID: token, Operator: "acme", GameID: "nope"}, sessions.ErrTicketInvalid},
		{"not a ticket", 200, okBRL, tickets.Session{}, &sessions.OpenRequest{SID: "tk_short"}, sessions.ErrTicketInvalid},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			f.wallet.set(token, tc.status, tc.body)
			req := sessions.OpenRequest{}
			if tc.legacy != nil {
				req = *tc.legacy
			} else {
				req.SID = f.ticket(t, tc.launch)
			}
			_, err := f.svc.Open(t.Context(), req)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Open = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestTicketSingleUse(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.wallet.set(token, 200, `{"status":"ok","player_id":"p-42","balance":25000,"currency":"BRL"}`)
	sid := f.ticket(t, realLaunch("BRL"))
	if _, err := f.svc.Open(t.Context(), sessions.OpenRequest{SID: sid}); err != nil {
		t.Fatal(err)
	}
	// Rule TKT-5: opening the URL again opens no second session.
	if _, err := f.svc.Open(t.Context(), sessions.OpenRequest{SID: sid}); !errors.Is(err, sessions.ErrTicketUsed) {
		t.Fatalf("second Open = %v, want ErrTicketUsed", err)
	}
	if n := len(f.wallet.requests()); n != 1 {
		t.Fatalf("/balance calls = %d, want 1", n)
	}
	var rows int
	if err := f.st.QueryRowForTest(t.Context(), "SELECT count(*) FROM sessions").Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != 1 {
		t.Fatalf("session rows = %d, want 1", rows)
	}
}

func TestTicketExpired(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.wallet.set(token, 200, `{"status":"ok","player_id":"p-42","balance":25000,"currency":"BRL"}`)
	sid := f.ticket(t, realLaunch("BRL"))
	f.clock.Advance(tickets.TTL)
	// Rule LIM-3: a ticket not opened within 15 minutes opens no session.
	if _, err := f.svc.Open(t.Context(), sessions.OpenRequest{SID: sid}); !errors.Is(err, sessions.ErrTicketExpired) {
		t.Fatalf("Open = %v, want ErrTicketExpired", err)
	}
	if n := len(f.wallet.requests()); n != 0 {
		t.Fatalf("/balance calls = %d, want 0", n)
	}
}

func TestOpenWithTicket(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.wallet.set(token, 200, `{"status":"ok","player_id":"p-42","balance":25000,"currency":"BRL","player_name":"Maria Silva",
		"freebets":[{"id":"camp-7","quantity":2,"amount":500},{"id":"","amount":500},{"id":"tiny","amount":5}]}`)
	sess, err := f.svc.Open(t.Context(), sessions.OpenRequest{SID: f.ticket(t, realLaunch("BRL")), Language: "en"})
	if err != nil {
		t.Fatal(err)
	}
	if len(sess.ID) < 16 || sess.PlayerID != "p-42" || sess.Currency != "BRL" || sess.Balance != 25000 ||
		sess.Name != "Ma***a" || sess.Language != "pt" || sess.Theme != "dark" || sess.Demo {
		t.Fatalf("session = %+v", sess)
	}

	// Rule BAL-1 BAL-2: the envelope and the token, no player_id, no transaction_id.
	reqs := f.wallet.requests()
	if len(reqs) != 1 {
		t.Fatalf("/balance calls = %d", len(reqs))
	}
	b := reqs[0]
	for _, k := range []string{"operator", "timestamp", "request_id", "currency", "token", "game_id"} {
		if _, ok := b[k]; !ok {
			t.Errorf("/balance body lacks %s: %v", k, b)
		}
	}
	for _, k := range []string{"player_id", "transaction_id"} {
		if _, ok := b[k]; ok {
			t.Errorf("/balance body carries %s", k)
		}
	}
	if b["token"] != token || b["currency"] != "BRL" {
		t.Errorf("/balance body = %v", b)
	}

	// Rule FB-13 FB-6: the invalid entries are discarded, the player entered,
	// the valid grant is split per round.
	grants, err := f.svc.OpenFreebets(t.Context(), sess)
	if err != nil {
		t.Fatal(err)
	}
	if len(grants) != 2 || grants[0].ID != "camp-7#1" || grants[1].ID != "camp-7#2" || grants[0].Amount != 500 {
		t.Fatalf("grants = %+v", grants)
	}

	// Rule BAL-3: getting the session later calls no wallet.
	got, err := f.svc.Get(t.Context(), sess.ID)
	if err != nil || got.PlayerID != "p-42" || got.Balance != 25000 {
		t.Fatalf("Get = %+v, %v", got, err)
	}
	if n := len(f.wallet.requests()); n != 1 {
		t.Fatalf("/balance calls after Get = %d, want 1", n)
	}
}

func TestCurrencyAbsentTakesLaunchs(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	// Rule BAL-12 (AMB-14 reading A): no currency in /balance, the launch's applies.
	f.wallet.set(token, 200, `{"status":"ok","player_id":"p-42","balance":700}`)
	sess, err := f.svc.Open(t.Context(), sessions.OpenRequest{SID: f.ticket(t, realLaunch("EUR"))})
	if err != nil {
		t.Fatal(err)
	}
	if sess.Currency != "EUR" {
		t.Fatalf("currency = %q, want EUR", sess.Currency)
	}
	// No player name from either side: a generated alias, never the player id.
	if sess.Name == "" || sess.Name == "p-42" {
		t.Fatalf("name = %q", sess.Name)
	}
}

func TestLegacyPath(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.wallet.set(token, 200, `{"status":"ok","player_id":"p-42","balance":900,"currency":"EUR","player_name":"p-42"}`)
	// Rule VER-4 VER-5: the token arrives as sid; operator and game from the request.
	// The game may be left out when the operator has one.
	sess, err := f.svc.Open(t.Context(), sessions.OpenRequest{SID: token, Operator: "acme", Language: "xx"})
	if err != nil {
		t.Fatal(err)
	}
	// Rule VER-6: the currency comes from /balance. Rule LANG-2 LANG-4: an unknown
	// language falls back to the installation default (es here, not en).
	if sess.Currency != "EUR" || sess.GameID != "crash" || sess.Token != token || sess.Language != "es" {
		t.Fatalf("session = %+v", sess)
	}
	// The name equal to the player id is never shown.
	if sess.Name == "p-" || sess.Name == "p-***2" {
		t.Fatalf("name %q derives from the player id", sess.Name)
	}
	// AMB-15 reading A: /balance carried the default currency (the operator's first).
	if got := f.wallet.requests()[0]["currency"]; got != "BRL" {
		t.Fatalf("/balance currency = %v, want BRL", got)
	}
}

func TestDemo(t *testing.T) {
	t.Parallel()
	cases := []struct {
		currency string
		want     int64
		wantCur  string
	}{
		{"", sessions.DefaultDemoBalance, "BRL"},
		{"EUR", 50_000, "EUR"},
	}
	for _, tc := range cases {
		t.Run(tc.wantCur, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			sess, err := f.svc.Open(t.Context(), sessions.OpenRequest{SID: f.ticket(t, tickets.Session{Demo: true, Currency: tc.currency})})
			if err != nil {
				t.Fatal(err)
			}
			if !sess.Demo || sess.Balance != tc.want || sess.Currency != tc.wantCur || sess.Name != "Demo" {
				t.Fatalf("session = %+v", sess)
			}
			if n := len(f.wallet.requests()); n != 0 {
				t.Fatalf("demo called the wallet %d times", n)
			}
			if b, ok := f.bank.Balance(sess.Hash); !ok || b != tc.want {
				t.Fatalf("bank = %d %v", b, ok)
			}
			if _, err := f.bank.Debit(sess.Hash, 100); err != nil {
				t.Fatal(err)
			}
			got, err := f.svc.Get(t.Context(), sess.ID)
			if err != nil || got.Balance != tc.want-100 {
				t.Fatalf("Get = %+v %v", got, err)
			}
		})
	}
}

func TestGet(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.wallet.set(token, 200, `{"status":"ok","player_id":"p-42","balance":25000,"currency":"BRL"}`)
	sess, err := f.svc.Open(t.Context(), sessions.OpenRequest{SID: f.ticket(t, realLaunch("BRL"))})
	if err != nil {
		t.Fatal(err)
	}
	// The id with its last character changed: one of the 16 a 32-byte id can
	// end with (A, E, I, ...), so another one than its own.
	last := "A"
	if strings.HasSuffix(sess.ID, last) {
		last = "E"
	}
	for _, id := range []string{"", "nope", sess.ID + "x", sess.ID[:len(sess.ID)-1] + last} {
		if _, err := f.svc.Get(t.Context(), id); !errors.Is(err, sessions.ErrSessionExpired) {
			t.Errorf("Get(%q) = %v, want ErrSessionExpired", id, err)
		}
	}
	f.svc.Reported(sess.Hash, 24000)
	// A restart: a new Service over the same database finds the session.
	_ = f.svc.Close() // flushes the display balance
	again, err := sessions.New(f.opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = again.Close() })
	got, err := again.Get(t.Context(), sess.ID)
	if err != nil || got.PlayerID != "p-42" || got.Balance != 24000 {
		t.Fatalf("Get after restart = %+v, %v", got, err)
	}
	// Fixed 12 h life.
	f.clock.Advance(sessions.TTL)
	if _, err := again.Get(t.Context(), sess.ID); !errors.Is(err, sessions.ErrSessionExpired) {
		t.Fatalf("Get after 12 h = %v", err)
	}
}

// The responsible gambling controls of the launch live with the session: the
// reality check falls due every interval after the last Continue, an action
// resets the idle clock, a session idle past its timeout ends (unless a bet is
// in play), and both clocks survive a restart.
func TestResponsibleGamblingControls(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.wallet.set(token, 200, `{"status":"ok","player_id":"p-42","balance":25000,"currency":"BRL"}`)
	launch := realLaunch("BRL")
	launch.Controls = tickets.Controls{SessionClock: true, RealityCheckMinutes: 10, InactivityMinutes: 30}
	opened := f.clock.Now()
	sess, err := f.svc.Open(t.Context(), sessions.OpenRequest{SID: f.ticket(t, launch)})
	if err != nil {
		t.Fatal(err)
	}
	if sess.Controls != launch.Controls || !sess.LastAction.Equal(opened) {
		t.Fatalf("opened session: controls %+v, last action %v", sess.Controls, sess.LastAction)
	}
	if at := sess.RealityCheckAt(); !at.Equal(opened.Add(10 * time.Minute)) {
		t.Fatalf("first reality check at %v, want 10 minutes after the opening", at)
	}
	f.clock.Advance(10*time.Minute - time.Millisecond)
	if sess.RealityCheckDue(f.clock.Now()) {
		t.Fatal("the reality check is due a millisecond early")
	}
	f.clock.Advance(time.Millisecond)
	got, err := f.svc.Get(t.Context(), sess.ID)
	if err != nil || !got.RealityCheckDue(f.clock.Now()) {
		t.Fatalf("after 10 minutes: due %v, %v", got.RealityCheckDue(f.clock.Now()), err)
	}
	// Continue two minutes later: the next is due 10 minutes after it.
	f.clock.Advance(2 * time.Minute)
	acked, err := f.svc.AcknowledgeRealityCheck(sess.Hash)
	if err != nil || acked.RealityCheckDue(f.clock.Now()) || !acked.RealityCheckAt().Equal(f.clock.Now().Add(10*time.Minute)) {
		t.Fatalf("after Continue: next at %v, %v", acked.RealityCheckAt(), err)
	}
	// The idle clock restarts at every action; reads do not move it.
	f.clock.Advance(29 * time.Minute)
	if _, err := f.svc.Get(t.Context(), sess.ID); err != nil {
		t.Fatalf("29 minutes idle: %v", err)
	}
	f.svc.Acted(sess.Hash)
	lastAction := f.clock.Now()
	f.clock.Advance(29 * time.Minute)
	if _, err := f.svc.Get(t.Context(), sess.ID); err != nil {
		t.Fatalf("29 minutes after an action: %v", err)
	}
	// A restart keeps the last action and the acknowledgement.
	_ = f.svc.Close()
	again, err := sessions.New(f.opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = again.Close() })
	got, err = again.Get(t.Context(), sess.ID)
	if err != nil || got.Controls != launch.Controls || !got.LastAction.Equal(lastAction) || !got.RealityAck.Equal(acked.RealityAck) {
		t.Fatalf("after a restart: %+v (last action %v, ack %v), %v", got.Controls, got.LastAction, got.RealityAck, err)
	}
	f.clock.Advance(time.Minute)
	got, err = again.Get(t.Context(), sess.ID)
	if !errors.Is(err, sessions.ErrSessionInactive) || got.Language != "pt" {
		t.Fatalf("30 minutes idle: %v (language %q), want ErrSessionInactive with the session", err, got.Language)
	}
	// Once ended, an action does not bring it back: every route refuses first.
	if _, err := again.Get(t.Context(), sess.ID); !errors.Is(err, sessions.ErrSessionInactive) {
		t.Fatalf("ended session: %v", err)
	}

	// Without controls nothing ends and no reality check falls due.
	plain, err := again.Open(t.Context(), sessions.OpenRequest{SID: f.ticket(t, realLaunch("BRL"))})
	if err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(8 * time.Hour)
	if got, err := again.Get(t.Context(), plain.ID); err != nil || got.RealityCheckDue(f.clock.Now()) || !got.IdleAt().IsZero() {
		t.Fatalf("a session without controls: %v", err)
	}
}

func TestBalances(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	a := f.openReal10000(t, f.svc)
	b, err := f.svc.Open(t.Context(), sessions.OpenRequest{SID: f.ticket(t, realLaunch("BRL"))})
	if err != nil {
		t.Fatal(err)
	}
	// Rule BAL-4: a /bet answer's balance.
	f.svc.Reported(a.Hash, 9000)
	if m := f.svc.Balance(a.Hash); m.Balance != 9000 {
		t.Fatalf("after bet = %d", m.Balance)
	}
	// A cashout with nothing reported meanwhile: the expected balance sticks.
	m := f.svc.Balance(a.Hash)
	if got := f.svc.Expect(a.Hash, m, 2000); got != 11000 {
		t.Fatalf("Expect = %d", got)
	}
	// The wallet reported meanwhile: its figure stays, the answer is mark+delta.
	m = f.svc.Balance(a.Hash)
	changed := f.svc.OnWalletBalance("acme", "p-42", "BRL", 13000)
	if got := f.svc.Expect(a.Hash, m, 2000); got != 13000 {
		t.Fatalf("Expect after a report = %d", got)
	}
	if m := f.svc.Balance(a.Hash); m.Balance != 13000 {
		t.Fatalf("display after a report = %d", m.Balance)
	}
	// Rule BAL-4: the /win hook reaches every live session of the player.
	if m := f.svc.Balance(b.Hash); m.Balance != 13000 {
		t.Fatalf("other session = %d", m.Balance)
	}
	if len(changed) != 2 || changed[0].Balance != 13000 || changed[1].Balance != 13000 {
		t.Fatalf("sessions changed by the report: %+v, want both at 13000", changed)
	}
	// Another player or currency is untouched.
	if changed := f.svc.OnWalletBalance("acme", "p-99", "BRL", 1); len(changed) != 0 {
		t.Fatalf("another player's report changed %d sessions", len(changed))
	}
	if changed := f.svc.OnWalletBalance("acme", "p-42", "EUR", 1); len(changed) != 0 {
		t.Fatalf("another currency's report changed %d sessions", len(changed))
	}
	if m := f.svc.Balance(b.Hash); m.Balance != 13000 {
		t.Fatalf("other player changed the balance: %d", m.Balance)
	}
}

func TestMask(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, want string }{
		{"Maria Silva", "Ma***a"},
		{"joana", "jo***a"},
		{"  João Ñandú  ", "Jo***ú"},
		{"Ana", "A***"},
		{"Al", "A***"},
		{"x", "x***"},
		{"", ""},
		{"   ", ""},
		{"\u200bab\u0000cd\u200b", "ab***d"},
		{"ab\ncd", "ab***d"},
	}
	for _, tc := range cases {
		if got := sessions.Mask(tc.in); got != tc.want {
			t.Errorf("Mask(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// In a cluster a session's balance changes where the table's leader runs, and
// every replica hears it (the changes relayed from the others: Heard; the
// wallet's answers to delivered movements: OnWalletBalance). A replica that loads the
// session afterwards (its player's stream reconnected there after the leader
// died, before the leader wrote the row) starts from the newest balance it
// heard, not from the older row; a balance heard for the player before the
// session was opened is not the session's (the opening asked /balance).
// Rule BAL-4: the figures are the wallet's answers, never a new /balance.
func TestBalanceHeardBeforeTheSessionIsLoaded(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		hear func(b *sessions.Service, hash []byte)
		want int64
	}{
		{"nothing heard: the row", func(*sessions.Service, []byte) {}, 10000},
		{"the leader's balance event", func(b *sessions.Service, h []byte) { b.Heard(sessions.Change{Session: h, Balance: 9000}) }, 9000},
		{"the wallet's answer to a /win", func(b *sessions.Service, _ []byte) { b.OnWalletBalance("acme", "p-42", "BRL", 12000) }, 12000},
		{"the wallet's answer, any currency", func(b *sessions.Service, _ []byte) { b.OnWalletBalance("acme", "p-42", "", 12500) }, 12500},
		{"newest wins: event after answer", func(b *sessions.Service, h []byte) {
			b.OnWalletBalance("acme", "p-42", "BRL", 12000)
			b.Heard(sessions.Change{Session: h, Balance: 11000})
		}, 11000},
		{"newest wins: answer after event", func(b *sessions.Service, h []byte) {
			b.Heard(sessions.Change{Session: h, Balance: 11000})
			b.OnWalletBalance("acme", "p-42", "BRL", 12000)
		}, 12000},
		{"another player's or currency's answer", func(b *sessions.Service, _ []byte) {
			b.OnWalletBalance("acme", "p-99", "BRL", 1)
			b.OnWalletBalance("acme", "p-42", "EUR", 2)
		}, 10000},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			a := f.openReal10000(t, f.svc)
			if err := f.svc.Close(); err != nil { // the row holds 10000
				t.Fatal(err)
			}
			b, err := sessions.New(f.opts) // another replica
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = b.Close() })
			tt.hear(b, a.Hash)
			if _, err := b.Player(t.Context(), a.Hash); err != nil {
				t.Fatal(err)
			}
			if got := b.Balance(a.Hash).Balance; got != tt.want {
				t.Fatalf("balance once loaded = %d, want %d", got, tt.want)
			}
			// Held now: the next change heard shows at once.
			b.Heard(sessions.Change{Session: a.Hash, Balance: 7000})
			if got := b.Balance(a.Hash).Balance; got != 7000 {
				t.Fatalf("balance after a change heard = %d, want 7000", got)
			}
		})
	}
}

// A /win or /rollback delivered by a replica that holds none of the
// player's sessions (any replica's queue delivers it) is written to the
// sessions' rows: a replica that loads the session afterwards without having
// heard it (it restarted after a kill) shows the wallet's newer balance, not
// the row of the bet before it. Rule BAL-4: the figures are the wallet's
// answers, never a new /balance.
func TestWalletBalanceDeliveredElsewhereReachesTheRow(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name     string
		currency string
		want     int64
	}{
		{"the session's currency", "BRL", 12000},
		{"every currency", "", 12000},
		{"another currency: the row as it was", "EUR", 10000},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			a := f.openReal10000(t, f.svc)
			if err := f.svc.Close(); err != nil { // the row holds 10000
				t.Fatal(err)
			}
			queue, err := sessions.New(f.opts) // the replica whose queue delivered the /win
			if err != nil {
				t.Fatal(err)
			}
			if changed := queue.OnWalletBalance("acme", "p-42", tt.currency, 12000); len(changed) != 0 {
				t.Fatalf("the delivering replica held %d of the player's sessions, want none", len(changed))
			}
			if err := queue.Close(); err != nil { // its last flush
				t.Fatal(err)
			}
			restarted, err := sessions.New(f.opts) // heard nothing before it started
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = restarted.Close() })
			got, err := restarted.Get(t.Context(), a.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.Balance != tt.want {
				t.Fatalf("balance of the session loaded after the delivery = %d, want %d", got.Balance, tt.want)
			}
		})
	}
}

// A replica that loaded a session from its row just before the replica that
// decided a balance wrote it (its row is written within a second), and that
// never heard the decision (it started after it), reads the row once more on
// the session's first use after rowSettle: the page that reconnects its
// stream there shows the newer balance, not the older row. Something heard
// since the load is newer than any row and is kept.
// Rule BAL-4: the figures are the wallet's answers, never a new /balance.
func TestSessionLoadedBeforeItsRowWasWrittenReadsItAgain(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		after func(b *sessions.Service, hash []byte) // on b, after its load
		wait  time.Duration
		want  int64
	}{
		{"read again after the flush", func(*sessions.Service, []byte) {}, 3 * time.Second, 9000},
		{"too early: the row as loaded", func(*sessions.Service, []byte) {}, time.Second, 10000},
		{"heard since the load: kept", func(b *sessions.Service, h []byte) { b.Heard(sessions.Change{Session: h, Balance: 7000}) }, 3 * time.Second, 7000},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			a := f.openReal10000(t, f.svc)
			b, err := sessions.New(f.opts) // another replica, started after the opening
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = b.Close() })
			if _, err := b.Player(t.Context(), a.Hash); err != nil { // the row: 10000
				t.Fatal(err)
			}
			tt.after(b, a.Hash)
			f.svc.Reported(a.Hash, 9000)          // decided at the leader after b loaded it...
			if err := f.svc.Close(); err != nil { // ...and written to the row
				t.Fatal(err)
			}
			f.clock.Advance(tt.wait)
			got, err := b.Get(t.Context(), a.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.Balance != tt.want {
				t.Fatalf("balance after %s = %d, want %d", tt.wait, got.Balance, tt.want)
			}
			if got := b.Balance(a.Hash).Balance; got != tt.want {
				t.Fatalf("held balance = %d, want %d", got, tt.want)
			}
		})
	}
}

// A balance heard for the player before the session was opened is older than
// the session's own /balance answer, and is not taken.
func TestBalanceHeardBeforeTheSessionOpenedIsIgnored(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	b, err := sessions.New(f.opts) // another replica
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	b.OnWalletBalance("acme", "p-42", "BRL", 1) // a /win of an earlier session
	f.clock.Advance(time.Minute)
	a := f.openReal10000(t, f.svc)
	if err := f.svc.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Player(t.Context(), a.Hash); err != nil {
		t.Fatal(err)
	}
	if got := b.Balance(a.Hash).Balance; got != 10000 {
		t.Fatalf("balance once loaded = %d, want the opening's 10000", got)
	}
}

// shownNext is the next balance the watch shows, or fails t.
func shownNext(t *testing.T, w *sessions.Watch) sessions.Shown {
	t.Helper()
	select {
	case v := <-w.C:
		return v
	case <-time.After(5 * time.Second):
		t.Fatal("no balance shown")
		return sessions.Shown{}
	}
}

// Rule BAL-4: every balance a player is shown on the stream comes from the
// sessions: the wallet's answer to a bet (Reported), what a cashout queued
// (Expect), the answer to a delivered /win (OnWalletBalance), and a change
// another replica decided (Heard). A page only needs the newest: a change not
// taken yet is replaced by the next.
func TestBalanceChangesAreShownOnTheWatch(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	s := f.openReal10000(t, f.svc)
	w := f.svc.Watch(s.Hash)
	f.svc.Reported(s.Hash, 9000)
	if got := shownNext(t, w); got != (sessions.Shown{Balance: 9000, Currency: "BRL"}) {
		t.Fatalf("after a bet's answer: %+v", got)
	}
	f.svc.Expect(s.Hash, f.svc.Balance(s.Hash), 1500)
	if got := shownNext(t, w); got.Balance != 10500 {
		t.Fatalf("after a cashout: %+v, want 10500", got)
	}
	f.svc.OnWalletBalance("acme", "p-42", "BRL", 10400)
	if got := shownNext(t, w); got.Balance != 10400 {
		t.Fatalf("after a /win's answer: %+v, want 10400", got)
	}
	f.svc.Heard(sessions.Change{Session: s.Hash, Balance: 8000})
	if got := shownNext(t, w); got.Balance != 8000 {
		t.Fatalf("after another replica's change: %+v, want 8000", got)
	}
	f.svc.Reported(s.Hash, 7000)
	f.svc.Reported(s.Hash, 6000)
	if got := shownNext(t, w); got.Balance != 6000 {
		t.Fatalf("two changes not taken: %+v, want the newest, 6000", got)
	}
	f.svc.OnWalletBalance("acme", "p-42", "EUR", 1) // another currency's sessions
	w.Stop()
	f.svc.Reported(s.Hash, 5000)
	select {
	case v := <-w.C:
		t.Fatalf("shown %+v after the watch stopped or for another currency", v)
	default:
	}
}

// In a cluster the changes decided in a process reach the others
// (Options.Relay to their Heard): a bet's answer, a cashout's expected
// balance and a /win's answer are relayed; a change heard is never relayed
// again; a demo session's change says so, and its bank takes it where heard.
func TestBalanceChangesDecidedHereAreRelayed(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.wallet.set(token, 200, `{"status":"ok","player_id":"p-42","balance":10000,"currency":"BRL"}`)
	var (
		mu      sync.Mutex
		relayed []sessions.Change
	)
	opts := f.opts
	opts.Relay = func(c sessions.Change) {
		mu.Lock()
		relayed = append(relayed, c)
		mu.Unlock()
	}
	svc, err := sessions.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close() })
	real, err := svc.Open(t.Context(), sessions.OpenRequest{SID: f.ticket(t, realLaunch("BRL"))})
	if err != nil {
		t.Fatal(err)
	}
	demo, err := svc.Open(t.Context(), sessions.OpenRequest{SID: f.ticket(t, tickets.Session{Demo: true, Currency: "BRL"})})
	if err != nil {
		t.Fatal(err)
	}
	svc.Reported(real.Hash, 9000)
	svc.Expect(real.Hash, svc.Balance(real.Hash), 500)
	svc.OnWalletBalance("acme", "p-42", "BRL", 9400)
	svc.Heard(sessions.Change{Session: real.Hash, Balance: 1})
	svc.Heard(sessions.Change{Operator: "acme", PlayerID: "p-42", Currency: "BRL", Balance: 2})
	svc.Reported(demo.Hash, 999_000)
	mu.Lock()
	got := slices.Clone(relayed)
	mu.Unlock()
	want := []sessions.Change{
		{Session: real.Hash, Balance: 9000},
		{Session: real.Hash, Balance: 9500},
		{Operator: "acme", PlayerID: "p-42", Currency: "BRL", Balance: 9400},
		{Session: demo.Hash, Demo: true, Balance: 999_000},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("relayed %+v\nwant    %+v", got, want)
	}

	// Where it is heard, a demo change is the bank's balance.
	other, err := sessions.New(f.opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = other.Close() })
	f.bank.Open(demo.Hash, 1_000_000)
	other.Heard(want[3])
	if b, _ := f.bank.Balance(demo.Hash); b != 999_000 {
		t.Fatalf("the demo bank holds %d after the change was heard, want 999000", b)
	}
}
