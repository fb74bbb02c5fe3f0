package fairness

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/crashstudio/crashgame/internal/beacon"
)

// ErrSaltMismatch: a chain's published salt is not the salt rule applied to
// its terminal hash and its published contributions.
var ErrSaltMismatch = errors.New("fairness: the salt is not made of the published contributions")

// ErrCommitmentMismatch: a contribution of a commit_reveal chain is not what
// its commitment allows: a revealed value whose SHA-256 is not the
// commitment, or a withheld one whose value is not the commitment itself.
var ErrCommitmentMismatch = errors.New("fairness: a contribution does not match its commitment")

// ChainDocument is what a chain publishes, as a verifier needs it
// (GET /fairness/chains/{chain_id}).
type ChainDocument struct {
	Terminal       string // 64 hex digits
	Salt           string
	RTPBasisPoints int64
	MaxMultiplier  int64
	Length         int64
	Contributions  []string // every contribution's value, 64 hex digits each
	// Commitments holds, beside each contribution, its commitment ("" when
	// it has none: a plain chain, the beacon, the game's draw), and Withheld
	// whether its value was withheld (then the value is the commitment).
	Commitments []string
	Withheld    []bool
	// LegacySalt marks a chain whose salt the server drew with its seed,
	// before salts were contributed: there is no rule to check it against.
	LegacySalt  bool
	Checkpoints map[int64]string // position -> the hash of the round there
	// Sources and Labels hold, beside each contribution, its source
	// ("operator", "beacon", "game") and label.
	Sources []string
	Labels  []string
	// Beacon is the beacon round the chain names; nil when it names none.
	Beacon *ChainBeacon
	// WindowEnd is the end of the chain's contribution window (Unix ms):
	// reveal_ends_at on a commit_reveal chain, seeding_ends_at on a plain one.
	WindowEnd int64
	// SaltFixedAt is when the salt was fixed (Unix ms).
	SaltFixedAt int64
}

// RoundCheck is what verifying one round established.
type RoundCheck struct {
	CrashPoint int64  // the formula's, in hundredths, with the chain's salt and settings
	Position   int64  // the round's position in the chain
	Reached    string // what the walk reached, in words
	SaltCheck  string // what the salt check found, in words
	// BeaconCheck is what the beacon check found, in words: the round it
	// verified, or that the chain names no beacon, or that its beacon value
	// was a configured one ("" for a legacy salt).
	BeaconCheck string
}

