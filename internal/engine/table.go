package engine

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/crashstudio/crashgame/internal/fairness"
	"github.com/crashstudio/crashgame/internal/groupcommit"
	"github.com/crashstudio/crashgame/internal/round"
	"github.com/crashstudio/crashgame/internal/seal"
	"github.com/crashstudio/crashgame/internal/store"
	"github.com/crashstudio/crashgame/internal/wallet"
)

// publicFlush is how often the round's board reaches the stream when it
// changed: at most four times a second, a rate a person can read, whatever
// the number of bets.
const publicFlush = 250 * time.Millisecond

// DefaultDebitGrace is how long a round waits at most, after its window,
// for the debits of the bets received in it: a wallet that answers a /bet
// within this much past the window does not cost its player the bet.
const DefaultDebitGrace = time.Second

// roundRetry is how long the table waits before trying again to open a round
// when the database refused (a restart, a fail-over).
const roundRetry = time.Second

// BetWallet is what the engine needs of one operator's wallet client.
type BetWallet interface {
	// BetUntil attempts /bet until success, a final refusal or the deadline.
	BetUntil(ctx context.Context, call wallet.BetCall, deadline time.Time) (wallet.Result, error)
	// BreakerOpen reports whether new bets must be refused at once.
	BreakerOpen() bool
}

// Freebets spends and returns free rounds inside the engine's transactions
// (the transaction travels in ctx).
type Freebets interface {
	// Spend spends the grant requestedID, or the oldest open grant of equal
	// value; it returns the id spent and its value (the stake).
	Spend(ctx context.Context, p Player, requestedID string) (id string, amount int64, err error)
	// Return puts a spent grant back in the queue.
	Return(ctx context.Context, p Player, id string) error
}

// Outbox queues /win and /rollback movements inside the engine's transactions
// (the transaction travels in ctx): a settlement and its movement commit
// together. Notify, after the commit, wakes the queue that delivers them.
// *wallet.Outbox satisfies it.
type Outbox interface {
	Enqueue(ctx context.Context, m wallet.Movement, now time.Time) error
	EnqueueMany(ctx context.Context, ms []wallet.Movement, now time.Time) error
	Notify()
}

// Balances keeps the balance each real-money session is shown: the last
// figure its wallet answered, plus what the game queued for it since. The
// table tells it what the wallet answered to a bet (Reported) and what a
// cashout or a cancel queued (Expect), and answers the player with what it
// returns. *sessions.Service satisfies it.
type Balances interface {
	// Balance reads the session's balance as the action that may move it is
	// received.
	Balance(session []byte) BalanceMark
	// Reported records a balance the wallet answered for the session (BAL-4).
	Reported(session []byte, balance int64)
	// Expect returns the balance to show once delta cents queued for the
	// session reach its wallet, from the mark read when the action was
	// received.
	Expect(session []byte, mark BalanceMark, delta int64) int64
	// Follow records a balance the table's leader decided for the session,
	// heard on a replica that does not lead (its balance event), so that the
	// session shows it here too, now or when it is loaded here later.
	Follow(session []byte, balance int64)
}

// BalanceMark is a session's balance as read at one moment, with the version
// of the wallet's figures it comes from: Expect adds an amount to it only if
// the wallet has reported nothing newer since.
type BalanceMark struct {
	Balance int64
	Version uint64
}

// shownAsQueued is the Balances of a table built without one (tests, tools):
// it keeps nothing, and a balance expected is the mark's plus what was
// queued.
type shownAsQueued struct{}

func (shownAsQueued) Balance([]byte) BalanceMark                        { return BalanceMark{} }
func (shownAsQueued) Reported([]byte, int64)                            {}
func (shownAsQueued) Expect(_ []byte, m BalanceMark, delta int64) int64 { return m.Balance + delta }
func (shownAsQueued) Follow([]byte, int64)                              {}

// Player is who acts: one session of one operator's player.
type Player struct {
	Session  []byte // SHA-256 of the session id
	Operator string
	PlayerID string
	Token    string
	Currency string
	Name     string // masked
	Demo     bool
}

// key names the player the five-bet limit counts for: the operator's player
// across every session they opened (two tabs, a replayed launch), or the
// session itself for a demo, which has no player.
func (p Player) key() string {
	if p.Demo || p.PlayerID == "" {
		return "s\x00" + string(p.Session)
	}
	return "p\x00" + p.Operator + "\x00" + p.PlayerID
}

// Game is the rules of the game a table runs.
type Game struct {
	ID             string
	RTPBasisPoints int64         // return to player in basis points: 9700 means 97.00 %
	MaxMultiplier  int64         // crash point ceiling in hundredths: 100000 means 1000.00x
	Betting        time.Duration // length of the betting phase
	Pause          time.Duration // pause after a crash before the next round
	Freebet        bool          // accepts operator-granted free rounds
}

// Operator is what a table needs of an operator to take and settle its bets.
type Operator struct {
	// Currencies are the limits of each enabled currency, by code; a zero
	// limit is unknown and checks nothing.
	Currencies map[string]round.Limits
	ZeroWin    bool // send a zero-amount /win for a lost bet
}

