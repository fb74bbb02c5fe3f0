package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/internal/store"
)

func TestParseReplicas(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in      string
		want    []replicaTarget
		wantErr string
	}{
		{in: "", want: nil},
		{in: "game1=http://172.20.0.5:9090", want: []replicaTarget{{"game1", "http://172.20.0.5:9090"}}},
		{in: " game1 = http://a:9090/ , game2=https://b:9090", want: []replicaTarget{{"game1", "http://a:9090"}, {"game2", "https://b:9090"}}},
		{in: "http://a:9090", wantErr: "not name=http://host:port"},
		{in: "game1=", wantErr: "not name=http://host:port"},
		{in: "game1=a:9090", wantErr: "not an http(s) address"},
		{in: "game1=http://a:9090,game1=http://b:9090", wantErr: "named twice"},
	} {
		got, err := parseReplicas(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("parseReplicas(%q) error = %v, want %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("parseReplicas(%q): %v", tc.in, err)
			continue
		}
		if len(got) != len(tc.want) {
			t.Errorf("parseReplicas(%q) = %v, want %v", tc.in, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("parseReplicas(%q)[%d] = %v, want %v", tc.in, i, got[i], tc.want[i])
			}
		}
	}
}

// A replica's /metrics as the game writes it.
const replicaExposition = `# HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.
# TYPE process_cpu_seconds_total counter
process_cpu_seconds_total 12.34
process_resident_memory_bytes 5.24288e+07
crashgame_stream_messages_total 123456
crashgame_streams_open 667
crashgame_wallet_queue_movements{status="exhausted"} 0
crashgame_wallet_queue_movements{status="pending"} 3
crashgame_cluster_leader{game_id="crash"} 1
crashgame_cluster_leader{game_id="other"} 0
go_goroutines 2100
a_line_without_value
`

func TestReplicaSampleOf(t *testing.T) {
	t.Parallel()
	m, err := parseMetrics(strings.NewReader(replicaExposition))
	if err != nil {
		t.Fatal(err)
	}
	got := replicaSampleOf(7.5, m)
	want := replicaSample{At: 7.5, OK: true, CPUSeconds: 12.34, RSSBytes: 52428800, Messages: 123456, Streams: 667, Pending: 3, Leads: 1}
	if got != want {
		t.Fatalf("replicaSampleOf = %+v, want %+v", got, want)
	}
	if s := replicaSampleOf(0, map[string]float64{`crashgame_cluster_leader{game_id="crash"}`: 0}); s.Leads != 0 {
		t.Fatalf("a follower leads %d tables", s.Leads)
	}
}

