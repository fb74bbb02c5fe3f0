package fairness

import (
	"crypto/sha256"
	"errors"
	"fmt"
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
}

// RoundCheck is what verifying one round established.
type RoundCheck struct {
	CrashPoint int64  // the formula's, in hundredths, with the chain's salt and settings
	Position   int64  // the round's position in the chain
	Reached    string // what the walk reached, in words
	SaltCheck  string // what the salt check found, in words
}

// VerifyChainRound verifies a round's revealed hash against its chain's
// published document: the salt is the salt rule's (Salt) applied to the
// terminal and the contributions; the crash point is the formula's with the
// chain's salt and settings; and applying SHA-256 to the hash reaches the
// terminal, or one of the published checkpoints, within the chain's length,
// which gives the round's position. Any break is an error.
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