// Config is what a table is built from.
type Config struct {
	Game      Game
	Operators map[string]Operator // every operator by id, enabled or not
	Store     Store
	Outbox    Outbox
	Wallets   func(operator string) (BetWallet, bool)
	Freebets  Freebets     // nil: freebets refused
	Balances  Balances     // nil: no display balances kept (shownAsQueued)
	Demo      *DemoBank    // balances of demo sessions
	Clock     Clock        // nil: SystemClock
	Logger    *slog.Logger // nil: slog.Default()
	// ChainLength is the number of rounds of a new hash chain (default 1,000,000).
	ChainLength int
	// Sealer seals a new chain's seed and opens a stored one (required).
	Sealer *seal.Sealer
	// SeedingWindow is how long a new chain takes contributions to its salt
	// before its first round (default DefaultSeedingWindow; negative: none,
	// the salt is fixed at once from the game's draw and the beacon).
	SeedingWindow time.Duration
	// RevealWindow is how long, after the seeding window, the operators
	// reveal the values they committed to; the salt is fixed at its end
	// (default DefaultRevealWindow, or none when there is no seeding
	// window; negative: none).
	RevealWindow time.Duration
	// Beacon, when set, is the public randomness beacon whose future round
	// every new chain names and its salt takes (docs/fairness.md); nil: new
	// chains name none.
	Beacon Beacon
	// ShutdownGrace bounds how long a flying round may go on after Stop before
	// it is settled as interrupted (default 30 s).
	ShutdownGrace time.Duration
	// DebitGrace bounds how long a round waits after its betting window, before
	// it takes off, for the wallet's answers to the debits of bets received in
	// the window (default DefaultDebitGrace; negative: no wait). A debit
	// answered in it is accepted; one still unanswered at its end is refused
	// and rolled back (RB-3).
	DebitGrace time.Duration
	// Lease is how the table holds its leadership (defaults: LeaseSettings).
	Lease LeaseSettings
	// Events receives the table's events while it leads; nil: its own
	// subscribers (one process). See Events.
	Events Events
}

// LeaseSettings say how a table leads: it plays rounds only while it holds
// the game's lease in the database, and every transaction it commits checks
// the lease's fencing epoch.
type LeaseSettings struct {
	// Holder names this process in the lease (default: a random id per
	// table, so a restarted process is a new holder).
	Holder string
	// TTL is how long a lease lives without renewal (default 2 s): the
	// longest a dead leader keeps its table from the others.
	TTL time.Duration
	// Renew is how often the leader renews it (default TTL/4).
	Renew time.Duration
	// Retry is how often a table that does not lead tries to take the lease
	// (default 250 ms).
	Retry time.Duration
	// Able, when set, tells whether this process can lead at all (in a
	// cluster: it is connected to the other replicas). A table that is not
	// able neither takes the lease nor renews it, so that a replica cut off
	// from the others hands its tables to one that is not, within a TTL.
	Able func() bool
}

func (l *LeaseSettings) setDefaults() {
	if l.Holder == "" {
		l.Holder = randomID(10)
	}
	if l.TTL <= 0 {
		l.TTL = 2 * time.Second
	}
	if l.Renew <= 0 || l.Renew >= l.TTL {
		l.Renew = l.TTL / 4
	}
	if l.Retry <= 0 {
		l.Retry = 250 * time.Millisecond
	}
}

// Table runs the rounds of one game.
type Table struct {
	cfg      Config
	game     Game
	clock    Clock
	logger   *slog.Logger
	store    Store
	commit   *groupcommit.Committer[job]
	hub      *hub
	events   Events
	inbox    chan func()
	chain    *fairness.Chain
	chainRec store.ChainRecord
	cur      *liveRound // owned by the loop goroutine; so are chain and chainRec
	viewMu   sync.RWMutex
	view     RoundView // what Round() returns, copied by the loop
	board    board     // owned by the loop: the current round's public board
	stopped  chan struct{}
	stopOnce sync.Once
	loopDone chan struct{}

	// The current term of leadership, owned by the loop: the lease's epoch
	// (0 while the table does not lead) and a channel closed when the lease
	// is lost. leading mirrors epoch for other goroutines.
	epoch int64
	lost  chan struct{}
	// term is done once the current term of leadership is over (nil while
	// not leading): the wallet calls the term started stop with it.
	term    context.Context
	leading atomic.Int64
	// until is the table's own deadline for the current term, in Unix
	// nanoseconds of real time (keepLease moves it at each renewal): the
	// loop writes nothing of the term at or after it (termLive).
	until atomic.Int64
}

// RoundView is the public state of the current round.
type RoundView struct {
	RoundID       string
	Seq           int64
	Phase         string // betting, flying, crashed
	BettingEndsAt time.Time
	StartedAt     time.Time // zero before take-off
	CrashedAt     time.Time // zero before the crash
	CrashPoint    int64     // 0 before the crash
	Hash          string    // "" before the crash
}

// Phases of the current round, as RoundView.Phase names them (a void round
// shows as crashed: it is over).
const (
	PhaseBetting = string(round.Betting)
	PhaseFlying  = string(round.Flying)
	PhaseCrashed = string(round.Crashed)
)

// liveRound is the current round: its rules (package round), its record, and
// what the table keeps of each bet the rules hold (by id).
type liveRound struct {
	rec  store.RoundRecord
	core *round.Round
	live map[string]*liveBet
	// hash and crash are the round's outcome, kept here and written to the
	// database only when the round ends.
	hash  string
	crash int64
}

// liveBet is what the table keeps of a bet besides its rules: its record (for
// the database and the wallet) and its player (for the stream).
type liveBet struct {
	rec    store.BetRecord
	player Player
	round  *liveRound    // the round that admitted it
	cancel *cancellation // set by the first cancel; repeats share it
}

