package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"strings"
)

// result is the JSON the run writes.
type result struct {
	Config  map[string]any `json:"config"`
	Machine machineInfo    `json:"machine"`
	Setup   struct {
		SessionSeconds float64 `json:"sessions_s"`
		Seconds        float64 `json:"sessions_and_streams_s"`
		ConnectedAt    float64 `json:"connected_at_s"` // every stream answered its dial
		LoadedAt       float64 `json:"loaded_at_s"`    // the end of the quiet wait after it

		Launch  calls `json:"launch"`
		Session calls `json:"session"`
	} `json:"setup"`
	PlayedUntil float64 `json:"played_until_s"`
	Bets        struct {
		calls
		Accepted       int         `json:"accepted"`
		PeakPerSecond  float64     `json:"accepted_peak_1s_per_s"`
		WindowPerSec   float64     `json:"accepted_per_s_in_window_best_round"`
		MeanWindowRate float64     `json:"accepted_per_s_in_window_mean"`
		Rounds         []roundStat `json:"rounds"`
		Interrupted    []string    `json:"rounds_interrupted"` // ended by a new round's betting, never crashed (a fail-over)
		// SentInWindow bets went on the wire before their round's window
		// closed; RefusedLate of them were answered one of lateCodes (the
		// game's lateness); SentLate went on the
		// wire after it (the load tool's own lateness).
		SentInWindow int     `json:"sent_in_window"`
		RefusedLate  int     `json:"sent_in_window_refused_late"`
		RefusedShare float64 `json:"sent_in_window_refused_late_share"`
		SentLate     int     `json:"sent_after_window"`
		Freebet      int     `json:"freebet_accepted"`
		Auto         int     `json:"auto_cashout_accepted"`
	} `json:"bets"`
	Cashouts struct {
		calls
		Paid        int `json:"paid"`
		AutoCashed  int `json:"auto_cashed_seen"`
		TooLateOrNo int `json:"refused"`
	} `json:"cashouts"`
	Stream struct {
		Opened  int   `json:"opened"`
		Dropped int64 `json:"dropped"`
		// CloseCodes counts the drops by cause: a close code, "silent"
		// (nothing heard for --silence) or "lost" (no close frame).
		CloseCodes   map[string]int `json:"dropped_close_codes"`
		Reopened     int64          `json:"reopened"`
		ReopenFailed int64          `json:"reopen_failed"`
		// FailCauses counts the failed reopenings by cause: the handshake's
		// HTTP status ("429"), or how the connection failed ("timeout",
		// "refused", "reset", "eof", "no local port", "other: ...").
		FailCauses map[string]int `json:"reopen_failed_causes"`
		// Reconnect times each reconnection: from the drop, as the player
		// noticed it (a close, or --silence without a message), to its new
		// stream open, failed attempts and backoffs included.
		Reconnect calls `json:"reconnect"`
	} `json:"stream"`
	// StoppedBy is why the rounds stopped before all were played:
	// "interrupt", "timeout", or empty when they all were.
	StoppedBy string `json:"stopped_by,omitempty"`
	Game      struct {
		PID                int     `json:"pid"`
		IdleRSSBytes       int64   `json:"rss_idle_bytes"`
		LoadedRSSBytes     int64   `json:"rss_connected_bytes"`
		PeakRSSBytes       int64   `json:"rss_peak_bytes"`
		BytesPerPlayer     float64 `json:"rss_bytes_per_live_player"`
		PeakBytesPerPlayer float64 `json:"rss_peak_bytes_per_live_player"`
		CPUCoresPlaying    float64 `json:"cpu_cores_while_playing"`
		CPUCoresIdle       float64 `json:"cpu_cores_connected_idle"`
		CPUMsPerSecPerPlay float64 `json:"cpu_ms_per_s_per_live_player"`
		// Stream messages written while playing, each one WebSocket frame:
		// the fan-out's rate; and the write system calls that carried them
		// (a stream writes what is due to it at one moment in one).
		MessagesPerSec float64 `json:"stream_messages_per_s_playing"`
		WritesPerSec   float64 `json:"stream_writes_per_s_playing,omitempty"`
		// CPUPerAcceptedBet is the game's CPU time while playing over the
		// bets it accepted: everything a bet costs end to end (player API,
		// engine, /bet, commits, the streams' fan-out), in microseconds.
		CPUPerAcceptedBet float64 `json:"cpu_us_per_accepted_bet"`
		// CPUPerBetInWindows is the game's CPU from each played round's
		// first bet to its last accepted one, over the bets accepted: the bet
		// path with everything that runs beside it then (the round's board
		// and the players' own events to every stream, the queue, the
		// connected players' keep-alives), without the flying phases and
		// pauses, whose cost does not depend on the bets.
		CPUPerBetInWindows float64 `json:"cpu_us_per_accepted_bet_in_windows"`
		CPUCoresInWindows  float64 `json:"cpu_cores_in_windows"`
		QueuePeak          float64 `json:"queue_pending_peak"`
	} `json:"game"`
	// GameLatency is the game's own time to answer the bets and cashouts
	// while playing, from its request histogram; nil when it has none.
	GameLatency *gameLatency `json:"game_latency,omitempty"`
	// NATS is what the cluster's NATS server carried over the rounds
	// (--nats-monitor).
	NATS *natsTraffic `json:"nats,omitempty"`
	// Postgres is what PostgreSQL did in the game's database over the
	// rounds (--game-db on PostgreSQL).
	Postgres *pgActivity `json:"postgres,omitempty"`
	// Floor is the floor of a bet in the same run (--floor): the same work
	// through the game's wallet client and store.
	Floor *floorResult `json:"floor,omitempty"`
	// RawFloor is the raw floor of a bet, after Floor in the same run
	// (--floor): the same work with none of the game's code (floor_raw.go).
	RawFloor *floorResult `json:"raw_floor,omitempty"`
	// Replicas are each replica's figures (--replicas); Game is then their sum.
	Replicas []replicaResult `json:"replicas,omitempty"`
	// Phases split the run at the marks of --phases (a rolling deploy's
	// steps); none without it.
	Phases         []phaseStat    `json:"phases,omitempty"`
	Timeline       []second       `json:"timeline"`
	Samples        []procSample   `json:"samples"`
	Reconciliation reconciliation `json:"reconciliation"`
}

