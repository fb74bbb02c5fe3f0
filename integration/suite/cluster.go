//go:build integration

package suite

// The cluster variant of the harness: the game as several replicas (the
// installation file's `cluster` section) sharing PostgreSQL and NATS, behind
// the HAProxy load balancer of deploy/haproxy.cfg, as deploy/compose.yaml
// lays them out. Players reach the load balancer at the game's address
// (GameURL, and base_url inside the network: the balancer holds the alias
// "crashgame"), or one replica straight (Session.Via).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	tcnetwork "github.com/testcontainers/testcontainers-go/network"
	"github.com/testcontainers/testcontainers-go/wait"
)

const (
	defaultNATSImage = "crashgame-nats:2.15.2"
	defaultLBImage   = "crashgame-lb:dev"
	// lbConfigFile is the deployment's load balancer configuration; the
	// cluster runs it as it is, with one server line per replica.
	lbConfigFile = "../../deploy/haproxy.cfg"
)

// ClusterOptions shape one Cluster. The zero value is three replicas with
// deploy/crashgame.yaml's lease settings and Options' fast table.
type ClusterOptions struct {
	Options
	Replicas     int // default 3
	LeaseTTLMS   int // default 2000
	LeaseRenewMS int // default 500
}

func (o *ClusterOptions) defaults() {
	if o.Replicas == 0 {
		o.Replicas = 3
	}
	if o.LeaseTTLMS == 0 {
		o.LeaseTTLMS = 2000
	}
	if o.LeaseRenewMS == 0 {
		o.LeaseRenewMS = 500
	}
}

// Replica is one game replica of a Cluster.
type Replica struct {
	Name string // its name in the cluster section and on the network: game1, game2...
	c    *testcontainers.DockerContainer

	mu  sync.Mutex
	url string // http://127.0.0.1:PORT, its published port (changes at each start)
}

// URL is the replica's published address on loopback.
func (r *Replica) URL() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.url
}

func (r *Replica) readPort(ctx context.Context) error {
	port, err := r.c.MappedPort(ctx, "8080/tcp")
	if err != nil {
		return fmt.Errorf("%s port: %w", r.Name, err)
	}
	r.mu.Lock()
	r.url = "http://127.0.0.1:" + port.Port()
	r.mu.Unlock()
	return nil
}

// Cluster is an installation whose game runs as several replicas behind a
// load balancer. Its Env's game address (GameURL) is the load balancer.
type Cluster struct {
	*Env
	copts ClusterOptions
	nats  *testcontainers.DockerContainer
	lb    *testcontainers.DockerContainer
	// bus is NATS's own network, which only NATS and the replicas join:
	// CutFromNATS cuts a replica off it and leaves it the rest.
	bus      *testcontainers.DockerNetwork
	Replicas []*Replica
}

// StartCluster brings up PostgreSQL, operator-sim behind its TLS front, the
// replicas and the load balancer on one network, NATS and the replicas on a
// second (the bus), and registers their removal.
func StartCluster(t *testing.T, opts ClusterOptions) *Cluster {
	t.Helper()
	opts.defaults()
	began := time.Now()
	for _, img := range []struct{ env, def string }{
		{"CRASHGAME_NATS_IMAGE", defaultNATSImage}, {"CRASHGAME_LB_IMAGE", defaultLBImage},
	} {
		requireImage(t, imageFromEnv(img.env, img.def))
	}
	lbConfig, err := clusterLBConfig(opts.Replicas)
	if err != nil {
		t.Fatalf("suite: %v", err)
	}
	e := startBase(t, opts.Options)
	c := &Cluster{Env: e, copts: opts}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	c.bus, err = tcnetwork.New(ctx, tcnetwork.WithLabels(map[string]string{label: "true"}))
	if err != nil {
		t.Fatalf("suite: the bus network: %v", err)
	}
	e.nets = append(e.nets, c.bus)
	if err := c.startNATS(ctx); err != nil {
		t.Fatalf("suite: %v", err)
	}
	// The replicas race for the first lease, as a real cluster's do.
	errs := make([]error, opts.Replicas)
	var wg sync.WaitGroup
	for i := range opts.Replicas {
		r := &Replica{Name: fmt.Sprintf("game%d", i+1)}
		c.Replicas = append(c.Replicas, r)
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = c.startReplica(ctx, r) }()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("suite: %v", err)
	}
	if err := c.startLB(ctx, lbConfig); err != nil {
		t.Fatalf("suite: %v", err)
	}
	if !opts.Seeding {
		e.awaitFirstRound(t)
	}
	t.Logf("suite: cluster of %d replicas up in %s (load balancer %s)", opts.Replicas, time.Since(began).Round(time.Millisecond), e.GameURL())
	return c
}