// New prepares a table: it loads or creates the game's hash chain. Call Run.
func New(ctx context.Context, cfg Config) (*Table, error) {
	if cfg.Clock == nil {
		cfg.Clock = SystemClock{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.ChainLength <= 0 {
		cfg.ChainLength = 1_000_000
	}
	if cfg.ShutdownGrace <= 0 {
		cfg.ShutdownGrace = 30 * time.Second
	}
	switch {
	case cfg.SeedingWindow == 0:
		cfg.SeedingWindow = DefaultSeedingWindow
	case cfg.SeedingWindow < 0:
		cfg.SeedingWindow = 0
	}
	switch {
	case cfg.RevealWindow == 0 && cfg.SeedingWindow > 0:
		cfg.RevealWindow = DefaultRevealWindow
	case cfg.RevealWindow <= 0:
		cfg.RevealWindow = 0 // none; with no seeding window nobody commits, so nobody reveals
	}
	if cfg.Sealer == nil {
		return nil, errors.New("engine: a table needs a Sealer for its chains' seeds")
	}
	if cfg.Beacon != nil {
		n := cfg.Beacon.Network()
		if err := n.Validate(); err != nil {
			return nil, fmt.Errorf("engine: the beacon: %w", err)
		}
		if n.Period%time.Second != 0 {
			return nil, fmt.Errorf("engine: the beacon's period %s is not a whole number of seconds, as chains publish it", n.Period)
		}
	}
	switch {
	case cfg.DebitGrace == 0:
		cfg.DebitGrace = DefaultDebitGrace
	case cfg.DebitGrace < 0:
		cfg.DebitGrace = 0
	}
	if cfg.Demo == nil {
		cfg.Demo = NewDemoBank()
	}
	if cfg.Balances == nil {
		cfg.Balances = shownAsQueued{}
	}
	cfg.Lease.setDefaults()
	t := &Table{
		cfg: cfg, game: cfg.Game, clock: cfg.Clock, store: cfg.Store,
		logger:   cfg.Logger.With("game_id", cfg.Game.ID),
		hub:      newHub(),
		events:   cfg.Events,
		inbox:    make(chan func(), 1024),
		stopped:  make(chan struct{}),
		loopDone: make(chan struct{}),
	}
	if t.events == nil {
		t.events = localEvents{t.hub}
	}
	t.commit = groupcommit.New(context.Background(), t.commitJobs, groupcommit.Options{
		MaxBatch: maxCommitBatch, QueueLen: commitQueueLen, OnFailure: groupcommit.RetryEach, Logger: t.logger,
	})
	return t, nil
}

// Game returns the table's game.
func (t *Table) Game() Game { return t.game }

// Round returns the state of the current round, with the multiplier at now.
func (t *Table) Round() (RoundView, int64) {
	t.viewMu.RLock()
	v := t.view
	t.viewMu.RUnlock()
	m := int64(100)
	switch v.Phase {
	case PhaseFlying:
		m = round.Multiplier(t.clock.Now().Sub(v.StartedAt))
	case PhaseCrashed:
		m = v.CrashPoint
	}
	return v, m
}

// Subscribe returns the live events of the table for one session, starting
// with the current phase and the round's board. buf bounds how far the
// subscriber may lag.
func (t *Table) Subscribe(session []byte, buf int) *Subscription {
	v, _ := t.Round()
	return t.hub.add(session, buf, v)
}

// Subscribers returns the number of live subscriptions.
func (t *Table) Subscribers() int { return t.hub.count() }

// Deliver hands an event of the table's leader, received from the cluster,
// to this table's subscribers: to every one, or to those of session when it
// is not nil (a balance event also sets a demo session's balance here). A phase event also becomes the round this table shows (Round,
// the first event of a new subscriber), unless this table leads: its loop
// keeps its own view.
func (t *Table) Deliver(session []byte, ev *Event) {
	if session != nil {
		if ev.Type == EventBalance && !t.Leading() {
			// A session's balance is kept where the table is led (a demo
			// session's play money too); this process shows what the
			// leader says, now and to a stream that opens here later.
			t.cfg.Demo.Follow(session, ev.Balance)
			t.cfg.Balances.Follow(session, ev.Balance)
		}
		t.hub.send(session, ev)
		return
	}
	switch ev.Type {
	case EventRoundBetting, EventRoundFlying, EventRoundCrashed:
		if !t.Leading() {
			t.viewMu.Lock()
			t.view = ev.Round
			t.viewMu.Unlock()
		}
	}
	t.hub.broadcast(ev)
}

// LoadView makes the round this table shows the game's latest round as the
// database has it, for a table that does not lead: a replica that starts, or
// that missed events of the leader, shows the round at once instead of
// waiting for the next phase event. The hash and crash point of a round are
// shown only once it crashed.
func (t *Table) LoadView(ctx context.Context) error {
	seq, err := t.store.LastRoundSeq(ctx, t.game.ID)
	if err != nil || seq == 0 {
		return err
	}
	rec, err := t.store.Round(ctx, t.game.ID, roundID(t.game.ID, seq))
	if err != nil {
		return fmt.Errorf("engine: load the round shown: %w", err)
	}
	v := RoundView{RoundID: rec.ID, Seq: rec.Seq, Phase: PhaseCrashed, BettingEndsAt: rec.BettingEndsAt.Time(), StartedAt: rec.StartedAt.Time()}
	switch rec.Status {
	case store.RoundBetting:
		v.Phase = PhaseBetting
	case store.RoundFlying:
		v.Phase = PhaseFlying
	case store.RoundFinished:
		v.CrashedAt, v.CrashPoint, v.Hash = rec.CrashedAt.Time(), rec.CrashPoint, rec.Hash
	}
	if t.Leading() {
		return nil
	}
	t.viewMu.Lock()
	newer := v.Seq >= t.view.Seq
	if newer {
		t.view = v
	}
	t.viewMu.Unlock()
	if !newer || v.Phase == PhaseCrashed {
		return nil
	}
	// The leader's next board may be a while: a table that starts, or that
	// missed events, starts its subscribers from the board as stored.
	recs, err := t.store.Bets(ctx, store.BetFilter{RoundIDs: []string{v.RoundID},
		Statuses: []string{StatusAccepted, StatusCashedOut, StatusLost}})
	if err != nil {
		return fmt.Errorf("engine: load the board of %s: %w", v.RoundID, err)
	}
	t.hub.loadBoard(boardOf(v, recs))
	return nil
}

func roundID(gameID string, seq int64) string { return fmt.Sprintf("%s-%d", gameID, seq) }

func phaseEvent(phase string) string {
	switch phase {
	case PhaseFlying:
		return EventRoundFlying
	case PhaseCrashed:
		return EventRoundCrashed
	}
	return EventRoundBetting
}

// do runs f on the loop goroutine and waits for it.
func (t *Table) do(ctx context.Context, f func()) error {
	done := make(chan struct{})
	select {
	case t.inbox <- func() { f(); close(done) }:
	case <-t.stopped:
		return ErrStopped
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-done:
		return nil
	case <-t.loopDone:
		return ErrStopped
	}
}

// Stop asks the table to stop at the next round boundary: the current round
// goes on to its crash, then the table hands its lease over. A round still
// flying ShutdownGrace after Stop is settled as interrupted (Recover's rule)
// first.
func (t *Table) Stop() { t.stopOnce.Do(func() { close(t.stopped) }) }

// Done is closed when Run has returned.
func (t *Table) Done() <-chan struct{} { return t.loopDone }

func (t *Table) isStopping() bool {
	select {
	case <-t.stopped:
		return true
	default:
		return false
	}
}

// Leading reports whether the table leads its game now (holds the lease).
func (t *Table) Leading() bool { return t.leading.Load() != 0 }

// Epoch returns the fencing epoch of the table's current term, 0 while it
// does not lead.
func (t *Table) Epoch() int64 { return t.leading.Load() }

// Run plays rounds until Stop, while it holds the game's lease: it waits for
// the lease, settles what the previous leader left (Recover), then plays
// rounds until Stop or until the lease is lost, and waits for it again. It
// returns after the last round crashed or was settled, its writes committed
// and its lease released.
func (t *Table) Run(runCtx context.Context) error {
	defer close(t.loopDone)
	defer t.commit.Close() // commits what is queued; later writes get groupcommit.ErrClosed
	go func() {
		select {
		case <-runCtx.Done():
			t.Stop()
		case <-t.loopDone:
		}
	}()
	// runCtx ending asks the table to stop, which it does at the next round
	// boundary: its own writes until then must not fail with it.
	ctx := context.WithoutCancel(runCtx)
	// Until it leads, the table shows the game's latest round as stored.
	if err := t.LoadView(ctx); err != nil {
		t.logger.Warn("reading the latest round failed", "err", err)
	}
	flush := t.clock.After(publicFlush)
	for first := true; !t.isStopping(); first = false {
		// A table whose term just ended lets the others try first.
		epoch, since, ok := t.acquire(ctx, &flush, !first)
		if !ok {
			break
		}
		if err := t.lead(ctx, epoch, since, &flush); err != nil {
			return err
		}
	}
	// Let late messages fail fast rather than hang.
	for {
		select {
		case f := <-t.inbox:
			f()
		default:
			return nil
		}
	}
}

// acquire waits until the table holds the game's lease, serving the inbox
// meanwhile (betting is closed for a table that does not lead). It returns
// the epoch and the real time at which the statement that took the lease
// started, never when its answer arrived: the database counts the lease's
// TTL from a moment no earlier than that, so the table's deadline counted
// from it is conservative however long the statement took (a database
// stall). false when the table stops first.
func (t *Table) acquire(ctx context.Context, flush *<-chan time.Time, waitFirst bool) (int64, time.Time, bool) {
	for try := !waitFirst; ; try = true {
		if try && (t.cfg.Lease.Able == nil || t.cfg.Lease.Able()) {
			// Real time, not the table's clock: the lease runs on the
			// database's clock, which a test's manual clock does not move.
			since := time.Now()
			epoch, ok, err := t.store.AcquireLease(ctx, t.game.ID, t.cfg.Lease.Holder, t.cfg.Lease.TTL)
			switch {
			case err != nil:
				t.logger.Error("taking the table's lease failed; retrying", "err", err)
			case ok:
				return epoch, since, true
			}
		}
		// The lease runs on real time (the database's clock), whatever the
		// table's clock.
		retry := time.NewTimer(t.cfg.Lease.Retry)
	serve:
		for {
			select {
			case f := <-t.inbox:
				f()
			case <-*flush:
				*flush = t.clock.After(publicFlush)
			case <-retry.C:
				break serve
			case <-t.stopped:
				retry.Stop()
				return 0, time.Time{}, false
			}
		}
	}
}

// lead is one term of leadership at epoch, whose lease was taken no earlier
// than since: recovery, then rounds until Stop or the loss of the lease. It
// returns an error only for what no retry can fix (a chain that cannot be
// made).
func (t *Table) lead(ctx context.Context, epoch int64, since time.Time, flush *<-chan time.Time) error {
	lost := make(chan struct{})
	term, endTerm := context.WithCancel(context.WithoutCancel(ctx))
	t.epoch, t.lost, t.term = epoch, lost, term
	t.until.Store(leaseDeadline(since, t.cfg.Lease.TTL).UnixNano())
	t.leading.Store(epoch)
	renewCtx, stopRenewing := context.WithCancel(context.WithoutCancel(ctx))
	renewed := make(chan struct{})
	go func() { defer close(renewed); t.keepLease(renewCtx, epoch, since, lost, endTerm) }()
	defer func() {
		stopRenewing()
		<-renewed
		endTerm()
		t.epoch, t.lost, t.term, t.cur = 0, nil, nil, nil
		t.leading.Store(0)
	}()
	t.logger.Info("leading the table", "epoch", epoch, "holder", t.cfg.Lease.Holder)

	// A lease whose acquisition took longer than its TTL (a database stall)
	// ended before the answer arrived: the term writes nothing, not even the
	// recovery, and leaves the table to the next acquisition at once.
	if !t.termLive() {
		t.resign(ctx, "the lease ran out while it was being taken", false)
		return nil
	}
	if !t.recover(ctx, flush) {
		if !t.isStopping() {
			t.resign(ctx, "the lease ran out during the recovery", false)
		}
		return nil
	}
	seq, err := t.lastSeq(ctx)
	for err != nil {
		t.logger.Error("reading the last round failed; retrying", "err", err)
		if !t.wait(t.clock.Now().Add(roundRetry), flush, false) || t.isStopping() {
			t.handOver(ctx)
			return nil
		}
		seq, err = t.lastSeq(ctx)
	}
	for !t.isStopping() {
		seq++
		if !t.termLive() {
			t.resign(ctx, "the lease ran out before the next round", true)
			return nil
		}
		ready, err := t.prepareChain(ctx, seq, flush)
		switch {
		case errors.Is(err, store.ErrFenced):
			return nil
		case err != nil:
			t.logger.Error("preparing the hash chain failed; retrying", "seq", seq, "err", err)
			seq--
			if !t.wait(t.clock.Now().Add(roundRetry), flush, false) {
				return nil
			}
			continue
		case !ready:
			if t.isStopping() {
				break
			}
			return t.abandon("lease lost while the chain was seeding")
		}
		if t.isStopping() {
			break
		}
		if err := t.startRound(ctx, seq); err != nil {
			if errors.Is(err, errTermOver) || (!errors.Is(err, store.ErrFenced) && !t.termLive()) {
				// Nothing opened, or an insert cut at the term's deadline
				// (if it committed after all, the next leader voids it).
				t.resign(ctx, "the lease ran out before the round opened", true)
				return nil
			}
			if errors.Is(err, store.ErrFenced) {
				t.logger.Warn("another replica leads the table now", "epoch", epoch)
				return nil
			}
			// The database may be restarting: keep the table alive and try
			// again; players are told betting is closed meanwhile.
			t.logger.Error("opening a round failed; retrying", "seq", seq, "err", err)
			if !t.wait(t.clock.Now().Add(roundRetry), flush, false) {
				return nil
			}
			// The insert may have committed without our knowing: start after
			// the last round stored (one left in betting is settled by
			// Recover at the next term).
			if last, err := t.lastSeq(ctx); err == nil {
				seq = last
			} else {
				seq--
			}
			continue
		}
		// Betting: a stop request lets the round go on to its crash. Then the
		// debits of bets received in the window that the wallet has not
		// answered yet: the round waits for them, at most DebitGrace, so
		// that a slow answer does not refuse a bet placed in time.
		if !t.wait(t.cur.core.BettingEnds(), flush, false) ||
			!t.waitUntil(t.cur.core.BettingEnds().Add(t.cfg.DebitGrace), flush, false, func() bool { return t.cur.core.Pending() == 0 }) {
			return t.abandon("lease lost during betting")
		}
		if err := t.takeOff(); err != nil {
			if errors.Is(err, store.ErrFenced) {
				return t.abandon("lease lost at take-off")
			}
			t.logger.Error("take-off failed; voiding the round", "round_id", t.cur.rec.ID, "err", err)
			t.voidRound(reasonTakeOffFailed, store.VoidTakeOffFailed)
			continue
		}
		// Flying: auto-cashouts fire at their targets, then the crash.
		graceEnd := time.Time{}
		for {
			next, auto := t.cur.core.NextAuto()
			if t.isStopping() && graceEnd.IsZero() {
				graceEnd = t.clock.Now().Add(t.cfg.ShutdownGrace)
			}
			until := t.cur.core.CrashAt()
			if auto && !next.After(until) {
				until = next
			}
			if !graceEnd.IsZero() && graceEnd.Before(until) {
				until = graceEnd
			}
			// Until a grace is set, a stop request interrupts the wait so the
			// grace starts at once.
			if !t.wait(until, flush, graceEnd.IsZero()) {
				return t.abandon("lease lost in flight")
			}
			now := t.clock.Now()
			if !graceEnd.IsZero() && !now.Before(graceEnd) && now.Before(t.cur.core.CrashAt()) {
				return t.interrupt(ctx, "the flying round did not crash within the shutdown grace")
			}
			if auto && !now.Before(next) {
				t.fireAutos(now)
				continue
			}
			if !now.Before(t.cur.core.CrashAt()) {
				t.crash()
				go t.sweepPending(context.WithoutCancel(ctx), epoch, t.cur.rec.ID)
				break
			}
		}
		t.flushPublic()
		if t.cur.core.Phase() != round.Crashed {
			break
		}
		if t.isStopping() {
			break // hand over at the round boundary
		}
		// Pause after the crash.
		if !t.wait(t.cur.core.CrashedAt().Add(t.game.Pause), flush, false) {
			return nil
		}
	}
	t.handOver(ctx)
	return nil
}

// recover settles, under the lease, what an earlier leader left unfinished
// (Recover), trying again while the database is away. false when the lease
// is lost meanwhile or the term's deadline passes first: each attempt starts
// only while the term is live and is cancelled at its deadline, so that a
// recovery never commits in a term the table already counts as over.
func (t *Table) recover(ctx context.Context, flush *<-chan time.Time) bool {
	for {
		if !t.termLive() {
			return false
		}
		tctx, cancel := t.termContext(ctx)
		var rec Recovery
		err := t.fenced(tctx, t.epoch, func(ctx context.Context) error {
			var err error
			rec, err = t.Recover(ctx)
			return err
		})
		cancel()
		switch {
		case err == nil:
			t.announce(rec)
			return true
		case errors.Is(err, store.ErrFenced):
			return false
		}
		t.logger.Error("recovery failed; retrying", "err", err)
		if !t.wait(t.clock.Now().Add(roundRetry), flush, false) {
			return false
		}
		if t.isStopping() {
			t.handOver(ctx)
			return false
		}
	}
}

// abandon leaves the current round as it is in the database, for the leader
// that holds the lease now to settle by Recover's rule: this table may commit
// nothing more of it.
func (t *Table) abandon(why string) error {
	if t.cur != nil {
		t.logger.Warn("round left to the next leader", "round_id", t.cur.rec.ID, "why", why, "epoch", t.epoch)
	}
	return nil
}

// interrupt settles the current round by Recover's rule while the table still
// leads (the shutdown grace ran out in flight), then hands the lease over.
func (t *Table) interrupt(ctx context.Context, why string) error {
	r := t.cur
	t.logger.Warn("settling the flying round as interrupted", "round_id", r.rec.ID, "why", why)
	// Every write of the round queued so far commits first (jobs commit in
	// order), so Recover reads the round as the loop left it.
	_ = t.commit.Do(context.Background(), job{epoch: t.epoch, run: func(context.Context) error { return nil }})
	var rec Recovery
	err := t.fenced(context.WithoutCancel(ctx), t.epoch, func(ctx context.Context) error {
		var err error
		rec, err = t.settleUnfinished(ctx, r.rec.ID)
		return err
	})
	if err != nil {
		t.logger.Error("settling the interrupted round failed; the next leader settles it", "round_id", r.rec.ID, "err", err)
	} else {
		t.announce(rec)
	}
	t.viewMu.Lock()
	t.view.Phase = PhaseCrashed
	t.viewMu.Unlock()
	t.notifyQueue()
	t.handOver(ctx)
	return nil
}

// handOver releases the lease at a round boundary, so that another replica
// leads at once rather than after the lease's TTL.
func (t *Table) handOver(ctx context.Context) {
	// What the term queued commits first, under the lease.
	_ = t.commit.Do(context.Background(), job{epoch: t.epoch, run: func(context.Context) error { return nil }})
	if err := t.store.ReleaseLease(context.WithoutCancel(ctx), t.game.ID, t.cfg.Lease.Holder, t.epoch); err != nil {
		t.logger.Warn("releasing the table's lease failed; it expires by itself", "err", err)
		return
	}
	t.logger.Info("table handed over", "epoch", t.epoch)
}

// keepLease renews the lease of epoch, taken no earlier than since, every
// Renew until ctx ends. It closes lost, ends the term (a /bet still being
// attempted stops at once: once another replica may lead, it may roll that
// bet back) and the table stops saying it leads, when the lease is taken
// over, or when the lease may run out before the
// next renewal lands: the table's own deadline is the TTL counted from just
// before its last successful statement, less an eighth of it, so it steps
// down before the database lets another replica take the lease (however
// slow the answer that renewed it was).
//
// The term's deadline is shared with the loop (Table.until), which checks it
// before each write the term depends on (termLive): the expiry timer fires
// on its own goroutine and may fire after the loop's next write began.
func (t *Table) keepLease(ctx context.Context, epoch int64, since time.Time, lost chan struct{}, endTerm context.CancelFunc) {
	ttl := t.cfg.Lease.TTL
	valid := leaseDeadline(since, ttl) // the lease runs on real time, whatever the table's clock
	tick := time.NewTicker(t.cfg.Lease.Renew)
	defer tick.Stop()
	expiry := time.NewTimer(time.Until(valid))
	defer expiry.Stop()
	stepDown := func(msg string, args ...any) {
		t.leading.Store(0)
		endTerm()
		t.logger.Warn(msg, append(args, "epoch", epoch)...)
		close(lost)
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-expiry.C:
			stepDown("the table's lease could not be renewed in time; stepping down")
			return
		case <-tick.C:
		}
		// A table that is not able to lead does not renew: its lease runs
		// out and another replica leads. A renewal gets what is left of
		// the lease, and at most half of the TTL.
		if t.cfg.Lease.Able != nil && !t.cfg.Lease.Able() {
			t.logger.Warn("not renewing the table's lease: this process cannot lead now (cut off from the cluster)", "epoch", epoch)
			continue
		}
		start := time.Now()
		rctx, cancel := context.WithDeadline(ctx, minTime(valid, start.Add(ttl/2)))
		ok, err := t.store.RenewLease(rctx, t.game.ID, t.cfg.Lease.Holder, epoch, ttl)
		cancel()
		if took := time.Since(start); took > t.cfg.Lease.Renew {
			t.logger.Warn("renewing the table's lease was slow", "epoch", epoch, "took_ms", took.Milliseconds(), "ok", ok, "err", err)
		}
		switch {
		case ctx.Err() != nil:
			return
		case err == nil && ok:
			valid = leaseDeadline(start, ttl)
			t.until.Store(valid.UnixNano())
			expiry.Reset(time.Until(valid))
		case err == nil:
			stepDown("the table's lease was taken over")
			return
		case time.Now().Before(valid):
			t.logger.Warn("renewing the table's lease failed; retrying", "epoch", epoch, "err", err)
		default:
			stepDown("the table's lease could not be renewed in time; stepping down", "err", err)
			return
		}
	}
}

// leaseDeadline is the table's own deadline for a lease whose taking or
// renewing statement started at start (real time): the TTL less an eighth of
// it, so the table stops before the database lets another replica in.
func leaseDeadline(start time.Time, ttl time.Duration) time.Time {
	return start.Add(ttl - ttl/8)
}

// errTermOver: the current term's deadline passed before a write of it
// began; nothing of it was written.
var errTermOver = errors.New("engine: the table's term of leadership is over")

// termLive reports whether the current term may still begin a write: its
// lease was not lost and its deadline (Table.until, real time) has not
// passed. Loop only.
func (t *Table) termLive() bool {
	select {
	case <-t.lost:
		return false
	default:
	}
	return time.Now().UnixNano() < t.until.Load()
}

// termContext is ctx ending at the current term's deadline, for a write that
// must not commit after it (it may still commit before, under the fence).
func (t *Table) termContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithDeadline(ctx, time.Unix(0, t.until.Load()))
}

