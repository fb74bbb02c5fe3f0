package engine_test

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/integration/pgtest"
	"github.com/crashstudio/crashgame/internal/engine"
	"github.com/crashstudio/crashgame/internal/movements"
	"github.com/crashstudio/crashgame/internal/round"
	"github.com/crashstudio/crashgame/internal/store"
	"github.com/crashstudio/crashgame/internal/wallet"
)

// The engine's hot paths on a real store with a wallet that answers at once:
// what is measured is the table loop, the group commit and the database, not
// the operator. Time is the manual clock of the tests, so a round stays in the
// phase the benchmark needs for as long as it needs.

// liveBets is the size of the product's table: 10,000 live players.
const liveBets = 10_000

// benchWorkers is how many players act at once when a benchmark places bets.
const benchWorkers = 256

// instantWallet accepts every /bet at once and records nothing.
type instantWallet struct{}

func (instantWallet) BetUntil(_ context.Context, call wallet.BetCall, _ time.Time) (wallet.Result, error) {
	return wallet.Result{Outcome: wallet.Success, Balance: 100000, HasBalance: true, OperatorTxID: "op-" + call.TransactionID}, nil
}

func (instantWallet) BreakerOpen() bool { return false }

// benchTable is a running table for benchmarks.
type benchTable struct {
	tb    testing.TB
	table *engine.Table
	clock *manualClock
	crash func(roundID string) int64
	done  chan error
}

// openBenchStore opens dsn ("" is a SQLite file in a temporary folder) and
// migrates it; it is closed when the test or benchmark ends.
func openBenchStore(tb testing.TB, dsn string) *store.Store {
	tb.Helper()
	if dsn == "" {
		dsn = "sqlite://" + filepath.Join(tb.TempDir(), "bench.db")
	}
	ctx := context.Background()
	st, err := store.Open(ctx, dsn)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	// Migrations and the new chain log through slog's default: keep the
	// output benchstat's.
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.DiscardHandler))
	defer slog.SetDefault(prev)
	if err := st.Migrate(ctx); err != nil {
		tb.Fatal(err)
	}
	return st
}

// benchConfig is the table of the engine tests' installation on st: its
// wallet answers every /bet at once, its time is clock.
func benchConfig(st *store.Store, clock *manualClock) engine.Config {
	return engine.Config{
		Game:          testGame,
		Operators:     testOperators,
		Store:         st.Records(),
		Chains:        st.HashChains(),
		Outbox:        movements.NewOutbox(st.Movements()),
		Wallets:       func(string) (engine.BetWallet, bool) { return instantWallet{}, true },
		Clock:         clock,
		Logger:        slog.New(slog.DiscardHandler),
		ChainLength:   1000,
		Sealer:        engine.FixedSealer(),
		SeedingWindow: -1,
	}
}

// newBenchTable opens dsn ("" is a SQLite file), builds the table of the
// engine tests' installation and runs it until the benchmark ends.
func newBenchTable(tb testing.TB, dsn string) *benchTable {
	tb.Helper()
	ctx := context.Background()
	st := openBenchStore(tb, dsn)
	h := &benchTable{tb: tb, clock: newClock(), done: make(chan error, 1)}
	var err error
	h.table, err = engine.New(ctx, benchConfig(st, h.clock))
	if err != nil {
		tb.Fatal(err)
	}
	h.crash = func(roundID string) int64 { return crashPointOf(tb, h.table, roundID) }
	go func() { h.done <- h.table.Run(ctx) }()
	tb.Cleanup(h.stop)
	h.waitFor(func(v engine.RoundView) bool { return v.Phase == engine.PhaseBetting })
	return h
}

func (h *benchTable) stop() {
	h.table.Stop()
	for range 10_000 {
		select {
		case err := <-h.done:
			if err != nil {
				h.tb.Logf("Run: %v", err) // logged, not checked: the benchmarks time rounds, not stopping
			}
			return
		default:
		}
		h.clock.Set(h.clock.Now().Add(time.Second))
		time.Sleep(time.Millisecond)
	}
	h.tb.Error("the table did not stop")
}

