// Command loadgen drives the real player API and live stream of a running
// game with N simulated players on one table, and reports what the product
// brief's targets are judged on (docs/performance.md).
//
// Each player gets a session the way a browser does: the operator (the
// reference operator, operator-sim) creates the player and issues a token
// through its signed admin API, the operator's signed POST /v1/launch to the
// game answers a launch URL, and POST /api/v1/sessions exchanges its ticket
// for a session. The player holds the WebSocket stream and, every round, bets
// (a mix of auto-cashouts, manual cashouts timed on the stream's take-off, and
// its free rounds when granted).
//
//	loadgen --self --players 10000 --rounds 3            # builds and starts operator-sim and crashgame serve
//	loadgen --self --players 2000 --bets 3 --pin --floor  # the game alone on CPU 0, and the floor of a bet
//	loadgen --self --database postgres://u:p@127.0.0.1:5432/db?sslmode=disable
//	loadgen --url http://127.0.0.1:8080 --operator-url http://127.0.0.1:8081 --metrics-url http://127.0.0.1:8082 --operator dev --secret S
//	loadgen --url http://localhost:8080 --operator-url http://localhost:8081 --operator dev --secret S \
//	        --forwarded --replicas game1=http://IP1:9090,game2=http://IP2:9090,game3=http://IP3:9090 \
//	        --game-db postgres://crash:PW@IP:5432/crash?sslmode=disable
//
//	loadgen nats-bench --nats nats://IP:4222 --subscribers 3   # what a NATS server carries (docs/capacity.md)
//
// The last load form loads the cluster of deploy/compose.yaml through its load
// balancer; `deploy/cluster.sh load [flags]` finds the addresses and runs it
// (docs/deploy.md).
// It writes a JSON result and a PNG chart, and exits 1 when the reconciliation
// after the run finds a broken money invariant (2 on a usage or set-up error).
//
// Players are spread over source addresses 127.1.x.y (five a address), so
// the table's per-address limits on session creation and stream opening see
// distinct clients; this needs the game on loopback (Linux routes all of
// 127.0.0.0/8 locally). --addresses N puts them behind N addresses instead
// (player i behind the (i mod N)th), as a carrier's NAT does: 2,000 players
// with --addresses 20 are 100 an address, which the table's default
// budgets (docs/config.md, address_limits) take at once.
//
// --forwarded is for a game behind a load balancer (off by default, and for
// --self): a balancer's port published by Docker shows the game one address
// only, the balancer's. Players then connect from the machine's own address
// and each names the address it would have had (127.1.x.y, five a address)
// in its own X-Forwarded-For on every request and stream handshake. The
// balancer appends the address it sees; the game takes the nearest address
// that is not one of its trusted_proxies, so the balancer's peer (Docker's
// gateway on the compose network) must be inside trusted_proxies, as
// deploy/crashgame.yaml has it, or every player counts as one client.
//
// --replicas names each replica's metrics address (name=http://host:port,
// comma-separated): the run reads every replica's CPU and resident memory
// (process_cpu_seconds_total, process_resident_memory_bytes), its streams
// (crashgame_streams_open) and the messages it wrote to them
// (crashgame_stream_messages_total, the events fanned out) each second, and
// reports them replica by replica beside the cluster's sums. --nats-monitor
// names the cluster's NATS server's monitoring address (http://host:port):
// its /varz is read when the rounds start and when they end, for the
// messages it carried in and out (nats.go; docs/capacity.md's fan-out).
// With --game-db on PostgreSQL the run reads its pg_stat_database row at the
// same two moments, for the commits and rows written (postgres.go).
//
// --pin (Linux, --self) runs the game alone on CPU 0 and the load tool with
// operator-sim on the other CPUs (taskset), so that the game's CPU from /proc
// is its own work and the load cannot take its core. --floor (--self) then
// measures, in the same run, the floor of a bet: `loadgen floor-serve`, on the
// game's CPU, takes a player's HTTP request, sends one signed /bet to the
// same operator-sim through the game's wallet client, group-commits one row
// through the game's store and answers; it gets as many bets as the game
// accepted, in the same bursts, and the report gives the game's CPU per
// accepted bet as a ratio of the floor's (floor.go). Then the raw floor,
// `loadgen floor-serve --raw`, does the same work with none of the game's
// code (net/http, crypto/hmac, one prepared INSERT in a shared transaction:
// floor_raw.go), and the report gives the ratio to it too: the raw floor is
// the machine's limit for this work, and the floor over the raw floor is
// what the game's own wallet client and store cost.
//
// Before the reconciliation the run waits for the movement queue to drain.
// The queue lives in the game's database, one for all replicas: with
// --game-db (and without --self) the run counts the pending movements there,
// and waits as well until no bet of its players is still open (a bet a
// leader left pending at a fail-over is settled by the next leader);
// else with --replicas every replica's /metrics must say 0 pending; else the
// game's own /metrics, at --metrics-url (its metrics_listen: the public port
// never serves /metrics). The result says which was read.
//
// `loadgen cost` (make cost) counts the instructions of a bet and of a
// cashout in the engine's fixed workload under valgrind's callgrind, a
// figure that holds from run to run (cost.go).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// options are the command's flags.
type options struct {
	self        bool
	database    string
	data        string
	binDir      string
	url         string
	metricsURL  string // the game's metrics_listen, as http://host:port
	profile     string // where the game's profiles go; empty: none taken
	operatorURL string
	operator    string
	secret      string
	gameID      string
	currency    string
	gamePID     int
	players     int
	betsPer     int
	rounds      int
	autoRatio   float64
	freebets    float64
	betSpread   time.Duration
	setupConc   int
	drainWait   time.Duration
	zeroWin     bool
	operatorDB  string
	out         string
	chart       string
	bettingMS   int
	gameDB      string
	playerPrefx string
	forwarded   bool
	replicasArg string
	replicas    []replicaTarget
	natsMonitor string // --nats-monitor: the NATS server's monitoring address
	pin         bool
	floor       bool
	silence     time.Duration
	addresses   int
	connect     string // --connect: the game's connections go to this host:port
	phases      string
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	code, err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
	}
	os.Exit(code)
}

