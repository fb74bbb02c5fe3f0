package replica_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/crashstudio/crashgame/integration/pgtest"
	"github.com/crashstudio/crashgame/internal/cluster"
	"github.com/crashstudio/crashgame/internal/cluster/natstest"
	"github.com/crashstudio/crashgame/internal/engine"
	"github.com/crashstudio/crashgame/internal/logtest"
	"github.com/crashstudio/crashgame/internal/movements"
	"github.com/crashstudio/crashgame/internal/replica"
	"github.com/crashstudio/crashgame/internal/round"
	"github.com/crashstudio/crashgame/internal/seal"
	"github.com/crashstudio/crashgame/internal/sessions"
	"github.com/crashstudio/crashgame/internal/store"
	"github.com/crashstudio/crashgame/internal/wallet"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// game's rounds crash by 1.50x (at most 6.8 s of flight), so a test never
// waits long for the next betting phase.
var game = engine.Game{ID: "crash", RTPBasisPoints: 9700, MaxMultiplier: 150,
	Betting: 1500 * time.Millisecond, Pause: 300 * time.Millisecond}

var operators = map[string]engine.Operator{
	"acme": {Currencies: map[string]round.Limits{"BRL": {MinBet: 100, MaxBet: 100000, MaxWin: 5000000}}},
}

// wallet is the operator's wallet: it debits every bet, or refuses those of
// 666 cents with INSUFFICIENT_FUNDS.
type fakeWallet struct{}

func (fakeWallet) BetUntil(_ context.Context, call wallet.BetCall, _ time.Time) (wallet.Result, error) {
	if call.Amount == 666 {
		return wallet.Result{Outcome: wallet.Refused, ErrorCode: "INSUFFICIENT_FUNDS", Balance: 42, HasBalance: true}, nil
	}
	return wallet.Result{Outcome: wallet.Success, Balance: 100000 - call.Amount, HasBalance: true}, nil
}

func (fakeWallet) BreakerOpen() bool { return false }

// players is the sessions service as the leader reads a forwarded action's
// player from it: it knows every player the test made (player), and counts
// the reads.
type players struct {
	mu   sync.Mutex
	seen map[string]int
}

// known are the players the tests made, by session, as the database would
// hold their sessions.
var known sync.Map

func (w *players) Player(_ context.Context, hash []byte) (engine.Player, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.seen == nil {
		w.seen = map[string]int{}
	}
	w.seen[string(hash)]++
	p, ok := known.Load(string(hash))
	if !ok {
		return engine.Player{}, errors.New("no such session")
	}
	return p.(engine.Player), nil
}

func (w *players) count(hash []byte) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.seen[string(hash)]
}

// node is one replica: its own database connection, NATS connection, table
// and view of the table.
type node struct {
	name   string
	st     *store.Store
	bus    *cluster.Bus
	table  *engine.Table
	rep    *replica.Table
	warm   *players
	cancel context.CancelFunc
	done   chan struct{}
}

func startNode(t *testing.T, name, dsn, natsURL string) *node {
	t.Helper()
	return startNodeWithBank(t, name, dsn, natsURL, nil)
}

// startNodeB is startNode for a benchmark.
func startNodeB(b *testing.B, name, dsn, natsURL string) *node {
	b.Helper()
	return startNodeWithBank(b, name, dsn, natsURL, nil)
}

func startNodeWithBank(t testing.TB, name, dsn, natsURL string, bank *engine.DemoBank) *node {
	t.Helper()
	return startNodeWith(t, name, dsn, natsURL, nodeOptions{bank: bank})
}

// nodeOptions change a node: its demo bank, its operator's wallet (nil:
// fakeWallet), its forwarded bets' bound (zero: the default), whether it can
// lead (nil: always).
type nodeOptions struct {
	bank      *engine.DemoBank
	wallet    engine.BetWallet
	betWait   time.Duration
	able      func() bool
	clock     engine.Clock               // nil: the system's
	operators map[string]engine.Operator // nil: operators
	cutOff    func() error               // the replica's CutOff; nil: never cut off
	// priceClock is the replica's PriceClock, its publisher's too; nil:
	// always within PriceBound.
	priceClock func() error
	// failOver gives the node the short lease of the tests whose leader
	// loses the table by its lease's expiry (cut off, paused, dead):
	// failOverLease, so that another replica leads within a second. The
	// others get testLease, which a loaded machine's slow renewal does not
	// end mid-round.
	failOver bool
}

// The nodes' leases. A renewal gets at most half the TTL: under
// failOverLease a renewal slower than 500 ms ends the term, which a 2-core
// machine running PostgreSQL cases side by side reached (a round voided
// under a test that was not about fail-over).
var (
	testLease     = engine.LeaseSettings{TTL: 4 * time.Second, Renew: 500 * time.Millisecond, Retry: 50 * time.Millisecond}
	failOverLease = engine.LeaseSettings{TTL: time.Second, Renew: 200 * time.Millisecond, Retry: 50 * time.Millisecond}
)

func startNodeWith(t testing.TB, name, dsn, natsURL string, o nodeOptions) *node {
	t.Helper()
	bank := o.bank
	var w engine.BetWallet = fakeWallet{}
	if o.wallet != nil {
		w = o.wallet
	}
	ctx := context.Background()
	st, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	logger := logtest.New(t).With("replica", name)
	st.SetLogger(logger)
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	bus, err := cluster.Connect(ctx, cluster.Options{URLs: []string{natsURL}, Name: name, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = bus.Close() })
	ops := operators
	if o.operators != nil {
		ops = o.operators
	}
	lease := testLease
	if o.failOver {
		lease = failOverLease
	}
	lease.Holder, lease.Able = name, o.able
	n := &node{name: name, st: st, bus: bus, warm: &players{}, done: make(chan struct{})}
	pub := replica.NewPublisher(bus, game.ID, nil, o.priceClock)
	n.table, err = engine.New(ctx, engine.Config{
		Game: game, Operators: ops, Clock: o.clock, Store: st.Records(), Chains: st.HashChains(), Outbox: movements.NewOutbox(st.Movements()),
		Wallets:     func(string) (engine.BetWallet, bool) { return w, true },
		Events:      pub,
		Lease:       lease,
		ChainLength: 1000, Demo: bank, SeedingWindow: -1, Sealer: sealer(t), LossDelay: engine.DefaultLossDelay,
		Logger: logger,
	})
	if err != nil {
		t.Fatal(err)
	}
	pub.Follow(n.table.Leadership())
	n.rep, err = replica.New(replica.Config{Bus: bus, Table: n.table, Sessions: n.warm, BetWait: o.betWait, CutOff: o.cutOff, PriceClock: o.priceClock, Logger: logger,
		Lease: func(ctx context.Context) (int64, error) {
			rec, err := st.Lease(ctx, game.ID)
			return rec.Epoch, err
		}})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	n.cancel = cancel
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); _ = n.rep.Run(runCtx) }()
	go func() { defer wg.Done(); _ = n.table.Run(runCtx) }()
	go func() { wg.Wait(); close(n.done) }()
	t.Cleanup(n.stop)
	return n
}