// calls summarises the timed calls of one kind.
type calls struct {
	N        int            `json:"n"`
	Outcomes map[string]int `json:"outcomes"`
	P50      float64        `json:"p50_ms"`
	P99      float64        `json:"p99_ms"`
	P999     float64        `json:"p99_9_ms"`
	Max      float64        `json:"max_ms"`
}

// second is one second of the run.
type second struct {
	T          int     `json:"t_s"`
	Accepted   int     `json:"bets_accepted"`
	BetP50     float64 `json:"bet_p50_ms"`
	BetP99     float64 `json:"bet_p99_ms"`
	Cashouts   int     `json:"cashouts_paid"`
	CashoutP50 float64 `json:"cashout_p50_ms"`
	CashoutP99 float64 `json:"cashout_p99_ms"`
	Pending    float64 `json:"queue_pending"`
}

// quantile is the nearest-rank q-quantile of sorted.
func quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := max(int(math.Ceil(q*float64(len(sorted))))-1, 0)
	return sorted[i]
}

func summarise(ss []sample) calls {
	c := calls{N: len(ss), Outcomes: map[string]int{}}
	var ms []float64
	for _, s := range ss {
		c.Outcomes[s.outcome]++
		if s.outcome != "error" {
			ms = append(ms, s.ms)
		}
	}
	slices.Sort(ms)
	if len(ms) > 0 {
		c.P50, c.P99, c.P999, c.Max = quantile(ms, 0.5), quantile(ms, 0.99), quantile(ms, 0.999), ms[len(ms)-1]
	}
	return c
}

// summarise fills in res's figures from what the run recorded: the calls, the
// bets and cashouts, the rounds, the streams, a timeline by second, the game
// process and each replica.
func (lg *loadgen) summarise(res *result) {
	res.Setup.Launch = summarise(lg.rec.get(kindLaunch))
	res.Setup.Session = summarise(lg.rec.get(kindSession))
	bets, cashouts := lg.rec.get(kindBet), lg.rec.get(kindCashout)
	lg.summariseBets(res, bets, cashouts)
	lg.summariseRounds(res)
	lg.summariseStreams(res)

	per := perSecond(res.PlayedUntil, bets, cashouts)
	lg.samplesMu.Lock()
	res.Samples = slices.Clone(lg.samples)
	lg.samplesMu.Unlock()
	fillTimeline(res, per)

	summariseGame(res, lg.o.gamePID)
	lg.summariseReplicas(res)
}