func TestSummariseReplica(t *testing.T) {
	t.Parallel()
	ok := func(at, cpu, msgs, streams float64, rss int64) replicaSample {
		return replicaSample{At: at, OK: true, CPUSeconds: cpu, Messages: msgs, Streams: streams, RSSBytes: rss}
	}
	ss := []replicaSample{
		ok(0, 1, 0, 0, 40<<20),       // idle
		ok(1, 1.5, 0, 100, 50<<20),   // setting up
		ok(2, 2, 100, 300, 60<<20),   // connected (connectedAt 1.8)
		ok(3, 2.1, 200, 300, 60<<20), // quiet wait
		ok(4, 2.2, 300, 300, 60<<20), // loaded (loadedAt 4)
		ok(5, 3.2, 5300, 300, 80<<20),
		{At: 6, OK: false, CPUSeconds: 3.2, Messages: 5300, Streams: 300, RSSBytes: 80 << 20}, // a failed scrape
		ok(7, 3.8, 7300, 300, 70<<20),
		ok(8, 3.9, 7400, 300, 70<<20), // playedUntil 8
		ok(9, 4, 7400, 0, 70<<20),     // draining
	}
	r := summariseReplica(replicaTarget{Name: "game1"}, ss, 1.8, 4, 8)
	near := func(name string, got, want float64) {
		t.Helper()
		if got < want-1e-9 || got > want+1e-9 {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	near("CPUCoresIdle", r.CPUCoresIdle, 0.1)                // (2.2-2)/(4-2)
	near("CPUCoresPlaying", r.CPUCoresPlaying, (3.9-2.2)/4)  // 4 to 8
	near("MessagesPerSec", r.MessagesPerSec, (7400-300)/4.0) // 4 to 8
	near("MessagesPeak1s", r.MessagesPeak1s, 5000)           // 4 to 5
	near("CPUCoresPeak1s", r.CPUCoresPeak1s, 1)              // 4 to 5
	near("StreamsConnected", r.StreamsConnected, 300)
	near("StreamsPeak", r.StreamsPeak, 300)
	if r.IdleRSSBytes != 40<<20 || r.ConnectedRSSBytes != 60<<20 || r.PeakRSSBytes != 80<<20 {
		t.Errorf("rss idle %d connected %d peak %d", r.IdleRSSBytes, r.ConnectedRSSBytes, r.PeakRSSBytes)
	}
	if r.FailedScrapes != 1 {
		t.Errorf("FailedScrapes = %d, want 1", r.FailedScrapes)
	}
	if r.LedTables {
		t.Error("LedTables with no sample leading")
	}
}

func TestGroupAddress(t *testing.T) {
	t.Parallel()
	for i, want := range map[int]string{0: "127.1.0.1", 249: "127.1.0.250", 250: "127.1.1.1", 401: "127.1.1.152"} {
		if got := groupAddress(i).String(); got != want {
			t.Errorf("groupAddress(%d) = %s, want %s", i, got, want)
		}
	}
}

// With --forwarded every request and stream handshake of a player names its
// group's address in X-Forwarded-For; without it, none does.
func TestForwardedFor(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	seen := map[string]string{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.URL.Path] = r.Header.Get("X-Forwarded-For")
		mu.Unlock()
		w.WriteHeader(http.StatusTeapot) // the stream's handshake fails here, its header seen
	}))
	t.Cleanup(srv.Close)
	for _, forwarded := range []bool{true, false} {
		lg := &loadgen{o: &options{url: srv.URL}, dropCodes: map[string]int{}}
		p := &player{g: newGroup(251, 5, forwarded, "", ""), lg: lg, session: "s"}
		if _, _, _, err := p.apiCall(context.Background(), http.MethodGet, "/api/v1/session", nil, nil); err != nil {
			t.Fatal(err)
		}
		opened := make(chan error, 1)
		p.play(context.Background(), opened)
		if err := <-opened; err == nil {
			t.Fatal("the stream opened against a server that refuses it")
		}
		want := ""
		if forwarded {
			want = "127.1.1.2"
		}
		mu.Lock()
		for _, path := range []string{"/api/v1/session", "/api/v1/stream"} {
			if seen[path] != want {
				t.Errorf("forwarded %t: %s X-Forwarded-For %q, want %q", forwarded, path, seen[path], want)
			}
		}
		mu.Unlock()
	}
}

func TestFlagsForwardedNotWithSelf(t *testing.T) {
	t.Parallel()
	var sink strings.Builder
	if _, err := parseFlags([]string{"--self", "--forwarded"}, &sink); err == nil {
		t.Error("--self --forwarded accepted")
	}
	if _, err := parseFlags([]string{"--self", "--replicas", "game1=http://a:9090"}, &sink); err == nil {
		t.Error("--self --replicas accepted")
	}
	o, err := parseFlags([]string{"--url", "http://localhost:8080", "--operator-url", "http://localhost:8081", "--forwarded",
		"--replicas", "game1=http://a:9090,game2=http://b:9090"}, &sink)
	if err != nil {
		t.Fatal(err)
	}
	if !o.forwarded || len(o.replicas) != 2 {
		t.Fatalf("forwarded %t, replicas %v", o.forwarded, o.replicas)
	}
}

// Without the game's database, the queue is drained only when every replica
// says so: one replica at 0 is not enough, and one that does not answer keeps
// it not drained.
func TestDrainCheckAsksEveryReplica(t *testing.T) {
	t.Parallel()
	metrics := func(pending string) *httptest.Server {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if pending == "" {
				http.Error(w, "down", http.StatusServiceUnavailable)
				return
			}
			_, _ = w.Write([]byte(`crashgame_wallet_queue_movements{status="pending"} ` + pending + "\n"))
		}))
		t.Cleanup(srv.Close)
		return srv
	}
	zero, two, down := metrics("0"), metrics("2"), metrics("")
	for _, tc := range []struct {
		name    string
		urls    []string
		drained bool
		err     bool
	}{
		{"all at zero", []string{zero.URL, zero.URL, zero.URL}, true, false},
		{"one pending", []string{zero.URL, two.URL, zero.URL}, false, false},
		{"one not answering", []string{zero.URL, zero.URL, down.URL}, false, true},
	} {
		o := &options{url: "http://unused.invalid"}
		for i, u := range tc.urls {
			o.replicas = append(o.replicas, replicaTarget{Name: "game" + string(rune('1'+i)), URL: u})
		}
		lg := &loadgen{o: o}
		check, how, done, err := lg.drainCheck(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		drained, err := check()
		done()
		if drained != tc.drained || (err != nil) != tc.err {
			t.Errorf("%s: drained %t err %v, want drained %t err %t", tc.name, drained, err, tc.drained, tc.err)
		}
		if !strings.Contains(how, "every replica (3)") {
			t.Errorf("%s: checked by %q", tc.name, how)
		}
	}
}

