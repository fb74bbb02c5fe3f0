package operatorsim_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// Rule WERR-20 WERR-15 LIM-2
func TestFaultInjection(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		fault      map[string]any
		wantStatus int
		wantCode   string
		debited    bool // did the movement happen?
	}{
		{"5xx", map[string]any{"kind": "5xx"}, http.StatusServiceUnavailable, "INTERNAL_ERROR", false},
		{"5xx with status", map[string]any{"kind": "5xx", "status": 502}, http.StatusBadGateway, "INTERNAL_ERROR", false},
		{"refusal as 200", map[string]any{"kind": "refuse", "error_code": "PLAYER_BLOCKED"}, http.StatusOK, "PLAYER_BLOCKED", false},
		{"refusal as 4xx", map[string]any{"kind": "refuse", "status": 403, "error_code": "INVALID_SIGNATURE"}, http.StatusForbidden, "INVALID_SIGNATURE", false},
		{"5xx after commit (answer lost)", map[string]any{"kind": "5xx", "after": true}, http.StatusServiceUnavailable, "INTERNAL_ERROR", true},
		{"rate 0 never fires", map[string]any{"kind": "5xx", "rate": 0}, http.StatusOK, "", true},
		{"other route unaffected", map[string]any{}, http.StatusOK, "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			tok := h.player("p-f", 5000, "BRL")
			faults := map[string]any{"win": map[string]any{"kind": "5xx"}}
			if len(tc.fault) > 0 {
				faults["bet"] = tc.fault
			}
			h.setFaults(faults)
			bet := betReq("p-f", tok, "bet-1", 1000, nil)
			a := h.call("/bet", bet)
			if a.Code != tc.wantStatus || (tc.wantCode != "" && a.str("error_code") != tc.wantCode) {
				t.Fatalf("answer %d %s, want %d %s", a.Code, a.Raw, tc.wantStatus, tc.wantCode)
			}
			want := int64(5000)
			if tc.debited {
				want = 4000
			}
			if got := h.balanceOf("p-f"); got != want {
				t.Fatalf("balance %d, want %d", got, want)
			}
			// Cleared, the retry of the same movement settles it exactly once.
			h.setFaults(map[string]any{})
			wantOK(t, h.call("/bet", again(bet)), 4000)
		})
	}
}

func TestFaultCountClearsItself(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	tok := h.player("p-cnt", 5000, "BRL")
	h.setFaults(map[string]any{"*": map[string]any{"kind": "5xx", "count": 2}})
	bet := betReq("p-cnt", tok, "bet-1", 1000, nil)
	for i := 0; i < 2; i++ {
		if a := h.call("/bet", again(bet)); a.Code != http.StatusServiceUnavailable {
			t.Fatalf("attempt %d: %d %s, want 503", i, a.Code, a.Raw)
		}
	}
	wantOK(t, h.call("/bet", again(bet)), 4000)
}

func TestFaultTimeoutHangsUntilTheClientGivesUp(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	tok := h.player("p-to", 5000, "BRL")
	h.setFaults(map[string]any{"bet": map[string]any{"kind": "timeout", "after": true}})
	raw, _ := json.Marshal(betReq("p-to", tok, "bet-1", 1000, nil))
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	req := signedRequest("/bet", raw, newKey).WithContext(ctx)
	rec := httptest.NewRecorder()
	h.h.ServeHTTP(rec, req)
	if ctx.Err() == nil {
		t.Fatal("the handler returned before the client gave up")
	}
	if rec.Body.Len() != 0 {
		t.Fatalf("a timeout fault answered %q", rec.Body.Bytes())
	}
	// "after": the debit happened although the game never saw the answer.
	if got := h.balanceOf("p-to"); got != 4000 {
		t.Fatalf("balance %d, want 4000", got)
	}
}

func TestFaultLatency(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	tok := h.player("p-lat", 5000, "BRL")
	h.setFaults(map[string]any{"balance": map[string]any{"latency_ms": 120}})
	start := time.Now()
	wantOK(t, h.call("/balance", h.balanceReq(tok)), 5000)
	if waited := time.Since(start); waited < 120*time.Millisecond {
		t.Fatalf("answered after %s, want at least 120ms", waited)
	}
}

func TestFaultValidation(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	tests := []map[string]any{
		{"bet": map[string]any{"kind": "explode"}},
		{"bet": map[string]any{"kind": "5xx", "status": 404}},
		{"bet": map[string]any{"kind": "refuse", "status": 503}},
		{"bet": map[string]any{"rate": 2}},
		{"credit": map[string]any{}},
		{"bet": map[string]any{"refusal_status": "500"}},
	}
	for _, f := range tests {
		if a := h.admin("/admin/faults/set", map[string]any{"faults": f}); a.Code != http.StatusBadRequest {
			t.Errorf("faults %v: %d %s, want 400", f, a.Code, a.Raw)
		}
	}
	a := h.mustAdmin("/admin/faults/list", nil)
	if !bytes.Contains(a.Raw, []byte(`"faults":{}`)) {
		t.Fatalf("a refused fault set was installed: %s", a.Raw)
	}
}
