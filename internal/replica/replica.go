// Package replica joins one process's table of a game to the cluster's: a
// player's bet runs its money path on the replica that received it, between
// the leader's admission and decision; a cashout is priced and committed by
// the replica that received it, and the leader told; a cancel reaches the
// table's leader wherever it runs; every replica's streams get the leader's
// events.
//
// Each replica runs an engine.Table for every game; exactly one of them leads
// (the table's lease, held by package leadership, and the fencing epoch its
// commits check decide which). A Table here wraps the local one:
//   - actions: while the local table leads, they go to it directly. Otherwise
//     a bet is checked here (engine.Table.CheckBet), admitted by the leader
//     (admit), its intent committed for the admitting term and its /bet sent
//     from here (engine.Table.Debit), its outcome decided by the leader
//     (decide), and an acceptance committed here (engine.Table.Accept). A cashout is priced and committed here
//     (engine.Table.Cashout) and the leader told (cashed); a demo bet's
//     cashout, every cashout while this replica's clock is not known within
//     PriceBound of the database's, and a cancel are sent to the leader.
//     They go by request/reply on the action subjects of the game's current
//     term (package cluster: a subject per fencing epoch), and the leader's
//     answer, or its refusal, comes back as the engine's own values and
//     errors. A replica learns the current term from its own leadership,
//     from the epoch the leader's events carry, and from the lease in the
//     database (every LeaseEvery, and at once when nobody served an
//     action), so a former leader that still serves its own term's subjects
//     gets no action once the new term is known; a bet's decision and
//     release go to the term that admitted it. A bet is admitted at the leader's
//     receive time; a cashout is priced at the receive time of the replica
//     that prices it. While this replica's table leads, it serves those
//     subjects: it subscribes to the table's leadership and starts or stops
//     serving as each term begins or ends. A bet is answered within a bound
//     (4 s), a forwarded cashout or cancel within 2 s, and sooner once the
//     leader's answer can no longer come; then its outcome is unknown
//     (engine.ErrTableUnavailable).
//   - events: the leader's table publishes every event on the game's event
//     subject (Publisher, its engine.Events), with its term's epoch; every
//     replica, the leader included, hands them to its local subscribers
//     (engine.Table.Deliver), but for an event of a lower epoch than one it
//     already had (a former leader's, overtaken).
//   - a forwarded action crosses as this package's versioned message
//     (wire.go) naming its session by hash: the leader reads the player,
//     the operator's token included, from the database (Players), so the
//     token never crosses NATS, and the display balances of the actions the
//     leader decides are kept where it runs.
//   - balances: the changes each replica's sessions decide (a bet's answer,
//     a cashout's expected balance, the wallet's answer to a delivered /win
//     or /rollback) reach every other replica's sessions (Balances), which
//     show them on the streams open there.
//   - health: a replica that has not reached NATS or its database for longer
//     than the lease TTL, or whose clock is more than SkewBound from the
//     database's, is cut off (Health): /readyz fails, it takes no bet, and
//     after the drain its streams are closed so that its players reconnect
//     elsewhere.
//
// It must never decide anything about a bet (the engine does: the leader
// admits and decides, the receiving replica's engine commits the intent,
// debits and commits the acceptance),
// retry an action whose outcome is unknown (the player is told so and the
// stream shows what happened), or log a token or a player's id.
package replica

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/crashstudio/crashgame/internal/cluster"
	"github.com/crashstudio/crashgame/internal/engine"
)

// How long a forwarded action may wait for the leader's answer.
const (
	// DefaultBetWait bounds a forwarded bet's wait: under deploy/haproxy.cfg's
	// 5 s for a bet (timeout server), so that the player gets the game's own
	// answer, TABLE_UNAVAILABLE included, and not the balancer's. A bet's
	// /bet may go on at the leader after it (until its round takes off):
	// the outcome is then unknown to the player, and the stream and My bets
	// show it.
	DefaultBetWait = 4 * time.Second
	// actionTimeout bounds a forwarded cashout's or cancel's wait: the
	// leader answers them without calling the wallet.
	actionTimeout = 2 * time.Second
	// watchEvery is how often a forwarded action checks whether the round in
	// view moved past it (gone), how often it asks again while no replica
	// serves the table, and how soon serving the actions is tried again
	// after it failed. Whether this replica's table leads is never polled:
	// its leadership announces it.
	watchEvery = 50 * time.Millisecond
	// noLeaderWait bounds how long a forwarded action waits for a leader to
	// serve the table (a hand-over, a leader that just started serving).
	noLeaderWait = time.Second
)

