package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/internal/logtest"
)

// hangGuard bounds what the process tests wait for: far above what they
// measure (a stop takes about 0.1 s), so that a busy machine never fails them.
const hangGuard = 20 * time.Second

// buildCrashgame builds this command into a temporary folder, for the tests
// that run it as a process.
func buildCrashgame(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the command as a process")
	}
	bin := filepath.Join(t.TempDir(), "crashgame")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// waitFor polls what until it holds, at most hangGuard.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(hangGuard); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after %v", what, hangGuard)
		}
	}
}

// exited waits for cmd to exit, at most hangGuard, and returns its status.
func exited(t *testing.T, cmd *exec.Cmd, stderr *logtest.Buffer) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var exit *exec.ExitError
		switch {
		case err == nil:
			return 0
		case errors.As(err, &exit):
			return exit.ExitCode() // -1 when a signal killed it
		}
		t.Fatalf("wait: %v", err)
	case <-time.After(hangGuard):
		_ = cmd.Process.Kill()
		if err := <-done; err != nil {
			t.Logf("killed: %v", err)
		}
		t.Fatalf("still running %v after the signal; stderr:\n%s", hangGuard, stderr.String())
	}
	return 0
}

// `crashgame dev` (make run) stops on one SIGINT and exits 0, so that make
// reports no error. Its ports are the system's choice (port 0): its banner
// comes first on stdout, then the address it listens on.
func TestDevStopsOnInterrupt(t *testing.T) {
	bin := buildCrashgame(t)
	dir := t.TempDir()
	var stdout, stderr logtest.Buffer
	cmd := exec.Command(bin, "dev", "--listen", "127.0.0.1:0", "--wallet-listen", "127.0.0.1:0",
		"--metrics-listen", "127.0.0.1:0", "--data", filepath.Join(dir, "data"))
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	var base string
	waitFor(t, "crashgame dev listening", func() bool {
		if m := listening.FindStringSubmatch(stdout.String()); m != nil {
			base = m[1]
		}
		return base != ""
	})
	if !strings.HasPrefix(stdout.String(), "crashgame dev\n") {
		t.Fatalf("stdout does not start with the banner:\n%s", stdout.String())
	}
	waitFor(t, "/readyz answering 200", func() bool {
		res, err := http.Get(base + "/readyz")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK
	})
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if code := exited(t, cmd, &stderr); code != 0 {
		t.Fatalf("exit status %d after SIGINT, want 0; stderr:\n%s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), `"msg":"stopped"`) {
		t.Fatalf("no \"stopped\" in the log:\n%s", stderr.String())
	}
}

// A port that is taken fails before anything is printed, naming the port
// and its flag; so does a data folder another crashgame dev owns.
func TestDevRefusesBeforeTheBanner(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	addr := taken.Addr().String()
	free := []string{"--listen", "127.0.0.1:0", "--wallet-listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0"}
	for i, flag := range []string{"--listen", "--wallet-listen", "--metrics-listen"} {
		args := append([]string{"dev", "--data", t.TempDir()}, free...)
		args[4+2*i] = addr // the value after flag
		var stdout, stderr logtest.Buffer
		err := run(t.Context(), args, &stdout, &stderr)
		if err == nil || !strings.Contains(err.Error(), flag+" "+addr) {
			t.Errorf("dev with %s taken: %v; want an error naming %s %s", flag, err, flag, addr)
		}
		if stdout.String() != "" {
			t.Errorf("dev with %s taken printed:\n%s", flag, stdout.String())
		}
	}

	data := t.TempDir()
	_, stop := start(t, append([]string{"dev", "--data", data}, free...)...)
	defer func() {
		if err := stop(); err != nil {
			t.Errorf("stop: %v", err)
		}
	}()
	var stdout, stderr logtest.Buffer
	err = run(t.Context(), append([]string{"dev", "--data", data}, free...), &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "owned by another process") {
		t.Errorf("a second dev on the same data folder: %v; want a refusal", err)
	}
	if stdout.String() != "" {
		t.Errorf("a second dev on the same data folder printed:\n%s", stdout.String())
	}
}

// A second SIGINT stops at once, whatever the first stop still waits for
// (a round that holds bets, up to its grace): the log says so and the exit
// status is 130 (128 + SIGINT). The test runs itself as the process, whose
// stop never ends.
func TestSecondSignalStopsAtOnce(t *testing.T) {
	if os.Getenv("CRASHGAME_TEST_SECOND_SIGNAL") == "1" {
		slog.SetDefault(slog.New(slog.NewJSONHandler(os.Stderr, nil)))
		sigs := make(chan os.Signal, 2)
		signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
		go stopOnSignals(sigs, func() { fmt.Println("stopping") })
		fmt.Println("ready")
		time.Sleep(hangGuard) // the stop that never ends
		os.Exit(3)
	}
	if testing.Short() {
		t.Skip("runs the test binary as a process")
	}
	var stdout, stderr logtest.Buffer
	cmd := exec.Command(os.Args[0], "-test.run=^TestSecondSignalStopsAtOnce$")
	cmd.Env = append(os.Environ(), "CRASHGAME_TEST_SECOND_SIGNAL=1")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	waitFor(t, "the process ready", func() bool { return strings.Contains(stdout.String(), "ready\n") })
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the first signal's stop", func() bool { return strings.Contains(stdout.String(), "stopping\n") })
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if code := exited(t, cmd, &stderr); code != 130 {
		t.Fatalf("exit status %d after the second SIGINT, want 130; stderr:\n%s", code, stderr.String())
	}
	for _, want := range []string{"a second SIGINT (Ctrl-C) or SIGTERM stops at once", "stopping at once on a second signal"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("the log lacks %q:\n%s", want, stderr.String())
		}
	}
}
