package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
)

// capacityCommand evaluates the capacity model of docs/capacity.md:
//
//	loadgen capacity fit RUN.json...     the costs, by least squares over every replica of the runs
//	loadgen capacity check RUN.json...   each replica's CPU of each run as the costs predict it, against
//	                                     the measured figure; exit 1 when one is off by more than --tolerance
//	loadgen capacity predict --replicas N --cores C --players P --bets B
//	                                     what one round of P players takes, and what saturates first
//
// The model: a replica's CPU while the players play is
//
//	idle_fixed + idle_per_stream × streams + cost_frame × frames/s
//	  + cost_bet × bets received/s + cost_cashout × cashouts received/s
//	  + (at the leader) cost_lead × bets of the round/s + cost_lead_cashout × cashouts of the round/s
//	  + cost_broadcast × nats_fanout_per_bet × bets of the round/s
//
// where frames/s is streams × (frames_per_player + frames_per_bet × bets per
// player/s), the balancer spreads the players, hence the bets and the
// cashouts (a player's own, by hand), evenly, and the leader prices every
// cashout and settles every bet. The last term is what every replica spends
// on the messages that each bet publishes to every replica (its events, its
// balance changes), for players whose streams are mostly elsewhere: it grows
// with the round's bets, not with the replica's share, so it is not fitted
// (at a fixed number of replicas it cannot be told apart from cost_bet) but
// set from BenchmarkReceiveBroadcast; the NATS messages a second are
// bets/s × (nats_fanout_per_bet × (1 + N) + 2 × nats_point_per_bet).
// The idle terms come from each run's quiet wait (its players connected,
// nobody betting); the costs (CPU seconds) from the runs' play. `fit` fits
// both over cluster runs of this machine kind; the defaults are the ones
// docs/capacity.md gives, with the runs they came from.
const capacityCommand = "capacity"

// capacityCosts are the model's costs.
type capacityCosts struct {
	IdleFixed       float64 `json:"idle_cores"`               // CPU cores a replica takes with nobody connected (probes, leases, scrapes)
	IdlePerStream   float64 `json:"idle_cores_per_stream"`    // CPU cores a connected, quiet stream adds
	Frame           float64 `json:"cost_frame_s"`             // CPU seconds per stream message written
	Bet             float64 `json:"cost_bet_received_s"`      // CPU seconds per bet at the replica that received it
	Lead            float64 `json:"cost_bet_at_leader_s"`     // CPU seconds per bet of the round at the leader
	Cashout         float64 `json:"cost_cashout_received_s"`  // CPU seconds per cashout at the replica that received it
	LeadCashout     float64 `json:"cost_cashout_at_leader_s"` // CPU seconds per cashout of the round at the leader
	FramesPerPlayer float64 `json:"frames_per_player_s"`      // stream messages a player gets a second, betting or not
	FramesPerBet    float64 `json:"frames_per_bet"`           // stream messages a bet adds (its own events, the board)
	// FramesPerCashout is the stream messages a player gets for a cashout
	// of the round, by hand or automatic (the board's rows change with
	// each, and a flight with many cashouts sends a board frame more
	// often): per cashout of the round per player.
	FramesPerCashout float64 `json:"frames_per_cashout"`
	// NATSFanoutPerBet are the NATS messages an accepted bet publishes
	// that every replica receives (in once, out once a replica), and
	// NATSPointPerBet its requests and replies (in once, out once): from
	// the server's /varz over runs (--nats-monitor), (out − in) / (R − 1)
	// and in minus that, fitted as lines in the bets a second (fitNATS).
	NATSFanoutPerBet float64 `json:"nats_fanout_messages_per_bet"`
	NATSPointPerBet  float64 `json:"nats_point_messages_per_bet"`
	// NATSFanoutPerSecond and NATSPointPerSecond are the time-driven
	// messages a second (phases, the board, the health probes), whatever
	// the bets, at the runs' three replicas.
	NATSFanoutPerSecond float64 `json:"nats_fanout_messages_s"`
	NATSPointPerSecond  float64 `json:"nats_point_messages_s"`
	// Broadcast is the CPU seconds a replica spends on one message
	// published to every replica, for a player whose stream is elsewhere
	// (BenchmarkReceiveBroadcast of internal/replica: a balance change
	// decoded and handed over, a bet's event skipped on its addressee; a
	// lower bound, without NATS's own parsing).
	Broadcast float64 `json:"cost_broadcast_received_s"`
	// The PostgreSQL lines, fitted like the NATS ones over the runs'
	// pg_stat_database and pg_stat_wal (loadgen --game-db; fitPostgres): per
	// accepted bet, and a second whatever the bets (the leases, the queue's
	// claims, the health probes' reads, at the runs' three replicas).
	RowsPerBet        float64 `json:"postgres_rows_per_bet"`    // rows inserted, updated and deleted
	CommitsPerBet     float64 `json:"postgres_commits_per_bet"` // transactions committed, reads outside a transaction included
	WALPerBet         float64 `json:"postgres_wal_bytes_per_bet"`
	WALSyncsPerBet    float64 `json:"postgres_wal_syncs_per_bet"`
	RowsPerSecond     float64 `json:"postgres_rows_s"`
	CommitsPerSecond  float64 `json:"postgres_commits_s"`
	WALPerSecond      float64 `json:"postgres_wal_bytes_s"`
	WALSyncsPerSecond float64 `json:"postgres_wal_syncs_s"`
}

