package operatorsim_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/crashstudio/crashgame/internal/operatorsim"
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

// BenchmarkBetConcurrent measures /bet through the whole handler on a file
// ledger (WAL, synchronous=FULL: durable commits, as in the load runs) from
// many concurrent callers, each betting for a player of its own, as the game
// does under load. It reports bets/s: b.N bets over the wall time of all
// callers.
func BenchmarkBetConcurrent(b *testing.B) {
	for _, callers := range []int{64, 256} {
		b.Run(fmt.Sprintf("db=file/callers=%d", callers), func(b *testing.B) {
			h := newHarness(b, func(c *operatorsim.Config) { c.DB = filepath.Join(b.TempDir(), "ledger.db") })
			toks := make([]string, callers)
			for i := range toks {
				toks[i] = h.player(fmt.Sprintf("p-%03d", i), 1<<60, "BRL")
			}
			operatorsim.BetConcurrently(b, callers, func(c int, n int64) error {
				raw, _ := json.Marshal(betReq(fmt.Sprintf("p-%03d", c), toks[c], fmt.Sprintf("bet-%d", n), 100, nil))
				rec := httptest.NewRecorder()
				h.h.ServeHTTP(rec, signedRequest("/bet", raw, newKey))
				if rec.Code != http.StatusOK {
					return fmt.Errorf("%d %s", rec.Code, rec.Body)
				}
				return nil
			})
		})
	}
}
