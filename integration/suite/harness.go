//go:build integration

// Package suite runs the real programs against each other in containers and
// proves, scenario by scenario, that the contract holds and no cent is lost.
//
// One Env per test: a Docker network of its own, PostgreSQL (the locally built
// image, $CRASHGAME_POSTGRES_IMAGE), operator-sim (the reference operator; it
// validates every wallet request against api/wallet.v1.yaml), the TLS front
// (integration/suite/tlsfront: https://wallet:8443 in front of operator-sim,
// since the game refuses http:// outside loopback, AUTH-21; it also validates
// every wallet request and answer and logs each exchange) and the game
// (`crashgame serve --config /etc/crashgame.yaml`, a config written by the
// test, secrets through ${NAME}, the test CA through SSL_CERT_FILE).
//
// StartCluster (cluster.go) is the cluster variant: NATS, three replicas of
// the game with the `cluster` section and the load balancer of
// deploy/haproxy.cfg in front of them, players through the balancer or
// straight to one replica (Session.Via), with the faults of a cluster (kill,
// stop, network cut of a replica, NATS restart) and its checks (one leader
// per round by the fencing epochs).
//
// Every published port is bound to 127.0.0.1. Every container and the network
// are removed in t.Cleanup, after a failure too (there is no reaper here), and
// a failed test prints the tail of each container's log first. Every exchange
// the suite makes with the game is validated against its document
// (internal/apitest, strict).
//
// Images: integration/images.sh (`make images`). Without a Docker engine or
// the images a test skips with a message saying so, or fails when CI is set.
package suite

import (
	"bufio"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/containerd/errdefs"
	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/modules/postgres"
	tcnetwork "github.com/testcontainers/testcontainers-go/network"
	"github.com/testcontainers/testcontainers-go/wait"

	"github.com/crashstudio/crashgame/internal/apitest"
)

// Images and the environment variables that override them.
const (
	defaultPostgresImage = "crashgame-postgres:15"
	defaultGameImage     = "crashgame:dev"
	defaultSimImage      = "operator-sim:dev"
	defaultFrontImage    = "crashgame-tlsfront:dev"

	// Label on every container and network of the suites, for leftovers:
	// docker ps -aq --filter label=crashgame.suite=true | xargs -r docker rm -f
	label = "crashgame.suite"

	operatorID = "acme"
	gameID     = "crash"
	// suiteMaxWinBRL is the operator's max_win in BRL, the suite's
	// currency (the USD entry has none).
	suiteMaxWinBRL = 10000000
	// baseURL is the game's public address inside the network; the suite
	// reaches the same server on a published loopback port.
	baseURL = "http://crashgame:8080"
	// walletURL is the TLS front's address on the network (AUTH-21: https).
	walletURL = "https://wallet:8443"
	dbUser    = "crashgame"
	dbPass    = "crashgame-test-password"
	dbName    = "crashgame"
)

