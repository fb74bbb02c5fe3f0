package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Kinds of timed calls.
const (
	kindLaunch  = "launch"
	kindSession = "session"
	kindBet     = "bet"
	kindCashout = "cashout"
	// kindReconnect is one reconnection: from a stream's drop, as the
	// player noticed it, to its new stream open (handshake done, hello
	// sent), its failed attempts and backoffs included.
	kindReconnect = "reconnect"
)

// sample is one timed call: when it ended (seconds since the start of the
// run), how long it took, and how it ended ("201", "409 BETTING_CLOSED", ...).
type sample struct {
	at      float64
	ms      float64
	outcome string
}

// recorder collects the samples of every kind.
type recorder struct {
	start time.Time
	mu    sync.Mutex
	by    map[string][]sample
}

func (r *recorder) add(kind string, d time.Duration, outcome string) {
	s := sample{at: time.Since(r.start).Seconds(), ms: float64(d.Microseconds()) / 1000, outcome: outcome}
	r.mu.Lock()
	r.by[kind] = append(r.by[kind], s)
	r.mu.Unlock()
}

func (r *recorder) get(kind string) []sample {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.by[kind])
}

// loadgen is one run.
type loadgen struct {
	o   *options
	rec *recorder

	roundMu     sync.Mutex
	playing     bool            // the quiet wait after the set-up is over
	early       map[string]bool // rounds in betting before that: never played
	rounds      []string        // rounds admitted for betting, in order
	crashed     map[string]bool // ended: crashed, or interrupted
	interrupted []string        // admitted rounds that ended without a crash
	allCrashed  chan struct{}
	flew        chan struct{} // closed when the first played round takes off
	flewOnce    sync.Once
	roundTimes  map[string]*roundStat
	bytesIn     atomic.Int64
	dropMu      sync.Mutex
	dropCodes   map[string]int
	failCauses  map[string]int // failed reopenings by cause (failureCause)
	droppedN    atomic.Int64
	// Streams reopened after a drop, and reopenings that failed (each
	// failure is tried again after a backoff).
	reopenedN, reopenFailedN atomic.Int64
	// interruptedBy says why the rounds stopped before all were played:
	// "" (they were), "interrupt" (a signal) or "timeout".
	interruptedBy string
	betsMu        sync.Mutex
	acceptedIDs   map[string]*liveBet
	paidIDs       map[string]int64
	autoIDs       map[string]bool
	samples       []procSample
	samplesMu     sync.Mutex
	// Bets by when they left the load tool: on the wire before their
	// round's betting_ends_at, and of those the ones refused as late
	// (lateCodes), which are the game's; or on the wire after it, the
	// tool's.
	sentInWindow, refusedInWindow, sentLate atomic.Int64
	// replicaSamples are each replica's samples (--replicas), in its order.
	replicaSamples [][]replicaSample
	carries        []counterCarry // per replica, guarded by samplesMu
}

type roundStat struct {
	ID string `json:"round_id"`
	// BettingSeenAt is when the players first saw the round's betting.
	BettingSeenAt float64 `json:"betting_seen_at_s"`
	FirstBetAt    float64 `json:"first_bet_at_s"`
	LastBetAt     float64 `json:"last_accepted_at_s"`
	Accepted      int     `json:"accepted"`
	PerSecond     float64 `json:"accepted_per_s"`
}

// admitRound says whether the players bet in round id: the first rounds
// whose betting began after the quiet wait, up to --rounds.
func (lg *loadgen) admitRound(id string) bool {
	lg.roundMu.Lock()
	defer lg.roundMu.Unlock()
	if slices.Contains(lg.rounds, id) {
		return true
	}
	if !lg.playing || lg.early[id] {
		// A round already in betting during the set-up or the quiet wait
		// would make neither quiet, and its window would be partly spent.
		if lg.early == nil {
			lg.early = map[string]bool{}
		}
		lg.early[id] = true
		return false
	}
	// A new round's betting ends every earlier one: a round a new leader
	// settled by the fail-over rule never crashes on the streams.
	for _, r := range lg.rounds {
		if !lg.crashed[r] {
			lg.interrupted = append(lg.interrupted, r)
			lg.endRound(r)
		}
	}
	if len(lg.rounds) >= lg.o.rounds {
		return false
	}
	lg.rounds = append(lg.rounds, id)
	lg.roundTimes[id] = &roundStat{ID: id, BettingSeenAt: time.Since(lg.rec.start).Seconds(), FirstBetAt: -1}
	return true
}

// startPlaying ends the quiet wait: the next round's betting is played.
func (lg *loadgen) startPlaying() {
	lg.roundMu.Lock()
	defer lg.roundMu.Unlock()
	lg.playing = true
}