// Why a forwarded action stopped waiting before its bound: its answer can no
// longer come, or comes too late to matter. Its outcome is unknown either way.
var (
	errNowLeading = errors.New("this replica's table leads now: the leader that received the action lost the table")
	errRoundGone  = errors.New("the table moved past the round the action was for")
)

// Players gives the leader the player of a forwarded action's session: the
// session is made live in this process (loaded from the database when it is
// not), so that the balances of the actions the leader decides are kept
// where it runs, and the player's wallet token is read there, never sent
// over NATS. A session it refuses (expired) is the action's refusal.
// *sessions.Service satisfies it.
type Players interface {
	Player(ctx context.Context, hash []byte) (engine.Player, error)
}

// Config is what a Table is built from.
type Config struct {
	Bus      *cluster.Bus
	Table    *engine.Table // this replica's table of the game, built with a Publisher as its Events
	Sessions Players
	Now      func() time.Time // the leader's receive time of a forwarded bet or cashout; nil: time.Now
	Logger   *slog.Logger     // nil: slog.Default()
	// BetWait bounds a forwarded bet's wait for the leader's answer; zero:
	// DefaultBetWait.
	BetWait time.Duration
	// CutOff says why this replica takes no bet now (Health.CutOff: cut off
	// from NATS or the database, or its clock out of step, on which a bet's
	// debit deadline is read), or nil; nil: it always may.
	CutOff func() error
	// PriceClock says why this replica's clock is not known to be within
	// PriceBound of the database's now (Health.PriceClock), or nil: its
	// cashouts then go to the leader. nil: always within (one clock, tests).
	PriceClock func() error
	// Lease reads the fencing epoch of the game's lease in the database
	// (store's Lease): the term whose leader the actions are sent to, read
	// at the start, every LeaseEvery, and at once when nobody served an
	// action. Required.
	Lease func(ctx context.Context) (epoch int64, err error)
}

// Table is this replica's view of one game's table in the cluster: it
// carries out the player actions (the player API's table.Actions); the
// reads are the local engine.Table's, which follows the leader's events.
type Table struct {
	local      *engine.Table // this replica's table: it leads, or it follows the leader's events
	bus        *cluster.Bus
	sessions   Players
	now        func() time.Time
	logger     *slog.Logger
	betWait    time.Duration
	cutOff     func() error
	priceClock func() error
	game       string
	// leaderClock is what the leader's latest broadcast said of its clock
	// (Publisher): a cashout is priced here only while it was in step.
	leaderClock atomic.Pointer[leaderClock]
	// term is the highest fencing epoch of the table's lease this replica
	// knows (its own term's, the leader's events', the lease as read): the
	// actions go to that term's subjects (ActionSubject), so a former leader
	// that still serves its own gets none. heard is the highest epoch the
	// leader's events carried: an event of a lower one, a former leader's,
	// is not shown.
	term  atomic.Int64
	heard atomic.Int64
	lease func(ctx context.Context) (int64, error)
	// reread asks Run to read the lease now (nobody served an action).
	reread chan struct{}
}

// leaderClock is the leader's clock as its latest broadcast event told it.
type leaderClock struct {
	roundID string // the round of the event
	inStep  bool   // within PriceBound of the database's
}