// requireImage skips t (fails it when CI is set) when a locally built image
// is missing.
func requireImage(t *testing.T, img string) {
	t.Helper()
	requireDocker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		t.Fatalf("suite: docker client: %v", err)
	}
	defer func() { _ = cli.Close() }()
	_, err = cli.ImageInspect(ctx, img)
	if err == nil {
		return
	}
	msg := fmt.Sprintf("image %s: %v: run `make images` (integration/images.sh)", img, err)
	if os.Getenv("CI") != "" {
		t.Fatalf("suite: %s (CI is set, so this fails instead of skipping)", msg)
	}
	t.Skipf("suite: SKIPPING integration scenario: %s", msg)
}

func (c *Cluster) addExtra(name string, ctr *testcontainers.DockerContainer) {
	if ctr == nil {
		return
	}
	c.mu.Lock()
	c.extra = append(c.extra, namedContainer{name, ctr})
	c.mu.Unlock()
}

func (c *Cluster) startNATS(ctx context.Context) error {
	img := imageFromEnv("CRASHGAME_NATS_IMAGE", defaultNATSImage)
	ctr, err := testcontainers.Run(ctx, img,
		tcnetwork.WithNetwork([]string{"nats"}, c.bus),
		labels(), loopbackPorts("4222/tcp", "8222/tcp"), // the image's EXPOSEd ports, published on loopback only
		testcontainers.WithWaitStrategy(wait.ForLog("Server is ready").WithStartupTimeout(startTimeout)),
	)
	c.addExtra("nats", ctr)
	c.nats = ctr
	if err != nil {
		return fmt.Errorf("NATS (%s): %w", img, err)
	}
	return nil
}

// replicaConfig is the installation file of every replica: the single
// game's, with the cluster section (each replica's name from $REPLICA).
func (c *Cluster) replicaConfig() string {
	return c.gameConfig() + fmt.Sprintf(`cluster:
  replica: ${REPLICA}
  nats: nats://nats:4222
  lease_ttl_ms: %d
  lease_renew_ms: %d
`, c.copts.LeaseTTLMS, c.copts.LeaseRenewMS)
}

func (c *Cluster) startReplica(ctx context.Context, r *Replica) error {
	env := c.gameEnv()
	env["REPLICA"] = r.Name
	ctr, err := c.runGame(ctx, r.Name, c.replicaConfig(), env, tcnetwork.WithNetwork([]string{r.Name}, c.bus))
	c.addExtra(r.Name, ctr)
	r.c = ctr
	if err != nil {
		return err
	}
	return r.readPort(ctx)
}

// clusterLBConfig is deploy/haproxy.cfg with one server line per replica.
func clusterLBConfig(replicas int) (string, error) {
	raw, err := os.ReadFile(lbConfigFile)
	if err != nil {
		return "", fmt.Errorf("the load balancer's configuration: %w", err)
	}
	servers := regexp.MustCompile(`(?m)^[ \t]*server game\d+ .*\n`)
	if n := len(servers.FindAllIndex(raw, -1)); n == 0 {
		return "", fmt.Errorf("%s has no `server gameN` lines to replace", lbConfigFile)
	}
	var lines strings.Builder
	for i := range replicas {
		fmt.Fprintf(&lines, "    server game%d game%d:8080\n", i+1, i+1)
	}
	first := true
	out := servers.ReplaceAllFunc(raw, func([]byte) []byte {
		if first {
			first = false
			return []byte(lines.String())
		}
		return nil
	})
	return string(out), nil
}

func (c *Cluster) startLB(ctx context.Context, config string) error {
	img := imageFromEnv("CRASHGAME_LB_IMAGE", defaultLBImage)
	ctr, err := testcontainers.Run(ctx, img,
		testcontainers.WithFiles(testcontainers.ContainerFile{
			Reader: strings.NewReader(config), ContainerFilePath: "/usr/local/etc/haproxy/haproxy.cfg", FileMode: 0o644,
		}),
		testcontainers.WithExposedPorts("8080/tcp"),
		// base_url's host: launch URLs and the streams' Origin name the balancer.
		tcnetwork.WithNetwork([]string{"crashgame"}, c.net),
		labels(), loopbackPorts("8080/tcp"),
		testcontainers.WithWaitStrategy(wait.ForHTTP("/readyz").WithPort("8080/tcp").WithStartupTimeout(startTimeout)),
	)
	c.addExtra("lb", ctr)
	c.lb = ctr
	if err != nil {
		return fmt.Errorf("load balancer (%s): %w", img, err)
	}
	port, err := ctr.MappedPort(ctx, "8080/tcp")
	if err != nil {
		return fmt.Errorf("load balancer port: %w", err)
	}
	c.mu.Lock()
	c.gameURL = "http://127.0.0.1:" + port.Port()
	c.mu.Unlock()
	return nil
}

