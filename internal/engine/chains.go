package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/crashstudio/crashgame/internal/beacon"
	"github.com/crashstudio/crashgame/internal/chains"
	"github.com/crashstudio/crashgame/internal/fairness"
	"github.com/crashstudio/crashgame/internal/seal"
)

// Beacon is a public randomness beacon (drand's quicknet in production):
// its network's published facts, and a round's value, verified under the
// network's key before it is returned. *beacon.Client satisfies it.
type Beacon interface {
	Network() beacon.Network
	// Fetch returns round's verified value; beacon.ErrNotYet while the
	// network has not emitted it.
	Fetch(ctx context.Context, round uint64) (beacon.Value, error)
}

// beaconRetry is how long a chain waiting for its beacon round waits
// between two fetches that failed, and beaconFetch bounds one fetch.
// BeaconWarnEvery is how often, on the table's clock, the log repeats that
// a chain still waits, after the first failed fetch: once a minute however
// long each fetch takes (a relay that drops requests costs beaconFetch a try,
// one that refuses them nothing).
const (
	beaconRetry     = 2 * time.Second
	beaconFetch     = 5 * time.Second
	BeaconWarnEvery = time.Minute
)

// BeaconWait is a chain that waits for its beacon round: the round's time
// passed and no fetch since has returned a value that verifies, so the game
// plays no round. Since is the round's time, as the chain published it.
type BeaconWait struct {
	GameID  string
	ChainID string
	Network string
	Round   int64
	Since   time.Time
	Err     error // the last fetch's
}

// Error says which game waits, for which round, since when and why; it is
// the reason /readyz gives.
func (w BeaconWait) Error() string {
	return fmt.Sprintf("game %s plays no round: its chain %s waits for drand %s round %d, due at %s: %v",
		w.GameID, w.ChainID, w.Network, w.Round, w.Since.UTC().Format(time.RFC3339), w.Err)
}

// BeaconWaiting reports whether the table's current chain waits for its
// beacon round (BeaconWait), and for how long on the table's clock. Only
// the leading table fetches the round, so only it reports a wait.
func (t *Table) BeaconWaiting() (BeaconWait, time.Duration, bool) {
	w := t.beaconWait.Load()
	if w == nil {
		return BeaconWait{}, 0, false
	}
	return *w, max(0, t.clock.Now().Sub(w.Since)), true
}

// DefaultSeedingWindow is how long a new chain takes contributions to its
// salt after its terminal hash is published, before its first round.
const DefaultSeedingWindow = 5 * time.Minute

// DefaultRevealWindow is how long, after its seeding window, a new chain
// takes the reveals of the values committed to in the window.
const DefaultRevealWindow = 2 * time.Minute

// chainID names a game's chain number n.
func chainID(gameID string, n int64) string { return fmt.Sprintf("%s-c%d", gameID, n) }

// chainUsable reports whether rec may serve round seq of this table: it is
// sealed (a chain recorded before seeds were sealed serves no more rounds),
// not retired, covers seq, and was committed with the game's settings.
func (t *Table) chainUsable(rec chains.Chain, seq int64) bool {
	return rec.SealedSeed != nil && rec.LastSeq == nil &&
		seq >= rec.FirstSeq && seq < rec.FirstSeq+rec.Length &&
		rec.RTPBasisPts == t.game.RTPBasisPoints && rec.MaxMultiplier == t.game.MaxMultiplier &&
		rec.FormulaVersion == fairness.FormulaVersion && t.beaconUsable(rec)
}

// beaconUsable reports whether the table can fix rec's salt with the beacon
// it is configured with: always once the salt is fixed; before, only when
// rec names a round of the configured beacon's network, or names none and
// none is configured. A chain that names a round the table cannot fetch is
// retired unplayed, and a new one published (as for a setting changed).
func (t *Table) beaconUsable(rec chains.Chain) bool {
	if rec.Salt != nil {
		return true
	}
	if t.cfg.Beacon == nil {
		return !rec.Beacon.Named()
	}
	return rec.Beacon.Named() && rec.Beacon.ChainHash == t.cfg.Beacon.Network().ChainHash
}