func imageFromEnv(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// Options shape one Env. The zero value is a fast table: 1.5 s of betting, a
// 0.5 s pause, crash points capped at 1.20x (at most 3 s of flight).
type Options struct {
	BettingMS     int
	PauseMS       int
	MaxMultiplier int  // hundredths; default 120
	ZeroWin       bool // settle lost bets with zero_win (default off, as the contract)
	// SeedingWindowMS is how long a new chain takes commitments to its
	// salt before its first round (default 1500); the reveal window after
	// it (fairness.reveal_window_ms) lasts as long.
	SeedingWindowMS int
	// Seeding returns from Start while the first chain is still in its
	// seeding window; by default Start waits for the first round.
	Seeding bool
}

func (o *Options) defaults() {
	if o.BettingMS == 0 {
		o.BettingMS = 1500
	}
	if o.PauseMS == 0 {
		o.PauseMS = 500
	}
	if o.MaxMultiplier == 0 {
		o.MaxMultiplier = 120
	}
	if o.SeedingWindowMS == 0 {
		o.SeedingWindowMS = 1500
	}
}

// Env is one running installation: PostgreSQL, operator-sim behind its TLS
// front, and the game, on one network.
type Env struct {
	t      *testing.T
	opts   Options
	docker *testcontainers.DockerClient
	net    *testcontainers.DockerNetwork
	nets   []*testcontainers.DockerNetwork // more networks (a cluster's bus), removed with net
	pg     *postgres.PostgresContainer
	sim    *testcontainers.DockerContainer
	front  *testcontainers.DockerContainer
	game   *testcontainers.DockerContainer
	// extra are a cluster's own containers (cluster.go): NATS, the replicas
	// and the load balancer, logged and removed like the others.
	extra []namedContainer

	Secret string // HMAC secret shared by the game and operator-sim
	APIKey string // the Bearer key operator-sim issued to the game
	// SeedKey seals the game's chain seeds (every replica's the same).
	SeedKey string
	ca      *testCA

	mu       sync.Mutex
	gameURL  string // http://127.0.0.1:PORT, the game's published port
	simURL   string // http://127.0.0.1:PORT, operator-sim's admin API
	db       *sql.DB
	dsn      string           // of db: the game's database through the published port
	initial  map[string]int64 // each player's balance when the suite created or funded it
	http     *http.Client
	gameDoc  *apitest.Validator
	tableDoc *apitest.Validator
	stream   *streamSchemas
	// proxies are the network's subnets: every peer the game sees (the load
	// balancer, Docker's gateway for the suite's own requests) is a proxy
	// for the players, who are told apart by X-Forwarded-For (playerAddr).
	proxies []string
	// addrs numbers the players' addresses.
	addrs atomic.Uint32
	// sessionsLimited counts the session creations answered 429 (the table's
	// per-address limit), which OpenSession waits out and retries.
	sessionsLimited atomic.Int64
}

// the containers' shared start-up budget
const startTimeout = 90 * time.Second

// Start brings up one installation for t and registers its removal.
func Start(t *testing.T, opts Options) *Env {
	t.Helper()
	began := time.Now()
	e := startBase(t, opts)
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	if err := e.startGame(ctx); err != nil {
		t.Fatalf("suite: %v", err)
	}
	if !opts.Seeding {
		e.awaitFirstRound(t)
	}
	t.Logf("suite: installation up in %s (game %s, operator-sim admin %s)", time.Since(began).Round(time.Millisecond), e.GameURL(), e.simURL)
	return e
}

// awaitFirstRound waits until the game's first chain has left its seeding
// window: its salt is fixed and its first round opens at once.
func (e *Env) awaitFirstRound(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(2*time.Duration(e.opts.SeedingWindowMS)*time.Millisecond + 30*time.Second)
	for {
		var list struct {
			Items []struct {
				Status string `json:"status"`
			} `json:"items"`
		}
		e.publicGet(t, "/fairness/chains?game_id="+gameID, &list)
		if len(list.Items) > 0 && list.Items[0].Status != "seeding" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("suite: the first chain is still seeding after %d ms", e.opts.SeedingWindowMS)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// startBase brings up everything but the game: the network, PostgreSQL,
// operator-sim and its TLS front (Start and StartCluster add the game).
func startBase(t *testing.T, opts Options) *Env {
	t.Helper()
	opts.defaults()
	requireDocker(t)
	e := &Env{
		t: t, opts: opts,
		Secret:   "s3cret-" + randomHex(16),
		APIKey:   "cg_" + randomHex(4) + "_" + randomHex(21),
		SeedKey:  randomHex(32),
		initial:  map[string]int64{},
		http:     suiteClient(),
		gameDoc:  apitest.New(t, "game.v1.yaml"),
		tableDoc: apitest.New(t, "table.v1.yaml"),
		stream:   loadStreamSchemas(t),
	}
	e.ca = newTestCA(t, "wallet", "localhost")
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()

	var err error
	e.docker, err = testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		t.Fatalf("suite: docker client: %v", err)
	}
	t.Cleanup(e.cleanup) // registered first: runs last, after the tests' own cleanups

	e.net, err = tcnetwork.New(ctx, tcnetwork.WithLabels(map[string]string{label: "true"}))
	if err != nil {
		t.Fatalf("suite: network: %v", err)
	}
	if e.proxies, err = e.subnets(ctx); err != nil {
		t.Fatalf("suite: network: %v", err)
	}

	// PostgreSQL and operator-sim do not depend on each other: start together.
	var wg sync.WaitGroup
	var pgErr, simErr error
	wg.Add(2)
	go func() { defer wg.Done(); pgErr = e.startPostgres(ctx) }()
	go func() { defer wg.Done(); simErr = e.startSim(ctx) }()
	wg.Wait()
	if err := errors.Join(pgErr, simErr); err != nil {
		t.Fatalf("suite: %v", err)
	}
	if err := e.startFront(ctx); err != nil {
		t.Fatalf("suite: %v", err)
	}
	return e
}

// loopbackPorts publishes each port on 127.0.0.1 only (Docker binds every
// interface by default).
func loopbackPorts(ports ...string) testcontainers.CustomizeRequestOption {
	loopback := netip.MustParseAddr("127.0.0.1")
	return testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
		hc.PortBindings = network.PortMap{}
		for _, p := range ports {
			hc.PortBindings[network.MustParsePort(p)] = []network.PortBinding{{HostIP: loopback, HostPort: "0"}}
		}
	})
}

