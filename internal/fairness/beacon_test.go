package fairness_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/internal/beacon"
	"github.com/crashstudio/crashgame/internal/beacon/beacontest"
	"github.com/crashstudio/crashgame/internal/fairness"
)

// beaconChain publishes a commit_reveal chain whose salt takes an operator's
// value and the given beacon round's value (randomness, under signature),
// named for a reveal window ending at windowEnd, the salt fixed 700 ms after
// the round's time.
func beaconChain(net beacon.Network, windowEnd int64, round uint64, signature []byte, randomness [32]byte) published {
	var seed [32]byte
	copy(seed[:], "a seed for the beacon's chain...")
	operator := sha256.Sum256([]byte("acme-bet's value"))
	p := publish(seed, 60, 25, [][32]byte{operator, randomness}, 9700, 100000, 10)
	genesis, period := net.Genesis.Unix(), int64(net.Period/time.Second)
	roundTime := fairness.BeaconRoundTime(round, genesis, period)
	p.doc.Sources = []string{"operator", "beacon"}
	p.doc.Labels = []string{"", fmt.Sprintf("drand %s round %d", net.Name, round)}
	p.doc.WindowEnd = windowEnd
	p.doc.SaltFixedAt = roundTime + 700
	p.doc.Beacon = &fairness.ChainBeacon{
		Network: net.Name, ChainHash: net.ChainHash, PublicKey: hex.EncodeToString(net.PublicKey),
		GenesisTime: genesis, PeriodS: period, Scheme: net.Scheme,
		Round: round, RoundTime: roundTime,
		Signature: hex.EncodeToString(signature), Randomness: hex.EncodeToString(randomness[:]),
	}
	return p
}

// The rule that names a chain's round, on a schedule of 3-second rounds from
// a genesis at second 1000: the first round emitted strictly after the
// window's end plus one period.
func TestBeaconRound(t *testing.T) {
	t.Parallel()
	const genesis, period = 1000, 3
	for _, c := range []struct {
		windowEnd int64
		want      uint64
	}{
		{0, 1},                    // long before genesis
		{996_999, 1},              // + 3 s is before genesis: round 1 is still to come
		{997_000, 2},              // + 3 s is genesis itself: round 1 is out, round 2 is next
		{999_999, 2},              // + 3 s = 1002.999 s: round 1 current
		{1_000_000, 3},            // + 3 s = 1003 s: round 2 is emitted then, so round 3
		{1_002_500, 3},            // 1005.5 s: round 2 current
		{1_003_000, 4},            // 1006 s: round 3 emitted exactly then
		{1_000_000 + 3_000*9, 12}, // 1030 s: round 11 emitted exactly then
	} {
		got := fairness.BeaconRound(c.windowEnd, genesis, period)
		if got != c.want {
			t.Errorf("window end %d ms: round %d, want %d", c.windowEnd, got, c.want)
		}
		if at := fairness.BeaconRoundTime(got, genesis, period); at <= c.windowEnd+period*1000 {
			t.Errorf("window end %d ms: round %d is emitted at %d, not strictly after the window's end plus one period", c.windowEnd, got, at)
		}
		if got > 1 && fairness.BeaconRoundTime(got-1, genesis, period) > c.windowEnd+period*1000 {
			t.Errorf("window end %d ms: round %d is not the first round after the window's end plus one period", c.windowEnd, got)
		}
	}
}

// A chain whose salt takes drand's real quicknet round 657413 (a published
// fact: the drand-verify Python package's README verifies it) verifies, BLS
// signature included, against drand's own public key.
func TestRealQuicknetRoundVerifies(t *testing.T) {
	t.Parallel()
	sig, _ := hex.DecodeString("b713718a38ae728dfd477991af2822e08d2f305e47718cef9f7848ce4050e7be41076862b98fad56e91a6b85b89cd97b")
	var randomness [32]byte
	if _, err := hex.Decode(randomness[:], []byte("fc1873a13f3545aeade8401532ef5519920652eee6b0d2b19ca12643b87b3587")); err != nil {
		t.Fatal(err)
	}
	qn := beacon.Quicknet()
	windowEnd := qn.Genesis.UnixMilli() + 1_972_230_500 // round 657412 is out 2.5 s after it + 3 s
	p := beaconChain(qn, windowEnd, 657413, sig, randomness)
	if p.doc.Beacon.RoundTime != 1694775603000 {
		t.Fatalf("round 657413's time: %d", p.doc.Beacon.RoundTime)
	}
	res, err := fairness.VerifyChainRound(p.hashes[4], p.doc)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.BeaconCheck, "drand quicknet round 657413") || !strings.Contains(res.BeaconCheck, "BLS signature verifies") {
		t.Fatalf("beacon check: %q", res.BeaconCheck)
	}
	p.doc.Beacon.Signature = p.doc.Beacon.Signature[:94] + "7c"
	if _, err := fairness.VerifyChainRound(p.hashes[4], p.doc); !errors.Is(err, fairness.ErrBeaconMismatch) {
		t.Fatalf("a changed quicknet signature: %v", err)
	}
}