// Via is the same session with its requests and streams sent straight to
// replica r instead of the load balancer.
func (s *Session) Via(r *Replica) *Session {
	v := *s
	v.at = r.URL
	return &v
}

// ---- leadership -------------------------------------------------------------

// Leader is the replica holding the game's lease and its epoch, as the
// database says (the holder of an expired lease until another takes it).
func (c *Cluster) Leader(t testing.TB) (*Replica, int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var holder string
	var epoch int64
	if err := c.DB().QueryRowContext(ctx, `SELECT holder, epoch FROM leases WHERE game_id = $1`, gameID).Scan(&holder, &epoch); err != nil {
		t.Fatalf("suite: the game's lease: %v", err)
	}
	// The holder is the replica's name and its process's instance: game1/e0f5...
	name, _, _ := strings.Cut(holder, "/")
	return c.Replica(t, name), epoch
}

// Replica is the replica named name.
func (c *Cluster) Replica(t testing.TB, name string) *Replica {
	t.Helper()
	for _, r := range c.Replicas {
		if r.Name == name {
			return r
		}
	}
	t.Fatalf("suite: no replica %q", name)
	return nil
}

// Others are the replicas but r.
func (c *Cluster) Others(r *Replica) []*Replica {
	var out []*Replica
	for _, o := range c.Replicas {
		if o != r {
			out = append(out, o)
		}
	}
	return out
}

// Terms reads, from every replica's whole log (every run of its container),
// the epochs at which it began to lead ("leading the table").
func (c *Cluster) Terms(t testing.TB) map[int64][]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	terms := map[int64][]string{}
	for _, r := range c.Replicas {
		lines, err := logLines(ctx, r.c)
		if err != nil {
			t.Fatalf("suite: %s logs: %v", r.Name, err)
		}
		for _, l := range lines {
			if !strings.Contains(l, `"msg":"leading the table"`) {
				continue
			}
			var rec struct {
				Epoch int64 `json:"epoch"`
			}
			if err := json.Unmarshal([]byte(l), &rec); err != nil {
				t.Fatalf("suite: %s log line %q: %v", r.Name, l, err)
			}
			terms[rec.Epoch] = append(terms[rec.Epoch], r.Name)
		}
	}
	return terms
}

// LogCount counts the lines of replica r's log (every run) that contain s.
func (c *Cluster) LogCount(t testing.TB, r *Replica, s string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	lines, err := logLines(ctx, r.c)
	if err != nil {
		t.Fatalf("suite: %s logs: %v", r.Name, err)
	}
	n := 0
	for _, l := range lines {
		if strings.Contains(l, s) {
			n++
		}
	}
	return n
}

// CheckOneLeaderPerRound fails t unless every round was opened under exactly
// one lease term: every round row carries an epoch that exactly one replica
// began to lead at, and epochs never decrease as rounds follow each other (so
// the rounds of one term are contiguous and no two leaders interleave).
func (c *Cluster) CheckOneLeaderPerRound(t testing.TB) {
	t.Helper()
	terms := c.Terms(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rows, err := c.DB().QueryContext(ctx, `SELECT id, seq, epoch FROM rounds WHERE game_id = $1 ORDER BY seq`, gameID)
	if err != nil {
		t.Fatalf("suite: rounds: %v", err)
	}
	defer rows.Close()
	var prev int64
	n := 0
	epochs := map[int64]int{}
	for rows.Next() {
		var id string
		var seq, epoch int64
		if err := rows.Scan(&id, &seq, &epoch); err != nil {
			t.Fatalf("suite: rounds: %v", err)
		}
		n++
		epochs[epoch]++
		if holders := terms[epoch]; len(holders) != 1 {
			t.Errorf("round %s (seq %d) carries epoch %d, which %d replicas began to lead (%v), want exactly one", id, seq, epoch, len(holders), holders)
		}
		if epoch < prev {
			t.Errorf("round %s (seq %d) carries epoch %d after a round of epoch %d: two leaders interleaved", id, seq, epoch, prev)
		}
		prev = epoch
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("suite: rounds: %v", err)
	}
	for epoch, holders := range terms {
		if len(holders) > 1 {
			t.Errorf("epoch %d was begun by %d replicas: %v", epoch, len(holders), holders)
		}
	}
	t.Logf("one leader per round: %d rounds over %d terms (%d terms begun)", n, len(epochs), len(terms))
}

// ---- faults -------------------------------------------------------------------

// Kill sends SIGKILL to replica r and waits until Docker sees it stopped.
func (c *Cluster) Kill(t testing.TB, r *Replica) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.docker.ContainerKill(ctx, r.c.GetContainerID(), client.ContainerKillOptions{Signal: "SIGKILL"}); err != nil {
		t.Fatalf("suite: kill %s: %v", r.Name, err)
	}
	c.awaitStopped(t, ctx, r)
}