func labels() testcontainers.CustomizeRequestOption {
	return testcontainers.WithLabels(map[string]string{label: "true"})
}

func (e *Env) startPostgres(ctx context.Context) error {
	img := imageFromEnv("CRASHGAME_POSTGRES_IMAGE", defaultPostgresImage)
	pg, err := postgres.Run(ctx, img,
		postgres.WithDatabase(dbName), postgres.WithUsername(dbUser), postgres.WithPassword(dbPass),
		postgres.BasicWaitStrategies(),
		testcontainers.WithCmdArgs("-c", "max_connections=200"),
		tcnetwork.WithNetwork([]string{"postgres"}, e.net),
		labels(), loopbackPorts("5432/tcp"),
	)
	if pg != nil {
		e.mu.Lock()
		e.pg = pg
		e.mu.Unlock()
	}
	if err != nil {
		return fmt.Errorf("PostgreSQL (%s): %w", img, err)
	}
	return e.openDB(ctx)
}

// openDB (re)connects the suite's reader of the game's database through the
// published port, which changes when the container restarts.
func (e *Env) openDB(ctx context.Context) error {
	dsn, err := e.pg.ConnectionString(ctx, "sslmode=disable")
	if err != nil {
		return fmt.Errorf("PostgreSQL connection string: %w", err)
	}
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return err
	}
	db.SetMaxOpenConns(4)
	for {
		if err = db.PingContext(ctx); err == nil {
			break
		}
		select {
		case <-ctx.Done():
			_ = db.Close()
			return fmt.Errorf("PostgreSQL does not answer: %w", errors.Join(ctx.Err(), err))
		case <-time.After(100 * time.Millisecond):
		}
	}
	e.mu.Lock()
	old := e.db
	e.db, e.dsn = db, dsn
	e.mu.Unlock()
	if old != nil {
		_ = old.Close()
	}
	return nil
}

