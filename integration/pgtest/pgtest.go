// Package pgtest gives tests a PostgreSQL database of their own. It owns one
// PostgreSQL container per test binary (testcontainers-go, modules/postgres),
// started on first use and terminated by Main, and a fresh database per Start
// call, so parallel tests never see each other's rows.
//
// It must never be imported by non-test code, never reuse a database between
// callers, and never leave a container running after Main returns.
//
// Use:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
//
//	func TestSomething(t *testing.T) {
//		dsn := pgtest.Start(t) // postgres://...; skipped (or failed in CI) without Docker
//		...
//	}
//
// The image is CRASHGAME_POSTGRES_IMAGE, default crashgame-postgres:15, built
// by integration/postgres-image/build.sh (`make images`); on a machine with a
// registry, CRASHGAME_POSTGRES_IMAGE=postgres:15 works unchanged.
//
// Environment: this machine kind has no reachable reaper image and a /.dockerenv
// that misleads testcontainers, so Main and Start set
// TESTCONTAINERS_RYUK_DISABLED=true and TESTCONTAINERS_HOST_OVERRIDE=127.0.0.1
// when they are unset (export other values to override). Without the reaper a
// binary killed hard can leave a container behind (SIGINT and SIGTERM are
// handled); remove leftovers with
// `docker ps -aq --filter label=crashgame.pgtest=true | xargs -r docker rm -f`.
//
// When no Docker engine answers, or the default image is missing, Start skips
// the test with a message saying what to do, or fails it when CI is set.
package pgtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/containerd/errdefs"
	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/modules/postgres"
)

const (
	// DefaultImage is the locally built image (integration/postgres-image).
	DefaultImage = "crashgame-postgres:15"
	// ImageEnv names the environment variable that overrides DefaultImage.
	ImageEnv = "CRASHGAME_POSTGRES_IMAGE"

	startTimeout = 2 * time.Minute
	stopTimeout  = 30 * time.Second
	label        = "crashgame.pgtest"
)

// server is the one container of this test binary.
type server struct {
	admin    *sql.DB  // connected to the container's initial database, for CREATE/DROP DATABASE
	baseURL  *url.URL // DSN of the initial database; Start swaps the path
	took     time.Duration
	skipMsg  string // no engine or no image: skip (fail in CI) with this message
	err      error  // anything else: fail
	image    string
	reported atomic.Bool
}

var (
	mainCalled atomic.Bool
	once       sync.Once
	srv        *server // set by once; read only after once.Do

	mu      sync.Mutex // guards running and stopped, shared with the signal handler
	running *postgres.PostgresContainer
	admin   *sql.DB
	stopped bool
)

// Main runs the tests of a package that calls Start, then terminates the
// shared container (if one was started) and exits with the tests' code. Call
// it from TestMain:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
func Main(m *testing.M) {
	setEnvDefaults()
	mainCalled.Store(true)

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sig
		fmt.Fprintf(os.Stderr, "pgtest: %v: terminating the PostgreSQL container\n", s)
		stop()
		os.Exit(130)
	}()

	code := m.Run()
	signal.Stop(sig)
	stop()
	os.Exit(code)
}

// Start returns the DSN (postgres://...) of a new, empty database in the shared
// container, dropped when t ends. It starts the container on first use. Safe
// for parallel tests.
func Start(t testing.TB) (dsn string) {
	t.Helper()
	if !mainCalled.Load() {
		t.Fatal("pgtest: Start needs pgtest.Main: add `func TestMain(m *testing.M) { pgtest.Main(m) }` to this package, " +
			"so the shared container is terminated")
	}
	if testing.Short() {
		// make quick: the loop without containers; make unit and make test
		// run these cases.
		t.Skip("pgtest: SKIPPING PostgreSQL test in -short mode (make quick); make unit runs it")
	}
	once.Do(func() { srv = startServer() })
	switch {
	case srv.skipMsg != "" && os.Getenv("CI") != "":
		t.Fatalf("pgtest: %s (CI is set, so this fails instead of skipping)", srv.skipMsg)
	case srv.skipMsg != "":
		t.Skipf("pgtest: SKIPPING PostgreSQL test: %s", srv.skipMsg)
	case srv.err != nil:
		t.Fatalf("pgtest: %v", srv.err)
	}
	if srv.reported.CompareAndSwap(false, true) {
		t.Logf("pgtest: PostgreSQL container (%s) ready in %s", srv.image, srv.took.Round(time.Millisecond))
	}

	name := "t_" + randomHex(8)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := srv.admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("pgtest: create database %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := srv.admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Logf("pgtest: drop database %s: %v", name, err)
		}
	})
	u := *srv.baseURL
	u.Path = "/" + name
	return u.String()
}

// Image reports the image Start runs: $CRASHGAME_POSTGRES_IMAGE or DefaultImage.
func Image() string {
	if img := os.Getenv(ImageEnv); img != "" {
		return img
	}
	return DefaultImage
}

