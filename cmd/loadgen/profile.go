package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// profileSeconds is how long the CPU profile of the game's play lasts: the
// first profileSeconds of the rounds, betting windows and flights both.
const profileSeconds = 30

// traceSeconds is how long the runtime trace of the first flight lasts: the
// flight's cashouts, auto-cashouts and boards, and its crash and the next
// betting window's start when the flight is shorter.
const traceSeconds = 10

// fetchProfile saves the game's profile at path (a /debug/pprof/ route of its
// metrics_listen, which serves them with the `profiling` key) into dir/name.
func fetchProfile(ctx context.Context, metricsURL, path, dir, name string) error {
	hc := http.Client{Timeout: (profileSeconds + 30) * time.Second}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, metricsURL+path, nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("profile %s: %w", path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("profile %s: %s (is the game's profiling key on?)", path, resp.Status)
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		_ = f.Close()
		return fmt.Errorf("profile %s: %w", path, err)
	}
	return f.Close()
}

// profileConnected saves the game's heap with every player connected and
// nobody betting (heap-connected.pb.gz: what a connected player holds).
func (lg *loadgen) profileConnected(ctx context.Context, stdout io.Writer) {
	if lg.o.profile == "" {
		return
	}
	if err := fetchProfile(ctx, lg.o.metricsURL, "/debug/pprof/heap?gc=1", lg.o.profile, "heap-connected.pb.gz"); err != nil {
		fmt.Fprintf(stdout, "no heap profile: %v\n", err)
	}
}

// profilePlay starts the CPU profile of the rounds' first profileSeconds
// (cpu-playing.pb.gz), and the runtime trace of the first played round's
// flight, traceSeconds from its take-off seen on a stream (trace-flight.out:
// what a cashout waits for); the returned function waits for both.
func (lg *loadgen) profilePlay(ctx context.Context, stdout io.Writer) (wait func()) {
	if lg.o.profile == "" {
		return func() {}
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		path := fmt.Sprintf("/debug/pprof/profile?seconds=%d", profileSeconds)
		if err := fetchProfile(ctx, lg.o.metricsURL, path, lg.o.profile, "cpu-playing.pb.gz"); err != nil {
			fmt.Fprintf(stdout, "no CPU profile: %v\n", err)
		}
	})
	wg.Go(func() {
		select {
		case <-ctx.Done():
			return
		case <-lg.allCrashed: // every round ended before one was seen flying
			return
		case <-lg.flew:
		}
		path := fmt.Sprintf("/debug/pprof/trace?seconds=%d", traceSeconds)
		if err := fetchProfile(ctx, lg.o.metricsURL, path, lg.o.profile, "trace-flight.out"); err != nil {
			fmt.Fprintf(stdout, "no trace of the flight: %v\n", err)
		}
	})
	return wg.Wait
}
