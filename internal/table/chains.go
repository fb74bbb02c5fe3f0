package table

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/crashstudio/crashgame/gen/table"
	"github.com/crashstudio/crashgame/internal/beacon"
	"github.com/crashstudio/crashgame/internal/chains"
	"github.com/crashstudio/crashgame/internal/fairness"
)

// CheckpointEvery is the spacing of a chain's published checkpoints: the
// hash of every ended round whose position is a multiple of it.
const CheckpointEvery = 1000

// Chains is what the public fairness routes read of the hash chains (package
// chains' repository): every chain, past and present, and its
// contributions. Their rounds are read through Records.
type Chains interface {
	CurrentChain(ctx context.Context, gameID string) (chains.Chain, error)
	ChainByID(ctx context.Context, id string) (chains.Chain, error)
	Chains(ctx context.Context, gameID, before string, limit int) ([]chains.Chain, error)
	Contributions(ctx context.Context, chainID string) ([]chains.Contribution, error)
}

func (e errorResponse) VisitListChainsResponse(w http.ResponseWriter) error      { return e.visit(w) }
func (e errorResponse) VisitGetChainResponse(w http.ResponseWriter) error        { return e.visit(w) }
func (e errorResponse) VisitListChainRoundsResponse(w http.ResponseWriter) error { return e.visit(w) }

// chainBeacon is the chain's beacon as published (nil when it names none),
// with its signature and randomness once the salt is fixed.
func chainBeacon(rec chains.Chain) (*table.ChainBeacon, error) {
	b := rec.Beacon
	if !b.Named() {
		return nil, nil
	}
	out := &table.ChainBeacon{Network: b.Network, ChainHash: b.ChainHash, PublicKey: b.PublicKey,
		GenesisTime: b.Genesis, PeriodS: b.PeriodS, Scheme: beacon.Scheme, Round: b.Round, RoundTime: b.RoundAt.UnixMilli()}
	if b.Signature != "" && rec.Salt != nil {
		sig, err := hex.DecodeString(b.Signature)
		if err != nil {
			return out, fmt.Errorf("table: the beacon signature of %s: %w", rec.ID, err)
		}
		sum := beacon.Randomness(sig)
		randomness := hex.EncodeToString(sum[:])
		out.Signature, out.Randomness = &b.Signature, &randomness
	}
	return out, nil
}

// contributionOf is a contribution to a fixed salt as published: its value,
// its commitment and reveal when it was committed first, and who made it.
func contributionOf(c chains.Contribution) table.Contribution {
	value := c.SaltValue()
	item := table.Contribution{Source: table.ContributionSource(c.Source), Value: &value, ReceivedAt: c.ReceivedAt.UnixMilli()}
	if c.Commitment != "" {
		withheld := c.Withheld()
		item.Commitment, item.Withheld = &c.Commitment, &withheld
		if c.RevealedAt != nil {
			at := c.RevealedAt.UnixMilli()
			item.RevealedAt = &at
		}
	}
	switch c.Source {
	case chains.SourceOperator:
		item.Operator = &c.Name
	case chains.SourceBeacon:
		item.Label = &c.Name
	}
	return item
}

// chainDocument is a chain as published: its contributions once its salt is
// fixed (they are what the salt is made of), and before that the operators'
// commitments of a commit_reveal chain, never a value; its checkpoints.
func (a *api) chainDocument(ctx context.Context, rec chains.Chain) (table.Chain, error) {
	doc := table.Chain{
		ChainId: rec.ID, GameId: rec.GameID, Number: rec.Number, TerminalHash: rec.Terminal,
		Length: rec.Length, FirstSeq: rec.FirstSeq, LastSeq: rec.LastSeq,
		RtpBp: int32Of(rec.RTPBasisPts), MaxMultiplier: rec.MaxMultiplier,
		FormulaVersion: int32Of(rec.FormulaVersion), Formula: fairness.Formula,
		CreatedAt: rec.CreatedAt.UnixMilli(), SeedingEndsAt: rec.SeedingEndsAt.UnixMilli(),
		Status:        table.ChainStatusActive,
		Contributions: []table.Contribution{}, Checkpoints: []table.Checkpoint{},
	}
	rule := rec.ContributionRule
	doc.ContributionRule = &rule
	if rec.RevealEndsAt != nil {
		ends := rec.RevealEndsAt.UnixMilli()
		doc.RevealEndsAt = &ends
	}
	var err error
	if doc.Beacon, err = chainBeacon(rec); err != nil {
		return doc, err
	}
	switch {
	case rec.LastSeq != nil:
		doc.Status = table.ChainStatusRetired
		if rec.RetiredAt != nil {
			at := rec.RetiredAt.UnixMilli()
			doc.RetiredAt = &at
		}
	case rec.Salt == nil:
		doc.Status = table.ChainStatusSeeding
	}
	if rec.Salt == nil {
		if rec.ContributionRule != chains.RuleCommitReveal {
			return doc, nil
		}
		// The commitments, as they arrive; no value before the salt is fixed.
		contributions, err := a.s.chains.Contributions(ctx, rec.ID)
		if err != nil {
			return doc, err
		}
		for _, c := range contributions {
			if c.Source == chains.SourceOperator && c.Commitment != "" {
				doc.Contributions = append(doc.Contributions, table.Contribution{Source: c.Source, Operator: &c.Name,
					Commitment: &c.Commitment, ReceivedAt: c.ReceivedAt.UnixMilli()})
			}
		}
		return doc, nil
	}
	fixed, source := rec.SaltFixedAt.UnixMilli(), table.ChainSaltSource(*rec.SaltSource)
	doc.Salt, doc.SaltFixedAt, doc.SaltSource = rec.Salt, &fixed, &source
	contributions, err := a.s.chains.Contributions(ctx, rec.ID)
	if err != nil {
		return doc, err
	}
	for _, c := range contributions {
		doc.Contributions = append(doc.Contributions, contributionOf(c))
	}
	checkpoints, err := a.s.records.ChainCheckpoints(ctx, rec.ID, CheckpointEvery, rec.Length)
	if err != nil {
		return doc, err
	}
	for _, r := range checkpoints {
		doc.Checkpoints = append(doc.Checkpoints, table.Checkpoint{Position: r.Position, Seq: r.Seq, Hash: r.Hash})
	}
	voids, err := a.chainVoids(ctx, rec)
	if err != nil {
		return doc, err
	}
	doc.Voids = &voids
	return doc, nil
}

