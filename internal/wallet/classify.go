package wallet

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/crashstudio/crashgame/internal/jsonint"
)

// Route is a wallet route, relative to the operator's wallet URL (VER-2).
type Route string

// The four wallet routes.
const (
	RouteBalance  Route = "/balance"
	RouteBet      Route = "/bet"
	RouteWin      Route = "/win"
	RouteRollback Route = "/rollback"
)

// Outcome is what one attempt decided.
type Outcome uint8

const (
	// Temporary: nothing was decided, or nothing the game may rely on. The
	// caller may try again with the same transaction_id. It is the zero value,
	// so a Result nobody filled in never reads as a decision.
	Temporary Outcome = iota
	// Success: the operator answered status = ok on a 2xx.
	Success
	// Refused: a final refusal (one of the seven final codes). Never retried.
	Refused
)

func (o Outcome) String() string {
	switch o {
	case Success:
		return "success"
	case Refused:
		return "refused"
	default:
		return "temporary"
	}
}

// Wallet error codes. The first seven are the only final ones (WERR-8 to
// WERR-14); every other code, unknown ones included, is temporary (WERR-18).
// Codes are compared exactly, case included.
const (
	CodeInsufficientFunds    = "INSUFFICIENT_FUNDS"
	CodeTokenExpired         = "TOKEN_EXPIRED"
	CodeTokenInvalid         = "TOKEN_INVALID"
	CodePlayerNotFound       = "PLAYER_NOT_FOUND"
	CodeBetNotFound          = "BET_NOT_FOUND"
	CodeCurrencyMismatch     = "CURRENCY_MISMATCH"
	CodePlayerBlocked        = "PLAYER_BLOCKED"
	CodeInternalError        = "INTERNAL_ERROR"
	CodeInvalidSignature     = "INVALID_SIGNATURE"
	CodeDuplicateTransaction = "DUPLICATE_TRANSACTION"
)

// IsFinal reports whether code is one of the seven final wallet error codes.
func IsFinal(code string) bool {
	switch code {
	case CodeInsufficientFunds, CodeTokenExpired, CodeTokenInvalid, CodePlayerNotFound,
		CodeBetNotFound, CodeCurrencyMismatch, CodePlayerBlocked:
		return true
	}
	return false
}

// Reasons, in Result.Reason: why an attempt ended as it did, for logs and
// tests. They are stable strings.
const (
	ReasonOK                = "ok"                  // status ok on a 2xx
	ReasonFinalCode         = "final_code"          // status error with a final code
	ReasonBalance401        = "balance_401"         // /balance 401 that is not INVALID_SIGNATURE
	ReasonHTTP5xx           = "http_5xx"            // any 5xx, whatever the body
	ReasonWin4xx            = "win_4xx"             // any 4xx on /win, whatever the body
	ReasonUnparsable        = "unparsable"          // body not a JSON object, or a field of the wrong type
	ReasonNoStatus          = "no_status"           // a body without status
	ReasonUnknownStatus     = "unknown_status"      // status neither ok nor error
	ReasonOKNot2xx          = "ok_not_2xx"          // status ok with a status outside 2xx
	ReasonIncompleteBalance = "incomplete_balance"  // /balance ok without player_id or balance
	ReasonNoErrorCode       = "no_error_code"       // status error without error_code (WERR-6)
	ReasonInvalidSignature  = "invalid_signature"   // INVALID_SIGNATURE: our own configuration (AUTH-16)
	ReasonRetryableCode     = "retryable_code"      // any other code, unknown ones included
	ReasonTimeout           = "timeout"             // no answer within the attempt's timeout
	ReasonTransport         = "transport"           // connection failed or broke
	ReasonCanceled          = "canceled"            // the caller's context ended first
	ReasonBreakerOpen       = "breaker_open"        // not sent: the breaker is open
	ReasonWindowClosed      = "window_closed"       // not sent: BetUntil's deadline had passed before its first attempt
	ReasonInvalidCall       = "invalid_call"        // not sent: the call breaks the contract
	ReasonRequest           = "request_not_built"   // not sent: the request could not be built or signed
	reasonUnset             = "unclassified_answer" // never returned; guards the switch below
)