func (e *Env) startSim(ctx context.Context) error {
	img := imageFromEnv("CRASHGAME_OPERATOR_SIM_IMAGE", defaultSimImage)
	c, err := testcontainers.Run(ctx, img,
		testcontainers.WithEnv(map[string]string{
			"OPERATOR_SIM_LISTEN":   "0.0.0.0:8081",
			"OPERATOR_SIM_OPERATOR": operatorID,
			"OPERATOR_SIM_SECRET":   e.Secret,
			"OPERATOR_SIM_API_KEY":  e.APIKey,
			"OPERATOR_SIM_GAME_URL": baseURL,
			"OPERATOR_SIM_GAME_ID":  gameID,
			"OPERATOR_SIM_CURRENCY": "BRL",
		}),
		testcontainers.WithExposedPorts("8081/tcp"),
		tcnetwork.WithNetwork([]string{"operator-sim"}, e.net),
		labels(), loopbackPorts("8081/tcp"),
		testcontainers.WithWaitStrategy(wait.ForHTTP("/healthz").WithPort("8081/tcp").WithStartupTimeout(startTimeout)),
	)
	if c != nil {
		e.mu.Lock()
		e.sim = c
		e.mu.Unlock()
	}
	if err != nil {
		return fmt.Errorf("operator-sim (%s): %w", img, err)
	}
	port, err := c.MappedPort(ctx, "8081/tcp")
	if err != nil {
		return err
	}
	e.simURL = "http://127.0.0.1:" + port.Port()
	return nil
}

func (e *Env) startFront(ctx context.Context) error {
	img := imageFromEnv("CRASHGAME_TLSFRONT_IMAGE", defaultFrontImage)
	c, err := testcontainers.Run(ctx, img,
		testcontainers.WithCmd("--listen", ":8443", "--upstream", "http://operator-sim:8081",
			"--cert", "/certs/tls.crt", "--key", "/certs/tls.key"),
		testcontainers.WithFiles(
			testcontainers.ContainerFile{Reader: strings.NewReader(string(e.ca.leafPEM)), ContainerFilePath: "/certs/tls.crt", FileMode: 0o644},
			// A throwaway key of a throwaway CA, readable by the image's user 65532.
			testcontainers.ContainerFile{Reader: strings.NewReader(string(e.ca.keyPEM)), ContainerFilePath: "/certs/tls.key", FileMode: 0o644},
		),
		testcontainers.WithExposedPorts("8443/tcp"),
		tcnetwork.WithNetwork([]string{"wallet"}, e.net),
		labels(), loopbackPorts("8443/tcp"),
		testcontainers.WithWaitStrategy(wait.ForLog("tlsfront: serving").WithStartupTimeout(startTimeout)),
	)
	if c != nil {
		e.front = c
	}
	if err != nil {
		return fmt.Errorf("TLS front (%s): %w", img, err)
	}
	return nil
}

