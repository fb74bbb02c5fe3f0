//go:build integration

package suite

import (
	"testing"
	"time"
)

// starvedRounds is how many rounds the cluster plays starved.
const starvedRounds = 4

// TestClusterStarved: every replica is limited to half a CPU (docker update
// --cpus 0.5) while 200 players bet through the load balancer, for
// starvedRounds rounds, and then the limit is lifted. Nothing failed, so
// nothing may change hands: the leader keeps its term (a renewal slow to
// answer holds it, docs/failover.md "A starved process"), no round is
// voided, no bet is answered 500, no answer waits past answerBound, and
// every debit ends in one settlement (0 cents, nothing left unsettled). A
// bet a starved replica cannot take in its window is refused before its
// debit (TABLE_BUSY): how many is logged, with the answers by code.
func TestClusterStarved(t *testing.T) {
	laneCluster.join(t)
	c := StartCluster(t, ClusterOptions{})
	const players = 200
	ss := enterMany(t, c, players)
	cr := startCrowd(t, ss)
	defer cr.end()
	cr.awaitOpen(t, players, time.Minute)
	watch := ss[0].Via(c.Replicas[0])
	r := watch.AwaitBetting(t, 0)
	watch.AwaitRoundOver(t, r.RoundID) // the crowd's first round, on a cluster just started
	leader, epoch := c.Leader(t)
	playedFrom, _ := c.lastRound(t)
	warm := cr.counts()
	from := time.Now()
	for _, rep := range c.Replicas {
		c.LimitCPU(t, rep, 0.5)
	}
	lifted := false
	t.Cleanup(func() { // also when the test fails while they are starved
		if !lifted {
			for _, rep := range c.Replicas {
				c.LimitCPU(t, rep, 0)
			}
		}
	})
	for range starvedRounds {
		r = watch.AwaitBetting(t, 0)
		watch.AwaitRoundOver(t, r.RoundID)
	}
	till := time.Now()
	for _, rep := range c.Replicas {
		c.LimitCPU(t, rep, 0)
	}
	lifted = true
	cr.end()

	starved := cr.counts().since(warm)
	took := cr.betAnswers(from, till)
	accepted := cr.acceptedBets()
	at := took.at
	t.Logf("%d rounds with every replica at 0.5 CPU (%s at epoch %d): bets %v (TABLE_BUSY, refused before their debit: %d); bet answers n %d, p50 %s, p99 %s, max %s",
		starvedRounds, leader.Name, epoch, starved.answers, starved.tableBusy, len(took), at(0.5), at(0.99), at(1))
	if len(accepted) == 0 {
		t.Error("no bet accepted: the scenario played nothing")
	}
	if n := starved.answers["500 SERVER_ERROR"]; n != 0 {
		t.Errorf("%d bets answered 500 while the replicas were starved, want none", n)
	}
	if worst := at(1); worst > answerBound {
		t.Errorf("a bet waited %s for its answer, past the bound of %s", worst, answerBound)
	}
	if now, e := c.Leader(t); now != leader || e != epoch {
		t.Errorf("the table changed hands with nothing failed: %s at epoch %d, then %s at epoch %d", leader.Name, epoch, now.Name, e)
	}
	voids, _ := roundsSince(t, c.DB(), playedFrom)
	if voids != 0 {
		logVoids(t, c.DB(), playedFrom)
		t.Errorf("%d rounds voided with nothing failed, want none", voids)
	}
	c.Settled(t, 2*time.Minute)
	checkAcceptedKept(t, c, accepted)
	c.CheckOneLeaderPerRound(t)
	c.CheckWallet(t, nil)
	c.Reconcile(t)
}
