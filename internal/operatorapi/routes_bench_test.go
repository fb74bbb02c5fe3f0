package operatorapi_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/integration/pgtest"
	"github.com/crashstudio/crashgame/internal/launch"
	"github.com/crashstudio/crashgame/internal/operatorapi"
	"github.com/crashstudio/crashgame/internal/server"
	"github.com/crashstudio/crashgame/internal/store"
	"github.com/crashstudio/crashgame/internal/tickets"
)

// benchHandler is the operator routes as serve wires them (request ids, access
// log as JSON to a sink, recover), over a migrated SQLite file with the
// store's durable settings; the clock is real.
func benchHandler(b *testing.B, dsn string) http.Handler {
	b.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	// The migration logs through slog's default: keep the output benchstat's.
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.DiscardHandler))
	err = st.Migrate(ctx)
	slog.SetDefault(prev)
	if err != nil {
		b.Fatal(err)
	}
	logger := slog.New(slog.NewJSONHandler(io.Discard, nil))
	api := operatorapi.New(operatorapi.Config{Operators: operators, Launch: launch.New(installation, tickets.New(st.Tickets(), time.Now)),
		Chains: st.HashChains(), Movements: st.BackOffice(), Redeliver: st.Movements(), Logger: logger, Now: time.Now})
	return server.New(server.Config{Logger: logger, Documents: http.NotFoundHandler(), Routes: api.Routes()})
}

// benchRoute posts signed bodies to path from parallel callers (8 per core)
// and reports requests per second. body returns the n-th body.
func benchRoute(b *testing.B, dsn, path string, body func(n int64) string) {
	h := benchHandler(b, dsn)
	var n atomic.Int64
	b.ReportAllocs()
	b.SetParallelism(8)
	start := time.Now()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			raw := body(n.Add(1))
			req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(raw))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-Signature", sign(acmeSecret, raw))
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != http.StatusOK {
				b.Fatalf("%s: %d %s", path, rec.Code, rec.Body)
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
}

// BenchmarkLaunch is one signed POST /v1/launch through the whole handler:
// signature, strict server, checks, and a ticket committed to the store (a
// SQLite file; PostgreSQL when a Docker engine answers, else skipped).
func BenchmarkLaunch(b *testing.B) {
	body := func(n int64) string {
		return fmt.Sprintf(`{"operator":"acme","timestamp":%d,"game_id":"crash","token":"tok-bench-%016d","player_id":"player-%d","currency":"BRL","language":"en"}`,
			time.Now().UnixMilli(), n, n)
	}
	b.Run("store=sqlite", func(b *testing.B) {
		benchRoute(b, "sqlite://"+filepath.Join(b.TempDir(), "bench.db"), "/v1/launch", body)
	})
	b.Run("store=postgres", func(b *testing.B) { benchRoute(b, pgtest.Start(b), "/v1/launch", body) })
}

// BenchmarkCatalogue is one signed POST /v1/games with a currency through the
// whole handler (no database).
func BenchmarkCatalogue(b *testing.B) {
	benchRoute(b, "sqlite://"+filepath.Join(b.TempDir(), "bench.db"), "/v1/games", func(int64) string {
		return fmt.Sprintf(`{"operator":"acme","timestamp":%d,"currency":"BRL"}`, time.Now().UnixMilli())
	})
}
