package walletcheck

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/crashstudio/crashgame/internal/signature"
	"github.com/crashstudio/crashgame/internal/wallet"
)

// session resolves the test session with /balance (BAL-8, ENV-17) and keeps
// its player, currency, balance and freebet grants.
func (r *runner) session(ctx context.Context) bool {
	ok := false
	r.do(ctx, step{rules: "BAL-8 ENV-17", name: "/balance resolves the session", run: func(ctx context.Context) (Result, string) {
		res, _ := r.client.Balance(ctx, wallet.BalanceCall{Token: string(r.t.Token), Currency: r.t.Currency, GameID: r.t.GameID})
		switch {
		case res.Outcome == wallet.Success:
		case res.Reason == wallet.ReasonInvalidSignature:
			return Fail, describe(res) + ": the wallet refused the key or the signature; check --api-key, --secret, --operator and the clock"
		default:
			return Fail, describe(res) + fmt.Sprintf(" (%s): the token must be a live session of a funded test player", res.Reason)
		}
		ev := fmt.Sprintf("HTTP %d ok: player_id %s, balance %d", res.HTTPStatus, printable(res.PlayerID), res.Balance)
		verdict := Pass
		switch {
		case res.Currency == "":
			ev += ", no currency (AMB-14 reading A: the launch currency applies)"
		case !currencyRE.MatchString(res.Currency):
			verdict = Fail
			ev += ", currency " + printable(res.Currency) + " is not an ISO 4217 code (GEN-7)"
		case res.Currency != r.t.Currency:
			ev += fmt.Sprintf(", currency %s (sent %s: the movements use %s, AMB-15)", res.Currency, r.t.Currency, res.Currency)
			r.currency = res.Currency
		default:
			ev += ", currency " + res.Currency
		}
		if res.Balance < 0 {
			verdict = Fail
			ev += "; a negative balance is not Cents (GEN-6)"
		}
		r.grants = parseGrants(res.Freebets)
		ev += fmt.Sprintf("; %d freebet grant(s) listed", len(res.Freebets))
		if verdict == Pass {
			ok = true
			r.player, r.start = res.PlayerID, res.Balance
			r.rep.PlayerID, r.rep.Currency = res.PlayerID, r.currency
			b := res.Balance
			r.rep.BalanceBefore = &b
		}
		return verdict, ev
	}})
	return ok
}

// parseGrants keeps the usable grants of a /balance answer, with the id the
// game would send on /bet (suffixed #1 when the quantity is above 1: FB-6).
func parseGrants(raw []json.RawMessage) []grant {
	var out []grant
	for _, g := range raw {
		var v struct {
			ID       string `json:"id"`
			Amount   int64  `json:"amount"`
			Quantity *int   `json:"quantity"`
		}
		if json.Unmarshal(g, &v) != nil || v.ID == "" || v.Amount <= 0 {
			continue
		}
		id := v.ID
		if v.Quantity != nil && *v.Quantity > 1 {
			id += "#1"
		}
		out = append(out, grant{id: id, amount: v.Amount})
	}
	return out
}

// judgeTokenRefusal is BAL-7 for one answer of /balance with a token that is
// unknown or expired: HTTP 401, or HTTP 200 with status = error and
// TOKEN_INVALID or TOKEN_EXPIRED (AMB-8 reading B).
func judgeTokenRefusal(a rawAnswer) (Result, string) {
	switch {
	case a.HTTPStatus == http.StatusUnauthorized && a.ErrorCode == wallet.CodeInvalidSignature:
		return Pass, a.String() + " (AMB-8, the third reading: the game logs it as its own configuration, AUTH-16)"
	case a.HTTPStatus == http.StatusUnauthorized:
		return Pass, a.String() + " (AMB-8 reading A)"
	case a.HTTPStatus == http.StatusOK && a.Status == "error" &&
		(a.ErrorCode == wallet.CodeTokenInvalid || a.ErrorCode == wallet.CodeTokenExpired):
		return Pass, a.String() + " (AMB-8 reading B: HTTP 200 with the code)"
	case a.accepted():
		return Fail, a.String() + ": the session was accepted; BAL-7 asks HTTP 401"
	default:
		return Fail, a.String() + ": BAL-7 asks HTTP 401 (or HTTP 200 TOKEN_INVALID/TOKEN_EXPIRED, AMB-8)"
	}
}

