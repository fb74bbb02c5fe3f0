package engine_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/internal/beacon"
	"github.com/crashstudio/crashgame/internal/beacon/beacontest"
	"github.com/crashstudio/crashgame/internal/chains"
	"github.com/crashstudio/crashgame/internal/engine"
	"github.com/crashstudio/crashgame/internal/fairness"
	"github.com/crashstudio/crashgame/internal/logtest"
	"github.com/crashstudio/crashgame/internal/store"
	"github.com/crashstudio/crashgame/internal/store/storetest"
)

// testBeacon is a local beacon with real signatures whose clock is the
// test's, and a client of it as a table uses one.
type testBeacon struct {
	srv    *beacontest.Server
	client *beacon.Client
}

// newBeacon starts a local beacon of 3-second rounds (as quicknet) whose
// genesis is an hour before the harness clock's start, on clock now.
func newBeacon(t *testing.T, now func() time.Time) testBeacon {
	t.Helper()
	srv := beacontest.New(t, beacontest.Options{Genesis: newClock().Now().Add(-time.Hour), Now: now})
	c, err := beacon.NewClient(srv.URL, srv.Network, beacon.ClientOptions{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return testBeacon{srv: srv, client: c}
}

// impostor answers every round with a value signed by another key: a relay
// that lies, or a network that is not the one the chain named.
type impostor struct {
	real  *beacon.Client
	other *beacontest.Server
}

func (i *impostor) Network() beacon.Network { return i.real.Network() }

func (i *impostor) Fetch(_ context.Context, round uint64) (beacon.Value, error) {
	return i.other.Sign(round), nil
}

// A chain whose beacon is unreachable, or answers a value that does not
// verify under the key the chain published, waits: it plays no round, its
// salt is not fixed, the log says it waits, and it never falls back to
// another value. Once the round verifies, the salt takes it and play starts.
func TestChainWaitsForItsBeaconRoundAndNeverFallsBack(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		fail func(bn testBeacon) (engine.Beacon, func())
	}{
		{"unreachable", func(bn testBeacon) (engine.Beacon, func()) {
			bn.srv.SetDown(true)
			return bn.client, func() { bn.srv.SetDown(false) }
		}},
		{"signed by another key", func(bn testBeacon) (engine.Beacon, func()) {
			imp := &impostor{real: bn.client, other: beacontest.New(t, beacontest.Options{Genesis: bn.srv.Network.Genesis})}
			var mu sync.Mutex
			honest := false
			return beaconSwitch{imp: imp, honest: bn.client, mu: &mu, on: &honest}, func() { mu.Lock(); honest = true; mu.Unlock() }
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var h *harness
			bn := newBeacon(t, func() time.Time { return h.clock.Now() })
			b, heal := tc.fail(bn)
			var logs logtest.Buffer
			h = newHarnessAdjusted(t, "", nil, nil, func(c *engine.Config) {
				c.SeedingWindow, c.RevealWindow, c.Beacon = 10*time.Second, 5*time.Second, b
				c.Logger = slog.New(slog.NewTextHandler(&logs, nil))
			})
			h.start()
			c := h.seedingChain()
			h.clock.Set(c.Beacon.RoundAt)
			waitFor(t, "the table to say it waits for the beacon", func() bool {
				return strings.Contains(logs.String(), "waiting for the beacon round the chain names")
			})
			// Several retries go by: still no salt, no round.
			for range 3 {
				h.clock.Set(h.clock.Now().Add(2 * time.Second))
				time.Sleep(20 * time.Millisecond)
			}
			ctx := context.Background()
			if got, err := h.st.HashChains().ChainByID(ctx, c.ID); err != nil || got.Salt != nil || got.Beacon.Signature != "" {
				t.Fatalf("the chain while its beacon fails: %+v, %v; want no salt and no signature", got, err)
			}
			if seq, err := h.st.LastRoundSeq(ctx, testGame.ID); err != nil || seq != 0 {
				t.Fatalf("a round (%d, %v) was opened without the beacon round", seq, err)
			}
			heal()
			// The table retries on its own clock: move it on until it has.
			waitFor(t, "the first round once the beacon verifies", func() bool {
				if seq, err := h.st.LastRoundSeq(ctx, testGame.ID); err == nil && seq > 0 {
					return true
				}
				h.clock.Set(h.clock.Now().Add(time.Second))
				time.Sleep(5 * time.Millisecond)
				return false
			})
			fixed, err := h.st.HashChains().ChainByID(ctx, c.ID)
			want := bn.srv.Sign(uint64(c.Beacon.Round))
			if err != nil || fixed.Salt == nil || fixed.Beacon.Signature != want.SignatureHex() ||
				*fixed.Salt != fairness.Salt(mustHash(t, c.Terminal), [][32]byte{want.Randomness}) || *fixed.SaltSource != chains.SaltFromContributions {
				t.Fatalf("the chain once its beacon verified: %+v, %v; want the salt of the terminal and the round's randomness", fixed, err)
			}
			if bytes.Contains([]byte(logs.String()), []byte("game_draw")) {
				t.Fatal("the game drew a value of its own although the chain names a beacon round")
			}
		})
	}
}

// beaconSwitch answers as the impostor until on is set, then honestly.
type beaconSwitch struct {
	imp    *impostor
	honest *beacon.Client
	mu     *sync.Mutex
	on     *bool
}

func (b beaconSwitch) Network() beacon.Network { return b.honest.Network() }

func (b beaconSwitch) Fetch(ctx context.Context, round uint64) (beacon.Value, error) {
	b.mu.Lock()
	on := *b.on
	b.mu.Unlock()
	if on {
		return b.honest.Fetch(ctx, round)
	}
	return b.imp.Fetch(ctx, round)
}

// A chain that names a round of a beacon the installation no longer
// fetches (fairness.beacon removed or changed) cannot fix its salt as it
// promised: a restart retires it unplayed, with the reason in the log, and
// publishes a new chain that names the beacon now configured (or none).
func TestChangedBeaconRetiresTheSeedingChain(t *testing.T) {
	t.Parallel()
	dsn := storetest.SQLite(t)
	var first *harness
	bn := newBeacon(t, func() time.Time { return first.clock.Now() })
	first = newHarnessAdjusted(t, dsn, nil, nil, func(c *engine.Config) { c.Beacon = bn.client })
	first.start()
	old := first.seedingChain()
	first.stop()
	if !old.Beacon.Named() {
		t.Fatalf("the first chain names no beacon round: %+v", old)
	}
	var logs logtest.Buffer
	second := newHarnessAdjusted(t, dsn, nil, nil, func(c *engine.Config) {
		c.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	})
	second.start()
	ctx := context.Background()
	var now chains.Chain
	waitFor(t, "a new chain", func() bool {
		c, err := second.st.HashChains().CurrentChain(ctx, testGame.ID)
		now = c
		return err == nil && c.ID != old.ID
	})
	if now.Beacon.Named() || now.Number != old.Number+1 || now.FirstSeq != old.FirstSeq {
		t.Fatalf("the new chain %+v; want number %d from round %d, naming no beacon", now, old.Number+1, old.FirstSeq)
	}
	retired, err := second.st.HashChains().ChainByID(ctx, old.ID)
	if err != nil || retired.LastSeq == nil || *retired.LastSeq != old.FirstSeq-1 || retired.Salt != nil || retired.Beacon != old.Beacon {
		t.Fatalf("the old chain %+v, %v; want it retired unplayed, its beacon round kept as published", retired, err)
	}
	if !strings.Contains(logs.String(), "names a beacon round this installation does not fetch") {
		t.Fatalf("the log does not say why the chain was retired:\n%s", logs.String())
	}
}

// A beacon whose period is not a whole number of seconds cannot be
// published as chains publish it: the table refuses to start.
func TestBeaconPeriodInWholeSeconds(t *testing.T) {
	t.Parallel()
	srv := beacontest.New(t, beacontest.Options{Period: 1500 * time.Millisecond})
	c, err := beacon.NewClient(srv.URL, srv.Network, beacon.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(context.Background(), storetest.SQLite(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	_, err = engine.New(context.Background(), engine.Config{Game: testGame, Store: st.Records(), Chains: st.HashChains(), Sealer: engine.FixedSealer(), Beacon: c})
	if err == nil || !strings.Contains(err.Error(), "whole number of seconds") || errors.Is(err, context.Canceled) {
		t.Fatalf("New with a 1.5 s beacon = %v; want a refusal", err)
	}
}

// waitFor polls cond until it holds, failing the test after stateWait.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(stateWait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}