// New returns the replica's view of cfg.Table's game. Call Run.
func New(cfg Config) (*Table, error) {
	switch {
	case cfg.Bus == nil:
		return nil, errors.New("replica: no bus")
	case cfg.Table == nil:
		return nil, errors.New("replica: no table")
	case cfg.Sessions == nil:
		return nil, errors.New("replica: no sessions")
	case cfg.Lease == nil:
		return nil, errors.New("replica: no lease reader")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.BetWait <= 0 {
		cfg.BetWait = DefaultBetWait
	}
	if cfg.CutOff == nil {
		cfg.CutOff = func() error { return nil }
	}
	if cfg.PriceClock == nil {
		cfg.PriceClock = func() error { return nil }
	}
	g := cfg.Table.Game()
	return &Table{
		local: cfg.Table, bus: cfg.Bus, sessions: cfg.Sessions, now: cfg.Now,
		logger: cfg.Logger.With("game_id", g.ID), betWait: cfg.BetWait, cutOff: cfg.CutOff, priceClock: cfg.PriceClock, game: g.ID,
		lease: cfg.Lease, reread: make(chan struct{}, 1),
	}, nil
}

// Run relays the leader's events to the local subscribers and, while the
// local table leads, serves the game's actions, until ctx ends.
func (t *Table) Run(ctx context.Context) error {
	// A session's events are skipped unread unless one of its streams is
	// here (holds): with N replicas, N−1 of every N are for a stream
	// elsewhere.
	stopEvents, err := t.bus.SubscribeFor(cluster.EventSubject(t.game), t.holds, func(data []byte, gap bool) { t.receive(ctx, data, gap) })
	if err != nil {
		return fmt.Errorf("replica: subscribe to %s's events: %w", t.game, err)
	}
	defer stopEvents()
	// What happened before the subscription: the round as the database has
	// it.
	if err := t.local.LoadView(ctx); err != nil {
		t.logger.Warn("reading the current round failed", "err", err)
	}
	t.readLease(ctx)
	go t.followLease(ctx)
	terms := t.local.Leadership().Subscribe()
	defer terms.Stop()
	var (
		stopServing func()
		leads       bool
		epoch       int64
		retry       <-chan time.Time // set while serving failed: NATS is what is waited for
	)
	defer func() {
		if stopServing != nil {
			stopServing()
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return nil
		case n := <-terms.C():
			leads, epoch = n.Leading(), n.Epoch()
			t.learn(epoch)
		case <-retry:
		}
		retry = nil
		switch {
		case leads && stopServing == nil:
			if stopServing, err = t.serve(epoch); err != nil {
				t.logger.Error("serving the table's actions failed; retrying", "err", err)
				stopServing, retry = nil, time.After(watchEvery)
			}
		case !leads && stopServing != nil:
			stopServing()
			stopServing = nil
		}
	}
}

// LeaseEvery is how often a replica reads the table's lease to learn the
// current term, besides the leader's events and the actions nobody served:
// within it of a take-over, every action goes to the new leader, even while
// the former one still serves its own term's subjects (cut off from NATS,
// whose server keeps its subscriptions until its pings fail).
const LeaseEvery = time.Second

// followLease reads the lease every LeaseEvery, and when asked (askLease),
// until ctx ends.
func (t *Table) followLease(ctx context.Context) {
	tick := time.NewTicker(LeaseEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-t.reread:
		}
		t.readLease(ctx)
	}
}

// askLease asks followLease to read the lease now; it never blocks.
func (t *Table) askLease() {
	select {
	case t.reread <- struct{}{}:
	default:
	}
}

// readLease learns the lease's epoch from the database.
func (t *Table) readLease(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, actionTimeout)
	defer cancel()
	epoch, err := t.lease(ctx)
	if err != nil {
		t.logger.Debug("reading the table's lease failed", "err", err)
		return
	}
	t.learn(epoch)
}

// learn raises the term this replica knows to epoch.
func (t *Table) learn(epoch int64) { raise(&t.term, epoch) }

// raise sets v to n when n is higher.
func raise(v *atomic.Int64, n int64) {
	for {
		cur := v.Load()
		if n <= cur || v.CompareAndSwap(cur, n) {
			return
		}
	}
}

