package operatorsim

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/gen/wallet"
	"github.com/crashstudio/crashgame/internal/store/ledger"
)

// The tests of this file drive the teller directly (no HTTP) over a real
// ledger, to check what group commit must not change in the money rules.

// ledgerKinds are the ledgers the tests run on: in memory, and a file (WAL,
// durable commits, as in the load runs).
var ledgerKinds = []struct {
	name string
	path func(t *testing.T) string
}{
	{"memory", func(*testing.T) string { return ledger.MemoryDB }},
	{"file", func(t *testing.T) string { return filepath.Join(t.TempDir(), "ledger.db") }},
}

// heldStore is a ledger whose InGroupTx calls wait in held until the test
// runs them (runHeld) as one shared transaction: the test fixes which
// movements share a transaction, and in which order.
type heldStore struct {
	*ledger.Store
	held chan heldCall
}

type heldCall struct {
	fn   func(ctx context.Context) error
	done chan error
}

func (h *heldStore) InGroupTx(_ context.Context, fn func(ctx context.Context) error) error {
	c := heldCall{fn: fn, done: make(chan error, 1)}
	h.held <- c
	return <-c.done
}

// newTestTeller opens a ledger at path with player p1 holding balance cents,
// and returns a teller over it, with the ledger wrapped in a heldStore when
// held is set, and a session token of p1.
func newTestTeller(t *testing.T, path string, balance int64, held bool) (*teller, *heldStore, string) {
	t.Helper()
	ctx := context.Background()
	st, err := ledger.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	l := &teller{store: st, now: time.Now, tokenTTL: time.Hour}
	var h *heldStore
	if held {
		h = &heldStore{Store: st, held: make(chan heldCall)}
		l.store = h
	}
	if err := l.createPlayer(ctx, &ledger.PlayerRecord{PlayerID: "p1", Currency: "BRL", Balance: balance}); err != nil {
		t.Fatal(err)
	}
	s, err := l.issueToken(ctx, "p1", 0)
	if err != nil {
		t.Fatal(err)
	}
	return l, h, s.Token
}

func testBet(token, txID string, amount int64) *wallet.BetRequest {
	return &wallet.BetRequest{
		Amount: amount, Currency: "BRL", Operator: "dev", PlayerId: "p1", RequestId: "req-" + txID,
		RoundId: "round-1", Timestamp: time.Now().UnixMilli(), Token: token, TransactionId: txID,
	}
}

// betCall is one /bet of a test and what the teller answered.
type betCall struct {
	req *wallet.BetRequest
	out *outcome
	err error
}

// answer is how a test reads an outcome: "ok <balance>" (with " replayed"
// on a replay), "<error code>" or "<error code> <balance>" for a refusal.
func (c *betCall) answer(t *testing.T) string {
	t.Helper()
	switch {
	case c.err != nil:
		return "error"
	case c.out.refused != nil && c.out.refused.balance != nil:
		return fmt.Sprintf("%s %d", c.out.refused.code, *c.out.refused.balance)
	case c.out.refused != nil:
		return c.out.refused.code
	}
	var body struct {
		Status  string `json:"status"`
		Balance int64  `json:"balance"`
	}
	if err := json.Unmarshal(c.out.body, &body); err != nil || body.Status != "ok" {
		t.Fatalf("success body %s: %v", c.out.body, err)
	}
	a := fmt.Sprintf("ok %d", body.Balance)
	if c.out.replayed {
		a += " replayed"
	}
	return a
}

// runHeld starts the bets one after another, each once the one before waits
// for its transaction, then runs them all in one shared transaction (with
// extra after them) and answers each as InGroupTx does: the transaction's
// error if it failed, else the call's own.
func runHeld(t *testing.T, l *teller, h *heldStore, calls []*betCall, extra ...func(ctx context.Context) error) {
	t.Helper()
	var wg sync.WaitGroup
	held := make([]heldCall, 0, len(calls))
	for _, c := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.out, c.err = l.Bet(context.Background(), c.req)
		}()
		select {
		case hc := <-h.held:
			held = append(held, hc)
		case <-time.After(10 * time.Second):
			t.Fatalf("bet %s never asked for its transaction", c.req.TransactionId)
		}
	}
	fns := make([]func(ctx context.Context) error, 0, len(held)+len(extra))
	for _, hc := range held {
		fns = append(fns, hc.fn)
	}
	errs, err := h.InSharedTx(context.Background(), append(fns, extra...)...)
	for i, hc := range held {
		if err != nil {
			hc.done <- err
		} else {
			hc.done <- errs[i]
		}
	}
	wg.Wait()
}

