//go:build integration

package suite

import (
	"context"
	"testing"
	"time"
)

// pgReadOnlyFor is how long PostgreSQL refuses writes: longer than the lease
// TTL, so that the leader's renewals fail and its term ends.
const pgReadOnlyFor = 8 * time.Second

// SetReadOnly makes every transaction PostgreSQL starts from now on
// read-only (ALTER SYSTEM SET default_transaction_read_only, reloaded: the
// sessions already open take it at their next statement), or lifts that.
// Reads go on; every write fails with SQLSTATE 25006.
func (e *Env) SetReadOnly(t testing.TB, on bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := e.DB().Conn(ctx)
	if err != nil {
		t.Fatalf("suite: a connection to PostgreSQL: %v", err)
	}
	defer func() { _ = conn.Close() }()
	stmts := []string{"ALTER SYSTEM SET default_transaction_read_only = on", "SELECT pg_reload_conf()"}
	if !on {
		stmts = []string{"SET SESSION default_transaction_read_only = off",
			"ALTER SYSTEM RESET default_transaction_read_only", "SELECT pg_reload_conf()"}
	}
	for _, s := range stmts {
		if _, err := conn.ExecContext(ctx, s); err != nil {
			t.Fatalf("suite: %s: %v", s, err)
		}
	}
}

// TestClusterPostgresSick: the cluster's PostgreSQL is made sick twice while
// 60 players bet with auto-cashouts through the load balancer and a round
// flies: first it refuses every write for pgReadOnlyFor (read-only), then it
// is restarted (stopped for 3 s). The leader's renewals fail and it steps
// down; bets that cannot be committed are refused before their debit;
// cashouts that cannot be committed are not paid. Once PostgreSQL takes
// writes again a replica takes the table and its recovery settles the
// interrupted rounds by the fail-over rule (RB-5). No bet is answered 500,
// no answer waits past answerBound, every bet the players were told was
// accepted is kept, and every debit ends in one settlement (0 cents,
// nothing unsettled).
func TestClusterPostgresSick(t *testing.T) {
	laneCluster.join(t)
	c := StartCluster(t, ClusterOptions{})
	const players = 60
	ss := enterMany(t, c, players)
	cr := startCrowd(t, ss)
	defer cr.end()
	cr.awaitOpen(t, players, time.Minute)
	watch := ss[0].Via(c.Replicas[0])
	r := watch.AwaitBetting(t, 0)
	watch.AwaitRoundOver(t, r.RoundID)
	playedFrom, _ := c.lastRound(t)
	_, epoch := c.Leader(t)
	warm := cr.counts()
	from := time.Now()

	sick := func(name string, fault func()) {
		r := watch.AwaitBetting(t, 0)
		watch.AwaitPhase(t, r.RoundID, "flying")
		fault()
		t.Logf("PostgreSQL %s in round %s's flight", name, r.RoundID)
		// Two rounds played after it, the table led again.
		for range 2 {
			r = watch.AwaitBetting(t, 0)
			watch.AwaitRoundOver(t, r.RoundID)
		}
	}
	readOnly := false
	t.Cleanup(func() { // also when the test fails while PostgreSQL is read-only
		if readOnly {
			c.SetReadOnly(t, false)
		}
	})
	sick("read-only", func() {
		c.SetReadOnly(t, true)
		readOnly = true
		time.Sleep(pgReadOnlyFor) // the fault's length, not a wait for a state
		c.SetReadOnly(t, false)
		readOnly = false
	})
	sick("restarted", func() { c.RestartPostgres(t, 3*time.Second) })
	till := time.Now()
	cr.end()

	faulty := cr.counts().since(warm)
	took := cr.betAnswers(from, till)
	accepted := cr.acceptedBets()
	at := took.at
	voids, rounds := roundsSince(t, c.DB(), playedFrom)
	leader, nextEpoch := c.Leader(t)
	t.Logf("PostgreSQL read-only, then restarted: epoch %d to %d (%s leads); %d rounds, %d void; bets %v; bet answers n %d, p50 %s, p99 %s, max %s",
		epoch, nextEpoch, leader.Name, rounds, voids, faulty.answers, len(took), at(0.5), at(0.99), at(1))
	logVoids(t, c.DB(), playedFrom)
	if len(accepted) == 0 {
		t.Error("no bet accepted: the scenario played nothing")
	}
	if n := faulty.answers["500 SERVER_ERROR"]; n != 0 {
		t.Errorf("%d bets answered 500 while PostgreSQL was sick, want none", n)
	}
	if worst := at(1); worst > answerBound {
		t.Errorf("a bet waited %s for its answer, past the bound of %s", worst, answerBound)
	}
	c.Settled(t, 2*time.Minute)
	checkFailoverRule(t, c.DB())
	checkAcceptedKept(t, c, accepted)
	c.CheckOneLeaderPerRound(t)
	c.CheckWallet(t, nil)
	c.Reconcile(t)
}
