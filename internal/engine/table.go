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

	"github.com/crashstudio/crashgame/internal/chains"
	"github.com/crashstudio/crashgame/internal/fairness"
	"github.com/crashstudio/crashgame/internal/groupcommit"
	"github.com/crashstudio/crashgame/internal/leadership"
	"github.com/crashstudio/crashgame/internal/movements"
	"github.com/crashstudio/crashgame/internal/round"
	"github.com/crashstudio/crashgame/internal/seal"
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
// *movements.Outbox satisfies it.
type Outbox interface {
	Enqueue(ctx context.Context, m movements.Movement, now time.Time) error
	EnqueueMany(ctx context.Context, ms []movements.Movement, now time.Time) error
	Notify()
}

// Balances keeps the balance each session is shown, and shows it: the last
// figure its wallet answered, plus what the game queued for it since. The
// table tells it what the wallet answered to a bet (Reported), a demo
// session's bank balance after a bet, a cashout or a refund (Reported), and
// what a cashout or a cancel queued (Expect), and answers the player with
// what it returns. The table never sends a balance to a stream itself.
// *sessions.Service satisfies it.
type Balances interface {
	// Balance reads the session's balance as the action that may move it is
	// received.
	Balance(session []byte) BalanceMark
	// Reported records a balance the wallet answered for the session (BAL-4),
	// or a demo session's bank balance.
	Reported(session []byte, balance int64)
	// Expect returns the balance to show once delta cents queued for the
	// session reach its wallet, from the mark read when the action was
	// received.
	Expect(session []byte, mark BalanceMark, delta int64) int64
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
	Chains    Chains // the game's hash chains and their contributions
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
	// Lease is how the table holds its leadership (package leadership's
	// defaults).
	Lease LeaseSettings
	// Events receives the table's events while it leads; nil: its own
	// subscribers (one process). See Events.
	Events Events
	// LossDelay is how long after a crash's commit its leader settles the
	// bets still accepted as lost, in a cluster: a cashout another replica
	// priced before the crash commits if it reaches the database within it
	// (docs/scale.md). Zero (one process): in the crash's own transaction,
	// which the committer orders after every cashout priced before it.
	LossDelay time.Duration

	// CommitObserved, when set, is told of every batch of the table's
	// committer (bets' acceptances, cashouts, settlements and their
	// movements, in one transaction a batch): how many jobs, how long the
	// first waited behind the batches before it, how long its commit took.
	// It runs on the committer's goroutine and must return at once.
	CommitObserved func(groupcommit.Batch)
}

// DefaultLossDelay is a cluster's LossDelay.
const DefaultLossDelay = time.Second

// LeaseSettings say how a table leads: it plays rounds only while it holds
// the game's lease in the database (package leadership takes, renews and
// gives it up), and every transaction it commits checks the lease's fencing
// epoch.
type LeaseSettings = leadership.Settings

// Table runs the rounds of one game.
type Table struct {
	cfg      Config
	game     Game
	clock    Clock
	logger   *slog.Logger
	store    Store
	chains   Chains
	commit   *groupcommit.Committer[job]
	hub      *hub
	events   Events
	inbox    chan func()
	chain    *fairness.Chain
	chainRec chains.Chain
	cur      *liveRound // owned by the loop goroutine; so are chain and chainRec
	viewMu   sync.RWMutex
	view     RoundView // what Round() returns, copied by the loop
	board    board     // owned by the loop: the current round's public board
	stopped  chan struct{}
	stopOnce sync.Once
	loopDone chan struct{}

	// elector holds the game's lease and announces each term of it.
	elector *leadership.Elector
	// unsettled is what the leading table's last sweep counted (Unsettled).
	unsettled atomic.Int64
	// pace is how long this process's debits take to their outcome, and
	// shed how many bets it refused for it (Debit, Shed).
	pace debitPace
	shed atomic.Int64
	// The current term of leadership, owned by the loop (nil, 0 while the
	// table does not lead): its lease, its fencing epoch, and its context,
	// done once the term is over (the wallet calls the term started stop
	// with it). The loop writes nothing of the term once the lease is not
	// Live.
	lease *leadership.Term
	epoch int64
	term  context.Context
	// flush fires when the round's board is next sent. Loop only.
	flush <-chan time.Time
	// flight is the flying round as cashouts are priced, outside the loop.
	flight flightView
	// debited are the bets debited here lately, for their cashouts.
	debited debitedBets
	// notes are the cashout notes waiting for the loop (Cashed): the first
	// of a batch asks the loop for one pass that applies every note queued
	// by then.
	notesMu sync.Mutex
	notes   []CashoutNote
	// beaconWait is the chain's wait for its beacon round while it lasts
	// (awaitBeacon), nil otherwise: BeaconWaiting.
	beaconWait atomic.Pointer[BeaconWait]
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
	rec  RoundRecord
	core *round.Round
	live map[string]*liveBet
	// hash and crash are the round's outcome, kept here and written to the
	// database only when the round ends.
	hash  string
	crash int64
	// autos counts the auto-cashouts the round fired (autoCashout): after
	// its losses, a round that fired any pays those still accepted
	// (payAutosLeft).
	autos int
}