// beaconRound names the round of the configured beacon that a chain whose
// salt is due at due takes: the first round emitted more than one period
// after due, so that its value does not exist until every value the salt is
// made of is fixed, whatever the skew between the game's clock and the
// network's (up to a period). The zero Beacon when none is configured.
func (t *Table) beaconRound(due time.Time) (chains.Beacon, error) {
	if t.cfg.Beacon == nil {
		return chains.Beacon{}, nil
	}
	n := t.cfg.Beacon.Network()
	r := n.FirstRoundAfter(due.Add(n.Period))
	if r > math.MaxInt64 {
		return chains.Beacon{}, fmt.Errorf("engine: beacon %s: round %d is beyond what a chain records", n.Name, r)
	}
	return chains.Beacon{
		Network: n.Name, ChainHash: n.ChainHash, PublicKey: hex.EncodeToString(n.PublicKey),
		Genesis: n.Genesis.Unix(), PeriodS: int64(n.Period / time.Second),
		Round: int64(r), RoundAt: toMillis(n.TimeOf(r)),
	}, nil
}

// namedRound is the beacon round b names, numbered as the network numbers
// rounds; an error wrapping beacon.ErrInvalid for a number below 1, which
// no network emits (beaconRound records rounds from 1 on).
func namedRound(b chains.Beacon) (uint64, error) {
	if b.Round < 1 {
		return 0, fmt.Errorf("beacon round %d is not a round: %w", b.Round, beacon.ErrInvalid)
	}
	return uint64(b.Round), nil
}

// loadChain makes the table's chain the one that serves round seq: the
// game's current chain when it is usable, else a new one, published (its row
// inserted, the previous one retired at seq-1) in one fenced transaction.
// Loop only, while leading.
func (t *Table) loadChain(ctx context.Context, seq int64) error {
	cur, err := t.chains.CurrentChain(ctx, t.game.ID)
	switch {
	case err == nil && cur.LastSeq == nil && !t.beaconUsable(cur):
		// The chain waits for a round of a beacon this installation does not
		// name any more (fairness.beacon changed): its salt cannot be fixed
		// as it promised. It is retired unplayed and a new chain published.
		t.logger.Warn("the current hash chain names a beacon round this installation does not fetch (fairness.beacon changed): retiring the chain unplayed and publishing a new one",
			"chain_id", cur.ID, "beacon_network", cur.Beacon.Network, "beacon_round", cur.Beacon.Round)
	case err == nil && t.chainUsable(cur, seq):
		chain, err := t.openChain(cur)
		switch {
		case err == nil:
			t.chain, t.chainRec = chain, cur
			return nil
		case !errors.Is(err, seal.ErrOpen):
			return err
		}
		// The chain's seed does not open with this installation's seed_key
		// (the key was changed or lost): no round of it can be drawn any
		// more. It is retired below, its commitment unchanged, and a new
		// chain is published under the key in use.
		t.logger.Warn("the current hash chain's seed does not open with fairness.seed_key (the key was changed or lost): retiring the chain and publishing a new one",
			"chain_id", cur.ID, "retired_after_round", max(seq-1, cur.FirstSeq-1))
	case err != nil && !errors.Is(err, chains.ErrChainNotFound):
		return fmt.Errorf("engine: load chain of %s: %w", t.game.ID, err)
	}
	if err := fairness.CheckParams("salt", t.game.RTPBasisPoints, t.game.MaxMultiplier); err != nil {
		return fmt.Errorf("engine: game %s: %w", t.game.ID, err)
	}
	seed, err := fairness.NewSeed()
	if err != nil {
		return err
	}
	number := cur.Number + 1 // 1 when the game has no chain yet
	id := chainID(t.game.ID, number)
	sealed, err := t.cfg.Sealer.Seal(seed[:], id)
	if err != nil {
		return fmt.Errorf("engine: seal the seed of %s: %w", id, err)
	}
	chain := fairness.NewChain(seed, t.cfg.ChainLength)
	now := toMillis(t.clock.Now()) // as recorded: whole milliseconds
	seedingEnds := now.Add(t.cfg.SeedingWindow)
	revealEnds := now.Add(t.cfg.SeedingWindow + t.cfg.RevealWindow)
	rec := chains.Chain{
		ID: id, GameID: t.game.ID, Number: number, FirstSeq: seq, Length: int64(t.cfg.ChainLength),
		Terminal:    fairness.FormatHash(chain.Terminal()),
		RTPBasisPts: t.game.RTPBasisPoints, MaxMultiplier: t.game.MaxMultiplier, FormulaVersion: fairness.FormulaVersion,
		SealedSeed: sealed, CreatedAt: now, SeedingEndsAt: seedingEnds,
		ContributionRule: chains.RuleCommitReveal, RevealEndsAt: &revealEnds,
	}
	if rec.Beacon, err = t.beaconRound(rec.SaltDueAt()); err != nil {
		return err
	}
	err = t.fenced(ctx, t.epoch, func(ctx context.Context) error {
		if cur.ID != "" && cur.LastSeq == nil {
			if err := t.chains.RetireChain(ctx, cur.ID, max(seq-1, cur.FirstSeq-1), rec.CreatedAt); err != nil {
				return err
			}
		}
		return t.chains.InsertChain(ctx, rec)
	})
	if err != nil {
		return fmt.Errorf("engine: %w", err)
	}
	t.logger.Info("new hash chain published", "chain_id", id, "first_round", seq, "rounds", t.cfg.ChainLength,
		"terminal", rec.Terminal, "seeding_ends_at", rec.SeedingEndsAt, "reveal_ends_at", revealEnds,
		"beacon_network", rec.Beacon.Network, "beacon_round", rec.Beacon.Round)
	t.chain, t.chainRec = chain, rec
	return nil
}