// summariseBets fills in the bets' and cashouts' calls and counts.
func (lg *loadgen) summariseBets(res *result, bets, cashouts []sample) {
	res.Bets.calls = summarise(bets)
	res.Cashouts.calls = summarise(cashouts)
	res.Bets.Accepted = res.Bets.Outcomes["201"]
	res.Bets.SentInWindow, res.Bets.RefusedLate = int(lg.sentInWindow.Load()), int(lg.refusedInWindow.Load())
	res.Bets.SentLate = int(lg.sentLate.Load())
	res.Bets.RefusedShare = ratio(float64(res.Bets.RefusedLate), float64(res.Bets.SentInWindow))
	res.Cashouts.Paid = res.Cashouts.Outcomes["200"]
	res.Cashouts.TooLateOrNo = res.Cashouts.N - res.Cashouts.Paid
	lg.betsMu.Lock()
	for _, b := range lg.acceptedIDs {
		if b.free {
			res.Bets.Freebet++
		}
		if b.auto != 0 {
			res.Bets.Auto++
		}
	}
	for id := range lg.autoIDs {
		if b := lg.acceptedIDs[id]; b != nil && b.auto != 0 {
			res.Cashouts.AutoCashed++
		}
	}
	lg.betsMu.Unlock()
}

// summariseRounds fills in the rounds played, each with its betting window's
// rate, and the best and mean of those rates.
func (lg *loadgen) summariseRounds(res *result) {
	lg.roundMu.Lock()
	res.Bets.Interrupted = slices.Clone(lg.interrupted)
	var rates []float64
	for _, id := range lg.rounds {
		r := *lg.roundTimes[id]
		if r.Accepted > 0 && r.LastBetAt > r.FirstBetAt {
			r.PerSecond = float64(r.Accepted) / (r.LastBetAt - r.FirstBetAt)
			rates = append(rates, r.PerSecond)
		}
		res.Bets.Rounds = append(res.Bets.Rounds, r)
	}
	lg.roundMu.Unlock()
	if len(rates) > 0 {
		res.Bets.WindowPerSec = slices.Max(rates)
		var sum float64
		for _, r := range rates {
			sum += r
		}
		res.Bets.MeanWindowRate = sum / float64(len(rates))
	}
}

// summariseStreams fills in the streams' drops and reconnections, and why the
// rounds stopped early, if they did.
func (lg *loadgen) summariseStreams(res *result) {
	res.Stream.Dropped = lg.droppedN.Load()
	res.Stream.Reopened, res.Stream.ReopenFailed = lg.reopenedN.Load(), lg.reopenFailedN.Load()
	res.Stream.Reconnect = summarise(lg.rec.get(kindReconnect))
	res.StoppedBy = lg.interruptedBy
	lg.dropMu.Lock()
	res.Stream.CloseCodes = maps.Clone(lg.dropCodes)
	res.Stream.FailCauses = maps.Clone(lg.failCauses)
	lg.dropMu.Unlock()
}

// secondCalls are the latencies (ms) of one second's accepted bets and paid
// cashouts.
type secondCalls struct{ bet, cash []float64 }

// perSecond sorts the accepted bets and paid cashouts into the seconds of the
// run up to playedUntil, by when they were sent.
func perSecond(playedUntil float64, bets, cashouts []sample) []secondCalls {
	n := int(math.Ceil(playedUntil)) + 1
	per := make([]secondCalls, n)
	for _, s := range bets {
		if t := int(s.at); t < n && s.outcome == "201" {
			per[t].bet = append(per[t].bet, s.ms)
		}
	}
	for _, s := range cashouts {
		if t := int(s.at); t < n && s.outcome == "200" {
			per[t].cash = append(per[t].cash, s.ms)
		}
	}
	return per
}

// fillTimeline fills in res's timeline, one second of per each, with the queue
// as last sampled, and the peak of accepted bets in a second.
func fillTimeline(res *result, per []secondCalls) {
	for t := range per {
		slices.Sort(per[t].bet)
		slices.Sort(per[t].cash)
		sec := second{T: t, Accepted: len(per[t].bet), BetP50: quantile(per[t].bet, 0.5), BetP99: quantile(per[t].bet, 0.99),
			Cashouts: len(per[t].cash), CashoutP50: quantile(per[t].cash, 0.5), CashoutP99: quantile(per[t].cash, 0.99)}
		for _, s := range res.Samples {
			if int(s.At) <= t {
				sec.Pending = s.Pending
			}
		}
		res.Bets.PeakPerSecond = max(res.Bets.PeakPerSecond, float64(sec.Accepted))
		res.Timeline = append(res.Timeline, sec)
	}
}