// setEnvDefaults sets the testcontainers variables this machine kind needs,
// unless the environment already says otherwise. testcontainers reads them
// once, on first use, so this runs before any testcontainers call.
func setEnvDefaults() {
	for k, v := range map[string]string{
		"TESTCONTAINERS_RYUK_DISABLED": "true",      // the reaper image cannot be pulled here
		"TESTCONTAINERS_HOST_OVERRIDE": "127.0.0.1", // /.dockerenv makes it dial an unreachable gateway
	} {
		if _, ok := os.LookupEnv(k); !ok {
			_ = os.Setenv(k, v)
		}
	}
}

func startServer() *server {
	setEnvDefaults()
	s := &server{image: Image()}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	began := time.Now()

	if msg := checkEngine(ctx, s.image); msg != "" {
		s.skipMsg = msg
		return s
	}

	loopback := netip.MustParseAddr("127.0.0.1")
	ctr, err := postgres.Run(ctx, s.image,
		postgres.WithDatabase("crashgame"),
		postgres.WithUsername("postgres"),
		postgres.WithPassword("postgres"),
		postgres.BasicWaitStrategies(),
		// A test server: durability off, room for many parallel pools.
		testcontainers.WithCmdArgs(
			"-c", "synchronous_commit=off",
			"-c", "full_page_writes=off",
			"-c", "max_connections=400",
		),
		testcontainers.WithLabels(map[string]string{label: "true"}),
		// Publish 5432 on loopback only (Docker binds every interface by default).
		testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
			hc.PortBindings = network.PortMap{
				network.MustParsePort("5432/tcp"): {{HostIP: loopback, HostPort: "0"}},
			}
		}),
	)
	if ctr != nil && !track(ctr) {
		return &server{image: s.image, err: errors.New("stopped while starting")}
	}
	if err != nil {
		s.err = fmt.Errorf("start PostgreSQL container from %s: %w", s.image, err)
		if s.image == DefaultImage {
			s.err = fmt.Errorf("%w (rebuild the image with `make images` or integration/postgres-image/build.sh)", s.err)
		}
		return s
	}

	dsn, err := ctr.ConnectionString(ctx, "sslmode=disable")
	if err != nil {
		s.err = fmt.Errorf("container connection string: %w", err)
		return s
	}
	if s.baseURL, err = url.Parse(dsn); err != nil {
		s.err = fmt.Errorf("parse container DSN: %w", err)
		return s
	}
	if s.admin, err = sql.Open("pgx", dsn); err != nil {
		s.err = fmt.Errorf("open admin connection: %w", err)
		return s
	}
	s.admin.SetMaxOpenConns(4)
	mu.Lock()
	admin = s.admin
	mu.Unlock()
	if err := pingUntilReady(ctx, s.admin); err != nil {
		s.err = fmt.Errorf("PostgreSQL container %s does not answer: %w", s.image, err)
		return s
	}
	s.took = time.Since(began)
	return s
}

// checkEngine returns why PostgreSQL tests cannot run here (no engine, no
// image), or "" when they can.
func checkEngine(ctx context.Context, image string) (msg string) {
	defer func() {
		if r := recover(); r != nil {
			msg = fmt.Sprintf("no Docker engine answers (testcontainers panicked: %v)", r)
		}
	}()
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return fmt.Sprintf("no Docker engine answers: %v", err)
	}
	defer func() { _ = cli.Close() }()
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := cli.Ping(pctx, client.PingOptions{}); err != nil {
		return fmt.Sprintf("no Docker engine answers: %v", err)
	}
	_, err = cli.ImageInspect(ctx, image)
	switch {
	case err == nil:
		return ""
	case !errdefs.IsNotFound(err):
		return fmt.Sprintf("cannot inspect image %s: %v", image, err)
	case image == DefaultImage:
		return fmt.Sprintf("image %s is not built: run `make images` (or integration/postgres-image/build.sh), "+
			"or set %s=postgres:15 on a machine with a registry", image, ImageEnv)
	default:
		return "" // a registry image (e.g. postgres:15): let testcontainers pull it
	}
}

// pingUntilReady pings until PostgreSQL accepts a query: the port may be
// published a moment before the server accepts connections on it.
func pingUntilReady(ctx context.Context, db *sql.DB) error {
	var last error
	for {
		if last = db.PingContext(ctx); last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return errors.Join(ctx.Err(), last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// track records the started container for stop. It reports false, after
// terminating ctr, when stop already ran (a signal arrived during start-up).
func track(ctr *postgres.PostgresContainer) bool {
	mu.Lock()
	defer mu.Unlock()
	if stopped {
		terminate(ctr)
		return false
	}
	running = ctr
	return true
}

// stop terminates the shared container, once; later calls do nothing.
func stop() {
	mu.Lock()
	defer mu.Unlock()
	if stopped {
		return
	}
	stopped = true
	if admin != nil {
		_ = admin.Close()
	}
	if running != nil {
		terminate(running)
	}
}

func terminate(ctr *postgres.PostgresContainer) {
	ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
	defer cancel()
	if err := testcontainers.TerminateContainer(ctr, testcontainers.StopContext(ctx)); err != nil {
		fmt.Fprintf(os.Stderr, "pgtest: terminate PostgreSQL container: %v\n"+
			"pgtest: remove it with: docker ps -aq --filter label=%s=true | xargs -r docker rm -f\n", err, label)
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b)
}
