package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/crashstudio/crashgame/internal/backoffice"
	"github.com/crashstudio/crashgame/internal/cluster"
	"github.com/crashstudio/crashgame/internal/config"
	"github.com/crashstudio/crashgame/internal/engine"
	"github.com/crashstudio/crashgame/internal/freebets"
	"github.com/crashstudio/crashgame/internal/groupcommit"
	"github.com/crashstudio/crashgame/internal/launch"
	"github.com/crashstudio/crashgame/internal/metrics"
	"github.com/crashstudio/crashgame/internal/movements"
	"github.com/crashstudio/crashgame/internal/operatorapi"
	"github.com/crashstudio/crashgame/internal/replica"
	"github.com/crashstudio/crashgame/internal/server"
	"github.com/crashstudio/crashgame/internal/sessions"
	"github.com/crashstudio/crashgame/internal/store"
	"github.com/crashstudio/crashgame/internal/table"
	"github.com/crashstudio/crashgame/internal/tickets"
	"github.com/crashstudio/crashgame/internal/wallet"
)

// app is one installation's running parts: wallet clients, the movement queue,
// freebets, one engine table per game, the player API and the operator routes.
type app struct {
	store    *store.Store
	logger   *slog.Logger
	registry *prometheus.Registry
	clients  map[string]*wallet.Client
	queue    *movements.Queue
	freebets *freebets.Service
	demo     *engine.DemoBank
	tables   map[string]*engine.Table
	games    map[string]table.Game // what the player API plays on: the tables, or their replicas in a cluster
	bus      *cluster.Bus          // nil: one process
	replicas []*replica.Table
	balances *replica.Balances
	stopping atomic.Bool // set at SIGTERM: /readyz answers 503 so that load balancers send no new work
	// health watches, in a cluster, the replica's links to NATS and its
	// database (set once serve builds it; nil until then and for one process).
	health    atomic.Pointer[replica.Health]
	sessions  *sessions.Service
	table     *table.Server
	operators *operatorapi.API
	// backoffice reads for the operators' staff (operatorapi) and serves
	// their links' pages (table).
	backoffice *backoffice.Service
	retention  time.Duration
	wg         sync.WaitGroup
}

// newApp builds the parts in dependency order, each from what is built
// before it: the wallet clients, freebets, in a cluster the NATS bus and the
// balance relay, sessions (which keep the balances players are shown and
// publish their changes to the streams), the outbox, one engine table per
// game (which queues movements in the outbox and tells the sessions what a
// bet moved), the player API over them, the movement queue (which delivers
// the outbox and hands each wallet answer to the sessions), and the operator
// routes. start runs them.
func newApp(ctx context.Context, cfg *config.Config, st *store.Store, logger *slog.Logger) (*app, error) {
	a := &app{
		store: st, logger: logger,
		registry: prometheus.NewRegistry(),
		clients:  map[string]*wallet.Client{},
		demo:     engine.NewDemoBank(),
		tables:   map[string]*engine.Table{},
		games:    map[string]table.Game{},
	}
	a.registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), st.Collector())
	if err := a.newClients(cfg); err != nil {
		return nil, err
	}
	var err error
	a.freebets, err = freebets.New(st.Freebets(), freebets.Options{Registerer: a.registry, Logger: logger})
	if err != nil {
		return nil, err
	}
	lease, err := a.joinCluster(ctx, cfg)
	if err != nil {
		return nil, err
	}
	tk := tickets.New(st.Tickets(), time.Now)
	if err := a.newSessions(cfg, tk); err != nil {
		return nil, err
	}
	// The engine queues wins and rollbacks in the outbox; the queue, built
	// last, delivers them.
	outbox := movements.NewOutbox(st.Movements())
	if err := a.newTables(ctx, cfg, outbox, lease); err != nil {
		return nil, err
	}
	if err := a.newPlayerAPI(cfg); err != nil {
		return nil, err
	}
	if err := a.newQueue(outbox); err != nil {
		return nil, err
	}
	a.operators = operatorapi.New(operatorapi.Config{
		Operators: operatorCredentials(cfg), Launch: launch.New(launchInstallation(cfg), tk),
		Chains: st.HashChains(), Movements: st.BackOffice(), Redeliver: st.Movements(), BackOffice: a.backoffice, BaseURL: cfg.BaseURL,
		Logger: logger, Now: time.Now,
	})
	return a, nil
}

