package main

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/internal/logtest"
)

func TestParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		want    func(*options) bool
		wantErr bool
	}{
		{"defaults", []string{"--secret", "s", "--api-key", "k"}, nil, func(o *options) bool {
			return o.listen == "127.0.0.1:8081" && o.cfg.DB == ":memory:" && o.cfg.Operator == "dev" &&
				o.cfg.Currency == "BRL" && o.cfg.SeedPlayers == 0 && len(o.cfg.APIKeys) == 1
		}, false},
		{"repeated and comma-separated keys", []string{"--secret", "s", "--api-key", "k1,k2", "--api-key", "k3"}, nil, func(o *options) bool {
			return strings.Join(o.cfg.APIKeys, " ") == "k1 k2 k3"
		}, false},
		{"environment", nil, map[string]string{
			"OPERATOR_SIM_SECRET": "s", "OPERATOR_SIM_API_KEY": "a, b", "OPERATOR_SIM_SEED_PLAYERS": "5",
			"OPERATOR_SIM_GAME_URL": "http://127.0.0.1:8080", "OPERATOR_SIM_OPERATOR": "acme",
		}, func(o *options) bool {
			return o.cfg.Secret == "s" && strings.Join(o.cfg.APIKeys, " ") == "a b" && o.cfg.SeedPlayers == 5 &&
				o.cfg.GameURL == "http://127.0.0.1:8080" && o.cfg.Operator == "acme"
		}, false},
		{"flag wins over environment", []string{"--seed-players", "2", "--api-key", "flag"}, map[string]string{
			"OPERATOR_SIM_SEED_PLAYERS": "5", "OPERATOR_SIM_API_KEY": "env",
		}, func(o *options) bool { return o.cfg.SeedPlayers == 2 && strings.Join(o.cfg.APIKeys, " ") == "flag" }, false},
		{"bad listen", []string{"--listen", "nowhere"}, nil, nil, true},
		{"bad env number", nil, map[string]string{"OPERATOR_SIM_SEED_PLAYERS": "many"}, nil, true},
		{"stray argument", []string{"serve"}, nil, nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, err := parse(tc.args, func(k string) string { return tc.env[k] }, io.Discard)
			if tc.wantErr {
				if err == nil {
					t.Fatal("want an error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tc.want(o) {
				t.Fatalf("options %+v", o)
			}
		})
	}
}

func TestRunServesAndStops(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr logtest.Buffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--listen", "127.0.0.1:0", "--secret", "s", "--api-key", "k", "--seed-players", "2"},
			func(string) string { return "" }, &stdout, &stderr)
	}()
	addr := regexp.MustCompile(`wallet_url (http://\S+)`)
	var base string
	for deadline := time.Now().Add(5 * time.Second); base == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if m := addr.FindStringSubmatch(stdout.String()); m != nil {
			base = m[1]
		}
	}
	if base == "" {
		t.Fatalf("no wallet_url printed; stdout %q stderr %q", stdout.String(), stderr.String())
	}
	resp, err := http.Get(base + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("healthz %d", resp.StatusCode)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("run did not stop")
	}
	if strings.Contains(stderr.String(), `"k"`) || strings.Contains(stdout.String(), "secret") {
		t.Fatal("a key or the secret was printed")
	}
}