// subnets are the address ranges of e's network.
func (e *Env) subnets(ctx context.Context) ([]string, error) {
	res, err := e.docker.NetworkInspect(ctx, e.net.ID, client.NetworkInspectOptions{})
	if err != nil {
		return nil, fmt.Errorf("inspect %s: %w", e.net.Name, err)
	}
	var out []string
	for _, c := range res.Network.IPAM.Config {
		if c.Subnet.IsValid() {
			out = append(out, c.Subnet.String())
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s has no subnet", e.net.Name)
	}
	return out, nil
}

// playerAddr is the address of a new player: each its own, from
// 198.18.0.0/15 (RFC 2544's benchmarking range, which no proxy of the
// network holds), sent as X-Forwarded-For. The game counts its per-address
// limits against it (trusted_proxies), as it does for real players behind a
// load balancer, not against the one address all the suite's requests come
// from.
func (e *Env) playerAddr() string {
	n := e.addrs.Add(1)
	return fmt.Sprintf("198.%d.%d.%d", 18+(n>>16)&1, (n>>8)&0xff, n&0xff)
}

// gameConfig is the installation file. Secrets and the database password are
// ${NAME} references, expanded from the container's environment.
func (e *Env) gameConfig() string {
	return fmt.Sprintf(`# written by integration/suite
listen: 0.0.0.0:8080
base_url: %s
default_language: en
trusted_proxies: [%s]
database: ${CRASHGAME_DATABASE_URL}
fairness:
  seed_key: ${CRASHGAME_SEED_KEY}
  seeding_window_ms: %d
  reveal_window_ms: %[3]d
games:
  - game_id: %s
    name: Crash
    studio: Crash Studio
    category: crash
    rtp_bp: 9700
    max_multiplier: %d
    betting_ms: %d
    pause_ms: %d
    demo: true
    freebet: true
operators:
  - operator: %s
    secret: ${ACME_SECRET}
    api_key: ${ACME_API_KEY}
    wallet_url: %s
    games: [%s]
    demo: true
    zero_win: %t
    currencies:
      BRL: { min_bet: 100, max_bet: 100000, max_win: %d }
      USD: { min_bet: 10, max_bet: 50000 }
`, baseURL, strings.Join(e.proxies, ", "), e.opts.SeedingWindowMS, gameID, e.opts.MaxMultiplier, e.opts.BettingMS, e.opts.PauseMS, operatorID, walletURL, gameID, e.opts.ZeroWin, suiteMaxWinBRL)
}

// gameEnv is the game's environment: what the installation file's ${NAME}
// references read, and the test CA as its only trust anchor.
func (e *Env) gameEnv() map[string]string {
	return map[string]string{
		"CRASHGAME_DATABASE_URL": fmt.Sprintf("postgres://%s:%s@postgres:5432/%s?sslmode=disable", dbUser, dbPass, dbName),
		"ACME_SECRET":            e.Secret,
		"ACME_API_KEY":           e.APIKey,
		"CRASHGAME_SEED_KEY":     e.SeedKey,
		// The game's only trust anchor: the test CA that signed the front.
		"SSL_CERT_FILE": "/etc/crashgame/test-ca.pem",
	}
}

// runGame runs one game container under alias on the network, with config as
// its installation file, and waits for its /readyz.
func (e *Env) runGame(ctx context.Context, alias, config string, env map[string]string, more ...testcontainers.ContainerCustomizer) (*testcontainers.DockerContainer, error) {
	img := imageFromEnv("CRASHGAME_IMAGE", defaultGameImage)
	opts := []testcontainers.ContainerCustomizer{
		testcontainers.WithCmd("serve", "--config", "/etc/crashgame.yaml"),
		testcontainers.WithEnv(env),
		testcontainers.WithFiles(
			testcontainers.ContainerFile{Reader: strings.NewReader(config), ContainerFilePath: "/etc/crashgame.yaml", FileMode: 0o644},
			testcontainers.ContainerFile{Reader: strings.NewReader(string(e.ca.certPEM)), ContainerFilePath: "/etc/crashgame/test-ca.pem", FileMode: 0o644},
		),
		testcontainers.WithExposedPorts("8080/tcp"),
		tcnetwork.WithNetwork([]string{alias}, e.net),
		labels(), loopbackPorts("8080/tcp"),
		testcontainers.WithWaitStrategy(wait.ForHTTP("/readyz").WithPort("8080/tcp").WithStartupTimeout(startTimeout)),
	}
	c, err := testcontainers.Run(ctx, img, append(opts, more...)...)
	if err != nil {
		return c, fmt.Errorf("game %s (%s): %w", alias, img, err)
	}
	return c, nil
}

func (e *Env) startGame(ctx context.Context) error {
	c, err := e.runGame(ctx, "crashgame", e.gameConfig(), e.gameEnv())
	if c != nil {
		e.game = c
	}
	if err != nil {
		return err
	}
	return e.readGamePort(ctx)
}

func (e *Env) readGamePort(ctx context.Context) error {
	port, err := e.game.MappedPort(ctx, "8080/tcp")
	if err != nil {
		return fmt.Errorf("game port: %w", err)
	}
	e.mu.Lock()
	e.gameURL = "http://127.0.0.1:" + port.Port()
	e.mu.Unlock()
	return nil
}

// GameURL is the game's published address on loopback.
func (e *Env) GameURL() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.gameURL
}

// DB is a reader of the game's database (published port).
func (e *Env) DB() *sql.DB {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.db
}

// namedContainer is a container with the name its logs are printed under.
type namedContainer struct {
	name string
	c    testcontainers.Container
}

