package walletcheck_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/internal/secret"
	"github.com/crashstudio/crashgame/internal/walletcheck"
)

// laxFaults are the mistakes the lax wallet can make, one per fault probe:
// the faults operators' wallets were measured making (issue 50). The zero
// value is a wallet that makes none of them.
type laxFaults struct {
	// racyDebit checks the funds, then debits later, outside the lock: the
	// test holds every concurrent bet between the two until all ten are
	// checked, the worst interleaving, so the outcome does not hang on timing.
	racyDebit bool
	// forgetAfter, when set, is how long a transaction_id is remembered (by
	// the test's fake clock).
	forgetAfter time.Duration
	// settleAgain lets a debit be won or rolled back again under a fresh
	// transaction_id.
	settleAgain bool
	// prefixSignature compares only as many bytes of the HMAC as the
	// X-Signature header carries.
	prefixSignature bool
	// betsByTxOnly looks a debit up by bet_id alone and credits the player
	// the movement names.
	betsByTxOnly bool
	// playerByToken takes the player from the token and ignores player_id.
	playerByToken bool
	// foldCase compares transaction_ids without case (a *_ci collation).
	foldCase bool
	// freebetReuse never marks a grant spent.
	freebetReuse bool
}

// fakeClock is the lax wallet's clock for its idempotency memory: the
// battery's Sleep moves it instead of waiting.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(_ context.Context, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	return nil
}

// barrier holds callers until size of them have arrived.
type barrier struct {
	mu   sync.Mutex
	n    int
	size int
	open chan struct{}
}

func (b *barrier) wait(ctx context.Context) {
	b.mu.Lock()
	b.n++
	if b.n == b.size {
		close(b.open)
	}
	b.mu.Unlock()
	select {
	case <-b.open:
	case <-ctx.Done():
	}
}

type laxPlayer struct {
	balance int64
	grants  map[string]int64 // open grants: id to value
}

type laxDebit struct {
	player  string
	amount  int64
	freebet string
	settled string // "", "win" or "rollback"
}

type laxMemory struct {
	content string
	answer  []byte
	status  int
	at      time.Time
}

// faultyWallet is a small in-memory seamless wallet of two test players, for
// the fault probes: correct unless a fault says otherwise. It knows the
// contract only as far as those probes need (a session, movements,
// idempotency, the signature); the rest of the battery is judged against
// operator-sim.
type faultyWallet struct {
	f     laxFaults
	clock *fakeClock
	race  *barrier

	mu      sync.Mutex
	players map[string]*laxPlayer
	tokens  map[string]string // token to player
	memory  map[string]laxMemory
	debits  map[string]*laxDebit
}

const laxSecondToken = "lax-token-second-0123456789"

func newFaultyWallet(f laxFaults) *faultyWallet {
	return &faultyWallet{
		f: f, clock: &fakeClock{now: time.Unix(1_700_000_000, 0)},
		race: &barrier{size: 10, open: make(chan struct{})},
		players: map[string]*laxPlayer{
			testPlayer:   {balance: testBalance, grants: map[string]int64{"lax-grant": 100}},
			secondPlayer: {balance: testBalance, grants: map[string]int64{}},
		},
		tokens: map[string]string{"lax-token-first-0123456789": testPlayer, laxSecondToken: secondPlayer},
		memory: map[string]laxMemory{}, debits: map[string]*laxDebit{},
	}
}

// laxRequest is every member of a wallet request the lax wallet reads.
type laxRequest struct {
	Token         string  `json:"token"`
	PlayerID      string  `json:"player_id"`
	Currency      string  `json:"currency"`
	Amount        int64   `json:"amount"`
	TransactionID string  `json:"transaction_id"`
	BetID         string  `json:"bet_id"`
	RoundID       string  `json:"round_id"`
	Type          string  `json:"type"`
	FreebetID     *string `json:"freebet_id"`
}

func (w *faultyWallet) key(player, id string) string {
	if w.f.foldCase {
		id = strings.ToLower(id)
	}
	if w.f.betsByTxOnly {
		player = ""
	}
	return player + "\x00" + id
}

