//go:build integration

package suite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"
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

// simMovement is a row of operator-sim's ledger (its /admin/reconcile view).
type simMovement struct {
	OperatorTransactionID string  `json:"operator_transaction_id"`
	PlayerID              string  `json:"player_id"`
	TransactionID         string  `json:"transaction_id"`
	Kind                  string  `json:"kind"`
	Amount                int64   `json:"amount"`
	Delta                 int64   `json:"delta"`
	BetID                 *string `json:"bet_id"`
	RoundID               string  `json:"round_id"`
	FreebetID             *string `json:"freebet_id"`
	Type                  string  `json:"type"`
	Settlement            *string `json:"settlement"`
}

type simPlayer struct {
	PlayerID string   `json:"player_id"`
	Balance  int64    `json:"balance"`
	Moved    int64    `json:"moved"`
	OpenBets []string `json:"open_bets"`
}

type gameBet struct {
	ID, RoundID, PlayerID, Status, OperatorTxID string
	Amount                                      int64
	FreebetID                                   *string
	Payout                                      *int64
}

type gameMovement struct {
	TransactionID, Kind, PlayerID, RoundID, BetID, WinType, Status, OperatorTxID, LastError string
	Amount                                                                                  int64
	FreebetID                                                                               *string
	Attempts                                                                                int
}

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
// waiting for everything to settle. Any difference fails t:
//   - every movement of either side has its counterpart, with the same
//     player, kind, amount, bet, round, freebet and type, and the game kept
//     the operator's own transaction id (ENV-19);
//   - no transaction_id twice on the operator's side; every game movement is
//     done, after at most 20 attempts (LIM-2);
//   - each debit the operator confirmed ends in exactly one settlement that
//     matches the bet's fate (cashed out: one win of the payout, typed freebet
//     on a free round; cancelled or void: one rollback; lost: none, or a
//     zero_win when switched on);
//   - each player's balance is the initial one plus every movement's delta.
func (e *Env) Reconcile(t testing.TB) {
	t.Helper()
	e.Settled(t, 2*time.Minute)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	bets, moves := e.gameRecords(t, ctx)
	var sim struct {
		Movements []simMovement `json:"movements"`
		Players   []simPlayer   `json:"players"`
	}
	e.Admin(t, "/admin/reconcile", nil, &sim)

	var diffs []string
	diff := func(format string, args ...any) { diffs = append(diffs, fmt.Sprintf(format, args...)) }

	simByTx := map[string]simMovement{}
	opIDs := map[string]bool{}
	for _, m := range sim.Movements {
		k := m.PlayerID + "/" + m.TransactionID
		if _, dup := simByTx[k]; dup {
			diff("operator ledger: transaction_id %s twice for one player", m.TransactionID)
		}
		simByTx[k] = m
		if opIDs[m.OperatorTransactionID] {
			diff("operator ledger: operator transaction id %s twice", m.OperatorTransactionID)
		}
		opIDs[m.OperatorTransactionID] = true
	}
	betByID := map[string]gameBet{}
	for _, b := range bets {
		betByID[b.ID] = b
	}
	settlements := map[string][]gameMovement{} // bet_id -> game movements
	gameByTx := map[string]gameMovement{}
	for _, m := range moves {
		gameByTx[m.PlayerID+"/"+m.TransactionID] = m
		settlements[m.BetID] = append(settlements[m.BetID], m)
		if m.Status != "done" {
			diff("game movement %s (%s of bet %s): status %s after %d attempts (%s)", m.TransactionID, m.Kind, m.BetID, m.Status, m.Attempts, m.LastError)
		}
		if m.Attempts > 20 {
			diff("game movement %s: %d attempts (LIM-2: at most 20)", m.TransactionID, m.Attempts)
		}
		s, ok := simByTx[m.PlayerID+"/"+m.TransactionID]
		if !ok {
			if m.Status == "done" {
				diff("game movement %s (%s %d of bet %s) is done but not in the operator's ledger", m.TransactionID, m.Kind, m.Amount, m.BetID)
			}
			continue
		}
		if s.Kind != m.Kind || s.Amount != m.Amount || deref(s.BetID) != m.BetID || s.RoundID != m.RoundID {
			diff("movement %s: game %s %d bet %s round %s, operator %s %d bet %s round %s",
				m.TransactionID, m.Kind, m.Amount, m.BetID, m.RoundID, s.Kind, s.Amount, deref(s.BetID), s.RoundID)
		}
		if m.Kind == "win" && (s.Type != m.WinType || deref(s.FreebetID) != deref(m.FreebetID)) {
			diff("win %s: game type %s freebet %q, operator type %s freebet %q", m.TransactionID, m.WinType, deref(m.FreebetID), s.Type, deref(s.FreebetID))
		}
		if m.Status == "done" && m.OperatorTxID != s.OperatorTransactionID {
			diff("movement %s: the game kept operator id %q, the operator says %q (ENV-19)", m.TransactionID, m.OperatorTxID, s.OperatorTransactionID)
		}
		if s.Delta != expectedDelta(m, betByID, simByTx) {
			diff("movement %s (%s %d): operator moved %d", m.TransactionID, m.Kind, m.Amount, s.Delta)
		}
	}
	for k, s := range simByTx {
		switch s.Kind {
		case "win", "rollback":
			if _, ok := gameByTx[k]; !ok {
				diff("operator %s %s (%d) has no movement in the game", s.Kind, s.TransactionID, s.Amount)
			}
		case "bet":
			b, ok := betByID[s.TransactionID]
			if !ok {
				diff("operator debit %s (%d) has no bet in the game", s.TransactionID, s.Amount)
				continue
			}
			if b.PlayerID != s.PlayerID || b.Amount != s.Amount || b.RoundID != s.RoundID || deref(b.FreebetID) != deref(s.FreebetID) {
				diff("debit %s: game player %s %d round %s freebet %q, operator player %s %d round %s freebet %q",
					b.ID, b.PlayerID, b.Amount, b.RoundID, deref(b.FreebetID), s.PlayerID, s.Amount, s.RoundID, deref(s.FreebetID))
			}
			want := int64(-s.Amount)
			if s.FreebetID != nil {
				want = 0
			}
			if s.Delta != want {
				diff("debit %s (%d, freebet %q): operator moved %d", s.TransactionID, s.Amount, deref(s.FreebetID), s.Delta)
			}
			if b.Status == "pending" || b.Status == "refused" && (s.Settlement == nil || *s.Settlement != "rollback") {
				diff("debit %s confirmed by the operator, but the game's bet is %s and it was not rolled back", b.ID, b.Status)
			}
			if b.OperatorTxID != "" && b.OperatorTxID != s.OperatorTransactionID {
				diff("debit %s: the game kept operator id %q, the operator says %q", b.ID, b.OperatorTxID, s.OperatorTransactionID)
			}
			e.checkSettlement(b, s, settlements[b.ID], diff)
		}
	}
	for _, b := range bets {
		if _, ok := simByTx[b.PlayerID+"/"+b.ID]; !ok {
			switch b.Status {
			case "accepted", "cashed_out", "lost", "cancelled":
				diff("game bet %s is %s but the operator never confirmed its debit", b.ID, b.Status)
			}
		}
	}
	for _, p := range sim.Players {
		e.mu.Lock()
		initial, ok := e.initial[p.PlayerID]
		e.mu.Unlock()
		if ok && p.Balance != initial+p.Moved {
			diff("player %s: balance %d, but initial %d + movements %d = %d", p.PlayerID, p.Balance, initial, p.Moved, initial+p.Moved)
		}
	}
	sort.Strings(diffs)
	if len(diffs) > 0 {
		if len(diffs) > 40 {
			diffs = append(diffs[:40], fmt.Sprintf("... and %d more", len(diffs)-40))
		}
		t.Errorf("reconciliation: %d difference(s) between operator-sim's ledger and the game:\n  %s", len(diffs), strings.Join(diffs, "\n  "))
		return
	}
	t.Logf("reconciliation: zero differences (%d game bets, %d game movements, %d operator movements, %d players)",
		len(bets), len(moves), len(sim.Movements), len(sim.Players))
}