// With a local beacon's real signatures: the honest chain verifies, and
// every change to its beacon is ErrBeaconMismatch.
func TestBeaconChecks(t *testing.T) {
	t.Parallel()
	genesis := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	srv := beacontest.New(t, beacontest.Options{Genesis: genesis, Now: func() time.Time { return genesis }})
	other := beacontest.New(t, beacontest.Options{Genesis: genesis, Now: func() time.Time { return genesis }})
	net := srv.Network
	windowEnd := genesis.UnixMilli() + 7*24*3600*1000 + 1234
	round := fairness.BeaconRound(windowEnd, genesis.Unix(), 3)
	v := srv.Sign(round)
	honest := func() published { return beaconChain(net, windowEnd, round, v.Signature, v.Randomness) }

	res, err := fairness.VerifyChainRound(honest().hashes[0], honest().doc)
	if err != nil {
		t.Fatalf("the honest chain: %v", err)
	}
	if want := fmt.Sprintf("drand beacontest round %d", round); !strings.Contains(res.BeaconCheck, want) {
		t.Fatalf("beacon check %q does not name %s", res.BeaconCheck, want)
	}

	houseValue := sha256.Sum256([]byte("a value the house chose"))
	next := srv.Sign(round + 1)
	for _, c := range []struct {
		name   string
		change func(p *published) published
	}{
		{"a later round named", func(p *published) published {
			return beaconChain(net, windowEnd, round+1, next.Signature, next.Randomness)
		}},
		{"an earlier round named", func(p *published) published {
			prev := srv.Sign(round - 1)
			return beaconChain(net, windowEnd, round-1, prev.Signature, prev.Randomness)
		}},
		{"the round number alone", func(p *published) published { p.doc.Beacon.Round++; return *p }},
		{"round_time", func(p *published) published { p.doc.Beacon.RoundTime += 3000; return *p }},
		{"the window's end", func(p *published) published { p.doc.WindowEnd += 3000; return *p }},
		{"randomness", func(p *published) published { p.doc.Beacon.Randomness = hex.EncodeToString(houseValue[:]); return *p }},
		{"the house's value in the salt, the signature kept", func(p *published) published {
			return beaconChain(net, windowEnd, round, v.Signature, houseValue)
		}},
		{"another round's signature", func(p *published) published {
			p.doc.Beacon.Signature = hex.EncodeToString(next.Signature)
			p.doc.Beacon.Randomness = next.RandomnessHex()
			return *p
		}},
		{"another key's signature of the round", func(p *published) published {
			w := other.Sign(round)
			return beaconChain(net, windowEnd, round, w.Signature, w.Randomness)
		}},
		{"no signature", func(p *published) published { p.doc.Beacon.Signature = ""; return *p }},
		{"no beacon contribution", func(p *published) published { p.doc.Sources[1] = "game"; return *p }},
		{"a label naming another round", func(p *published) published {
			p.doc.Labels[1] = fmt.Sprintf("drand beacontest round %d", round-1)
			return *p
		}},
		{"the salt fixed before the round", func(p *published) published {
			p.doc.SaltFixedAt = p.doc.Beacon.RoundTime - 1
			return *p
		}},
		{"another scheme", func(p *published) published { p.doc.Beacon.Scheme = "pedersen-bls-chained"; return *p }},
	} {
		p := honest()
		q := c.change(&p)
		_, err := fairness.VerifyChainRound(q.hashes[0], q.doc)
		if !errors.Is(err, fairness.ErrBeaconMismatch) {
			t.Errorf("%s: %v, want ErrBeaconMismatch", c.name, err)
		}
	}
}

// A chain that names no beacon, and a chain from before whose beacon value
// was configured, verify, and the check says which they are.
func TestChainsWithoutABeaconRound(t *testing.T) {
	t.Parallel()
	var seed [32]byte
	values := [][32]byte{sha256.Sum256([]byte("op")), sha256.Sum256([]byte("configured"))}
	p := publish(seed, 30, 5, values, 9700, 10000, 10)
	for _, c := range []struct {
		name    string
		sources []string
		want    string
	}{
		{"no beacon", []string{"operator", "game"}, fairness.NoBeacon},
		{"no sources read", nil, fairness.NoBeacon},
		{"a configured beacon value", []string{"operator", "beacon"}, "was a configured value from the installation's file, not a future round"},
	} {
		q := p
		q.doc.Sources, q.doc.Labels = c.sources, []string{"", "drand quicknet round 123"}
		res, err := fairness.VerifyChainRound(q.hashes[0], q.doc)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !strings.Contains(res.BeaconCheck, c.want) {
			t.Errorf("%s: %q, want %q", c.name, res.BeaconCheck, c.want)
		}
	}
}