// summariseGame fills in res.Game, the figures of the game process (pid) read
// off res.Samples: idle (before the set-up), connected (after it, before the
// rounds), and while playing.
func summariseGame(res *result, pid int) {
	g := &res.Game
	g.PID = pid
	var idle, loaded, first, last *procSample
	for i := range res.Samples {
		s := &res.Samples[i]
		g.QueuePeak = max(g.QueuePeak, s.Pending)
		g.PeakRSSBytes = max(g.PeakRSSBytes, s.RSSBytes)
		if idle == nil {
			idle = s
		}
		if s.At <= res.Setup.LoadedAt {
			loaded = s
		}
		if first == nil && s.At >= res.Setup.LoadedAt {
			first = s
		}
		if s.At <= res.PlayedUntil {
			last = s
		}
	}
	live := float64(res.Stream.Opened)
	if idle != nil && loaded != nil {
		g.IdleRSSBytes, g.LoadedRSSBytes = idle.RSSBytes, loaded.RSSBytes
		g.BytesPerPlayer = float64(loaded.RSSBytes-idle.RSSBytes) / live
		g.PeakBytesPerPlayer = float64(g.PeakRSSBytes-idle.RSSBytes) / live
	}
	if first != nil && last != nil && last.At > first.At {
		g.CPUCoresPlaying = (last.CPUSeconds - first.CPUSeconds) / (last.At - first.At)
		g.CPUMsPerSecPerPlay = g.CPUCoresPlaying * 1000 / live
		g.MessagesPerSec = (last.Messages - first.Messages) / (last.At - first.At)
		g.WritesPerSec = (last.Writes - first.Writes) / (last.At - first.At)
		if res.Bets.Accepted > 0 {
			g.CPUPerAcceptedBet = (last.CPUSeconds - first.CPUSeconds) * 1e6 / float64(res.Bets.Accepted)
		}
	}
	g.CPUCoresIdle = idleCores(res.Samples, res.Setup.ConnectedAt, res.Setup.LoadedAt)
	g.CPUPerBetInWindows, g.CPUCoresInWindows = windowCost(res.Bets.Rounds, res.Samples)
}

// idleCores is the game's CPU cores in the quiet wait before the rounds, from
// connectedAt to loadedAt: connected, not betting. The game may still be
// answering the last streams' hellos at its start, so the idle cost is the
// quietest second of it (the lowest rate between two consecutive samples after
// the last dial answered); 0 without two such samples.
func idleCores(samples []procSample, connectedAt, loadedAt float64) float64 {
	cores := -1.0
	for i := 1; i < len(samples); i++ {
		a, b := &samples[i-1], &samples[i]
		if a.At >= connectedAt && b.At <= loadedAt && b.At > a.At {
			rate := (b.CPUSeconds - a.CPUSeconds) / (b.At - a.At)
			if cores < 0 || rate < cores {
				cores = rate
			}
		}
	}
	return max(cores, 0)
}

// summariseReplicas fills in each replica's figures (--replicas) from its
// samples.
func (lg *loadgen) summariseReplicas(res *result) {
	lg.samplesMu.Lock()
	for i, t := range lg.o.replicas {
		var ss []replicaSample
		if i < len(lg.replicaSamples) {
			ss = slices.Clone(lg.replicaSamples[i])
		}
		res.Replicas = append(res.Replicas, summariseReplica(t, ss, res.Setup.ConnectedAt, res.Setup.LoadedAt, res.PlayedUntil))
	}
	lg.samplesMu.Unlock()
}

func (o *options) view() map[string]any {
	return map[string]any{
		"self": o.self, "database": redact(o.database), "url": o.url, "operator_url": o.operatorURL,
		"players": o.players, "bets_per_round": o.betsPer, "rounds": o.rounds, "auto_ratio": o.autoRatio,
		"freebet_ratio": o.freebets, "spread": o.betSpread.String(), "zero_win": o.zeroWin, "betting_ms": o.bettingMS,
		"operator_db": o.operatorDB, "forwarded": o.forwarded, "replicas": o.replicas, "game_db": redact(o.gameDB),
		"pin": o.pin, "floor": o.floor, "addresses": o.addresses,
	}
}

func redact(dsn string) string {
	if i := strings.Index(dsn, "@"); i > 0 && strings.HasPrefix(dsn, "postgres") {
		return "postgres://***" + dsn[i:]
	}
	return dsn
}

