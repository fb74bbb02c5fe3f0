package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"strings"
	"sync"

	"github.com/crashstudio/crashgame/internal/engine"
	"github.com/crashstudio/crashgame/internal/store"
)

// replicaTarget is one replica of a cluster whose /metrics the run reads.
type replicaTarget struct {
	Name string `json:"name"`
	URL  string `json:"metrics_url"` // base address; /metrics is appended
}

// parseReplicas reads --replicas: "name=http://host:port" entries, comma-
// separated (the replicas' metrics_listen addresses).
func parseReplicas(s string) ([]replicaTarget, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []replicaTarget
	seen := map[string]bool{}
	for _, e := range strings.Split(s, ",") {
		e = strings.TrimSpace(e)
		name, raw, ok := strings.Cut(e, "=")
		name, raw = strings.TrimSpace(name), strings.TrimRight(strings.TrimSpace(raw), "/")
		if !ok || name == "" || raw == "" {
			return nil, fmt.Errorf("--replicas: %q is not name=http://host:port", e)
		}
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("--replicas: %s: %q is not an http(s) address", name, raw)
		}
		if seen[name] {
			return nil, fmt.Errorf("--replicas: %s named twice", name)
		}
		seen[name] = true
		out = append(out, replicaTarget{Name: name, URL: raw})
	}
	return out, nil
}

// Metrics the run reads of each replica.
const (
	metricCPU      = "process_cpu_seconds_total"
	metricRSS      = "process_resident_memory_bytes"
	metricMessages = "crashgame_stream_messages_total"
	metricWrites   = "crashgame_stream_writes_total"
	metricStreams  = "crashgame_streams_open"
	metricPending  = `crashgame_wallet_queue_movements{status="pending"}`
	metricLeader   = "crashgame_cluster_leader"
	metricStart    = "process_start_time_seconds"
)

// replicaSample is one look at one replica's /metrics.
type replicaSample struct {
	At         float64 `json:"t_s"`
	OK         bool    `json:"ok"` // false: the scrape failed, the values are the last ones read
	CPUSeconds float64 `json:"cpu_s"`
	RSSBytes   int64   `json:"rss_bytes"`
	Messages   float64 `json:"stream_messages"`
	Streams    float64 `json:"streams_open"`
	Pending    float64 `json:"queue_pending"`
	Leads      int     `json:"tables_led"`
	// Start is when the replica's process started (Unix seconds): a new
	// value is a restart (a rolling deploy recreates every replica).
	Start float64 `json:"process_start_s"`
}

// counterCarry keeps one replica's counters (CPU seconds, stream messages)
// growing across restarts of its process, whose counters start again from
// zero: after a restart, the last values read before it are added to every
// later one. What the old process did between its last scrape and its end
// is not known, and counts as nothing.
type counterCarry struct {
	seen             bool
	start, cpu, msgs float64 // the raw values of the last scrape
	offCPU, offMsgs  float64 // added to the raw values since the last restart
}

// carry turns rs, as scraped, into values that continue the earlier ones. A
// restart is a new process start time, or (when none is exposed) a counter
// that went down.
func (c *counterCarry) carry(rs *replicaSample) {
	if c.seen && (rs.Start != c.start || rs.CPUSeconds < c.cpu || rs.Messages < c.msgs) {
		c.offCPU += c.cpu
		c.offMsgs += c.msgs
	}
	c.seen, c.start, c.cpu, c.msgs = true, rs.Start, rs.CPUSeconds, rs.Messages
	rs.CPUSeconds += c.offCPU
	rs.Messages += c.offMsgs
}

// replicaSampleOf reads a sample out of a scrape.
func replicaSampleOf(at float64, m map[string]float64) replicaSample {
	s := replicaSample{At: at, OK: true, CPUSeconds: m[metricCPU], RSSBytes: int64(m[metricRSS]),
		Messages: m[metricMessages], Streams: m[metricStreams], Pending: m[metricPending], Start: m[metricStart]}
	for k, v := range m {
		if v == 1 && (k == metricLeader || strings.HasPrefix(k, metricLeader+"{")) {
			s.Leads++
		}
	}
	return s
}

