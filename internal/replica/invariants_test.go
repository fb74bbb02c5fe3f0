package replica_test

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/integration/pgtest"
	"github.com/crashstudio/crashgame/internal/cluster/natstest"
	"github.com/crashstudio/crashgame/internal/engine"
	"github.com/crashstudio/crashgame/internal/round"
	"github.com/crashstudio/crashgame/internal/store"
	"github.com/crashstudio/crashgame/internal/wallet"
)

// The invariants of one round spread over many machines (docs/scale.md),
// checked after a random run of a simulated cluster: three replicas in this
// process on one PostgreSQL database and one NATS server, each with its own
// clock (skewed by up to 5 ms) and its own wallet client to one operator's
// wallet; players who bet, cash out and cancel through any replica, with
// auto-cashouts and more than five bets a round attempted; a wallet that is
// slow, refuses, or debits and loses its answer; and every few seconds a
// fault to one replica, mostly the leader, so that the next one takes the
// table over mid-round:
//   - cut off: its lease lost, the process well (a partition from the
//     lease's point of view);
//   - paused: its traffic to PostgreSQL, NATS and the wallet held in the
//     network and delivered 1.5 to 3 s later, the process running on (a
//     stale writer whose statements arrive after the world moved on);
//   - killed: its connections reset mid-statement, its wallet calls left
//     unanswered (a debit taken stays taken), and a new process started
//     under its name 1.5 to 3 s later.
//
// The seed is logged; CRASHGAME_PROPERTY_SEED replays one.
//
// Checked from the database and the wallet's own ledger once every round has
// ended:
//   - LIM-5: a player never holds more than five bets in a round;
//   - RB-3: no bet that flew was debited at or after its round's take-off;
//   - no cashout is priced above the crash point (a cashout is priced at its
//     receive time, refused from the crash instant on);
//   - every debit ends in exactly one settlement: a bet is never left pending
//     or accepted, and has at most one /win or /rollback;
//   - RB-13: a rollback is queued only after the debit it undoes was taken;
//   - LIM-14: no payout is above max_win, and an auto-cashout whose target
//     the round reached is paid at it (whichever replica fired it, or the
//     leader after the crash), never lost;
//   - the reconciliation: for every bet, what the wallet took and will give
//     back (its debit, and the movements the queue delivers) equals what the
//     game says the player won or lost.
func TestClusterInvariantsUnderFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("a 20 s run of a simulated cluster; make unit runs it")
	}
	t.Parallel()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("CRASHGAME_PROPERTY_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("CRASHGAME_PROPERTY_SEED=%q: %v", s, err)
		}
		seed = v
	}
	t.Logf("seed %d (CRASHGAME_PROPERTY_SEED=%d replays it)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))

	dsn := pgtest.Start(t)
	nats := natstest.Start(t)
	op := newOperatorWallet(seed)
	sim := &simCluster{t: t, dsn: dsn, natsURL: nats.URL(), op: op}
	const replicas = 3
	for i := range replicas {
		off := time.Duration(rng.IntN(11)-5) * time.Millisecond
		sim.slots = append(sim.slots, &slot{name: fmt.Sprintf("node-%d", i), off: off})
		sim.start(sim.slots[i])
		t.Logf("node-%d: clock %+v", i, off)
	}
	eventually(t, "a leader", func() bool { return leaderOf(sim.nodes()) >= 0 })

	ctx, stop := context.WithTimeout(context.Background(), 20*time.Second)
	defer stop()
	var wg sync.WaitGroup
	// Players.
	var players []engine.Player
	for i := range 10 {
		p := player(fmt.Sprintf("prop%02d", i))
		if i >= 8 {
			p.Operator, p.Currency = "capped", "EUR"
			remember(p)
		}
		players = append(players, p)
	}
	for _, p := range players {
		wg.Add(1)
		prng := rand.New(rand.NewPCG(rng.Uint64(), rng.Uint64()))
		go func() {
			defer wg.Done()
			play(ctx, prng, sim, p)
		}()
	}
	// Faults, one at a time every 3 to 6 s, for 1.5 to 3 s each, mostly to
	// the leader: a cut-off (the lease lost, the process well), a pause (its
	// database, NATS and wallet traffic held, then delivered), a death (its
	// connections reset mid-statement, a new process started in its place
	// 1 to 3 s later).
	faultRNG := rand.New(rand.NewPCG(rng.Uint64(), rng.Uint64()))
	faults := map[string]int{}
	sleep := func(d time.Duration) bool {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(d):
			return true
		}
	}
	for sleep(time.Duration(3000+faultRNG.IntN(3000)) * time.Millisecond) {
		i := leaderOf(sim.nodes())
		if i < 0 || faultRNG.IntN(3) == 0 {
			i = faultRNG.IntN(replicas)
		}
		s, d := sim.slots[i], time.Duration(1500+faultRNG.IntN(1500))*time.Millisecond
		switch kind := faultRNG.IntN(3); kind {
		case 0:
			faults["cut off"]++
			t.Logf("%s: cut off for %s", s.name, d)
			s.cut.Store(true)
			sleep(d)
			s.cut.Store(false)
		case 1:
			faults["paused"]++
			t.Logf("%s: paused for %s", s.name, d)
			s.pause()
			sleep(d)
			s.resume()
		default:
			faults["killed"]++
			t.Logf("%s: killed, restarted %s later", s.name, d)
			s.kill(t)
			time.Sleep(d)
			sim.start(s)
		}
	}
	wg.Wait()
	for _, s := range sim.slots {
		s.cut.Store(false)
	}
	t.Logf("faults: %v", faults)

	// Every round played ends: the one in progress crashes, and the rounds a
	// fail-over interrupted are settled by the next leader.
	st, err := store.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var (
		bets    []store.BetRecord
		waiting []string // what is not settled yet
	)
	for deadline := time.Now().Add(45 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		bets, waiting = unsettled(st)
		if len(waiting) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("never settled: %v", waiting)
		}
	}
	checkInvariants(t, st, bets, op)
}