// openChain unseals a chain's seed and recomputes the chain.
func (t *Table) openChain(rec chains.Chain) (*fairness.Chain, error) {
	if rec.SealedSeed == nil {
		return nil, fmt.Errorf("engine: chain %s has no sealed seed", rec.ID)
	}
	plain, err := t.cfg.Sealer.Open(rec.SealedSeed, rec.ID)
	if err != nil {
		return nil, fmt.Errorf("engine: open the seed of %s: %w", rec.ID, err) // wraps seal.ErrOpen
	}
	var seed [32]byte
	if copy(seed[:], plain) != len(seed) || len(plain) != len(seed) {
		return nil, fmt.Errorf("engine: the seed of %s is not 32 bytes", rec.ID)
	}
	return fairness.NewChain(seed, int(rec.Length)), nil
}

// fixSalt fixes the salt of the table's chain once its reveal window (a
// plain chain: its seeding window) is over, and, on a chain that names a
// beacon round, once that round's value v has verified: from every
// operator's revealed value, the commitment of every operator that
// committed but did not reveal, the beacon round's randomness, and, when no
// operator committed and the chain names no beacon round, a value the game
// draws now, after the commitment (the chain page says so). With a beacon
// round the game draws nothing: the round did not exist when the windows
// closed, so the house has no choice left to make. A salt another leader
// fixed first is kept.
func (t *Table) fixSalt(ctx context.Context, v *beacon.Value) error {
	extra := func(contributed []chains.Contribution) []chains.Contribution {
		at := toMillis(t.clock.Now())
		var out []chains.Contribution
		if v != nil {
			out = append(out, chains.Contribution{ChainID: t.chainRec.ID, Source: chains.SourceBeacon,
				Name: BeaconLabel(t.chainRec.Beacon), Value: v.RandomnessHex(), ReceivedAt: at})
			return out
		}
		for _, c := range contributed {
			if c.Source == chains.SourceOperator {
				return out
			}
		}
		var draw [32]byte
		_, _ = rand.Read(draw[:]) // crypto/rand.Read never fails (Go 1.24+)
		return append(out, chains.Contribution{ChainID: t.chainRec.ID, Source: chains.SourceGame, Value: hex.EncodeToString(draw[:]), ReceivedAt: at})
	}
	var rec chains.Chain
	err := t.fenced(ctx, t.epoch, func(ctx context.Context) error {
		if v != nil {
			if err := t.chains.SetBeaconSignature(ctx, t.chainRec.ID, v.SignatureHex()); err != nil {
				return err
			}
		}
		var err error
		rec, err = t.chains.FixSalt(ctx, t.chainRec.ID, toMillis(t.clock.Now()), extra, MakeSalt)
		return err
	})
	if err != nil {
		return fmt.Errorf("engine: fix the salt of %s: %w", t.chainRec.ID, err)
	}
	t.logger.Info("the chain's salt is fixed", "chain_id", rec.ID, "salt", *rec.Salt, "salt_source", *rec.SaltSource,
		"beacon_round", rec.Beacon.Round)
	t.chainRec = rec
	return nil
}

