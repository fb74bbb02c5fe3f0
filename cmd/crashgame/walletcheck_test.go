package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/internal/operatorsim"
	"github.com/crashstudio/crashgame/internal/signature"
	"github.com/crashstudio/crashgame/internal/walletcheck"
)

// walletCheckSim is operator-sim over real HTTP with two funded players,
// and the flags of a wallet-check against it (the tokens in the flags).
func walletCheckSim(t *testing.T) []string {
	t.Helper()
	const op, sec, key = "wc-cmd-op", "wc-cmd-secret-0123456789abcdef", "wc_cmdkey_0123456789abcdefghij"
	s, err := operatorsim.New(operatorsim.Config{Operator: op, Secret: sec, APIKeys: []string{key}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(func() { srv.Close(); _ = s.Close() })
	admin := func(path string, body map[string]any) map[string]any {
		t.Helper()
		body["timestamp"] = time.Now().UnixMilli()
		raw, _ := json.Marshal(body)
		req, _ := http.NewRequest(http.MethodPost, srv.URL+path, bytes.NewReader(raw))
		req.Header.Set("X-Signature", signature.Sign([]byte(sec), raw))
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		b, _ := io.ReadAll(resp.Body)
		var out map[string]any
		if json.Unmarshal(b, &out) != nil || out["status"] != "ok" {
			t.Fatalf("%s: HTTP %d %s", path, resp.StatusCode, b)
		}
		return out
	}
	var tokens []string
	for _, p := range []string{"wc-cmd-1", "wc-cmd-2"} {
		admin("/admin/players/create", map[string]any{"player_id": p, "currency": "BRL", "balance": 100_000})
		tokens = append(tokens, admin("/admin/tokens/issue", map[string]any{"player_id": p})["token"].(string))
	}
	admin("/admin/freebets/grant", map[string]any{"player_id": "wc-cmd-1", "id": "wc-cmd-grant", "amount": 100})
	return []string{"--wallet-url", srv.URL, "--operator", op, "--secret", sec, "--api-key", key,
		"--token", tokens[0], "--second-token", tokens[1]}
}

// --report DIR writes the three files; --profile and --retry-delay are
// read; the run passes against operator-sim (exit 0), and a bad profile is
// a usage error (exit 2), not a failed check (exit 1).
func TestWalletCheckReportAndProfile(t *testing.T) {
	t.Parallel()
	flags := walletCheckSim(t)
	dir := filepath.Join(t.TempDir(), "out")
	var stdout, stderr strings.Builder
	// --retry-delay keeps the test short: operator-sim never forgets a
	// transaction_id, so the wait proves nothing here.
	args := append(flags, "--profile", "full", "--retry-delay", "1ms", "--report", dir)
	if err := walletCheckCmd(context.Background(), args, &stdout, &stderr); err != nil {
		t.Fatalf("wallet-check: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "PASS: ") || !strings.Contains(stderr.String(), "retries after 1ms") {
		t.Errorf("stdout %q\nstderr %q", stdout.String(), stderr.String())
	}
	for _, name := range []string{walletcheck.ResultFile, walletcheck.JUnitFile, walletcheck.SummaryFile} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", name, err)
		}
	}
	raw, err := os.ReadFile(filepath.Join(dir, walletcheck.ResultFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, secretish := range flags[5:] { // the secret, the key, the tokens
		if strings.HasPrefix(secretish, "--") {
			continue
		}
		if bytes.Contains(raw, []byte(secretish)) {
			t.Errorf("result.json holds a secret, key or token")
		}
	}

	err = walletCheckCmd(context.Background(), append(flags, "--profile", "slow"), io.Discard, io.Discard)
	var failed *errWalletCheckFailed
	if err == nil || errors.As(err, &failed) || !strings.Contains(err.Error(), "quick or full") {
		t.Errorf("--profile slow: %v, want a usage error", err)
	}
}

// The help names every exit status.
func TestWalletCheckHelpNamesExitCodes(t *testing.T) {
	t.Parallel()
	for _, want := range []string{"Exit status:", "  0  ", "  1  ", "  2  ", "--report DIR", "--profile"} {
		if !strings.Contains(walletCheckUsage, want) {
			t.Errorf("the help lacks %q", want)
		}
	}
}