// resign ends a term that is over before the table used it to the end (its
// deadline passed): the table stops saying it leads, what the term queued
// commits first (under the fence) when queued may hold anything (a round
// was played), and the lease is released at its epoch, so the next
// acquisition, this table's or another replica's, need not wait for the
// database to expire it. A release that fails (the database is away) is
// left to the lease's own expiry. Loop only.
func (t *Table) resign(ctx context.Context, why string, queued bool) {
	t.leading.Store(0)
	t.logger.Warn("the table's term ended before its next write; stepping down", "why", why, "epoch", t.epoch)
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), t.cfg.Lease.TTL)
	defer cancel()
	if queued {
		_ = t.commit.Do(rctx, job{epoch: t.epoch, run: func(context.Context) error { return nil }})
	}
	if err := t.store.ReleaseLease(rctx, t.game.ID, t.cfg.Lease.Holder, t.epoch); err != nil {
		t.logger.Warn("releasing the table's lease failed; it expires by itself", "epoch", t.epoch, "err", err)
	}
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// wait processes messages until deadline. It returns false as soon as the
// lease of the current term is lost; with wakeOnStop it returns true as soon
// as the table is asked to stop.
func (t *Table) wait(deadline time.Time, flush *<-chan time.Time, wakeOnStop bool) bool {
	return t.waitUntil(deadline, flush, wakeOnStop, nil)
}

