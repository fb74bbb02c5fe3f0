package wallet

import (
	"fmt"
	"testing"
)

// classCase is one answer and the outcome it must get.
type classCase struct {
	name    string
	route   Route
	status  int
	ctype   string // Content-Type of the answer; application/json when empty
	body    string
	outcome Outcome
	reason  string
	code    string // expected Result.ErrorCode
}

var finalCodes = []string{
	CodeInsufficientFunds, CodeTokenExpired, CodeTokenInvalid, CodePlayerNotFound,
	CodeBetNotFound, CodeCurrencyMismatch, CodePlayerBlocked,
}

func errBody(code string) string {
	return fmt.Sprintf(`{"status":"error","error_code":%q,"error_message":"diagnostic text"}`, code)
}

// classificationCases is the table of the classification, shared by the pure
// test and the test over HTTP.
func classificationCases() []classCase {
	var cs []classCase
	// Rule WERR-3 WERR-8 WERR-9 WERR-10 WERR-11 WERR-12 WERR-13 WERR-14 AMB-1:
	// the seven final codes are final whatever the HTTP status (200, 402,
	// 409), on every route but a 4xx on /win.
	// Rule WIN-12 AMB-3: on /win a 4xx is retried whatever the body; a 200 with
	// a final code (BET_NOT_FOUND included) is final.
	for _, code := range finalCodes {
		for _, route := range allRoutes {
			for _, status := range []int{200, 402, 409} {
				c := classCase{
					name:  fmt.Sprintf("%s %d %s", route, status, code),
					route: route, status: status, body: errBody(code),
					outcome: Refused, reason: ReasonFinalCode, code: code,
				}
				if route == RouteWin && status != 200 {
					c.outcome, c.reason = Temporary, ReasonWin4xx
				}
				cs = append(cs, c)
			}
		}
	}
	cs = append(cs,
		// Rule WERR-18: a code outside the seven, unknown ones included, is temporary.
		classCase{name: "unknown code", route: RouteBet, status: 200, body: errBody("LIMIT_REACHED"), outcome: Temporary, reason: ReasonRetryableCode, code: "LIMIT_REACHED"},
		classCase{name: "final code in lower case is another code", route: RouteBet, status: 200, body: errBody("insufficient_funds"), outcome: Temporary, reason: ReasonRetryableCode, code: "insufficient_funds"},
		classCase{name: "unknown code under 402", route: RouteBet, status: 402, body: errBody("NO_MONEY"), outcome: Temporary, reason: ReasonRetryableCode, code: "NO_MONEY"},
		// Rule WERR-15: INTERNAL_ERROR is retried.
		classCase{name: "INTERNAL_ERROR 200", route: RouteWin, status: 200, body: errBody(CodeInternalError), outcome: Temporary, reason: ReasonRetryableCode, code: CodeInternalError},
		classCase{name: "INTERNAL_ERROR 400 malformed", route: RouteBet, status: 400, body: errBody(CodeInternalError), outcome: Temporary, reason: ReasonRetryableCode, code: CodeInternalError},
		// Rule WERR-17 AMB-10: DUPLICATE_TRANSACTION is retried (reading A).
		classCase{name: "DUPLICATE_TRANSACTION 409 on /bet", route: RouteBet, status: 409, body: errBody(CodeDuplicateTransaction), outcome: Temporary, reason: ReasonRetryableCode, code: CodeDuplicateTransaction},
		classCase{name: "DUPLICATE_TRANSACTION 200 on /rollback", route: RouteRollback, status: 200, body: errBody(CodeDuplicateTransaction), outcome: Temporary, reason: ReasonRetryableCode, code: CodeDuplicateTransaction},
		// Rule WERR-6: status error without error_code is temporary.
		classCase{name: "error without code", route: RouteBet, status: 200, body: `{"status":"error","error_message":"oops"}`, outcome: Temporary, reason: ReasonNoErrorCode},
		classCase{name: "error with empty code", route: RouteBet, status: 200, body: `{"status":"error","error_code":""}`, outcome: Temporary, reason: ReasonNoErrorCode},
		classCase{name: "error with null code", route: RouteRollback, status: 200, body: `{"status":"error","error_code":null}`, outcome: Temporary, reason: ReasonNoErrorCode},
		classCase{name: "error with numeric code", route: RouteBet, status: 200, body: `{"status":"error","error_code":402}`, outcome: Temporary, reason: ReasonNoErrorCode},
		classCase{name: "final code without status", route: RouteBet, status: 200, body: `{"error_code":"INSUFFICIENT_FUNDS"}`, outcome: Temporary, reason: ReasonNoStatus, code: CodeInsufficientFunds},
		// Rule WERR-4 WERR-3: a 200 without status decides nothing.
		classCase{name: "200 without status", route: RouteBet, status: 200, body: `{"balance":1000}`, outcome: Temporary, reason: ReasonNoStatus},
		classCase{name: "200 empty object", route: RouteWin, status: 200, body: `{}`, outcome: Temporary, reason: ReasonNoStatus},
		classCase{name: "200 status null", route: RouteBalance, status: 200, body: `{"status":null,"player_id":"p","balance":1}`, outcome: Temporary, reason: ReasonNoStatus},
		classCase{name: "status OK in capitals", route: RouteBet, status: 200, body: `{"status":"OK","balance":1000}`, outcome: Temporary, reason: ReasonUnknownStatus},
		classCase{name: "status success", route: RouteWin, status: 200, body: `{"status":"success","balance":1000}`, outcome: Temporary, reason: ReasonUnknownStatus},
		classCase{name: "status not a string", route: RouteBet, status: 200, body: `{"status":true,"balance":1000}`, outcome: Temporary, reason: ReasonUnparsable},
		// Rule WERR-20: a 5xx is a transport failure whatever its body.
		classCase{name: "500 with ok body", route: RouteBet, status: 500, body: `{"status":"ok","balance":1000}`, outcome: Temporary, reason: ReasonHTTP5xx},
		classCase{name: "503 with ok body on /win", route: RouteWin, status: 503, body: `{"status":"ok","balance":1000}`, outcome: Temporary, reason: ReasonHTTP5xx},
		classCase{name: "502 with a final code", route: RouteBet, status: 502, body: errBody(CodeInsufficientFunds), outcome: Temporary, reason: ReasonHTTP5xx, code: CodeInsufficientFunds},
		classCase{name: "504 on /balance with a token refusal", route: RouteBalance, status: 504, body: errBody(CodeTokenInvalid), outcome: Temporary, reason: ReasonHTTP5xx, code: CodeTokenInvalid},
		classCase{name: "500 empty body", route: RouteRollback, status: 500, body: ``, outcome: Temporary, reason: ReasonHTTP5xx},
		classCase{name: "502 HTML from a proxy", route: RouteBet, status: 502, ctype: "text/html", body: `<html><body>502 Bad Gateway</body></html>`, outcome: Temporary, reason: ReasonHTTP5xx},
		// Rule WIN-12 AMB-3: any 4xx on /win is retried, the orphan 404 included.
		classCase{name: "/win 404 orphan credit", route: RouteWin, status: 404, body: errBody(CodeBetNotFound), outcome: Temporary, reason: ReasonWin4xx, code: CodeBetNotFound},
		classCase{name: "/win 400 malformed", route: RouteWin, status: 400, body: errBody(CodeInternalError), outcome: Temporary, reason: ReasonWin4xx, code: CodeInternalError},
		classCase{name: "/win 401 INVALID_SIGNATURE", route: RouteWin, status: 401, body: errBody(CodeInvalidSignature), outcome: Temporary, reason: ReasonWin4xx, code: CodeInvalidSignature},
		classCase{name: "/win 403 empty", route: RouteWin, status: 403, body: ``, outcome: Temporary, reason: ReasonWin4xx},
		classCase{name: "/win 200 BET_NOT_FOUND", route: RouteWin, status: 200, body: errBody(CodeBetNotFound), outcome: Refused, reason: ReasonFinalCode, code: CodeBetNotFound},
		// Rule WERR-16 AUTH-15 AUTH-16 AMB-9: INVALID_SIGNATURE is retried, never a session refusal.
		classCase{name: "INVALID_SIGNATURE 401 on /bet", route: RouteBet, status: 401, body: errBody(CodeInvalidSignature), outcome: Temporary, reason: ReasonInvalidSignature, code: CodeInvalidSignature},
		classCase{name: "INVALID_SIGNATURE 401 on /rollback", route: RouteRollback, status: 401, body: errBody(CodeInvalidSignature), outcome: Temporary, reason: ReasonInvalidSignature, code: CodeInvalidSignature},
		classCase{name: "INVALID_SIGNATURE 401 on /balance", route: RouteBalance, status: 401, body: errBody(CodeInvalidSignature), outcome: Temporary, reason: ReasonInvalidSignature, code: CodeInvalidSignature},
		classCase{name: "INVALID_SIGNATURE 200 on /bet", route: RouteBet, status: 200, body: errBody(CodeInvalidSignature), outcome: Temporary, reason: ReasonInvalidSignature, code: CodeInvalidSignature},
		classCase{name: "INVALID_SIGNATURE 403 on /balance", route: RouteBalance, status: 403, body: errBody(CodeInvalidSignature), outcome: Temporary, reason: ReasonInvalidSignature, code: CodeInvalidSignature},
		// Rule BAL-7 AMB-8: a /balance 401 that is not INVALID_SIGNATURE refuses the token.
		classCase{name: "/balance 401 TOKEN_INVALID", route: RouteBalance, status: 401, body: errBody(CodeTokenInvalid), outcome: Refused, reason: ReasonBalance401, code: CodeTokenInvalid},
		classCase{name: "/balance 401 TOKEN_EXPIRED keeps its code", route: RouteBalance, status: 401, body: errBody(CodeTokenExpired), outcome: Refused, reason: ReasonBalance401, code: CodeTokenExpired},
		classCase{name: "/balance 401 without body", route: RouteBalance, status: 401, body: ``, outcome: Refused, reason: ReasonBalance401, code: CodeTokenInvalid},
		classCase{name: "/balance 401 HTML", route: RouteBalance, status: 401, ctype: "text/html", body: `<h1>Unauthorized</h1>`, outcome: Refused, reason: ReasonBalance401, code: CodeTokenInvalid},
		classCase{name: "/balance 401 error without code", route: RouteBalance, status: 401, body: `{"status":"error"}`, outcome: Refused, reason: ReasonBalance401, code: CodeTokenInvalid},
		classCase{name: "/balance 401 other code", route: RouteBalance, status: 401, body: errBody(CodeInternalError), outcome: Refused, reason: ReasonBalance401, code: CodeTokenInvalid},
		classCase{name: "/balance 200 TOKEN_EXPIRED", route: RouteBalance, status: 200, body: errBody(CodeTokenExpired), outcome: Refused, reason: ReasonFinalCode, code: CodeTokenExpired},
		classCase{name: "/bet 401 without body is not a token refusal", route: RouteBet, status: 401, body: ``, outcome: Temporary, reason: ReasonUnparsable},
		// Rule GEN-4 GEN-5 GEN-6: money is an integer; anything else is never rounded.
		classCase{name: "float balance", route: RouteBet, status: 200, body: `{"status":"ok","balance":10.5}`, outcome: Temporary, reason: ReasonUnparsable},
		classCase{name: "float balance with zero fraction", route: RouteWin, status: 200, body: `{"status":"ok","balance":1000.0}`, outcome: Temporary, reason: ReasonUnparsable},
		classCase{name: "balance in exponent form", route: RouteWin, status: 200, body: `{"status":"ok","balance":1e3}`, outcome: Temporary, reason: ReasonUnparsable},
		classCase{name: "balance as a string", route: RouteRollback, status: 200, body: `{"status":"ok","balance":"1000"}`, outcome: Temporary, reason: ReasonUnparsable},
		classCase{name: "balance beyond int64", route: RouteBet, status: 200, body: `{"status":"ok","balance":9223372036854775808}`, outcome: Temporary, reason: ReasonUnparsable},
		classCase{name: "float balance on /balance", route: RouteBalance, status: 200, body: `{"status":"ok","player_id":"p","balance":15.20,"currency":"BRL"}`, outcome: Temporary, reason: ReasonUnparsable},
		classCase{name: "float balance on INSUFFICIENT_FUNDS", route: RouteBet, status: 200, body: `{"status":"error","error_code":"INSUFFICIENT_FUNDS","balance":5.5}`, outcome: Temporary, reason: ReasonUnparsable},
		// Rule GEN-2: a body that is not a JSON object decides nothing.
		classCase{name: "HTML 200 from a proxy", route: RouteBet, status: 200, ctype: "text/html", body: `<html><body>Maintenance</body></html>`, outcome: Temporary, reason: ReasonUnparsable},
		classCase{name: "empty 200", route: RouteWin, status: 200, body: ``, outcome: Temporary, reason: ReasonUnparsable},
		classCase{name: "JSON null", route: RouteBet, status: 200, body: `null`, outcome: Temporary, reason: ReasonUnparsable},
		classCase{name: "JSON array", route: RouteBet, status: 200, body: `[{"status":"ok","balance":1}]`, outcome: Temporary, reason: ReasonUnparsable},
		classCase{name: "truncated JSON", route: RouteWin, status: 200, body: `{"status":"ok","bal`, outcome: Temporary, reason: ReasonUnparsable},
		classCase{name: "two JSON values", route: RouteBet, status: 200, body: `{"status":"ok","balance":1}{"status":"ok"}`, outcome: Temporary, reason: ReasonUnparsable},
		// Rule BET-2 ENV-17 WERR-3: status ok on a 2xx is a success; elsewhere nothing is decided.
		classCase{name: "ok 200 /bet", route: RouteBet, status: 200, body: `{"status":"ok","balance":151050,"currency":"BRL","transaction_id":"88412093"}`, outcome: Success, reason: ReasonOK},
		classCase{name: "ok 201 /win", route: RouteWin, status: 201, body: `{"status":"ok","balance":153400}`, outcome: Success, reason: ReasonOK},
		classCase{name: "ok 200 /rollback", route: RouteRollback, status: 200, body: `{"status":"ok","balance":152050,"currency":"BRL"}`, outcome: Success, reason: ReasonOK},
		classCase{name: "ok 200 /balance", route: RouteBalance, status: 200, body: `{"status":"ok","player_id":"p","balance":0,"currency":"BRL"}`, outcome: Success, reason: ReasonOK},
		classCase{name: "ok without balance on /win", route: RouteWin, status: 200, body: `{"status":"ok"}`, outcome: Success, reason: ReasonOK},
		classCase{name: "ok on 402", route: RouteBet, status: 402, body: `{"status":"ok","balance":1}`, outcome: Temporary, reason: ReasonOKNot2xx},
		classCase{name: "ok on 404 /rollback", route: RouteRollback, status: 404, body: `{"status":"ok","balance":1}`, outcome: Temporary, reason: ReasonOKNot2xx},
		classCase{name: "ok on 302", route: RouteBet, status: 302, body: `{"status":"ok","balance":1}`, outcome: Temporary, reason: ReasonOKNot2xx},
		// Rule BAL-8 BAL-5: /balance needs player_id and balance to let a player in.
		classCase{name: "/balance ok without player_id", route: RouteBalance, status: 200, body: `{"status":"ok","balance":10,"currency":"BRL"}`, outcome: Temporary, reason: ReasonIncompleteBalance},
		classCase{name: "/balance ok without balance", route: RouteBalance, status: 200, body: `{"status":"ok","player_id":"p","currency":"BRL"}`, outcome: Temporary, reason: ReasonIncompleteBalance},
		// Rule FB-1 FB-12 FB-13: freebets members never spoil an answer.
		classCase{name: "/balance with a fractional grant", route: RouteBalance, status: 200, body: `{"status":"ok","player_id":"p","balance":1,"currency":"BRL","freebets":[{"id":"a","amount":2.5},{"id":"b","amount":200,"quantity":"x"}]}`, outcome: Success, reason: ReasonOK},
		classCase{name: "/bet with freebets not an array", route: RouteBet, status: 200, body: `{"status":"ok","balance":1,"freebets":{"id":"a"}}`, outcome: Success, reason: ReasonOK},
		// Rule ENV-19: a numeric operator transaction_id is kept, not an error.
		classCase{name: "numeric operator transaction_id", route: RouteWin, status: 200, body: `{"status":"ok","balance":1,"transaction_id":88412093}`, outcome: Success, reason: ReasonOK},
		classCase{name: "extra members are ignored", route: RouteWin, status: 200, body: `{"status":"ok","balance":1,"bonus":{"x":[1,2]},"player_id":7}`, outcome: Success, reason: ReasonOK},
	)
	return cs
}