// receive hands one event of the leader to the local subscribers.
func (t *Table) receive(ctx context.Context, data []byte, gap bool) {
	var w eventMsg
	err := json.Unmarshal(data, &w)
	if err == nil {
		err = w.check("event")
	}
	if err != nil {
		t.logger.Error("an event of the leader could not be read", "err", err)
		return
	}
	if w.Epoch > 0 {
		// A former leader's event, after the new leader's first: what it
		// says was overtaken (its writes are fenced), and is not shown.
		if w.Epoch < t.heard.Load() {
			t.logger.Debug("an event of a former leader of the table was dropped", "epoch", w.Epoch, "type", w.Type)
			return
		}
		raise(&t.heard, w.Epoch)
		t.learn(w.Epoch)
	}
	if w.Session == nil {
		// Only the leader's loop broadcasts: its phases and its board.
		t.leaderClock.Store(&leaderClock{roundID: w.Round.RoundID, inStep: w.ClockInStep})
	}
	if gap {
		// Events were lost (or a new leader speaks): the round shown is read
		// again from the database, and the phase events that follow carry the
		// whole round.
		t.logger.Warn("events of the table's leader were missed; reading the round again")
		if err := t.local.LoadView(ctx); err != nil {
			t.logger.Warn("reading the current round failed", "err", err)
		}
	}
	ev := w.event()
	t.local.Deliver(w.Session, ev)
	if ev.Type == engine.EventRoundFlying && !t.local.Leadership().Leading() {
		t.payDebitedAutos(ctx, ev.Round)
	}
}

// payDebitedAutos commits the auto-cashouts of the bets debited here in v, a
// round just seen taking off, as the multiplier reaches their targets
// (engine.Table.PayDebitedAutos), while this replica's clock and the leader's
// are within PriceBound of the database's: a target is due by this clock,
// against the leader's take-off. Otherwise the leader pays them after the
// crash, as it does any a replica has not committed.
func (t *Table) payDebitedAutos(ctx context.Context, v engine.RoundView) {
	if err := t.priceClock(); err != nil || !t.leaderInStep() {
		t.logger.Info("the auto-cashouts debited here are left to the leader, which pays them after the crash: the clocks are not known to be in step", "round_id", v.RoundID, "err", err)
		return
	}
	go t.local.PayDebitedAutos(ctx, v)
}

// serve answers the game's actions with the local table, which leads at
// epoch.
func (t *Table) serve(epoch int64) (stop func(), err error) {
	var stops []func()
	stopAll := func() {
		for _, s := range stops {
			s()
		}
	}
	for action, h := range map[string]cluster.Handler{
		cluster.ActionAdmit: t.serveAdmit, cluster.ActionDecide: t.serveDecide, cluster.ActionRelease: t.serveRelease,
		cluster.ActionCashout: t.serveCashout, cluster.ActionCashed: t.serveCashed, cluster.ActionCancel: t.serveCancel,
	} {
		s, err := t.bus.Serve(cluster.ActionSubject(t.game, action, epoch), h)
		if err != nil {
			stopAll()
			return nil, err
		}
		stops = append(stops, s)
	}
	t.logger.Info("serving the table's actions", "epoch", epoch)
	var once sync.Once
	return func() { once.Do(stopAll) }, nil
}

// player decodes a forwarded action's message (what names it in the error)
// into msg, checks its version and reads its session's player at the
// leader; a session the sessions service refuses is the action's refusal.
func (t *Table) player(ctx context.Context, what string, data []byte, msg forwarded) (engine.Player, error) {
	if err := json.Unmarshal(data, msg); err != nil {
		return engine.Player{}, fmt.Errorf("replica: %s request: %w", what, err)
	}
	head, session := msg.head()
	if err := head.check(what); err != nil {
		return engine.Player{}, err
	}
	p, err := t.sessions.Player(ctx, session)
	if err != nil {
		return engine.Player{}, refusalOf(err)
	}
	return p, nil
}

func (t *Table) serveAdmit(ctx context.Context, data []byte) ([]byte, error) {
	at := t.now() // the leader's own receive time admits the bet, as it prices a cashout
	var m admitMsg
	p, err := t.player(ctx, "admit", data, &m)
	if err != nil {
		return nil, err
	}
	adm, err := t.local.Admit(ctx, p, m.request(at))
	return answer(admitAnswer{wire: v1(), Admission: admissionOf(adm)}, err)
}

// serveDecide decides a bet's debit outcome. The leader needs no player for
// it: the bet it admitted names its session, which must be the message's.
func (t *Table) serveDecide(ctx context.Context, data []byte) ([]byte, error) {
	var m decideMsg
	if err := decode("decide", data, &m); err != nil {
		return nil, err
	}
	res, err := t.local.Decide(ctx, m.Session, m.Admission.engine(), m.outcome())
	return answer(betAnswer{wire: v1(), Bet: betWireOf(res.Bet), Balance: res.Balance}, err)
}