// unsettled reads every bet of the game, and says what is not settled yet:
// a bet still pending or accepted, a round still betting or flying.
func unsettled(st *store.Store) ([]store.BetRecord, []string) {
	ctx := context.Background()
	bets, err := st.Bets(ctx, store.BetFilter{GameID: game.ID})
	if err != nil {
		return nil, []string{err.Error()}
	}
	var waiting []string
	ended := map[string]bool{}
	for _, b := range bets {
		if b.Status == engine.StatusPending || b.Status == engine.StatusAccepted {
			waiting = append(waiting, fmt.Sprintf("bet %s %s in %s", b.ID, b.Status, b.RoundID))
		}
		if _, seen := ended[b.RoundID]; !seen {
			r, err := st.Round(ctx, game.ID, b.RoundID)
			ended[b.RoundID] = err == nil && (r.Status == engine.RoundFinished || r.Status == engine.RoundVoid)
			if !ended[b.RoundID] {
				waiting = append(waiting, fmt.Sprintf("round %s %s (%v)", b.RoundID, r.Status, err))
			}
		}
	}
	return bets, waiting
}

// invariantOperators adds to operators one whose max_win is below what its
// largest bet wins at the game's top multiplier, so that payouts are capped.
var invariantOperators = map[string]engine.Operator{
	"acme":   operators["acme"],
	"capped": {Currencies: map[string]round.Limits{"EUR": {MinBet: 100, MaxBet: 1000, MaxWin: 1200}}},
}

// simCluster is the simulated cluster: its replicas, each of which can be
// cut off, paused or killed and started again.
type simCluster struct {
	t       *testing.T
	dsn     string
	natsURL string
	op      *operatorWallet
	slots   []*slot
}

