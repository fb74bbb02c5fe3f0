package operatorsim

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/gen/wallet"
	"github.com/crashstudio/crashgame/internal/store/ledger"
)

// BenchmarkLedgerBet measures the ledger alone: teller.Bet (every money rule
// and its statements, committed), without HTTP, signature or validation, on a
// file ledger (WAL, synchronous=FULL) from many concurrent callers, each
// betting for a player of its own. It reports bets/s: b.N bets over the wall
// time of all callers.
func BenchmarkLedgerBet(b *testing.B) {
	for _, callers := range []int{64, 256} {
		b.Run(fmt.Sprintf("db=file/callers=%d", callers), func(b *testing.B) {
			ctx := context.Background()
			st, err := ledger.Open(ctx, filepath.Join(b.TempDir(), "ledger.db"))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = st.Close() })
			l := &teller{store: st, now: time.Now, tokenTTL: time.Hour}
			toks := make([]string, callers)
			for i := range toks {
				p := &ledger.PlayerRecord{PlayerID: fmt.Sprintf("p-%03d", i), Currency: "BRL", Balance: 1 << 60}
				if err := l.createPlayer(ctx, p); err != nil {
					b.Fatal(err)
				}
				s, err := l.issueToken(ctx, p.PlayerID, 0)
				if err != nil {
					b.Fatal(err)
				}
				toks[i] = s.Token
			}
			BetConcurrently(b, callers, func(c int, n int64) error {
				out, err := l.Bet(ctx, &wallet.BetRequest{
					Amount: 100, Currency: "BRL", Operator: "dev", PlayerId: fmt.Sprintf("p-%03d", c),
					RequestId: fmt.Sprintf("req-%d", n), RoundId: "round-1", Timestamp: time.Now().UnixMilli(),
					Token: toks[c], TransactionId: fmt.Sprintf("bet-%d", n),
				})
				if err == nil && out.refused != nil {
					err = fmt.Errorf("refused %+v", out.refused)
				}
				return err
			})
		})
	}
}

// BetConcurrently (exported for the package's external benchmarks) runs b.N bets from callers goroutines, bet(caller, n) each
// (n from 1 to b.N, each once), and reports bets/s: b.N over the wall time of
// all callers. A bet that fails stops its caller and fails the benchmark.
func BetConcurrently(b *testing.B, callers int, bet func(caller int, n int64) error) {
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for c := range callers {
		wg.Go(func() {
			for n := next.Add(1); n <= int64(b.N); n = next.Add(1) {
				if err := bet(c, n); err != nil {
					b.Errorf("bet %d: %v", n, err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "bets/s")
}