func (t *Table) serveRelease(_ context.Context, data []byte) ([]byte, error) {
	var m actionMsg
	if err := decode("release", data, &m); err != nil {
		return nil, err
	}
	t.local.Release(m.Session, m.BetID)
	return answer(struct{ wire }{v1()}, nil)
}

// decode reads a forwarded message that needs no player into msg and checks
// its version.
func decode(what string, data []byte, msg forwarded) error {
	if err := json.Unmarshal(data, msg); err != nil {
		return fmt.Errorf("replica: %s request: %w", what, err)
	}
	head, _ := msg.head()
	return head.check(what)
}

func (t *Table) serveCashout(ctx context.Context, data []byte) ([]byte, error) {
	at := t.now() // the leader's own receive time prices the cashout
	var m actionMsg
	p, err := t.player(ctx, "cashout", data, &m)
	if err != nil {
		return nil, err
	}
	res, err := t.local.Cashout(ctx, p, m.BetID, at)
	return answer(cashoutAnswer{wire: v1(), BetID: res.BetID, Multiplier: res.Multiplier, Payout: res.Payout, Balance: res.Balance}, err)
}

func (t *Table) serveCashed(ctx context.Context, data []byte) ([]byte, error) {
	var m cashedMsg
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("replica: cashed note: %w", err)
	}
	if err := m.check("cashed"); err != nil {
		return nil, err
	}
	return answer(struct{ wire }{v1()}, t.local.Cashed(ctx, m.note()))
}

func (t *Table) serveCancel(ctx context.Context, data []byte) ([]byte, error) {
	var m actionMsg
	p, err := t.player(ctx, "cancel", data, &m)
	if err != nil {
		return nil, err
	}
	res, err := t.local.Cancel(ctx, p, m.BetID)
	return answer(betAnswer{wire: v1(), Bet: betWireOf(res.Bet), Balance: res.Balance}, err)
}

// PlaceBet places a bet. Where the local table leads, it places it
// (engine.Table.PlaceBet). Elsewhere the bet's money path runs here, on the
// replica that received it, and the leader is asked only what must be
// decided once: the bet's place in the round (admit) and what its debit's
// outcome makes of it (decide). The intent's commit, the signed /bet and the
// acceptance's commit are this replica's work (engine.Table.Debit,
// engine.Table.Accept), so one round's bets spread over the replicas the
// balancer spreads them to (docs/scale.md).
//
// The player is answered within the bet's bound (BetWait): a bet whose
// outcome is not known by then is answered TABLE_UNAVAILABLE, and its debit
// and decision go on without the player's request, since their outcome must
// be known; the stream and My bets show it. A replica cut off (CutOff)
// refuses every bet TABLE_UNAVAILABLE before anything is written.
func (t *Table) PlaceBet(ctx context.Context, p engine.Player, req engine.BetRequest) (engine.BetResult, error) {
	if err := t.cutOff(); err != nil {
		return engine.BetResult{}, fmt.Errorf("%w: this replica takes no bet now: %w", engine.ErrTableUnavailable, err)
	}
	if t.local.Leadership().Leading() {
		return t.local.PlaceBet(ctx, p, req)
	}
	w, err := t.local.CheckBet(p, req)
	if err != nil {
		return engine.BetResult{}, err
	}
	reqCtx := ctx
	ctx, cancel := context.WithTimeout(ctx, t.betWait)
	defer cancel()
	var a admitAnswer
	if err := t.forward(ctx, cluster.ActionAdmit, 0, actionTimeout, admitMsgOf(p, req), &a, &a.wire); err != nil {
		if t.admitHere(err) {
			return t.local.PlaceBet(reqCtx, p, req)
		}
		return engine.BetResult{}, err
	}
	adm := a.Admission.engine()
	type placed struct {
		res engine.BetResult
		err error
	}
	done := make(chan placed, 1)
	go func() {
		res, err := t.debit(context.WithoutCancel(ctx), p, req, w, adm)
		done <- placed{res, err}
	}()
	select {
	case pl := <-done:
		return pl.res, pl.err
	case <-ctx.Done():
		return engine.BetResult{}, fmt.Errorf("%w: the bet's outcome is not known yet (%w)", engine.ErrTableUnavailable, ctx.Err())
	}
}