// defaultCosts are the costs fitted in docs/capacity.md ("The costs, and
// where they come from"): 29 November, 13:50 to 14:06, six runs of main at
// c629376 (a replica skips the events of sessions it holds no stream of;
// the cashouts by hand and automatic in one term; the frames a line in the
// cashouts too), fitted with no cost below zero. Two terms came out
// negative fitted freely and are held at 0: frames_per_bet (the runs'
// cashouts follow their bets, and the cashouts explain the frames) and the
// leader's cost per cashout. The fan-out message's cost is not fitted: it
// is BenchmarkReceiveBroadcast's, pinned (a bet's event skipped on its
// addressee 57 ns, a balance change read 2.40 µs, weighted by about two of
// the first and one of the second a bet: 0.84 µs). The PostgreSQL lines
// are fitted over five more runs of the same build, 14:32 to 14:42
// (loadgen --game-db: pg_stat_database and pg_stat_wal).
var defaultCosts = capacityCosts{
	IdleFixed:           0.0145,
	IdlePerStream:       0.0000293,
	Frame:               0.0000892,
	Bet:                 0.00181,
	Lead:                0.0000174,
	Cashout:             0.000344,
	LeadCashout:         0,
	FramesPerPlayer:     1.65,
	FramesPerBet:        0,
	FramesPerCashout:    21.6,
	NATSFanoutPerBet:    3.79,
	NATSPointPerBet:     3.01,
	NATSFanoutPerSecond: 3.82,
	NATSPointPerSecond:  7.34,
	Broadcast:           0.00000084,
	RowsPerBet:          5.44,
	CommitsPerBet:       2.16,
	WALPerBet:           3470,
	WALSyncsPerBet:      1.22,
	RowsPerSecond:       37.7,
	CommitsPerSecond:    85.2,
	WALPerSecond:        21200,
	WALSyncsPerSecond:   43.5,
}

// replicaObs is one replica of one run, as the model reads it.
type replicaObs struct {
	run, name string
	leads     bool
	streams   float64 // connected
	idle      float64 // cores during the quiet wait
	frames    float64 // stream messages a second while playing
	cpu       float64 // cores while playing
	betsRecv  float64 // bets a second it received (the run's accepted bets / replicas)
	betsRound float64 // bets a second of the whole round
	cashRecv  float64 // cashouts a second it paid (by hand: received; automatic: of the bets it debited)
	cashRound float64 // cashouts a second of the whole round, by hand and automatic
	perPlayer float64 // bets a second per player
	// cashPerPlayer is cashouts a second per player, by hand and
	// automatic: each one changes the board that every stream is sent.
	cashPerPlayer float64
	replicas      float64 // the run's replicas
	// The run's NATS traffic (--nats-monitor; natsSeconds 0: not
	// measured): messages in and out over natsSeconds, in which the run
	// accepted its accepted bets.
	natsSeconds, natsIn, natsOut float64
	accepted                     float64
	// The run's PostgreSQL activity (--game-db; nil: not measured).
	pg *pgActivity
}