// waitFor polls the round until cond holds (set-up only, never timed).
func (h *benchTable) waitFor(cond func(engine.RoundView) bool) engine.RoundView {
	h.tb.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if v, _ := h.table.Round(); cond(v) {
			return v
		}
		time.Sleep(100 * time.Microsecond)
	}
	v, _ := h.table.Round()
	h.tb.Fatalf("round %s stuck in %s", v.RoundID, v.Phase)
	return v
}

// finish plays the current round to its end and waits for the next betting
// phase.
func (h *benchTable) finish() {
	v, _ := h.table.Round()
	if v.Phase == engine.PhaseBetting {
		h.clock.Set(v.BettingEndsAt)
		v = h.waitFor(func(n engine.RoundView) bool { return n.RoundID == v.RoundID && n.Phase != engine.PhaseBetting })
	}
	if v.Phase == engine.PhaseFlying {
		h.clock.Set(v.StartedAt.Add(round.TimeToReach(h.crash(v.RoundID))))
		v = h.waitFor(func(n engine.RoundView) bool { return n.Phase == engine.PhaseCrashed })
	}
	h.clock.Set(v.CrashedAt.Add(3 * time.Second))
	h.waitFor(func(n engine.RoundView) bool { return n.RoundID != v.RoundID && n.Phase == engine.PhaseBetting })
}

// bettingCrashingAbove moves to a betting round whose crash point is at least
// min (hundredths).
func (h *benchTable) bettingCrashingAbove(min int64) engine.RoundView {
	for range 500 {
		v, _ := h.table.Round()
		if v.Phase == engine.PhaseBetting && h.crash(v.RoundID) >= min {
			return v
		}
		h.finish()
	}
	h.tb.Fatalf("no round crashing above %d", min)
	return engine.RoundView{}
}

// fly ends the betting phase and waits for the take-off.
func (h *benchTable) fly() engine.RoundView {
	v, _ := h.table.Round()
	h.clock.Set(v.BettingEndsAt)
	return h.waitFor(func(n engine.RoundView) bool { return n.RoundID == v.RoundID && n.Phase == engine.PhaseFlying })
}

// benchPlayer is the i-th distinct player of operator op.
func benchPlayer(op string, i int) engine.Player {
	return engine.Player{
		Session:  fmt.Appendf(nil, "%-8s%024d", op, i), // 32 bytes, like a session hash
		Operator: op, PlayerID: fmt.Sprintf("player-%d", i), Token: fmt.Sprintf("tok-bench-%016d", i),
		Currency: "BRL", Name: "p***",
	}
}

// concurrently runs f(i) for i in [0, n) from workers goroutines.
func concurrently(n, workers int, f func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				f(i)
			}
		})
	}
	wg.Wait()
}

// placeBets places n bets of distinct players (offset first) in the current
// betting round and returns their ids in player order.
func (h *benchTable) placeBets(op string, first, n int, auto int64) []string {
	ids := make([]string, n)
	var failed atomic.Value
	concurrently(n, benchWorkers, func(i int) {
		res, err := h.table.PlaceBet(context.Background(), benchPlayer(op, first+i), engine.BetRequest{Amount: 1000, AutoCashout: auto})
		if err != nil {
			failed.Store(err)
			return
		}
		ids[i] = res.Bet.BetID
	})
	if err, _ := failed.Load().(error); err != nil {
		h.tb.Fatalf("bet: %v", err)
	}
	return ids
}

// latencies summarises per-call durations as custom metrics.
type latencies []time.Duration

func (l latencies) report(b *testing.B, prefix string) {
	if len(l) == 0 {
		return
	}
	s := slices.Clone(l)
	slices.Sort(s)
	q := func(p float64) float64 {
		i := int(p * float64(len(s)-1))
		return float64(s[i].Microseconds()) / 1000
	}
	b.ReportMetric(q(0.50), prefix+"-p50-ms")
	b.ReportMetric(q(0.99), prefix+"-p99-ms")
	b.ReportMetric(q(0.999), prefix+"-p99.9-ms")
}