// debit runs the money path of the bet adm admitted, here: the intent and
// the signed /bet, then the leader decides its outcome, and an acceptance
// is committed here (engine.Table.Accept). An intent that did not commit
// frees the place.
func (t *Table) debit(ctx context.Context, p engine.Player, req engine.BetRequest, w engine.BetWallet, adm engine.Admission) (engine.BetResult, error) {
	out, err := t.local.Debit(ctx, p, req, w, adm)
	if err != nil {
		var ignored struct{ wire }
		if rerr := t.forward(ctx, cluster.ActionRelease, adm.Epoch, actionTimeout, actionMsg{wire: v1(), Session: p.Session, BetID: adm.BetID}, &ignored, &ignored.wire); rerr != nil {
			t.logger.Warn("freeing the place of a bet whose intent did not commit failed; the round frees it when it ends", "bet_id", adm.BetID, "err", rerr)
		}
		return engine.BetResult{}, err
	}
	var a betAnswer
	if err := t.forward(ctx, cluster.ActionDecide, adm.Epoch, actionTimeout, decideMsgOf(p.Session, adm, out), &a, &a.wire); err != nil {
		if errors.Is(err, engine.ErrTableUnavailable) {
			t.logger.Warn("the leader's decision of a debited bet was not received; the stream shows what became of it", "bet_id", adm.BetID, "err", err)
		}
		return engine.BetResult{}, err
	}
	return t.local.Accept(ctx, p, adm, out, engine.BetResult{Bet: a.Bet.view(), Balance: a.Balance})
}

// Cashout cashes a bet out here, on the replica that received it, at the
// multiplier of receivedAt (engine.Table.Cashout: priced from the flying
// round's take-off and crash instant, committed with its /win by this
// replica's committer), and then tells the leader (cashed, no wait for its
// answer), whose round and board take it. No round trip to the leader is
// in the player's wait. Two cashouts go to the leader instead and are
// priced at its receive time: a demo bet's (the leader's bank holds its
// play money), and every cashout while this replica's clock is not known to
// be within PriceBound of the database's (PriceClock), since its price and
// its guard against the crash are read on that clock, or while the leader's
// is not (leaderInStep), since the crash instant is kept on the leader's.
func (t *Table) Cashout(ctx context.Context, p engine.Player, betID string, receivedAt time.Time) (engine.CashoutResult, error) {
	if t.local.Leadership().Leading() {
		return t.local.Cashout(ctx, p, betID, receivedAt)
	}
	if !p.Demo && t.priceClock() == nil && t.leaderInStep() {
		res, err := t.local.Cashout(ctx, p, betID, receivedAt)
		if err == nil {
			go t.tellCashed(context.WithoutCancel(ctx), res.Note) // even once the player stopped waiting
		}
		return res, err
	}
	var a cashoutAnswer
	msg := actionMsg{wire: v1(), Session: p.Session, BetID: betID}
	if err := t.forward(ctx, cluster.ActionCashout, 0, actionTimeout, msg, &a, &a.wire); err != nil {
		if t.nowHere(err) {
			return t.local.Cashout(ctx, p, betID, receivedAt)
		}
		return engine.CashoutResult{}, err
	}
	return engine.CashoutResult{BetID: a.BetID, Multiplier: a.Multiplier, Payout: a.Payout, Balance: a.Balance}, nil
}

// leaderInStep reports whether the leader's latest broadcast, one of the
// round this replica shows, said that its clock was within PriceBound of the
// database's. The leader's clock keeps the crash instant that this
// replica's guard is measured against: with both clocks within PriceBound,
// CashoutGuard covers their difference; with the leader's unknown, it does
// not, and the leader prices.
func (t *Table) leaderInStep() bool {
	c := t.leaderClock.Load()
	if c == nil || !c.inStep {
		return false
	}
	v, _ := t.local.Round()
	return v.RoundID == c.roundID
}

