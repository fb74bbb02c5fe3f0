//go:build integration

package suite

import (
	"context"
	"net/http"
	"runtime"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
)

// PauseWallet freezes operator-sim (docker pause): its connections stay
// open and every call hangs until the game's own timeout.
func (e *Env) PauseWallet(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := e.docker.ContainerPause(ctx, e.sim.GetContainerID(), client.ContainerPauseOptions{}); err != nil {
		t.Fatalf("suite: pause operator-sim: %v", err)
	}
}

// UnpauseWallet resumes operator-sim.
func (e *Env) UnpauseWallet(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := e.docker.ContainerUnpause(ctx, e.sim.GetContainerID(), client.ContainerUnpauseOptions{}); err != nil {
		t.Fatalf("suite: unpause operator-sim: %v", err)
	}
}

// Pause freezes replica r (docker pause): its connections stay open and its
// clock stops, as a process stalled by its machine or cut off without a
// reset is seen from outside.
func (c *Cluster) Pause(t testing.TB, r *Replica) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.docker.ContainerPause(ctx, r.c.GetContainerID(), client.ContainerPauseOptions{}); err != nil {
		t.Fatalf("suite: pause %s: %v", r.Name, err)
	}
}

// Unpause resumes replica r.
func (c *Cluster) Unpause(t testing.TB, r *Replica) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.docker.ContainerUnpause(ctx, r.c.GetContainerID(), client.ContainerUnpauseOptions{}); err != nil {
		t.Fatalf("suite: unpause %s: %v", r.Name, err)
	}
}

// AwaitReady polls replica r's /readyz until it answers 200 or ctx ends.
func (c *Cluster) AwaitReady(t testing.TB, ctx context.Context, r *Replica) {
	t.Helper()
	c.awaitReadyAt(t, ctx, r.URL)
}

// KillGame sends SIGKILL to the game: no shutdown, no settling.
func (e *Env) KillGame(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := e.docker.ContainerKill(ctx, e.game.GetContainerID(), client.ContainerKillOptions{Signal: "SIGKILL"}); err != nil {
		t.Fatalf("suite: kill the game: %v", err)
	}
	// Wait until Docker sees it stopped.
	for {
		st, err := e.game.State(ctx)
		if err == nil && !st.Running {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("suite: the game does not stop after SIGKILL")
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// RestartGame starts the killed game container again and waits for /readyz
// on its new published port.
func (e *Env) RestartGame(t testing.TB) time.Duration {
	t.Helper()
	began := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	if err := e.game.Start(ctx); err != nil {
		t.Fatalf("suite: restart the game: %v", err)
	}
	if err := e.readGamePort(ctx); err != nil {
		t.Fatalf("suite: %v", err)
	}
	e.awaitReady(t, ctx)
	return time.Since(began)
}

// awaitReady polls the game's /readyz until it answers 200.
func (e *Env) awaitReady(t testing.TB, ctx context.Context) {
	t.Helper()
	e.awaitReadyAt(t, ctx, e.GameURL)
}

// awaitReadyAt polls base()/readyz until it answers 200 (base is read again
// each time: a restarted container's published port changes).
func (e *Env) awaitReadyAt(t testing.TB, ctx context.Context, base func() string) {
	t.Helper()
	for {
		// Each try has its own 3 s (the game bounds its /readyz at 2 s): a
		// connection made while the container's port is being published can
		// hang, and one hung try must not hold the wait for the client's 30 s.
		tctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		req, _ := http.NewRequestWithContext(tctx, http.MethodGet, base()+"/readyz", nil)
		resp, err := e.http.Do(req)
		cancel()
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("suite: the game is not ready: %v", err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// RestartPostgres stops PostgreSQL (fast shutdown), keeps it down for down,
// starts it again and reconnects the suite's reader (the published port
// changes). It does not wait for the game.
func (e *Env) RestartPostgres(t testing.TB, down time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	id := e.pg.GetContainerID()
	timeout := 10
	if _, err := e.docker.ContainerStop(ctx, id, client.ContainerStopOptions{Timeout: &timeout}); err != nil {
		t.Fatalf("suite: stop PostgreSQL: %v", err)
	}
	time.Sleep(down)
	if _, err := e.docker.ContainerStart(ctx, id, client.ContainerStartOptions{}); err != nil {
		t.Fatalf("suite: start PostgreSQL: %v", err)
	}
	// The log wait is already satisfied by the old lines: ping until ready.
	if err := e.openDB(ctx); err != nil {
		t.Fatalf("suite: %v", err)
	}
}

// LimitCPU limits replica r to cpus of a core (docker update --cpus, the
// cgroup's cpu.max); 0 lifts the limit (the machine's every core).
func (c *Cluster) LimitCPU(t testing.TB, r *Replica, cpus float64) {
	t.Helper()
	if cpus <= 0 {
		cpus = float64(runtime.NumCPU())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.docker.ContainerUpdate(ctx, r.c.GetContainerID(), client.ContainerUpdateOptions{
		Resources: &container.Resources{NanoCPUs: int64(cpus * 1e9)},
	}); err != nil {
		t.Fatalf("suite: limit %s to %.2f CPU: %v", r.Name, cpus, err)
	}
}