// ListChains lists the chains, newest first, without a session.
func (a *api) ListChains(ctx context.Context, req table.ListChainsRequestObject) (table.ListChainsResponseObject, error) {
	n := 100
	if l := req.Params.Limit; l != nil {
		if *l < 1 || *l > 100 {
			return a.fail(ctx, http.StatusBadRequest, table.ErrorCodeBadRequest), nil
		}
		n = int(*l)
	}
	var game, before string
	if req.Params.GameId != nil {
		game = *req.Params.GameId
	}
	if req.Params.Before != nil {
		before = *req.Params.Before
	}
	// One more than asked tells whether another page follows.
	recs, err := a.s.chains.Chains(ctx, game, before, n+1)
	switch {
	case errors.Is(err, chains.ErrChainNotFound):
		return a.fail(ctx, http.StatusNotFound, table.ErrorCodeUnknownChain), nil
	case err != nil:
		return a.internal(ctx, "listing chains failed", err), nil
	}
	out := table.ListChains200JSONResponse{Items: make([]table.Chain, 0, min(len(recs), n))}
	if len(recs) > n {
		recs = recs[:n]
		next := recs[n-1].ID
		out.NextBefore = &next
	}
	for _, rec := range recs {
		doc, err := a.chainDocument(ctx, rec)
		if err != nil {
			return a.internal(ctx, "reading a chain failed", err), nil
		}
		out.Items = append(out.Items, doc)
	}
	return out, nil
}

// GetChain answers one chain, without a session.
func (a *api) GetChain(ctx context.Context, req table.GetChainRequestObject) (table.GetChainResponseObject, error) {
	rec, err := a.s.chains.ChainByID(ctx, req.ChainId)
	switch {
	case errors.Is(err, chains.ErrChainNotFound):
		return a.fail(ctx, http.StatusNotFound, table.ErrorCodeUnknownChain), nil
	case err != nil:
		return a.internal(ctx, "reading a chain failed", err), nil
	}
	doc, err := a.chainDocument(ctx, rec)
	if err != nil {
		return a.internal(ctx, "reading a chain failed", err), nil
	}
	return table.GetChain200JSONResponse(doc), nil
}

// ListChainRounds lists a chain's ended rounds by position, without a session.
func (a *api) ListChainRounds(ctx context.Context, req table.ListChainRoundsRequestObject) (table.ListChainRoundsResponseObject, error) {
	from, n := int64(1), 1000
	if f := req.Params.From; f != nil {
		if *f < 1 {
			return a.fail(ctx, http.StatusBadRequest, table.ErrorCodeBadRequest), nil
		}
		from = *f
	}
	if l := req.Params.Limit; l != nil {
		if *l < 1 || *l > 1000 {
			return a.fail(ctx, http.StatusBadRequest, table.ErrorCodeBadRequest), nil
		}
		n = int(*l)
	}
	if _, err := a.s.chains.ChainByID(ctx, req.ChainId); errors.Is(err, chains.ErrChainNotFound) {
		return a.fail(ctx, http.StatusNotFound, table.ErrorCodeUnknownChain), nil
	} else if err != nil {
		return a.internal(ctx, "reading a chain failed", err), nil
	}
	recs, err := a.s.records.ChainRounds(ctx, req.ChainId, from, n)
	if err != nil {
		return a.internal(ctx, "listing a chain's rounds failed", err), nil
	}
	out := table.ListChainRounds200JSONResponse{Items: make([]table.ChainRound, 0, len(recs))}
	for _, r := range recs {
		end := endOf(r)
		out.Items = append(out.Items, table.ChainRound{RoundId: r.ID, Seq: r.Seq, Position: r.Position,
			Status: table.RoundStatus(r.Status), Hash: r.Hash, CrashPoint: r.CrashPoint,
			CrashedAt: end.crashedAt, VoidedAt: end.voidedAt, VoidRule: end.rule})
	}
	if len(recs) == n {
		next := recs[n-1].Position + 1
		out.NextFrom = &next
	}
	return out, nil
}

// GetFairness answers the chain the session's table plays now.
func (a *api) GetFairness(ctx context.Context, _ table.GetFairnessRequestObject) (table.GetFairnessResponseObject, error) {
	sess, _, fail := a.session(ctx)
	if fail != nil {
		return *fail, nil
	}
	rec, err := a.s.chains.CurrentChain(ctx, sess.GameID)
	switch {
	case errors.Is(err, chains.ErrChainNotFound):
		return a.fail(ctx, http.StatusNotFound, table.ErrorCodeUnknownChain), nil
	case err != nil:
		return a.internal(ctx, "reading the chain failed", err), nil
	}
	doc, err := a.chainDocument(ctx, rec)
	if err != nil {
		return a.internal(ctx, "reading the chain failed", err), nil
	}
	return table.GetFairness200JSONResponse(doc), nil
}

// wantsPage reports whether a request for /fairness/chains asks for the
// human page (a browser) rather than the JSON.
func wantsPage(r *http.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), "text/html")
}