func writeResult(o *options, res *result) error {
	raw, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(o.out, append(raw, '\n'), 0o644); err != nil {
		return err
	}
	if o.chart != "" {
		return writeChart(o.chart, res)
	}
	return nil
}

func printSummary(w io.Writer, res *result) {
	if res.StoppedBy != "" {
		fmt.Fprintf(w, "stopped early (%s): the figures are of what was played\n", res.StoppedBy)
	}
	fmt.Fprintf(w, "players %d (streams %d, dropped %d), rounds %d (%d void: no crash seen, a new round began)\n",
		res.Config["players"], res.Stream.Opened, res.Stream.Dropped, len(res.Bets.Rounds), len(res.Bets.Interrupted))
	fmt.Fprintf(w, "streams: %d dropped by cause %v; %d reopened, %d reopenings failed (tried again)",
		res.Stream.Dropped, res.Stream.CloseCodes, res.Stream.Reopened, res.Stream.ReopenFailed)
	if len(res.Stream.FailCauses) > 0 {
		fmt.Fprintf(w, " by cause %v", res.Stream.FailCauses)
	}
	fmt.Fprintln(w)
	if r := res.Stream.Reconnect; r.N > 0 {
		fmt.Fprintf(w, "reconnections: %d, from the drop noticed to the new stream open p50 %.0f p99 %.0f p99.9 %.0f max %.0f ms\n",
			r.N, r.P50, r.P99, r.P999, r.Max)
	}
	if len(res.Bets.Interrupted) > 0 {
		fmt.Fprintf(w, "void rounds seen: %v\n", res.Bets.Interrupted)
	}
	fmt.Fprintf(w, "bets refused: %v; cashouts refused: %v\n", refusals(res.Bets.Outcomes, "201"), refusals(res.Cashouts.Outcomes, "200"))
	fmt.Fprintf(w, "bets: %d sent, %d accepted; accepted/s peak 1 s %.0f, in the betting window best %.0f mean %.0f; latency p50 %.1f p99 %.1f p99.9 %.1f ms\n",
		res.Bets.N, res.Bets.Accepted, res.Bets.PeakPerSecond, res.Bets.WindowPerSec, res.Bets.MeanWindowRate, res.Bets.P50, res.Bets.P99, res.Bets.P999)
	fmt.Fprintf(w, "bet outcomes: %v\n", res.Bets.Outcomes)
	fmt.Fprintf(w, "bets on the wire inside their window: %d, of which %d (%.1f %%) refused as late (BETTING_CLOSED, WALLET_UNAVAILABLE or SERVER_ERROR); on the wire after it (the load tool's lateness): %d\n",
		res.Bets.SentInWindow, res.Bets.RefusedLate, 100*res.Bets.RefusedShare, res.Bets.SentLate)
	fmt.Fprintf(w, "cashouts: %d sent, %d paid (+%d auto seen); latency p50 %.1f p99 %.1f p99.9 %.1f ms; outcomes %v\n",
		res.Cashouts.N, res.Cashouts.Paid, res.Cashouts.AutoCashed, res.Cashouts.P50, res.Cashouts.P99, res.Cashouts.P999, res.Cashouts.Outcomes)
	if res.GameLatency != nil {
		fmt.Fprintln(w, res.GameLatency.describe())
	}
	if res.NATS != nil {
		fmt.Fprintln(w, res.NATS.describe())
	}
	if res.Postgres != nil {
		fmt.Fprintln(w, res.Postgres.describe())
	}
	g := res.Game
	what := "game"
	if len(res.Replicas) > 0 {
		what = fmt.Sprintf("cluster (sum of %d replicas)", len(res.Replicas))
	}
	fmt.Fprintf(w, "%s: rss idle %.1f MiB, connected %.1f MiB (%.1f KiB per live player), peak %.1f MiB (%.1f KiB per player); cpu %.2f cores playing (%.3f ms/s per player), %.2f connected idle; stream messages %.0f/s playing (in %.0f writes/s); queue peak %.0f\n",
		what, float64(g.IdleRSSBytes)/(1<<20), float64(g.LoadedRSSBytes)/(1<<20), g.BytesPerPlayer/1024, float64(g.PeakRSSBytes)/(1<<20), g.PeakBytesPerPlayer/1024,
		g.CPUCoresPlaying, g.CPUMsPerSecPerPlay, g.CPUCoresIdle, g.MessagesPerSec, g.WritesPerSec, g.QueuePeak)
	if g.CPUPerAcceptedBet > 0 {
		fmt.Fprintf(w, "%s cpu per accepted bet: %.0f µs in the betting windows (%.2f cores there), %.0f µs over everything while playing (flights and pauses included)\n",
			what, g.CPUPerBetInWindows, g.CPUCoresInWindows, g.CPUPerAcceptedBet)
	}
	for _, fl := range []struct {
		name string
		f    *floorResult
	}{{"floor", res.Floor}, {"raw floor", res.RawFloor}} {
		f := fl.f
		if f == nil {
			continue
		}
		ratio := "no ratio (the game's cost in its betting windows was not measured)"
		if f.GameRatio > 0 {
			ratio = fmt.Sprintf("the game's cpu per accepted bet in its betting windows is %.2f× the %s's", f.GameRatio, fl.name)
		}
		fmt.Fprintf(w, "%s: %d bets, %d ok; latency p50 %.1f p99 %.1f ms; cpu %.0f µs per bet; %s; outcomes %v\n",
			fl.name, f.N, f.OK, f.P50, f.P99, f.CPUPerBet, ratio, f.Outcomes)
	}
	for _, rp := range res.Replicas {
		lead := ""
		if rp.LedTables {
			lead = ", led the table"
		}
		if rp.Restarts > 0 {
			lead += fmt.Sprintf(", restarted %d times (its counters carried over)", rp.Restarts)
		}
		fmt.Fprintf(w, "  %s: %.0f streams (peak %.0f); fanned out %.0f messages/s playing (peak 1 s %.0f); cpu %.2f cores playing (peak 1 s %.2f), %.2f connected idle; rss idle %.1f MiB, connected %.1f MiB, peak %.1f MiB%s; %d failed scrapes\n",
			rp.Name, rp.StreamsConnected, rp.StreamsPeak, rp.MessagesPerSec, rp.MessagesPeak1s, rp.CPUCoresPlaying, rp.CPUCoresPeak1s, rp.CPUCoresIdle,
			float64(rp.IdleRSSBytes)/(1<<20), float64(rp.ConnectedRSSBytes)/(1<<20), float64(rp.PeakRSSBytes)/(1<<20), lead, rp.FailedScrapes)
	}
	printPhases(w, res.Phases)
	r := res.Reconciliation
	fmt.Fprintf(w, "reconciliation: %d debits, %d wins, %d rollbacks checked against %s; queue drained %t (%s); %d broken\n",
		r.Debits, r.Wins, r.Rollbacks, r.Against, r.Drained, r.DrainedBy, len(r.Broken))
	for i, b := range r.Broken {
		if i == 10 {
			fmt.Fprintf(w, "  ... %d more\n", len(r.Broken)-10)
			break
		}
		fmt.Fprintln(w, "  BROKEN:", b)
	}
}