// replicaResult is what the run says of one replica.
type replicaResult struct {
	replicaTarget
	StreamsConnected  float64         `json:"streams_connected"` // at the end of the quiet wait
	StreamsPeak       float64         `json:"streams_peak"`
	MessagesPerSec    float64         `json:"stream_messages_per_s_playing"` // mean over the rounds
	MessagesPeak1s    float64         `json:"stream_messages_peak_1s_per_s"`
	CPUCoresPlaying   float64         `json:"cpu_cores_while_playing"`
	CPUCoresPeak1s    float64         `json:"cpu_cores_peak_1s"`
	CPUCoresIdle      float64         `json:"cpu_cores_connected_idle"`
	IdleRSSBytes      int64           `json:"rss_idle_bytes"`
	ConnectedRSSBytes int64           `json:"rss_connected_bytes"`
	PeakRSSBytes      int64           `json:"rss_peak_bytes"`
	LedTables         bool            `json:"led_a_table"`
	Restarts          int             `json:"restarts"` // of its process during the run: its counters were carried over
	FailedScrapes     int             `json:"failed_scrapes"`
	Samples           []replicaSample `json:"samples"`
}

// summariseReplica derives a replica's figures from its samples: idle (the
// first sample), connected (the quiet wait between connectedAt and
// loadedAt), and playing (loadedAt to playedUntil); peaks are over
// consecutive samples.
func summariseReplica(t replicaTarget, ss []replicaSample, connectedAt, loadedAt, playedUntil float64) replicaResult {
	r := replicaResult{replicaTarget: t, Samples: ss}
	var idle, quiet, loaded, first, last *replicaSample
	var start float64
	for i := range ss {
		s := &ss[i]
		if !s.OK {
			r.FailedScrapes++
			continue
		}
		if start != 0 && s.Start != start {
			r.Restarts++
		}
		start = s.Start
		r.PeakRSSBytes = max(r.PeakRSSBytes, s.RSSBytes)
		r.StreamsPeak = max(r.StreamsPeak, s.Streams)
		r.LedTables = r.LedTables || s.Leads > 0
		if idle == nil {
			idle = s
		}
		if quiet == nil && s.At >= connectedAt {
			quiet = s
		}
		if s.At <= loadedAt {
			loaded = s
		}
		if first == nil && s.At >= loadedAt {
			first = s
		}
		if s.At <= playedUntil {
			last = s
		}
	}
	if idle != nil {
		r.IdleRSSBytes = idle.RSSBytes
	}
	if loaded != nil {
		r.ConnectedRSSBytes, r.StreamsConnected = loaded.RSSBytes, loaded.Streams
		if quiet != nil && loaded.At > quiet.At {
			r.CPUCoresIdle = (loaded.CPUSeconds - quiet.CPUSeconds) / (loaded.At - quiet.At)
		}
	}
	if first != nil && last != nil && last.At > first.At {
		d := last.At - first.At
		r.CPUCoresPlaying = (last.CPUSeconds - first.CPUSeconds) / d
		r.MessagesPerSec = (last.Messages - first.Messages) / d
	}
	var prev *replicaSample
	for i := range ss {
		s := &ss[i]
		if !s.OK {
			continue
		}
		if prev != nil && s.At > prev.At && s.Messages >= prev.Messages {
			d := s.At - prev.At
			r.MessagesPeak1s = max(r.MessagesPeak1s, (s.Messages-prev.Messages)/d)
			r.CPUCoresPeak1s = max(r.CPUCoresPeak1s, (s.CPUSeconds-prev.CPUSeconds)/d)
		}
		prev = s
	}
	return r
}