// VerifyChainRound verifies a round's revealed hash against its chain's
// published document: the salt is the salt rule's (Salt) applied to the
// terminal and the contributions; the crash point is the formula's with the
// chain's salt and settings; and applying SHA-256 to the hash reaches the
// terminal, or one of the published checkpoints, within the chain's length,
// which gives the round's position. When the chain names a beacon round,
// that round must be the one the rule names for the chain's window, with its
// time, a BLS signature of the network's under the published public key
// (internal/beacon), randomness SHA-256 of that signature, exactly one
// beacon contribution of that randomness labelled "drand <network> round
// <round>", and a salt fixed no earlier than the round. Any break is an
// error.
func VerifyChainRound(hashHex string, c ChainDocument) (RoundCheck, error) {
	var out RoundCheck
	hash, err := ParseHash(hashHex)
	if err != nil {
		return out, err
	}
	terminal, err := ParseHash(c.Terminal)
	if err != nil {
		return out, fmt.Errorf("the chain's terminal hash: %w", err)
	}
	if err := CheckParams(c.Salt, c.RTPBasisPoints, c.MaxMultiplier); err != nil {
		return out, err
	}
	if c.Length < 1 {
		return out, fmt.Errorf("%w: length %d", ErrInvalidParams, c.Length)
	}
	switch {
	case c.LegacySalt:
		out.SaltCheck = "drawn by the server before salts were contributed: no rule to check it against"
	default:
		values := make([][32]byte, len(c.Contributions))
		for i, v := range c.Contributions {
			if values[i], err = ParseHash(v); err != nil {
				return out, fmt.Errorf("contribution %d: %w", i+1, err)
			}
		}
		committed := 0
		for i, cm := range c.Commitments {
			if cm == "" || i >= len(values) {
				continue
			}
			committed++
			withheld := i < len(c.Withheld) && c.Withheld[i]
			if sum := sha256.Sum256(values[i][:]); (withheld && c.Contributions[i] != cm) || (!withheld && FormatHash(sum) != cm) {
				return out, fmt.Errorf("contribution %d: %w", i+1, ErrCommitmentMismatch)
			}
		}
		if len(values) == 0 || Salt(terminal, values) != c.Salt {
			return out, ErrSaltMismatch
		}
		if len(c.Sources) != 0 && len(c.Sources) != len(values) {
			return out, fmt.Errorf("%w: %d contribution sources for %d contributions", ErrBeaconMismatch, len(c.Sources), len(values))
		}
		if out.BeaconCheck, err = checkBeacon(c, values); err != nil {
			return out, err
		}
		out.SaltCheck = fmt.Sprintf("the salt rule applied to the terminal hash and the %d published contributions gives it", len(values))
		if committed > 0 {
			out.SaltCheck += fmt.Sprintf("; each of the %d committed contributions matches its commitment (revealed: SHA-256 of the value; withheld: the commitment itself)", committed)
		}
	}
	out.CrashPoint = CrashPoint(hash, c.Salt, c.RTPBasisPoints, c.MaxMultiplier)
	at := make(map[[32]byte]int64, len(c.Checkpoints))
	for pos, hx := range c.Checkpoints {
		h, err := ParseHash(hx)
		if err != nil {
			return out, fmt.Errorf("the checkpoint at position %d: %w", pos, err)
		}
		at[h] = pos
	}
	h := hash
	for k := int64(1); k <= c.Length; k++ {
		h = sha256.Sum256(h[:])
		if h == terminal {
			out.Position, out.Reached = k, fmt.Sprintf("reached the published terminal hash after %d steps", k)
			break
		}
		if pos, ok := at[h]; ok {
			out.Position, out.Reached = pos+k, fmt.Sprintf("reached the published checkpoint at position %d after %d steps", pos, k)
			break
		}
	}
	switch {
	case out.Position == 0:
		return out, fmt.Errorf("%w: neither the terminal nor a checkpoint within the chain's %d rounds", ErrNotInChain, c.Length)
	case out.Position > c.Length:
		return out, fmt.Errorf("%w: position %d is beyond the chain's %d rounds", ErrNotInChain, out.Position, c.Length)
	}
	return out, nil
}

// ErrBeaconMismatch: a chain's beacon round is not what its document allows:
// another round than the rule names, a round_time that is not the round's,
// a signature that is not the network's signature of the round, randomness
// that is not SHA-256 of the signature, a salt without exactly one beacon
// contribution of that randomness and label, or a salt fixed before the
// round was emitted.
var ErrBeaconMismatch = errors.New("fairness: the chain's beacon round does not verify")

// ChainBeacon is the beacon round a chain names (table.v1 1.3.0, the chain
// document's "beacon"), as published.
type ChainBeacon struct {
	Network     string // a name for people, e.g. "quicknet"
	ChainHash   string // 64 hex digits
	PublicKey   string // 192 hex digits: a compressed G2 point
	GenesisTime int64  // Unix seconds of round 1
	PeriodS     int64  // seconds between rounds
	Scheme      string
	Round       uint64
	RoundTime   int64  // Unix ms when the round is emitted
	Signature   string // 96 hex digits, once the salt is fixed
	Randomness  string // 64 hex digits, once the salt is fixed
}

// BeaconRound is the round a chain names: the first round emitted strictly
// after windowEnd (Unix ms: reveal_ends_at, or seeding_ends_at on a plain
// chain) plus one period. With t = windowEnd + period: round 1 when t is
// before genesis, else floor((t - genesis) / period) + 2. It is 0, which is
// not a round, when periodS is below 1 (no schedule), or when the count of
// periods comes out negative (numbers so far beyond any schedule that their
// milliseconds overflow an int64).
func BeaconRound(windowEnd, genesisS, periodS int64) uint64 {
	if periodS < 1 {
		return 0
	}
	t := windowEnd + periodS*1000
	if t < genesisS*1000 {
		return 1
	}
	periods := (t - genesisS*1000) / (periodS * 1000)
	if periods < 0 {
		return 0
	}
	return uint64(periods) + 2
}

