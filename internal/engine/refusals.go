package engine

import (
	"errors"

	"github.com/crashstudio/crashgame/internal/round"
)

// Refusal is one way a table can refuse a player's action: the error the
// engine or the round's rules return, and its stable code. The code is what
// crosses the cluster (a replica forwards an action to the leader and gets
// the code back) and what the player API maps to the player's error code
// and HTTP status; it never changes once published, so that replicas of two
// versions understand each other during a rolling deploy.
type Refusal struct {
	Err  error
	Code string
}

// Refusals is the one list of the refusals of a player's action, in the
// order a caller tests them: an error that matches several is the first's
// (a commit refused by the fence wraps both ErrTableUnavailable and the
// store's fence error, and is ErrTableUnavailable). A new refusal is added
// here, with a code, and the player API's tests fail until it maps it.
var Refusals = []Refusal{
	{round.ErrBettingClosed, "BETTING_CLOSED"},
	{round.ErrTooManyBets, "TOO_MANY_BETS"},
	{round.ErrBetLimit, "BET_LIMIT"},
	{round.ErrBadAutoCashout, "BAD_AUTO_CASHOUT"},
	{round.ErrRoundCrashed, "ROUND_CRASHED"},
	{round.ErrUnknownBet, "UNKNOWN_BET"},
	{round.ErrCashoutNotAllowed, "CASHOUT_NOT_ALLOWED"},
	{round.ErrCancelNotAllowed, "CANCEL_NOT_ALLOWED"},
	{ErrFreebetUnavailable, "FREEBET_UNAVAILABLE"},
	{ErrUnknownRound, "UNKNOWN_ROUND"},
	{ErrRoundInProgress, "ROUND_IN_PROGRESS"},
	{ErrWalletUnavailable, "WALLET_UNAVAILABLE"},
	{ErrTableUnavailable, "TABLE_UNAVAILABLE"},
	{ErrTableBusy, "TABLE_BUSY"},
	{ErrStopped, "STOPPED"},
}

// RefusalOf returns the refusal err is (the first of Refusals it matches),
// or false when err is none: a failure, not a refusal. A wallet's refusal of
// a bet is a *RefusedError, not in the list.
func RefusalOf(err error) (Refusal, bool) {
	for _, r := range Refusals {
		if errors.Is(err, r.Err) {
			return r, true
		}
	}
	return Refusal{}, false
}

// RefusalByCode returns the refusal with code, or false for a code this
// version does not know.
func RefusalByCode(code string) (Refusal, bool) {
	for _, r := range Refusals {
		if r.Code == code {
			return r, true
		}
	}
	return Refusal{}, false
}
