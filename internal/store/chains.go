package store

import (
	"context"
	"fmt"

	"github.com/crashstudio/crashgame/internal/chains"
	"github.com/crashstudio/crashgame/internal/engine"
	"github.com/uptrace/bun"
)

// ChainRecord is one hash chain of a game, a permanent public commitment:
// its row is inserted once, then only retired (LastSeq) and, once, given its
// salt. SealedSeed is the seed sealed with the installation's key; nil for a
// chain recorded before seeds were sealed (it serves no more rounds).
type ChainRecord struct {
	bun.BaseModel `bun:"table:hash_chains"`

	ID             string  `bun:"id,pk"`
	GameID         string  `bun:"game_id"`
	Number         int64   `bun:"number"`
	FirstSeq       int64   `bun:"first_seq"`
	Length         int64   `bun:"length"`
	LastSeq        *int64  `bun:"last_seq"` // nil while the chain may serve rounds
	Terminal       string  `bun:"terminal"`
	RTPBasisPts    int64   `bun:"rtp_bp"`
	MaxMultiplier  int64   `bun:"max_multiplier"`
	FormulaVersion int64   `bun:"formula_version"`
	SealedSeed     []byte  `bun:"sealed_seed"`
	CreatedAt      Millis  `bun:"created_at"`
	SeedingEndsAt  Millis  `bun:"seeding_ends_at"`
	Salt           *string `bun:"salt"`        // nil until fixed
	SaltSource     *string `bun:"salt_source"` // nil until fixed
	SaltFixedAt    *Millis `bun:"salt_fixed_at"`
	// ContributionRule is chains.RulePlain or chains.RuleCommitReveal.
	ContributionRule string `bun:"contribution_rule"`
	// RevealEndsAt ends the reveal window of a chains.RuleCommitReveal chain,
	// when its salt is fixed; nil for a chains.RulePlain chain.
	RevealEndsAt *Millis `bun:"reveal_ends_at"`
	// RetiredAt is when the chain was retired (with LastSeq); nil for a chain
	// retired before migration 0012 with no later chain of its game.
	RetiredAt *Millis `bun:"retired_at"`
	// Beacon is the beacon round the chain's salt takes (migration 0013);
	// zero on a chain that names none.
	Beacon ChainBeacon `bun:"embed:beacon_"`
}

// ChainBeacon is the round of a public randomness beacon that a chain names
// when it is published, with the network's published facts, and the round's
// signature once fetched and verified (with the salt). Network is "" on a
// chain that names no round.
type ChainBeacon struct {
	Network   string `bun:"network,nullzero"`    // e.g. "quicknet"
	ChainHash string `bun:"chain_hash,nullzero"` // 64 hex digits
	PublicKey string `bun:"public_key,nullzero"` // compressed G2 point, hex
	Genesis   int64  `bun:"genesis,nullzero"`    // Unix seconds of round 1
	PeriodS   int64  `bun:"period_s,nullzero"`   // seconds between rounds
	Round     int64  `bun:"round,nullzero"`
	RoundAt   Millis `bun:"round_at,nullzero"`  // when the network emits Round
	Signature string `bun:"signature,nullzero"` // compressed G1 point, hex; "" until the salt is fixed
}

// ContributionRecord is one value a chain's salt is made of. On a
// commit_reveal chain an operator's row holds its Commitment from the
// seeding window on, and its Value only once revealed ("" until then, and
// for ever when withheld: the commitment then stands in for it).
type ContributionRecord struct {
	bun.BaseModel `bun:"table:chain_contributions"`

	ChainID    string  `bun:"chain_id,pk"`
	Source     string  `bun:"source,pk"`           // chains.SourceOperator, chains.SourceBeacon, chains.SourceGame
	Name       string  `bun:"name,pk"`             // the operator's id, the beacon's label, "" for the game
	Value      string  `bun:"value,nullzero"`      // 64 lowercase hex digits; "" while not revealed
	ReceivedAt Millis  `bun:"received_at"`         // the value's (plain) or the commitment's arrival
	Commitment string  `bun:"commitment,nullzero"` // SHA-256 of Value, 64 lowercase hex; "" on a plain chain
	RevealedAt *Millis `bun:"revealed_at"`
}

// CurrentChain returns the game's newest chain, or chains.ErrChainNotFound.
func (s *Store) CurrentChain(ctx context.Context, gameID string) (ChainRecord, error) {
	var rec ChainRecord
	err := s.conn(ctx).NewSelect().Model(&rec).Where("game_id = ?", gameID).OrderExpr("number DESC").Limit(1).Scan(ctx)
	if err := one(err, chains.ErrChainNotFound, "read the current chain of "+gameID); err != nil {
		return ChainRecord{}, err
	}
	return rec, nil
}

