package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/crashstudio/crashgame/internal/config"
	"github.com/crashstudio/crashgame/internal/replica"
	"github.com/crashstudio/crashgame/internal/store"
)

// clusterHealth watches, in a cluster, whether this replica still reaches
// NATS and its database and keeps its clock in step with the database's
// (replica.Health): cut off from either for longer than the lease TTL, or
// its clock more than replica.SkewBound away, /readyz fails (readiness) and
// the replica takes no bet or new stream; it leads no table while NATS is
// unreached or its clock is out of step (the database is the lease's own
// renewals' to judge: app.leadable); when NATS is the
// one unreached, or the clock is out of step, the player streams close with
// 1001 after cluster.drain_ms so that the pages reconnect through the load
// balancer to another replica (the database alone closes none: the streams
// are fed through NATS). Its clock's measured offset is a metric.
// nil for one process.
func clusterHealth(cfg *config.Config, a *app, st *store.Store, logger *slog.Logger) (*replica.Health, error) {
	if cfg.Cluster == nil || a.bus == nil {
		return nil, nil
	}
	h, err := replica.NewHealth(replica.HealthConfig{
		Bus: a.bus, Database: st, Limit: cfg.Cluster.LeaseTTL(), Drain: cfg.Cluster.Drain(),
		Away: func() {
			if n := a.table.Leave(); n > 0 {
				logger.Warn("cut off from the cluster: streams closed with 1001", "streams", n)
			}
		},
		Logger: logger,
	})
	if err != nil {
		return nil, err
	}
	if err := registerClock(a.registry, h); err != nil {
		return nil, err
	}
	return h, nil
}

// registerClock exports the replica's measured clock offset to the
// database's, and its uncertainty.
func registerClock(r prometheus.Registerer, h *replica.Health) error {
	offset := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "crashgame_cluster_clock_offset_seconds",
		Help: fmt.Sprintf("This replica's clock minus the database server's, from the most precise of the last probes; the replica is cut off beyond ±%s (replica.SkewBound).", replica.SkewBound),
	}, func() float64 {
		off, _, _ := h.ClockOffset()
		return off.Seconds()
	})
	uncertainty := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "crashgame_cluster_clock_uncertainty_seconds",
		Help: "Half the round trip of the probe that crashgame_cluster_clock_offset_seconds comes from: the offset is known to within it.",
	}, func() float64 {
		_, u, _ := h.ClockOffset()
		return u.Seconds()
	})
	for _, c := range []prometheus.Collector{offset, uncertainty} {
		if err := r.Register(c); err != nil {
			return fmt.Errorf("clock metrics: %w", err)
		}
	}
	return nil
}

// readiness is /readyz's check: the app's own (app.ready), and in a cluster
// that the replica is not cut off.
func readiness(a *app, h *replica.Health) func(context.Context) error {
	return func(ctx context.Context) error {
		if h != nil {
			if err := h.CutOff(); err != nil {
				return err
			}
		}
		return a.ready(ctx)
	}
}