// stop stops the node as SIGTERM does: its table finishes the round and
// hands over.
func (n *node) stop() {
	n.cancel()
	<-n.done
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func player(id string) engine.Player {
	return remember(engine.Player{Session: []byte("session-" + id + "-00000000000000000000")[:32], Operator: "acme",
		PlayerID: id, Token: "tok-" + id, Currency: "BRL", Name: id[:1] + "***"})
}

// remember makes p's session known to every node's sessions (players).
func remember(p engine.Player) engine.Player {
	known.Store(string(p.Session), p)
	return p
}

// twoNodes starts a leader and a follower of one game on one database and
// one NATS server, and waits until both show the same betting round.
func twoNodes(t *testing.T) (leader, follower *node, nats *natstest.Server) {
	t.Helper()
	dsn := pgtest.Start(t)
	nats = natstest.Start(t)
	a := startNode(t, "node-a", dsn, nats.URL())
	eventually(t, "a leads", a.table.Leadership().Leading)
	b := startNode(t, "node-b", dsn, nats.URL())
	eventually(t, "both show the same round", func() bool {
		va, _ := a.table.Round()
		vb, _ := b.table.Round()
		return va.RoundID != "" && vb.RoundID == va.RoundID && vb.Phase == va.Phase
	})
	if b.table.Leadership().Leading() {
		t.Fatal("two nodes lead one table")
	}
	return a, b, nats
}

// awaitBetting waits for a betting phase with at least 800 ms left.
func awaitBetting(t *testing.T, n *node) engine.RoundView {
	t.Helper()
	var v engine.RoundView
	eventually(t, "a fresh betting phase", func() bool {
		v, _ = n.table.Round()
		return v.Phase == engine.PhaseBetting && time.Until(v.BettingEndsAt) > 800*time.Millisecond
	})
	return v
}

// A bet placed on a replica that does not lead is admitted and decided by
// the leader: the answer comes back, the leader warmed the session (at the
// admission), the bet is stored once,
// and the player's stream on the follower gets the leader's bet event. Both
// replicas show the same round, id and crash point.
func TestForwardedBetAndCashout(t *testing.T) {
	t.Parallel()
	a, b, _ := twoNodes(t)
	p := player("bob")
	sub := b.table.Subscribe(p.Session, 64)
	defer sub.Close()
	v := awaitBetting(t, b)
	res, err := b.rep.PlaceBet(context.Background(), p, engine.BetRequest{Amount: 500})
	if err != nil {
		t.Fatalf("forwarded bet: %v", err)
	}
	if res.Bet.RoundID != v.RoundID || res.Bet.Status != engine.StatusAccepted || res.Balance != 100000-500 {
		t.Fatalf("bet %+v in round %s", res, v.RoundID)
	}
	if a.warm.count(p.Session) != 1 || b.warm.count(p.Session) != 0 {
		t.Fatalf("warmed on the leader %d times, on the follower %d", a.warm.count(p.Session), b.warm.count(p.Session))
	}
	bets, err := a.st.Bets(context.Background(), store.BetFilter{ID: res.Bet.BetID})
	if err != nil || len(bets) != 1 || bets[0].Status != engine.StatusAccepted {
		t.Fatalf("stored %+v, %v", bets, err)
	}
	gotBet := false
	for !gotBet {
		select {
		case ev := <-sub.C:
			gotBet = ev.Type == engine.EventBet && ev.Bet != nil && ev.Bet.BetID == res.Bet.BetID
		case <-time.After(10 * time.Second):
			t.Fatal("the follower's stream never got the bet event")
		}
	}
	// The flight, on both replicas; the cashout is priced by the leader.
	eventually(t, "the round flies everywhere", func() bool {
		va, _ := a.table.Round()
		vb, _ := b.table.Round()
		return va.RoundID == v.RoundID && va.Phase != engine.PhaseBetting && vb.Phase == va.Phase
	})
	out, err := b.rep.Cashout(context.Background(), p, res.Bet.BetID, time.Now())
	// The crash point is stored with the crash, never before.
	var rec store.RoundRecord
	eventually(t, "the round crashes", func() bool {
		rec, _ = a.st.Round(context.Background(), game.ID, v.RoundID)
		return rec.CrashPoint != 0
	})
	switch {
	case err == nil:
		if out.Multiplier < 100 || out.Multiplier > rec.CrashPoint || out.Payout != round.Payout(500, out.Multiplier, 5000000) {
			t.Fatalf("cashout %+v, crash point %d", out, rec.CrashPoint)
		}
	case errors.Is(err, round.ErrRoundCrashed) || errors.Is(err, round.ErrCashoutNotAllowed):
		// The round crashed first: a refusal crosses as the engine's value.
	default:
		t.Fatalf("forwarded cashout: %v", err)
	}
	eventually(t, "the round crashes everywhere with one crash point", func() bool {
		va, _ := a.table.Round()
		vb, _ := b.table.Round()
		return va.RoundID == v.RoundID && va.Phase == engine.PhaseCrashed && vb.RoundID == va.RoundID &&
			vb.Phase == engine.PhaseCrashed && vb.CrashPoint == va.CrashPoint && vb.Hash == va.Hash
	})
}

// Refusals cross the cluster as the engine's own values, so the player API
// answers a forwarded action as it would a local one.
func TestForwardedRefusals(t *testing.T) {
	t.Parallel()
	_, b, _ := twoNodes(t)
	awaitBetting(t, b)
	ctx := context.Background()
	_, err := b.rep.PlaceBet(ctx, player("carl"), engine.BetRequest{Amount: 100001})
	if !errors.Is(err, round.ErrBetLimit) {
		t.Fatalf("a bet above max_bet: %v", err)
	}
	_, err = b.rep.PlaceBet(ctx, player("dora"), engine.BetRequest{Amount: 666})
	var refused *engine.RefusedError
	if !errors.As(err, &refused) || refused.Code != "INSUFFICIENT_FUNDS" || !refused.HasBalance || refused.Balance != 42 {
		t.Fatalf("a refused debit: %v (%+v)", err, refused)
	}
	_, err = b.rep.Cashout(ctx, player("dora"), "b_nosuchbet", time.Now())
	if !errors.Is(err, round.ErrUnknownBet) {
		t.Fatalf("a cashout of an unknown bet: %v", err)
	}
}

// When the leader stops, it hands over at the round boundary and the other
// replica leads the next round of the same chain; actions sent meanwhile get
// a clear temporary error (TABLE_UNAVAILABLE), and afterwards the former
// follower serves them itself.
func TestHandOverBetweenReplicas(t *testing.T) {
	t.Parallel()
	a, b, _ := twoNodes(t)
	before, _ := a.table.Round()
	a.stop()
	eventually(t, "b leads", b.table.Leadership().Leading)
	v := awaitBetting(t, b)
	if v.Seq <= before.Seq {
		t.Fatalf("b opened round %d after %d", v.Seq, before.Seq)
	}
	res, err := b.rep.PlaceBet(context.Background(), player("erin"), engine.BetRequest{Amount: 300})
	if err != nil || res.Bet.RoundID != v.RoundID {
		t.Fatalf("bet on the new leader: %+v %v", res, err)
	}
	if b.warm.count(player("erin").Session) != 0 {
		t.Fatal("a local bet of the leader went through the cluster")
	}
	for _, r := range mustRounds(t, b.st) {
		if r.Status == engine.RoundVoid {
			t.Errorf("round %d was voided by the hand-over", r.Seq)
		}
	}
}

// With no leader at all (NATS reaches nobody who serves the table), an
// action gets ErrTableUnavailable, never a silent loss.
func TestNoLeaderIsTemporary(t *testing.T) {
	t.Parallel()
	a, b, _ := twoNodes(t)
	awaitBetting(t, b)
	b.cancel() // b keeps its connection but stops everything
	<-b.done
	// a's relay and serving stop too; its table no longer serves the subject.
	a.cancel()
	<-a.done
	_, err := a.rep.PlaceBet(context.Background(), player("fred"), engine.BetRequest{Amount: 200})
	if !errors.Is(err, engine.ErrTableUnavailable) {
		t.Fatalf("a bet with no leader: %v", err)
	}
}

// A bet received while no replica serves the table (a hand-over's gap)
// waits for a leader. When the replica that received it takes the table
// meanwhile, the bet is placed there: nobody served its forward, so nothing
// was executed, and the player gets the new leader's answer (accepted, or
// BETTING_CLOSED before its first round opens), never TABLE_UNAVAILABLE.
func TestBetWaitingForALeaderIsPlacedByTheReplicaThatTakesTheTable(t *testing.T) {
	t.Parallel()
	dsn := pgtest.Start(t)
	nats := natstest.Start(t)
	var bAble atomic.Bool
	a := startNode(t, "node-a", dsn, nats.URL())
	eventually(t, "a leads", a.table.Leadership().Leading)
	b := startNodeWith(t, "node-b", dsn, nats.URL(), nodeOptions{able: bAble.Load})
	awaitBetting(t, b)
	a.stop() // a plays its round to the crash and hands over; b cannot lead yet
	if b.table.Leadership().Leading() {
		t.Fatal("b leads although it cannot")
	}
	time.AfterFunc(100*time.Millisecond, func() { bAble.Store(true) })
	res, err := b.rep.PlaceBet(context.Background(), player("ivy"), engine.BetRequest{Amount: 300})
	if !b.table.Leadership().Leading() {
		t.Fatalf("b did not take the table within the bet's wait for a leader (answered %+v, %v)", res, err)
	}
	if errors.Is(err, engine.ErrTableUnavailable) {
		t.Fatalf("a bet that waited for a leader, received by the replica that took the table: %v", err)
	}
	if err != nil && !errors.Is(err, round.ErrBettingClosed) {
		t.Fatalf("a bet that waited for a leader: %v, want accepted or BETTING_CLOSED", err)
	}
}

func mustRounds(t *testing.T, st *store.Store) []store.RoundRecord {
	t.Helper()
	rs, err := st.RecentRounds(context.Background(), game.ID, 100)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// A demo bet forwarded by a follower is decided at the leader with the
// leader's bank; its balance comes back in the answer.
func TestForwardedDemoBet(t *testing.T) {
	t.Parallel()
	dsn := pgtest.Start(t)
	nats := natstest.Start(t)
	bankA, bankB := engine.NewDemoBank(), engine.NewDemoBank()
	a := startNodeWithBank(t, "node-a", dsn, nats.URL(), bankA)
	eventually(t, "a leads", a.table.Leadership().Leading)
	b := startNodeWithBank(t, "node-b", dsn, nats.URL(), bankB)
	p := player("gina")
	p.Demo, p.PlayerID, p.Token = true, "", ""
	remember(p)
	bankA.Open(p.Session, 100000) // what the leader's Player loads from the database
	bankB.Open(p.Session, 100000) // the follower opened the session
	v, _ := a.table.Round()
	eventually(t, "the follower sees the leader's next round", func() bool {
		vb, _ := b.table.Round()
		return vb.Seq > v.Seq && vb.Phase == engine.PhaseBetting && time.Until(vb.BettingEndsAt) > 800*time.Millisecond
	})
	res, err := b.rep.PlaceBet(context.Background(), p, engine.BetRequest{Amount: 2500})
	if err != nil || res.Balance != 97500 {
		t.Fatalf("demo bet through the follower: %+v %v", res, err)
	}
	if bal, _ := bankA.Balance(p.Session); bal != 97500 {
		t.Fatalf("the leader's bank holds %d, want 97500", bal)
	}
}

// Rule BAL-4: a balance change decided on one replica (sessions' Relay)
// reaches every other replica's sessions (Heard), a demo session's and a
// player's alike, and never comes back to the one that decided it.
func TestBalanceChangesCrossToTheOtherReplicas(t *testing.T) {
	t.Parallel()
	nats := natstest.Start(t)
	type heardBy struct {
		mu  sync.Mutex
		got []sessions.Change
	}
	start := func(name string) (*replica.Balances, *heardBy) {
		bus, err := cluster.Connect(context.Background(), cluster.Options{URLs: []string{nats.URL()}, Name: name})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = bus.Close() })
		b := replica.NewBalances(bus, nil)
		h := &heardBy{}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			_ = b.Run(ctx, func(c sessions.Change) { h.mu.Lock(); h.got = append(h.got, c); h.mu.Unlock() })
		}()
		t.Cleanup(func() { cancel(); <-done })
		return b, h
	}
	a, heardA := start("a")
	_, heardB := start("b")
	_, heardC := start("c")
	time.Sleep(200 * time.Millisecond) // the subscriptions are made
	sent := []sessions.Change{
		{Session: []byte("session-hash"), Demo: true, Balance: 97500},
		{Operator: "acme", PlayerID: "p-1", Currency: "BRL", Balance: 12345},
	}
	for _, c := range sent {
		a.Relay(c)
	}
	for _, h := range []*heardBy{heardB, heardC} {
		eventually(t, "both changes heard", func() bool { h.mu.Lock(); defer h.mu.Unlock(); return len(h.got) == 2 })
		h.mu.Lock()
		if !reflect.DeepEqual(h.got, sent) {
			t.Errorf("heard %+v, want %+v", h.got, sent)
		}
		h.mu.Unlock()
	}
	heardA.mu.Lock()
	defer heardA.mu.Unlock()
	if len(heardA.got) != 0 {
		t.Fatalf("the relaying replica heard its own changes: %+v", heardA.got)
	}
}

