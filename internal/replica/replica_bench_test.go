package replica_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/internal/cluster/natstest"
	"github.com/crashstudio/crashgame/internal/engine"
	"github.com/crashstudio/crashgame/internal/round"
)

// BenchmarkCashoutPath measures a cashout's path to its refusal (of a bet
// the round does not hold, so that every iteration does the same work: the
// bet's read and a refusal) on the three paths a cashout takes: on the
// leader itself, on a replica that does not lead (which prices it there),
// and forwarded from that replica over NATS to the leader and back (a demo
// bet's, whose play money is the leader's). The difference between the last
// two is the forwarding's overhead; p50 and p99 of each are reported beside
// the mean.
func BenchmarkCashoutPath(b *testing.B) {
	dsn := "sqlite://" + filepath.Join(b.TempDir(), "bench.db")
	nats := natstest.Start(b)
	leader := startNodeB(b, "node-a", dsn, nats.URL())
	for deadline := time.Now().Add(10 * time.Second); !leader.table.Leadership().Leading(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			b.Fatal("no leader")
		}
	}
	follower := startNodeB(b, "node-b", dsn, nats.URL())
	p := player("hugo")
	demo := remember(engine.Player{Session: []byte("session-hugo-demo-00000000000000")[:32], Demo: true})
	for _, path := range []struct {
		name   string
		node   *node
		player engine.Player
	}{{"leader", leader, p}, {"replica", follower, p}, {"forwarded", follower, demo}} {
		b.Run(path.name, func(b *testing.B) {
			// Wait until the path answers (the follower finds the leader).
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				_, err := path.node.rep.Cashout(context.Background(), path.player, "b_not_in_the_round", time.Now())
				if errors.Is(err, round.ErrUnknownBet) {
					break
				}
				if time.Now().After(deadline) {
					b.Fatalf("the %s path never answered: %v", path.name, err)
				}
			}
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for b.Loop() {
				start := time.Now()
				_, err := path.node.rep.Cashout(context.Background(), path.player, "b_not_in_the_round", start)
				lat = append(lat, time.Since(start))
				if !errors.Is(err, round.ErrUnknownBet) {
					b.Fatalf("cashout: %v", err)
				}
			}
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
			b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
		})
	}
}
