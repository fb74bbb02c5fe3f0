package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/crashstudio/crashgame/api"
	"github.com/crashstudio/crashgame/internal/config"
	"github.com/crashstudio/crashgame/internal/docs"
	"github.com/crashstudio/crashgame/internal/server"
	"github.com/crashstudio/crashgame/internal/store"
)

// shutdownGrace bounds how long in-flight requests may take after SIGTERM.
const shutdownGrace = 10 * time.Second

// tableGrace bounds how long the tables may take to settle after SIGTERM; the
// engine voids a flying round that has not crashed within its own 30 s grace.
const tableGrace = 35 * time.Second

func loadConfig(path string) (*config.Config, error) {
	cfg, err := config.Load(path)
	if err != nil {
		return nil, fmt.Errorf("refusing to start with %s:\n%w", path, err)
	}
	return cfg, nil
}

// withStore opens the installation's database, applies its migrations, runs
// fn with it and closes it: every command that uses the database (serve,
// dev, migrate, movements, reconcile) opens it here.
func withStore(ctx context.Context, cfg *config.Config, fn func(*store.Store) error) error {
	st, err := store.Open(ctx, string(cfg.Database))
	if err != nil {
		return fmt.Errorf("open database: %w", err)
	}
	defer st.Close()
	if err := st.Migrate(ctx); err != nil {
		return fmt.Errorf("migrate database: %w", err)
	}
	return fn(st)
}

// serveOptions is what a caller may give serve beyond the installation:
// crashgame dev opens every socket before it prints anything, and prints its
// banner only once the game is about to serve.
type serveOptions struct {
	// listener and metrics, when set, are cfg.Listen's and
	// cfg.MetricsListen's sockets, already open; nil: serve opens them.
	listener, metrics net.Listener
	// banner, when set, is called once the installation is ready to serve,
	// before serve's own lines on stdout.
	banner func()
}

// serve runs the game server on st until ctx ends. Then /readyz answers 503
// and, in a cluster, the replica serves on for the drain (the load balancer's
// time to take it out of rotation); then the tables stop: each plays its
// round to the crash (up to the grace) and hands over, the movement queue
// stops (what it holds is durable), the streams close and the HTTP server
// drains.
func serve(ctx context.Context, cfg *config.Config, st *store.Store, logger *slog.Logger, stdout io.Writer, opts serveOptions) error {
	a, err := newApp(ctx, cfg, st, logger)
	if err != nil {
		return err
	}
	defer a.close()
	health, err := clusterHealth(cfg, a, st, logger)
	if err != nil {
		return err
	}
	if health != nil {
		a.health.Store(health) // the lease's Able reads it from now on
	}
	handler, err := newHandler(cfg, st, a, readiness(a, health), logger)
	if err != nil {
		return err
	}
	ln := opts.listener
	if ln == nil {
		if ln, err = net.Listen("tcp", cfg.Listen); err != nil {
			return fmt.Errorf("listen on %s: %w", cfg.Listen, err)
		}
	}
	srv := newHTTPServer(handler, logger)
	if opts.banner != nil {
		opts.banner()
	}
	stopMetrics, err := serveMetrics(cfg, a, opts.metrics, logger, stdout)
	if err != nil {
		ln.Close()
		return err
	}
	defer stopMetrics()
	runCtx, stopRun := context.WithCancel(context.Background())
	defer stopRun()
	a.start(runCtx)
	if health != nil {
		a.run(runCtx, health.Run, "watching the replica's links to the cluster stopped")
	}
	logger.Info("serving", "listen", ln.Addr().String(), "base_url", cfg.BaseURL, "database", st.Dialect())
	fmt.Fprintf(stdout, "crashgame listening on http://%s (base_url %s)\n", ln.Addr(), cfg.BaseURL)

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		stopRun()
		a.wait(shutdownGrace)
		return fmt.Errorf("http server: %w", err)
	case <-ctx.Done():
	}
	return a.shutdown(cfg, srv, errc, stopRun)
}