// newClients builds the wallet client of every operator that has a wallet.
func (a *app) newClients(cfg *config.Config) error {
	metrics, err := wallet.NewPrometheusMetrics(a.registry)
	if err != nil {
		return fmt.Errorf("wallet metrics: %w", err)
	}
	for i := range cfg.Operators {
		op := &cfg.Operators[i]
		if !op.HasWallet() {
			continue
		}
		c, err := wallet.NewClient(walletSettings(op), wallet.WithLogger(a.logger), wallet.WithMetrics(metrics))
		if err != nil {
			return fmt.Errorf("wallet client of %s: %w", op.ID, err)
		}
		a.clients[op.ID] = c
	}
	return nil
}

// joinCluster connects to NATS in a cluster, where the replicas talk: every
// table publishes its events there while it leads, actions reach the leader
// there, and the balances a replica's sessions decide reach the others'. It
// returns the tables' lease settings. One process on a SQLite file owns the
// file (store's Own, which a second process on it is refused) and is then
// the only one that can lead its tables: its leases are sole, never renewed,
// so a slow database never ends a term nor voids a round. One process on
// PostgreSQL renews its leases as a replica does.
func (a *app) joinCluster(ctx context.Context, cfg *config.Config) (engine.LeaseSettings, error) {
	if cfg.Cluster == nil {
		if a.store.Dialect() != store.DialectSQLite {
			return engine.LeaseSettings{}, nil
		}
		if err := a.store.Own(); err != nil {
			return engine.LeaseSettings{}, fmt.Errorf("refusing to start: %w: one process serves a SQLite file; stop the other, or give this one another database (docs/config.md)", err)
		}
		return engine.LeaseSettings{Sole: true}, nil
	}
	var err error
	a.bus, err = cluster.Connect(ctx, cluster.Options{
		URLs: cfg.Cluster.NATS, Name: cfg.Cluster.Replica, Logger: a.logger, Registerer: a.registry,
	})
	if err != nil {
		return engine.LeaseSettings{}, fmt.Errorf("cluster: %w", err)
	}
	lease := clusterLease(cfg.Cluster)
	// A replica cut off from NATS can neither hear its followers' actions
	// nor reach their streams: it leaves its tables to another.
	lease.Able = a.leadable
	a.balances = replica.NewBalances(a.bus, a.logger)
	return lease, nil
}

// newSessions builds the sessions, which keep the balances players are shown
// and publish their changes.
func (a *app) newSessions(cfg *config.Config, tk *tickets.Service) error {
	var err error
	a.sessions, err = sessions.New(sessions.Options{
		Operators: sessionOperators(cfg), Games: gameIDs(cfg),
		Languages: config.Languages, DefaultLanguage: cfg.DefaultLanguage,
		Store: a.store.Sessions(), Tickets: tk,
		Wallets: func(op string) (sessions.Balancer, bool) {
			c, ok := a.clients[op]
			return c, ok
		},
		Freebets: a.freebets, Demo: a.demo, Logger: a.logger, Relay: a.relay(),
	})
	return err
}