// failCommit makes the shared transaction's COMMIT fail: with foreign keys
// deferred, a movement of a player that does not exist is accepted by its
// INSERT and refused by the commit.
func failCommit(st *ledger.Store) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		if err := st.ExecForTest(ctx, "PRAGMA defer_foreign_keys = ON"); err != nil {
			return err
		}
		return st.InsertMovement(ctx, &ledger.MovementRecord{
			PlayerID: "no-such-player", TransactionID: "orphan", Kind: ledger.KindWin, Amount: 1, Delta: 1,
			Currency: "BRL", RequestHash: []byte{1}, ResponseStatus: 200, ResponseBody: []byte("{}"),
		})
	}
}

// Rule BET-8 BET-9 BET-10 GEN-1: bets that share one transaction keep every
// money rule: each decides on the balance the bets before it left, a refusal
// (funds, token, divergent duplicate) fails no other bet, a replay answers the
// stored bytes, and a failed commit answers no bet as a success.
func TestTellerBetsInOneTransaction(t *testing.T) {
	t.Parallel()
	const bad = "not-a-token-of-anybody"
	tests := []struct {
		name       string
		bets       func(tok string) []*wallet.BetRequest
		failCommit bool
		want       []string
		wantSame   [2]int // two bets whose answers must be the same bytes ({0, 0}: none)
		wantBal    int64
		wantTxIDs  string
		wantRetry  string // the answer to b1 of 100 again, after the transaction
	}{
		{
			name: "the second bet checks the balance after the first",
			bets: func(tok string) []*wallet.BetRequest {
				return []*wallet.BetRequest{testBet(tok, "b1", 600), testBet(tok, "b2", 600)}
			},
			want:    []string{"ok 400", "INSUFFICIENT_FUNDS 400"},
			wantBal: 400, wantTxIDs: "b1", wantRetry: codeDuplicateTransaction,
		},
		{
			name: "refusals between successes",
			bets: func(tok string) []*wallet.BetRequest {
				return []*wallet.BetRequest{
					testBet(tok, "b1", 100), testBet(bad, "b2", 100), testBet(tok, "b3", 100),
					testBet(tok, "b1", 200), testBet(tok, "b4", 5000), testBet(tok, "b5", 100),
				}
			},
			want: []string{
				"ok 900", codeTokenInvalid, "ok 800",
				codeDuplicateTransaction, "INSUFFICIENT_FUNDS 800", "ok 700",
			},
			wantBal: 700, wantTxIDs: "b1 b3 b5", wantRetry: "ok 900 replayed",
		},
		{
			name: "a replay inside the transaction answers the stored bytes",
			bets: func(tok string) []*wallet.BetRequest {
				again := testBet(tok, "b1", 100)
				again.RequestId, again.Timestamp = "req-b1-again", again.Timestamp+1
				return []*wallet.BetRequest{testBet(tok, "b1", 100), again, testBet(tok, "b2", 100)}
			},
			want:     []string{"ok 900", "ok 900 replayed", "ok 800"},
			wantSame: [2]int{0, 1},
			wantBal:  800, wantTxIDs: "b1 b2", wantRetry: "ok 900 replayed",
		},
		{
			name: "a failed commit fails every bet",
			bets: func(tok string) []*wallet.BetRequest {
				return []*wallet.BetRequest{testBet(tok, "b1", 100), testBet(tok, "b2", 100)}
			},
			failCommit: true,
			want:       []string{"error", "error"},
			wantBal:    1000, wantTxIDs: "", wantRetry: "ok 900",
		},
	}
	for _, tt := range tests {
		for _, k := range ledgerKinds {
			t.Run(tt.name+"/"+k.name, func(t *testing.T) {
				t.Parallel()
				l, h, tok := newTestTeller(t, k.path(t), 1000, true)
				var calls []*betCall
				for _, req := range tt.bets(tok) {
					calls = append(calls, &betCall{req: req})
				}
				var extra []func(ctx context.Context) error
				if tt.failCommit {
					extra = append(extra, failCommit(h.Store))
				}
				runHeld(t, l, h, calls, extra...)
				for i, c := range calls {
					if got := c.answer(t); got != tt.want[i] {
						t.Errorf("bet %d (%s) answered %q, want %q (error %v)", i, c.req.TransactionId, got, tt.want[i], c.err)
					}
					if c.err != nil && c.out != nil {
						t.Errorf("bet %d failed (%v) and still answered %+v", i, c.err, c.out)
					}
				}
				if a, b := tt.wantSame[0], tt.wantSame[1]; a != b && string(calls[a].out.body) != string(calls[b].out.body) {
					t.Errorf("bet %d answered %s, its replay %s", a, calls[a].out.body, calls[b].out.body)
				}
				p, err := h.Player(context.Background(), "p1")
				if err != nil {
					t.Fatal(err)
				}
				if p.Balance != tt.wantBal {
					t.Errorf("balance %d, want %d", p.Balance, tt.wantBal)
				}
				ms, err := h.Movements(context.Background(), "p1", 0)
				if err != nil {
					t.Fatal(err)
				}
				got := ""
				for i, m := range ms {
					if i > 0 {
						got += " "
					}
					got += m.TransactionID
				}
				if got != tt.wantTxIDs {
					t.Errorf("movements %q, want %q", got, tt.wantTxIDs)
				}
				// A retry after the transaction, failed or not, is decided on
				// what it left.
				retry := &betCall{req: testBet(tok, "b1", 100)}
				runHeld(t, l, h, []*betCall{retry})
				if got := retry.answer(t); got != tt.wantRetry {
					t.Errorf("retry of b1 answered %q, want %q", got, tt.wantRetry)
				}
			})
		}
	}
}