// tellCashed tells the leader of a cashout committed here: its round
// marks the bet cashed out, its board shows it, and it fires no
// auto-cashout for it. A note that does not arrive changes no money: the
// bet's row is the truth, and an auto-cashout the leader fires for it finds
// the bet moved.
func (t *Table) tellCashed(ctx context.Context, n engine.CashoutNote) {
	ctx, cancel := context.WithTimeout(ctx, actionTimeout)
	defer cancel()
	data, err := json.Marshal(cashedMsgOf(n))
	if err == nil {
		_, err = t.bus.Request(ctx, cluster.ActionSubject(t.game, cluster.ActionCashed, t.term.Load()), data)
	}
	if err != nil {
		t.logger.Info("the leader was not told of a cashout committed here; the bet is settled, its board may miss it", "bet_id", n.BetID, "err", err)
	}
}

// Cancel cancels a bet at the table's leader.
func (t *Table) Cancel(ctx context.Context, p engine.Player, betID string) (engine.CancelResult, error) {
	if t.local.Leadership().Leading() {
		return t.local.Cancel(ctx, p, betID)
	}
	var a betAnswer
	msg := actionMsg{wire: v1(), Session: p.Session, BetID: betID}
	if err := t.forward(ctx, cluster.ActionCancel, 0, actionTimeout, msg, &a, &a.wire); err != nil {
		if t.nowHere(err) {
			return t.local.Cancel(ctx, p, betID)
		}
		return engine.CancelResult{}, err
	}
	return engine.CancelResult{Bet: a.Bet.view(), Balance: a.Balance}, nil
}

// nowHere reports whether an action whose forward failed with err is to be
// carried out by this replica's own table instead: nobody served it
// (cluster.ErrNoLeader: nothing was executed anywhere) and this table took
// the lead while the action waited for a leader (a hand-over's gap, which
// watch ends as soon as this table leads). Without it, a bet received in
// that gap was answered TABLE_UNAVAILABLE by the replica that had just
// become the leader (the cluster suite's rolling restart, 29 November).
func (t *Table) nowHere(err error) bool {
	return errors.Is(err, cluster.ErrNoLeader) && t.local.Leadership().Leading()
}

// admitHere is nowHere for a bet's admission, which also goes to this
// table when the wait for its answer ended because this table took the
// lead (errNowLeading) with the admission in flight: an admission moves no
// money and writes nothing (engine.Table.Admit), so one that a former
// leader, or this table's own handler, carried out holds at most a place
// that no debit follows, freed when its round ends (the take-off waits
// DebitGrace for it, as for any debit unanswered), while the player gets
// the new leader's answer.
func (t *Table) admitHere(err error) bool {
	return (errors.Is(err, cluster.ErrNoLeader) || errors.Is(err, errNowLeading)) && t.local.Leadership().Leading()
}

// forward sends an action to the leader of the term of epoch (0: the
// current term as this replica knows it, which it learns again while nobody
// serves the action) and decodes its answer into out. A bet's decision and
// release go to the term that admitted it, which alone holds its place. It
// waits for the answer at most wait, and stops waiting sooner when the
// answer can no longer come (gone): the outcome is then unknown,
// ErrTableUnavailable, never a refusal, since the leader may have carried
// the action out (a bet debited); its recovery settles what it left (RB-5)
// and the player sees it in My bets.
func (t *Table) forward(ctx context.Context, action string, epoch int64, wait time.Duration, req, out any, head *wire) error {
	data, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("replica: %s request: %w", action, err)
	}
	sent, _ := t.local.Round()
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	go t.watch(ctx, sent, stop)
	if epoch == 0 && t.term.Load() == 0 {
		// No term known yet (the replica has just started): the lease
		// names it, rather than a subject nobody serves.
		t.readLease(ctx)
	}
	subject := func() string {
		if epoch != 0 {
			return cluster.ActionSubject(t.game, action, epoch)
		}
		return cluster.ActionSubject(t.game, action, t.term.Load())
	}
	answer, err := t.bus.Request(ctx, subject(), data)
	// Nobody serves the table for a moment while a leader takes over or
	// starts serving, or this replica has not yet learnt the new term:
	// nothing was executed, so asking again is safe.
	for end := time.Now().Add(noLeaderWait); errors.Is(err, cluster.ErrNoLeader) && time.Now().Before(end); {
		if epoch == 0 {
			t.askLease()
		}
		select {
		case <-ctx.Done():
		case <-time.After(watchEvery):
			answer, err = t.bus.Request(ctx, subject(), data)
			continue
		}
		break
	}
	if err != nil && epoch == 0 && !errors.As(err, new(*cluster.HandlerError)) {
		t.askLease() // a leader that did not answer may have lost the lease
	}
	var refused *cluster.HandlerError
	switch {
	case errors.As(err, &refused):
		return errorOf(refused)
	case errors.Is(err, cluster.ErrNoLeader):
		return fmt.Errorf("%w: no replica leads the table now (%w)", engine.ErrTableUnavailable, err)
	case err != nil:
		return fmt.Errorf("%w: the leader's answer was lost, the outcome is unknown (%w)", engine.ErrTableUnavailable, err)
	}
	if err := json.Unmarshal(answer, out); err != nil {
		return fmt.Errorf("replica: %s answer: %w", action, err)
	}
	return head.check(action + " answer")
}