// newTables builds one engine table per game and, in a cluster, the
// replica's view of it, which forwards the player actions to the leader.
func (a *app) newTables(ctx context.Context, cfg *config.Config, outbox *movements.Outbox, lease engine.LeaseSettings) error {
	operators := engineOperators(cfg)
	sealer, window, beacon, err := chainSettings(cfg.Fairness)
	if err != nil {
		return err
	}
	for i := range cfg.Games {
		g := &cfg.Games[i]
		var (
			events    engine.Events // nil: the table's own subscribers
			pub       *replica.Publisher
			lossDelay time.Duration // zero: one process prices every cashout on the crash's clock
		)
		if a.bus != nil {
			pub = replica.NewPublisher(a.bus, g.ID, a.logger, a.priceClock)
			events, lossDelay = pub, engine.DefaultLossDelay
		}
		commits, err := tableCommits(a.registry, g.ID)
		if err != nil {
			return err
		}
		t, err := engine.New(ctx, engine.Config{
			Game: engineGame(g), Operators: operators, Store: a.store.Records(), Chains: a.store.HashChains(), Outbox: outbox,
			Wallets: func(op string) (engine.BetWallet, bool) {
				c, ok := a.clients[op]
				return c, ok
			},
			Freebets: spender{a.freebets}, Balances: a.sessions, Demo: a.demo, Logger: a.logger,
			Lease: lease, Events: events, Sealer: sealer, Beacon: beacon,
			SeedingWindow: window, RevealWindow: revealWindow(cfg.Fairness), LossDelay: lossDelay,
			CommitObserved: commits,
		})
		if err != nil {
			return err
		}
		a.tables[g.ID] = t
		a.games[g.ID] = t
		if err := registerLeadership(a.registry, t); err != nil {
			return err
		}
		if err := registerChainWaiting(a.registry, t); err != nil {
			return err
		}
		if a.bus != nil {
			pub.Follow(t.Leadership())
			gameID := g.ID
			r, err := replica.New(replica.Config{Bus: a.bus, Table: t, Sessions: a.sessions, Logger: a.logger, CutOff: a.cutOff, PriceClock: a.priceClock,
				Lease: func(ctx context.Context) (int64, error) {
					rec, err := a.store.Lease(ctx, gameID)
					return rec.Epoch, err
				}})
			if err != nil {
				return err
			}
			a.replicas = append(a.replicas, r)
			a.games[g.ID] = table.Split{Reads: t, Actions: r}
		}
	}
	return nil
}

// newPlayerAPI builds the back office and the player API over the tables.
func (a *app) newPlayerAPI(cfg *config.Config) error {
	st := a.store
	a.retention = cfg.Retention()
	a.backoffice = backoffice.New(backoffice.Config{Records: st.BackOffice(), Games: operatorGames(cfg), LinkTTL: cfg.LinkTTL(), Retention: cfg.Retention()})
	var err error
	a.table, err = table.New(table.Config{
		BaseURL: cfg.BaseURL, DefaultLanguage: cfg.DefaultLanguage, Limits: tableLimits(cfg), TrustedProxies: cfg.TrustedProxies,
		AddressRate: float64(cfg.AddressLimits.SessionsPerSecond), AddressBurst: int(cfg.AddressLimits.SessionsBurst),
		StreamRate: float64(cfg.AddressLimits.StreamsPerSecond), StreamBurst: int(cfg.AddressLimits.StreamsBurst),
		Sessions: a.sessions, Records: st.Records(), Chains: st.HashChains(), BackOffice: a.backoffice, Movements: st.BackOffice(), Logger: a.logger, Registerer: a.registry,
		CutOff: a.cutOff,
		Tables: func(id string) (table.Game, bool) {
			t, ok := a.games[id]
			return t, ok
		},
	})
	return err
}

// newQueue builds the movement queue, which delivers the outbox. The balance
// shown to the player follows the /win answers (BAL-4): the sessions take
// them, and show and relay them.
func (a *app) newQueue(outbox *movements.Outbox) error {
	var err error
	a.queue, err = movements.NewQueue(a.store.Movements(), outbox, a.client,
		movements.WithQueueLogger(a.logger), movements.WithRegisterer(a.registry),
		movements.WithOnSettled(func(m movements.Movement, r wallet.Result) {
			if r.HasBalance {
				a.sessions.OnWalletBalance(m.Operator, m.PlayerID, m.Currency, r.Balance)
			}
		}))
	if err != nil {
		return fmt.Errorf("movement queue: %w", err)
	}
	return nil
}

