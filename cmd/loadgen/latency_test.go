package main

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

// exposition is /metrics as the game writes it: two status codes of the
// cashout route, one of the bet route, one of another route.
func exposition(cashout200 [4]int, cashout409 [4]int) string {
	var b strings.Builder
	b.WriteString("# HELP crashgame_http_request_duration_seconds x\n# TYPE crashgame_http_request_duration_seconds histogram\n")
	les := []string{"0.005", "0.01", "0.025", "+Inf"}
	for i, le := range les {
		b.WriteString(`crashgame_http_request_duration_seconds_bucket{code="200",route="POST /api/v1/bets/{bet_id}/cashout",le="` + le + `"} ` + strconv.Itoa(cashout200[i]) + "\n")
		b.WriteString(`crashgame_http_request_duration_seconds_bucket{code="409",route="POST /api/v1/bets/{bet_id}/cashout",le="` + le + `"} ` + strconv.Itoa(cashout409[i]) + "\n")
		b.WriteString(`crashgame_http_request_duration_seconds_bucket{code="201",route="POST /api/v1/bets",le="` + le + `"} 7` + "\n")
		b.WriteString(`crashgame_http_request_duration_seconds_bucket{code="200",route="GET /api/v1/bets",le="` + le + `"} 1000` + "\n")
	}
	b.WriteString(`crashgame_http_request_duration_seconds_count{code="200",route="POST /api/v1/bets/{bet_id}/cashout"} ` + strconv.Itoa(cashout200[3]) + "\n")
	return b.String()
}

func TestRouteBucketsSumsTheCodesOfOneRoute(t *testing.T) {
	t.Parallel()
	m, err := parseMetrics(strings.NewReader(exposition([4]int{50, 90, 99, 100}, [4]int{10, 10, 10, 10})))
	if err != nil {
		t.Fatal(err)
	}
	got := routeBuckets(m, routeCashout)
	want := buckets{0.005: 60, 0.01: 100, 0.025: 109, math.Inf(1): 110}
	if len(got) != len(want) {
		t.Fatalf("buckets %v, want %v", got, want)
	}
	for le, v := range want {
		if got[le] != v {
			t.Fatalf("buckets %v, want %v", got, want)
		}
	}
	if b := routeBuckets(m, routeBet); b[math.Inf(1)] != 7 {
		t.Fatalf("the bet route's buckets %v, want 7 in all", b)
	}
}

func TestBucketsSummary(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		b        buckets
		p50, p99 float64 // ms
		within   float64
	}{
		// 100 requests: 50 within 5 ms, 90 within 10, 99 within 25.
		{"interpolated in the bucket", buckets{0.005: 50, 0.01: 90, 0.025: 99, math.Inf(1): 100}, 5, 25, 0.9},
		{"the first bucket from zero", buckets{0.005: 100, 0.01: 100, math.Inf(1): 100}, 2.5, 4.95, 1},
		// The p99 beyond the last finite bound is that bound, as
		// histogram_quantile answers.
		{"in the +Inf bucket", buckets{0.005: 0, 0.01: 0, math.Inf(1): 10}, 10, 10, 0},
		{"nothing", buckets{}, 0, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := tc.b.summary()
			if math.Abs(s.P50-tc.p50) > 1e-9 || math.Abs(s.P99-tc.p99) > 1e-9 || s.Within10ms != tc.within {
				t.Fatalf("summary %+v, want p50 %v p99 %v within %v", s, tc.p50, tc.p99, tc.within)
			}
		})
	}
}

// A process that restarted between the readings is left out, not counted
// negative; one that answered is summed with the others, its tables'
// commits too.
func TestGameLatencyOverLeavesOutARestartedReplica(t *testing.T) {
	t.Parallel()
	lg := &loadgen{o: &options{replicas: []replicaTarget{{Name: "game1"}, {Name: "game2"}, {Name: "game3"}}}}
	read := func(cash float64) map[string]buckets {
		return map[string]buckets{
			routeBet:     {0.01: cash, math.Inf(1): cash},
			routeCashout: {0.01: cash, math.Inf(1): cash},
			commitWait:   {0.01: cash, math.Inf(1): cash},
			commitTook:   {0.01: cash / 2, math.Inf(1): cash},
		}
	}
	from := latencyReading{read(10), read(50), read(5)}
	to := latencyReading{read(30), read(3), nil} // game2 restarted, game3 did not answer
	l := lg.gameLatencyOver(from, to)
	if l == nil || l.Cashouts.N != 20 || l.Bets.N != 20 || strings.Join(l.Unread, ",") != "game2,game3" {
		t.Fatalf("latency %+v, want 20 of game1's only, game2 and game3 unread", l)
	}
	if l.Commit == nil || l.Commit.N != 20 || l.Commit.Within10ms != 0.5 || l.CommitWait.N != 20 {
		t.Fatalf("commits %+v, waits %+v: want game1's 20, half within 10 ms", l.Commit, l.CommitWait)
	}
	old := func(cash float64) map[string]buckets { // a build without the commits' histograms
		return map[string]buckets{routeBet: {math.Inf(1): cash}, routeCashout: {math.Inf(1): cash}}
	}
	if l := lg.gameLatencyOver(latencyReading{old(1), old(1), old(1)}, latencyReading{old(2), old(2), old(2)}); l == nil || l.Commit != nil || l.Cashouts.N != 3 {
		t.Fatalf("latency %+v from a build without the commits' histograms, want the requests' only", l)
	}
	if l := lg.gameLatencyOver(latencyReading{nil, nil, nil}, to); l != nil {
		t.Fatalf("latency %+v with nothing read, want none", l)
	}
}

func TestLabel(t *testing.T) {
	t.Parallel()
	set := `code="200",route="POST /api/v1/bets/{bet_id}/cashout",le="0.01"}`
	for name, want := range map[string]string{"code": "200", "route": "POST /api/v1/bets/{bet_id}/cashout", "le": "0.01", "de": ""} {
		if got := label(set, name); got != want {
			t.Errorf("label %s = %q, want %q", name, got, want)
		}
	}
}