// ChainByID returns one chain, or chains.ErrChainNotFound.
func (s *Store) ChainByID(ctx context.Context, id string) (ChainRecord, error) {
	rec, err := rowWhere[ChainRecord](ctx, s.conn(ctx), "id", id, chains.ErrChainNotFound, "read chain")
	if err != nil {
		return ChainRecord{}, err
	}
	return *rec, nil
}

// Chains lists chains newest first (by creation, then id), of one game or of
// all when gameID is "", after the chain before (its id; "" starts at the
// newest). A before that names no chain is chains.ErrChainNotFound.
func (s *Store) Chains(ctx context.Context, gameID, before string, limit int) ([]ChainRecord, error) {
	q := s.conn(ctx).NewSelect().Model((*ChainRecord)(nil))
	if gameID != "" {
		q = q.Where("game_id = ?", gameID)
	}
	if before != "" {
		b, err := s.ChainByID(ctx, before)
		if err != nil {
			return nil, err
		}
		q = q.Where("(created_at < ? OR (created_at = ? AND id < ?))", b.CreatedAt, b.CreatedAt, b.ID)
	}
	out := make([]ChainRecord, 0)
	if err := q.OrderExpr("created_at DESC, id DESC").Limit(int64(limit)).Scan(ctx, &out); err != nil {
		return nil, fmt.Errorf("store: list chains: %w", err)
	}
	return out, nil
}

// InsertChain stores a new chain. A chain is never replaced: a second chain
// of the same game and number is an error.
func (s *Store) InsertChain(ctx context.Context, rec ChainRecord) error {
	if rec.ContributionRule == "" {
		rec.ContributionRule = chains.RulePlain
	}
	if _, err := s.conn(ctx).NewInsert().Model(&rec).Exec(ctx); err != nil {
		return fmt.Errorf("store: insert chain %s: %w", rec.ID, err)
	}
	return nil
}

// RetireChain records that chain id serves no round after lastSeq, retired
// at. A chain retired already keeps its first last_seq and retired_at.
func (s *Store) RetireChain(ctx context.Context, id string, lastSeq int64, at Millis) error {
	_, err := s.conn(ctx).NewUpdate().Model((*ChainRecord)(nil)).Set("last_seq = ?", lastSeq).Set("retired_at = ?", at).
		Where("id = ?", id).Where("last_seq IS NULL").Exec(ctx)
	if err != nil {
		return fmt.Errorf("store: retire chain %s: %w", id, err)
	}
	return nil
}

// lockChain reads chain id inside the caller's transaction, locking its row
// on PostgreSQL (FOR UPDATE), so that a contribution and the fixing of the
// salt are serialized; SQLite's one writer serializes them anyway.
func (s *Store) lockChain(ctx context.Context, id string) (ChainRecord, error) {
	var rec ChainRecord
	q := s.conn(ctx).NewSelect().Model(&rec).Where("id = ?", id)
	if s.dialect == DialectPostgres {
		q = q.For("UPDATE")
	}
	if err := one(q.Scan(ctx), chains.ErrChainNotFound, "read chain"); err != nil {
		return ChainRecord{}, err
	}
	return rec, nil
}

// AddContribution stores a contribution to a chain's salt while the chain
// takes them: its salt is not fixed and c.ReceivedAt is before its seeding
// window's end (else chains.ErrSeedingClosed). The same value again from the same
// contributor returns the stored contribution (with its first ReceivedAt),
// even after the window; another value in the window is
// chains.ErrContributionConflict.
func (s *Store) AddContribution(ctx context.Context, c ContributionRecord) (ContributionRecord, error) {
	var out ContributionRecord
	err := s.InTx(ctx, func(ctx context.Context) error {
		chain, err := s.lockChain(ctx, c.ChainID)
		if err != nil {
			return err
		}
		if chain.ContributionRule == chains.RuleCommitReveal && c.Source == chains.SourceOperator {
			return chains.ErrCommitRequired
		}
		var had ContributionRecord
		err = s.conn(ctx).NewSelect().Model(&had).Where("chain_id = ?", c.ChainID).
			Where("source = ?", c.Source).Where("name = ?", c.Name).Scan(ctx)
		switch err := one(err, nil, "read contribution"); {
		case err != nil:
			return err
		case had.ChainID != "" && had.Value == c.Value:
			out = had // a repeat, whenever it comes
			return nil
		case chain.Salt != nil || c.ReceivedAt >= chain.SeedingEndsAt:
			return chains.ErrSeedingClosed
		case had.ChainID != "":
			return chains.ErrContributionConflict
		}
		if _, err := s.conn(ctx).NewInsert().Model(&c).Exec(ctx); err != nil {
			return fmt.Errorf("store: add contribution to %s: %w", c.ChainID, err)
		}
		out = c
		return nil
	})
	return out, err
}