// A round a new leader settles by the fail-over rule never crashes on the
// streams: the next round's betting ends it, and the run still finishes.
func TestRoundInterruptedByFailover(t *testing.T) {
	t.Parallel()
	lg := &loadgen{o: &options{rounds: 3}, rec: &recorder{start: time.Now(), by: map[string][]sample{}},
		crashed: map[string]bool{}, allCrashed: make(chan struct{}), roundTimes: map[string]*roundStat{}}
	// A round in betting during the set-up is never played, even once the
	// quiet wait is over: its window was partly spent.
	if lg.admitRound("r0") {
		t.Fatal("a round admitted during the set-up")
	}
	lg.startPlaying()
	if lg.admitRound("r0") {
		t.Fatal("a round seen during the set-up admitted after it")
	}
	for _, step := range []struct {
		betting, crashed string
	}{
		{betting: "r1"}, {crashed: "r1"},
		{betting: "r2"},                  // its leader loses the lease: no crash
		{betting: "r3"}, {betting: "r3"}, // seen by two players
		{crashed: "r3"},
	} {
		if step.betting != "" && !lg.admitRound(step.betting) {
			t.Fatalf("round %s not admitted", step.betting)
		}
		if step.crashed != "" {
			lg.roundCrashed(step.crashed)
		}
	}
	select {
	case <-lg.allCrashed:
	default:
		t.Fatal("three rounds ended, the run still waits")
	}
	if len(lg.interrupted) != 1 || lg.interrupted[0] != "r2" {
		t.Fatalf("interrupted = %v, want [r2]", lg.interrupted)
	}
	if lg.admitRound("r4") {
		t.Fatal("a fourth round admitted for a run of three")
	}
}

func TestOpenBets(t *testing.T) {
	t.Parallel()
	var bets []store.ReconcileBetRecord
	for _, s := range []string{"pending", "accepted", "refused", "cashed_out", "lost", "cancelled", "void", "accepted"} {
		bets = append(bets, store.ReconcileBetRecord{Status: s})
	}
	if got := openBets(bets); got != 3 {
		t.Fatalf("openBets = %d, want 3 (one pending, two accepted)", got)
	}
}

// --addresses N puts player i behind address i mod N, every address holding
// its share; without it, five players share an address. Each address's
// players name it, and only it, in X-Forwarded-For (--forwarded).
func TestAddressPlan(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name               string
		players, addresses int
		wantGroups         int
		wantOf             map[int]int // player: group
		wantSizes          []int
	}{
		{"five a address", 12, 0, 3, map[int]int{0: 0, 4: 0, 5: 1, 11: 2}, []int{5, 5, 2}},
		{"2,000 behind 20", 2000, 20, 20, map[int]int{0: 0, 19: 19, 20: 0, 1999: 19}, slices.Repeat([]int{100}, 20)},
		{"uneven", 7, 3, 3, map[int]int{0: 0, 3: 0, 5: 2, 6: 0}, []int{3, 2, 2}},
		{"one address", 4, 1, 1, map[int]int{0: 0, 3: 0}, []int{4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a := addressPlan{players: tt.players, addresses: tt.addresses}
			if got := a.groups(); got != tt.wantGroups {
				t.Fatalf("groups = %d, want %d", got, tt.wantGroups)
			}
			for i, g := range tt.wantOf {
				if got := a.of(i); got != g {
					t.Errorf("player %d behind group %d, want %d", i, got, g)
				}
			}
			count := make([]int, a.groups())
			for i := range tt.players {
				count[a.of(i)]++
			}
			for g := range count {
				if a.size(g) != count[g] || count[g] != tt.wantSizes[g] {
					t.Errorf("group %d: size %d, holds %d, want %d", g, a.size(g), count[g], tt.wantSizes[g])
				}
			}
		})
	}
	// 2,000 players behind 20 addresses name 20 addresses, 100 players each.
	a := addressPlan{players: 2000, addresses: 20}
	groups := make([]*group, a.groups())
	for g := range groups {
		groups[g] = newGroup(g, a.size(g), true, "", "")
	}
	named := map[string]int{}
	for i := range 2000 {
		h := http.Header{}
		groups[a.of(i)].header(h)
		named[h.Get("X-Forwarded-For")]++
	}
	if len(named) != 20 {
		t.Fatalf("%d addresses named, want 20: %v", len(named), named)
	}
	for addr, n := range named {
		if n != 100 {
			t.Errorf("%s names %d players, want 100", addr, n)
		}
	}
}

