package engine_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/internal/chains"
	"github.com/crashstudio/crashgame/internal/engine"
	"github.com/crashstudio/crashgame/internal/fairness"
	"github.com/crashstudio/crashgame/internal/logtest"
	"github.com/crashstudio/crashgame/internal/round"
	"github.com/crashstudio/crashgame/internal/seal"
	"github.com/crashstudio/crashgame/internal/store"
	"github.com/crashstudio/crashgame/internal/store/storetest"
)

// start runs the table's loop without waiting for a round.
func (h *harness) start() {
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel, h.done = cancel, make(chan error, 1)
	go func() { h.done <- h.table.Run(ctx) }()
	h.t.Cleanup(h.stop)
}

// seedingChain waits for the table to publish its chain, in its seeding window.
func (h *harness) seedingChain() chains.Chain {
	h.t.Helper()
	deadline := time.Now().Add(stateWait)
	for time.Now().Before(deadline) {
		if c, err := h.st.HashChains().CurrentChain(context.Background(), testGame.ID); err == nil {
			return c
		}
		time.Sleep(time.Millisecond)
	}
	h.t.Fatal("no chain was published")
	return chains.Chain{}
}

func mustHash(t *testing.T, s string) [32]byte {
	t.Helper()
	h, err := fairness.ParseHash(s)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// A new chain is published with no salt and no round; operators commit in
// its seeding window and reveal in its reveal window; when that closes the
// salt is the rule's (terminal, every revealed value, the commitment of the
// operator that withheld, the beacon's value), made of values the game did
// not choose, and only then the first round opens. The windows then take no
// more commitments or values.
func TestSaltFixedAfterTheCommitmentFromContributions(t *testing.T) {
	t.Parallel()
	var h *harness
	bn := newBeacon(t, func() time.Time { return h.clock.Now() })
	h = newHarnessAdjusted(t, "", nil, nil, func(c *engine.Config) {
		c.SeedingWindow, c.RevealWindow, c.Beacon = 10*time.Second, 5*time.Second, bn.client
	})
	ctx := context.Background()
	h.start()
	c := h.seedingChain()
	if c.Salt != nil || !c.SeedingEndsAt.Equal(h.clock.Now().Add(10*time.Second).Truncate(time.Millisecond)) || c.Number != 1 || c.ID != "crash-c1" ||
		c.ContributionRule != chains.RuleCommitReveal || c.RevealEndsAt == nil || !c.RevealEndsAt.Equal(c.SeedingEndsAt.Add(5*time.Second)) {
		t.Fatalf("published chain %+v; want no salt yet, commit_reveal, a 10 s seeding window and a 5 s reveal window", c)
	}
	if seq, err := h.st.LastRoundSeq(ctx, testGame.ID); err != nil || seq != 0 {
		t.Fatalf("a round (%d, %v) was opened while the chain was seeding", seq, err)
	}
	values := map[string]string{"acme": strings.Repeat("a1", 32), "zero": strings.Repeat("0f", 32), "quiet": strings.Repeat("c4", 32)}
	commitment := func(v string) string {
		raw := mustHash(t, v)
		sum := sha256.Sum256(raw[:])
		return fairness.FormatHash(sum)
	}
	for op, v := range values {
		if _, err := h.st.HashChains().AddCommitment(ctx, chains.Contribution{ChainID: c.ID, Source: chains.SourceOperator, Name: op,
			Commitment: commitment(v), ReceivedAt: h.clock.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	h.clock.Set(c.SeedingEndsAt)
	for _, op := range []string{"acme", "zero"} { // quiet withholds
		if _, err := h.st.HashChains().RevealContribution(ctx, c.ID, op, values[op], h.clock.Now()); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(50 * time.Millisecond)
	if seq, err := h.st.LastRoundSeq(ctx, testGame.ID); err != nil || seq != 0 {
		t.Fatalf("a round (%d, %v) was opened in the reveal window", seq, err)
	}
	// The chain named, when it was published, the first beacon round
	// emitted more than a period after its reveal window: its value did
	// not exist while any value of the salt could still be chosen.
	if want := bn.srv.Network.FirstRoundAfter((*c.RevealEndsAt).Add(3 * time.Second)); c.Beacon.Round != int64(want) ||
		c.Beacon.RoundAt.Before((*c.RevealEndsAt).Add(3*time.Second)) || c.Beacon.Network != "beacontest" ||
		c.Beacon.ChainHash != bn.srv.Network.ChainHash || c.Beacon.Signature != "" {
		t.Fatalf("the chain's beacon %+v; want round %d, after its reveal window, no signature yet", c.Beacon, want)
	}
	h.clock.Set((*c.RevealEndsAt))
	time.Sleep(50 * time.Millisecond)
	if seq, err := h.st.LastRoundSeq(ctx, testGame.ID); err != nil || seq != 0 {
		t.Fatalf("a round (%d, %v) was opened before the beacon round", seq, err)
	}
	h.clock.Set(c.Beacon.RoundAt)
	v := h.waitPhase(engine.PhaseBetting)
	beaconValue := bn.srv.Sign(uint64(c.Beacon.Round))
	if v.Seq != 1 {
		t.Fatalf("first round seq %d", v.Seq)
	}
	fixed, err := h.st.HashChains().ChainByID(ctx, c.ID)
	if err != nil || fixed.Salt == nil || *fixed.SaltSource != chains.SaltFromContributions || fixed.SaltFixedAt.Before(c.Beacon.RoundAt) ||
		fixed.Beacon.Signature != beaconValue.SignatureHex() {
		t.Fatalf("the chain after its windows: %+v, %v; want the salt fixed at its beacon round, with the round's signature", fixed, err)
	}
	want := fairness.Salt(mustHash(t, c.Terminal), [][32]byte{
		mustHash(t, values["zero"]), beaconValue.Randomness, mustHash(t, values["acme"]), mustHash(t, commitment(values["quiet"]))})
	if *fixed.Salt != want {
		t.Fatalf("salt %s; want the rule's %s", *fixed.Salt, want)
	}
	list, err := h.st.HashChains().Contributions(ctx, c.ID)
	if err != nil || len(list) != 4 || slices.ContainsFunc(list, func(c chains.Contribution) bool { return c.Source == chains.SourceGame }) ||
		!slices.ContainsFunc(list, func(r chains.Contribution) bool {
			return r.Source == chains.SourceBeacon && r.Name == fmt.Sprintf("drand beacontest round %d", c.Beacon.Round) && r.Value == beaconValue.RandomnessHex()
		}) {
		t.Fatalf("contributions %+v, %v; want the three operators' and the beacon round's, no draw of the game", list, err)
	}
	if _, err := h.st.RevealContribution(ctx, c.ID, "quiet", values["quiet"], store.MillisOf(h.clock.Now())); !errors.Is(err, chains.ErrRevealClosed) {
		t.Fatalf("a value after the reveal window: %v, want ErrRevealClosed", err)
	}
	// The round is drawn with the chain's salt and settings.
	cp := h.crashPoint(v.RoundID)
	hash := mustHash(t, h.revealNow(v.RoundID))
	if cp != fairness.CrashPoint(hash, want, testGame.RTPBasisPoints, testGame.MaxMultiplier) {
		t.Fatalf("crash point %d is not the formula's with the fixed salt", cp)
	}
}

// revealNow plays the round to its crash and returns its revealed hash.
func (h *harness) revealNow(roundID string) string {
	h.t.Helper()
	v := h.fly()
	if v.Phase == engine.PhaseFlying {
		h.clock.Set(v.StartedAt.Add(round.TimeToReach(h.crashPoint(roundID))))
	}
	c := h.waitPhase(engine.PhaseCrashed)
	if c.RoundID != roundID {
		h.t.Fatalf("crashed %s, want %s", c.RoundID, roundID)
	}
	return c.Hash
}

// With no operator's contribution, the salt rests on one value the game
// draws when the window closes, after the commitment; the chain says so.
func TestSaltFromTheGamesDrawWithoutContributions(t *testing.T) {
	t.Parallel()
	h := newHarnessAdjusted(t, "", nil, nil, func(c *engine.Config) { c.SeedingWindow = 10 * time.Second })
	h.start()
	c := h.seedingChain()
	h.clock.Set(c.SaltDueAt())
	h.waitPhase(engine.PhaseBetting)
	ctx := context.Background()
	fixed, err := h.st.HashChains().ChainByID(ctx, c.ID)
	if err != nil || fixed.Salt == nil || *fixed.SaltSource != chains.SaltFromGameDraw || fixed.SaltFixedAt.Before(c.SaltDueAt()) {
		t.Fatalf("the chain after its window: %+v, %v", fixed, err)
	}
	list, err := h.st.HashChains().Contributions(ctx, c.ID)
	if err != nil || len(list) != 1 || list[0].Source != chains.SourceGame || list[0].ReceivedAt.Before(c.SaltDueAt()) {
		t.Fatalf("contributions %+v, %v; want the game's one draw, made when the window closed", list, err)
	}
	if want := fairness.Salt(mustHash(t, c.Terminal), [][32]byte{mustHash(t, list[0].Value)}); *fixed.Salt != want {
		t.Fatalf("salt %s; want the rule's %s", *fixed.Salt, want)
	}
}

// Restarting with another rtp_bp starts a new chain at the next round and
// retires the old one at its last round; the old rounds stay verifiable
// with the old chain's published settings, exactly as they were.
func TestNewSettingsStartANewChain(t *testing.T) {
	t.Parallel()
	dsn := storetest.SQLite(t)
	ctx := context.Background()
	first := newHarness(t, dsn)
	first.run()
	first.nextRound()
	first.nextRound()
	first.stop()
	old, err := first.st.HashChains().CurrentChain(ctx, testGame.ID)
	if err != nil {
		t.Fatal(err)
	}
	played, err := first.st.RecentRounds(ctx, testGame.ID, 10)
	if err != nil || len(played) < 2 {
		t.Fatalf("rounds of the first run: %d, %v", len(played), err)
	}

	second := newHarnessAdjusted(t, dsn, nil, nil, func(c *engine.Config) { c.Game.RTPBasisPoints = 9600 })
	second.run()
	v, _ := second.table.Round()
	now, err := second.st.HashChains().CurrentChain(ctx, testGame.ID)
	if err != nil || now.ID == old.ID || now.Number != old.Number+1 || now.RTPBasisPts != 9600 || now.FirstSeq != v.Seq {
		t.Fatalf("chain after the restart %+v, %v; want number %d with rtp_bp 9600 from round %d", now, err, old.Number+1, v.Seq)
	}
	retired, err := second.st.HashChains().ChainByID(ctx, old.ID)
	if err != nil || retired.LastSeq == nil || *retired.LastSeq != v.Seq-1 || retired.RTPBasisPts != 9700 || *retired.Salt != *old.Salt ||
		retired.Terminal != old.Terminal {
		t.Fatalf("the old chain %+v, %v; want it retired at %d, its commitment unchanged", retired, err, v.Seq-1)
	}
	for _, r := range played {
		if r.ChainID != old.ID {
			t.Fatalf("round %s names chain %q, want %s", r.ID, r.ChainID, old.ID)
		}
		cp, err := fairness.VerifyRound(r.Hash, *retired.Salt, retired.RTPBasisPts, retired.MaxMultiplier)
		if err != nil || cp != r.CrashPoint {
			t.Fatalf("round %s verifies to %d (%v) with its chain's settings, stored %d", r.ID, cp, err, r.CrashPoint)
		}
		if pos, err := fairness.ChainPosition(mustHash(t, r.Hash), mustHash(t, retired.Terminal), 1000); err != nil || int64(pos) != r.Position {
			t.Fatalf("round %s is at %d of its chain (%v), want %d", r.ID, pos, err, r.Position)
		}
	}
}

// A restart with another seed_key (the old one changed or lost) cannot open
// the current chain's seed: the chain is retired with its commitment
// unchanged, a new chain is published under the new key, rounds are played,
// and the log says why, naming no part of either key.
func TestNewSeedKeyStartsANewChain(t *testing.T) {
	t.Parallel()
	dsn := storetest.SQLite(t)
	ctx := context.Background()
	first := newHarness(t, dsn)
	first.run()
	first.nextRound()
	first.stop()
	old, err := first.st.HashChains().CurrentChain(ctx, testGame.ID)
	if err != nil {
		t.Fatal(err)
	}

	const newKey = "5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e"
	sealer := sealerOf(t, newKey)
	var logs logtest.Buffer
	second := newHarnessAdjusted(t, dsn, nil, nil, func(c *engine.Config) {
		c.Sealer = sealer
		c.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	})
	second.run() // waits for a betting round: the game plays
	second.nextRound()
	v, _ := second.table.Round()
	now, err := second.st.HashChains().CurrentChain(ctx, testGame.ID)
	if err != nil || now.ID == old.ID || now.Number != old.Number+1 || now.FirstSeq > v.Seq {
		t.Fatalf("chain after the restart %+v, %v; want number %d serving round %d", now, err, old.Number+1, v.Seq)
	}
	if _, err := sealer.Open(now.SealedSeed, now.ID); err != nil {
		t.Fatalf("the new chain's seed does not open with the new key: %v", err)
	}
	retired, err := second.st.HashChains().ChainByID(ctx, old.ID)
	if err != nil || retired.LastSeq == nil || *retired.LastSeq != now.FirstSeq-1 || retired.Terminal != old.Terminal ||
		*retired.Salt != *old.Salt {
		t.Fatalf("the old chain %+v, %v; want it retired at %d, its commitment unchanged", retired, err, now.FirstSeq-1)
	}
	out := logs.String()
	if !strings.Contains(out, "does not open with fairness.seed_key") || !strings.Contains(out, old.ID) {
		t.Fatalf("no log line says why chain %s was retired:\n%s", old.ID, out)
	}
	// No part of either key in the log (KEY-never-logged): 8 hex digits of
	// the new key, or the fixed key's, would be one.
	noKeyIn(t, out, newKey, hex.EncodeToString(engine.FixedKeyForTest()))
}

// A round interrupted on a chain whose seed the new key cannot open has its
// crash point nowhere else: recovery does not settle it on a made-up
// outcome. The log says what to do (start with the old key), with no part
// of either key; started with the old key, the round is settled by the
// fail-over rule and play goes on.
func TestInterruptedRoundWaitsForTheKeyItWasSealedWith(t *testing.T) {
	t.Parallel()
	dsn := storetest.SQLite(t)
	ctx := context.Background()
	first := newHarness(t, dsn)
	first.run()
	v, _ := first.table.Round()
	first.stop()
	// As a process killed in betting leaves it: the round still betting.
	if _, err := first.st.ExecForTest(ctx, `UPDATE rounds SET status = 'betting', hash = NULL, crash_point = NULL, voided_at = NULL, void_rule = NULL WHERE id = ?`, v.RoundID); err != nil {
		t.Fatal(err)
	}
	const newKey = "6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f"
	sealer := sealerOf(t, newKey)
	var logs logtest.Buffer
	second := newHarnessAdjusted(t, dsn, nil, nil, func(c *engine.Config) {
		c.Sealer = sealer
		c.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	})
	// Its debits' deadline has passed: the new table settles it at once.
	debitsEnd := v.BettingEndsAt.Add(engine.DefaultDebitGrace + engine.DebitClockMargin)
	second.clock.Set(debitsEnd)
	second.start()
	waitFor(t, "the log to say which key settles the round", func() bool {
		return strings.Contains(logs.String(), "start with the key the chain was sealed with")
	})
	second.stop()
	if r, err := second.st.Round(ctx, testGame.ID, v.RoundID); err != nil || r.Status != engine.RoundBetting {
		t.Fatalf("the interrupted round after a start with another key: %+v, %v; want it left unsettled", r, err)
	}
	if seq, err := second.st.LastRoundSeq(ctx, testGame.ID); err != nil || seq != v.Seq {
		t.Fatalf("last round %d, %v; want no round after %d", seq, err, v.Seq)
	}
	out := logs.String()
	noKeyIn(t, out, newKey, hex.EncodeToString(engine.FixedKeyForTest()))
	third := newHarness(t, dsn) // the key the chain was sealed with
	third.clock.Set(debitsEnd)
	third.start()
	var r store.RoundRecord
	waitFor(t, "the interrupted round to be settled with the old key back", func() bool {
		var err error
		r, err = third.st.Round(ctx, testGame.ID, v.RoundID)
		return err == nil && r.Status != engine.RoundBetting
	})
	if r.Status != engine.RoundVoid || r.VoidRule != engine.VoidFailoverBetting || r.Hash == "" {
		t.Fatalf("the interrupted round with the old key back: %+v; want it void by the fail-over rule, its hash revealed", r)
	}
	third.waitPhase(engine.PhaseBetting) // and play goes on
}

// Once a round's betting opens, the database holds nothing its crash point
// follows from without the sealed key: the round's row has no hash and no
// crash point, no stored value is its hash or a later round's, and the
// chain's seed is stored only sealed (no other key opens it).
func TestDatabaseCannotPredictARound(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, h *harness) {
		ctx := context.Background()
		h.run()
		v, _ := h.table.Round()
		r, err := h.st.Round(ctx, testGame.ID, v.RoundID)
		if err != nil || r.Hash != "" || r.CrashPoint != 0 || r.ChainID == "" || r.Position < 1 {
			t.Fatalf("the betting round as stored: %+v, %v; want its chain and position only", r, err)
		}
		c, err := h.st.HashChains().ChainByID(ctx, r.ChainID)
		if err != nil {
			t.Fatal(err)
		}
		seed, err := engine.FixedSealer().Open(c.SealedSeed, c.ID)
		if err != nil || len(seed) != 32 {
			t.Fatalf("the sealed seed does not open with the table's key: %v", err)
		}
		if bytes.Contains(c.SealedSeed, seed) || strings.Contains(string(c.SealedSeed), hex.EncodeToString(seed)) {
			t.Fatal("the chain's row holds its seed in the clear")
		}
		otherKey := bytes.Repeat([]byte{9}, seal.KeySize)
		other, _ := seal.New(otherKey)
		if _, err := other.Open(c.SealedSeed, c.ID); !errors.Is(err, seal.ErrOpen) {
			t.Fatalf("another key opened the seed: %v", err)
		}
		var s [32]byte
		copy(s[:], seed)
		chain := fairness.NewChain(s, int(c.Length))
		secret := map[string]bool{}
		for pos := r.Position; pos <= r.Position+5; pos++ {
			hh, _ := chain.Hash(int(pos))
			secret[fairness.FormatHash(hh)] = true
		}
		stored, err := h.st.RecentRounds(ctx, testGame.ID, 1000)
		if err != nil {
			t.Fatal(err)
		}
		for _, rr := range stored {
			if secret[rr.Hash] {
				t.Fatalf("round %s stores the hash of the live round or a later one", rr.ID)
			}
		}
		if secret[c.Terminal] || (c.Salt != nil && secret[*c.Salt]) {
			t.Fatal("the chain's row holds a live or later round's hash")
		}
	})
}

// sealerOf is a sealer of the 64 hex digits key.
func sealerOf(t *testing.T, key string) *seal.Sealer {
	t.Helper()
	k, err := seal.ParseKey(key)
	if err != nil {
		t.Fatal(err)
	}
	sealer, err := seal.New(k)
	if err != nil {
		t.Fatal(err)
	}
	return sealer
}

// noKeyIn fails t when out holds any 8 consecutive hex digits of a key
// (KEY-never-logged): no part of a key may be logged.
func noKeyIn(t *testing.T, out string, keys ...string) {
	t.Helper()
	for _, k := range keys {
		for i := 0; i+8 <= len(k); i += 4 {
			if strings.Contains(out, k[i:i+8]) {
				t.Fatalf("the log holds part of a key (%s...):\n%s", k[i:i+2], out)
			}
		}
	}
}
