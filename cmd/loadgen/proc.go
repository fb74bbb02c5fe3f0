package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// procSample is one look at the game process and its queue.
type procSample struct {
	At         float64 `json:"t_s"`
	CPUSeconds float64 `json:"cpu_s"` // user+system since the process started
	RSSBytes   int64   `json:"rss_bytes"`
	Pending    float64 `json:"queue_pending"`
	Exhausted  float64 `json:"queue_exhausted"`
	Goroutines float64 `json:"goroutines"`
	Messages   float64 `json:"stream_messages"` // crashgame_stream_messages_total: one frame each
	// Writes is crashgame_stream_writes_total, the system calls that carried
	// them (a single process's only: a cluster run leaves it 0).
	Writes float64 `json:"stream_writes,omitempty"`
}

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat times: 100 on Linux
// everywhere Go runs.
const clockTicks = 100

// readProc reads the CPU time and resident memory of pid from /proc.
func readProc(pid int) (cpu float64, rss int64, err error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, err
	}
	// The command name may hold spaces: fields count from after its ')'.
	s := string(raw)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0, 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	ut, _ := strconv.ParseFloat(f[11], 64) // field 14, utime
	st, _ := strconv.ParseFloat(f[12], 64) // field 15, stime
	cpu = (ut + st) / clockTicks
	status, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return cpu, 0, err
	}
	defer status.Close()
	sc := bufio.NewScanner(status)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			rss = kb * 1024
		}
	}
	return cpu, rss, sc.Err()
}

// scrapeMetrics reads the game's /metrics as "name{labels}" -> value.
func scrapeMetrics(base string) (map[string]float64, error) {
	hc := http.Client{Timeout: 5 * time.Second}
	resp, err := hc.Get(base + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("/metrics: %s", resp.Status)
	}
	return parseMetrics(resp.Body)
}

// parseMetrics reads Prometheus' text format as "name{labels}" -> value;
// comments and lines whose value is not a number are skipped.
func parseMetrics(r io.Reader) (map[string]float64, error) {
	out := map[string]float64{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err == nil {
			out[line[:i]] = v
		}
	}
	return out, sc.Err()
}

// sample looks at the game every second until ctx ends.
func (lg *loadgen) sample(ctx context.Context) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		s := procSample{At: time.Since(lg.rec.start).Seconds()}
		if len(lg.o.replicas) > 0 {
			lg.sampleReplicas(&s) // the cluster's sums, replica by replica
		} else {
			lg.sampleGame(&s)
		}
		lg.samplesMu.Lock()
		lg.samples = append(lg.samples, s)
		lg.samplesMu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// sampleGame reads the one game process: /proc when its pid is known, and
// its /metrics.
func (lg *loadgen) sampleGame(s *procSample) {
	if lg.o.gamePID > 0 {
		s.CPUSeconds, s.RSSBytes, _ = readProc(lg.o.gamePID)
	}
	if m, err := scrapeMetrics(lg.o.metricsURL); err == nil {
		s.Pending = m[metricPending]
		s.Exhausted = m[`crashgame_wallet_queue_movements{status="exhausted"}`]
		s.Goroutines = m["go_goroutines"]
		s.Messages = m[metricMessages]
		s.Writes = m[metricWrites]
		if lg.o.gamePID <= 0 {
			s.CPUSeconds = m[metricCPU]
			s.RSSBytes = int64(m[metricRSS])
		}
	}
}

// machineInfo is the machine the run was made on.
type machineInfo struct {
	CPUs     int    `json:"nproc"`
	CPUModel string `json:"cpu_model"`
	MemBytes int64  `json:"mem_total_bytes"`
	Kernel   string `json:"kernel"`
	Go       string `json:"go"`
}

func machine() machineInfo {
	m := machineInfo{CPUs: runtime.NumCPU(), Go: runtime.Version()}
	if raw, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(raw), "\n") {
			if v, ok := strings.CutPrefix(l, "model name"); ok {
				m.CPUModel = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
				break
			}
		}
	}
	if raw, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, l := range strings.Split(string(raw), "\n") {
			if v, ok := strings.CutPrefix(l, "MemTotal:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
				m.MemBytes = kb * 1024
			}
		}
	}
	if raw, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(raw))
	}
	return m
}
