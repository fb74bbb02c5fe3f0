package table

import (
	"github.com/prometheus/client_golang/prometheus"

	promreg "github.com/crashstudio/crashgame/internal/metrics"
)

// registerMetrics registers the streams' collectors with r:
//
//   - crashgame_stream_messages_total: messages written to the players'
//     streams of this process (each table event counts once per stream it
//     reached, plus each stream's own balances, pongs and hello boards): the
//     fan-out a replica does, its rate the events fanned out per second;
//   - crashgame_stream_writes_total: the writes to the streams' sockets
//     that carried them: each stream writes what is due to it at one moment
//     in one write, so fewer than the messages;
//   - crashgame_streams_open: the streams this process holds.
//
// All three read counters the streams keep anyway, so a scrape costs the hot path
// nothing but one atomic add per write.
func (s *Server) registerMetrics(r prometheus.Registerer) error {
	messages := prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "crashgame_stream_messages_total",
		Help: "Messages written to the players' streams by this process (the events fanned out, one per stream reached).",
	}, func() float64 { return float64(s.streamMessages.Load()) })
	writes := prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "crashgame_stream_writes_total",
		Help: "Writes to the sockets of the players' streams by this process: the messages due to one stream at one moment leave in one write.",
	}, func() float64 { return float64(s.streamWrites.Load()) })
	open := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "crashgame_streams_open",
		Help: "Player streams this process holds.",
	}, func() float64 { return float64(s.open.Load()) })
	if _, err := promreg.Register(r, messages); err != nil {
		return err
	}
	for _, c := range []prometheus.Collector{writes, open} {
		if _, err := promreg.Register(r, c); err != nil {
			return err
		}
	}
	return nil
}