// sealer seals the test tables' chain seeds with a fixed key: every node
// the same, as every replica of an installation.
func sealer(t testing.TB) *seal.Sealer {
	t.Helper()
	s, err := seal.New(make([]byte, seal.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// hangingWallet never answers a bet of 777 cents until released, whatever
// its context says: a leader that received the bet and went silent (paused,
// cut off mid-answer). Every other bet is fakeWallet's.
type hangingWallet struct {
	fakeWallet
	called  chan struct{} // closed at the first hanging call
	once    sync.Once
	release chan struct{}
}

func newHangingWallet() *hangingWallet {
	return &hangingWallet{called: make(chan struct{}), release: make(chan struct{})}
}

func (w *hangingWallet) BetUntil(ctx context.Context, call wallet.BetCall, deadline time.Time) (wallet.Result, error) {
	if call.Amount != 777 {
		return w.fakeWallet.BetUntil(ctx, call, deadline)
	}
	w.once.Do(func() { close(w.called) })
	// As the wallet client does: no attempt outlives the deadline, and an
	// answer that never came leaves the outcome unknown.
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case <-w.release:
		return wallet.Result{Outcome: wallet.Success, Balance: 100000 - call.Amount, HasBalance: true}, nil
	case <-timer.C:
	case <-ctx.Done():
	}
	return wallet.Result{Outcome: wallet.Temporary}, errors.New("no answer before the deadline")
}

// countingWallet is fakeWallet, counting the /bet calls sent through it.
type countingWallet struct {
	fakeWallet
	calls atomic.Int64
}

func (w *countingWallet) BetUntil(ctx context.Context, call wallet.BetCall, deadline time.Time) (wallet.Result, error) {
	w.calls.Add(1)
	return w.fakeWallet.BetUntil(ctx, call, deadline)
}

// A bet on a replica that does not lead is debited by that replica: its
// /bet leaves through its own wallet client, the leader's sends none, and
// the leader only admits it and decides its outcome. The bet is stored
// accepted once and shows on the board.
func TestBetDebitedByTheReplicaThatReceivedIt(t *testing.T) {
	t.Parallel()
	dsn := pgtest.Start(t)
	nats := natstest.Start(t)
	wa, wb := &countingWallet{}, &countingWallet{}
	a := startNodeWith(t, "node-a", dsn, nats.URL(), nodeOptions{wallet: wa})
	eventually(t, "a leads", a.table.Leadership().Leading)
	b := startNodeWith(t, "node-b", dsn, nats.URL(), nodeOptions{wallet: wb})
	v := awaitBetting(t, b)
	const bets = 3
	for i := range bets {
		res, err := b.rep.PlaceBet(context.Background(), player("ivy"), engine.BetRequest{Amount: int64(500 + i)})
		if err != nil {
			t.Fatalf("bet %d: %v", i, err)
		}
		if res.Bet.Status != engine.StatusAccepted || res.Bet.RoundID != v.RoundID {
			t.Fatalf("bet %d: %+v, want accepted in %s", i, res.Bet, v.RoundID)
		}
	}
	if wa.calls.Load() != 0 || wb.calls.Load() != bets {
		t.Fatalf("/bet calls: the leader's wallet client %d, the receiving replica's %d; want 0 and %d", wa.calls.Load(), wb.calls.Load(), bets)
	}
	stored, err := a.st.Bets(context.Background(), store.BetFilter{RoundIDs: []string{v.RoundID}})
	if err != nil || len(stored) != bets {
		t.Fatalf("stored %d bets of the round, %v; want %d", len(stored), err, bets)
	}
	for _, s := range stored {
		if s.Status != engine.StatusAccepted {
			t.Fatalf("stored %s %s, want accepted", s.ID, s.Status)
		}
	}
}

// A replica whose clock is more than SkewBound from PostgreSQL's (its
// health reads PostgreSQL's own clock) is cut off: /readyz fails, and every
// bet it receives is refused TABLE_UNAVAILABLE before anything is written,
// since a bet's debit deadline is read on its clock. A replica in step with
// the database takes the same player's bets.
func TestReplicaWhoseClockIsOutOfStepTakesNoBet(t *testing.T) {
	t.Parallel()
	dsn := pgtest.Start(t)
	nats := natstest.Start(t)
	var hb atomic.Pointer[replica.Health]
	a := startNode(t, "node-a", dsn, nats.URL())
	eventually(t, "a leads", a.table.Leadership().Leading)
	b := startNodeWith(t, "node-b", dsn, nats.URL(), nodeOptions{cutOff: func() error {
		if h := hb.Load(); h != nil {
			return h.CutOff()
		}
		return nil
	}})
	watch := func(n *node, ahead time.Duration) *replica.Health {
		t.Helper()
		h, err := replica.NewHealth(replica.HealthConfig{
			Bus: n.bus, Database: n.st, Limit: time.Second, Drain: time.Second, Every: 50 * time.Millisecond,
			Now: func() time.Time { return time.Now().Add(ahead) },
		})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); _ = h.Run(ctx) }()
		t.Cleanup(func() { cancel(); <-done })
		return h
	}
	ha := watch(a, 0)
	hb.Store(watch(b, 2*replica.SkewBound))
	eventually(t, "b's clock found out of step", func() bool {
		err := hb.Load().CutOff()
		return err != nil && strings.Contains(err.Error(), "clock")
	})
	eventually(t, "a's clock measured", func() bool { _, _, ok := ha.ClockOffset(); return ok })
	if off, unc, _ := ha.ClockOffset(); ha.CutOff() != nil || off.Abs() > 100*time.Millisecond {
		t.Fatalf("a, on the database's host clock: offset %s ± %s, cut off %v", off, unc, ha.CutOff())
	}
	if off, _, _ := hb.Load().ClockOffset(); off < 2*replica.SkewBound-100*time.Millisecond {
		t.Fatalf("b, %s ahead: measured %s", 2*replica.SkewBound, off)
	}
	v := awaitBetting(t, b)
	p := player("olga")
	if _, err := b.rep.PlaceBet(context.Background(), p, engine.BetRequest{Amount: 500}); !errors.Is(err, engine.ErrTableUnavailable) {
		t.Fatalf("a bet on the replica out of step: %v, want TABLE_UNAVAILABLE", err)
	}
	if res, err := a.rep.PlaceBet(context.Background(), p, engine.BetRequest{Amount: 600}); err != nil || res.Bet.Status != engine.StatusAccepted {
		t.Fatalf("a bet on the replica in step: %+v, %v", res, err)
	}
	stored, err := a.st.Bets(context.Background(), store.BetFilter{RoundIDs: []string{v.RoundID}})
	if err != nil || len(stored) != 1 || stored[0].Amount != 600 {
		t.Fatalf("stored %+v, %v; want only the bet of 600 taken in step", stored, err)
	}
}