// waitUntil is wait that also returns, true, as soon as done (nil: never)
// holds, checked before each wait and after each message of the inbox.
func (t *Table) waitUntil(deadline time.Time, flush *<-chan time.Time, wakeOnStop bool, done func() bool) bool {
	for {
		if done != nil && done() {
			return true
		}
		d := deadline.Sub(t.clock.Now())
		if d <= 0 {
			return true
		}
		timer := t.clock.After(d)
		stop := t.stopped
		if !wakeOnStop {
			stop = nil
		}
		select {
		case f := <-t.inbox:
			f()
		case <-*flush:
			t.flushPublic()
			*flush = t.clock.After(publicFlush)
		case <-timer:
		case <-stop:
			return true
		case <-t.lost: // nil while not leading: never ready
			return false
		}
	}
}

func (t *Table) lastSeq(ctx context.Context) (int64, error) {
	seq, err := t.store.LastRoundSeq(ctx, t.game.ID)
	if err != nil {
		return 0, fmt.Errorf("engine: %w", err)
	}
	return seq, nil
}

// startRound draws the round from the chain (prepareChain made it ready)
// and opens its betting phase. The round's row names its chain and position;
// its hash and crash point stay in memory until it ends.
func (t *Table) startRound(ctx context.Context, seq int64) error {
	pos := seq - t.chainRec.FirstSeq + 1
	h, err := t.chain.Hash(int(pos))
	if err != nil {
		return fmt.Errorf("engine: round %d: %w", seq, err)
	}
	// A round opened in a term that is over would be left to the next
	// leader, void: the term's deadline is checked first and bounds the
	// insert.
	if !t.termLive() {
		return errTermOver
	}
	ctx, cancel := t.termContext(ctx)
	defer cancel()
	now := t.clock.Now()
	rec := store.RoundRecord{
		ID: roundID(t.game.ID, seq), GameID: t.game.ID, Seq: seq, ChainID: t.chainRec.ID, Position: pos,
		Status: store.RoundBetting, BettingEndsAt: store.MillisOf(now.Add(t.game.Betting)), CreatedAt: store.MillisOf(now),
		Epoch: t.epoch,
	}
	if err := t.fenced(ctx, t.epoch, func(ctx context.Context) error { return t.store.InsertRound(ctx, rec) }); err != nil {
		return fmt.Errorf("engine: open round: %w", err)
	}
	crash := fairness.CrashPoint(h, *t.chainRec.Salt, t.chainRec.RTPBasisPts, t.chainRec.MaxMultiplier)
	t.cur = &liveRound{rec: rec, core: round.New(rec.ID, crash, rec.BettingEndsAt.Time()), live: map[string]*liveBet{},
		hash: fairness.FormatHash(h), crash: crash}
	t.board = board{}
	t.publish(EventRoundBetting)
	return nil
}