// checkSettlement: one confirmed debit, exactly one settlement matching the bet.
func (e *Env) checkSettlement(b gameBet, s simMovement, ms []gameMovement, diff func(string, ...any)) {
	kinds := make([]string, 0, len(ms))
	for _, m := range ms {
		kinds = append(kinds, m.Kind+"/"+m.WinType)
	}
	switch b.Status {
	case "cashed_out":
		if len(ms) != 1 || ms[0].Kind != "win" {
			diff("bet %s cashed out: want one win, the game has %v", b.ID, kinds)
			return
		}
		if b.Payout == nil || ms[0].Amount != *b.Payout {
			diff("bet %s cashed out for %v: its win moves %d", b.ID, b.Payout, ms[0].Amount)
		}
		want := "win"
		if b.FreebetID != nil {
			want = "freebet"
		}
		if ms[0].WinType != want {
			diff("bet %s (freebet %q): win typed %s, want %s", b.ID, deref(b.FreebetID), ms[0].WinType, want)
		}
		if deref(ms[0].FreebetID) != deref(b.FreebetID) {
			diff("bet %s: its win carries freebet_id %q, the debit %q (WIN-17)", b.ID, deref(ms[0].FreebetID), deref(b.FreebetID))
		}
	case "lost":
		if e.opts.ZeroWin {
			if len(ms) != 1 || ms[0].WinType != "zero_win" {
				diff("bet %s lost: want one zero_win, the game has %v", b.ID, kinds)
			}
		} else if len(ms) != 0 {
			diff("bet %s lost: want no settlement call without zero_win, the game has %v", b.ID, kinds)
		}
		if !e.opts.ZeroWin && s.Settlement != nil {
			diff("bet %s lost, but the operator closed it as %s", b.ID, *s.Settlement)
		}
	case "cancelled", "void", "refused":
		if len(ms) != 1 || ms[0].Kind != "rollback" {
			diff("bet %s %s: want one rollback, the game has %v", b.ID, b.Status, kinds)
		}
	default:
		diff("bet %s still %s after settling", b.ID, b.Status)
	}
	if b.Status != "lost" || e.opts.ZeroWin {
		if s.Settlement == nil {
			diff("debit %s (%s in the game) is still open at the operator", b.ID, b.Status)
		}
	}
}

