package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/crashstudio/crashgame/internal/config"
	"github.com/crashstudio/crashgame/internal/engine"
	"github.com/crashstudio/crashgame/internal/freebets"
	"github.com/crashstudio/crashgame/internal/launch"
	"github.com/crashstudio/crashgame/internal/operatorapi"
	"github.com/crashstudio/crashgame/internal/sessions"
	"github.com/crashstudio/crashgame/internal/store"
	"github.com/crashstudio/crashgame/internal/table"
	"github.com/crashstudio/crashgame/internal/tickets"
	"github.com/crashstudio/crashgame/internal/wallet"
)

// app is one installation's running parts: wallet clients, the movement queue,
// freebets, one engine table per game, the player API and the operator routes.
type app struct {
	store     *store.Store
	logger    *slog.Logger
	registry  *prometheus.Registry
	clients   map[string]*wallet.Client
	queue     *wallet.Queue
	freebets  *freebets.Service
	demo      *engine.DemoBank
	tables    map[string]*engine.Table
	sessions  *sessions.Service
	table     *table.Server
	operators *operatorapi.API
	wg        sync.WaitGroup
}

// newApp builds the parts in dependency order, each from what is built
// before it: the wallet clients, freebets, sessions (which keep the balances
// players are shown), the outbox, one engine table per game (which queues
// movements in the outbox and tells the sessions what a bet moved), the player
// API over them, the movement queue (which delivers the outbox and hands each
// wallet answer to the player API, for the sessions and their streams), and
// the operator routes. start runs them.
func newApp(ctx context.Context, cfg *config.Config, st *store.Store, logger *slog.Logger) (*app, error) {
	a := &app{
		store: st, logger: logger,
		registry: prometheus.NewRegistry(),
		clients:  map[string]*wallet.Client{},
		demo:     engine.NewDemoBank(),
		tables:   map[string]*engine.Table{},
	}
	a.registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	metrics, err := wallet.NewPrometheusMetrics(a.registry)
	if err != nil {
		return nil, fmt.Errorf("wallet metrics: %w", err)
	}
	for i := range cfg.Operators {
		op := &cfg.Operators[i]
		if !op.HasWallet() {
			continue
		}
		c, err := wallet.NewClient(walletSettings(op), wallet.WithLogger(logger), wallet.WithMetrics(metrics))
		if err != nil {
			return nil, fmt.Errorf("wallet client of %s: %w", op.ID, err)
		}
		a.clients[op.ID] = c
	}
	a.freebets, err = freebets.New(st, freebets.Options{Registerer: a.registry, Logger: logger})
	if err != nil {
		return nil, err
	}
	tk := tickets.New(st, time.Now)
	a.sessions, err = sessions.New(sessions.Options{
		Operators: sessionOperators(cfg), Games: gameIDs(cfg),
		Languages: config.Languages, DefaultLanguage: cfg.DefaultLanguage,
		Store: st, Tickets: tk,
		Wallets: func(op string) (sessions.Balancer, bool) {
			c, ok := a.clients[op]
			return c, ok
		},
		Freebets: a.freebets, Demo: a.demo, Logger: logger,
	})
	if err != nil {
		return nil, err
	}
	// The engine queues wins and rollbacks in the outbox; the queue, built
	// last, delivers them.
	outbox := wallet.NewOutbox(st)
	operators := engineOperators(cfg)
	for i := range cfg.Games {
		g := &cfg.Games[i]
		t, err := engine.New(ctx, engine.Config{
			Game:      engineGame(g),
			Operators: operators,
			Store:     st,
			Outbox:    outbox,
			Wallets: func(op string) (engine.BetWallet, bool) {
				c, ok := a.clients[op]
				return c, ok
			},
			Freebets: spender{a.freebets},
			Balances: a.sessions,
			Demo:     a.demo,
			Logger:   logger,
		})
		if err != nil {
			return nil, err
		}
		if _, err := t.Recover(ctx); err != nil {
			return nil, err
		}
		a.tables[g.ID] = t
	}
	a.table, err = table.New(table.Config{
		BaseURL: cfg.BaseURL, DefaultLanguage: cfg.DefaultLanguage, Limits: tableLimits(cfg),
		Sessions: a.sessions, Records: st, Logger: logger,
		Tables: func(id string) (*engine.Table, bool) {
			t, ok := a.tables[id]
			return t, ok
		},
	})
	if err != nil {
		return nil, err
	}
	a.queue, err = wallet.NewQueue(st, outbox, a.client,
		wallet.WithQueueLogger(logger), wallet.WithRegisterer(a.registry),
		// The balance shown to the player follows the /win answers (BAL-4).
		wallet.WithOnSettled(a.table.WalletSettled))
	if err != nil {
		return nil, fmt.Errorf("movement queue: %w", err)
	}
	a.operators = operatorapi.New(operatorCredentials(cfg), launch.New(launchInstallation(cfg), tk), logger, time.Now)
	return a, nil
}

// close releases what the parts hold, after the HTTP server stopped.
func (a *app) close() {
	a.table.Close()
	if err := a.sessions.Close(); err != nil {
		a.logger.Warn("closing sessions", "err", err)
	}
}

func (a *app) client(operator string) (*wallet.Client, bool) {
	c, ok := a.clients[operator]
	return c, ok
}

// start runs the queue and the tables until ctx ends.
func (a *app) start(ctx context.Context) {
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		if err := a.queue.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
			a.logger.Error("movement queue stopped", "err", err)
		}
	}()
	for id, t := range a.tables {
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			if err := t.Run(ctx); err != nil {
				a.logger.Error("table stopped", "game_id", id, "err", err)
			}
		}()
	}
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