// roundFlying notes a round's take-off seen on a stream: the first played
// round's starts the flight's trace (--profile).
func (lg *loadgen) roundFlying(id string) {
	lg.roundMu.Lock()
	played := slices.Contains(lg.rounds, id)
	lg.roundMu.Unlock()
	if played {
		lg.flewOnce.Do(func() { close(lg.flew) })
	}
}

func (lg *loadgen) roundCrashed(id string) {
	lg.roundMu.Lock()
	defer lg.roundMu.Unlock()
	if !slices.Contains(lg.rounds, id) || lg.crashed[id] {
		return
	}
	lg.endRound(id)
}

// endRound marks an admitted round ended; roundMu is held.
func (lg *loadgen) endRound(id string) {
	lg.crashed[id] = true
	if len(lg.crashed) == lg.o.rounds {
		close(lg.allCrashed)
	}
}

// dropped counts a stream that ended during the run, by cause: its close
// code, causeSilent or causeLost.
func (lg *loadgen) dropped(cause string) {
	lg.droppedN.Add(1)
	lg.dropMu.Lock()
	lg.dropCodes[cause]++
	lg.dropMu.Unlock()
}

func (lg *loadgen) reopened() { lg.reopenedN.Add(1) }

// reopenFailed counts a failed reopening by its cause (failureCause).
func (lg *loadgen) reopenFailed(status int, err error) {
	lg.reopenFailedN.Add(1)
	lg.dropMu.Lock()
	lg.failCauses[failureCause(status, err)]++
	lg.dropMu.Unlock()
}

func (lg *loadgen) accepted(roundID string, b *liveBet, sent time.Time) {
	lg.betsMu.Lock()
	lg.acceptedIDs[b.id] = b
	lg.betsMu.Unlock()
	sentAt, at := sent.Sub(lg.rec.start).Seconds(), time.Since(lg.rec.start).Seconds()
	lg.roundMu.Lock()
	if r := lg.roundTimes[roundID]; r != nil {
		if r.FirstBetAt < 0 || sentAt < r.FirstBetAt {
			r.FirstBetAt = sentAt
		}
		r.LastBetAt = max(r.LastBetAt, at)
		r.Accepted++
	}
	lg.roundMu.Unlock()
}

func (lg *loadgen) paid(id string, payout int64) {
	lg.betsMu.Lock()
	lg.paidIDs[id] = payout
	lg.betsMu.Unlock()
}

func (lg *loadgen) autoSeen(id string) {
	lg.betsMu.Lock()
	lg.autoIDs[id] = true
	lg.betsMu.Unlock()
}

// load runs the whole thing: set-up, rounds, drain, reconciliation.
func load(ctx context.Context, o *options, sys *system, stdout io.Writer) (*result, error) {
	lg := newLoadgen(o)
	res := &result{Config: o.view(), Machine: machine()}
	admin := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: o.setupConc,
		DialContext: connectTo(&net.Dialer{Timeout: 10 * time.Second}, hostPort(o.url), o.connect)}}

	sampleCtx, stopSampling := context.WithCancel(ctx)
	defer stopSampling()
	var samplerDone sync.WaitGroup
	samplerDone.Go(func() { lg.sample(sampleCtx) })
	time.Sleep(1200 * time.Millisecond) // an idle sample first

	playCtx, stopPlay := context.WithCancel(ctx)
	defer stopPlay()
	var playing sync.WaitGroup
	players, err := lg.setUp(ctx, playCtx, &playing, admin, res, stdout)
	if err != nil {
		return nil, err
	}
	profiled := lg.profilePlay(ctx, stdout)
	latencyFrom := lg.readLatency(ctx)
	natsFrom, natsErr := lg.readNATS(ctx)
	pgDB, pgErr := openPGStats(lg.o.gameDB)
	var pgFrom pgStat
	if pgDB != nil {
		defer pgDB.Close()
		pgFrom, pgErr = readPGStat(ctx, pgDB)
	}
	lg.waitRounds(ctx, stdout)
	res.GameLatency = lg.gameLatencyOver(latencyFrom, lg.readLatency(ctx))
	lg.betsMu.Lock()
	accepted := len(lg.acceptedIDs)
	lg.betsMu.Unlock()
	if lg.o.natsMonitor != "" {
		natsTo, err := lg.readNATS(ctx)
		if err = errors.Join(natsErr, err); err != nil {
			fmt.Fprintf(stdout, "NATS's traffic not measured: %v\n", err)
		} else {
			res.NATS = natsOver(natsFrom, natsTo, accepted)
		}
	}
	if pgDB != nil || pgErr != nil {
		var pgTo pgStat
		if pgErr == nil {
			pgTo, pgErr = readPGStat(ctx, pgDB)
		}
		if pgErr != nil {
			fmt.Fprintf(stdout, "PostgreSQL's activity not measured: %v\n", pgErr)
		} else {
			res.Postgres = pgOver(pgFrom, pgTo, accepted)
		}
	}
	profiled()
	res.PlayedUntil = time.Since(lg.rec.start).Seconds()
	stopPlay()
	playing.Wait()
	// After an interrupt the drain and the reconciliation still run, for at
	// most a minute (a second signal is not needed to see the summary).
	if ctx.Err() != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		o.drainWait = min(o.drainWait, 30*time.Second)
	}

	fmt.Fprintln(stdout, "rounds played; waiting for the movement queue to drain...")
	drained, drainedBy, drainErr := lg.waitDrained(ctx)
	stopSampling()
	samplerDone.Wait()
	if sys != nil {
		sys.stopGame()
	}
	lg.summarise(res)
	if err := lg.loadPhases(res); err != nil {
		fmt.Fprintln(stdout, "no table by phase:", err) // the rest of the result stands
	}
	res.Reconciliation = lg.reconcile(ctx, admin, drained, drainedBy, drainErr)
	if o.floor {
		fr, err := lg.runFloor(ctx, admin, players, res.Bets.Accepted, false, stdout)
		if err != nil {
			return nil, fmt.Errorf("floor: %w", err)
		}
		fr.GameRatio = ratio(res.Game.CPUPerBetInWindows, fr.CPUPerBet)
		res.Floor = &fr
		rf, err := lg.runFloor(ctx, admin, players, res.Bets.Accepted, true, stdout)
		if err != nil {
			return nil, fmt.Errorf("raw floor: %w", err)
		}
		rf.GameRatio = ratio(res.Game.CPUPerBetInWindows, rf.CPUPerBet)
		res.RawFloor = &rf
	}
	return res, nil
}

