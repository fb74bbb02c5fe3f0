package store

import (
	"context"
	"time"

	"github.com/crashstudio/crashgame/internal/chains"
)

// HashChains is the chains and their contributions as package chains
// declares its repository: it converts chains' own types to the rows of
// ChainRecord and ContributionRecord and back. The refusals are chains' own
// errors, which this package returns as they are.
func (s *Store) HashChains() chains.Repository { return chainRepo{s} }

type chainRepo struct{ s *Store }

// millisPtr and timePtr convert an optional instant.
func millisPtr(t *time.Time) *Millis {
	if t == nil {
		return nil
	}
	m := MillisOf(*t)
	return &m
}

func timePtr(m *Millis) *time.Time {
	if m == nil {
		return nil
	}
	t := m.Time()
	return &t
}

// chainOf converts a stored chain.
func chainOf(r *ChainRecord) chains.Chain {
	b := r.Beacon
	return chains.Chain{
		ID: r.ID, GameID: r.GameID, Number: r.Number, FirstSeq: r.FirstSeq, Length: r.Length, LastSeq: r.LastSeq,
		Terminal: r.Terminal, RTPBasisPts: r.RTPBasisPts, MaxMultiplier: r.MaxMultiplier, FormulaVersion: r.FormulaVersion,
		SealedSeed: r.SealedSeed, CreatedAt: r.CreatedAt.Time(), SeedingEndsAt: r.SeedingEndsAt.Time(),
		Salt: r.Salt, SaltSource: r.SaltSource, SaltFixedAt: timePtr(r.SaltFixedAt), ContributionRule: r.ContributionRule,
		RevealEndsAt: timePtr(r.RevealEndsAt), RetiredAt: timePtr(r.RetiredAt),
		Beacon: chains.Beacon{Network: b.Network, ChainHash: b.ChainHash, PublicKey: b.PublicKey, Genesis: b.Genesis,
			PeriodS: b.PeriodS, Round: b.Round, RoundAt: b.RoundAt.Time(), Signature: b.Signature},
	}
}

// chainRow is c as a row of hash_chains.
func chainRow(c *chains.Chain) ChainRecord {
	b := c.Beacon
	return ChainRecord{
		ID: c.ID, GameID: c.GameID, Number: c.Number, FirstSeq: c.FirstSeq, Length: c.Length, LastSeq: c.LastSeq,
		Terminal: c.Terminal, RTPBasisPts: c.RTPBasisPts, MaxMultiplier: c.MaxMultiplier, FormulaVersion: c.FormulaVersion,
		SealedSeed: c.SealedSeed, CreatedAt: MillisOf(c.CreatedAt), SeedingEndsAt: MillisOf(c.SeedingEndsAt),
		Salt: c.Salt, SaltSource: c.SaltSource, SaltFixedAt: millisPtr(c.SaltFixedAt), ContributionRule: c.ContributionRule,
		RevealEndsAt: millisPtr(c.RevealEndsAt), RetiredAt: millisPtr(c.RetiredAt),
		Beacon: ChainBeacon{Network: b.Network, ChainHash: b.ChainHash, PublicKey: b.PublicKey, Genesis: b.Genesis,
			PeriodS: b.PeriodS, Round: b.Round, RoundAt: MillisOf(b.RoundAt), Signature: b.Signature},
	}
}

func chainsOf(recs []ChainRecord) []chains.Chain {
	out := make([]chains.Chain, len(recs))
	for i := range recs {
		out[i] = chainOf(&recs[i])
	}
	return out
}

// contributionOf converts a stored contribution.
func contributionOf(r *ContributionRecord) chains.Contribution {
	return chains.Contribution{ChainID: r.ChainID, Source: r.Source, Name: r.Name, Value: r.Value,
		ReceivedAt: r.ReceivedAt.Time(), Commitment: r.Commitment, RevealedAt: timePtr(r.RevealedAt)}
}

// contributionRow is c as a row of chain_contributions.
func contributionRow(c *chains.Contribution) ContributionRecord {
	return ContributionRecord{ChainID: c.ChainID, Source: c.Source, Name: c.Name, Value: c.Value,
		ReceivedAt: MillisOf(c.ReceivedAt), Commitment: c.Commitment, RevealedAt: millisPtr(c.RevealedAt)}
}

func contributionsOf(recs []ContributionRecord) []chains.Contribution {
	out := make([]chains.Contribution, len(recs))
	for i := range recs {
		out[i] = contributionOf(&recs[i])
	}
	return out
}

func contributionRows(cs []chains.Contribution) []ContributionRecord {
	out := make([]ContributionRecord, len(cs))
	for i := range cs {
		out[i] = contributionRow(&cs[i])
	}
	return out
}

func (r chainRepo) CurrentChain(ctx context.Context, gameID string) (chains.Chain, error) {
	rec, err := r.s.CurrentChain(ctx, gameID)
	if err != nil {
		return chains.Chain{}, err
	}
	return chainOf(&rec), nil
}

func (r chainRepo) ChainByID(ctx context.Context, id string) (chains.Chain, error) {
	rec, err := r.s.ChainByID(ctx, id)
	if err != nil {
		return chains.Chain{}, err
	}
	return chainOf(&rec), nil
}

func (r chainRepo) Chains(ctx context.Context, gameID, before string, limit int) ([]chains.Chain, error) {
	recs, err := r.s.Chains(ctx, gameID, before, limit)
	if err != nil {
		return nil, err
	}
	return chainsOf(recs), nil
}

func (r chainRepo) InsertChain(ctx context.Context, c chains.Chain) error {
	return r.s.InsertChain(ctx, chainRow(&c))
}

func (r chainRepo) RetireChain(ctx context.Context, id string, lastSeq int64, at time.Time) error {
	return r.s.RetireChain(ctx, id, lastSeq, MillisOf(at))
}

func (r chainRepo) FixSalt(ctx context.Context, id string, at time.Time, extra func([]chains.Contribution) []chains.Contribution,
	compute func(chains.Chain, []chains.Contribution) (string, string, error)) (chains.Chain, error) {
	rec, err := r.s.FixSalt(ctx, id, MillisOf(at),
		func(got []ContributionRecord) []ContributionRecord {
			return contributionRows(extra(contributionsOf(got)))
		},
		func(c ChainRecord, all []ContributionRecord) (string, string, error) {
			return compute(chainOf(&c), contributionsOf(all))
		})
	if err != nil {
		return chains.Chain{}, err
	}
	return chainOf(&rec), nil
}

func (r chainRepo) SetBeaconSignature(ctx context.Context, id, signature string) error {
	return r.s.SetBeaconSignature(ctx, id, signature)
}

func (r chainRepo) Contributions(ctx context.Context, chainID string) ([]chains.Contribution, error) {
	recs, err := r.s.Contributions(ctx, chainID)
	if err != nil {
		return nil, err
	}
	return contributionsOf(recs), nil
}

func (r chainRepo) AddCommitment(ctx context.Context, c chains.Contribution) (chains.Contribution, error) {
	rec, err := r.s.AddCommitment(ctx, contributionRow(&c))
	if err != nil {
		return chains.Contribution{}, err
	}
	return contributionOf(&rec), nil
}

func (r chainRepo) RevealContribution(ctx context.Context, chainID, operator, value string, at time.Time) (chains.Contribution, error) {
	rec, err := r.s.RevealContribution(ctx, chainID, operator, value, MillisOf(at))
	if err != nil {
		return chains.Contribution{}, err
	}
	return contributionOf(&rec), nil
}