// RB-5: a bet whose debit outlives the player's bound is answered
// TABLE_UNAVAILABLE (outcome unknown) within the bound, never refused; its
// debit goes on to its deadline on the replica that received it, and the
// leader then decides the unknown outcome: the bet is voided and rolled back.
func TestRB5BetWhoseDebitOutlivesItsBoundIsRolledBack(t *testing.T) {
	t.Parallel()
	dsn := pgtest.Start(t)
	nats := natstest.Start(t)
	hang := newHangingWallet()
	a := startNodeWith(t, "node-a", dsn, nats.URL(), nodeOptions{wallet: &countingWallet{}})
	eventually(t, "a leads", a.table.Leadership().Leading)
	// The bound leaves the admission and the intent's commit time to end
	// before it on a loaded machine: the wallet's call is what outlives it.
	const bound = time.Second
	b := startNodeWith(t, "node-b", dsn, nats.URL(), nodeOptions{wallet: hang, betWait: bound})
	v := awaitBetting(t, b)
	p := player("hank")
	sub := b.table.Subscribe(p.Session, 64)
	defer sub.Close()
	start := time.Now()
	_, err := b.rep.PlaceBet(context.Background(), p, engine.BetRequest{Amount: 777})
	if waited := time.Since(start); waited > bound+2*time.Second {
		t.Fatalf("the player waited %s for a bound of %s", waited, bound)
	}
	select {
	case <-hang.called:
	case <-time.After(10 * time.Second):
		t.Fatal("the receiving replica never called its wallet")
	}
	var refused *engine.RefusedError
	if !errors.Is(err, engine.ErrTableUnavailable) || errors.As(err, &refused) || errors.Is(err, round.ErrBettingClosed) {
		t.Fatalf("a bet whose debit is still unknown: %v, want TABLE_UNAVAILABLE", err)
	}
	// The stream tells the player what became of it.
	for {
		select {
		case ev := <-sub.C:
			if ev.Type == engine.EventBet && ev.Bet != nil && ev.Bet.Status == engine.StatusVoid {
				if ev.Bet.RoundID != v.RoundID {
					t.Fatalf("voided bet %+v, want round %s", ev.Bet, v.RoundID)
				}
				stored, err := a.st.Bets(context.Background(), store.BetFilter{ID: ev.Bet.BetID})
				if err != nil || len(stored) != 1 || stored[0].Status != engine.StatusVoid {
					t.Fatalf("stored %+v, %v; want the bet void", stored, err)
				}
				return
			}
		case <-time.After(15 * time.Second):
			t.Fatal("the stream never showed the bet voided")
		}
	}
}

