//go:build integration

package suite

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"
)

// supportTx is a transaction as the back office's routes show it.
type supportTx struct {
	TransactionID string `json:"transaction_id"`
	Kind          string `json:"kind"`
	Status        string `json:"status"`
	Amount        int64  `json:"amount"`
	BetID         string `json:"bet_id"`
	Attempts      int    `json:"attempts"`
	LastError     string `json:"last_error"`
	Redeliveries  []struct {
		RequestedBy    string `json:"requested_by"`
		AttemptsBefore int    `json:"attempts_before"`
	} `json:"redeliveries"`
}

// TestSupportFixesAParkedWin: the operator's support, with the documented
// routes only, answers "where is my win": a cashout whose /win the wallet
// refuses 20 times is parked as exhausted, found through the transactions
// route, delivered again once the wallet is fixed (the same transaction_id,
// the re-delivery in its history), shown delivered in the round's details,
// and the reconciliation then finds no difference.
func TestSupportFixesAParkedWin(t *testing.T) {
	laneBackoff.join(t)
	e := Start(t, Options{})
	ps, ss := enter(t, e, 1, 100_000)
	e.SetFaults(t, map[string]any{"win": map[string]any{"kind": "5xx", "status": 503, "count": 20}})
	began := time.Now()

	// A win: a bet cashed out at 1.01x (a round may crash at 1.00x: again).
	var won Bet
	for range 10 {
		ss[0].AwaitBetting(t, 900*time.Millisecond)
		b := ss[0].MustBet(t, 1000, 101, "")
		if won = ss[0].AwaitBetSettled(t, b.BetID); won.Status == "cashed_out" {
			break
		}
	}
	if won.Status != "cashed_out" {
		t.Fatal("no bet cashed out in 10 rounds")
	}

	// Its /win fails 20 times (3 to 6 minutes of back-off) and is parked.
	list := func(status string) []supportTx {
		t.Helper()
		r := e.Operator(t, "/v1/transactions", map[string]any{"from": began.Add(-time.Minute).UnixMilli(),
			"to": time.Now().Add(time.Minute).UnixMilli(), "status": status})
		if r.Status != http.StatusOK {
			t.Fatalf("/v1/transactions: %s", r)
		}
		var page struct {
			Items []supportTx `json:"items"`
		}
		if err := json.Unmarshal(r.Body, &page); err != nil {
			t.Fatal(err)
		}
		return page.Items
	}
	var parked supportTx
	deadline := time.Now().Add(9 * time.Minute)
	for {
		for _, tx := range list("exhausted") {
			if tx.BetID == won.BetID {
				parked = tx
			}
		}
		if parked.TransactionID != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the win was not parked as exhausted within 9 minutes")
		}
		time.Sleep(time.Second)
	}
	t.Logf("parked after %s: %+v", time.Since(began).Round(time.Second), parked)
	if parked.Kind != "win" || parked.Attempts != 20 || parked.LastError == "" || parked.Amount != won.Payout {
		t.Fatalf("the parked win: %+v (bet %+v)", parked, won)
	}

	// The wallet is fixed; support delivers the win again.
	e.SetFaults(t, map[string]any{})
	r := e.Operator(t, "/v1/transactions/redeliver", map[string]any{"transaction_id": parked.TransactionID})
	var answer struct {
		Redelivered bool      `json:"redelivered"`
		Transaction supportTx `json:"transaction"`
	}
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &answer) != nil || !answer.Redelivered ||
		answer.Transaction.Status != "pending" || len(answer.Transaction.Redeliveries) != 1 {
		t.Fatalf("redeliver: %s", r)
	}
	if again := e.Operator(t, "/v1/transactions/redeliver", map[string]any{"transaction_id": parked.TransactionID}); again.Status != http.StatusOK ||
		json.Unmarshal(again.Body, &answer) != nil || answer.Redelivered {
		t.Fatalf("a second request re-delivered again: %s", again)
	}
	e.Settled(t, 2*time.Minute)

	// The round's details show the win delivered, once re-delivered.
	r = e.Operator(t, "/v1/rounds/details", map[string]any{"round_id": won.RoundID, "player_id": ps[0].ID})
	var details struct {
		Round struct {
			Status     string `json:"status"`
			CrashPoint int64  `json:"crash_point"`
			Hash       string `json:"hash"`
		} `json:"round"`
		Bets []struct {
			BetID     string      `json:"bet_id"`
			Status    string      `json:"status"`
			Movements []supportTx `json:"movements"`
		} `json:"bets"`
	}
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &details) != nil || len(details.Bets) != 1 {
		t.Fatalf("round details: %s", r)
	}
	b := details.Bets[0]
	if details.Round.Status != "finished" || details.Round.Hash == "" || b.BetID != won.BetID || b.Status != "cashed_out" || len(b.Movements) != 2 ||
		b.Movements[0].Kind != "bet" || b.Movements[1].TransactionID != parked.TransactionID || b.Movements[1].Status != "delivered" ||
		len(b.Movements[1].Redeliveries) != 1 || b.Movements[1].Redeliveries[0].AttemptsBefore != 20 {
		t.Fatalf("round details after the re-delivery: %s", fmt.Sprint(string(r.Body)))
	}
	e.Reconcile(t)
}