// Contributions lists a chain's contributions in the order received.
func (s *Store) Contributions(ctx context.Context, chainID string) ([]ContributionRecord, error) {
	out := make([]ContributionRecord, 0)
	err := s.conn(ctx).NewSelect().Model(&out).Where("chain_id = ?", chainID).
		OrderExpr("received_at, source, name").Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("store: contributions of %s: %w", chainID, err)
	}
	return out, nil
}

// FixSalt fixes chain id's salt, in one transaction with the chain's row
// locked: it reads the contributions stored so far, adds extra (the game's
// own values: the beacon, its draw) and sets the salt that compute returns for
// the whole list, unless the salt is fixed already. It returns the chain as
// stored afterwards, so a second caller gets the first one's salt.
func (s *Store) FixSalt(ctx context.Context, id string, at Millis, extra func(contributed []ContributionRecord) []ContributionRecord,
	compute func(chain ChainRecord, all []ContributionRecord) (salt, source string, err error)) (ChainRecord, error) {
	var out ChainRecord
	err := s.InTx(ctx, func(ctx context.Context) error {
		chain, err := s.lockChain(ctx, id)
		if err != nil {
			return err
		}
		if chain.Salt != nil {
			out = chain
			return nil
		}
		all, err := s.Contributions(ctx, id)
		if err != nil {
			return err
		}
		add := extra(all)
		for i := range add {
			if _, err := s.conn(ctx).NewInsert().Model(&add[i]).Exec(ctx); err != nil {
				return fmt.Errorf("store: add contribution to %s: %w", id, err)
			}
		}
		salt, source, err := compute(chain, append(all, add...))
		if err != nil {
			return err
		}
		_, err = s.conn(ctx).NewUpdate().Model((*ChainRecord)(nil)).
			Set("salt = ?", salt).Set("salt_source = ?", source).Set("salt_fixed_at = ?", at).
			Where("id = ?", id).Where("salt IS NULL").Exec(ctx)
		if err != nil {
			return fmt.Errorf("store: fix the salt of %s: %w", id, err)
		}
		chain.Salt, chain.SaltSource, chain.SaltFixedAt = &salt, &source, &at
		out = chain
		return nil
	})
	return out, err
}

// SetBeaconSignature stores the verified signature of the beacon round a
// chain names, while its salt is not fixed (with FixSalt, in the caller's
// transaction); a chain whose salt is fixed, or that names no round, is left
// as it is.
func (s *Store) SetBeaconSignature(ctx context.Context, id, signature string) error {
	_, err := s.conn(ctx).NewUpdate().Model((*ChainRecord)(nil)).Set("beacon_signature = ?", signature).
		Where("id = ?", id).Where("salt IS NULL").Where("beacon_network IS NOT NULL").Exec(ctx)
	if err != nil {
		return fmt.Errorf("store: the beacon signature of %s: %w", id, err)
	}
	return nil
}

// ChainRounds lists the ended rounds (finished or void) of a chain whose
// position is at least from, by position, at most limit.
func (s *Store) ChainRounds(ctx context.Context, chainID string, from int64, limit int) ([]RoundRecord, error) {
	out := make([]RoundRecord, 0)
	err := s.conn(ctx).NewSelect().Model(&out).Where("chain_id = ?", chainID).Where("chain_position >= ?", from).
		Where("status IN (?)", bun.List([]string{engine.RoundFinished, engine.RoundVoid})).
		OrderExpr("chain_position").Limit(int64(limit)).Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("store: rounds of chain %s: %w", chainID, err)
	}
	return out, nil
}

// ChainCheckpoints lists the ended rounds of a chain at the positions every,
// 2*every, ... up to through, by position.
func (s *Store) ChainCheckpoints(ctx context.Context, chainID string, every, through int64) ([]RoundRecord, error) {
	out := make([]RoundRecord, 0)
	if every <= 0 || through < every {
		return out, nil
	}
	positions := make([]int64, 0, through/every)
	for p := every; p <= through; p += every {
		positions = append(positions, p)
	}
	err := s.conn(ctx).NewSelect().Model(&out).Where("chain_id = ?", chainID).Where("chain_position IN (?)", bun.List(positions)).
		Where("status IN (?)", bun.List([]string{engine.RoundFinished, engine.RoundVoid})).
		OrderExpr("chain_position").Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("store: checkpoints of chain %s: %w", chainID, err)
	}
	return out, nil
}
