// Package chains holds the hash chains as the game records them: a chain's
// public facts (its terminal hash, its settings, its seeding and reveal
// windows, the beacon round it names, its salt once fixed), the
// contributions the salt is made of, the refusals a contribution can meet,
// and the repository that keeps them (package store implements it:
// (*store.Store).HashChains).
//
// It must never compute a hash, a salt or a crash point (package fairness
// and the engine do), never hold a chain's seed other than sealed, and never
// hold a table, a bun model or an SQL statement (package store does).
package chains

import (
	"context"
	"errors"
	"time"
)

// Refusals of the chains and their contributions.
var (
	// ErrChainNotFound: no chain has that id (or the game has none).
	ErrChainNotFound = errors.New("chains: chain not found")
	// ErrSeedingClosed: the chain's salt is fixed, or its seeding window is
	// over: it takes no more contributions.
	ErrSeedingClosed = errors.New("chains: the chain's seeding window is closed")
	// ErrContributionConflict: this contributor already gave the chain
	// another value.
	ErrContributionConflict = errors.New("chains: another value was contributed to the chain")
	// ErrPlainChain: the chain was published before commit-reveal (its
	// contribution rule is RulePlain); it takes no commitment and no reveal.
	ErrPlainChain = errors.New("chains: the chain takes plain contributions, not commitments")
	// ErrCommitRequired: a plain value offered to a commit_reveal chain.
	ErrCommitRequired = errors.New("chains: the chain takes commitments, not plain values")
	// ErrRevealNotOpen: a value is revealed before the chain's seeding
	// window is over (while other commitments may still arrive).
	ErrRevealNotOpen = errors.New("chains: the chain's reveal window is not open yet")
	// ErrRevealClosed: the chain's reveal window is over, or its salt is fixed.
	ErrRevealClosed = errors.New("chains: the chain's reveal window is closed")
	// ErrNoCommitment: the operator committed to nothing in the chain's
	// seeding window, so it has nothing to reveal.
	ErrNoCommitment = errors.New("chains: no commitment to reveal")
	// ErrRevealMismatch: the SHA-256 of the revealed value is not the
	// operator's commitment.
	ErrRevealMismatch = errors.New("chains: the value does not hash to the commitment")
)

// Salt sources, as published: how a chain's salt was made.
const (
	SaltFromContributions = "contributions" // operators contributed (and a beacon, when configured)
	SaltFromGameDraw      = "game_draw"     // no operator contributed: the game's own draw, made after the commitment
	SaltLegacy            = "legacy"        // drawn with the seed, before chains were public (migration 0007)
)

// Contribution sources.
const (
	SourceOperator = "operator"
	SourceBeacon   = "beacon"
	SourceGame     = "game"
)

// Contribution rules: how a chain takes its operators' values.
const (
	// RulePlain: the value itself is sent in the seeding window (chains
	// published before migration 0011).
	RulePlain = "plain"
	// RuleCommitReveal: the SHA-256 of the value (its commitment) is sent in
	// the seeding window, the value in the reveal window after it; an
	// unrevealed value is replaced by its commitment in the salt.
	RuleCommitReveal = "commit_reveal"
)

// Chain is one hash chain of a game, a permanent public commitment: it is
// recorded once, then only retired (LastSeq, RetiredAt) and, once, given its
// salt. Instants are whole milliseconds in UTC; the zero time.Time and nil
// mean "not yet" (or, for a chain recorded before the field existed, "not
// recorded").
type Chain struct {
	ID             string
	GameID         string
	Number         int64
	FirstSeq       int64
	Length         int64
	LastSeq        *int64 // nil while the chain may serve rounds
	Terminal       string
	RTPBasisPts    int64
	MaxMultiplier  int64
	FormulaVersion int64
	// SealedSeed is the seed sealed with the installation's key; nil for a
	// chain recorded before seeds were sealed (it serves no more rounds).
	SealedSeed    []byte
	CreatedAt     time.Time
	SeedingEndsAt time.Time
	Salt          *string // nil until fixed
	SaltSource    *string // a SaltFrom* value; nil until fixed
	SaltFixedAt   *time.Time
	// ContributionRule is RulePlain or RuleCommitReveal.
	ContributionRule string
	// RevealEndsAt ends the reveal window of a RuleCommitReveal chain; nil
	// for a RulePlain chain.
	RevealEndsAt *time.Time
	// RetiredAt is when the chain was retired (with LastSeq); nil for a
	// chain retired before it was recorded with no later chain of its game.
	RetiredAt *time.Time
	// Beacon is the beacon round the chain's salt takes; zero on a chain
	// that names none.
	Beacon Beacon
}

