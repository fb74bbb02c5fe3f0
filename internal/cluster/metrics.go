package cluster

import (
	"github.com/prometheus/client_golang/prometheus"

	promreg "github.com/crashstudio/crashgame/internal/metrics"
)

// Outcomes of a forwarded request, the outcome label of
// crashgame_cluster_forward_seconds.
const (
	outcomeOK           = "ok"
	outcomeHandlerError = "handler_error"
	outcomeNoLeader     = "no_leader"
	outcomeUnavailable  = "unavailable"
)

// Reasons of a reported gap, the reason label of
// crashgame_cluster_events_gaps_total.
const (
	gapSequence  = "sequence"
	gapPublisher = "publisher"
)

// metrics are a Bus's collectors:
//
//   - crashgame_cluster_nats_reconnects_total: reconnections to NATS after a
//     lost connection;
//   - crashgame_cluster_forward_seconds{kind,outcome}: the latency of Request,
//     by action (ActionAdmit...; "other") and outcome (ok, handler_error,
//     no_leader, unavailable);
//   - crashgame_cluster_events_gaps_total{reason}: gaps a subscription found
//     in the events it received (those SubscribeFor skips included; the
//     next event handed over carries the gap), by reason: "sequence" (a
//     publisher's sequence jumped: events were lost) or "publisher" (the
//     first event of a publisher not heard before on the subject: a new
//     leader, a replica that restarted).
type metrics struct {
	reconnects prometheus.Counter
	forward    *prometheus.HistogramVec
	gaps       *prometheus.CounterVec
}

// newMetrics makes the collectors and registers them with r when r is not
// nil. Registering twice with the same r reuses the collectors already there
// (two Buses in one process count together).
func newMetrics(r prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		reconnects: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "crashgame_cluster_nats_reconnects_total",
			Help: "Reconnections to NATS after the connection was lost.",
		}),
		forward: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "crashgame_cluster_forward_seconds",
			Help:    "Latency of a player action forwarded to its table's leader, by action and outcome (ok, handler_error, no_leader, unavailable).",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
		}, []string{"kind", "outcome"}),
		gaps: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "crashgame_cluster_events_gaps_total",
			Help: "Gaps found in the table events a subscription received (continuity not proven: resynchronise), by reason (sequence, publisher).",
		}, []string{"reason"}),
	}
	if r == nil {
		return m, nil
	}
	if err := promreg.RegisterAll(r, promreg.VarOf(&m.reconnects), promreg.VarOf(&m.forward), promreg.VarOf(&m.gaps)); err != nil {
		return nil, err
	}
	return m, nil
}