// relay is the sessions' Relay: the cluster's balance relay, or nil in one
// process.
func (a *app) relay() func(sessions.Change) {
	if a.balances == nil {
		return nil
	}
	return a.balances.Relay
}

// close releases what the parts hold, after the HTTP server stopped.
func (a *app) close() {
	a.table.Close()
	if err := a.sessions.Close(); err != nil {
		a.logger.Warn("closing sessions", "err", err)
	}
	if a.bus != nil {
		if err := a.bus.Close(); err != nil {
			a.logger.Warn("closing the cluster's connection", "err", err)
		}
	}
}

// ready reports whether the replica can take traffic: it is not shutting
// down, its database answers, in a cluster it is connected to NATS, and every
// game's table shows a round or has published its chain (a new chain's
// seeding window has no round, and operators must reach the game then to
// contribute to its salt).
func (a *app) ready(ctx context.Context) error {
	if a.stopping.Load() {
		return errors.New("shutting down")
	}
	if err := a.store.Ping(ctx); err != nil {
		return err
	}
	if a.bus != nil && !a.bus.Connected() {
		return errors.New("not connected to NATS")
	}
	// A game whose chain waits for its beacon round plays nothing: say so,
	// with the reason in the answer (the chain's page shows it too).
	for _, id := range slices.Sorted(maps.Keys(a.tables)) {
		if w, _, waiting := a.tables[id].BeaconWaiting(); waiting {
			return &server.NotReady{Reason: w.Error()}
		}
	}
	// A table that has neither shown a round nor published a chain (its
	// first leader is still being chosen) has nothing to serve yet.
	for id, g := range a.games {
		if v, _ := g.Round(); v.RoundID != "" {
			continue
		}
		if _, err := a.store.CurrentChain(ctx, id); err != nil {
			return fmt.Errorf("game %s has no round and no chain yet: %w", id, err)
		}
	}
	return nil
}

func (a *app) client(operator string) (*wallet.Client, bool) {
	c, ok := a.clients[operator]
	return c, ok
}

// start runs the queue and the tables until ctx ends.
func (a *app) start(ctx context.Context) {
	a.run(ctx, func(ctx context.Context) error {
		// The queue ends with ctx's error when ctx ends: not a failure.
		if err := a.queue.Run(ctx); !errors.Is(err, context.Canceled) {
			return err
		}
		return nil
	}, "movement queue stopped")
	for _, r := range a.replicas {
		a.run(ctx, r.Run, "relaying the table stopped")
	}
	if a.balances != nil {
		a.run(ctx, func(ctx context.Context) error { return a.balances.Run(ctx, a.sessions.Heard) }, "relaying balance changes stopped")
	}
	for id, t := range a.tables {
		a.run(ctx, t.Run, "table stopped", "game_id", id)
	}
	if a.retention > 0 {
		a.run(ctx, a.purge, "retention stopped")
	}
}

// purgeEvery is how often the retention runs.
const purgeEvery = time.Hour