// newLoadgen is a run of o that starts now.
func newLoadgen(o *options) *loadgen {
	return &loadgen{
		o: o, rec: &recorder{start: time.Now(), by: map[string][]sample{}},
		crashed: map[string]bool{}, allCrashed: make(chan struct{}), flew: make(chan struct{}), roundTimes: map[string]*roundStat{},
		dropCodes: map[string]int{}, failCauses: map[string]int{}, acceptedIDs: map[string]*liveBet{}, paidIDs: map[string]int64{}, autoIDs: map[string]bool{},
	}
}

// setUp opens every player's session, then its stream, on which it plays
// with playCtx (playing waits for the players), then waits quietly with
// everyone connected and starts the rounds. It fills in res's set-up figures
// and the streams opened.
func (lg *loadgen) setUp(ctx, playCtx context.Context, playing *sync.WaitGroup, admin *http.Client, res *result, stdout io.Writer) ([]*player, error) {
	o := lg.o
	fmt.Fprintf(stdout, "run started at %s (the result's times are seconds since then); opening %d sessions...\n",
		lg.rec.start.Format("15:04:05.000"), o.players)
	plan := addressPlan{players: o.players, addresses: o.addresses}
	groups := make([]*group, plan.groups())
	for i := range groups {
		groups[i] = newGroup(i, plan.size(i), o.forwarded, hostPort(o.url), o.connect)
	}
	setupStart := time.Now()
	players, err := lg.openSessions(ctx, admin, plan, groups)
	if err != nil {
		return nil, err
	}
	res.Setup.SessionSeconds = time.Since(setupStart).Seconds()
	fmt.Fprintf(stdout, "sessions open in %.1f s; opening streams...\n", res.Setup.SessionSeconds)

	var streamFail atomic.Int64
	var streamErr atomic.Value
	lg.openStreams(ctx, playCtx, playing, players, setupStart, &streamFail, &streamErr)
	res.Setup.Seconds = time.Since(setupStart).Seconds()
	res.Stream.Opened = o.players - int(streamFail.Load())
	if res.Stream.Opened == 0 {
		return nil, fmt.Errorf("no stream could be opened: %v", streamErr.Load())
	}
	// A quiet wait with everyone connected, before the rounds: the game's
	// connected-idle cost is its quietest second between two samples (the
	// sampler ticks each second, so 4 s holds at least three such seconds).
	res.Setup.ConnectedAt = time.Since(lg.rec.start).Seconds()
	time.Sleep(4 * time.Second)
	res.Setup.LoadedAt = time.Since(lg.rec.start).Seconds()
	lg.profileConnected(ctx, stdout)
	lg.startPlaying()
	fmt.Fprintf(stdout, "%d streams open (%d failed) in %.1f s; playing %d rounds...\n", res.Stream.Opened, streamFail.Load(), res.Setup.Seconds, o.rounds)
	return players, nil
}