// verifyBeacon checks that v is the value of the beacon round the table's
// chain names, signed under the public key the chain published, and returns
// it with its randomness computed here (SHA-256 of the signature).
func (t *Table) verifyBeacon(v beacon.Value) (beacon.Value, error) {
	b := t.chainRec.Beacon
	key, err := hex.DecodeString(b.PublicKey)
	if err != nil {
		return beacon.Value{}, fmt.Errorf("engine: the public key chain %s names: %w", t.chainRec.ID, err)
	}
	n := beacon.Network{Name: b.Network, ChainHash: b.ChainHash, PublicKey: key, Genesis: time.Unix(b.Genesis, 0),
		Period: time.Duration(b.PeriodS) * time.Second, Scheme: beacon.Scheme}
	round, err := namedRound(b)
	if err != nil {
		return beacon.Value{}, fmt.Errorf("engine: chain %s: %w", t.chainRec.ID, err)
	}
	if v.Round != round {
		return beacon.Value{}, fmt.Errorf("engine: the beacon answered round %d, chain %s names %d: %w", v.Round, t.chainRec.ID, b.Round, beacon.ErrInvalid)
	}
	checked, err := n.Verify(v.Round, v.Signature)
	if err != nil {
		return beacon.Value{}, fmt.Errorf("engine: beacon round %d for chain %s: %w", b.Round, t.chainRec.ID, err)
	}
	return checked, nil
}

// BeaconLabel is the label of a chain's beacon contribution: which network
// and round, e.g. "drand quicknet round 12345678".
func BeaconLabel(b chains.Beacon) string {
	return fmt.Sprintf("drand %s round %d", b.Network, b.Round)
}

// MakeSalt is the salt rule applied to a chain and its contributions
// (fairness.Salt over each row's SaltValue: the value, or the commitment of
// a value withheld): "contributions" when a value the game did not choose
// is among them (an operator's, or the beacon round the chain named when it
// was published), "game_draw" otherwise.
func MakeSalt(chain chains.Chain, all []chains.Contribution) (salt, source string, err error) {
	terminal, err := fairness.ParseHash(chain.Terminal)
	if err != nil {
		return "", "", fmt.Errorf("engine: terminal of %s: %w", chain.ID, err)
	}
	source = chains.SaltFromGameDraw
	values := make([][32]byte, 0, len(all))
	for _, c := range all {
		v, err := fairness.ParseHash(c.SaltValue())
		if err != nil {
			return "", "", fmt.Errorf("engine: a contribution to %s: %w", chain.ID, err)
		}
		values = append(values, v)
		if c.Source == chains.SourceOperator || (c.Source == chains.SourceBeacon && chain.Beacon.Named()) {
			source = chains.SaltFromContributions
		}
	}
	return fairness.Salt(terminal, values), source, nil
}

// prepareChain makes sure round seq can be drawn: a chain that serves it,
// whose salt is fixed, waiting out the seeding and reveal windows of a new
// chain, and then for the beacon round it names. It returns false when the
// lease was lost (or the table is stopping) while it waited.
func (t *Table) prepareChain(ctx context.Context, seq int64) (bool, error) {
	if t.chain == nil || !t.chainUsable(t.chainRec, seq) {
		if err := t.loadChain(ctx, seq); err != nil {
			return false, err
		}
	}
	if t.chainRec.Salt != nil {
		return true, nil
	}
	if !t.wait(t.chainRec.SaltDueAt(), true) || t.isStopping() {
		return false, nil
	}
	var v *beacon.Value
	if t.chainRec.Beacon.Named() {
		got, ok := t.awaitBeacon(ctx)
		if !ok {
			return false, nil
		}
		v = &got
	}
	return true, t.fixSalt(ctx, v)
}