// serveMetrics serves /metrics on an address of its own (loopback unless the
// file says otherwise), when the file names one: operators' names, their
// wallet calls and the queue never reach the public port. With profiling on,
// Go's profiles (/debug/pprof/) are served there too, never on listen. mln,
// when set, is metrics_listen's socket, already open. It returns what stops
// it.
func serveMetrics(cfg *config.Config, a *app, mln net.Listener, logger *slog.Logger, stdout io.Writer) (stop func(), err error) {
	if cfg.MetricsListen == "" {
		return func() {}, nil
	}
	if mln == nil {
		if mln, err = net.Listen("tcp", cfg.MetricsListen); err != nil {
			return nil, fmt.Errorf("metrics_listen on %s (/metrics; set metrics_listen to a free address, e.g. 127.0.0.1:9091): %w", cfg.MetricsListen, err)
		}
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", a.metricsHandler())
	if cfg.Profiling {
		// Go's profiles, for an engineer who must see where a replica's CPU
		// goes: stacks and function names only, never a request's data.
		// Registered here, not through net/http/pprof's default mux.
		mux.HandleFunc("GET /debug/pprof/", pprof.Index)
		mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	}
	metricsSrv := newHTTPServer(mux, logger)
	go func() {
		if err := metricsSrv.Serve(mln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("metrics server stopped", "err", err)
		}
	}()
	logger.Info("serving metrics", "metrics_listen", mln.Addr().String())
	fmt.Fprintf(stdout, "crashgame metrics on http://%s/metrics\n", mln.Addr())
	return func() { _ = metricsSrv.Close() }, nil
}

// shutdown stops a serving replica in order: /readyz fails, the drain lets
// the load balancer notice, the tables settle the rounds in play, the parts
// stop (stopRun), the streams close, and the HTTP server shuts down; errc is
// its Serve's result.
func (a *app) shutdown(cfg *config.Config, srv *http.Server, errc <-chan error, stopRun func()) error {
	logger := a.logger
	a.stopping.Store(true) // /readyz: 503 from now on
	if cfg.Cluster != nil && cfg.Cluster.DrainMS > 0 {
		// Everything is still served while the load balancer notices: the
		// streams closed below then reconnect straight to another replica.
		logger.Info("shutting down: waiting for the load balancer to take this replica out of rotation", "drain", cfg.Cluster.Drain().String())
		time.Sleep(cfg.Cluster.Drain())
	}
	logger.Info("shutting down: settling the rounds in play (a flying round holding no bet ends at once); "+
		"a second SIGINT or SIGTERM stops at once and leaves them to the fail-over rule at the next start", "grace", tableGrace.String())
	for _, t := range a.tables {
		t.Stop()
	}
	for _, t := range a.tables {
		select {
		case <-t.Done():
		case <-time.After(tableGrace):
		}
	}
	stopRun()
	a.wait(shutdownGrace)
	a.table.Close() // streams are upgraded connections: Shutdown does not close them
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("http server: %w", err)
	}
	logger.Info("stopped")
	return nil
}

func newHTTPServer(h http.Handler, logger *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       15 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
}

// newHandler wires the public routes of one installation. /metrics is never
// among them: serve answers it on metrics_listen alone, so the public port
// answers 404 there.
func newHandler(cfg *config.Config, st *store.Store, a *app, ready func(context.Context) error, logger *slog.Logger) (http.Handler, error) {
	documents, err := docs.New(api.Documents)
	if err != nil {
		return nil, err
	}
	routes := a.operators.Routes()
	for pattern, h := range a.table.Routes() {
		routes[pattern] = h
	}
	observe, err := requestDurations(a.registry)
	if err != nil {
		return nil, err
	}
	return server.New(server.Config{
		Logger:    logger,
		Documents: documents,
		Reference: documents.Reference(),
		Ready:     ready,
		Routes:    routes,
		Observe:   observe,
	}), nil
}
