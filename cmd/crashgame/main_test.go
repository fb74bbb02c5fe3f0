package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/internal/logtest"
)

var listening = regexp.MustCompile(`listening on (http://[0-9.:]+)`)

// start runs the command in the background and returns its base URL and a stop
// function that cancels it (as SIGTERM does) and returns its error.
func start(t *testing.T, args ...string) (string, func() error) {
	t.Helper()
	return startWith(t, new(logtest.Buffer), args...)
}

// startWith is start with the command's standard output kept in stdout.
func startWith(t *testing.T, stdout *logtest.Buffer, args ...string) (string, func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var stderr logtest.Buffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, args, stdout, &stderr) }()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if m := listening.FindStringSubmatch(stdout.String()); m != nil {
			return m[1], func() error { cancel(); return <-done }
		}
		select {
		case err := <-done:
			cancel()
			t.Fatalf("exited early: %v\nstderr: %s", err, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("not listening after 20 s; stderr: %s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestServeAnswersAndStopsCleanly(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "crashgame.yaml")
	t.Setenv("TEST_SECRET", "acme-secret-0123456789abcdef")
	// metrics_listen on a free port: its default, 127.0.0.1:9090, may be
	// taken on a shared machine.
	writeFile(t, cfg, fmt.Sprintf(`
listen: 127.0.0.1:0
metrics_listen: 127.0.0.1:0
base_url: https://games.example.com
fairness: {seed_key: abababababababababababababababababababababababababababababababab, seeding_window_ms: 0}
database: sqlite://%s/game.db
games:
  - {game_id: crash, name: Crash, studio: S, category: crash}
operators:
  - operator: acme
    secret: ${TEST_SECRET}
    games: [crash]
    currencies: {BRL: {min_bet: 100, max_bet: 1000}}
`, filepath.ToSlash(dir)))
	base, stop := start(t, "serve", "--config", cfg)
	// Ready once the table shows its first round (the chain is made first).
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		res, err := http.Get(base + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz: %d after 30 s", res.StatusCode)
		}
	}
	// A second process on the same SQLite file is refused at start, naming
	// the file: the first owns it, and leads its tables without renewals.
	var out, errOut logtest.Buffer
	err := run(t.Context(), []string{"serve", "--config", cfg}, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "owned by another process") || !strings.Contains(err.Error(), filepath.Join(dir, "game.db")) {
		t.Fatalf("a second serve on the same SQLite file: %v; want a refusal naming %s", err, filepath.Join(dir, "game.db"))
	}
	for _, path := range []string{"/healthz", "/readyz", "/openapi/game.v1.yaml", "/openapi/wallet.v1.json", "/openapi/table.v1.yaml", "/docs/", "/docs/table-stream.asyncapi"} {
		res, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d", path, res.StatusCode)
		}
	}
	if err := stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if _, err := http.Get(base + "/healthz"); err == nil {
		t.Fatal("still answering after stop")
	}
}