// readRun reads a cluster run's result (loadgen --replicas ... --out).
func readRun(path string) ([]replicaObs, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r result
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	played := r.PlayedUntil - r.Setup.LoadedAt
	if len(r.Replicas) == 0 || played <= 0 {
		return nil, fmt.Errorf("%s: not a cluster run (no replicas, or nothing played)", path)
	}
	var streams float64
	for _, rep := range r.Replicas {
		streams += rep.StreamsConnected
	}
	rate := float64(r.Bets.Accepted) / played
	// Cashouts by hand and automatic alike: each is a commit and a /win
	// at the replica that received or debited the bet.
	cash := float64(r.Cashouts.Paid+r.Cashouts.AutoCashed) / played
	out := make([]replicaObs, 0, len(r.Replicas))
	for _, rep := range r.Replicas {
		o := replicaObs{run: path, name: rep.Name, leads: rep.LedTables, streams: rep.StreamsConnected, idle: rep.CPUCoresIdle,
			frames: rep.MessagesPerSec, cpu: rep.CPUCoresPlaying, betsRecv: rate / float64(len(r.Replicas)), betsRound: rate,
			cashRecv: cash / float64(len(r.Replicas)), cashRound: cash, replicas: float64(len(r.Replicas)), accepted: float64(r.Bets.Accepted)}
		if r.NATS != nil {
			o.natsSeconds, o.natsIn, o.natsOut = r.NATS.Seconds, float64(r.NATS.In), float64(r.NATS.Out)
		}
		if r.Postgres != nil && r.Postgres.Seconds > 0 {
			o.pg = r.Postgres
		}
		if streams > 0 {
			o.perPlayer, o.cashPerPlayer = rate/streams, cash/streams
		}
		out = append(out, o)
	}
	return out, nil
}

// frames is the model's stream messages a second of o.
func (c capacityCosts) frames(o replicaObs) float64 {
	return o.streams * (c.FramesPerPlayer + c.FramesPerBet*o.perPlayer + c.FramesPerCashout*o.cashPerPlayer)
}

// predictCPU is the model's CPU of o, from its streams and bets (its frames
// predicted too, not read).
func (c capacityCosts) predictCPU(o replicaObs) float64 {
	cpu := c.IdleFixed + c.IdlePerStream*o.streams + c.Frame*c.frames(o) + c.Bet*o.betsRecv + c.Cashout*o.cashRecv +
		c.fanout(o.betsRound)
	if o.leads {
		cpu += c.Lead*o.betsRound + c.LeadCashout*o.cashRound
	}
	return cpu
}

