package movements

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/crashstudio/crashgame/internal/wallet"
)

// WithRegisterer registers the queue's Prometheus metrics with r and feeds
// them: crashgame_wallet_queue_movements{status} (pending, refused, exhausted,
// counted at each scrape), crashgame_wallet_queue_attempts_total{kind,outcome},
// crashgame_wallet_queue_exhausted_total{kind} and
// crashgame_wallet_queue_delivery_seconds{kind}. A nil r registers nothing.
func WithRegisterer(r prometheus.Registerer) QueueOption {
	return func(q *Queue) {
		if r == nil {
			return
		}
		q.setup = append(q.setup, func(q *Queue) error {
			m, err := newQueuePrometheus(r, q)
			if err != nil {
				return err
			}
			q.metrics = m
			return nil
		})
	}
}

type queuePrometheus struct {
	attempts  *prometheus.CounterVec
	exhausted *prometheus.CounterVec
	latency   *prometheus.HistogramVec
}

// depthTimeout bounds the count behind the depth gauge at each scrape.
const depthTimeout = 2 * time.Second

func newQueuePrometheus(r prometheus.Registerer, q *Queue) (*queuePrometheus, error) {
	m := &queuePrometheus{
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "crashgame_wallet_queue_attempts_total",
			Help: "Attempts sent by the movement queue, by kind (win, rollback) and outcome (success, refused, temporary).",
		}, []string{"kind", "outcome"}),
		exhausted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "crashgame_wallet_queue_exhausted_total",
			Help: "Movements parked as exhausted after their last attempt (LIM-2), by kind.",
		}, []string{"kind"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "crashgame_wallet_queue_delivery_seconds",
			Help:    "Time from a movement's enqueue to the operator's recorded success, by kind.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600},
		}, []string{"kind"}),
	}
	depth := depthCollector{q: q, desc: prometheus.NewDesc("crashgame_wallet_queue_movements",
		"Movements in the queue by status (pending, refused, exhausted); done ones are not counted.",
		[]string{"status"}, nil)}
	for _, c := range []prometheus.Collector{m.attempts, m.exhausted, m.latency, depth} {
		if err := r.Register(c); err != nil {
			return nil, fmt.Errorf("register queue metrics: %w", err)
		}
	}
	for _, k := range []MovementKind{KindWin, KindRollback} { // every series from the start, at zero
		for _, o := range []wallet.Outcome{wallet.Success, wallet.Refused, wallet.Temporary} {
			m.attempts.WithLabelValues(string(k), o.String())
		}
		m.exhausted.WithLabelValues(string(k))
	}
	return m, nil
}

func (m *queuePrometheus) Attempt(k MovementKind, o wallet.Outcome) {
	m.attempts.WithLabelValues(string(k), o.String()).Inc()
}

func (m *queuePrometheus) Exhausted(k MovementKind) { m.exhausted.WithLabelValues(string(k)).Inc() }

func (m *queuePrometheus) Delivered(k MovementKind, d time.Duration) {
	m.latency.WithLabelValues(string(k)).Observe(max(d, 0).Seconds())
}

// depthCollector counts the movements by status at each scrape.
type depthCollector struct {
	q    *Queue
	desc *prometheus.Desc
}

func (c depthCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c depthCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), depthTimeout)
	defer cancel()
	counts, err := c.q.Depth(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.desc, err)
		return
	}
	for _, s := range []MovementStatus{StatusPending, StatusRefused, StatusExhausted} {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(counts[s]), string(s))
	}
}
