package operatorapi

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/crashstudio/crashgame/gen/game"
	"github.com/crashstudio/crashgame/internal/chains"
)

// Chains records the operators' commitments to the salts of new hash chains
// and the values they reveal (package engine fixes each salt from them when
// the chain's reveal window closes): package chains' repository, of which
// these routes need three methods.
type Chains interface {
	ChainByID(ctx context.Context, id string) (chains.Chain, error)
	AddCommitment(ctx context.Context, c chains.Contribution) (chains.Contribution, error)
	RevealContribution(ctx context.Context, chainID, operator, value string, at time.Time) (chains.Contribution, error)
}

// hex64 is 32 bytes as 64 lowercase hex digits.
var hex64 = regexp.MustCompile(`^[0-9a-f]{64}$`)

// Degenerate 32-byte strings, as 64 hex digits: no operator that draws at
// random sends them.
var (
	allZero      = strings.Repeat("00", 32)
	allOnes      = strings.Repeat("ff", 32)
	hashOfEmpty  = hexSum(nil)
	hashOfZeroes = hexSum(make([]byte, 32))
)

func hexSum(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// degenerate says why x (a commitment when commitment is true, else a
// value) cannot be an operator's random draw for chain, or "".
func degenerate(x string, commitment bool, chain chains.Chain) string {
	switch {
	case x == allZero:
		return "is 32 zero bytes"
	case x == allOnes:
		return "is 32 0xff bytes"
	case x == chain.Terminal:
		return "is the chain's terminal hash"
	case commitment && x == hashOfEmpty:
		return "is SHA-256 of nothing"
	case commitment && x == hashOfZeroes:
		return "is SHA-256 of 32 zero bytes"
	}
	return ""
}

// ContributeToChain answers POST /v1/fairness/contributions: in the chain's
// seeding window the signing operator commits to a value (its SHA-256); in
// the reveal window after it, it reveals the value. The store decides the
// windows, against the chain's row.
func (a *API) ContributeToChain(ctx context.Context, req game.ContributeToChainRequestObject) (game.ContributeToChainResponseObject, error) {
	op := operatorFrom(ctx)
	b := req.Body
	commitment, value := deref(b.Commitment), deref(b.Value)
	if b.ChainId == "" || (b.Commitment == nil) == (b.Value == nil) || !hex64.MatchString(commitment+value) {
		msg := "send exactly one of commitment (in the seeding window) and value (in the reveal window), as 64 lowercase hex digits (32 bytes), and chain_id a chain's id"
		return game.ContributeToChain400JSONResponse{Status: game.ContributionBadRequestErrorStatusError,
			ErrorCode: game.ContributionBadRequestErrorErrorCodeINVALIDCONTRIBUTION, ErrorMessage: &msg}, nil
	}
	chain, err := a.chains.ChainByID(ctx, b.ChainId)
	if errors.Is(err, chains.ErrChainNotFound) {
		msg := fmt.Sprintf("no chain %q", b.ChainId)
		return game.ContributeToChain404JSONResponse{Status: "error", ErrorCode: game.ContributionNotFoundErrorErrorCodeCHAINNOTFOUND, ErrorMessage: &msg}, nil
	} else if err != nil {
		return nil, err
	}
	if why := degenerate(commitment+value, b.Commitment != nil, chain); why != "" {
		msg := fmt.Sprintf("the value %s: draw 32 random bytes (openssl rand -hex 32)", why)
		if b.Commitment != nil {
			msg = fmt.Sprintf("the commitment %s: draw 32 random bytes (openssl rand -hex 32) and send their SHA-256", why)
		}
		return game.ContributeToChain400JSONResponse{Status: game.ContributionBadRequestErrorStatusError,
			ErrorCode: game.ContributionBadRequestErrorErrorCodeDEGENERATECONTRIBUTION, ErrorMessage: &msg}, nil
	}
	now := a.now()
	var got chains.Contribution
	if b.Commitment != nil {
		got, err = a.chains.AddCommitment(ctx, chains.Contribution{ChainID: b.ChainId, Source: chains.SourceOperator,
			Name: op.ID, Commitment: commitment, ReceivedAt: now})
	} else {
		got, err = a.chains.RevealContribution(ctx, b.ChainId, op.ID, value, now)
	}
	conflict := func(code game.ContributionConflictErrorErrorCode, format string, args ...any) (game.ContributeToChainResponseObject, error) {
		msg := fmt.Sprintf(format, args...)
		return game.ContributeToChain409JSONResponse{Status: "error", ErrorCode: code, ErrorMessage: &msg}, nil
	}
	switch {
	case errors.Is(err, chains.ErrChainNotFound):
		msg := fmt.Sprintf("no chain %q", b.ChainId)
		return game.ContributeToChain404JSONResponse{Status: "error", ErrorCode: game.ContributionNotFoundErrorErrorCodeCHAINNOTFOUND, ErrorMessage: &msg}, nil
	case errors.Is(err, chains.ErrPlainChain):
		return conflict(game.ContributionConflictErrorErrorCodeSEEDINGCLOSED,
			"chain %q was published before commit-reveal and takes no more contributions", b.ChainId)
	case errors.Is(err, chains.ErrSeedingClosed):
		return conflict(game.ContributionConflictErrorErrorCodeSEEDINGCLOSED, "the seeding window of chain %q is closed", b.ChainId)
	case errors.Is(err, chains.ErrContributionConflict):
		return conflict(game.ContributionConflictErrorErrorCodeCONTRIBUTIONCONFLICT,
			"operator %q already committed to another value in chain %q", op.ID, b.ChainId)
	case errors.Is(err, chains.ErrRevealNotOpen):
		return conflict(game.ContributionConflictErrorErrorCodeREVEALNOTOPEN,
			"chain %q is in its seeding window: a value sent now would be readable; send its SHA-256 as commitment now, and the value after the chain's seeding_ends_at",
			b.ChainId)
	case errors.Is(err, chains.ErrRevealClosed):
		return conflict(game.ContributionConflictErrorErrorCodeREVEALCLOSED, "the reveal window of chain %q is closed", b.ChainId)
	case errors.Is(err, chains.ErrNoCommitment):
		return conflict(game.ContributionConflictErrorErrorCodeNOCOMMITMENT,
			"operator %q did not commit to a value in the seeding window of chain %q", op.ID, b.ChainId)
	case errors.Is(err, chains.ErrRevealMismatch):
		return conflict(game.ContributionConflictErrorErrorCodeCOMMITMENTMISMATCH,
			"SHA-256 of the value is not the commitment of operator %q in chain %q", op.ID, b.ChainId)
	case err != nil:
		return nil, err
	}
	if b.Commitment != nil {
		a.logger.InfoContext(ctx, "commitment to a chain's salt recorded", "operator", op.ID, "chain_id", b.ChainId)
	} else {
		a.logger.InfoContext(ctx, "value committed to a chain's salt revealed", "operator", op.ID, "chain_id", b.ChainId)
	}
	out := game.ContributeToChain200JSONResponse{Status: game.ContributionResponseStatusOk, ChainId: got.ChainID,
		TerminalHash: chain.Terminal, Commitment: got.Commitment, ReceivedAt: got.ReceivedAt.UnixMilli(),
		SeedingEndsAt: chain.SeedingEndsAt.UnixMilli(), RevealEndsAt: chain.SaltDueAt().UnixMilli()}
	if got.Value != "" {
		v, at := got.Value, got.RevealedAt.UnixMilli()
		out.Value, out.RevealedAt = &v, &at
	}
	return out, nil
}