func TestFlagsAddresses(t *testing.T) {
	t.Parallel()
	var sink strings.Builder
	for _, tt := range []struct {
		args    []string
		wantErr bool
	}{
		{[]string{"--players", "2000", "--addresses", "20"}, false},
		{[]string{"--players", "10", "--addresses", "0"}, false},
		{[]string{"--players", "10", "--addresses", "11"}, true},
		{[]string{"--players", "10", "--addresses", "-1"}, true},
	} {
		args := append([]string{"--url", "http://localhost:8080", "--operator-url", "http://localhost:8081"}, tt.args...)
		o, err := parseFlags(args, &sink)
		if (err != nil) != tt.wantErr {
			t.Errorf("%v: err %v, want error %t", tt.args, err, tt.wantErr)
		}
		if err == nil && o.view()["addresses"] != o.addresses {
			t.Errorf("%v: the result's configuration does not say --addresses", tt.args)
		}
	}
}

// A replica recreated during the run (a rolling deploy) starts its counters
// from zero: the load tool carries them over, so its CPU and message rates
// never go negative across the restart, and the restart is counted.
func TestCounterCarryAcrossRestarts(t *testing.T) {
	t.Parallel()
	raw := []replicaSample{
		{At: 0, OK: true, Start: 100, CPUSeconds: 1, Messages: 10},
		{At: 1, OK: true, Start: 100, CPUSeconds: 2, Messages: 50},
		{At: 2, OK: true, Start: 200, CPUSeconds: 0.5, Messages: 5}, // recreated
		{At: 3, OK: true, Start: 200, CPUSeconds: 1.5, Messages: 25},
		{At: 4, OK: true, Start: 300, CPUSeconds: 3, Messages: 60}, // recreated, counters already above the last
		{At: 5, OK: true, Start: 300, CPUSeconds: 4, Messages: 70},
	}
	wantCPU := []float64{1, 2, 2.5, 3.5, 6.5, 7.5}
	wantMsgs := []float64{10, 50, 55, 75, 135, 145}
	var c counterCarry
	ss := make([]replicaSample, len(raw))
	for i, rs := range raw {
		c.carry(&rs)
		if rs.CPUSeconds != wantCPU[i] || rs.Messages != wantMsgs[i] {
			t.Errorf("sample %d carried to cpu %v messages %v, want %v %v", i, rs.CPUSeconds, rs.Messages, wantCPU[i], wantMsgs[i])
		}
		ss[i] = rs
	}
	r := summariseReplica(replicaTarget{Name: "game2"}, ss, 0, 0, 5)
	if r.Restarts != 2 {
		t.Errorf("Restarts = %d, want 2", r.Restarts)
	}
	if r.CPUCoresPlaying < 0 || r.MessagesPerSec < 0 || r.MessagesPeak1s < 0 || r.CPUCoresPeak1s < 0 {
		t.Errorf("negative rates across restarts: %+v", r)
	}

	// Without a start time exposed, a counter that went down is the restart.
	var bare counterCarry
	for i, v := range []float64{5, 7, 1, 2} {
		rs := replicaSample{OK: true, CPUSeconds: v, Messages: v}
		bare.carry(&rs)
		if want := []float64{5, 7, 8, 9}[i]; rs.CPUSeconds != want {
			t.Errorf("bare sample %d carried to %v, want %v", i, rs.CPUSeconds, want)
		}
	}
}