// Stop sends SIGTERM to replica r and waits until it exits (SIGKILL after
// grace, as Docker does).
func (c *Cluster) Stop(t testing.TB, r *Replica, grace time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), grace+30*time.Second)
	defer cancel()
	secs := int(grace / time.Second)
	if _, err := c.docker.ContainerStop(ctx, r.c.GetContainerID(), client.ContainerStopOptions{Timeout: &secs}); err != nil {
		t.Fatalf("suite: stop %s: %v", r.Name, err)
	}
	c.awaitStopped(t, ctx, r)
}

func (c *Cluster) awaitStopped(t testing.TB, ctx context.Context, r *Replica) {
	t.Helper()
	for {
		st, err := r.c.State(ctx)
		if err == nil && !st.Running {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("suite: %s does not stop", r.Name)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Restart starts the stopped replica r again and waits for its /readyz on
// its new published port. It returns how long that took.
func (c *Cluster) Restart(t testing.TB, r *Replica) time.Duration {
	t.Helper()
	began := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	if err := r.c.Start(ctx); err != nil {
		t.Fatalf("suite: restart %s: %v", r.Name, err)
	}
	if err := r.readPort(ctx); err != nil {
		t.Fatalf("suite: %v", err)
	}
	c.awaitReadyAt(t, ctx, r.URL)
	return time.Since(began)
}

// Disconnect cuts replica r off the cluster's networks (docker network
// disconnect): it reaches neither PostgreSQL nor NATS nor the wallet, and
// nobody reaches it, but it keeps running.
func (c *Cluster) Disconnect(t testing.TB, r *Replica) {
	t.Helper()
	c.leave(t, r, c.net)
	c.leave(t, r, c.bus)
}

// Reconnect joins replica r to the cluster's networks again under its name.
func (c *Cluster) Reconnect(t testing.TB, r *Replica) {
	t.Helper()
	c.join(t, r, c.net)
	c.join(t, r, c.bus)
}

// CutFromNATS cuts replica r off NATS only (docker network disconnect from
// the bus): it still reaches PostgreSQL and the wallet, and the load
// balancer reaches it.
func (c *Cluster) CutFromNATS(t testing.TB, r *Replica) {
	t.Helper()
	c.leave(t, r, c.bus)
}

// RejoinNATS joins replica r to the bus again.
func (c *Cluster) RejoinNATS(t testing.TB, r *Replica) {
	t.Helper()
	c.join(t, r, c.bus)
}

// leave disconnects replica r from network n, with no reset of its
// connections: their packets go nowhere.
func (c *Cluster) leave(t testing.TB, r *Replica, n *testcontainers.DockerNetwork) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.docker.NetworkDisconnect(ctx, n.ID, client.NetworkDisconnectOptions{Container: r.c.GetContainerID(), Force: true}); err != nil {
		t.Fatalf("suite: disconnect %s from %s: %v", r.Name, n.Name, err)
	}
}

// join connects replica r to network n under its name.
func (c *Cluster) join(t testing.TB, r *Replica, n *testcontainers.DockerNetwork) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	if _, err := c.docker.NetworkConnect(ctx, n.ID, client.NetworkConnectOptions{
		Container: r.c.GetContainerID(), EndpointConfig: &network.EndpointSettings{Aliases: []string{r.Name}},
	}); err != nil {
		t.Fatalf("suite: connect %s to %s: %v", r.Name, n.Name, err)
	}
	if err := r.readPort(ctx); err != nil {
		t.Fatalf("suite: %v", err)
	}
}

// RestartNATS stops NATS, keeps it down for down and starts it again.
func (c *Cluster) RestartNATS(t testing.TB, down time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	timeout := 5
	if _, err := c.docker.ContainerStop(ctx, c.nats.GetContainerID(), client.ContainerStopOptions{Timeout: &timeout}); err != nil {
		t.Fatalf("suite: stop NATS: %v", err)
	}
	time.Sleep(down)
	if _, err := c.docker.ContainerStart(ctx, c.nats.GetContainerID(), client.ContainerStartOptions{}); err != nil {
		t.Fatalf("suite: start NATS: %v", err)
	}
}
