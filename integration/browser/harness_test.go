//go:build integration

package browser

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/internal/logtest"
	"github.com/crashstudio/crashgame/internal/signature"
)

// The dev installation's public operator credentials (cmd/crashgame/dev.go).
const (
	devOperator = "dev"
	devSecret   = "dev-secret-not-for-production"
	devGameID   = "crash"
)

// stopGrace is how long `crashgame dev` may take to exit after SIGTERM: its
// table plays the round in play to its crash, up to the tables' grace (35 s;
// a round still flying then is settled by the fail-over rule), then the queue
// and the HTTP server drain (10 s). A guard, not a speed check.
const stopGrace = 50 * time.Second

// devServer is one `crashgame dev` process: the game and the reference
// operator (operator-sim) on two loopback ports.
type devServer struct {
	GameURL  string // http://127.0.0.1:PORT
	LobbyURL string // http://127.0.0.1:PORT2 (lobby, wallet, admin API)

	cmd    *exec.Cmd
	out    *logtest.Buffer
	exited chan struct{}
	err    error // the process's exit, once exited is closed
}

// moduleRoot is the folder of go.mod.
func moduleRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		t.Fatal("go env GOMOD: not inside the module")
	}
	return filepath.Dir(gomod)
}

// buildCrashgame compiles ./cmd/crashgame into a temporary folder.
func buildCrashgame(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "crashgame")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/crashgame")
	cmd.Dir = moduleRoot(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/crashgame: %v\n%s", err, out)
	}
	return bin
}

// freeAddr returns a loopback address with a port nobody listens on now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("free port: %v", err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatalf("free port: %v", err)
	}
	return addr
}

// startDev runs `crashgame dev` with a fresh data folder and waits until both
// the game and the operator answer. The process is stopped (SIGTERM, then a
// kill) at cleanup if the test has not stopped it already.
func startDev(t *testing.T, bin string) *devServer {
	t.Helper()
	game, wallet, metrics := freeAddr(t), freeAddr(t), freeAddr(t)
	s := &devServer{
		GameURL:  "http://" + game,
		LobbyURL: "http://" + wallet,
		out:      &logtest.Buffer{},
		exited:   make(chan struct{}),
	}
	s.cmd = exec.Command(bin, "dev", "--data", t.TempDir(), "--listen", game, "--wallet-listen", wallet, "--metrics-listen", metrics, "--players", "2")
	s.cmd.Stdout = s.out
	s.cmd.Stderr = s.out
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("start crashgame dev: %v", err)
	}
	go func() {
		s.err = s.cmd.Wait()
		close(s.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-s.exited:
			return
		default:
		}
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.exited:
		case <-time.After(stopGrace):
			_ = s.cmd.Process.Kill()
			<-s.exited
		}
	})
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("crashgame dev output:\n%s", tail(s.out.String(), 12000))
		}
	})

	deadline := time.Now().Add(30 * time.Second)
	for _, u := range []string{s.GameURL + "/healthz", s.LobbyURL + "/healthz"} {
		for {
			select {
			case <-s.exited:
				t.Fatalf("crashgame dev exited before it was ready (%v):\n%s", s.err, s.out.String())
			default:
			}
			res, err := http.Get(u)
			if err == nil {
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode == http.StatusOK {
					break
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s did not answer 200 within 30 s (last error %v)", u, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return s
}

// stop sends SIGTERM and fails the test unless the process exits cleanly
// within stopGrace.
func (s *devServer) stop(t *testing.T) {
	t.Helper()
	start := time.Now()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("SIGTERM crashgame dev: %v", err)
	}
	select {
	case <-s.exited:
	case <-time.After(stopGrace):
		_ = s.cmd.Process.Kill()
		<-s.exited
		t.Fatalf("crashgame dev did not exit within %s of SIGTERM", stopGrace)
	}
	if s.err != nil {
		t.Fatalf("crashgame dev exited with %v after SIGTERM", s.err)
	}
	t.Logf("crashgame dev stopped cleanly %s after SIGTERM", time.Since(start).Round(time.Millisecond))
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// signedPost sends body (with a fresh millisecond timestamp added) signed
// with the dev secret, as the operator's admin API and the game's /v1/launch
// both expect, and decodes a 200 answer into out.
func signedPost(ctx context.Context, url string, body map[string]any, out any) error {
	body["timestamp"] = time.Now().UnixMilli()
	raw, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(raw))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Signature", signature.Sign([]byte(devSecret), raw))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	answer, err := io.ReadAll(res.Body)
	if err != nil {
		return err
	}
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("POST %s: HTTP %d: %s", url, res.StatusCode, answer)
	}
	if err := json.Unmarshal(answer, out); err != nil {
		return fmt.Errorf("POST %s: decode %q: %w", url, answer, err)
	}
	return nil
}

// movement is one row of operator-sim's ledger (/admin/ledger).
type movement struct {
	OperatorTransactionID string  `json:"operator_transaction_id"`
	PlayerID              string  `json:"player_id"`
	TransactionID         string  `json:"transaction_id"`
	Kind                  string  `json:"kind"`
	Amount                int64   `json:"amount"`
	Delta                 int64   `json:"delta"`
	BalanceAfter          int64   `json:"balance_after"`
	Currency              string  `json:"currency"`
	BetID                 *string `json:"bet_id"`
	RoundID               string  `json:"round_id"`
	FreebetID             *string `json:"freebet_id"`
	Settlement            *string `json:"settlement"`
}

func (s *devServer) ledger(ctx context.Context, playerID string) ([]movement, error) {
	var out struct {
		Movements []movement `json:"movements"`
	}
	err := signedPost(ctx, s.LobbyURL+"/admin/ledger", map[string]any{"player_id": playerID, "limit": 500}, &out)
	return out.Movements, err
}

func (s *devServer) operatorBalance(ctx context.Context, playerID string) (int64, error) {
	var out struct {
		Player struct {
			Balance int64 `json:"balance"`
		} `json:"player"`
	}
	err := signedPost(ctx, s.LobbyURL+"/admin/players/get", map[string]any{"player_id": playerID}, &out)
	return out.Player.Balance, err
}

// launch is what the lobby's Play button does, with a language: the operator
// issues a session token, then asks the game for a launch URL (signed POST
// /v1/launch).
func (s *devServer) launch(ctx context.Context, playerID, currency, lang string) (string, error) {
	var tok struct {
		Token string `json:"token"`
	}
	if err := signedPost(ctx, s.LobbyURL+"/admin/tokens/issue", map[string]any{"player_id": playerID}, &tok); err != nil {
		return "", err
	}
	if tok.Token == "" {
		return "", errors.New("the operator issued an empty token")
	}
	var l struct {
		URL string `json:"url"`
	}
	err := signedPost(ctx, s.GameURL+"/v1/launch", map[string]any{
		"operator": devOperator, "game_id": devGameID, "token": tok.Token, "player_id": playerID,
		"currency": currency, "language": lang,
	}, &l)
	return l.URL, err
}

// getJSON is a GET with the table session as the Bearer.
func getJSON(ctx context.Context, url, session string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	if session != "" {
		req.Header.Set("Authorization", "Bearer "+session)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return err
	}
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: HTTP %d: %s", url, res.StatusCode, raw)
	}
	return json.Unmarshal(raw, out)
}