// Rule WERR-3 WERR-4 WERR-6 WERR-8 WERR-9 WERR-10 WERR-11 WERR-12 WERR-13
// WERR-14 WERR-15 WERR-16 WERR-17 WERR-18 WERR-20 WIN-12 BAL-7 AMB-1 AMB-3
// AMB-8 AMB-9 AMB-10 GEN-5: the one classification, decided from the body's
// status and never from the HTTP status alone.
func TestClassify(t *testing.T) {
	t.Parallel()
	for _, tc := range classificationCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := classify(tc.route, tc.status, []byte(tc.body))
			if got.Outcome != tc.outcome || got.Reason != tc.reason || got.ErrorCode != tc.code {
				t.Fatalf("classify(%s, %d, %s) = %s/%s/%q, want %s/%s/%q",
					tc.route, tc.status, tc.body, got.Outcome, got.Reason, got.ErrorCode, tc.outcome, tc.reason, tc.code)
			}
			if got.HTTPStatus != tc.status || got.Route != tc.route {
				t.Fatalf("status/route = %d %s, want %d %s", got.HTTPStatus, got.Route, tc.status, tc.route)
			}
			if got.Outcome != Success && (got.PlayerID != "" || got.OperatorTxID != "" || got.Freebets != nil) {
				t.Fatalf("a non-success carries success fields: %+v", got)
			}
		})
	}
}