func (w *faultyWallet) signed(r *http.Request, body []byte) bool {
	if r.Header.Get("Authorization") != "Bearer "+testKey {
		return false
	}
	got, err := hex.DecodeString(r.Header.Get("X-Signature"))
	mac := hmac.New(sha256.New, []byte(testSecret))
	mac.Write(body)
	want := mac.Sum(nil)
	if w.f.prefixSignature {
		return err == nil && len(got) > 0 && len(got) <= len(want) && hmac.Equal(got, want[:len(got)])
	}
	return err == nil && hmac.Equal(got, want)
}

func (w *faultyWallet) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	answer := func(status int, v map[string]any) {
		rw.Header().Set("Content-Type", "application/json")
		rw.WriteHeader(status)
		_ = json.NewEncoder(rw).Encode(v)
	}
	var req laxRequest
	if !w.signed(r, body) {
		answer(http.StatusUnauthorized, map[string]any{"status": "error", "error_code": "INVALID_SIGNATURE"})
		return
	}
	if err := json.Unmarshal(body, &req); err != nil || !wellFormed(r.URL.Path, body) || req.Amount < 0 {
		answer(http.StatusBadRequest, map[string]any{"status": "error", "error_code": "INTERNAL_ERROR"})
		return
	}
	if req.Currency != "BRL" && r.URL.Path != "/balance" {
		answer(http.StatusOK, map[string]any{"status": "error", "error_code": "CURRENCY_MISMATCH"})
		return
	}
	status, v := w.serve(r.Context(), r.URL.Path, req)
	answer(status, v)
}

// wellFormed is as much of the document's validation as keeps the hostile
// probes from moving this wallet's money: a movement carries an integer
// amount and a transaction_id string, and freebet_id on /bet and /win.
func wellFormed(route string, body []byte) bool {
	if route == "/balance" {
		return true
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil {
		return false
	}
	var amount int64
	var tx string
	if json.Unmarshal(m["amount"], &amount) != nil || string(m["amount"]) == "null" ||
		json.Unmarshal(m["transaction_id"], &tx) != nil || tx == "" {
		return false
	}
	_, hasFreebet := m["freebet_id"]
	return hasFreebet || route == "/rollback"
}

func (w *faultyWallet) serve(ctx context.Context, route string, req laxRequest) (int, map[string]any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	owner, live := w.tokens[req.Token]
	refuse := func(status int, code string) (int, map[string]any) {
		return status, map[string]any{"status": "error", "error_code": code}
	}
	if route == "/balance" {
		if !live {
			return refuse(http.StatusUnauthorized, "TOKEN_INVALID")
		}
		p := w.players[owner]
		grants := []map[string]any{}
		for id, amount := range p.grants {
			grants = append(grants, map[string]any{"id": id, "amount": amount})
		}
		return http.StatusOK, map[string]any{"status": "ok", "player_id": owner, "balance": p.balance, "currency": "BRL", "freebets": grants}
	}
	player := req.PlayerID
	if w.f.playerByToken && live {
		player = owner
	}
	p := w.players[player]
	if p == nil {
		return refuse(http.StatusOK, "PLAYER_NOT_FOUND")
	}
	content := fmt.Sprint(route, player, req.Amount, req.BetID, req.RoundID, req.Type, req.FreebetID != nil)
	mk := w.key(player, route+req.TransactionID)
	if m, ok := w.memory[mk]; ok && (w.f.forgetAfter == 0 || w.clock.Now().Sub(m.at) < w.f.forgetAfter) {
		if m.content != content {
			return refuse(http.StatusConflict, "DUPLICATE_TRANSACTION")
		}
		var v map[string]any
		_ = json.Unmarshal(m.answer, &v)
		return m.status, v
	}
	status, v := w.move(ctx, route, player, p, owner, req)
	if v["status"] == "ok" {
		b, _ := json.Marshal(v)
		w.memory[mk] = laxMemory{content: content, answer: b, status: status, at: w.clock.Now()}
	}
	return status, v
}

// move applies one movement of player p; w.mu is held.
func (w *faultyWallet) move(ctx context.Context, route, player string, p *laxPlayer, owner string, req laxRequest) (int, map[string]any) {
	ok := func() (int, map[string]any) {
		return http.StatusOK, map[string]any{"status": "ok", "balance": p.balance, "currency": "BRL"}
	}
	refuse := func(status int, code string) (int, map[string]any) {
		return status, map[string]any{"status": "error", "error_code": code, "balance": p.balance}
	}
	dk := w.key(player, req.BetID)
	d := w.debits[dk]
	switch route {
	case "/bet":
		if owner != player {
			return refuse(http.StatusOK, "TOKEN_INVALID")
		}
		if req.FreebetID != nil {
			if value, open := p.grants[*req.FreebetID]; !open || value != req.Amount {
				return refuse(http.StatusOK, "INSUFFICIENT_FUNDS")
			}
			if !w.f.freebetReuse {
				delete(p.grants, *req.FreebetID)
			}
			w.debits[w.key(player, req.TransactionID)] = &laxDebit{player: player, amount: req.Amount, freebet: *req.FreebetID}
			return ok()
		}
		if w.f.racyDebit && strings.Contains(req.TransactionID, "-conc") {
			seen := p.balance
			w.mu.Unlock()
			w.race.wait(ctx)
			w.mu.Lock()
			if req.Amount > seen {
				return refuse(http.StatusOK, "INSUFFICIENT_FUNDS")
			}
		} else if req.Amount > p.balance {
			return refuse(http.StatusOK, "INSUFFICIENT_FUNDS")
		}
		p.balance -= req.Amount
		w.debits[w.key(player, req.TransactionID)] = &laxDebit{player: player, amount: req.Amount}
		return ok()
	case "/win":
		if d == nil || (d.settled != "" && !w.f.settleAgain) {
			return refuse(http.StatusNotFound, "BET_NOT_FOUND")
		}
		d.settled = "win"
		p.balance += req.Amount
		return ok()
	case "/rollback":
		switch {
		case d == nil:
			return ok()
		case d.settled == "rollback" && !w.f.settleAgain:
			return ok()
		case d.settled == "win" && !w.f.settleAgain:
			return refuse(http.StatusOK, "BET_NOT_FOUND")
		case req.Amount != d.amount:
			return refuse(http.StatusOK, "DUPLICATE_TRANSACTION")
		}
		d.settled = "rollback"
		if d.freebet != "" {
			p.grants[d.freebet] = d.amount
			return ok()
		}
		p.balance += d.amount
		return ok()
	}
	return refuse(http.StatusNotFound, "INTERNAL_ERROR")
}

func (w *faultyWallet) balanceOf(player string) int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.players[player].balance
}

