package replica_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/internal/cluster/natstest"
	"github.com/crashstudio/crashgame/internal/round"
)

// BenchmarkCashoutPath measures what forwarding adds to a cashout: the same
// cashout (of a bet the round does not hold, so that every iteration does the
// same work at the table: one trip through its loop and a refusal) sent to
// the table on the leader itself, and from a replica that does not lead,
// over NATS to the leader and back. The difference is the forwarding's
// overhead; p50 and p99 of each are reported beside the mean.
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
	for _, path := range []struct {
		name string
		node *node
	}{{"local", leader}, {"forwarded", follower}} {
		b.Run(path.name, func(b *testing.B) {
			// Wait until the path answers (the follower finds the leader).
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				_, err := path.node.rep.Cashout(context.Background(), p, "b_not_in_the_round", time.Now())
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
				_, err := path.node.rep.Cashout(context.Background(), p, "b_not_in_the_round", start)
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