// awaitBeacon waits for the beacon round the table's chain names, then
// fetches it until its value verifies, however long that takes: a chain
// whose beacon is unreachable plays no round, and says so in the log (its
// page shows it waiting); it never falls back to another value. It returns
// false when the lease was lost (or the table is stopping) while it waited.
//
// From its first failed fetch until it returns, the wait is the table's
// BeaconWaiting (for /readyz and crashgame_chain_waiting_seconds), and the
// log says so at once, then every BeaconWarnEvery on the table's clock.
func (t *Table) awaitBeacon(ctx context.Context) (beacon.Value, bool) {
	b := t.chainRec.Beacon
	defer t.beaconWait.Store(nil)
	var warned time.Time // when the log last said the chain waits
	for try := 0; ; try++ {
		if !t.wait(b.RoundAt, true) || t.isStopping() {
			return beacon.Value{}, false
		}
		v, err := t.fetchBeacon(ctx)
		if err == nil {
			if try > 0 {
				t.logger.Info("the beacon round arrived and verified", "chain_id", t.chainRec.ID, "beacon_round", b.Round, "tries", try+1,
					"waited", t.clock.Now().Sub(b.RoundAt).Round(time.Second).String())
			}
			return v, true
		}
		t.beaconWait.Store(&BeaconWait{GameID: t.game.ID, ChainID: t.chainRec.ID, Network: b.Network, Round: b.Round, Since: b.RoundAt, Err: err})
		// The cadence is the clock's, not the tries': a try that waits out
		// beaconFetch takes 7 s, and counting 30 tries warned every 210 s.
		if now := t.clock.Now(); warned.IsZero() || now.Sub(warned) >= BeaconWarnEvery {
			warned = now
			t.logger.Warn("waiting for the beacon round the chain names: no round is played until its value verifies",
				"chain_id", t.chainRec.ID, "beacon_network", b.Network, "beacon_round", b.Round, "round_time", b.RoundAt,
				"waited", now.Sub(b.RoundAt).Round(time.Second).String(), "tries", try+1, "err", err)
		}
		if !t.wait(t.clock.Now().Add(beaconRetry), true) || t.isStopping() {
			return beacon.Value{}, false
		}
	}
}

// fetchBeacon fetches the beacon round the table's chain names, within
// beaconFetch, and returns its value once it verified.
func (t *Table) fetchBeacon(ctx context.Context) (beacon.Value, error) {
	round, err := namedRound(t.chainRec.Beacon)
	if err != nil {
		return beacon.Value{}, fmt.Errorf("engine: chain %s: %w", t.chainRec.ID, err)
	}
	fctx, cancel := context.WithTimeout(ctx, beaconFetch)
	v, err := t.cfg.Beacon.Fetch(fctx, round)
	cancel()
	if err != nil {
		return beacon.Value{}, err
	}
	// Checked again here, whatever Fetch checked: the salt takes only the
	// named round's value under the named network's key, its randomness
	// recomputed from the signature.
	return t.verifyBeacon(v)
}

// reveal returns the hash and the crash point of round r,
// for a round interrupted before it crashed (Recover): from the table's
// chain, or by opening the sealed seed of rec.
func (t *Table) reveal(ctx context.Context, r RoundRecord) (hash string, crash int64, err error) {
	if r.Hash != "" {
		return r.Hash, r.CrashPoint, nil // revealed already (a round recorded before migration 0007)
	}
	rec, chain := t.chainRec, t.chain
	if chain == nil || rec.ID != r.ChainID {
		if rec, err = t.chains.ChainByID(ctx, r.ChainID); err != nil {
			return "", 0, fmt.Errorf("engine: the chain of round %s: %w", r.ID, err)
		}
		if chain, err = t.openChain(rec); err != nil {
			return "", 0, err
		}
	}
	if rec.Salt == nil {
		return "", 0, fmt.Errorf("engine: round %s is on chain %s, whose salt is not fixed", r.ID, rec.ID)
	}
	h, err := chain.Hash(int(r.Position))
	if err != nil {
		return "", 0, fmt.Errorf("engine: round %s: %w", r.ID, err)
	}
	return fairness.FormatHash(h), fairness.CrashPoint(h, *rec.Salt, rec.RTPBasisPts, rec.MaxMultiplier), nil
}