// fitCosts fits, by least squares over every replica of the runs: the idle
// CPU (a line in streams, from the quiet waits), the frames (a line in bets
// per player), then the CPU costs of the play above the idle and the
// fan-out; the NATS messages per bet are the runs' own (fitNATS), and the
// cost of a message received from the fan-out is base's. Every fitted term
// is non-negative (fitOver); held lists, by their JSON names, those held at
// zero because the runs could not tell them apart from the others, for
// `fit` to say so.
func fitCosts(obs []replicaObs, base capacityCosts) (c capacityCosts, held []string, err error) {
	c = base
	hold := func(names []string, zeroed []int) {
		for _, j := range zeroed {
			held = append(held, names[j])
		}
	}
	if n, zeroed, ok := fitNATS(obs); ok {
		c.NATSFanoutPerBet, c.NATSPointPerBet = n.NATSFanoutPerBet, n.NATSPointPerBet
		c.NATSFanoutPerSecond, c.NATSPointPerSecond = n.NATSFanoutPerSecond, n.NATSPointPerSecond
		held = append(held, zeroed...)
	}
	if p, zeroed, ok := fitPostgres(obs); ok {
		c.RowsPerBet, c.RowsPerSecond, c.CommitsPerBet, c.CommitsPerSecond = p.RowsPerBet, p.RowsPerSecond, p.CommitsPerBet, p.CommitsPerSecond
		c.WALPerBet, c.WALPerSecond, c.WALSyncsPerBet, c.WALSyncsPerSecond = p.WALPerBet, p.WALPerSecond, p.WALSyncsPerBet, p.WALSyncsPerSecond
		held = append(held, zeroed...)
	}
	idle, zeroed, err := fitOver(obs, "idle", func(o replicaObs) ([]float64, float64, bool) {
		return []float64{1, o.streams}, o.idle, true
	})
	if err != nil {
		return c, held, err
	}
	hold([]string{"idle_cores", "idle_cores_per_stream"}, zeroed)
	c.IdleFixed, c.IdlePerStream = idle[0], idle[1]
	// Frames a second per player = a + b × bets per player a second + c ×
	// cashouts per player a second.
	ab, zeroed, err := fitOver(obs, "frames", func(o replicaObs) ([]float64, float64, bool) {
		return []float64{1, o.perPlayer, o.cashPerPlayer}, o.frames / o.streams, o.streams > 0
	})
	if err != nil {
		return c, held, err
	}
	hold([]string{"frames_per_player_s", "frames_per_bet", "frames_per_cashout"}, zeroed)
	c.FramesPerPlayer, c.FramesPerBet, c.FramesPerCashout = ab[0], ab[1], ab[2]
	// CPU − idle − fan-out = frame × frames + bet × bets received +
	// cashout × cashouts received + [leads] × (lead × bets + lead cashout
	// × cashouts).
	x, zeroed, err := fitOver(obs, "costs", func(o replicaObs) ([]float64, float64, bool) {
		lead, leadCash := 0.0, 0.0
		if o.leads {
			lead, leadCash = o.betsRound, o.cashRound
		}
		return []float64{o.frames, o.betsRecv, o.cashRecv, lead, leadCash}, o.cpu - c.IdleFixed - c.IdlePerStream*o.streams - c.fanout(o.betsRound), true
	})
	if err != nil {
		return c, held, err
	}
	hold([]string{"cost_frame_s", "cost_bet_received_s", "cost_cashout_received_s", "cost_bet_at_leader_s", "cost_cashout_at_leader_s"}, zeroed)
	c.Frame, c.Bet, c.Cashout, c.Lead, c.LeadCashout = x[0], x[1], x[2], x[3], x[4]
	return c, held, nil
}

// fanout is the CPU (cores) a replica spends receiving the messages that a
// round's bets, at betsRound a second, publish to every replica.
func (c capacityCosts) fanout(betsRound float64) float64 {
	return c.Broadcast * c.NATSFanoutPerBet * betsRound
}

// natsPerSecond is the NATS messages a second, in and out, of bets a second
// on replicas.
func (c capacityCosts) natsPerSecond(bets float64, replicas int) float64 {
	return c.natsFanout(bets, replicas) + 2*(c.NATSPointPerSecond+bets*c.NATSPointPerBet)
}

// natsFanout is the part of natsPerSecond published to every replica.
func (c capacityCosts) natsFanout(bets float64, replicas int) float64 {
	return (c.NATSFanoutPerSecond + bets*c.NATSFanoutPerBet) * float64(1+replicas)
}