func parseFlags(args []string, stderr io.Writer) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("loadgen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.BoolVar(&o.self, "self", false, "build and start operator-sim and `crashgame serve` on loopback, then load them")
	fs.StringVar(&o.database, "database", "", "--self: the game's store, sqlite://PATH or postgres://...; default a SQLite file under --data")
	fs.StringVar(&o.data, "data", "", "--self: working folder (configuration, logs, SQLite files); default a new temporary folder")
	fs.StringVar(&o.binDir, "bin", "", "--self: folder holding crashgame and operator-sim binaries; default: go build them into --data")
	fs.StringVar(&o.operatorDB, "operator-db", ":memory:", "--self: operator-sim's ledger (:memory: or a SQLite file)")
	fs.BoolVar(&o.zeroWin, "zero-win", false, "--self: the operator takes zero_win (a movement per lost bet)")
	fs.IntVar(&o.bettingMS, "betting-ms", 5000, "--self: length of the betting phase")
	fs.StringVar(&o.url, "url", "", "the game's address (without --self)")
	fs.StringVar(&o.metricsURL, "metrics-url", "http://127.0.0.1:9090", "the game's metrics_listen as http://host:port, where /metrics is read (without --self and --replicas; the game's public port never serves /metrics)")
	fs.StringVar(&o.operatorURL, "operator-url", "", "operator-sim's address (without --self)")
	fs.StringVar(&o.operator, "operator", "load", "the operator id (the game's and operator-sim's)")
	fs.StringVar(&o.secret, "secret", "load-secret-0123456789abcdef", "the operator's HMAC secret (launch and admin calls)")
	fs.StringVar(&o.gameID, "game", "crash", "the game to launch")
	fs.StringVar(&o.currency, "currency", "BRL", "the players' currency")
	fs.IntVar(&o.gamePID, "game-pid", 0, "the game's process id, for CPU and memory from /proc (--self sets it)")
	fs.StringVar(&o.gameDB, "game-db", "", "the game's database DSN, for the reconciliation against its bets and movements (--self sets it)")
	fs.IntVar(&o.players, "players", 1000, "simulated players, each with a session and a stream")
	fs.IntVar(&o.betsPer, "bets", 1, "bets per player per round (1..5)")
	fs.IntVar(&o.rounds, "rounds", 3, "rounds to play")
	fs.Float64Var(&o.autoRatio, "auto", 0.5, "share of bets with an auto-cashout (the others cash out by hand)")
	fs.Float64Var(&o.freebets, "freebets", 0.1, "share of players granted free rounds (one per round they play)")
	fs.DurationVar(&o.betSpread, "spread", 3*time.Second, "players place their bets at random within this part of the betting phase")
	fs.IntVar(&o.setupConc, "setup-concurrency", 64, "sessions being opened at once during the set-up")
	fs.DurationVar(&o.drainWait, "drain", 2*time.Minute, "how long to wait for the movement queue to drain before the reconciliation")
	fs.StringVar(&o.out, "out", "load-result.json", "the JSON result")
	fs.StringVar(&o.profile, "profile", "", "a folder for the game's profiles, read from its metrics_listen (--self turns its profiling key on): heap-connected.pb.gz with every player connected before the rounds, cpu-playing.pb.gz over the rounds' first 30 s (go tool pprof reads both), trace-flight.out over the first 10 s of the first round's flight (go tool trace; -pprof=syscall, sync or sched for what a cashout waited on)")
	fs.StringVar(&o.chart, "chart", "load-result.png", "the PNG chart")
	fs.StringVar(&o.playerPrefx, "player-prefix", "", "prefix of the players' ids (default: load-<time>-)")
	fs.BoolVar(&o.forwarded, "forwarded", false, "behind a load balancer: each player sends X-Forwarded-For with its own address instead of connecting from it")
	fs.StringVar(&o.replicasArg, "replicas", "", "a cluster's replicas as name=http://host:port of each one's metrics_listen, comma-separated: per-replica CPU, memory and fan-out")
	fs.StringVar(&o.natsMonitor, "nats-monitor", "", "a cluster's NATS server's monitoring address as http://host:port (its -m port): the messages it carried over the rounds, in and out, and per accepted bet (docs/capacity.md)")
	fs.BoolVar(&o.pin, "pin", false, "--self, Linux: the game alone on CPU 0, the load tool and operator-sim on the other CPUs (taskset), so that the game's CPU is its own")
	fs.BoolVar(&o.floor, "floor", false, "--self: after the rounds, the floor of a bet in the same run (`loadgen floor-serve` on the game's CPU: HTTP in, one signed /bet, one group-committed row, answer) and the game's CPU per accepted bet as a ratio of it; then the raw floor, the same work with none of the game's code (`floor-serve --raw`), and the ratio to it")
	fs.DurationVar(&o.silence, "silence", 5*time.Second, "a stream that brings nothing this long is dead, and reopened (the server's heartbeat leaves no 2 s without a message; 0: never)")
	fs.StringVar(&o.phases, "phases", "", "a file of marks, one per line, \"<unix ms> <label>\", written while the tool plays (deploy/cluster.sh roll-under-load writes the roll's steps): the summary splits bets, cashouts, refusals, reconnections and void rounds by phase")
	fs.StringVar(&o.connect, "connect", "", "host:port to open every connection to the game (--url) at, whatever --url names, as curl's --connect-to does: --url stays the public address the game's Origin check and launch URLs name. deploy/cluster.sh load passes the balancer's address on the compose network, so that no connection goes through Docker's userland proxy of the published port")
	fs.IntVar(&o.addresses, "addresses", 0, "spread the players over this many client addresses (player i behind address i mod N), as a carrier's NAT does; 0: five players a address")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	var err error
	if o.replicas, err = parseReplicas(o.replicasArg); err != nil {
		return nil, err
	}
	switch {
	case o.players < 1:
		return nil, errors.New("--players must be at least 1")
	case o.betsPer < 1 || o.betsPer > 5:
		return nil, errors.New("--bets must be 1..5 (the table allows 5 per player per round)")
	case o.addresses < 0 || o.addresses > o.players || o.addresses > 250*256:
		return nil, fmt.Errorf("--addresses must be 0 (five players a address) or 1..%d (at most one a player)", min(o.players, 250*256))
	case o.rounds < 1:
		return nil, errors.New("--rounds must be at least 1")
	case !o.self && (o.url == "" || o.operatorURL == ""):
		return nil, errors.New("give --url and --operator-url, or --self")
	case o.connect != "" && o.self:
		return nil, errors.New("--connect is for a game started elsewhere, not --self")
	case o.self && (o.forwarded || len(o.replicas) > 0):
		return nil, errors.New("--forwarded and --replicas are for a game behind a load balancer, not --self")
	case !o.self && (o.pin || o.floor):
		return nil, errors.New("--pin and --floor start the processes they measure: they need --self")
	}
	if o.pin {
		if err := checkPin(); err != nil {
			return nil, err
		}
	}
	if o.playerPrefx == "" {
		o.playerPrefx = fmt.Sprintf("load-%d-", time.Now().Unix())
	}
	return o, nil
}

