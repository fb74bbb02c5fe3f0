//go:build integration

package suite

import (
	"context"
	"testing"
	"time"
)

// natsCutFor is how long the leader stays cut off NATS: several lease TTLs,
// so that another replica takes the table and plays rounds while the former
// leader still runs, reaching PostgreSQL and the wallet.
const natsCutFor = 15 * time.Second

// TestClusterLeaderCutFromNATS: the leader is cut off NATS only (docker
// network disconnect from the bus; PostgreSQL, the wallet and the load
// balancer still reach it) while 120 players bet through the load balancer.
// Its health finds NATS unreached, so it stops renewing and its term ends at
// its own count of the lease's expiry (docs/failover.md, "A partial
// partition"); a replica that reaches both takes the table at a higher
// epoch, and the former leader, which can still write to PostgreSQL,
// commits nothing of its term after the new term's first round (the fence).
// Rejoined, it follows and never takes the table back. Void rounds are only
// those the fail-over rule allows (RB-5), no bet is answered 500, no answer
// waits past answerBound, every bet the players were told was accepted is
// kept, and every debit ends in one settlement (0 cents, nothing unsettled).
func TestClusterLeaderCutFromNATS(t *testing.T) {
	laneCluster.join(t)
	c := StartCluster(t, ClusterOptions{})
	const players = 120
	ss := enterMany(t, c, players)
	cr := startCrowd(t, ss)
	defer cr.end()
	cr.awaitOpen(t, players, time.Minute)
	leader, epoch := c.Leader(t)
	watch := ss[0].Via(c.Others(leader)[0])
	r := watch.AwaitBetting(t, 0)
	watch.AwaitRoundOver(t, r.RoundID)
	playedFrom, _ := c.lastRound(t)
	warm := cr.counts()

	watch.AwaitBetting(t, 0) // bets live when the cut comes
	from := time.Now()
	c.CutFromNATS(t, leader)
	rejoined := false
	t.Cleanup(func() { // also when the test fails while it is cut off
		if !rejoined {
			c.RejoinNATS(t, leader)
		}
	})
	next, nextEpoch := leader, epoch
	for deadline := time.Now().Add(time.Minute); next == leader; {
		if time.Now().After(deadline) {
			t.Fatalf("a minute after %s was cut off NATS it still holds the lease at epoch %d", leader.Name, epoch)
		}
		time.Sleep(100 * time.Millisecond)
		next, nextEpoch = c.Leader(t)
	}
	took := time.Since(from)
	if nextEpoch <= epoch {
		t.Fatalf("%s took the lease at epoch %d, want over %d", next.Name, nextEpoch, epoch)
	}
	// Rounds under the new leader while the former one still runs cut off.
	for time.Since(from) < natsCutFor {
		r = watch.AwaitBetting(t, 0)
		watch.AwaitRoundOver(t, r.RoundID)
	}
	c.RejoinNATS(t, leader)
	rejoined = true
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	c.AwaitReady(t, ctx, leader)
	cancel()
	r = watch.AwaitBetting(t, 0)
	watch.AwaitRoundOver(t, r.RoundID)
	till := time.Now()
	cr.end()

	cut := cr.counts().since(warm)
	answers := cr.betAnswers(from, till)
	accepted := cr.acceptedBets()
	at := answers.at
	voids, rounds := roundsSince(t, c.DB(), playedFrom)
	t.Logf("%s (epoch %d) cut off NATS: %s leads at epoch %d %s after the cut; %d rounds, %d void; bets %v; bet answers n %d, p50 %s, p99 %s, max %s",
		leader.Name, epoch, next.Name, nextEpoch, took.Round(time.Millisecond), rounds, voids, cut.answers, len(answers), at(0.5), at(0.99), at(1))
	logVoids(t, c.DB(), playedFrom)
	if len(accepted) == 0 {
		t.Error("no bet accepted: the scenario played nothing")
	}
	if n := cut.answers["500 SERVER_ERROR"]; n != 0 {
		t.Errorf("%d bets answered 500 while the leader was cut off NATS, want none", n)
	}
	if worst := at(1); worst > answerBound {
		t.Errorf("a bet waited %s for its answer, past the bound of %s", worst, answerBound)
	}
	if now, e := c.Leader(t); now == leader || e < nextEpoch {
		t.Errorf("after %s rejoined NATS the lease is %s's at epoch %d: the former leader took it back", leader.Name, now.Name, e)
	}
	// The fence: no round of the former epoch after the new leader's first.
	checkFenced(t, c.DB(), epoch, nextEpoch)
	c.Settled(t, 2*time.Minute)
	checkFailoverRule(t, c.DB())
	checkAcceptedKept(t, c, accepted)
	c.CheckOneLeaderPerRound(t)
	c.CheckWallet(t, nil)
	c.Reconcile(t)
}