// slot is one replica: the process that runs as it now, and what reaches
// the outside from it (its links to PostgreSQL and NATS, its wallet client).
type slot struct {
	name string
	off  time.Duration // its clock's offset
	cut  atomic.Bool   // its lease is lost while set: it cannot lead

	mu      sync.Mutex
	n       *node
	clk     *skewedClock
	db, bus *link
	wallet  *walletGate
}

// start starts a new process in s, with new links.
func (c *simCluster) start(s *slot) {
	db, dsn := linkURL(c.t, c.dsn)
	bus, natsURL := linkURL(c.t, c.natsURL)
	gate := &walletGate{inner: c.op.client()}
	gate.release = closedChan()
	clk := &skewedClock{off: s.off}
	n := startNodeWith(c.t, s.name, dsn, natsURL, nodeOptions{
		wallet: gate, able: func() bool { return !s.cut.Load() }, operators: invariantOperators, failOver: true,
		clock: clk, betWait: 2 * time.Second,
	})
	s.mu.Lock()
	s.n, s.clk, s.db, s.bus, s.wallet = n, clk, db, bus, gate
	s.mu.Unlock()
}

func (c *simCluster) nodes() []*node {
	out := make([]*node, len(c.slots))
	for i, s := range c.slots {
		out[i] = s.node()
	}
	return out
}

func (s *slot) node() *node {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

func (s *slot) pause() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.db.hold()
	s.bus.hold()
	s.wallet.hold()
}

func (s *slot) resume() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.db.unhold()
	s.bus.unhold()
	s.wallet.unhold()
}

// kill ends s's process as SIGKILL does, as far as the outside sees it: its
// connections reset, its wallet calls unanswered (a debit the wallet took
// stays taken), and nothing it does after reaches anyone.
func (s *slot) kill(t *testing.T) {
	s.mu.Lock()
	n, db, bus, w, clk := s.n, s.db, s.bus, s.wallet, s.clk
	s.mu.Unlock()
	w.kill()
	db.cut()
	bus.cut()
	// What the dead process's goroutines still do reaches no one. Its clock
	// runs out at once, so that they end now rather than after their
	// retries (a crash's commit is retried for two minutes of a database
	// away); a killed process has no retries at all.
	clk.dead.Store(true)
	n.cancel()
	select {
	case <-n.done:
	case <-time.After(30 * time.Second):
		t.Errorf("%s: killed, its goroutines still run 30 s later", s.name)
	}
}

// walletGate is a replica's wallet client as a pause and a death affect it:
// a call waits while the replica is paused (before it is sent, and before
// its answer is read), and a dead replica's calls get no answer.
type walletGate struct {
	inner engine.BetWallet

	mu      sync.Mutex
	release chan struct{}
	dead    bool
}

func closedChan() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}

func (g *walletGate) hold() {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.release:
		g.release = make(chan struct{})
	default:
	}
}

func (g *walletGate) unhold() {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.release:
	default:
		close(g.release)
	}
}

func (g *walletGate) kill() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.dead = true
	select {
	case <-g.release:
	default:
		close(g.release)
	}
}