// checkUnknownField: a /balance of the live session that carries a field the
// document does not declare is answered as without it. The documents are open
// (docs/ambiguities.md, VER): a field the game adds in v1 must not break a
// wallet, so a wallet that refuses unknown fields fails here, before it fails
// in production.
func (r *runner) checkUnknownField(ctx context.Context) (Result, string) {
	var m map[string]any
	if err := json.Unmarshal(r.liveBody(0), &m); err != nil {
		return Fail, "encode the probe: " + err.Error()
	}
	m["wallet_check_added_field"] = "a field added in v1; ignore it"
	body := mustJSON(m)
	a := r.probe(ctx, body, r.bearer(), r.sign(body))
	switch {
	case a.accepted():
		return Pass, "/balance with an unknown field answered: " + a.String()
	case r.player == "":
		return Skip, "the token is not a live session, so the probe cannot tell (" + a.String() + ")"
	default:
		return Fail, "refused a field it does not know, so the first field the game adds would break this wallet: accept and ignore unknown fields | " + a.String()
	}
}

// checkMalformed: a signed /balance of the live session whose currency is a
// number is a protocol failure: refused with a 4xx (403 on /balance, BAL-13;
// 400 elsewhere, WERR-2) whose body is the contract's error, JSON with
// status = error and an error_code. A generated server's own error body
// (ogen's {"error_message":...}, oapi-codegen's plain text) fails here.
func (r *runner) checkMalformed(ctx context.Context) (Result, string) {
	var m map[string]any
	if err := json.Unmarshal(r.liveBody(0), &m); err != nil {
		return Fail, "encode the probe: " + err.Error()
	}
	m["currency"] = 978
	body := mustJSON(m)
	a := r.probe(ctx, body, r.bearer(), r.sign(body))
	ev := "/balance with currency 978 (a number): " + a.String()
	switch {
	case a.HTTPStatus < 400 || a.HTTPStatus >= 500:
		return Fail, "not refused as a protocol failure (a 4xx) | " + ev
	case !a.JSON || a.Status != "error" || a.ErrorCode == "":
		return Fail, "the refusal's body is not the contract's error (JSON with status error and an error_code); install an error handler in the generated server (docs/integrators.md) | " + ev
	case a.HTTPStatus != http.StatusForbidden:
		return Pass, ev + "; BAL-13 lists 403 for /balance"
	}
	return Pass, ev
}

// checkUnknownToken: a token the operator never issued is refused (BAL-7).
func (r *runner) checkUnknownToken(ctx context.Context) (Result, string) {
	body := mustJSON(r.balanceBody(randomToken(), 0))
	return judgeTokenRefusal(r.send(ctx, "/balance", body, r.bearer(), r.sign(body)))
}

// probe sends a /balance of the live session with the given headers.
func (r *runner) probe(ctx context.Context, body []byte, authorization, sig string) rawAnswer {
	return r.send(ctx, "/balance", body, authorization, sig)
}

// liveBody is a compact /balance body of the live session.
func (r *runner) liveBody(skewMS int64) []byte {
	return mustJSON(r.balanceBody(string(r.t.Token), skewMS))
}

// signatureRefused judges one answer that must be refused HTTP 401
// INVALID_SIGNATURE under rule. When it was not, ok is false and note says
// how, for the evidence: " ACCEPTED" followed by accepted, or what rule asks.
func signatureRefused(a rawAnswer, rule, accepted string) (ok bool, note string) {
	switch {
	case a.refusedForSignature():
		return true, ""
	case a.accepted():
		return false, " ACCEPTED" + accepted
	default:
		return false, " (" + rule + " asks HTTP 401 error INVALID_SIGNATURE)"
	}
}

// probeVerdict gathers the evidence of one check's probes, each as
// "label: answer" and a note, joined by "; ", and fails the check when a
// probe is not answered as it must be.
type probeVerdict struct {
	failed bool
	parts  []string
}

// note adds a probe to the evidence without judging it.
func (p *probeVerdict) note(label string, a rawAnswer, note string) {
	p.parts = append(p.parts, label+": "+a.String()+note)
}