// watch ends a forwarded action's wait (stop) once its answer can no longer
// come, until ctx ends: when this replica's table leads (the leader that
// received the action lost the table; this table's own recovery settles what
// it left), as its leadership announces, or when the round in view has moved
// past every round the action could be in (gone), checked every watchEvery.
func (t *Table) watch(ctx context.Context, sent engine.RoundView, stop context.CancelCauseFunc) {
	terms := t.local.Leadership().Subscribe()
	defer terms.Stop()
	tick := time.NewTicker(watchEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case n := <-terms.C():
			if n.Leading() {
				stop(errNowLeading)
				return
			}
		case <-tick.C:
			if now, _ := t.local.Round(); gone(sent, now) {
				stop(errRoundGone)
				return
			}
		}
	}
}

// gone reports whether the round in view, now, is past every round an action
// sent while sent was in view can be in: round N when sent in N's betting or
// flight, N+1 when sent in the pause after N (the bet may be the next
// round's). A leader alive past that round has answered: an answer that has
// not come was lost. With no round in view when sent, nothing is gone.
func gone(sent, now engine.RoundView) bool {
	if sent.RoundID == "" {
		return false
	}
	last := sent.Seq
	if sent.Phase != engine.PhaseBetting && sent.Phase != engine.PhaseFlying {
		last++
	}
	return now.Seq > last
}

// answer encodes an action's result, or its error as a refusal the
// requester decodes back (errorOf).
func answer(res any, err error) ([]byte, error) {
	if err != nil {
		return nil, refusalOf(err)
	}
	data, err := json.Marshal(res)
	if err != nil {
		return nil, fmt.Errorf("replica: answer: %w", err)
	}
	return data, nil
}

// walletRefused is the code of an *engine.RefusedError; its message is the
// error as JSON.
const walletRefused = "WALLET_REFUSED"

func refusalOf(err error) error {
	var wr *engine.RefusedError
	if errors.As(err, &wr) {
		data, _ := json.Marshal(walletRefusal{wire: v1(), Code: wr.Code, Balance: wr.Balance, HasBalance: wr.HasBalance})
		return &cluster.HandlerError{Code: walletRefused, Message: string(data)}
	}
	// A refusal crosses by its stable code (engine.Refusals), so that the
	// requester gets back the same value and the player API maps it as it
	// would a local one.
	if r, ok := engine.RefusalOf(err); ok {
		return &cluster.HandlerError{Code: r.Code, Message: err.Error()}
	}
	return err // answered with its message and no code: an error of the leader
}

func errorOf(h *cluster.HandlerError) error {
	if h.Code == walletRefused {
		var wr walletRefusal
		if err := json.Unmarshal([]byte(h.Message), &wr); err == nil && wr.check("wallet refusal") == nil {
			return &engine.RefusedError{Code: wr.Code, Balance: wr.Balance, HasBalance: wr.HasBalance}
		}
	}
	if r, ok := engine.RefusalByCode(h.Code); ok {
		return fmt.Errorf("the table's leader refused: %w", r.Err)
	}
	return fmt.Errorf("replica: the table's leader failed: %s", h.Message)
}
