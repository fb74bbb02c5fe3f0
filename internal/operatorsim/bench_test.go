package operatorsim_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// BenchmarkBet measures one signed, validated, committed /bet through the
// whole handler, on the in-memory ledger, from parallel callers.
func BenchmarkBet(b *testing.B) {
	h := newHarness(b)
	tok := h.player("p-bench", 1<<60, "BRL")
	var n atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			raw, _ := json.Marshal(betReq("p-bench", tok, fmt.Sprintf("bet-%d", n.Add(1)), 100, nil))
			rec := httptest.NewRecorder()
			h.h.ServeHTTP(rec, signedRequest("/bet", raw, newKey))
			if rec.Code != http.StatusOK {
				b.Fatalf("%d %s", rec.Code, rec.Body)
			}
		}
	})
}
