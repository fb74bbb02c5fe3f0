package table_test

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/gen/table"
	"github.com/crashstudio/crashgame/internal/engine"
	tablesrv "github.com/crashstudio/crashgame/internal/table"
)

// defaultLimits are the installation's budgets, as a player meets them.
var defaultLimits = envOptions{rate: tablesrv.DefaultReadRate, burst: tablesrv.DefaultReadBurst,
	actionRate: tablesrv.DefaultActionRate, actionBurst: tablesrv.DefaultActionBurst}

// betAndFly places a bet of 10.00 at the start of a betting phase and waits
// for take-off.
func (e *env) betAndFly(t *testing.T, session string) table.BetPlaced {
	t.Helper()
	e.waitPhase(t, engine.PhaseBetting, 1500*time.Millisecond)
	rec := e.call(t, "POST", "/api/v1/bets", session, map[string]any{"amount": 1000})
	if rec.Code != http.StatusCreated {
		t.Fatalf("bet: %d %s", rec.Code, rec.Body)
	}
	placed := decode[table.BetPlaced](t, rec)
	e.waitPhase(t, engine.PhaseFlying, 0)
	return placed
}

// cashoutPays cashes placed out and reports false when the round crashed
// first (a crash at 1.00x happens); any other answer but 200 fails.
func (e *env) cashoutPays(t *testing.T, session string, placed table.BetPlaced) bool {
	t.Helper()
	rec := e.call(t, "POST", "/api/v1/bets/"+placed.BetId+"/cashout", session, nil)
	if got := decode[table.Error](t, rec); rec.Code == http.StatusConflict && got.ErrorCode == table.ErrorCodeRoundCrashed {
		return false
	}
	if rec.Code != http.StatusOK {
		t.Fatalf("cashout: %d %s", rec.Code, rec.Body)
	}
	return true
}

// A burst of reads (a second tab, a reconnecting page, a client that polls)
// uses the read budget only: the cashout that follows is paid.
func TestReadsNeverCostACashout(t *testing.T) {
	t.Parallel()
	e := newEnv(t, defaultLimits)
	s := e.openReal(t)
	for attempt := 0; ; attempt++ {
		placed := e.betAndFly(t, s)
		limited := 0
		for range 40 {
			rec := e.call(t, "GET", "/api/v1/round", s, nil)
			if rec.Code == http.StatusTooManyRequests {
				limited++
				if rec.Header().Get("Retry-After") != "1" {
					t.Fatalf("429 with Retry-After %q, want 1", rec.Header().Get("Retry-After"))
				}
			}
		}
		if limited == 0 {
			t.Fatal("40 reads at once were not limited")
		}
		if e.cashoutPays(t, s, placed) {
			return
		}
		if attempt == 5 {
			t.Fatal("six rounds crashed at 1.00x")
		}
	}
}

// A flood of bets is limited (429 with Retry-After once the money budget is
// spent), and a cashout of the player's own live bet is paid all the same; past
// the budget, a cashout of a bet that is not live is answered 429 without
// reading the database.
func TestFloodOfBetsIsLimitedButTheCashoutPays(t *testing.T) {
	t.Parallel()
	e := newEnv(t, defaultLimits)
	s := e.openReal(t)
	for attempt := 0; ; attempt++ {
		e.waitPhase(t, engine.PhaseBetting, 1500*time.Millisecond)
		codes := map[int]int{}
		var placed table.BetPlaced
		for range 40 {
			rec := e.call(t, "POST", "/api/v1/bets", s, map[string]any{"amount": 1000})
			codes[rec.Code]++
			switch rec.Code {
			case http.StatusCreated:
				placed = decode[table.BetPlaced](t, rec)
			case http.StatusTooManyRequests:
				if rec.Header().Get("Retry-After") != "1" {
					t.Fatalf("429 with Retry-After %q, want 1", rec.Header().Get("Retry-After"))
				}
			}
		}
		// Rule LIM-5: five accepted, then too many bets, then the budget.
		// (The budget refills by one every 100 ms while the bets run.)
		if codes[http.StatusCreated] != 5 || codes[http.StatusConflict] < 15 || codes[http.StatusTooManyRequests] == 0 ||
			codes[http.StatusCreated]+codes[http.StatusConflict]+codes[http.StatusTooManyRequests] != 40 {
			t.Fatalf("40 bets at once answered %v, want 5×201, then 409 TOO_MANY_BETS, then 429", codes)
		}
		rec := e.call(t, "POST", "/api/v1/bets/b_notlive000000000000000/cashout", s, nil)
		if got := decode[table.Error](t, rec); rec.Code != http.StatusTooManyRequests || got.ErrorCode != table.ErrorCodeRateLimited {
			t.Fatalf("cashout of a bet that is not live, past the budget: %d %s", rec.Code, rec.Body)
		}
		e.waitPhase(t, engine.PhaseFlying, 0)
		if e.cashoutPays(t, s, placed) {
			return
		}
		if attempt == 5 {
			t.Fatal("six rounds crashed at 1.00x")
		}
		time.Sleep(2 * time.Second) // the budget refills
	}
}

// Rule RB-2: cancels of one bet sent at once are one cancel: every one
// answers 200 with the same body, and one rollback is made.
func TestCancelRepeatedAtOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{rate: 1000, burst: 1000, betting: 4 * time.Second})
	s := e.openReal(t)
	e.waitPhase(t, engine.PhaseBetting, 3*time.Second)
	rec := e.call(t, "POST", "/api/v1/bets", s, map[string]any{"amount": 1000})
	if rec.Code != http.StatusCreated {
		t.Fatalf("bet: %d %s", rec.Code, rec.Body)
	}
	placed := decode[table.BetPlaced](t, rec)
	const n = 10
	answers := make([]string, n)
	codes := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rec := e.call(t, "DELETE", "/api/v1/bets/"+placed.BetId, s, nil)
			codes[i], answers[i] = rec.Code, rec.Body.String()
		}()
	}
	wg.Wait()
	for i := range n {
		if codes[i] != http.StatusOK || answers[i] != answers[0] {
			t.Fatalf("cancel %d: %d %s; the first: %d %s", i, codes[i], answers[i], codes[0], answers[0])
		}
	}
	got := decode[table.BetCancelled](t, e.call(t, "DELETE", "/api/v1/bets/"+placed.BetId, s, nil))
	if got.Status != table.BetStatusCancelled || got.Balance != placed.Balance+placed.Amount {
		t.Fatalf("cancel again: %+v, want cancelled with balance %d", got, placed.Balance+placed.Amount)
	}
}