// Rule BET-10 GEN-1: concurrent bets of one player through the real group
// committer that together exceed the balance: exactly the bets the balance
// covers succeed, each answering the balance after its own debit, the others
// are refused INSUFFICIENT_FUNDS with the balance left, never below zero.
func TestTellerConcurrentBetsNeverOverdraw(t *testing.T) {
	t.Parallel()
	tests := []struct {
		balance, amount int64
		bets, wantOK    int
	}{
		{balance: 10_000, amount: 300, bets: 64, wantOK: 33},
		{balance: 1000, amount: 1000, bets: 32, wantOK: 1},
		{balance: 100_000, amount: 100, bets: 256, wantOK: 256},
	}
	for _, tt := range tests {
		for _, k := range ledgerKinds {
			t.Run(fmt.Sprintf("bets=%d/amount=%d/%s", tt.bets, tt.amount, k.name), func(t *testing.T) {
				t.Parallel()
				l, _, tok := newTestTeller(t, k.path(t), tt.balance, false)
				calls := make([]*betCall, tt.bets)
				var start, done sync.WaitGroup
				start.Add(1)
				for i := range calls {
					calls[i] = &betCall{req: testBet(tok, fmt.Sprintf("b%03d", i), tt.amount)}
					done.Add(1)
					go func() {
						defer done.Done()
						start.Wait()
						calls[i].out, calls[i].err = l.Bet(context.Background(), calls[i].req)
					}()
				}
				start.Done()
				done.Wait()
				left := tt.balance - int64(tt.wantOK)*tt.amount
				answers := map[string]int{}
				for _, c := range calls {
					answers[c.answer(t)]++
				}
				want := map[string]int{}
				for n := 1; n <= tt.wantOK; n++ {
					want[fmt.Sprintf("ok %d", tt.balance-int64(n)*tt.amount)] = 1
				}
				if tt.bets > tt.wantOK {
					want[fmt.Sprintf("INSUFFICIENT_FUNDS %d", left)] = tt.bets - tt.wantOK
				}
				if fmt.Sprint(answers) != fmt.Sprint(want) {
					t.Fatalf("answers %v, want %v", answers, want)
				}
				p, err := l.store.Player(context.Background(), "p1")
				if err != nil {
					t.Fatal(err)
				}
				if p.Balance != left {
					t.Fatalf("balance %d, want %d", p.Balance, left)
				}
			})
		}
	}
}