// containers is every container of the Env that was created, for logs and
// removal.
func (e *Env) containers() []namedContainer {
	e.mu.Lock()
	out := append([]namedContainer(nil), e.extra...)
	e.mu.Unlock()
	for _, c := range []struct {
		name string
		c    *testcontainers.DockerContainer
	}{{"game", e.game}, {"tlsfront", e.front}, {"operator-sim", e.sim}} {
		if c.c != nil { // a nil *DockerContainer is not a nil Container
			out = append(out, namedContainer{c.name, c.c})
		}
	}
	if pg := e.pgContainer(); pg != nil {
		out = append(out, namedContainer{"postgres", pg})
	}
	return out
}

// cleanup prints the tail of every log when the test failed, then removes
// every container and the network, whatever happened.
func (e *Env) cleanup() {
	if e.t.Failed() {
		e.keepLogs()
		for _, c := range e.containers() {
			if c.c != nil {
				e.t.Logf("suite: last lines of %s:\n%s", c.name, tail(c.c, 60))
			}
			if strings.HasPrefix(c.name, "game") && c.c != nil {
				e.t.Logf("suite: the game's last warnings and errors:\n%s", problems(c.c, 40))
			}
		}
	}
	if e.db != nil {
		_ = e.db.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, nc := range e.containers() {
		c := nc.c
		if c == nil {
			continue
		}
		// A paused container cannot be stopped: unpause first (ignore "not paused").
		if e.docker != nil {
			_, _ = e.docker.ContainerUnpause(ctx, c.GetContainerID(), client.ContainerUnpauseOptions{})
		}
		if err := testcontainers.TerminateContainer(c, testcontainers.StopTimeout(2*time.Second)); err != nil {
			e.t.Errorf("suite: remove container %s: %v (leftovers: docker ps -aq --filter label=%s=true | xargs -r docker rm -f)", c.GetContainerID()[:12], err, label)
		}
	}
	for _, n := range append([]*testcontainers.DockerNetwork{e.net}, e.nets...) {
		if n == nil {
			continue
		}
		if err := n.Remove(ctx); err != nil {
			e.t.Errorf("suite: remove network %s: %v", n.Name, err)
		}
	}
	if e.docker != nil {
		_ = e.docker.Close()
	}
}

func (e *Env) pgContainer() testcontainers.Container {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.pg == nil {
		return nil
	}
	return e.pg
}

// suiteClient is the suite's HTTP client. It closes a kept-alive connection
// after 5 s idle, before the load balancer does (deploy/haproxy.cfg,
// `timeout http-keep-alive 10s`): a request sent on a connection at the
// moment the balancer closes it is answered with the balancer's HTML 408,
// which a browser sends again on a new connection and Go's client does not.
func suiteClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.IdleConnTimeout = 5 * time.Second
	return &http.Client{Timeout: 30 * time.Second, Transport: tr}
}

// keepLogs writes every container's whole log to
// $CRASHGAME_SUITE_LOGS/<test>/<container>.log when that variable names a
// directory: the tail printed on failure is 60 lines, and a fault under load
// often needs the rest (the balancer's line for one answer, a replica's
// first minute).
func (e *Env) keepLogs() {
	root := os.Getenv("CRASHGAME_SUITE_LOGS")
	if root == "" {
		return
	}
	dir := filepath.Join(root, strings.NewReplacer("/", "_", " ", "_").Replace(e.t.Name()))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		e.t.Logf("suite: keeping the logs: %v", err)
		return
	}
	for _, c := range e.containers() {
		if c.c == nil {
			continue
		}
		if err := saveLog(c.c, filepath.Join(dir, c.name+".log")); err != nil {
			e.t.Logf("suite: keeping the log of %s: %v", c.name, err)
		}
	}
	e.t.Logf("suite: every container's whole log is in %s", dir)
}

func saveLog(c testcontainers.Container, path string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rc, err := c.Logs(ctx)
	if err != nil {
		return err
	}
	defer rc.Close()
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, rc); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// tail returns the last n lines of a container's log.
func tail(c testcontainers.Container, n int) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rc, err := c.Logs(ctx)
	if err != nil {
		return "(no logs: " + err.Error() + ")"
	}
	defer rc.Close()
	var lines []string
	sc := bufio.NewScanner(rc)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, "\n")
}

