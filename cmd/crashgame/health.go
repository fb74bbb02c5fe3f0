package main

import (
	"context"
	"log/slog"

	"github.com/crashstudio/crashgame/internal/config"
	"github.com/crashstudio/crashgame/internal/replica"
	"github.com/crashstudio/crashgame/internal/store"
)

// clusterHealth watches, in a cluster, whether this replica still reaches
// NATS and its database (replica.Health): cut off from either for longer
// than the lease TTL, /readyz fails (readiness) and, after cluster.drain_ms,
// the player streams close with 1001 so that the pages reconnect through the
// load balancer to another replica. nil for one process.
func clusterHealth(cfg *config.Config, a *app, st *store.Store, logger *slog.Logger) (*replica.Health, error) {
	if cfg.Cluster == nil || a.bus == nil {
		return nil, nil
	}
	return replica.NewHealth(replica.HealthConfig{
		Bus: a.bus, Database: st, Limit: cfg.Cluster.LeaseTTL(), Drain: cfg.Cluster.Drain(),
		Away: func() {
			if n := a.table.Leave(); n > 0 {
				logger.Warn("cut off from the cluster: streams closed with 1001", "streams", n)
			}
		},
		Logger: logger,
	})
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