// windowCost is the game's CPU per accepted bet (µs) and its cores, from each
// round's first bet to its last accepted one, with the CPU read off the
// samples at those moments; 0, 0 without a measured window.
func windowCost(rounds []roundStat, samples []procSample) (perBetUS, cores float64) {
	var cpu, seconds float64
	var bets int
	for _, r := range rounds {
		if r.FirstBetAt < 0 || r.LastBetAt <= r.FirstBetAt || r.Accepted == 0 {
			continue
		}
		a, okA := cpuAt(samples, r.FirstBetAt)
		b, okB := cpuAt(samples, r.LastBetAt)
		if okA && okB {
			cpu += b - a
			seconds += r.LastBetAt - r.FirstBetAt
			bets += r.Accepted
		}
	}
	if bets == 0 {
		return 0, 0
	}
	return cpu * 1e6 / float64(bets), cpu / seconds
}

// cpuAt is the process's CPU seconds at t, read between the two samples
// around it (linearly); false when t is outside the samples.
func cpuAt(samples []procSample, t float64) (float64, bool) {
	for i := 1; i < len(samples); i++ {
		a, b := samples[i-1], samples[i]
		if a.At <= t && t <= b.At && b.At > a.At {
			return a.CPUSeconds + (b.CPUSeconds-a.CPUSeconds)*(t-a.At)/(b.At-a.At), true
		}
	}
	return 0, false
}

// refusals is outcomes without ok: every answer but success, by status and
// error code ("503 TABLE_UNAVAILABLE"), and "error" for a call that got no
// answer.
func refusals(outcomes map[string]int, ok string) map[string]int {
	out := map[string]int{}
	for k, n := range outcomes {
		if k != ok {
			out[k] = n
		}
	}
	return out
}