// BeaconRoundTime is the Unix ms at which a network emits round:
// (genesis + (round - 1) × period) × 1000. A round beyond math.MaxInt64,
// which no schedule in Unix ms reaches, gets math.MaxInt64: never.
func BeaconRoundTime(round uint64, genesisS, periodS int64) int64 {
	if round > math.MaxInt64 {
		return math.MaxInt64
	}
	return (genesisS + (int64(round)-1)*periodS) * 1000
}

// NoBeacon is what a chain that names no beacon rests on, in words.
const NoBeacon = "this chain names no beacon: its salt rests on the operators' commitments (and the game's draw when none committed)"

// checkBeacon checks the chain's beacon round against its document and
// returns what it established, in words.
func checkBeacon(c ChainDocument, values [][32]byte) (string, error) {
	var at []int
	for i, s := range c.Sources {
		if s == "beacon" {
			at = append(at, i)
		}
	}
	label := func(i int) string {
		if i < len(c.Labels) {
			return c.Labels[i]
		}
		return ""
	}
	b := c.Beacon
	if b == nil {
		if len(at) > 0 {
			return fmt.Sprintf("the beacon value (%q) was a configured value from the installation's file, not a future round: it was known before the chain existed", label(at[0])), nil
		}
		return NoBeacon, nil
	}
	fail := func(format string, a ...any) (string, error) {
		return "", fmt.Errorf("%w: %s", ErrBeaconMismatch, fmt.Sprintf(format, a...))
	}
	if b.PeriodS < 1 || b.GenesisTime < 0 {
		return fail("period_s %d and genesis_time %d are not a schedule", b.PeriodS, b.GenesisTime)
	}
	if c.WindowEnd <= 0 {
		return fail("the chain gives no window end to name the round from")
	}
	if want := BeaconRound(c.WindowEnd, b.GenesisTime, b.PeriodS); b.Round != want {
		return fail("round %d, but the first round emitted strictly after the window's end %d plus one period is %d", b.Round, c.WindowEnd, want)
	}
	if want := BeaconRoundTime(b.Round, b.GenesisTime, b.PeriodS); b.RoundTime != want {
		return fail("round_time %d, but round %d is emitted at %d", b.RoundTime, b.Round, want)
	}
	key, err := hex.DecodeString(b.PublicKey)
	if err != nil {
		return fail("the public key is not hex")
	}
	sig, err := hex.DecodeString(b.Signature)
	if err != nil || b.Signature == "" {
		return fail("round %d has no signature in hex, although the salt is fixed", b.Round)
	}
	net := beacon.Network{
		Name: b.Network, ChainHash: b.ChainHash, PublicKey: key, Scheme: b.Scheme,
		Genesis: time.Unix(b.GenesisTime, 0), Period: time.Duration(b.PeriodS) * time.Second,
	}
	v, err := net.Verify(b.Round, sig)
	if err != nil {
		return fail("%v", err)
	}
	if v.RandomnessHex() != b.Randomness {
		return fail("randomness %q is not SHA-256 of the signature (%s)", b.Randomness, v.RandomnessHex())
	}
	if len(at) != 1 {
		return fail("the salt has %d contributions of source beacon, want exactly one", len(at))
	}
	if FormatHash(values[at[0]]) != b.Randomness {
		return fail("the beacon contribution's value is not round %d's randomness", b.Round)
	}
	if want := fmt.Sprintf("drand %s round %d", b.Network, b.Round); label(at[0]) != want {
		return fail("the beacon contribution's label %q does not name the round: want %q", label(at[0]), want)
	}
	if c.SaltFixedAt < b.RoundTime {
		return fail("the salt was fixed at %d, before round %d's time %d", c.SaltFixedAt, b.Round, b.RoundTime)
	}
	return fmt.Sprintf("drand %s round %d (due %s), named for the first round after the window; its BLS signature verifies under the published public key, its randomness is SHA-256 of the signature and is the salt's beacon contribution, fixed after the round",
		b.Network, b.Round, time.UnixMilli(b.RoundTime).UTC().Format(time.RFC3339)), nil
}