// classify decides the outcome of one answer from its route, its HTTP status
// and its body as read, and fills what the body tells. It is the only place
// where an outcome is decided. The order of the checks is the table:
//
//	HTTP status   body                                       outcome    rule
//	5xx           anything (status ok and final codes too)   Temporary  WERR-20
//	4xx on /win   anything (BET_NOT_FOUND, 404 included)      Temporary  WIN-12, AMB-3 reading A
//	401 /balance  not INVALID_SIGNATURE, or no body           Refused    BAL-7, AMB-8 (TOKEN_INVALID unless the body names a final code)
//	any other     not a JSON object, money not an integer     Temporary  GEN-5 (never rounded)
//	any other     no status, or status neither ok nor error   Temporary  WERR-4
//	2xx           status ok                                  Success    (on /balance: player_id and balance required, else Temporary)
//	not 2xx       status ok                                  Temporary  (a proxy or a confused operator: nothing decided)
//	any other     status error, no error_code                Temporary  WERR-6
//	any other     status error, one of the seven final codes Refused    WERR-8..14, whatever the status (200, 402, 409: AMB-1)
//	any other     status error, INVALID_SIGNATURE            Temporary  WERR-16, AUTH-16 (logged as our configuration)
//	any other     status error, any other code               Temporary  WERR-15, WERR-18, AMB-10 reading A (DUPLICATE_TRANSACTION)
//
// The balance of an error body is kept only on INSUFFICIENT_FUNDS (WERR-7);
// freebet grants are kept only from a /balance success (FB-1).
func classify(route Route, httpStatus int, body []byte) Result {
	res := Result{Route: route, HTTPStatus: httpStatus, Reason: reasonUnset}
	a, perr := parseAnswer(body)
	if perr == nil && a.status != statusOK {
		res.ErrorCode, res.ErrorMessage = a.code, a.message
	}
	switch {
	case httpStatus >= 500:
		res.Reason = ReasonHTTP5xx
		return res
	case route == RouteWin && httpStatus >= 400 && httpStatus < 500:
		res.Reason = ReasonWin4xx
		return res
	case route == RouteBalance && httpStatus == 401 && (perr != nil || a.code != CodeInvalidSignature):
		res.Outcome, res.Reason = Refused, ReasonBalance401
		if perr != nil || !IsFinal(a.code) {
			res.ErrorCode = CodeTokenInvalid
		}
		return res
	case perr != nil:
		res.Reason = ReasonUnparsable
		return res
	}
	switch {
	case !a.hasStatus:
		res.Reason = ReasonNoStatus
	case a.status == statusOK && (httpStatus < 200 || httpStatus > 299):
		res.Reason = ReasonOKNot2xx
	case a.status == statusOK:
		if route == RouteBalance && (a.playerID == "" || !a.hasBalance) {
			res.Reason = ReasonIncompleteBalance
			return res
		}
		res.Outcome, res.Reason = Success, ReasonOK
		res.Balance, res.HasBalance = a.balance, a.hasBalance
		res.Currency, res.PlayerID, res.PlayerName, res.OperatorTxID = a.currency, a.playerID, a.playerName, a.operatorTx
		if route == RouteBalance {
			res.Freebets = a.freebets
		}
	case a.status == statusError && a.code == "":
		res.Reason = ReasonNoErrorCode
	case a.status == statusError && IsFinal(a.code):
		res.Outcome, res.Reason = Refused, ReasonFinalCode
		if a.code == CodeInsufficientFunds {
			res.Balance, res.HasBalance = a.balance, a.hasBalance
		}
	case a.status == statusError && a.code == CodeInvalidSignature:
		res.Reason = ReasonInvalidSignature
	case a.status == statusError:
		res.Reason = ReasonRetryableCode
	default:
		res.Reason = ReasonUnknownStatus
	}
	return res
}

const (
	statusOK    = "ok"
	statusError = "error"
)

// answer is what a wallet body says, read field by field. It is read by hand
// rather than through the generated BalanceResult and MovementResult unions
// because their As* decoders fail the whole body on one optional field of an
// unexpected type (a freebet grant with a fractional amount, a freebets
// member on /bet that is not an array, a numeric operator transaction_id):
// such an answer still decides (FB-1, FB-12, FB-13). Only status, error_code
// and balance must have their types; the rest is taken when it is a string.
type answer struct {
	status, code, message                      string
	hasStatus                                  bool
	balance                                    int64
	hasBalance                                 bool
	currency, playerID, playerName, operatorTx string
	freebets                                   []json.RawMessage
}

var errUnparsable = errors.New("unparsable answer")

func parseAnswer(body []byte) (answer, error) {
	var a answer
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil || fields == nil {
		return a, fmt.Errorf("%w: body is not a JSON object", errUnparsable)
	}
	if raw, ok := fields["status"]; ok && !isNull(raw) {
		s, ok := jsonString(raw)
		if !ok {
			return a, fmt.Errorf("%w: status is not a string", errUnparsable)
		}
		a.status, a.hasStatus = s, true
	}
	if raw, ok := fields["balance"]; ok && !isNull(raw) {
		n, err := cents(raw)
		if err != nil {
			return a, err
		}
		a.balance, a.hasBalance = n, true
	}
	// error_code of another type than string is no code: temporary either way.
	a.code, _ = jsonString(fields["error_code"])
	a.message, _ = jsonString(fields["error_message"])
	a.currency, _ = jsonString(fields["currency"])
	a.playerID, _ = jsonString(fields["player_id"])
	a.playerName, _ = jsonString(fields["player_name"])
	if raw := fields["transaction_id"]; len(raw) > 0 && jsonint.Is(raw) {
		a.operatorTx = string(raw) // an operator that numbers its movements
	} else {
		a.operatorTx, _ = jsonString(raw)
	}
	if raw := fields["freebets"]; len(raw) > 0 && raw[0] == '[' {
		if err := json.Unmarshal(raw, &a.freebets); err != nil {
			a.freebets = nil
		}
	}
	return a, nil
}

// cents reads a money amount: a JSON integer that fits int64. A fraction, an
// exponent or a string is refused, never rounded (GEN-4, GEN-5). A negative
// integer is taken as sent: the operator's wallet is the truth (GEN-1).
func cents(raw json.RawMessage) (int64, error) {
	n, err := jsonint.Parse(raw)
	switch {
	case errors.Is(err, jsonint.ErrRange):
		return 0, fmt.Errorf("%w: balance does not fit int64", errUnparsable)
	case err != nil:
		return 0, fmt.Errorf("%w: balance is not an integer number of cents", errUnparsable)
	}
	return n, nil
}

func isNull(raw json.RawMessage) bool { return string(raw) == "null" }

// jsonString returns raw as a string when it is a JSON string.
func jsonString(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false
	}
	return s, true
}
