package engine

import (
	"errors"
	"fmt"
)

// The refusals a player can get. The table maps each to its player-facing code.
var (
	ErrBettingClosed      = errors.New("betting is closed")
	ErrTooManyBets        = errors.New("too many bets in this round")
	ErrBetLimit           = errors.New("amount outside the bet limits")
	ErrBadAutoCashout     = errors.New("auto-cashout outside 1.01x and the maximum multiplier")
	ErrFreebetUnavailable = errors.New("freebet unavailable")
	ErrRoundCrashed       = errors.New("the round crashed")
	ErrUnknownBet         = errors.New("unknown bet")
	ErrUnknownRound       = errors.New("unknown round")
	ErrCashoutNotAllowed  = errors.New("cashout not allowed")
	ErrCancelNotAllowed   = errors.New("cancel not allowed")
	ErrWalletUnavailable  = errors.New("wallet unavailable")
	ErrStopped            = errors.New("table stopped")
)

// RefusedError is a final refusal of the wallet's /bet (or of the demo bank).
type RefusedError struct {
	Code       string // the wallet's error_code, e.g. INSUFFICIENT_FUNDS
	Balance    int64
	HasBalance bool
}

func (e *RefusedError) Error() string { return fmt.Sprintf("bet refused: %s", e.Code) }