// expectedDelta is what a win or rollback must move at the operator.
func expectedDelta(m gameMovement, bets map[string]gameBet, sim map[string]simMovement) int64 {
	switch m.Kind {
	case "win":
		return m.Amount
	case "rollback":
		debit, ok := sim[m.PlayerID+"/"+m.BetID]
		if !ok {
			return 0 // nothing was debited: nothing to give back (RB-13)
		}
		return -debit.Delta
	}
	return 0
}

func (e *Env) gameRecords(t testing.TB, ctx context.Context) ([]gameBet, []gameMovement) {
	t.Helper()
	db := e.DB()
	rows, err := db.QueryContext(ctx, `SELECT id, round_id, player_id, status, operator_tx_id, amount, freebet_id, payout
		FROM bets WHERE NOT demo ORDER BY placed_at`)
	if err != nil {
		t.Fatalf("suite: read the game's bets: %v", err)
	}
	var bets []gameBet
	for rows.Next() {
		var b gameBet
		var fb sql.NullString
		var payout sql.NullInt64
		if err := rows.Scan(&b.ID, &b.RoundID, &b.PlayerID, &b.Status, &b.OperatorTxID, &b.Amount, &fb, &payout); err != nil {
			t.Fatalf("suite: scan bet: %v", err)
		}
		if fb.Valid {
			b.FreebetID = &fb.String
		}
		if payout.Valid {
			b.Payout = &payout.Int64
		}
		bets = append(bets, b)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("suite: bets: %v", err)
	}
	_ = rows.Close()
	rows, err = db.QueryContext(ctx, `SELECT transaction_id, kind, player_id, round_id, bet_id, win_type, status,
		operator_tx_id, last_error, amount, freebet_id, attempts FROM movements ORDER BY created_at`)
	if err != nil {
		t.Fatalf("suite: read the game's movements: %v", err)
	}
	defer rows.Close()
	var moves []gameMovement
	for rows.Next() {
		var m gameMovement
		var fb sql.NullString
		if err := rows.Scan(&m.TransactionID, &m.Kind, &m.PlayerID, &m.RoundID, &m.BetID, &m.WinType, &m.Status,
			&m.OperatorTxID, &m.LastError, &m.Amount, &fb, &m.Attempts); err != nil {
			t.Fatalf("suite: scan movement: %v", err)
		}
		if fb.Valid {
			m.FreebetID = &fb.String
		}
		moves = append(moves, m)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("suite: movements: %v", err)
	}
	return bets, moves
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