// fitNATS fits, by least squares over the runs that measured their NATS
// traffic (--nats-monitor) on more than one replica, the messages a second
// published to every replica ((out − in) / (R − 1)) and point to point (in
// minus those) as a line in the run's accepted bets a second: the slopes are
// per bet, the intercepts the time-driven traffic (phases, the board, the
// replicas' health probes), none negative; zeroed names those held at zero
// (as fitCosts's held). false when fewer than two such runs.
func fitNATS(obs []replicaObs) (c capacityCosts, zeroed []string, ok bool) {
	var rows [][]float64
	var fan, point []float64
	seen := map[string]bool{}
	for _, o := range obs {
		if o.natsSeconds <= 0 || o.replicas < 2 || seen[o.run] {
			continue
		}
		seen[o.run] = true
		f := (o.natsOut - o.natsIn) / (o.replicas - 1) / o.natsSeconds
		rows = append(rows, []float64{1, o.accepted / o.natsSeconds})
		fan, point = append(fan, f), append(point, o.natsIn/o.natsSeconds-f)
	}
	if len(rows) < 2 {
		return c, nil, false
	}
	x, zx, err := nonNegative(rows, fan)
	if err != nil {
		return c, nil, false
	}
	y, zy, err := nonNegative(rows, point)
	if err != nil {
		return c, nil, false
	}
	for _, j := range zx {
		zeroed = append(zeroed, []string{"nats_fanout_messages_s", "nats_fanout_messages_per_bet"}[j])
	}
	for _, j := range zy {
		zeroed = append(zeroed, []string{"nats_point_messages_s", "nats_point_messages_per_bet"}[j])
	}
	c.NATSFanoutPerSecond, c.NATSFanoutPerBet, c.NATSPointPerSecond, c.NATSPointPerBet = x[0], x[1], y[0], y[1]
	return c, zeroed, true
}

// fitPostgres fits, like fitNATS, over the runs that measured PostgreSQL's
// activity (--game-db), its rows written, commits, WAL bytes and WAL syncs
// a second, each as a line in the run's accepted bets a second: the slopes
// are per bet, the intercepts the time-driven work. None is negative;
// zeroed names those held at zero. false when fewer than two such runs.
func fitPostgres(obs []replicaObs) (c capacityCosts, zeroed []string, ok bool) {
	var rows [][]float64
	var ys [4][]float64
	seen := map[string]bool{}
	for _, o := range obs {
		if o.pg == nil || seen[o.run] {
			continue
		}
		seen[o.run] = true
		s := o.pg.Seconds
		rows = append(rows, []float64{1, o.accepted / s})
		for i, v := range []int64{o.pg.rows(), o.pg.Commits, o.pg.WALBytes, o.pg.WALSyncs} {
			ys[i] = append(ys[i], float64(v)/s)
		}
	}
	if len(rows) < 2 {
		return c, nil, false
	}
	names := [4][2]string{{"postgres_rows_s", "postgres_rows_per_bet"}, {"postgres_commits_s", "postgres_commits_per_bet"},
		{"postgres_wal_bytes_s", "postgres_wal_bytes_per_bet"}, {"postgres_wal_syncs_s", "postgres_wal_syncs_per_bet"}}
	var lines [4][]float64
	for i := range ys {
		x, z, err := nonNegative(rows, ys[i])
		if err != nil {
			return c, nil, false
		}
		lines[i] = x
		for _, j := range z {
			zeroed = append(zeroed, names[i][j])
		}
	}
	c.RowsPerSecond, c.RowsPerBet = lines[0][0], lines[0][1]
	c.CommitsPerSecond, c.CommitsPerBet = lines[1][0], lines[1][1]
	c.WALPerSecond, c.WALPerBet = lines[2][0], lines[2][1]
	c.WALSyncsPerSecond, c.WALSyncsPerBet = lines[3][0], lines[3][1]
	return c, zeroed, true
}

