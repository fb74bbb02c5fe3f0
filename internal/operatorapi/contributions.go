package operatorapi

import (
	"context"
	"errors"
	"fmt"
	"regexp"

	"github.com/crashstudio/crashgame/gen/game"
	"github.com/crashstudio/crashgame/internal/store"
)

// Chains records the operators' contributions to the salts of new hash
// chains (package engine fixes each salt from them when the chain's seeding
// window closes). *store.Store satisfies it.
type Chains interface {
	ChainByID(ctx context.Context, id string) (store.ChainRecord, error)
	AddContribution(ctx context.Context, c store.ContributionRecord) (store.ContributionRecord, error)
}

var _ Chains = (*store.Store)(nil)

// contributionValue is 32 bytes as 64 lowercase hex digits.
var contributionValue = regexp.MustCompile(`^[0-9a-f]{64}$`)

// ContributeToChain answers POST /v1/fairness/contributions: the signing
// operator's value becomes part of the chain's salt, once, while the chain's
// seeding window is open (the store decides, against the chain's row).
func (a *API) ContributeToChain(ctx context.Context, req game.ContributeToChainRequestObject) (game.ContributeToChainResponseObject, error) {
	op := operatorFrom(ctx)
	b := req.Body
	if b.ChainId == "" || !contributionValue.MatchString(b.Value) {
		msg := "value must be 64 lowercase hex digits (32 bytes), and chain_id a chain's id"
		return game.ContributeToChain400JSONResponse{Status: game.ContributionBadRequestErrorStatusError,
			ErrorCode: game.ContributionBadRequestErrorErrorCodeINVALIDCONTRIBUTION, ErrorMessage: &msg}, nil
	}
	got, err := a.chains.AddContribution(ctx, store.ContributionRecord{ChainID: b.ChainId, Source: store.SourceOperator,
		Name: op.ID, Value: b.Value, ReceivedAt: store.MillisOf(a.now())})
	switch {
	case errors.Is(err, store.ErrChainNotFound):
		msg := fmt.Sprintf("no chain %q", b.ChainId)
		return game.ContributeToChain404JSONResponse{Status: "error", ErrorCode: game.ContributionNotFoundErrorErrorCodeCHAINNOTFOUND, ErrorMessage: &msg}, nil
	case errors.Is(err, store.ErrSeedingClosed):
		msg := fmt.Sprintf("the seeding window of chain %q is closed", b.ChainId)
		return game.ContributeToChain409JSONResponse{Status: "error", ErrorCode: game.ContributionConflictErrorErrorCodeSEEDINGCLOSED, ErrorMessage: &msg}, nil
	case errors.Is(err, store.ErrContributionConflict):
		msg := fmt.Sprintf("operator %q already contributed another value to chain %q", op.ID, b.ChainId)
		return game.ContributeToChain409JSONResponse{Status: "error", ErrorCode: game.ContributionConflictErrorErrorCodeCONTRIBUTIONCONFLICT, ErrorMessage: &msg}, nil
	case err != nil:
		return nil, err
	}
	chain, err := a.chains.ChainByID(ctx, b.ChainId)
	if err != nil {
		return nil, err
	}
	a.logger.InfoContext(ctx, "contribution to a chain's salt recorded", "operator", op.ID, "chain_id", b.ChainId)
	return game.ContributeToChain200JSONResponse{Status: game.ContributionResponseStatusOk, ChainId: got.ChainID, Value: got.Value,
		ReceivedAt: int64(got.ReceivedAt), SeedingEndsAt: int64(chain.SeedingEndsAt)}, nil
}