// through waits while the replica is paused; false if it is dead.
func (g *walletGate) through(ctx context.Context) bool {
	g.mu.Lock()
	release := g.release
	g.mu.Unlock()
	select {
	case <-release:
	case <-ctx.Done():
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return !g.dead
}

func (g *walletGate) BreakerOpen() bool { return false }

func (g *walletGate) BetUntil(ctx context.Context, call wallet.BetCall, deadline time.Time) (wallet.Result, error) {
	if !g.through(ctx) {
		return wallet.Result{Outcome: wallet.Temporary}, errors.New("the replica died before the call was sent")
	}
	res, err := g.inner.BetUntil(ctx, call, deadline)
	if !g.through(ctx) {
		return wallet.Result{Outcome: wallet.Temporary}, errors.New("the replica died before it read the answer")
	}
	return res, err
}

// leaderOf is the index of the node whose table leads, or -1.
func leaderOf(nodes []*node) int {
	for i, n := range nodes {
		if n.table.Leadership().Leading() {
			return i
		}
	}
	return -1
}

// play is one player until ctx ends: through a random replica each time, a
// bet (some with an auto-cashout, more than five a round when the draw
// says so) while the round bets, now and then a cancel, and cashouts while
// it flies.
func play(ctx context.Context, rng *rand.Rand, sim *simCluster, p engine.Player) {
	var mine []string // this player's bets in the round in view
	var roundID string
	for ctx.Err() == nil {
		time.Sleep(time.Duration(20+rng.IntN(130)) * time.Millisecond)
		n := sim.slots[rng.IntN(len(sim.slots))].node()
		v, _ := n.table.Round()
		if v.RoundID != roundID {
			roundID, mine = v.RoundID, nil
		}
		actx, cancel := context.WithTimeout(ctx, 3*time.Second)
		switch {
		case v.Phase == engine.PhaseBetting && len(mine) > 0 && rng.IntN(10) == 0:
			_, _ = n.rep.Cancel(actx, p, mine[rng.IntN(len(mine))])
		case v.Phase == engine.PhaseBetting:
			req := engine.BetRequest{Amount: 100 + int64(rng.IntN(900))}
			if rng.IntN(3) == 0 {
				req.AutoCashout = 101 + int64(rng.IntN(60))
			}
			if res, err := n.rep.PlaceBet(actx, p, req); err == nil {
				mine = append(mine, res.Bet.BetID)
			}
		case v.Phase == engine.PhaseFlying && len(mine) > 0 && rng.IntN(3) == 0:
			_, _ = n.rep.Cashout(actx, p, mine[rng.IntN(len(mine))], time.Now())
		}
		cancel()
	}
}

// checkInvariants checks the invariants over every bet of the run.
func checkInvariants(t *testing.T, st *store.Store, bets []store.BetRecord, op *operatorWallet) {
	t.Helper()
	ctx := context.Background()
	rounds := map[string]store.RoundRecord{}
	held := map[string]int{} // round and player: bets that flew or were accepted
	counts := map[string]int{}
	ids := make([]string, 0, len(bets))
	for _, b := range bets {
		counts[b.Status]++
		ids = append(ids, b.ID)
		if _, ok := rounds[b.RoundID]; !ok {
			r, err := st.Round(ctx, game.ID, b.RoundID)
			if err != nil {
				t.Fatalf("round %s: %v", b.RoundID, err)
			}
			rounds[b.RoundID] = r
		}
	}
	t.Logf("%d bets in %d rounds: %v; the wallet debited %d", len(bets), len(rounds), counts, op.debitCount())
	moves, err := st.ListMovements(ctx, store.MovementFilter{BetIDs: ids, Limit: 100000})
	if err != nil {
		t.Fatal(err)
	}
	settlements := map[string][]store.MovementRecord{}
	for _, m := range moves {
		settlements[m.BetID] = append(settlements[m.BetID], m)
	}
	if len(counts) < 3 || counts[engine.StatusCashedOut] == 0 || counts[engine.StatusLost]+counts[engine.StatusVoid] == 0 {
		t.Errorf("the run played too little to check anything: %v", counts)
	}
	for _, b := range bets {
		r := rounds[b.RoundID]
		flew := b.Status == engine.StatusCashedOut || b.Status == engine.StatusLost
		if flew {
			held[b.RoundID+"/"+b.Operator+"/"+b.PlayerID]++
		}
		debit, debited := op.debit(b.ID)
		// RB-3: a bet that flew was debited before its round took off.
		if flew && (!debited || !debit.at.Before(r.StartedAt.Time().Add(skewTolerance))) {
			t.Errorf("bet %s flew in %s (took off %s) with the debit %+v (debited %v)", b.ID, r.ID, r.StartedAt.Time(), debit, debited)
		}
		// No cashout above the crash point, none above max_win (LIM-14).
		if b.Status == engine.StatusCashedOut {
			maxWin := invariantOperators[b.Operator].Currencies[b.Currency].MaxWin
			switch {
			case r.CrashPoint == 0:
				t.Errorf("bet %s cashed out in round %s, which has no crash point (%s)", b.ID, r.ID, r.Status)
			case b.Multiplier > r.CrashPoint:
				t.Errorf("bet %s cashed out at x%d, above its round's crash point x%d", b.ID, b.Multiplier, r.CrashPoint)
			case b.Payout == nil || *b.Payout != round.Payout(b.Amount, b.Multiplier, maxWin) || *b.Payout > maxWin:
				t.Errorf("bet %s of %d at x%d paid %v; max_win %d", b.ID, b.Amount, b.Multiplier, b.Payout, maxWin)
			}
		}
		// LIM-14: an auto-cashout whose target the round reached is paid at
		// it (or lower, by the player's own cashout), whichever replica
		// debited the bet and whoever led: never lost, never above it.
		if b.AutoCashout != 0 && r.CrashPoint != 0 && b.AutoCashout <= r.CrashPoint {
			switch {
			case b.Status == engine.StatusLost:
				t.Errorf("bet %s with its auto-cashout at x%d was lost in round %s, which reached x%d", b.ID, b.AutoCashout, r.ID, r.CrashPoint)
			case b.Status == engine.StatusCashedOut && b.Multiplier > b.AutoCashout:
				t.Errorf("bet %s cashed out at x%d, above its auto-cashout at x%d", b.ID, b.Multiplier, b.AutoCashout)
			}
		}
		// Exactly one settlement: one movement at most, and the one its
		// status needs.
		ms := settlements[b.ID]
		if len(ms) > 1 {
			t.Errorf("bet %s (%s) has %d settlements: %+v", b.ID, b.Status, len(ms), ms)
			continue
		}
		want := ""
		switch b.Status {
		case engine.StatusCashedOut:
			want = "win"
		case engine.StatusVoid, engine.StatusCancelled:
			want = "rollback"
		}
		got := ""
		if len(ms) == 1 {
			got = ms[0].Kind
		}
		if got != want {
			t.Errorf("bet %s (%s): settlement %q, want %q", b.ID, b.Status, got, want)
			continue
		}
		// RB-13: a rollback is queued only after the debit it undoes was
		// taken; queued before, it could reach the operator first, find
		// nothing to undo, and the later debit would never be returned.
		if got == "rollback" && debited && !debit.at.Before(b.SettledAt.Time().Add(skewTolerance)) {
			t.Errorf("bet %s: its rollback was queued at %s, before the wallet took its debit at %s", b.ID, b.SettledAt.Time(), debit.at)
		}
		// The reconciliation, per bet: the wallet's side (its debit and the
		// movement the queue delivers, a rollback returning only what was
		// taken, RB-13) against the game's (the player's net).
		walletNet := int64(0)
		if debited {
			walletNet -= debit.amount
		}
		if got == "win" {
			walletNet += ms[0].Amount
		}
		if got == "rollback" && debited {
			walletNet += ms[0].Amount
		}
		gameNet := int64(0)
		switch b.Status {
		case engine.StatusCashedOut:
			gameNet = *b.Payout - b.Amount
		case engine.StatusLost:
			gameNet = -b.Amount
		}
		if walletNet != gameNet {
			t.Errorf("bet %s (%s): the wallet's net %d, the game's %d (debit %+v, movements %+v)", b.ID, b.Status, walletNet, gameNet, debit, ms)
		}
	}
	// LIM-5: at most five bets a player in a round.
	for k, n := range held {
		if n > round.MaxBetsPerPlayer {
			t.Errorf("%s held %d bets in one round", k, n)
		}
	}
	// Every debit the wallet took is a bet the game knows.
	known := map[string]bool{}
	for _, id := range ids {
		known[id] = true
	}
	for _, id := range op.debitIDs() {
		if !known[id] {
			t.Errorf("the wallet debited %s, which the game never stored", id)
		}
	}
}

// skewTolerance covers the replicas' clock offsets (at most 5 ms each way)
// when an instant of a replica's clock is compared with the wallet's.
const skewTolerance = 10 * time.Millisecond

// skewedClock is the real clock off by a fixed offset, as a replica whose
// clock NTP keeps within a few milliseconds of the others'. Once dead (the
// process killed), it is an hour ahead and every wait ends at once.
type skewedClock struct {
	off  time.Duration
	dead atomic.Bool
}

func (c *skewedClock) Now() time.Time {
	if c.dead.Load() {
		return time.Now().Add(c.off + time.Hour)
	}
	return time.Now().Add(c.off)
}

func (c *skewedClock) After(d time.Duration) <-chan time.Time {
	if c.dead.Load() {
		ch := make(chan time.Time, 1)
		ch <- c.Now()
		return ch
	}
	return time.After(d)
}

// operatorWallet is one operator's wallet as every replica's client reaches
// it: it keeps its own ledger of debits (by transaction id, with the
// instant it took each one), and answers each bet by a draw of the seed and
// the transaction id: mostly at once, sometimes slowly (past the deadline:
// debited, the answer lost), sometimes a refusal, sometimes no answer at
// all until the deadline although it debited.
type operatorWallet struct {
	seed   uint64
	mu     sync.Mutex
	debits map[string]ledgerDebit
}

type ledgerDebit struct {
	amount int64
	at     time.Time
}

func newOperatorWallet(seed uint64) *operatorWallet {
	return &operatorWallet{seed: seed, debits: map[string]ledgerDebit{}}
}

// client is a replica's wallet client to it.
func (w *operatorWallet) client() engine.BetWallet { return walletClient{w} }

func (w *operatorWallet) debit(id string) (ledgerDebit, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	d, ok := w.debits[id]
	return d, ok
}

func (w *operatorWallet) debitCount() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.debits)
}

