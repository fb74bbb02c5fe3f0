//go:build integration

package suite

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/internal/reconcile"
	"github.com/crashstudio/crashgame/internal/store"
)

// ---- the wallet direction as the TLS front saw it ----------------------------

// Exchange is one wallet call as the TLS front logged it.
type Exchange struct {
	Route             string `json:"route"`
	Status            int    `json:"status"`
	TransactionID     string `json:"transaction_id"`
	RequestID         string `json:"request_id"`
	ErrorCode         string `json:"error_code"`
	RequestViolation  string `json:"request_violation"`
	ResponseViolation string `json:"response_violation"`
	ClientGone        bool   `json:"client_gone"`
}

// Exchanges returns every wallet call so far.
func (e *Env) Exchanges(t testing.TB) []Exchange {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	lines, err := logLines(ctx, e.front)
	if err != nil {
		t.Fatalf("suite: TLS front logs: %v", err)
	}
	var out []Exchange
	for _, l := range lines {
		if !strings.Contains(l, `"msg":"exchange"`) {
			continue
		}
		var x Exchange
		if err := json.Unmarshal([]byte(l), &x); err != nil {
			t.Fatalf("suite: TLS front log line %q: %v", l, err)
		}
		out = append(out, x)
	}
	return out
}

// CheckWallet fails t for every wallet exchange that broke the document or
// was refused as malformed or unauthenticated, except those injected says the
// scenario caused on purpose. It returns the exchanges.
func (e *Env) CheckWallet(t testing.TB, injected func(Exchange) bool) []Exchange {
	t.Helper()
	xs := e.Exchanges(t)
	attempts := map[string]int{}
	for _, x := range xs {
		if x.TransactionID != "" {
			attempts[x.Route+" "+x.TransactionID]++
		}
		if injected != nil && injected(x) {
			continue
		}
		switch {
		case x.RequestViolation != "":
			t.Errorf("wallet: the game sent %s breaking wallet.v1.yaml (request_id %s): %s", x.Route, x.RequestID, x.RequestViolation)
		case x.ResponseViolation != "" && x.Status != 502:
			t.Errorf("wallet: operator-sim answered %s %d breaking wallet.v1.yaml: %s", x.Route, x.Status, x.ResponseViolation)
		case x.Status == 400 || x.Status == 403:
			t.Errorf("wallet: operator-sim refused %s as malformed (%d %s, request_id %s)", x.Route, x.Status, x.ErrorCode, x.RequestID)
		case x.ErrorCode == "INVALID_SIGNATURE":
			t.Errorf("wallet: operator-sim refused the key or signature on %s (request_id %s)", x.Route, x.RequestID)
		}
	}
	for k, n := range attempts {
		if n > 20 {
			t.Errorf("wallet: %s was attempted %d times (LIM-2: at most 20)", k, n)
		}
	}
	return xs
}

// ---- reconciliation -----------------------------------------------------------

// simMovement is a row of operator-sim's ledger (its /admin/ledger and
// /admin/reconcile views).
type simMovement = reconcile.OpMovement

// Settled waits until the game has nothing in flight: no pending movement and
// no bet still pending or live. Rounds keep turning meanwhile.
func (e *Env) Settled(t testing.TB, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	var pendingMoves, liveBets int
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := e.DB().QueryRowContext(ctx, `SELECT
			(SELECT count(*) FROM movements WHERE status = 'pending'),
			(SELECT count(*) FROM bets WHERE status IN ('pending', 'accepted'))`).Scan(&pendingMoves, &liveBets)
		cancel()
		if err == nil && pendingMoves == 0 && liveBets == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("suite: not settled within %s: %d movements pending, %d bets live (last error: %v)", within, pendingMoves, liveBets, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// Reconcile compares operator-sim's ledger with the game's records, after
// waiting for everything to settle, with internal/reconcile's Compare (the
// comparison `crashgame reconcile` prints). Any difference fails t: every
// movement of either side has its counterpart with the same player, kind,
// amount, bet, round, freebet and type, and the game kept the operator's own
// transaction id (ENV-19); no duplicates; every game movement done within 20
// attempts (LIM-2); each confirmed debit ends in exactly one settlement that
// matches the bet's fate; each player the suite created holds its initial
// balance plus its movements.
func (e *Env) Reconcile(t testing.TB) {
	t.Helper()
	e.Settled(t, 2*time.Minute)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e.mu.Lock()
	dsn := e.dsn
	e.mu.Unlock()
	st, err := store.Open(ctx, dsn) // the game's own reads, as crashgame reconcile makes them
	if err != nil {
		t.Fatalf("suite: %v", err)
	}
	defer st.Close()
	game, err := reconcile.ReadGame(ctx, st.Reconcile(), reconcile.Filter{})
	if err != nil {
		t.Fatalf("suite: %v", err)
	}
	ledger, err := reconcile.ReadOperatorSim(ctx, e.http, e.simURL, e.Secret)
	if err != nil {
		t.Fatalf("suite: %v", err)
	}
	e.mu.Lock()
	initial := maps.Clone(e.initial)
	e.mu.Unlock()
	r := reconcile.Compare(game, ledger, reconcile.Options{ZeroWin: e.opts.ZeroWin, InitialBalances: initial})
	if diffs := r.Differences; len(diffs) > 0 {
		if len(diffs) > 40 {
			diffs = append(diffs[:40:40], fmt.Sprintf("... and %d more", len(diffs)-40))
		}
		t.Errorf("reconciliation: %d difference(s) between operator-sim's ledger and the game (%s):\n  %s",
			len(r.Differences), r.Counts(), strings.Join(diffs, "\n  "))
		return
	}
	t.Logf("reconciliation: zero differences (%s; %d operator movements)", r.Counts(), len(ledger.Movements))
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