// fitOver fits what by least squares over the observations that row takes
// (its third result): row gives each one's terms and measured value. No
// term is negative: a cost, a rate or a count below zero describes no
// machine, and an unconstrained fit gives one when the runs do not tell two
// terms apart (they moved together): nonNegative pins such a term at zero
// and fits the others, and fitOver says which (zeroed) so that `fit` can
// warn that the runs must be varied.
func fitOver(obs []replicaObs, what string, row func(replicaObs) ([]float64, float64, bool)) (x []float64, zeroed []int, err error) {
	var rows [][]float64
	var ys []float64
	for _, o := range obs {
		if r, y, ok := row(o); ok {
			rows, ys = append(rows, r), append(ys, y)
		}
	}
	x, zeroed, err = nonNegative(rows, ys)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", what, err)
	}
	return x, zeroed, nil
}

// nonNegative solves rows·x ≈ ys by least squares with every x ≥ 0: of the
// solutions of the unconstrained problem over each subset of the unknowns
// (the others at zero) whose terms are all non-negative, the one with the
// smallest residual (ties: the most unknowns kept). With the model's five
// unknowns at most, the 32 subsets are cheap, and the answer is exact.
// zeroed lists the unknowns held at zero that the unconstrained fit would
// not have held there (nil when it was non-negative already).
func nonNegative(rows [][]float64, ys []float64) (x []float64, zeroed []int, err error) {
	if len(rows) == 0 {
		return nil, nil, errors.New("no observations")
	}
	n := len(rows[0])
	if n > 16 {
		return nil, nil, fmt.Errorf("%d unknowns: too many for an exhaustive non-negative fit", n)
	}
	free, err := leastSquares(rows, ys)
	if err != nil {
		return nil, nil, err
	}
	if !slices.ContainsFunc(free, func(v float64) bool { return v < 0 }) {
		return free, nil, nil
	}
	best, bestRes, bestKept := []float64(nil), math.Inf(1), -1
	for mask := 1; mask < 1<<n; mask++ {
		var cols []int
		for j := range n {
			if mask&(1<<j) != 0 {
				cols = append(cols, j)
			}
		}
		sub := make([][]float64, len(rows))
		for i, r := range rows {
			sub[i] = make([]float64, len(cols))
			for k, j := range cols {
				sub[i][k] = r[j]
			}
		}
		part, err := leastSquares(sub, ys)
		if err != nil || slices.ContainsFunc(part, func(v float64) bool { return v < 0 }) {
			continue
		}
		cand := make([]float64, n)
		for k, j := range cols {
			cand[j] = part[k]
		}
		res := 0.0
		for i, r := range rows {
			d := ys[i]
			for j, v := range cand {
				d -= r[j] * v
			}
			res += d * d
		}
		if res < bestRes*(1-1e-12) || (res <= bestRes*(1+1e-12) && len(cols) > bestKept) {
			best, bestRes, bestKept = cand, res, len(cols)
		}
	}
	if best == nil {
		return make([]float64, n), seq(n), nil // every subset negative or singular: nothing is known
	}
	for j, v := range best {
		if v == 0 && free[j] != 0 {
			zeroed = append(zeroed, j)
		}
	}
	return best, zeroed, nil
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// leastSquares solves the normal equations of rows·x ≈ ys.
func leastSquares(rows [][]float64, ys []float64) ([]float64, error) {
	if len(rows) == 0 {
		return nil, errors.New("no observations")
	}
	n := len(rows[0])
	if len(rows) < n {
		return nil, fmt.Errorf("%d observations for %d unknowns", len(rows), n)
	}
	a := make([][]float64, n)
	for i := range a {
		a[i] = make([]float64, n+1)
	}
	for k, r := range rows {
		for i := range n {
			for j := range n {
				a[i][j] += r[i] * r[j]
			}
			a[i][n] += r[i] * ys[k]
		}
	}
	for col := range n { // Gaussian elimination with partial pivoting
		p := col
		for r := col + 1; r < n; r++ {
			if math.Abs(a[r][col]) > math.Abs(a[p][col]) {
				p = r
			}
		}
		if math.Abs(a[p][col]) < 1e-12 {
			return nil, fmt.Errorf("the observations do not tell unknown %d apart from the others (vary the runs)", col)
		}
		a[col], a[p] = a[p], a[col]
		for r := range n {
			if r == col {
				continue
			}
			f := a[r][col] / a[col][col]
			for j := col; j <= n; j++ {
				a[r][j] -= f * a[col][j]
			}
		}
	}
	x := make([]float64, n)
	for i := range n {
		x[i] = a[i][n] / a[i][i]
	}
	return x, nil
}

// capacityMain runs `loadgen capacity ...`.
func capacityMain(args []string, stdout, stderr io.Writer) (int, error) {
	if len(args) == 0 {
		return 2, errors.New("loadgen capacity fit|check|predict: see docs/capacity.md")
	}
	verb, args := args[0], args[1:]
	fs := flag.NewFlagSet("loadgen capacity "+verb, flag.ContinueOnError)
	fs.SetOutput(stderr)
	c := defaultCosts
	costs := fs.String("costs", "", "a JSON file of costs (as `fit` prints them); default: docs/capacity.md's")
	tolerance := fs.Float64("tolerance", 0.25, "check: the largest relative error allowed")
	replicas := fs.Int("replicas", 3, "predict: replicas")
	cores := fs.Float64("cores", 2, "predict: cores a replica")
	players := fs.Int("players", 100000, "predict: players on one round")
	bets := fs.Int("bets", 3, "predict: bets a player places in a round")
	cashouts := fs.Float64("cashouts", 0.5, "predict: cashouts paid per bet, by hand and automatic (the load tool's runs: 0.23 to 0.77)")
	roundS := fs.Float64("round-s", 12, "predict: seconds a round takes, betting, flight and pause")
	windowS := fs.Float64("window-s", 3, "predict: seconds of the betting window over which the bets arrive (loadgen --spread)")
	pgCommits := fs.Float64("postgres-commits", 0, "predict: commits a second your PostgreSQL sustains (measure it, e.g. with pgbench); 0: not judged")
	natsMsgs := fs.Float64("nats-messages", 0, "predict: messages a second, in and out, your NATS sustains (measure it: loadgen nats-bench); 0: not judged")
	if err := fs.Parse(args); err != nil {
		return 2, err
	}
	if *costs != "" {
		data, err := os.ReadFile(*costs)
		if err != nil {
			return 2, err
		}
		if err := json.Unmarshal(data, &c); err != nil {
			return 2, fmt.Errorf("%s: %w", *costs, err)
		}
	}
	switch verb {
	case "fit":
		obs, err := readRuns(fs.Args())
		if err != nil {
			return 2, err
		}
		fitted, held, err := fitCosts(obs, c)
		if err != nil {
			return 2, err
		}
		for _, name := range held {
			fmt.Fprintf(stderr, "loadgen capacity fit: %s held at 0: fitted freely it came out negative, so these runs do not tell it apart from the other terms (vary the players, the bets and --auto more widely)\n", name)
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return 0, enc.Encode(fitted)
	case "check":
		obs, err := readRuns(fs.Args())
		if err != nil {
			return 2, err
		}
		worst := 0.0
		fmt.Fprintf(stdout, "%-40s %-8s %-6s %10s %10s %8s %16s\n", "run", "replica", "leads", "measured", "predicted", "error", "frames/s (pred.)")
		for _, o := range obs {
			p := c.predictCPU(o)
			e := (p - o.cpu) / o.cpu
			worst = math.Max(worst, math.Abs(e))
			fmt.Fprintf(stdout, "%-40s %-8s %-6v %10.3f %10.3f %+7.1f%% %7.0f (%6.0f)\n", o.run, o.name, o.leads, o.cpu, p, 100*e, o.frames, c.frames(o))
		}
		fmt.Fprintf(stdout, "largest error %.1f %% (tolerance %.0f %%)\n", 100*worst, 100**tolerance)
		if worst > *tolerance {
			return 1, nil
		}
		return 0, nil
	case "predict":
		if *replicas < 1 || *players < 1 || *bets < 1 || *roundS <= 0 || *windowS <= 0 || *cores <= 0 {
			return 2, errors.New("predict: --replicas, --players, --bets, --cores, --round-s and --window-s must be positive")
		}
		predict(stdout, c, *replicas, *cores, *players, *bets, *cashouts, *roundS, *windowS, *pgCommits, *natsMsgs)
		return 0, nil
	}
	return 2, fmt.Errorf("loadgen capacity %s: not fit, check or predict", verb)
}

func readRuns(paths []string) ([]replicaObs, error) {
	if len(paths) == 0 {
		return nil, errors.New("name the runs' result files (loadgen --out)")
	}
	var obs []replicaObs
	for _, p := range paths {
		o, err := readRun(p)
		if err != nil {
			return nil, err
		}
		obs = append(obs, o...)
	}
	return obs, nil
}

// predict prints what one round of players takes on replicas of cores each:
// averaged over the round, and at the peak of its betting window, where the
// bets arrive.
func predict(w io.Writer, c capacityCosts, replicas int, cores float64, players, bets int, cashouts, roundS, windowS, pgCommits, natsMsgs float64) {
	n := float64(replicas)
	streams := float64(players) / n
	for _, at := range []struct {
		name string
		rate float64 // bets a second of the round
		cash float64 // cashouts a second, by hand and automatic (in flight, not in the window)
	}{
		{"averaged over the round", float64(players*bets) / roundS, float64(players*bets) * cashouts / roundS},
		{"in the betting window (bets only: cashouts come in flight)", float64(players*bets) / windowS, 0},
	} {
		cash := at.cash
		frames := c.frames(replicaObs{streams: streams, perPlayer: at.rate / float64(players), cashPerPlayer: cash / float64(players)})
		follower := c.IdleFixed + c.IdlePerStream*streams + c.Frame*frames + c.Bet*at.rate/n + c.Cashout*cash/n +
			c.fanout(at.rate)
		leader := follower + c.Lead*at.rate + c.LeadCashout*cash
		fmt.Fprintf(w, "%s: %.0f bets/s\n", at.name, at.rate)
		fmt.Fprintf(w, "  CPU: the leader %.2f cores, every other replica %.2f (of %.0f each)\n", leader, follower, cores)
		fmt.Fprintf(w, "  stream frames: %.0f/s a replica, %.0f/s in all\n", frames, frames*n)
		fmt.Fprintf(w, "  NATS: about %.0f messages/s, in and out (%.0f of them the fan-out to every replica); receiving the fan-out, %.2f cores of every replica's\n",
			c.natsPerSecond(at.rate, replicas), c.natsFanout(at.rate, replicas), c.fanout(at.rate))
		commits := c.CommitsPerSecond + c.CommitsPerBet*at.rate
		fmt.Fprintf(w, "  PostgreSQL: about %.0f rows/s and %.0f commits/s, %.1f MB/s of WAL in %.0f syncs/s\n",
			c.RowsPerSecond+c.RowsPerBet*at.rate, commits, (c.WALPerSecond+c.WALPerBet*at.rate)/1e6, c.WALSyncsPerSecond+c.WALSyncsPerBet*at.rate)
		var limits []string
		if leader > cores {
			limits = append(limits, fmt.Sprintf("the leader's cores (%.2f needed)", leader))
		}
		if follower > cores {
			limits = append(limits, fmt.Sprintf("every replica's cores (%.2f needed: add replicas)", follower))
		}
		if pgCommits > 0 && commits > pgCommits {
			limits = append(limits, fmt.Sprintf("PostgreSQL's commits (%.0f/s needed, %.0f/s given)", commits, pgCommits))
		}
		if nats := c.natsPerSecond(at.rate, replicas); natsMsgs > 0 && nats > natsMsgs {
			limits = append(limits, fmt.Sprintf("NATS's messages (%.0f/s needed, %.0f/s given)", nats, natsMsgs))
		}
		if len(limits) == 0 {
			fmt.Fprintln(w, "  nothing saturates")
		} else {
			fmt.Fprintf(w, "  saturated: %s\n", strings.Join(limits, "; "))
		}
	}
}