// publish updates the view from the current round and broadcasts the phase
// event of that type with it.
func (t *Table) publish(typ string) {
	r := t.cur
	v := RoundView{RoundID: r.rec.ID, Seq: r.rec.Seq, Phase: string(r.core.Phase()), BettingEndsAt: r.core.BettingEnds(), StartedAt: r.core.StartedAt()}
	if r.core.Phase() == round.Crashed {
		v.CrashedAt, v.CrashPoint, v.Hash = r.core.CrashedAt(), r.crash, r.hash
	}
	t.viewMu.Lock()
	t.view = v
	t.viewMu.Unlock()
	t.events.Broadcast(&Event{Type: typ, Round: v})
}

// takeOff starts the flight with the accepted bets; pending ones stay out.
func (t *Table) takeOff() error {
	r := t.cur
	now := t.clock.Now()
	err := t.fenced(context.Background(), t.epoch, func(ctx context.Context) error {
		return t.store.TakeOffRound(ctx, r.rec.ID, store.MillisOf(now))
	})
	if err != nil {
		return err
	}
	r.core.TakeOff(now)
	t.publish(EventRoundFlying)
	return nil
}

// fireAutos commits the auto-cashouts the round fired at now, each at exactly
// its target.
func (t *Table) fireAutos(now time.Time) {
	for _, core := range t.cur.core.FireAutos(now) {
		t.cashout(t.cur.live[core.ID], core)
	}
}