// refused judges a probe that must be refused HTTP 401 INVALID_SIGNATURE
// under rule, as signatureRefused does (accepted is its note on an
// acceptance).
func (p *probeVerdict) refused(label string, a rawAnswer, rule, accepted string) {
	ok, note := signatureRefused(a, rule, accepted)
	if !ok {
		p.failed = true
	}
	p.note(label, a, note)
}

// accepted judges a probe that must be accepted; when it was not, the
// evidence says " REFUSED (why)".
func (p *probeVerdict) accepted(label string, a rawAnswer, why string) {
	note := ""
	if !a.accepted() {
		p.failed = true
		note = " REFUSED (" + why + ")"
	}
	p.note(label, a, note)
}

// result is the check's result and evidence.
func (p *probeVerdict) result() (Result, string) {
	ev := strings.Join(p.parts, "; ")
	if p.failed {
		return Fail, ev
	}
	return Pass, ev
}

// judgeRefusals passes when every probe was refused 401 INVALID_SIGNATURE
// (AUTH-15); labels name the probes in the evidence.
func judgeRefusals(labels []string, answers []rawAnswer) (Result, string) {
	var p probeVerdict
	for i, a := range answers {
		p.refused(labels[i], a, "AUTH-15", "")
	}
	return p.result()
}

// bearerSteps probe how the Authorization header is parsed, with /balance
// calls of the live session: the capital B must work (AUTH-12), the
// lowercase one is reported.
func (r *runner) bearerSteps() []step {
	return []step{
		{rules: "AUTH-12", name: "capital-B Bearer accepted", run: func(ctx context.Context) (Result, string) {
			body := r.liveBody(0)
			capital := r.probe(ctx, body, r.bearer(), r.sign(body))
			ev := "Authorization: Bearer <key>: " + capital.String()
			switch {
			case capital.accepted():
				return Pass, ev
			case capital.refusedForSignature():
				body = r.liveBody(0)
				lower := r.probe(ctx, body, "bearer "+string(r.t.APIKey), r.sign(body))
				if lower.accepted() {
					return Fail, "refused while lowercase bearer is accepted | " + ev + "; bearer <key>: " + lower.String()
				}
				return Fail, "refused for the key or the signature: check the API key, the secret and the clock first | " + ev
			case r.player == "":
				return Skip, "the token is not a live session, so the probe cannot tell (" + capital.String() + ")"
			default:
				return Fail, ev
			}
		}},
		{rules: "AUTH-12", name: "lowercase bearer (informational)", run: func(ctx context.Context) (Result, string) {
			body := r.liveBody(0)
			a := r.probe(ctx, body, "bearer "+string(r.t.APIKey), r.sign(body))
			if a.accepted() {
				return Pass, "Authorization: bearer <key> accepted (" + a.String() + "); the contract asks only that Bearer works"
			}
			return Pass, "Authorization: bearer <key> refused (" + a.String() + "); the contract asks only that Bearer works"
		}},
	}
}

