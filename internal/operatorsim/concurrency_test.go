package operatorsim_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// concurrently sends n requests built by body(i) at once and returns the
// decoded answers.
func concurrently(t *testing.T, h *harness, route string, n int, body func(i int) map[string]any) []answer {
	t.Helper()
	raws := make([][]byte, n)
	for i := range raws {
		raws[i], _ = json.Marshal(body(i))
	}
	out := make([]answer, n)
	var start, done sync.WaitGroup
	start.Add(1)
	for i := 0; i < n; i++ {
		done.Add(1)
		go func() {
			defer done.Done()
			start.Wait()
			rec := httptest.NewRecorder()
			h.h.ServeHTTP(rec, signedRequest(route, raws[i], newKey))
			out[i] = answer{Code: rec.Code, Raw: rec.Body.Bytes()}
			_ = json.Unmarshal(out[i].Raw, &out[i].Body)
		}()
	}
	start.Done()
	done.Wait()
	return out
}

// Rule BET-8 ENV-12
func TestConcurrentIdenticalBetsDebitOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	tok := h.player("p-race", 100_000, "BRL")
	bet := betReq("p-race", tok, "bet-same", 1000, nil)
	answers := concurrently(t, h, "/bet", 50, func(int) map[string]any { return again(bet) })
	for i, a := range answers {
		if a.Code != http.StatusOK || string(a.Raw) != string(answers[0].Raw) {
			t.Fatalf("attempt %d answered %d %s, attempt 0 %s", i, a.Code, a.Raw, answers[0].Raw)
		}
	}
	if got := h.balanceOf("p-race"); got != 99_000 {
		t.Fatalf("balance %d after 50 identical attempts, want one debit (99000)", got)
	}
	led := h.mustAdmin("/admin/ledger", map[string]any{"player_id": "p-race"})
	if n := len(led.Body["movements"].([]any)); n != 1 {
		t.Fatalf("%d movements, want 1", n)
	}
}

// Rule BET-10 GEN-1
func TestConcurrentBetsNeverOverdraw(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	tok := h.player("p-drain", 10_000, "BRL")
	answers := concurrently(t, h, "/bet", 50, func(i int) map[string]any {
		return betReq("p-drain", tok, fmt.Sprintf("bet-%02d", i), 300, nil)
	})
	ok, refused := 0, 0
	for i, a := range answers {
		switch {
		case a.Code == http.StatusOK && a.Body["status"] == "ok":
			ok++
		case a.Code == http.StatusOK && a.Body["error_code"] == "INSUFFICIENT_FUNDS":
			refused++
		default:
			t.Fatalf("bet %d answered %d %s", i, a.Code, a.Raw)
		}
		if b, _ := a.Body["balance"].(float64); b < 0 {
			t.Fatalf("bet %d answered a negative balance: %s", i, a.Raw)
		}
	}
	if ok != 33 || refused != 17 {
		t.Fatalf("%d accepted and %d refused, want 33 and 17", ok, refused)
	}
	if got := h.balanceOf("p-drain"); got != 100 {
		t.Fatalf("balance %d, want 100", got)
	}
}