// run returns the exit code: 0 when every money invariant held, 1 when one
// broke, 2 when the run could not be made.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	if len(args) > 0 && args[0] == capacityCommand {
		return capacityMain(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == natsBenchCommand {
		return natsBenchMain(ctx, args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == costCommand {
		return costMain(ctx, args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == floorCommand {
		if err := floorServe(ctx, args[1:], stderr); err != nil {
			return 2, err
		}
		return 0, nil
	}
	o, err := parseFlags(args, stderr)
	if err != nil {
		return 2, err
	}
	raiseFileLimit()
	var sys *system
	if o.self {
		sys, err = startSystem(ctx, o, stderr)
		if err != nil {
			return 2, err
		}
		defer sys.stop()
		fmt.Fprintf(stdout, "game %s (pid %d, %s), operator-sim %s; logs in %s\n", o.url, o.gamePID, sys.dialect, o.operatorURL, o.data)
	}
	res, err := load(ctx, o, sys, stdout)
	if err != nil {
		return 2, err
	}
	if sys != nil {
		sys.stop()
	}
	if err := writeResult(o, res); err != nil {
		return 2, err
	}
	printSummary(stdout, res)
	if len(res.Reconciliation.Broken) > 0 {
		return 1, fmt.Errorf("%d money invariants broke (see %s)", len(res.Reconciliation.Broken), o.out)
	}
	return 0, nil
}

func raiseFileLimit() {
	var l syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l) == nil && l.Cur < l.Max {
		l.Cur = l.Max
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l)
	}
}