// openSessions opens every player's session, each in its address group
// (plan says which of groups), --setup-concurrency at a time; it fails when
// any could not be opened.
func (lg *loadgen) openSessions(ctx context.Context, admin *http.Client, plan addressPlan, groups []*group) ([]*player, error) {
	o := lg.o
	players := make([]*player, o.players)
	var setupErr atomic.Value
	var failed atomic.Int64
	forEach(ctx, o.setupConc, o.players, func(i int) {
		p := &player{n: i, id: fmt.Sprintf("%s%06d", o.playerPrefx, i), g: groups[plan.of(i)], lg: lg}
		grant := float64(i%100) < o.freebets*100
		if err := p.setup(ctx, admin, grant); err != nil {
			failed.Add(1)
			setupErr.Store(err)
			return
		}
		players[i] = p
	})
	if n := failed.Load(); n > 0 {
		return nil, fmt.Errorf("%d of %d sessions could not be opened; last error: %v", n, o.players, setupErr.Load())
	}
	return players, nil
}

// openStreams starts every player playing with playCtx (playing waits for
// them), --setup-concurrency dials at a time, and returns once every stream
// answered its dial, ctx ended, or 10 minutes passed since setupStart. The
// streams that failed are counted in failed, the last error kept in lastErr.
func (lg *loadgen) openStreams(ctx, playCtx context.Context, playing *sync.WaitGroup, players []*player, setupStart time.Time, failed *atomic.Int64, lastErr *atomic.Value) {
	o := lg.o
	opened := make(chan error, o.setupConc)
	var dialed atomic.Int64
	go forEach(ctx, o.setupConc, o.players, func(i int) {
		playing.Go(func() { players[i].play(playCtx, opened) })
		if err := <-opened; err != nil {
			failed.Add(1)
			lastErr.Store(err)
		}
		dialed.Add(1)
	})
	// Wait until every stream answered its dial.
	for dialed.Load() < int64(o.players) && ctx.Err() == nil && time.Since(setupStart) < 10*time.Minute {
		time.Sleep(100 * time.Millisecond)
	}
}

// forEach calls f with each of 0 to n-1 on at most conc goroutines at once,
// and returns when they are done; once ctx ends, no further call begins.
func forEach(ctx context.Context, conc, n int, f func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(conc, n) {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n && ctx.Err() == nil; i = int(next.Add(1)) - 1 {
				f(i)
			}
		})
	}
	wg.Wait()
}

// waitRounds waits until every admitted round crashed, ctx ends (an
// interrupt) or the rounds' time runs out, and notes why it stopped early.
func (lg *loadgen) waitRounds(ctx context.Context, stdout io.Writer) {
	o := lg.o
	select {
	case <-lg.allCrashed:
	case <-ctx.Done():
		lg.interruptedBy = "interrupt"
		fmt.Fprintln(stdout, "interrupted; stopping the players, then the summary of what was played")
	case <-time.After(time.Duration(o.rounds)*(time.Duration(o.bettingMS)*time.Millisecond+5*time.Minute) + time.Minute):
		lg.interruptedBy = "timeout"
		fmt.Fprintln(stdout, "the rounds did not all crash in time; stopping")
	}
}

// waitDrained waits until the game's movement queue holds no pending
// movement (drainCheck says where that is read), and says how it checked.
func (lg *loadgen) waitDrained(ctx context.Context) (bool, string, error) {
	check, how, done, err := lg.drainCheck(ctx)
	if err != nil {
		return false, "not checked", err
	}
	defer done()
	deadline := time.Now().Add(lg.o.drainWait)
	var last error
	for time.Now().Before(deadline) && ctx.Err() == nil {
		ok, err := check()
		if ok {
			return true, how, nil
		}
		last = err
		time.Sleep(500 * time.Millisecond)
	}
	return false, how, last
}

// lateCodes are the answers to a bet sent inside its window that count as the
// game's lateness: BETTING_CLOSED (it arrived after the window), and a bet
// the game did not get debited in its window: WALLET_UNAVAILABLE (the
// debit's outcome still unknown at take-off) or SERVER_ERROR (since
// table.v1 1.4.1, a /bet never sent because its intent committed after its
// debit deadline; also any other failure of the game, so the share never
// flatters it).
var lateCodes = map[string]bool{"BETTING_CLOSED": true, "WALLET_UNAVAILABLE": true, "SERVER_ERROR": true}

// judgeLateness counts a bet answered with status and code by whether it went
// on the wire (wire: the connection was obtained) before its round's window
// closed at endsAt.
func (lg *loadgen) judgeLateness(wire, endsAt time.Time, status int, code string) {
	if !wire.Before(endsAt) {
		lg.sentLate.Add(1)
		return
	}
	lg.sentInWindow.Add(1)
	if status != http.StatusCreated && lateCodes[code] {
		lg.refusedInWindow.Add(1)
	}
}