// RB-5: a leader lost while a bet it admitted is being debited on another
// replica. The new leader settles the interrupted round only once that
// bet's debit deadline has passed (its window end, DebitGrace, and a clock
// margin), so its rollback never comes before the /bet it undoes; the
// debited bet is then voided and rolled back, and the player, whose answer
// was lost with the leader, is told TABLE_UNAVAILABLE, never a refusal.
func TestRB5NewLeaderSettlesTheWindowOnlyAfterItsDebits(t *testing.T) {
	t.Parallel()
	dsn := pgtest.Start(t)
	nats := natstest.Start(t)
	hang := newHangingWallet()
	var cutOff atomic.Bool
	a := startNodeWith(t, "node-a", dsn, nats.URL(), nodeOptions{able: func() bool { return !cutOff.Load() }, failOver: true})
	eventually(t, "a leads", a.table.Leadership().Leading)
	b := startNodeWith(t, "node-b", dsn, nats.URL(), nodeOptions{wallet: hang, betWait: time.Hour})
	v := awaitBetting(t, b)
	answered := make(chan error, 1)
	go func() {
		_, err := b.rep.PlaceBet(context.Background(), player("hank"), engine.BetRequest{Amount: 777})
		answered <- err
	}()
	select {
	case <-hang.called:
	case <-time.After(10 * time.Second):
		t.Fatal("the receiving replica never called its wallet")
	}
	cutOff.Store(true)
	eventually(t, "b leads", b.table.Leadership().Leading)
	close(hang.release) // the wallet debits the bet now, before its deadline
	var err error
	select {
	case err = <-answered:
	case <-time.After(15 * time.Second):
		t.Fatal("the bet was never answered")
	}
	var refused *engine.RefusedError
	if !errors.Is(err, engine.ErrTableUnavailable) || errors.As(err, &refused) {
		t.Fatalf("a bet whose leader was lost: %v, want TABLE_UNAVAILABLE", err)
	}
	var bets []store.BetRecord
	eventually(t, "the interrupted round's bet settled", func() bool {
		bets, _ = b.st.Bets(context.Background(), store.BetFilter{RoundIDs: []string{v.RoundID}})
		return len(bets) == 1 && bets[0].Status != engine.StatusPending
	})
	rec, err := b.st.Round(context.Background(), game.ID, v.RoundID)
	if err != nil || rec.Status != engine.RoundVoid {
		t.Fatalf("the interrupted round: %+v, %v; want void", rec, err)
	}
	earliest := rec.BettingEndsAt.Time().Add(engine.DefaultDebitGrace + time.Second)
	if bets[0].Status != engine.StatusVoid || bets[0].SettledAt.Time().Before(earliest) {
		t.Fatalf("the bet %s settled at %s; want void, not before its debits' end %s", bets[0].Status, bets[0].SettledAt.Time(), earliest)
	}
}