// authSteps probe the key, the signature and the window with /balance calls
// of the live session: none of them moves money.
func (r *runner) authSteps() []step {
	return []step{
		{rules: "AUTH-15 AUTH-9", name: "wrong or missing API key refused", run: func(ctx context.Context) (Result, string) {
			body := r.liveBody(0)
			wrong := r.probe(ctx, body, "Bearer wc-wrong-key-"+rand.Text(), r.sign(body))
			body = r.liveBody(0)
			none := r.probe(ctx, body, "", r.sign(body))
			return judgeRefusals([]string{"wrong key", "no Authorization"}, []rawAnswer{wrong, none})
		}},
		{rules: "AUTH-15 AUTH-9", name: "wrong or missing signature refused", run: func(ctx context.Context) (Result, string) {
			body := r.liveBody(0)
			other := signature.Sign([]byte("wc-not-the-secret-"+rand.Text()), body)
			wrong := r.probe(ctx, body, r.bearer(), other)
			body = r.liveBody(0)
			none := r.probe(ctx, body, r.bearer(), "")
			return judgeRefusals([]string{"signed with another secret", "no X-Signature"}, []rawAnswer{wrong, none})
		}},
		{rules: "AUTH-3 AUTH-15", name: "signature over the exact bytes", run: r.checkExactBytes},
		{rules: "LIM-1 AUTH-9", name: "5-minute window on timestamp", run: r.checkWindow},
		{rules: "VER", name: "a request field the wallet does not know is ignored", run: r.checkUnknownField},
		{rules: "WERR-2 BAL-13 GEN-2", name: "malformed body refused in the contract's error shape", run: r.checkMalformed},
		{rules: "AUTH-9", name: "unknown operator refused", run: func(ctx context.Context) (Result, string) {
			b := r.balanceBody(string(r.t.Token), 0)
			b.Operator = "wc-unknown-operator-" + strings.ToLower(rand.Text()[:8])
			body := mustJSON(b)
			return judgeRefusals([]string{"envelope operator unknown, signed with the secret"}, []rawAnswer{r.probe(ctx, body, r.bearer(), r.sign(body))})
		}},
		{rules: "AUTH-19", name: "second API key accepted (rotation)", run: func(ctx context.Context) (Result, string) {
			if r.t.SecondAPIKey == "" {
				return Skip, "no second API key given (--second-api-key)"
			}
			body := r.liveBody(0)
			a := r.probe(ctx, body, "Bearer "+string(r.t.SecondAPIKey), r.sign(body))
			if !a.accepted() {
				return Fail, "Bearer <second key>: " + a.String() + "; during a rotation both keys must work"
			}
			return Pass, "Bearer <second key>: " + a.String()
		}},
		{rules: "AUTH-14", name: "API keys compared in constant time", run: func(context.Context) (Result, string) {
			return Skip, "not observable from outside the wallet: review the operator's code"
		}},
	}
}

// checkExactBytes: a body re-encoded with other whitespace, sent with the
// signature of the original bytes, is refused (the operator verifies the
// bytes it received, not a re-encoding); and a body with other whitespace and
// key order, signed over its own bytes, is accepted (AUTH-3, AUTH-15).
func (r *runner) checkExactBytes(ctx context.Context) (Result, string) {
	b := r.balanceBody(string(r.t.Token), 0)
	original := mustJSON(b)
	reencoded, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return Fail, "encode the probe: " + err.Error()
	}
	altered := r.probe(ctx, reencoded, r.bearer(), r.sign(original))

	var fields map[string]any // a map encodes its keys sorted: another order than the game's
	if err := json.Unmarshal(r.liveBody(0), &fields); err != nil {
		return Fail, "decode the probe: " + err.Error()
	}
	own, err := json.MarshalIndent(fields, " ", "\t")
	if err != nil {
		return Fail, "encode the probe: " + err.Error()
	}
	spaced := r.probe(ctx, own, r.bearer(), r.sign(own))

	var p probeVerdict
	p.refused("indented body with the signature of its compact original", altered,
		"AUTH-15", " (the wallet verifies a re-encoding, not the bytes received)")
	p.accepted("body with tabs and sorted keys signed over its own bytes", spaced,
		"the wallet must verify the exact bytes received, whatever their whitespace and key order")
	return p.result()
}

// checkWindow: a correctly signed request 6 minutes old is refused, one 4
// minutes old is accepted (LIM-1); a request 6 minutes ahead is reported
// without a verdict, the window's symmetry being AMB-26.
func (r *runner) checkWindow(ctx context.Context) (Result, string) {
	const minute = int64(time.Minute / time.Millisecond)
	stale := r.liveBody(-6 * minute)
	staleA := r.probe(ctx, stale, r.bearer(), r.sign(stale))
	inside := r.liveBody(-4 * minute)
	insideA := r.probe(ctx, inside, r.bearer(), r.sign(inside))
	ahead := r.liveBody(6 * minute)
	aheadA := r.probe(ctx, ahead, r.bearer(), r.sign(ahead))

	var p probeVerdict
	p.refused("6 min old", staleA, "AUTH-9", "")
	p.accepted("4 min old", insideA, "inside the window")
	if aheadA.accepted() {
		p.note("6 min ahead", aheadA, " (AMB-26 reading B: future timestamps pass)")
	} else {
		p.note("6 min ahead", aheadA, " (AMB-26 reading A: symmetric window)")
	}
	return p.result()
}