// BenchmarkPlaceBet admits bets from 256 concurrent players (one bet each, a
// distinct player per bet) into one betting round: reservation in the loop,
// the intent committed, /bet (instant), the acceptance committed. It reports
// accepted bets per second and the admission latency.
func BenchmarkPlaceBet(b *testing.B) {
	for _, st := range []struct{ name, dsn string }{{"sqlite", ""}, {"postgres", "pg"}} {
		b.Run("store="+st.name, func(b *testing.B) {
			dsn := st.dsn
			if dsn == "pg" {
				dsn = pgtest.Start(b)
			}
			h := newBenchTable(b, dsn)
			lat := make(latencies, b.N)
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			concurrently(b.N, benchWorkers, func(i int) {
				t0 := time.Now()
				_, err := h.table.PlaceBet(context.Background(), benchPlayer("acme", i), engine.BetRequest{Amount: 1000})
				lat[i] = time.Since(t0)
				if err != nil {
					b.Errorf("bet %d: %v", i, err)
				}
			})
			elapsed := time.Since(start)
			b.StopTimer()
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "bets/s")
			lat.report(b, "bet")
		})
	}
}

// BenchmarkCashout: a flying round with 10,000 live bets, and each of them
// cashed out once. One op is the whole round's cashouts; the metrics are the
// per-cashout latency (call to answer, commit with its /win movement
// included) and the cashouts per second. "stampede" sends all 10,000 at once;
// "paced" sends them evenly over one second (10,000 a second offered).
func BenchmarkCashout(b *testing.B) {
	for _, mode := range []string{"stampede", "paced"} {
		b.Run(fmt.Sprintf("live=%d/%s", liveBets, mode), func(b *testing.B) {
			h := newBenchTable(b, "")
			var all latencies
			var busy time.Duration
			b.ReportAllocs()
			b.StopTimer()
			for range b.N {
				h.bettingCrashingAbove(200)
				ids := h.placeBets("acme", 0, liveBets, 0)
				v := h.fly()
				h.clock.Set(v.StartedAt.Add(500 * time.Millisecond))
				at := h.clock.Now()
				lat := make(latencies, liveBets)
				var wg sync.WaitGroup
				gate := make(chan struct{})
				var failed atomic.Int64
				for i, id := range ids {
					wg.Go(func() {
						<-gate
						if mode == "paced" {
							time.Sleep(time.Duration(i) * time.Second / liveBets)
						}
						t0 := time.Now()
						_, err := h.table.Cashout(context.Background(), benchPlayer("acme", i), id, at)
						lat[i] = time.Since(t0)
						if err != nil {
							failed.Add(1)
						}
					})
				}
				b.StartTimer()
				start := time.Now()
				close(gate)
				wg.Wait()
				busy += time.Since(start)
				b.StopTimer()
				if n := failed.Load(); n > 0 {
					b.Fatalf("%d cashouts failed", n)
				}
				all = append(all, lat...)
				h.finish()
			}
			b.ReportMetric(float64(len(all))/busy.Seconds(), "cashouts/s")
			all.report(b, "cashout")
		})
	}
}

// BenchmarkRoundSettle: a round with 10,000 accepted bets crashes; one op is
// the crash, from the moment it is due to the round.crashed event, every bet
// settled as lost in one transaction (with zero_win on, a zero_win movement
// queued per bet too).
func BenchmarkRoundSettle(b *testing.B) {
	for _, op := range []struct{ name, id string }{{"zero_win=off", "acme"}, {"zero_win=on", "zero"}} {
		b.Run(fmt.Sprintf("bets=%d/%s", liveBets, op.name), func(b *testing.B) {
			h := newBenchTable(b, "")
			sub := h.table.Subscribe([]byte("bench-observer-00000000000000000"), 4096)
			defer sub.Close()
			crashed := make(chan string, 1024)
			go func() {
				for ev := range sub.C {
					if ev.Type == engine.EventRoundCrashed {
						crashed <- ev.Round.RoundID
					}
				}
			}()
			b.ReportAllocs()
			b.StopTimer()
			for range b.N {
				h.bettingCrashingAbove(120)
				h.placeBets(op.id, 0, liveBets, 0)
				v := h.fly()
				at := v.StartedAt.Add(round.TimeToReach(h.crash(v.RoundID)))
				b.StartTimer()
				h.clock.Set(at)
				for id := range crashed {
					if id == v.RoundID {
						break
					}
				}
				b.StopTimer()
				h.finish()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*liveBets), "ns/bet")
		})
	}
}
