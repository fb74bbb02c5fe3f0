package engine

import (
	"errors"
	"fmt"
)

// The refusals a player can get that the engine decides. Those the round's
// rules decide (betting closed, too many bets, the bet limits, the
// auto-cashout target, the round crashed, an unknown bet, a cashout or cancel
// not allowed) are package round's own values, returned as they are. Every
// refusal of either is listed once, with its stable code, in Refusals.
var (
	ErrFreebetUnavailable = errors.New("freebet unavailable")
	ErrUnknownRound       = errors.New("unknown round")
	ErrRoundInProgress    = errors.New("round in progress")
	ErrWalletUnavailable  = errors.New("wallet unavailable")
	ErrStopped            = errors.New("table stopped")
	// ErrTableUnavailable: in a cluster, no replica leads the table right
	// now (a fail-over), or the leader's answer to an action was lost; the
	// action's outcome, if any, shows on the stream.
	ErrTableUnavailable = errors.New("table unavailable")
	// ErrTableBusy: the bet was refused before any money moved, because
	// this process's recent debits took longer to learn their outcome than
	// is left before the round's debit deadline (an overloaded process, a
	// slow wallet): it would have been debited and then rolled back; or
	// because its intent committed only after that deadline, so its /bet
	// was never sent (the bet's record is void). The player bets again in
	// the next round.
	ErrTableBusy = errors.New("table busy")
)

// errDebitNotSent: a bet's /bet was never sent, because its intent
// committed after the bet's debit deadline. It is the game's own slowness,
// not the wallet's: the player gets TABLE_BUSY (nothing was taken), not
// WALLET_UNAVAILABLE; the bet's record is void.
var errDebitNotSent = errors.New("its intent committed after its debit deadline")

// RefusedError is a final refusal of the wallet's /bet (or of the demo bank).
type RefusedError struct {
	Code       string // the wallet's error_code, e.g. INSUFFICIENT_FUNDS
	Balance    int64
	HasBalance bool
}

func (e *RefusedError) Error() string { return fmt.Sprintf("bet refused: %s", e.Code) }