// Rule WERR-7 ENV-17 ENV-19 BAL-8 FB-1: what a success or a refusal carries.
func TestClassifyFields(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		route Route
		body  string
		want  Result
	}{
		{"bet success keeps the operator's transaction_id", RouteBet,
			`{"status":"ok","balance":151050,"currency":"BRL","player_id":"player-100234","transaction_id":"88412093"}`,
			Result{Outcome: Success, Balance: 151050, HasBalance: true, Currency: "BRL", PlayerID: "player-100234", OperatorTxID: "88412093"}},
		{"numeric operator transaction_id is kept as its digits", RouteWin,
			`{"status":"ok","balance":5,"transaction_id":88412093}`,
			Result{Outcome: Success, Balance: 5, HasBalance: true, OperatorTxID: "88412093"}},
		{"success without balance says so", RouteWin, `{"status":"ok"}`,
			Result{Outcome: Success}},
		{"zero balance is a balance", RouteRollback, `{"status":"ok","balance":0}`,
			Result{Outcome: Success, HasBalance: true}},
		{"INSUFFICIENT_FUNDS carries the balance", RouteBet,
			`{"status":"error","error_code":"INSUFFICIENT_FUNDS","error_message":"balance 500 below stake 1000","balance":500}`,
			Result{Outcome: Refused, Balance: 500, HasBalance: true, ErrorCode: CodeInsufficientFunds, ErrorMessage: "balance 500 below stake 1000"}},
		{"another refusal does not", RouteBet,
			`{"status":"error","error_code":"PLAYER_BLOCKED","balance":500}`,
			Result{Outcome: Refused, ErrorCode: CodePlayerBlocked}},
		{"balance success", RouteBalance,
			`{"status":"ok","player_id":"player-100234","player_name":"Joana Silva","balance":152050,"currency":"BRL"}`,
			Result{Outcome: Success, Balance: 152050, HasBalance: true, Currency: "BRL", PlayerID: "player-100234", PlayerName: "Joana Silva"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := classify(tt.route, 200, []byte(tt.body))
			got.Route, got.HTTPStatus, got.Reason = "", 0, ""
			if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", tt.want) {
				t.Fatalf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// Rule FB-1 BAL-10: only /balance surfaces grants, raw, even the invalid ones
// (package freebets discards those entry by entry).
func TestClassifyFreebets(t *testing.T) {
	t.Parallel()
	grants := `[{"id":"spring-2026-0042","amount":200,"quantity":5},{"id":"bad","amount":2.5}]`
	bal := classify(RouteBalance, 200, []byte(`{"status":"ok","player_id":"p","balance":1,"currency":"BRL","freebets":`+grants+`}`))
	if bal.Outcome != Success || len(bal.Freebets) != 2 {
		t.Fatalf("/balance: outcome %s, %d grants, want success with 2", bal.Outcome, len(bal.Freebets))
	}
	if string(bal.Freebets[1]) != `{"id":"bad","amount":2.5}` {
		t.Fatalf("grant not passed raw: %s", bal.Freebets[1])
	}
	for _, route := range []Route{RouteBet, RouteWin, RouteRollback} {
		got := classify(route, 200, []byte(`{"status":"ok","balance":1,"freebets":`+grants+`}`))
		if got.Outcome != Success || got.Freebets != nil {
			t.Fatalf("%s: outcome %s, freebets %v; want success without grants", route, got.Outcome, got.Freebets)
		}
	}
}

func TestIsFinal(t *testing.T) {
	t.Parallel()
	for _, code := range finalCodes {
		if !IsFinal(code) {
			t.Errorf("IsFinal(%s) = false", code)
		}
	}
	for _, code := range []string{"", CodeInternalError, CodeInvalidSignature, CodeDuplicateTransaction, "insufficient_funds", " TOKEN_EXPIRED"} {
		if IsFinal(code) {
			t.Errorf("IsFinal(%q) = true", code)
		}
	}
}