// SaltDueAt is when the chain's salt is fixed: the end of its reveal window
// (commit_reveal), else of its seeding window (plain).
func (c Chain) SaltDueAt() time.Time {
	if c.RevealEndsAt != nil {
		return *c.RevealEndsAt
	}
	return c.SeedingEndsAt
}

// Beacon is the round of a public randomness beacon that a chain names when
// it is published, with the network's published facts, and the round's
// signature once fetched and verified (with the salt). Network is "" on a
// chain that names no round.
type Beacon struct {
	Network   string // e.g. "quicknet"
	ChainHash string // 64 hex digits
	PublicKey string // compressed G2 point, hex
	Genesis   int64  // Unix seconds of round 1
	PeriodS   int64  // seconds between rounds
	Round     int64
	RoundAt   time.Time // when the network emits Round
	Signature string    // compressed G1 point, hex; "" until the salt is fixed
}

// Named reports whether the chain names a beacon round.
func (b Beacon) Named() bool { return b.Network != "" }

// Contribution is one value a chain's salt is made of. On a commit_reveal
// chain an operator's contribution holds its Commitment from the seeding
// window on, and its Value only once revealed ("" until then, and for ever
// when withheld: the commitment then stands in for it).
type Contribution struct {
	ChainID    string
	Source     string    // SourceOperator, SourceBeacon, SourceGame
	Name       string    // the operator's id, the beacon's label, "" for the game
	Value      string    // 64 lowercase hex digits; "" while not revealed
	ReceivedAt time.Time // the value's (plain) or the commitment's arrival
	Commitment string    // SHA-256 of Value, 64 lowercase hex; "" on a plain chain
	RevealedAt *time.Time
}

// SaltValue is the 32 bytes (in hex) the contribution gives the salt: its
// value, or its commitment when the value was not revealed.
func (c Contribution) SaltValue() string {
	if c.Value == "" {
		return c.Commitment
	}
	return c.Value
}

// Withheld reports whether the contribution is a commitment whose value was
// not revealed (final once the chain's salt is fixed).
func (c Contribution) Withheld() bool { return c.Value == "" && c.Commitment != "" }

// Repository keeps the chains and their contributions, in the transaction
// that ctx carries if any.
type Repository interface {
	// CurrentChain is the game's newest chain; ErrChainNotFound when it has
	// none.
	CurrentChain(ctx context.Context, gameID string) (Chain, error)
	// ChainByID is one chain; ErrChainNotFound when there is none.
	ChainByID(ctx context.Context, id string) (Chain, error)
	// Chains lists chains newest first (by creation, then id), of one game or
	// of all when gameID is "", after the chain before (its id; "" starts at
	// the newest; one that names no chain is ErrChainNotFound).
	Chains(ctx context.Context, gameID, before string, limit int) ([]Chain, error)
	// InsertChain records a new chain; a second chain of the same game and
	// number is an error.
	InsertChain(ctx context.Context, c Chain) error
	// RetireChain records that chain id serves no round after lastSeq,
	// retired at; a chain retired already keeps its first record.
	RetireChain(ctx context.Context, id string, lastSeq int64, at time.Time) error
	// FixSalt fixes chain id's salt once, with the chain locked: it reads the
	// contributions so far, records extra's (the game's own values: the
	// beacon, its draw) and sets the salt compute returns for them all. It
	// returns the chain as recorded afterwards, so a second caller gets the
	// first one's salt.
	FixSalt(ctx context.Context, id string, at time.Time, extra func(contributed []Contribution) []Contribution,
		compute func(chain Chain, all []Contribution) (salt, source string, err error)) (Chain, error)
	// SetBeaconSignature records the verified signature of the beacon round
	// chain id names, while its salt is not fixed.
	SetBeaconSignature(ctx context.Context, id, signature string) error
	// Contributions lists a chain's contributions in the order received.
	Contributions(ctx context.Context, chainID string) ([]Contribution, error)
	// AddCommitment records an operator's commitment to a commit_reveal
	// chain in its seeding window (the same one again returns the recorded
	// one, even after the window): ErrPlainChain, ErrSeedingClosed,
	// ErrContributionConflict.
	AddCommitment(ctx context.Context, c Contribution) (Contribution, error)
	// RevealContribution records the value of operator's commitment to chain
	// chainID in its reveal window: ErrRevealNotOpen, ErrRevealClosed,
	// ErrNoCommitment, ErrRevealMismatch, ErrPlainChain.
	RevealContribution(ctx context.Context, chainID, operator, value string, at time.Time) (Contribution, error)
}