// purge applies the retention (back_office.retention_days) now and every
// purgeEvery until ctx ends; on every replica of a cluster alike (each
// batch is one transaction, and a bet purged by one is not found by another).
func (a *app) purge(ctx context.Context) error {
	tick := time.NewTicker(purgeEvery)
	defer tick.Stop()
	for {
		n, err := a.backoffice.Purge(ctx, time.Now())
		switch {
		case err != nil && ctx.Err() == nil:
			a.logger.Error("retention: purging settled bets failed; trying again later", "err", err)
		case n > 0:
			a.logger.Info("retention: settled bets of old rounds purged", "bets", n)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// run runs fn(ctx) in a goroutine that wait waits for, and logs an error it
// returns as msg with the attributes args.
func (a *app) run(ctx context.Context, fn func(context.Context) error, msg string, args ...any) {
	a.wg.Go(func() {
		if err := fn(ctx); err != nil {
			a.logger.Error(msg, append(args, "err", err)...)
		}
	})
}

// wait returns once the tables settled their last round and the queue stopped,
// or when the deadline passes.
func (a *app) wait(deadline time.Duration) {
	done := make(chan struct{})
	go func() { a.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(deadline):
		a.logger.Warn("shutdown deadline passed before the tables finished; boot recovery will settle the rest")
	}
}

func (a *app) metricsHandler() http.Handler {
	return promhttp.HandlerFor(a.registry, promhttp.HandlerOpts{})
}

// spender adapts the freebets service to the engine.
type spender struct{ s *freebets.Service }

func (f spender) Spend(ctx context.Context, p engine.Player, id string) (string, int64, error) {
	g, err := f.s.Spend(ctx, freebets.Owner{Operator: p.Operator, PlayerID: p.PlayerID, Currency: p.Currency}, id)
	if errors.Is(err, freebets.ErrUnavailable) || errors.Is(err, freebets.ErrUnknown) {
		return "", 0, engine.ErrFreebetUnavailable
	}
	if err != nil {
		return "", 0, err
	}
	return g.ID, g.Amount, nil
}

func (f spender) Return(ctx context.Context, p engine.Player, id string) error {
	return f.s.Return(ctx, freebets.Owner{Operator: p.Operator, PlayerID: p.PlayerID, Currency: p.Currency}, id)
}

// registerLeadership exports whether this process leads t's table, and at
// which fencing epoch (crashgame_cluster_leader, crashgame_cluster_epoch),
// as the table's elector holds them when scraped, and what the leading
// table's last sweep found unsettled (crashgame_unsettled_bets).
func registerLeadership(r prometheus.Registerer, t *engine.Table) error {
	labels := prometheus.Labels{"game_id": t.Game().ID}
	lead := t.Leadership()
	leader := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "crashgame_cluster_leader", ConstLabels: labels,
		Help: "1 when this process leads the game's table (holds its lease), else 0.",
	}, func() float64 {
		if lead.Leading() {
			return 1
		}
		return 0
	})
	epoch := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "crashgame_cluster_epoch", ConstLabels: labels,
		Help: "The fencing epoch of the term in which this process leads the game's table; 0 when it does not lead.",
	}, func() float64 { return float64(lead.Epoch()) })
	unsettled := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "crashgame_unsettled_bets", ConstLabels: labels,
		Help: "Bets of the game's ended rounds (finished or void) found unsettled at the leading table's last sweep: accepted, or pending a minute after they were placed. Should be 0; each is settled by the next sweep and logged. 0 where this process does not lead.",
	}, func() float64 { return float64(t.Unsettled()) })
	shed := prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "crashgame_bets_shed_total", ConstLabels: labels,
		Help: "Bets this process refused before their debit (TABLE_BUSY): its recent debits took longer to learn their outcome than their round had left, so each would have been debited and then rolled back.",
	}, func() float64 { return float64(t.Shed()) })
	for _, c := range []prometheus.Collector{leader, epoch, unsettled, shed} {
		if err := r.Register(c); err != nil {
			return fmt.Errorf("leadership metrics of %s: %w", t.Game().ID, err)
		}
	}
	return nil
}

// registerChainWaiting exports how long t's current chain has waited for
// its beacon round (crashgame_chain_waiting_seconds), on the table's clock
// when scraped: 0 when it does not wait, and where this process does not
// lead the table.
func registerChainWaiting(r prometheus.Registerer, t *engine.Table) error {
	g := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "crashgame_chain_waiting_seconds", ConstLabels: prometheus.Labels{"game_id": t.Game().ID},
		Help: "How long the game's current hash chain has waited for its beacon round, since the round's time, while no fetch returned a value that verifies: the game plays no round meanwhile. 0 when it does not wait, and where this process does not lead the game.",
	}, func() float64 {
		_, waited, _ := t.BeaconWaiting()
		return waited.Seconds()
	})
	if err := r.Register(g); err != nil {
		return fmt.Errorf("beacon wait metric of %s: %w", t.Game().ID, err)
	}
	return nil
}