// crash ends the flight: every bet still accepted is lost.
func (t *Table) crash() {
	r := t.cur
	lost := r.core.Crash()
	roundID, crashedAt := r.rec.ID, store.MillisOf(r.core.CrashedAt())
	err := t.commitHard("settling the crash of "+roundID, func(ctx context.Context) error {
		if err := t.store.FinishRound(ctx, roundID, crashedAt, r.hash, r.crash); err != nil {
			return err
		}
		// One statement settles every bet still accepted, including one whose
		// cashout commit failed; only those the round lost get their zero_win.
		ids, err := t.store.MoveRoundBets(ctx, roundID, StatusAccepted, StatusLost, 0, crashedAt)
		if err != nil {
			return err
		}
		for _, id := range ids {
			if b := r.live[id]; b != nil && r.core.Lost(id) {
				if err := t.enqueueZeroWin(ctx, b); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.logger.Error("settling the crash failed; recovery at boot will finish it", "round_id", roundID, "err", err)
	}
	t.notifyQueue()
	t.publish(EventRoundCrashed)
	for _, id := range lost {
		b := r.live[id]
		t.events.Send(b.player.Session, &Event{Type: EventBet, Bet: b.view(round.Lost)})
	}
}

// enqueueZeroWin queues the terminal zero_win of a lost real-money bet, where
// the operator switched the capability on (WIN-8, WIN-9).
func (t *Table) enqueueZeroWin(ctx context.Context, b *liveBet) error {
	if b.rec.Demo {
		return nil
	}
	op, ok := t.cfg.Operators[b.rec.Operator]
	if !ok || !op.ZeroWin {
		return nil
	}
	return t.enqueue(ctx, wallet.Movement{
		TransactionID: b.rec.ID + "-w", Kind: wallet.KindWin,
		Operator: b.rec.Operator, GameID: b.rec.GameID, Currency: b.rec.Currency, PlayerID: b.rec.PlayerID,
		Token: b.rec.Token, RoundID: b.rec.RoundID, BetID: b.rec.ID, Amount: 0,
		WinType: wallet.WinTypeZeroWin, FreebetID: b.rec.FreebetID,
	}, t.clock.Now())
}

// voidRound ends the current round without a crash: every bet still in play is
// rolled back (RB-4) with reason, and the round is marked void by rule
// (store.VoidTakeOffFailed...).
func (t *Table) voidRound(reason, rule string) {
	r := t.cur
	voidedAt := t.clock.Now()
	voided := r.core.Void(voidedAt)
	open := make([]*liveBet, 0, len(voided))
	for _, id := range voided {
		open = append(open, r.live[id])
	}
	err := t.commitHard("voiding "+r.rec.ID, func(ctx context.Context) error {
		if err := t.store.VoidRound(ctx, r.rec.ID, r.hash, r.crash, store.MillisOf(voidedAt), rule); err != nil {
			return err
		}
		for _, b := range open {
			if err := t.rollbackBet(ctx, b, StatusAccepted, StatusVoid, reason); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.logger.Error("voiding the round failed; recovery at boot will finish it", "round_id", r.rec.ID, "err", err)
	}
	if err == nil {
		for _, b := range open {
			t.refundDemo(b)
		}
	}
	t.notifyQueue()
	// The view leaves the void round (no crash point to show: nothing is
	// broadcast; the next round.betting, if any, follows).
	t.viewMu.Lock()
	t.view.Phase = PhaseCrashed
	t.viewMu.Unlock()
	t.logger.Warn("round voided", "round_id", r.rec.ID, "reason", reason, "bets_rolled_back", len(open))
	for _, b := range open {
		t.events.Send(b.player.Session, &Event{Type: EventBet, Bet: b.view(round.Voided)})
	}
}

// rollbackBet moves a bet from -> to and queues the rollback of its debit, with
// the debit's amount and no freebet_id (RB-1, RB-6); a freebet returns to the
// player's queue. A demo bet is refunded by the bank instead.
func (t *Table) rollbackBet(ctx context.Context, b *liveBet, from, to, reason string) error {
	ok, err := t.store.MoveBet(ctx, b.rec.ID, from, to, store.BetChange{SettledAt: store.MillisOf(t.clock.Now())})
	if err != nil || !ok {
		return err
	}
	return t.queueRollback(ctx, b.rec, b.player, reason)
}

func (t *Table) queueRollback(ctx context.Context, rec store.BetRecord, p Player, reason string) error {
	if rec.FreebetID != nil && t.cfg.Freebets != nil {
		if err := t.cfg.Freebets.Return(ctx, p, *rec.FreebetID); err != nil {
			return err
		}
	}
	if rec.Demo {
		return nil // the bank refunds it once the transaction committed: refundDemo
	}
	return t.enqueue(ctx, wallet.Movement{
		TransactionID: rec.ID + "-r", Kind: wallet.KindRollback,
		Operator: rec.Operator, GameID: rec.GameID, Currency: rec.Currency, PlayerID: rec.PlayerID,
		Token: rec.Token, RoundID: rec.RoundID, BetID: rec.ID, Amount: rec.Amount, Reason: reason,
	}, t.clock.Now())
}

// hardAttempts bounds commitHard: about two minutes of a database away.
const hardAttempts = 120

// commitHard commits a write the round cannot go on without (a crash's
// settlement, a void), trying again while the database is away, so that a
// restart of the database does not leave bets unsettled until the next boot.
// The loop waits meanwhile: no round can start without its database anyway.
func (t *Table) commitHard(what string, fn func(ctx context.Context) error) error {
	var err error
	for attempt := 1; attempt <= hardAttempts; attempt++ {
		if err = t.commit.Do(context.Background(), job{epoch: t.epoch, run: fn}); err == nil {
			return nil
		}
		if errors.Is(err, store.ErrFenced) {
			return err // another replica leads: it settles the round
		}
		t.logger.Error("commit failed; retrying", "what", what, "attempt", attempt, "err", err)
		<-t.clock.After(roundRetry)
	}
	return err
}

// refundDemo gives a rolled-back demo bet's stake back to its session.
func (t *Table) refundDemo(b *liveBet) {
	if b.rec.Demo && b.rec.FreebetID == nil {
		bal := t.cfg.Demo.Credit(b.rec.SessionHash, b.rec.Amount)
		t.events.Send(b.player.Session, &Event{Type: EventBalance, Balance: bal, Currency: b.rec.Currency})
	}
}

func (t *Table) notifyQueue() { t.cfg.Outbox.Notify() }

// flushPublic sends the round's board when it changed since it was last sent.
func (t *Table) flushPublic() {
	if !t.board.changed || t.cur == nil {
		return
	}
	t.events.Broadcast(t.board.event(t.view))
}

// item is the bet as other players see it, in the round's state core.
func (b *liveBet) item(core round.Bet) BetItem {
	it := BetItem{BetID: b.rec.ID, Name: b.rec.PlayerName, Currency: b.rec.Currency, Amount: core.Amount}
	if core.State == round.CashedOut {
		it.Multiplier, it.Payout = core.Multiplier, core.Payout
	}
	return it
}

func randomID(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b))
}
