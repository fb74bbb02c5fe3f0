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
	"github.com/crashstudio/crashgame/internal/replica"
	"github.com/crashstudio/crashgame/internal/round"
	"github.com/crashstudio/crashgame/internal/sessions"
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

// BenchmarkReceiveBroadcast measures what a replica spends on one message
// that every replica receives and that is for a player whose stream is
// elsewhere, as most are in a cluster of N (N−1 of every N): a bet's event
// (bet_event: decoded, checked, handed to the table, which finds no
// subscriber, as a replica did until 29 November, and as it still does for
// a session whose stream it holds; bet_event_skipped: what it does since
// for the others, a look at the event's addressee), and a balance change
// relayed by another replica (decoded and checked; heard is a no-op here,
// so the sessions' own work for it is left out). NATS's own parsing and the bus's sequence check are left
// out too: these are lower bounds of the cost per message, which
// docs/capacity.md multiplies by the messages a bet publishes to every
// replica.
func BenchmarkReceiveBroadcast(b *testing.B) {
	dsn := "sqlite://" + filepath.Join(b.TempDir(), "bench.db")
	nats := natstest.Start(b)
	n := startNodeB(b, "node-a", dsn, nats.URL())
	ctx := context.Background()
	at := time.Date(2026, 11, 29, 11, 0, 0, 123_000_000, time.UTC)
	free := "fb_0123456789abcdef"
	elsewhere := []byte("session-of-a-player-elsewhere-00")
	bet := replica.EventMessage(elsewhere, &engine.Event{Type: engine.EventBet,
		Bet: &engine.BetView{BetID: "b_0123456789abcdefghijklm", RoundID: "crash-123456", Amount: 1_000, AutoCashout: 250,
			Status: engine.StatusCashedOut, Multiplier: 250, Payout: 2_500, PlacedAt: at, FreebetID: &free}})
	balances := replica.NewBalances(n.bus, nil)
	change := replica.BalanceMessage(sessions.Change{Session: []byte("session-of-a-player-elsewhere-00"),
		Operator: "acme", PlayerID: "player-0123456789", Currency: "EUR", Balance: 1_234_567})
	b.Run("bet_event", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(bet)))
		for b.Loop() {
			n.rep.Receive(ctx, bet)
		}
	})
	// Since 29 November a replica reads a session's event only when it
	// holds one of the session's streams: the others skip it on its
	// addressee alone.
	to := replica.Addressee(elsewhere)
	b.Run("bet_event_skipped", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if n.rep.Holds(to) {
				b.Fatal("a session with no stream here is held")
			}
		}
	})
	b.Run("balance_change", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(change)))
		heard := 0
		for b.Loop() {
			balances.Receive(change, func(sessions.Change) { heard++ })
		}
		if heard == 0 {
			b.Fatal("no change heard")
		}
	})
}