// sampleReplicas scrapes every replica once, at the same moment, and records
// the cluster's sums in s (CPU, memory, stream messages; the queue's depth is the database's,
// so any replica's figure is it).
func (lg *loadgen) sampleReplicas(s *procSample) {
	type got struct {
		m   map[string]float64
		err error
	}
	res := make([]got, len(lg.o.replicas))
	var wg sync.WaitGroup
	for i, t := range lg.o.replicas {
		wg.Go(func() {
			m, err := scrapeMetrics(t.URL)
			res[i] = got{m, err}
		})
	}
	wg.Wait()
	lg.samplesMu.Lock()
	defer lg.samplesMu.Unlock()
	if lg.replicaSamples == nil {
		lg.replicaSamples = make([][]replicaSample, len(lg.o.replicas))
		lg.carries = make([]counterCarry, len(lg.o.replicas))
	}
	for i := range lg.o.replicas {
		var rs replicaSample
		if res[i].err == nil {
			rs = replicaSampleOf(s.At, res[i].m)
			lg.carries[i].carry(&rs)
			s.Goroutines += res[i].m["go_goroutines"]
		} else if n := len(lg.replicaSamples[i]); n > 0 {
			rs = lg.replicaSamples[i][n-1]
			rs.At, rs.OK = s.At, false
		} else {
			rs = replicaSample{At: s.At}
		}
		lg.replicaSamples[i] = append(lg.replicaSamples[i], rs)
		s.CPUSeconds += rs.CPUSeconds
		s.RSSBytes += rs.RSSBytes
		s.Messages += rs.Messages
		s.Pending = max(s.Pending, rs.Pending)
	}
}

// openStore opens the game's database without its log lines.
func openStore(ctx context.Context, dsn string) (*store.Store, error) {
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
	defer slog.SetDefault(prev)
	return store.Open(ctx, dsn)
}

// openBets counts the bets still open: pending (the operator's answer not
// known yet) or accepted (in a round not ended).
func openBets(bets []store.ReconcileBetRecord) int {
	n := 0
	for _, b := range bets {
		if b.Status == engine.StatusPending || b.Status == engine.StatusAccepted {
			n++
		}
	}
	return n
}

// drainCheck says how the run learns that the movement queue drained, and
// answers whether it has. The queue is the game database's, one for every
// replica: read there when the database is given (not with --self, whose
// SQLite file the running game holds); else every replica's /metrics must
// answer 0 pending (a replica that does not answer keeps it "not drained");
// else the one game's /metrics (at --metrics-url).
func (lg *loadgen) drainCheck(ctx context.Context) (check func() (bool, error), how string, done func(), err error) {
	o := lg.o
	switch {
	case o.gameDB != "" && !o.self:
		st, err := openStore(ctx, o.gameDB)
		if err != nil {
			return nil, "", nil, fmt.Errorf("opening the game's database for the drain check: %w", err)
		}
		return func() (bool, error) {
			n, err := st.CountMovements(ctx, "pending")
			if err != nil || n["pending"] > 0 {
				return false, err
			}
			// A bet a leader left pending at its fail-over is settled by the
			// next one, maybe in a round after the run's last.
			bets, err := st.ReconcileBets(ctx, store.ReconcileFilter{PlayerPrefix: o.playerPrefx})
			if err != nil {
				return false, err
			}
			return openBets(bets) == 0, nil
		}, "no movement pending and no bet of the run's players open in the game's database", func() { _ = st.Close() }, nil
	case len(o.replicas) > 0:
		return func() (bool, error) {
			for _, t := range o.replicas {
				m, err := scrapeMetrics(t.URL)
				if err != nil {
					return false, fmt.Errorf("%s: %w", t.Name, err)
				}
				if v, ok := m[metricPending]; !ok || v != 0 {
					return false, nil
				}
			}
			return true, nil
		}, fmt.Sprintf("0 pending in the /metrics of every replica (%d)", len(o.replicas)), func() {}, nil
	default:
		return func() (bool, error) {
			m, err := scrapeMetrics(o.metricsURL)
			if err != nil {
				return false, err
			}
			v, ok := m[metricPending]
			return ok && v == 0, nil
		}, "0 pending in the game's /metrics", func() {}, nil
	}
}