// faultChecks are the names of the fault probes' checks.
var faultChecks = []string{
	"concurrent bets near the balance",
	"retries after a delay move nothing",
	"second settlement: win then win",
	"second settlement: rollback then rollback",
	"second settlement: win then rollback",
	"second settlement: rollback then win",
	"short, truncated and wrong-length signatures refused",
	"movements naming another player move nothing",
	"ids differing only in case are two transactions",
	"freebet grant used twice",
}

// Each lax wallet below makes one mistake operators' wallets were measured
// making; the battery fails exactly the fault probe named for it, with the
// fix in the failure line, and the faultless one passes every fault probe.
// Whatever the wallet moved is given back: both players end where they
// started.
//
// Rule WC-1 WC-2 WC-3 WC-4 WC-5 WC-6 AUTH-1 AUTH-9 AUTH-15 BET-6 BET-8 ENV-12 FB-21
func TestFaultProbesFailTheirLaxWallet(t *testing.T) {
	cases := []struct {
		name   string
		faults laxFaults
		// wantFailed are the fault checks that must fail, and only they.
		wantFailed []string
		// wantEvidence must appear in the first failed check's evidence.
		wantEvidence string
		// keepsMoney: an older check of the battery, which does not give
		// back what it moved, fails on this fault too.
		keepsMoney bool
	}{
		{name: "no fault"},
		{
			// Rule WC-1 GEN-6: 10 bets on 350 left the balance at -650.
			name: "check and debit not atomic", faults: laxFaults{racyDebit: true},
			wantFailed:   []string{"concurrent bets near the balance"},
			wantEvidence: "MONEY MOVED (WC-1): the balance went to -650 on 10 concurrent bets of 100 on a balance of 350 (10 accepted where 3 fit)",
		},
		{
			// Rule WC-2 ENV-12: a memory of 2 s, retries 5 s later.
			name: "idempotency memory of 2 s", faults: laxFaults{forgetAfter: 2 * time.Second},
			wantFailed:   []string{"retries after a delay move nothing"},
			wantEvidence: "MONEY MOVED (WC-2): the wallet debited 100 cents on identical retries sent 5s later",
		},
		{
			// Rule WC-3 WIN-10 RB-9: every order of a second settlement.
			name: "settles a debit twice", faults: laxFaults{settleAgain: true},
			wantFailed: []string{"second settlement: win then win", "second settlement: rollback then rollback",
				"second settlement: win then rollback", "second settlement: rollback then win"},
			wantEvidence: "MONEY MOVED (WC-3): the wallet credited 100 cents on a win of a bet already settled by a win",
			keepsMoney:   true, // "win on a rolled-back bet refused" is paid 200
		},
		{
			// Rule AUTH-1 AUTH-15: a 1-byte signature is a prefix of the HMAC.
			name: "compares the signature over the bytes sent", faults: laxFaults{prefixSignature: true},
			wantFailed:   []string{"short, truncated and wrong-length signatures refused"},
			wantEvidence: "/balance signed with its first byte (2 hex digits): HTTP 200 ok",
		},
		{
			// Rule WC-4 ENV-12: a debit found by bet_id alone, the named player credited.
			name: "credits the player the win names", faults: laxFaults{betsByTxOnly: true},
			wantFailed:   []string{"movements naming another player move nothing"},
			wantEvidence: "MONEY MOVED (WC-4): the wallet credited 200 cents on /win of 200 naming the other player, with their token (the other player)",
		},
		{
			// Rule WC-4: the player taken from the token, player_id ignored.
			name: "takes the player from the token", faults: laxFaults{playerByToken: true},
			wantFailed:   []string{"movements naming another player move nothing"},
			wantEvidence: "MONEY MOVED (WC-4): the wallet credited 200 cents on /win of 200 naming the other player, with the bet's token (the first player)",
		},
		{
			// Rule WC-5 ENV-11: a case-insensitive key.
			name: "compares transaction_ids without case", faults: laxFaults{foldCase: true},
			wantFailed:   []string{"ids differing only in case are two transactions"},
			wantEvidence: "MONEY MOVED (WC-5): two bets whose transaction_ids differ only in case were answered ok and debited once",
		},
		{
			// Rule WC-6 BET-6 FB-21: a grant never marked spent.
			name: "spends a freebet grant twice", faults: laxFaults{freebetReuse: true},
			wantFailed:   []string{"freebet grant used twice"},
			wantEvidence: "MONEY MOVED (WC-6): the wallet credited 200 cents on the win of a second round of one freebet grant",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newFaultyWallet(tc.faults)
			srv := httptest.NewServer(w)
			t.Cleanup(srv.Close)
			target := walletcheck.Target{
				WalletURL: srv.URL, Operator: testOperator, Secret: testSecret, APIKey: testKey,
				Token: "lax-token-first-0123456789", SecondToken: secret.Secret(laxSecondToken), Currency: "BRL", GameID: "crash",
			}
			rep := run(t, target, walletcheck.Options{RetryDelay: 5 * time.Second, Sleep: w.clock.Sleep})
			out := table(t, rep)
			var failed []string
			for _, c := range rep.Checks {
				if slices.Contains(faultChecks, c.Name) {
					if c.Result == walletcheck.Fail {
						failed = append(failed, c.Name)
					} else if c.Result == walletcheck.Skip {
						t.Errorf("%s skipped: %s", c.Name, c.Evidence)
					}
				}
			}
			if !slices.Equal(failed, tc.wantFailed) {
				t.Errorf("failed fault checks %q, want %q:\n%s", failed, tc.wantFailed, out)
			}
			if len(tc.wantFailed) > 0 {
				c := checkNamed(t, rep, tc.wantFailed[0])
				if !strings.Contains(c.Evidence, tc.wantEvidence) {
					t.Errorf("%s: evidence %q lacks %q", c.Name, c.Evidence, tc.wantEvidence)
				}
				if c.Fix == "" || !strings.Contains(c.Evidence, c.Fix) || !strings.HasPrefix(c.Fix, "fix: ") {
					t.Errorf("%s: fix %q not in the failure line %q", c.Name, c.Fix, c.Evidence)
				}
			}
			for _, p := range []string{testPlayer, secondPlayer} {
				if got := w.balanceOf(p); got != testBalance && !tc.keepsMoney {
					t.Errorf("balance of %s %d after the run, want %d:\n%s", p, got, testBalance, out)
				}
			}
		})
	}
}
