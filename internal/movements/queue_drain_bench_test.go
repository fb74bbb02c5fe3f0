package movements_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/internal/movements"
	"github.com/crashstudio/crashgame/internal/wallet"
	"github.com/crashstudio/crashgame/internal/wallet/wallettest"
)

// BenchmarkQueueDrain measures how fast the movement queue empties a backlog
// of 10,000 due /win movements into an operator that answers ok at once (an
// httptest server over loopback, kept-alive connections, no validation): one
// op is the whole backlog delivered and recorded done. It reports movements
// per second. Like the restart benchmark, SQLite only.
func BenchmarkQueueDrain(b *testing.B) {
	const n = 10_000
	for _, conc := range []int{movements.DefaultQueueConcurrency, 64} {
		b.Run(fmt.Sprintf("movements=%d/concurrency=%d", n, conc), func(b *testing.B) {
			var received atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				received.Add(1)
				w.Header().Set("Content-Type", "application/json")
				_, _ = io.WriteString(w, wallettest.OK.Body)
			}))
			b.Cleanup(srv.Close)
			op := wallet.Settings{Operator: wallettest.OperatorID, Secret: "mq-secret-0123456789abcdef",
				APIKey: "mq_k3y0a9z1_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdefg", URL: srv.URL}
			c, err := wallet.NewClient(op, wallet.WithLogger(mqDiscard()))
			if err != nil {
				b.Fatal(err)
			}
			prev := slog.Default()
			slog.SetDefault(mqDiscard())
			s := mqOpen(b, mqBackends[0].dsn(b))
			slog.SetDefault(prev)
			b.ReportAllocs()
			b.StopTimer()
			for range b.N {
				if _, err := s.ExecForTest(context.Background(), "DELETE FROM movements"); err != nil {
					b.Fatal(err)
				}
				mqFillBacklog(b, s, n, time.Now())
				q := mqQueue(b, s, c, movements.WithConcurrency(conc))
				b.StartTimer()
				stop := mqStart(b, q)
				for {
					depth, err := q.Depth(context.Background())
					if err != nil {
						b.Fatal(err)
					}
					if depth[movements.StatusPending] == 0 {
						break
					}
					time.Sleep(5 * time.Millisecond)
				}
				b.StopTimer()
				stop()
				if got := mqCountStatus(b, s)[movements.StatusDone]; got != n {
					b.Fatalf("%d of %d movements done", got, n)
				}
			}
			b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "movements/s")
		})
	}
}