// cashOutInFlight places a bet of p on n and cashes it out as soon as its
// round flies, round after round until a cashout is not too late (a round
// may crash at 1.00x). It returns the cashout, the bet and the round as n
// showed it when the cashout was received.
func cashOutInFlight(t *testing.T, n *node, p engine.Player) (engine.CashoutResult, engine.BetView, engine.RoundView, time.Time) {
	t.Helper()
	res, bet, v, at, _ := cashOutInFlightTries(t, n, p)
	return res, bet, v, at
}

// cashOutInFlightTries is cashOutInFlight, and tells how many cashouts it
// sent: one more for each round that crashed before its cashout.
func cashOutInFlightTries(t *testing.T, n *node, p engine.Player) (engine.CashoutResult, engine.BetView, engine.RoundView, time.Time, int64) {
	t.Helper()
	for tries := int64(1); tries <= 10; tries++ {
		awaitBetting(t, n)
		bet, err := n.rep.PlaceBet(context.Background(), p, engine.BetRequest{Amount: 1000})
		if err != nil {
			t.Fatalf("bet: %v", err)
		}
		var v engine.RoundView
		eventually(t, "the round flies", func() bool {
			v, _ = n.table.Round()
			return v.RoundID == bet.Bet.RoundID && v.Phase != engine.PhaseBetting
		})
		at := time.Now()
		res, err := n.rep.Cashout(context.Background(), p, bet.Bet.BetID, at)
		switch {
		case err == nil:
			return res, bet.Bet, v, at, tries
		case !errors.Is(err, round.ErrRoundCrashed):
			t.Fatalf("cashout: %v", err)
		}
	}
	t.Fatal("ten rounds crashed before a cashout")
	return engine.CashoutResult{}, engine.BetView{}, engine.RoundView{}, time.Time{}, 0
}

// everyTerm is the subject of the test game's action in every term, for a
// watcher: ActionSubject with a wildcard for the epoch.
func everyTerm(action string) string {
	return cluster.SubjectPrefix + "." + cluster.GameToken(game.ID) + ".action." + action + ".*"
}