func (w *operatorWallet) debitIDs() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]string, 0, len(w.debits))
	for id := range w.debits {
		out = append(out, id)
	}
	return out
}

// take debits call once (a repeat of its transaction id is idempotent).
func (w *operatorWallet) take(call wallet.BetCall) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.debits[call.TransactionID]; !ok {
		w.debits[call.TransactionID] = ledgerDebit{amount: call.Amount, at: time.Now()}
	}
}

type walletClient struct{ w *operatorWallet }

func (c walletClient) BreakerOpen() bool { return false }

func (c walletClient) BetUntil(ctx context.Context, call wallet.BetCall, deadline time.Time) (wallet.Result, error) {
	if !time.Now().Before(deadline) {
		return wallet.Result{Outcome: wallet.Temporary, Route: wallet.RouteBet, Reason: wallet.ReasonWindowClosed}, wallet.ErrBetWindowClosed
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(call.TransactionID))
	draw := (h.Sum64() ^ c.w.seed) % 100
	wait := func(d time.Duration) bool { // false: the deadline came first
		if until := time.Until(deadline); until < d {
			time.Sleep(until)
			return false
		}
		time.Sleep(d)
		return true
	}
	ok := wallet.Result{Outcome: wallet.Success, Balance: 1000000, HasBalance: true, OperatorTxID: "op-" + call.TransactionID}
	switch {
	case draw < 70: // at once
		c.w.take(call)
		return ok, nil
	case draw < 80: // a refusal: nothing taken
		return wallet.Result{Outcome: wallet.Refused, ErrorCode: "INSUFFICIENT_FUNDS", Balance: 50, HasBalance: true}, nil
	case draw < 92: // slowly: taken, answered if in time
		c.w.take(call)
		if !wait(time.Duration(300+(h.Sum64()>>8)%2500) * time.Millisecond) {
			return wallet.Result{Outcome: wallet.Temporary}, errors.New("no answer before the deadline")
		}
		return ok, nil
	default: // taken, and the answer never comes
		c.w.take(call)
		select {
		case <-ctx.Done():
		case <-time.After(time.Until(deadline)):
		}
		return wallet.Result{Outcome: wallet.Temporary}, errors.New("no answer before the deadline")
	}
}
