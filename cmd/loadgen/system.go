package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// system is what --self started: operator-sim and crashgame serve, each its
// own process so that the game's CPU and memory are the game's alone.
type system struct {
	game, sim *proc
	dialect   string
	stopped   bool
}

// gameConfig is the installation --self serves: dev.yaml's game and one
// operator whose wallet is operator-sim, limits wide enough for the load.
const gameConfig = `listen: %[1]s
metrics_listen: %[11]s
profiling: %[12]t
base_url: http://%[1]s
default_language: en
database: %[2]s
fairness: {seed_key: 10adf00d10adf00d10adf00d10adf00d10adf00d10adf00d10adf00d10adf00d, seeding_window_ms: 1000, reveal_window_ms: 1000}
games:
  - game_id: %[3]s
    name: Crash
    studio: Crash Studio
    category: crash
    rtp_bp: 9700
    max_multiplier: 100000
    betting_ms: %[8]d
    pause_ms: 3000
    demo: false
    freebet: true
operators:
  - operator: %[4]s
    enabled: true
    secret: %[5]s
    api_key: %[6]s
    wallet_url: http://%[7]s
    games: [%[3]s]
    demo: false
    zero_win: %[9]t
    currencies:
      %[10]s: { min_bet: 100, max_bet: 100000, max_win: 100000000 }
`

const loadAPIKey = "load_key_0123456789abcdef"

// startSystem builds (unless --bin) and starts operator-sim and the game on
// free loopback ports, and waits until both answer.
func startSystem(ctx context.Context, o *options, stderr io.Writer) (*system, error) {
	if o.data == "" {
		d, err := os.MkdirTemp("", "loadgen-")
		if err != nil {
			return nil, err
		}
		o.data = d
	}
	if err := os.MkdirAll(o.data, 0o750); err != nil {
		return nil, err
	}
	bin := o.binDir
	if bin == "" {
		bin = filepath.Join(o.data, "bin")
		for _, cmd := range []string{"crashgame", "operator-sim"} {
			b := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(bin, cmd), "github.com/crashstudio/crashgame/cmd/"+cmd)
			b.Stdout, b.Stderr = stderr, stderr
			b.Env = append(os.Environ(), "CGO_ENABLED=0")
			if err := b.Run(); err != nil {
				return nil, fmt.Errorf("build %s (run loadgen from the module, or give --bin): %w", cmd, err)
			}
		}
	}
	gameAddr, simAddr, metricsAddr := freeAddr(), freeAddr(), freeAddr()
	if o.database == "" {
		o.database = "sqlite://" + filepath.ToSlash(filepath.Join(o.data, "crashgame.db"))
	}
	s := &system{dialect: strings.SplitN(o.database, ":", 2)[0]}
	cfgPath := filepath.Join(o.data, "game.yaml")
	cfg := fmt.Sprintf(gameConfig, gameAddr, o.database, o.gameID, o.operator, o.secret, loadAPIKey, simAddr, o.bettingMS, o.zeroWin, o.currency, metricsAddr, o.profile != "")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		return nil, err
	}
	simDB := o.operatorDB
	if simDB != ":memory:" && !filepath.IsAbs(simDB) {
		simDB = filepath.Join(o.data, simDB)
	}
	var err error
	if o.pin {
		if err := pinSelf(); err != nil { // before operator-sim, which inherits the CPUs
			return nil, err
		}
	}
	s.sim, err = startProcess(filepath.Join(bin, "operator-sim"), filepath.Join(o.data, "operator-sim.log"),
		"--listen", simAddr, "--db", simDB, "--operator", o.operator, "--secret", o.secret,
		"--api-key", loadAPIKey, "--game-url", "http://"+gameAddr, "--game-id", o.gameID, "--currency", o.currency)
	if err != nil {
		return nil, err
	}
	path, args := o.onGameCPU(filepath.Join(bin, "crashgame"), "serve", "--config", cfgPath)
	s.game, err = startProcess(path, filepath.Join(o.data, "game.log"), args...)
	if err != nil {
		s.stop()
		return nil, err
	}
	o.url, o.operatorURL, o.gamePID = "http://"+gameAddr, "http://"+simAddr, s.game.cmd.Process.Pid
	o.metricsURL = "http://" + metricsAddr
	if o.gameDB == "" {
		o.gameDB = o.database
	}
	for _, u := range []string{o.url + "/readyz", o.operatorURL + "/"} {
		if err := waitAnswer(ctx, u, 60*time.Second); err != nil {
			s.stop()
			return nil, fmt.Errorf("%w (logs in %s)", err, o.data)
		}
	}
	return s, nil
}

// proc is a started process; done is closed once it exited.
type proc struct {
	cmd  *exec.Cmd
	done chan struct{}
}

func startProcess(path, logPath string, args ...string) (*proc, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(path, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start %s: %w", filepath.Base(path), err)
	}
	p := &proc{cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); logf.Close(); close(p.done) }()
	return p, nil
}

// stopGame ends the game alone (SIGTERM), operator-sim still answering.
func (s *system) stopGame() {
	if s.game == nil {
		return
	}
	_ = s.game.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.game.done:
	case <-time.After(45 * time.Second):
		_ = s.game.cmd.Process.Kill()
		<-s.game.done
	}
}

// stop ends the game (SIGTERM: it settles the round in play) and then
// operator-sim, so the game's last movements still reach it.
func (s *system) stop() {
	if s.stopped {
		return
	}
	s.stopped = true
	for _, p := range []*proc{s.game, s.sim} {
		if p != nil {
			stopProcess(p)
		}
	}
}

// stopProcess ends p (SIGTERM, then SIGKILL after 45 s) unless it ended.
func stopProcess(p *proc) {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(45 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

func freeAddr() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func waitAnswer(ctx context.Context, url string, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode < 500 {
				return nil
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("%s did not answer within %s", url, within)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