// watchCashouts counts, from a NATS connection of its own, the cashouts
// asked of the leader to price (asked) and the cashed notes it is told of
// (told), until the test ends.
func watchCashouts(t *testing.T, natsURL string) (asked, told *atomic.Int64) {
	t.Helper()
	nc, err := nats.Connect(natsURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	asked, told = &atomic.Int64{}, &atomic.Int64{}
	for subject, n := range map[string]*atomic.Int64{
		everyTerm(cluster.ActionCashout): asked,
		everyTerm(cluster.ActionCashed):  told,
	} {
		if _, err := nc.Subscribe(subject, func(*nats.Msg) { n.Add(1) }); err != nil {
			t.Fatal(err)
		}
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return asked, told
}

// WIN-3: a cashout received by a replica that does not lead is priced and
// committed there: at the multiplier of the moment it received it, from the
// round's take-off and its crash instant worked out from the sealed chain,
// with its /win queued in the same transaction; the leader is not asked
// (nothing crosses on its cashout subject) and is told afterwards (the
// cashed note), and the player's stream on the leader's replica shows it.
func TestCashoutPricedAndCommittedByTheReplicaThatReceivedIt(t *testing.T) {
	t.Parallel()
	a, b, srv := twoNodes(t)
	asked, told := watchCashouts(t, srv.URL())
	p := player("iris")
	onLeader := a.table.Subscribe(p.Session, 64)
	defer onLeader.Close()
	res, bet, v, at := cashOutInFlight(t, b, p)
	if want := round.Multiplier(at.Sub(v.StartedAt)); res.Multiplier != want || res.Payout != round.Payout(bet.Amount, want, 0) {
		t.Fatalf("cashout %+v received %s after take-off; want %d, paying %d", res, at.Sub(v.StartedAt), want, round.Payout(bet.Amount, want, 0))
	}
	stored, err := a.st.Bets(context.Background(), store.BetFilter{ID: bet.BetID})
	if err != nil || len(stored) != 1 || stored[0].Status != engine.StatusCashedOut || stored[0].Multiplier != res.Multiplier || *stored[0].Payout != res.Payout {
		t.Fatalf("stored %+v, %v", stored, err)
	}
	moves, err := a.st.ListMovements(context.Background(), store.MovementFilter{BetIDs: []string{bet.BetID}, Limit: 10})
	if err != nil || len(moves) != 1 || moves[0].Kind != "win" || moves[0].Amount != res.Payout {
		t.Fatalf("the movements of the bet: %+v, %v; want its /win of %d", moves, err, res.Payout)
	}
	eventually(t, "the leader told", func() bool { return told.Load() == 1 })
	if asked.Load() != 0 {
		t.Fatalf("the leader was asked to price %d cashouts", asked.Load())
	}
	for ev := range onLeader.C {
		if ev.Type == engine.EventBet && ev.Bet.BetID == bet.BetID && ev.Bet.Status == engine.StatusCashedOut {
			break
		}
	}
}

// A replica prices cashouts on the leader's timeline only while the leader's
// clock, which keeps the crash instant, is known to be within PriceBound of
// the database's as well as its own (so that CashoutGuard covers the two
// clocks' difference): each broadcast of the leader says so. While the
// leader's is not, the replica sends its cashouts to the leader, which
// prices them on its own clock; once the leader's broadcasts say it is in
// step again, the replica prices them itself.
func TestReplicaPricesOnlyWhileTheLeadersClockIsInStep(t *testing.T) {
	t.Parallel()
	dsn := pgtest.Start(t)
	srv := natstest.Start(t)
	var leaderOff atomic.Bool
	leaderOff.Store(true)
	a := startNodeWith(t, "node-a", dsn, srv.URL(), nodeOptions{priceClock: func() error {
		if leaderOff.Load() {
			return errors.New("the clock is 40 ms from the database's")
		}
		return nil
	}})
	eventually(t, "a leads", a.table.Leadership().Leading)
	b := startNode(t, "node-b", dsn, srv.URL())
	asked, told := watchCashouts(t, srv.URL())

	res, bet, v, at, tries := cashOutInFlightTries(t, b, player("olga"))
	if asked.Load() != tries || told.Load() != 0 {
		t.Fatalf("with the leader's clock out of step: the leader asked to price %d cashouts, told of %d; want %d (one a round tried) and 0", asked.Load(), told.Load(), tries)
	}
	// Priced by the leader at its own receive time: after the replica's.
	if min := round.Multiplier(at.Sub(v.StartedAt)); res.Multiplier < min || res.Payout != round.Payout(bet.Amount, res.Multiplier, 0) {
		t.Fatalf("the leader's price %+v; the replica received it at x%d", res, min)
	}

	leaderOff.Store(false)
	asked.Store(0)
	cashOutInFlight(t, b, player("olga-2"))
	if asked.Load() != 0 {
		t.Fatalf("with both clocks in step, the leader was asked to price %d cashouts", asked.Load())
	}
	eventually(t, "the leader told", func() bool { return told.Load() == 1 })
}

// WIN-2: a bet is cashed out once. A replica keeps the bets it debited, as
// the leader decided them, so that their cashouts need no read of the row;
// once the bet was cashed out through another replica, that record is
// stale, and the replica's cashout finds the row moved: CASHOUT_NOT_ALLOWED,
// and one /win.
func TestCashoutOfABetCashedOutElsewhereFirst(t *testing.T) {
	t.Parallel()
	a, b, _ := twoNodes(t)
	p := player("ruth")
	for range 10 {
		awaitBetting(t, b)
		bet, err := b.rep.PlaceBet(context.Background(), p, engine.BetRequest{Amount: 1000})
		if err != nil {
			t.Fatalf("bet: %v", err)
		}
		eventually(t, "the round flies", func() bool {
			v, _ := b.table.Round()
			return v.RoundID == bet.Bet.RoundID && v.Phase != engine.PhaseBetting
		})
		first, err := a.rep.Cashout(context.Background(), p, bet.Bet.BetID, time.Now())
		if errors.Is(err, round.ErrRoundCrashed) {
			continue
		}
		if err != nil {
			t.Fatalf("the cashout through the leader: %v", err)
		}
		if _, err := b.rep.Cashout(context.Background(), p, bet.Bet.BetID, time.Now()); !errors.Is(err, round.ErrCashoutNotAllowed) {
			t.Fatalf("a second cashout through the replica that debited it: %v, want ErrCashoutNotAllowed", err)
		}
		moves, err := a.st.ListMovements(context.Background(), store.MovementFilter{BetIDs: []string{bet.Bet.BetID}, Limit: 10})
		if err != nil || len(moves) != 1 || moves[0].Kind != "win" || moves[0].Amount != first.Payout {
			t.Fatalf("the movements of the bet: %+v, %v; want one /win of %d", moves, err, first.Payout)
		}
		return
	}
	t.Fatal("ten rounds crashed before a cashout")
}

// A forwarded action crosses NATS as this package's versioned message: the
// session's hash and the action, never the operator's wallet token (the
// leader reads the session from the database).
func TestForwardedActionsCarryNoToken(t *testing.T) {
	t.Parallel()
	a, b, srv := twoNodes(t)
	nc, err := nats.Connect(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	var (
		mu  sync.Mutex
		raw []string
	)
	for _, action := range []string{cluster.ActionAdmit, cluster.ActionDecide, cluster.ActionCashout, cluster.ActionCashed} {
		sub, err := nc.Subscribe(everyTerm(action), func(m *nats.Msg) {
			mu.Lock()
			raw = append(raw, string(m.Data))
			mu.Unlock()
		})
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = sub.Unsubscribe() }()
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	p := player("hank")
	awaitBetting(t, b)
	res, err := b.rep.PlaceBet(context.Background(), p, engine.BetRequest{Amount: 700})
	if err != nil {
		t.Fatalf("forwarded bet: %v", err)
	}
	if a.warm.count(p.Session) != 1 {
		t.Fatalf("the leader read the player %d times, want 1", a.warm.count(p.Session))
	}
	// A demo bet's cashout crosses to the leader (its bank); refused in
	// betting, it crossed all the same.
	_, _ = b.rep.Cashout(context.Background(), remember(engine.Player{Session: p.Session, Demo: true}), res.Bet.BetID, time.Now())
	cashOutInFlight(t, b, player("hank-2"))
	eventually(t, "the admission, the debit's outcome, the demo cashout and the cashed note seen on the wire", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(raw) >= 6 // two bets' admit and decide, the demo cashout, a note
	})
	mu.Lock()
	defer mu.Unlock()
	for _, m := range raw {
		if strings.Contains(m, p.Token) || strings.Contains(m, p.PlayerID) || strings.Contains(m, `"token"`) {
			t.Errorf("a forwarded action carries the player's token or id: %s", m)
		}
		if !strings.Contains(m, `"v":1`) {
			t.Errorf("a forwarded action carries no wire version: %s", m)
		}
	}
}

// autoInFlight places a bet with an auto-cashout at 1.01x on n for p until
// a round whose crash point is at least 1.05x takes it, and returns the
// bet, the events p's stream on n received from the bet's answer to
// LossDelay after the crash, and the crashed round.
func autoInFlight(t *testing.T, n *node, p engine.Player) (engine.BetView, []*engine.Event, engine.RoundView) {
	t.Helper()
	sub := n.table.Subscribe(p.Session, 256)
	defer sub.Close()
	for range 10 {
		awaitBetting(t, n)
		bet, err := n.rep.PlaceBet(context.Background(), p, engine.BetRequest{Amount: 1000, AutoCashout: 101})
		if err != nil {
			t.Fatalf("bet: %v", err)
		}
		var (
			seen    []*engine.Event
			crashed engine.RoundView
		)
		timeout := time.After(20 * time.Second)
	read:
		for {
			select {
			case ev := <-sub.C:
				seen = append(seen, ev)
				if ev.Type == engine.EventRoundCrashed && ev.Round.RoundID == bet.Bet.RoundID && crashed.RoundID == "" {
					crashed = ev.Round
					timeout = time.After(engine.DefaultLossDelay + time.Second)
				}
			case <-timeout:
				break read
			}
		}
		if crashed.RoundID == "" {
			t.Fatalf("round %s never crashed", bet.Bet.RoundID)
		}
		if crashed.CrashPoint >= 105 {
			return bet.Bet, seen, crashed
		}
	}
	t.Fatal("ten rounds crashed below 1.05x")
	return engine.BetView{}, nil, engine.RoundView{}
}

// cashedOutAt is the index in events of the bet event that shows betID
// cashed out, and that event's bet; -1 when there is none.
func cashedOutAt(events []*engine.Event, betID string) (int, engine.BetView) {
	for i, ev := range events {
		if ev.Type == engine.EventBet && ev.Bet.BetID == betID && ev.Bet.Status == engine.StatusCashedOut {
			return i, *ev.Bet
		}
	}
	return -1, engine.BetView{}
}

// crashedAt is the index in events of the crash of roundID.
func crashedAt(events []*engine.Event, roundID string) int {
	for i, ev := range events {
		if ev.Type == engine.EventRoundCrashed && ev.Round.RoundID == roundID {
			return i
		}
	}
	return -1
}

// checkAutoPaid checks that bet, with its auto-cashout at 1.01x, is stored
// cashed out at exactly its target, at the instant the round reached it,
// with one /win of its payout.
func checkAutoPaid(t *testing.T, st *store.Store, bet engine.BetView, v engine.RoundView) {
	t.Helper()
	stored, err := st.Bets(context.Background(), store.BetFilter{ID: bet.BetID})
	if err != nil || len(stored) != 1 {
		t.Fatalf("the bet: %+v, %v", stored, err)
	}
	got, payout := stored[0], round.Payout(bet.Amount, 101, 0)
	reached := v.StartedAt.Add(round.TimeToReach(101))
	if got.Status != engine.StatusCashedOut || got.Multiplier != 101 || got.Payout == nil || *got.Payout != payout ||
		got.SettledAt.Time().Sub(reached).Abs() > time.Millisecond {
		t.Fatalf("stored %s at x%d paying %v at %s; want cashed out at x1.01 paying %d at %s", got.Status, got.Multiplier, got.Payout, got.SettledAt.Time(), payout, reached)
	}
	moves, err := st.ListMovements(context.Background(), store.MovementFilter{BetIDs: []string{bet.BetID}, Limit: 10})
	if err != nil || len(moves) != 1 || moves[0].Kind != "win" || moves[0].Amount != payout {
		t.Fatalf("the movements of the bet: %+v, %v; want one /win of %d", moves, err, payout)
	}
}

// Rule LIM-14: the auto-cashout of a bet debited by a replica that does not
// lead is committed by that replica when the multiplier reaches its target,
// at exactly the target, with its /win: the player sees it paid while the
// round flies, before the crash, and the leader commits nothing for it.
func TestAutoCashoutCommittedByTheReplicaThatDebitedIt(t *testing.T) {
	t.Parallel()
	a, b, _ := twoNodes(t)
	bet, events, v := autoInFlight(t, b, player("uma"))
	paid, view := cashedOutAt(events, bet.BetID)
	if paid < 0 || paid > crashedAt(events, v.RoundID) {
		t.Fatalf("the bet's auto-cashout was shown at event %d, the crash at %d; want it paid in flight: %v", paid, crashedAt(events, v.RoundID), eventTypes(events))
	}
	if view.Multiplier != 101 {
		t.Fatalf("shown cashed out at x%d", view.Multiplier)
	}
	checkAutoPaid(t, a.st, bet, v)
}

// Rule LIM-14: a replica whose clock is not known to be in step leaves the
// auto-cashouts it debited to the leader, which pays each at its target
// once the crash's losses are committed (the losses never take a bet whose
// target the round reached): paid after the crash, at the target, once.
func TestAutoCashoutLeftToTheLeaderIsPaidAfterTheCrash(t *testing.T) {
	t.Parallel()
	dsn := pgtest.Start(t)
	srv := natstest.Start(t)
	a := startNode(t, "node-a", dsn, srv.URL())
	eventually(t, "a leads", a.table.Leadership().Leading)
	b := startNodeWith(t, "node-b", dsn, srv.URL(), nodeOptions{priceClock: func() error {
		return errors.New("the clock is 40 ms from the database's")
	}})
	bet, events, v := autoInFlight(t, b, player("vera"))
	paid, view := cashedOutAt(events, bet.BetID)
	if paid < 0 || paid < crashedAt(events, v.RoundID) {
		t.Fatalf("the bet's auto-cashout was shown at event %d, the crash at %d; want it paid after the crash: %v", paid, crashedAt(events, v.RoundID), eventTypes(events))
	}
	if view.Multiplier != 101 {
		t.Fatalf("shown cashed out at x%d", view.Multiplier)
	}
	checkAutoPaid(t, a.st, bet, v)
}

func eventTypes(events []*engine.Event) []string {
	out := make([]string, len(events))
	for i, ev := range events {
		out[i] = ev.Type
		if ev.Bet != nil {
			out[i] += "/" + ev.Bet.Status
		}
	}
	return out
}

// A table's actions go to the current term's leader only: the subjects name
// the term (cluster.ActionSubject), and a replica learns a new term from the
// new leader's events and from the lease. A former leader that still serves
// its own term's subjects (here a subscriber on them that never answers: a
// leader cut off from NATS whose subscriptions the server keeps until its
// pings fail) gets none of the bets sent after the hand-over, and they are
// all accepted by the new leader.
func TestActionsGoToTheCurrentTermOnly(t *testing.T) {
	t.Parallel()
	dsn := pgtest.Start(t)
	srv := natstest.Start(t)
	a := startNode(t, "node-a", dsn, srv.URL())
	eventually(t, "a leads", a.table.Leadership().Leading)
	b := startNode(t, "node-b", dsn, srv.URL())
	c := startNode(t, "node-c", dsn, srv.URL())
	former := a.table.Leadership().Epoch()
	nc, err := nats.Connect(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	var stolen atomic.Int64
	for _, action := range []string{cluster.ActionAdmit, cluster.ActionDecide, cluster.ActionCancel, cluster.ActionCashed} {
		if _, err := nc.Subscribe(cluster.ActionSubject(game.ID, action, former), func(*nats.Msg) { stolen.Add(1) }); err != nil {
			t.Fatal(err)
		}
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	a.stop() // hands the table over at the round boundary
	var next *node
	eventually(t, "another node leads", func() bool {
		for _, n := range []*node{b, c} {
			if n.table.Leadership().Leading() {
				next = n
				return true
			}
		}
		return false
	})
	if e := next.table.Leadership().Epoch(); e <= former {
		t.Fatalf("the new term's epoch %d, the former %d", e, former)
	}
	via := b
	if next == b {
		via = c
	}
	v := awaitBetting(t, via)
	stolen.Store(0)
	for i := range 5 {
		res, err := via.rep.PlaceBet(context.Background(), player(fmt.Sprintf("term-%d", i)), engine.BetRequest{Amount: 100})
		if err != nil {
			if errors.Is(err, round.ErrBettingClosed) {
				break // the window closed on a loaded machine: what was sent counts
			}
			t.Fatalf("bet %d through %s: %v", i, via.name, err)
		}
		if res.Bet.RoundID != v.RoundID {
			t.Fatalf("bet %d in round %s, want %s", i, res.Bet.RoundID, v.RoundID)
		}
	}
	if n := stolen.Load(); n != 0 {
		t.Fatalf("%d actions sent after the hand-over went to the former term's subjects", n)
	}
}