// /metrics answers on metrics_listen alone: the public port, which players
// and anyone on the internet reach, answers 404 there. Go's profiles
// (/debug/pprof/) are there only with profiling on, and never on the public
// port. (Without the key, metrics_listen is 127.0.0.1:9090: TestDefaults in
// internal/config.)
func TestServeMetricsOnTheirOwnAddress(t *testing.T) {
	for _, tc := range []struct {
		name      string
		profiling string
		pprof     int // /debug/pprof/ on metrics_listen
	}{
		{"profiling left out", "", http.StatusNotFound},
		{"profiling off", "profiling: false\n", http.StatusNotFound},
		{"profiling on", "profiling: true\n", http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := filepath.Join(dir, "crashgame.yaml")
			writeFile(t, cfg, fmt.Sprintf(`
listen: 127.0.0.1:0
metrics_listen: 127.0.0.1:0
%sbase_url: https://games.example.com
fairness: {seed_key: abababababababababababababababababababababababababababababababab, seeding_window_ms: 0}
database: sqlite://%s/game.db
games:
  - {game_id: crash, name: Crash, studio: S, category: crash}
operators:
  - operator: acme
    secret: acme-secret-0123456789abcdef
    games: [crash]
    currencies: {BRL: {min_bet: 100, max_bet: 1000}}
`, tc.profiling, filepath.ToSlash(dir)))
			var stdout logtest.Buffer
			base, stop := startWith(t, &stdout, "serve", "--config", cfg)
			defer func() {
				if err := stop(); err != nil {
					t.Errorf("serve did not stop cleanly: %v", err)
				}
			}()
			m := metricsOn.FindStringSubmatch(stdout.String())
			if m == nil {
				t.Fatalf("no metrics address printed: %s", stdout.String())
			}
			get := func(url string) int {
				t.Helper()
				res, err := http.Get(url)
				if err != nil {
					t.Fatal(err)
				}
				res.Body.Close()
				return res.StatusCode
			}
			if code := get(m[1] + "/metrics"); code != http.StatusOK {
				t.Fatalf("/metrics on metrics_listen: %d", code)
			}
			if code := get(base + "/metrics"); code != http.StatusNotFound {
				t.Fatalf("/metrics on the public port: %d, want 404", code)
			}
			if code := get(m[1] + "/healthz"); code != http.StatusNotFound {
				t.Fatalf("/healthz on metrics_listen: %d, want 404 (only /metrics is there)", code)
			}
			// Every request's duration, by route and status: the game's own
			// share of a player's latency.
			if code := get(base + "/healthz"); code != http.StatusOK {
				t.Fatalf("/healthz: %d", code)
			}
			res, err := http.Get(m[1] + "/metrics")
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if want := `crashgame_http_request_duration_seconds_count{code="200",route="GET /healthz"}`; !strings.Contains(string(body), want) {
				t.Fatalf("/metrics has no %s", want)
			}
			// Each game's table committer: what a cashout's commit waits for.
			for _, want := range []string{
				`crashgame_table_commit_wait_seconds_count{game_id="crash"}`,
				`crashgame_table_commit_seconds_count{game_id="crash"}`,
				`crashgame_table_commit_jobs_count{game_id="crash"}`,
			} {
				if !strings.Contains(string(body), want) {
					t.Fatalf("/metrics has no %s", want)
				}
			}
			if code := get(m[1] + "/debug/pprof/"); code != tc.pprof {
				t.Fatalf("/debug/pprof/ on metrics_listen: %d, want %d", code, tc.pprof)
			}
			if code := get(base + "/debug/pprof/"); code != http.StatusNotFound {
				t.Fatalf("/debug/pprof/ on the public port: %d, want 404", code)
			}
		})
	}
}

var metricsOn = regexp.MustCompile(`metrics on (http://[0-9.:]+)/metrics`)

// Rule AUTH-7 AUTH-21: start-up is refused, with a message naming the operator
// and the fix, for an operator with a wallet and no secret, or an http:// wallet
// outside loopback.
func TestServeRefusesUnsafeConfig(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, operator, want string }{
		{"wallet without secret", "{operator: acme, api_key: k, wallet_url: https://w.example, games: [crash], currencies: {BRL: {}}}", "acme"},
		{"http wallet outside loopback", "{operator: acme, secret: acme-secret-0123456789abcdef, api_key: k, wallet_url: http://w.example, games: [crash], currencies: {BRL: {}}}", "acme"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := filepath.Join(t.TempDir(), "c.yaml")
			writeFile(t, cfg, "base_url: https://g.example\nfairness: {seed_key: abababababababababababababababababababababababababababababababab, seeding_window_ms: 0}\ngames:\n  - {game_id: crash, name: Crash, studio: S, category: crash}\noperators:\n  - "+tt.operator+"\n")
			var out, errOut bytes.Buffer
			err := run(context.Background(), []string{"serve", "--config", cfg}, &out, &errOut)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "refusing to start") {
				t.Fatalf("err = %v", err)
			}
		})
	}
}

func TestUsage(t *testing.T) {
	t.Parallel()
	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"bogus"}, &out, &errOut); err == nil || !strings.Contains(errOut.String(), "usage") {
		t.Fatalf("err = %v, stderr %q", err, errOut.String())
	}
	if err := run(context.Background(), []string{"serve"}, &out, &errOut); err == nil || !strings.Contains(err.Error(), "--config") {
		t.Fatalf("serve without --config: %v", err)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}