// tableCommits registers the histograms of a game's table committer (with
// r, shared by every game and labelled game_id) and returns their observer
// (engine.Config.CommitObserved):
//   - crashgame_table_commit_wait_seconds: how long a batch's first job
//     waited behind the batches before it;
//   - crashgame_table_commit_seconds: how long its transaction took, to the
//     database's durable commit;
//   - crashgame_table_commit_jobs: how many jobs it held.
//
// A cashout's answer waits for both of the first two: they say how much of
// its time is the database's and how much the queue's.
func tableCommits(r prometheus.Registerer, gameID string) (func(groupcommit.Batch), error) {
	seconds := []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5}
	wait := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "crashgame_table_commit_wait_seconds",
		Help:    "How long a batch of the table's committer waited, from its first job queued to its commit begun.",
		Buckets: seconds,
	}, []string{"game_id"})
	took := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "crashgame_table_commit_seconds",
		Help:    "How long a batch of the table's committer took to commit, one transaction (and a failed batch's retries).",
		Buckets: seconds,
	}, []string{"game_id"})
	jobs := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "crashgame_table_commit_jobs",
		Help:    "How many jobs (a bet's intent or acceptance, a cashout, a settlement, each with its movements) a batch of the table's committer held.",
		Buckets: []float64{1, 2, 4, 8, 16, 32, 64, 128, 256, 512},
	}, []string{"game_id"})
	if err := metrics.RegisterAll(r, metrics.VarOf(&wait), metrics.VarOf(&took), metrics.VarOf(&jobs)); err != nil {
		return nil, fmt.Errorf("commit metrics of %s: %w", gameID, err)
	}
	w, c, n := wait.WithLabelValues(gameID), took.WithLabelValues(gameID), jobs.WithLabelValues(gameID)
	return func(b groupcommit.Batch) {
		w.Observe(b.Waited.Seconds())
		c.Observe(b.Took.Seconds())
		n.Observe(float64(b.Items))
	}, nil
}

// requestDurations registers crashgame_http_request_duration_seconds{route,code}
// with r and returns the server's observer of it (server.Config.Observe): the
// process's own share of a request's latency, by route pattern and status,
// without what the network, a balancer or the client add. Its buckets
// bound the figures the targets name (a cashout answered within 10 ms).
func requestDurations(r prometheus.Registerer) (func(route string, status int, d time.Duration), error) {
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "crashgame_http_request_duration_seconds",
		Help:    "Time from a request's headers read to its handler's return, by route pattern and status code.",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
	}, []string{"route", "code"})
	if err := r.Register(h); err != nil {
		return nil, fmt.Errorf("request metrics: %w", err)
	}
	return func(route string, status int, d time.Duration) {
		h.WithLabelValues(route, strconv.Itoa(status)).Observe(d.Seconds())
	}, nil
}

// leadable reports whether this replica may lead its tables: its NATS
// connection is up and, once the health watch runs, it has reached NATS
// (a message to itself) within the lease TTL and its clock is in step
// (replica.Health.LeadBlocked). A link that died without a reset leaves the
// connection "up" for about 15 s; the watch notices within the TTL, so a
// leader cut off that way hands its tables over instead of publishing
// rounds nobody hears. The database is the lease's to judge: its renewals
// run on a connection of their own.
func (a *app) leadable() bool {
	if !a.bus.Connected() {
		return false
	}
	if h := a.health.Load(); h != nil && h.LeadBlocked() != nil {
		return false
	}
	return true
}

// priceClock is the replicas' PriceClock: why this replica's clock is not
// known to be within replica.PriceBound of the database's (before its
// health watch runs, it is not), or nil.
func (a *app) priceClock() error {
	if h := a.health.Load(); h != nil {
		return h.PriceClock()
	}
	return errors.New("this replica's clock has not been measured yet")
}

// cutOff is the player API's CutOff: why this replica is cut off from the
// cluster, or nil (always in one process): new streams are refused meanwhile.
func (a *app) cutOff() error {
	if h := a.health.Load(); h != nil {
		return h.CutOff()
	}
	return nil
}