// problems returns the last n WARN and ERROR lines of a container's JSON log.
func problems(c testcontainers.Container, n int) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	lines, err := logLines(ctx, c)
	if err != nil {
		return "(no logs: " + err.Error() + ")"
	}
	var out []string
	for _, l := range lines {
		if strings.Contains(l, `"level":"WARN"`) || strings.Contains(l, `"level":"ERROR"`) {
			out = append(out, l)
		}
	}
	if len(out) > n+5 { // the first few (the cause) and the last ones
		out = append(append(out[:5:5], "..."), out[len(out)-n:]...)
	}
	return strings.Join(out, "\n")
}

// logLines returns every line of a container's log.
func logLines(ctx context.Context, c testcontainers.Container) ([]string, error) {
	rc, err := c.Logs(ctx)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	var lines []string
	sc := bufio.NewScanner(rc)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	return lines, sc.Err()
}

var (
	dockerOnce sync.Once
	dockerMsg  string // why the suites cannot run here, or ""
)

// requireDocker skips t (fails it when CI is set) when no Docker engine
// answers or an image the suites need is missing.
func requireDocker(t *testing.T) {
	t.Helper()
	dockerOnce.Do(func() {
		// The suites' TestMain sets these; another package's test that starts
		// an Env (integration/browser) gets the same defaults here.
		setEnvDefaults()
		dockerMsg = checkDocker()
	})
	switch {
	case dockerMsg != "" && os.Getenv("CI") != "":
		t.Fatalf("suite: %s (CI is set, so this fails instead of skipping)", dockerMsg)
	case dockerMsg != "":
		t.Skipf("suite: SKIPPING integration scenario: %s", dockerMsg)
	}
}

func checkDocker() (msg string) {
	defer func() {
		if r := recover(); r != nil {
			msg = fmt.Sprintf("no Docker engine answers (testcontainers panicked: %v)", r)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return fmt.Sprintf("no Docker engine answers: %v", err)
	}
	defer func() { _ = cli.Close() }()
	if _, err := cli.Ping(ctx, client.PingOptions{}); err != nil {
		return fmt.Sprintf("no Docker engine answers: %v", err)
	}
	for _, img := range []struct{ env, def string }{
		{"CRASHGAME_POSTGRES_IMAGE", defaultPostgresImage},
		{"CRASHGAME_IMAGE", defaultGameImage},
		{"CRASHGAME_OPERATOR_SIM_IMAGE", defaultSimImage},
		{"CRASHGAME_TLSFRONT_IMAGE", defaultFrontImage},
	} {
		name := imageFromEnv(img.env, img.def)
		_, err := cli.ImageInspect(ctx, name)
		switch {
		case err == nil:
		case errdefs.IsNotFound(err) && name == img.def:
			return fmt.Sprintf("image %s is not built: run `make images` (integration/images.sh)", name)
		case errdefs.IsNotFound(err):
			// a registry image named by the variable: testcontainers pulls it
		default:
			return fmt.Sprintf("cannot inspect image %s: %v", name, err)
		}
	}
	return ""
}

// setEnvDefaults sets what testcontainers needs on this machine kind unless
// the environment says otherwise: no reaper (its image cannot be pulled; the
// suites remove what they start) and the engine on loopback (/.dockerenv
// misleads it into dialling a gateway that does not answer).
func setEnvDefaults() {
	for k, v := range map[string]string{
		"TESTCONTAINERS_RYUK_DISABLED": "true",
		"TESTCONTAINERS_HOST_OVERRIDE": "127.0.0.1",
	} {
		if _, ok := os.LookupEnv(k); !ok {
			_ = os.Setenv(k, v)
		}
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// decode unmarshals body into v, failing t with the body on error.
func decode(t testing.TB, body []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("suite: decode %s: %v", body, err)
	}
}