// liveBet is what the table keeps of a bet besides its rules: its record (for
// the database and the wallet) and its player (for the stream).
type liveBet struct {
	rec    BetRecord
	player Player
	round  *liveRound    // the round that admitted it
	cancel *cancellation // set by the first cancel; repeats share it
	// elsewhere: a real-money bet another replica received and debited,
	// which fires its auto-cashout (BetRequest.Forwarded).
	elsewhere bool
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
	if cfg.Chains == nil {
		return nil, errors.New("engine: a table needs Chains, the repository of its hash chains")
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
	t := &Table{
		cfg: cfg, game: cfg.Game, clock: cfg.Clock, store: cfg.Store, chains: cfg.Chains,
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
	t.elector = leadership.New(cfg.Game.ID, cfg.Store, cfg.Lease, t.logger)
	t.cfg.Lease = t.elector.Settings()
	t.commit = groupcommit.New(context.Background(), t.commitJobs, groupcommit.Options{
		MaxBatch: maxCommitBatch, QueueLen: commitQueueLen, OnFailure: groupcommit.RetryEach, Logger: t.logger,
		Observe: cfg.CommitObserved,
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

// Holds reports whether session has a live subscription here: an event
// delivered for that session alone (Deliver) reaches someone only then.
func (t *Table) Holds(session []byte) bool { return t.hub.holds(session) }

// Deliver hands an event of the table's leader, received from the cluster,
// to this table's subscribers: to every one, or to those of session when it
// is not nil. A phase event also becomes the round this table shows (Round,
// the first event of a new subscriber), unless this table leads: its loop
// keeps its own view. Balances do not travel as events: package sessions
// publishes and relays them.
func (t *Table) Deliver(session []byte, ev *Event) {
	if session != nil {
		t.hub.send(session, ev)
		return
	}
	switch ev.Type {
	case EventRoundBetting, EventRoundFlying, EventRoundCrashed:
		if !t.elector.Leading() {
			t.viewMu.Lock()
			t.view = ev.Round
			t.viewMu.Unlock()
			if ev.Type == EventRoundFlying {
				go t.warmFlight(ev.Round)
			}
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
	v := RoundView{RoundID: rec.ID, Seq: rec.Seq, Phase: PhaseCrashed, BettingEndsAt: rec.BettingEndsAt, StartedAt: rec.StartedAt}
	switch rec.Status {
	case RoundBetting:
		v.Phase = PhaseBetting
	case RoundFlying:
		v.Phase = PhaseFlying
	case RoundFinished:
		v.CrashedAt, v.CrashPoint, v.Hash = rec.CrashedAt, rec.CrashPoint, rec.Hash
	}
	if t.elector.Leading() {
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
	recs, err := t.store.Bets(ctx, BetFilter{RoundIDs: []string{v.RoundID},
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

// do runs f on the loop goroutine and waits for it. A table asked to stop
// still serves its last round to the crash (Stop), so f is refused with
// ErrStopped only once the loop is over.
func (t *Table) do(ctx context.Context, f func()) error {
	done := make(chan struct{})
	select {
	case t.inbox <- func() { f(); close(done) }:
	case <-t.loopDone:
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
// goes on to its crash, then the table hands its lease over. A flying round
// that holds no bet in play on a table alone on its database (Lease.Sole),
// or one still flying ShutdownGrace after Stop, is settled as interrupted
// (Recover's rule) first; a pause after a crash ends.
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

// Leadership is the table's hold on its game's lease: whether it leads, at
// which epoch, and a subscription to each change (a replica serves the
// table's actions while it leads).
func (t *Table) Leadership() *leadership.Elector { return t.elector }

// Run plays rounds until Stop, while it holds the game's lease: its elector
// takes the lease, and each term it announces is led (lead): what the
// previous leader left is settled (Recover), then rounds are played until
// Stop or until the term ends, and the table waits for the next term. It
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
	// The elector runs until the loop is done: a term it holds then, which
	// the loop never led, ends and its lease is released.
	terms := t.elector.Subscribe()
	defer terms.Stop()
	electing, stopElecting := context.WithCancel(ctx)
	elected := make(chan struct{})
	go func() { defer close(elected); t.elector.Run(electing) }()
	defer func() { stopElecting(); <-elected }()
	t.flush = t.clock.After(publicFlush)
	for !t.isStopping() {
		lease := t.awaitTerm(terms)
		if lease == nil {
			break
		}
		if err := t.lead(ctx, lease); err != nil {
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

// awaitTerm serves the inbox (betting is closed for a table that does not
// lead) until the elector announces a term that is not over, which it
// returns, or until the table stops: nil.
func (t *Table) awaitTerm(terms *leadership.Subscription) *leadership.Term {
	for {
		select {
		case f := <-t.inbox:
			f()
		case <-t.flush:
			t.flush = t.clock.After(publicFlush)
		case n := <-terms.C():
			if n.Term == nil {
				continue
			}
			select {
			case <-n.Term.Done():
			default:
				return n.Term
			}
		case <-t.stopped:
			return nil
		}
	}
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
