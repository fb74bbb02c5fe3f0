package walletcheck

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/crashstudio/crashgame/internal/wallet"
)

// The hostile probes send, signed with the right key and secret, what a
// broken or hostile game could send and the game's own client never does: a
// negative, zero or over-int64 amount, a required member missing or null, a
// value of the wrong JSON type, another currency than the player's, a credit
// or refund that does not match its debit, a repeated transaction_id with
// another amount, a duplicate key. Each names the rule that decides what a
// correct wallet answers. Whatever the wallet answers, the balance read
// through /balance before and after must not move where the wallet should
// have refused; a wallet that moves it fails loudly, with the amount and a
// fix.
//
// What a correct wallet answers to a body that breaks api/wallet.v1.yaml (a
// malformed body) is HTTP 400 with the contract's error body (WERR-2,
// status = error and an error_code, INTERNAL_ERROR in the guide's examples).
// A probe also passes a refusal sent with another 4xx, or in HTTP 200 with
// status = error: the game reads both the same way (WERR-3), and neither
// moves money. It fails an acceptance, a 5xx (a transport failure the game
// retries, WERR-20, never the answer to a body) and any movement of the
// balance.

// fixValidate is the fix of a wallet that acts on a body the document
// refuses.
const fixValidate = "fix: validate every request body against api/wallet.v1.yaml before your handler " +
	"(oapi-codegen's strict server does not; docs/integrators.md shows the validator for each generator)"

// fixCurrency is the fix of a wallet that moves money in another currency
// than the account's.
const fixCurrency = "fix: refuse a movement whose currency is not the account's with CURRENCY_MISMATCH"

// maxInt64PlusOne is 2^63: one above the largest int64, so above every Cents
// value. A parser into float64 reads it as 9.223372036854776e18, one into
// uint64 as 2^63, one that wraps into int64 as a negative amount.
const maxInt64PlusOne = "9223372036854775808"

// otherCurrency is a currency code that is not the player's: XTS, the code
// ISO 4217 reserves for tests, which no account holds.
func otherCurrency(player string) string {
	if player == "XTS" {
		return "XXX"
	}
	return "XTS"
}

// field is one member of a request body: its key, and its value as written
// on the wire.
type field struct {
	key   string
	value string
}

// rawBody is a request body written member by member, in order, so that a
// probe can leave a member out, repeat one, or give it a value of another
// JSON type.
type rawBody []field

// bytes is the body as sent: a compact JSON object, members in order.
func (b rawBody) bytes() []byte {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, f := range b {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(mustJSON(f.key))
		buf.WriteByte(':')
		buf.WriteString(f.value)
	}
	buf.WriteByte('}')
	return buf.Bytes()
}

// set is a copy of b whose member key holds value, in place (appended when
// b has no such member).
func (b rawBody) set(key, value string) rawBody {
	out := append(rawBody(nil), b...)
	for i := range out {
		if out[i].key == key {
			out[i].value = value
			return out
		}
	}
	return append(out, field{key, value})
}

// drop is a copy of b without the member key.
func (b rawBody) drop(key string) rawBody {
	var out rawBody
	for _, f := range b {
		if f.key != key {
			out = append(out, f)
		}
	}
	return out
}

// repeat is a copy of b with one more member key, holding value, at the end:
// the body then holds key twice.
func (b rawBody) repeat(key, value string) rawBody {
	return append(append(rawBody(nil), b...), field{key, value})
}

func jsonString(s string) string { return string(mustJSON(s)) }
func jsonInt(n int64) string     { return strconv.FormatInt(n, 10) }

// envelopeRaw is the Envelope of a probe, in the order the game writes it.
func (r *runner) envelopeRaw() rawBody {
	b := rawBody{
		{"operator", jsonString(r.t.Operator)},
		{"timestamp", jsonInt(r.now().UnixMilli())},
		{"request_id", jsonString(r.id("probe"))},
		{"currency", jsonString(r.currency)},
	}
	if r.t.GameID != "" {
		b = append(b, field{"game_id", jsonString(r.t.GameID)})
	}
	return b
}

// betRaw is a valid /bet of the live session: an ordinary bet of amount.
func (r *runner) betRaw(tx, round string, amount int64) rawBody {
	return append(r.envelopeRaw(),
		field{"player_id", jsonString(r.player)},
		field{"token", jsonString(string(r.t.Token))},
		field{"amount", jsonInt(amount)},
		field{"transaction_id", jsonString(tx)},
		field{"round_id", jsonString(round)},
		field{"freebet_id", "null"},
	)
}

// winRaw is a valid /win of amount on the ordinary bet betTx.
func (r *runner) winRaw(tx, betTx, round string, amount int64) rawBody {
	return append(r.envelopeRaw(),
		field{"player_id", jsonString(r.player)},
		field{"token", jsonString(string(r.t.Token))},
		field{"amount", jsonInt(amount)},
		field{"transaction_id", jsonString(tx)},
		field{"bet_id", jsonString(betTx)},
		field{"round_id", jsonString(round)},
		field{"type", jsonString(string(wallet.WinTypeWin))},
		field{"freebet_id", "null"},
	)
}

// rollbackRaw is a valid /rollback of amount on the bet betTx.
func (r *runner) rollbackRaw(tx, betTx, round string, amount int64) rawBody {
	return append(r.envelopeRaw(),
		field{"player_id", jsonString(r.player)},
		field{"token", jsonString(string(r.t.Token))},
		field{"amount", jsonInt(amount)},
		field{"transaction_id", jsonString(tx)},
		field{"bet_id", jsonString(betTx)},
		field{"round_id", jsonString(round)},
		field{"reason", jsonString("wallet-check: hostile probe")},
	)
}

// post signs body with the configured key and secret and sends it to route.
func (r *runner) post(ctx context.Context, route string, body rawBody) rawAnswer {
	raw := body.bytes()
	return r.send(ctx, route, raw, r.bearer(), r.sign(raw))
}

// refused judges an answer that must be a refusal (see the top of this
// file); label names the request in the evidence, malformed says whether the
// body breaks the document (WERR-2 then asks 400). It reports whether the
// wallet refused.
func (v *verdict) refused(label string, a rawAnswer, rule string, malformed bool) bool {
	v.see("%s: %s", label, a)
	switch {
	case a.HTTPStatus == 0:
		v.fail("%s got no answer", label)
	case a.accepted() && malformed:
		v.fail("%s was accepted: %s asks a refusal (HTTP 400 with the contract's error body, WERR-2)", label, rule)
	case a.accepted():
		v.fail("%s was accepted: %s asks a refusal", label, rule)
	case a.HTTPStatus >= 500 && malformed:
		v.fail("%s got HTTP %d: a 5xx is a transport failure the game retries (WERR-20); refuse the body with 400 (WERR-2)", label, a.HTTPStatus)
	case a.HTTPStatus >= 500:
		v.fail("%s got HTTP %d: a 5xx is a transport failure the game retries; never send a decision as a 5xx (WERR-21)", label, a.HTTPStatus)
	case a.HTTPStatus >= 400:
		switch {
		case !a.JSON || a.Status != "error":
			v.see("refused, but the body is not the contract's error (WERR-5; see the malformed-body check)")
		case malformed && a.HTTPStatus != http.StatusBadRequest:
			v.see("refused (WERR-2 lists 400; the game reads any 4xx's body the same way)")
		}
		return true
	case a.HTTPStatus == http.StatusOK && a.Status == "error":
		if malformed {
			v.see("refused in HTTP 200 (WERR-2 lists 400; the game reads it the same way, WERR-3)")
		}
		return true
	default:
		v.fail("%s got HTTP %d without status = error: neither accepted nor refused (WERR-4)", label, a.HTTPStatus)
	}
	return false
}

// untouched fails the check when the balance moved, naming the amount, what
// moved it (on, e.g. "a negative bet"), the rule and the fix. It is judged
// before the answer, so that its problem leads the evidence.
func (v *verdict) untouched(b balances, on, rule, fix string) {
	switch {
	case !b.afterOK:
		v.fail("/balance after %s failed (%s)", on, b.afterEv)
	case b.after > b.before:
		v.fail("MONEY MOVED (%s): the wallet credited %d cents on %s; %s", rule, b.after-b.before, on, fix)
	case b.after < b.before:
		v.fail("MONEY MOVED (%s): the wallet debited %d cents on %s; %s", rule, b.before-b.after, on, fix)
	}
}

// seeBalances notes the balance around the calls.
func (v *verdict) seeBalances(b balances) {
	v.see("before %d, %s", b.before, b.afterEv)
}

// hostileSteps are the hostile probes, in the order they run. Each holds at
// most one stake debited, and settles it before it ends.
func (r *runner) hostileSteps() []step {
	s := r.o.Stake
	setAmount := func(v string) func(rawBody) rawBody {
		return func(b rawBody) rawBody { return b.set("amount", v) }
	}
	steps := []step{
		r.betProbe("GEN-6 WERR-2 BET-12", "negative bet refused", "a negative bet", "amount -"+jsonInt(s), setAmount(jsonInt(-s)), 0),
		{rules: "GEN-6", name: "bet of zero moves nothing", money: true, run: r.checkZeroBet},
		r.betProbe("GEN-6 WERR-2 BET-12", "bet above int64 refused", "a bet above int64", "amount 2^63", setAmount(maxInt64PlusOne), 0),
		r.betProbe("GEN-4 GEN-5 WERR-2", "bet amount as a string refused", `a bet of amount "`+jsonInt(s)+`"`, `amount "`+jsonInt(s)+`" (a string)`, setAmount(jsonString(jsonInt(s))), s),
		r.betProbe("GEN-4 GEN-5 WERR-2", "bet amount with a fraction refused", "a bet of amount "+jsonInt(s)+".5", "amount "+jsonInt(s)+".5", setAmount(jsonInt(s)+".5"), s),
		r.betProbe("ENV-9 WERR-2", "bet player_id as a number refused", "a bet whose player_id is a number", "player_id a number", func(b rawBody) rawBody {
			return b.set("player_id", numericPlayerID(r.player))
		}, s),
		r.betProbe("BET-4 WERR-2", "bet without freebet_id refused", "a bet without freebet_id", "no freebet_id member", func(b rawBody) rawBody {
			return b.drop("freebet_id")
		}, s),
		r.betProbe("ENV-15 WERR-2", "bet with amount null refused", "a bet of amount null", "amount null", setAmount("null"), 0),
		r.betProbe("ENV-11 ENV-12 WERR-2", "bet with transaction_id null refused", "a bet with transaction_id null", "transaction_id null", func(b rawBody) rawBody {
			return b.set("transaction_id", "null")
		}, 0),
		{rules: "WERR-13 WERR-1", name: "bet in another currency refused", money: true, run: r.checkBetCurrency},
		{rules: "GEN-2 WERR-2", name: "bet with a duplicate amount key never credits", money: true, run: r.checkDuplicateKeys},
		r.winProbe("GEN-6 WERR-2 WIN-19", "negative win refused", "a negative win", "amount -"+jsonInt(s), true, setAmount(jsonInt(-s))),
		r.winProbe("GEN-6 WERR-2 WIN-19", "win above int64 refused", "a win above int64", "amount 2^63", true, setAmount(maxInt64PlusOne)),
		r.winProbe("GEN-4 GEN-5 WERR-2", "win amount with a fraction refused", "a win of amount "+jsonInt(s)+".5", "amount "+jsonInt(s)+".5", true, setAmount(jsonInt(s)+".5")),
		r.winProbe("WIN-17 WERR-2", "win without freebet_id refused", "a win without freebet_id", "no freebet_id member", true, func(b rawBody) rawBody {
			return b.drop("freebet_id")
		}),
		r.winProbe("WERR-13", "win in another currency refused", "a win in "+otherCurrency(r.currency), "currency "+otherCurrency(r.currency), false, func(b rawBody) rawBody {
			return b.set("currency", jsonString(otherCurrency(r.currency)))
		}),
		{rules: "WIN-5 WIN-7 GEN-6", name: "win of zero credits nothing", money: true, run: r.checkZeroWin},
		{rules: "ENV-12 WERR-17", name: "win repeated with another amount credits once", money: true, run: r.checkDivergentWin},
		{rules: "WIN-10 RB-9", name: "win on a rolled-back bet refused", money: true, run: r.checkWinAfterRollback},
		r.rollbackProbe("GEN-6 WERR-2 RB-10", "negative rollback returns no more than the debit", "a negative rollback", "amount -"+jsonInt(s), true, setAmount(jsonInt(-s))),
		r.rollbackProbe("RB-10 AMB-12", "rollback of zero returns no more than the debit", "a rollback of zero", "amount 0", false, setAmount("0")),
		r.rollbackProbe("GEN-6 WERR-2 RB-10", "rollback above int64 returns no more than the debit", "a rollback above int64", "amount 2^63", true, setAmount(maxInt64PlusOne)),
	}
	return steps
}

// numericPlayerID is the player's id as a JSON number: the id itself when it
// is one, else 0.
func numericPlayerID(player string) string {
	if _, err := strconv.ParseInt(player, 10, 64); err == nil {
		return player
	}
	return "0"
}

// betProbe is a check that sends one /bet broken by mutate (a fresh
// transaction_id on a fresh round) and passes when the wallet refuses it and
// the balance does not move. Unless the wallet refused it, the bet is then
// rolled back with debited cents, the amount the body meant (0: none, and
// nothing is rolled back).
func (r *runner) betProbe(rules, name, on, what string, mutate func(rawBody) rawBody, debited int64) step {
	return step{rules: rules, name: name, money: true, run: func(ctx context.Context) (Result, string) {
		tx, round := r.id("bet"), r.id("round")
		var a rawAnswer
		bal, end, ev := r.around(ctx, func() {
			a = r.post(ctx, "/bet", mutate(r.betRaw(tx, round, r.o.Stake)))
		})
		if end != "" {
			return end, ev
		}
		var v verdict
		v.untouched(bal, on, firstRule(rules), fixValidate)
		v.refused("/bet with "+what, a, firstRule(rules), true)
		v.seeBalances(bal)
		if debited > 0 {
			r.undoUnlessRefused(ctx, &v, tx, round, debited, a)
		}
		return v.result()
	}}
}

// winProbe is a check that bets one stake, sends a /win on it changed by
// mutate (malformed: into a body the document refuses), passes when the wallet refuses the win and the balance does not
// move, then rolls the bet back.
func (r *runner) winProbe(rules, name, on, what string, malformed bool, mutate func(rawBody) rawBody) step {
	return step{rules: rules, name: name, money: true, run: func(ctx context.Context) (Result, string) {
		var v verdict
		b, _, end, ev := r.betStake(ctx, &v, "")
		if end != "" {
			return end, ev
		}
		var a rawAnswer
		bal, end, ev := r.around(ctx, func() {
			a = r.post(ctx, "/win", mutate(r.winRaw(r.id("win"), b.tx, b.round, b.amount)))
		})
		if end != "" {
			return end, ev
		}
		fix := fixValidate
		if !malformed {
			fix = fixCurrency
		}
		v.untouched(bal, on, firstRule(rules), fix)
		v.refused("/win with "+what, a, firstRule(rules), malformed)
		v.seeBalances(bal)
		r.settle(ctx, &v, b)
		return v.result()
	}}
}

// rollbackProbe is a check that bets one stake and sends a /rollback of it
// changed by mutate (malformed: into a body the document refuses). It passes when the wallet refuses the rollback and the
// balance does not move (then a matching rollback settles the bet), or when
// the wallet answers ok and returns exactly the stake (the debit's own
// amount, RB-9, AMB-12 reading B). Any other movement fails: a rollback never
// returns more than was taken (RB-10), nor takes anything.
func (r *runner) rollbackProbe(rules, name, on, what string, malformed bool, mutate func(rawBody) rawBody) step {
	return step{rules: rules, name: name, money: true, run: func(ctx context.Context) (Result, string) {
		var v verdict
		b, _, end, ev := r.betStake(ctx, &v, "")
		if end != "" {
			return end, ev
		}
		var a rawAnswer
		bal, end, ev := r.around(ctx, func() {
			a = r.post(ctx, "/rollback", mutate(r.rollbackRaw(r.id("rb"), b.tx, b.round, b.amount)))
		})
		if end != "" {
			return end, ev
		}
		label := "/rollback of the " + jsonInt(b.amount) + " bet with " + what
		if a.accepted() && bal.afterOK && bal.after-bal.before == b.amount {
			v.see("%s: %s; the debit's own amount was returned (RB-9, AMB-12 reading B)", label, a)
			v.seeBalances(bal)
			r.bets[b.tx].settled = true
			return v.result()
		}
		fix := fixValidate
		if !malformed {
			fix = "fix: revert the debit's own amount, or refuse a rollback whose amount is not the debit's (RB-9, RB-10)"
		}
		v.untouched(bal, on, firstRule(rules), fix)
		v.refused(label, a, firstRule(rules), malformed)
		v.seeBalances(bal)
		r.settle(ctx, &v, b)
		return v.result()
	}}
}

// checkZeroBet: a bet of 0 cents is valid Cents (GEN-6, minimum 0) and
// moves nothing, whether the wallet accepts it or refuses it.
func (r *runner) checkZeroBet(ctx context.Context) (Result, string) {
	tx, round := r.id("bet"), r.id("round")
	var a rawAnswer
	bal, end, ev := r.around(ctx, func() { a = r.post(ctx, "/bet", r.betRaw(tx, round, 0)) })
	if end != "" {
		return end, ev
	}
	var v verdict
	v.untouched(bal, "a bet of 0", "GEN-6", "a stake of 0 debits nothing")
	switch {
	case a.accepted():
		v.see("/bet of 0: %s (accepted)", a)
	case a.HTTPStatus >= 500 || a.HTTPStatus == 0:
		v.fail("/bet of 0: %s: answer a bet you do not take with a refusal, never a 5xx (WERR-21)", a)
	default:
		v.see("/bet of 0: %s (refused)", a)
	}
	v.seeBalances(bal)
	r.undoUnlessRefused(ctx, &v, tx, round, 0, a)
	return v.result()
}

// checkBetCurrency: a bet in a currency that is not the player's is refused
// CURRENCY_MISMATCH (WERR-13, a final code; in HTTP 200, WERR-1, or a 4xx
// the game reads the same way, AMB-1), and debits nothing.
func (r *runner) checkBetCurrency(ctx context.Context) (Result, string) {
	other := otherCurrency(r.currency)
	tx, round := r.id("bet"), r.id("round")
	var a rawAnswer
	bal, end, ev := r.around(ctx, func() {
		a = r.post(ctx, "/bet", r.betRaw(tx, round, r.o.Stake).set("currency", jsonString(other)))
	})
	if end != "" {
		return end, ev
	}
	var v verdict
	v.untouched(bal, "a bet in "+other+", a currency the player does not hold", "WERR-13", fixCurrency)
	if v.refused("/bet in "+other+" (the player's is "+r.currency+")", a, "WERR-13", false) && a.ErrorCode != wallet.CodeCurrencyMismatch {
		v.fail("refused with %s: WERR-13 asks CURRENCY_MISMATCH, a final code (another is retried 20 times, WERR-19)", printable(a.ErrorCode))
	}
	v.seeBalances(bal)
	r.undoUnlessRefused(ctx, &v, tx, round, r.o.Stake, a)
	return v.result()
}

// checkDuplicateKeys decides what a wallet does with a body holding the key
// amount twice, once the stake and once its negative, in both orders. JSON
// leaves the meaning of a duplicate key open (RFC 8259, section 4: parsers
// differ, some keep the first, most the last), so a validator and a handler
// that parse differently can disagree on the amount. A correct wallet
// refuses such a body as malformed (HTTP 400, WERR-2); one that reads one of
// the values is tolerated when it debits exactly the stake, since then its
// validation and its ledger read the same key. It fails when the balance
// goes up or moves by anything but the stake: the negative value reached the
// ledger.
func (r *runner) checkDuplicateKeys(ctx context.Context) (Result, string) {
	s := r.o.Stake
	var v verdict
	for _, order := range []struct{ first, last int64 }{{s, -s}, {-s, s}} {
		tx, round := r.id("bet"), r.id("round")
		what := fmt.Sprintf(`"amount":%d then "amount":%d`, order.first, order.last)
		var a rawAnswer
		bal, end, ev := r.around(ctx, func() {
			a = r.post(ctx, "/bet", r.betRaw(tx, round, order.first).repeat("amount", jsonInt(order.last)))
		})
		if end != "" {
			return end, ev
		}
		if a.accepted() && bal.afterOK && bal.before-bal.after == s {
			v.see("/bet with %s: %s; debited %d: tolerated (refuse a body with a duplicate key instead)", what, a, s)
			r.undoUnlessRefused(ctx, &v, tx, round, s, a)
			continue
		}
		v.untouched(bal, "a bet with "+what, "GEN-2 WERR-2",
			"refuse a body with a duplicate key, or let the validator and the handler read the body once, with one parser")
		if a.accepted() {
			v.see("/bet with %s: %s", what, a)
			if bal.afterOK && bal.after == bal.before {
				v.see("accepted and nothing debited")
			}
		} else {
			v.refused("/bet with "+what, a, "WERR-2", true)
		}
		v.seeBalances(bal)
		r.undoUnlessRefused(ctx, &v, tx, round, s, a)
	}
	return v.result()
}

// checkZeroWin: a /win of 0 with type zero_win closes a lost bet and credits
// nothing (WIN-5); the operator handles every type (WIN-7), but a refusal is
// reported, not failed, since the game sends zero_win only when the
// capability is on (WIN-8). The bet is rolled back when it stays open; when
// the zero_win closed it, its stake is lost, and a second bet won at twice
// the stake gives it back.
func (r *runner) checkZeroWin(ctx context.Context) (Result, string) {
	var v verdict
	b, _, end, ev := r.betStake(ctx, &v, "")
	if end != "" {
		return end, ev
	}
	var a rawAnswer
	bal, end, ev := r.around(ctx, func() {
		a = r.post(ctx, "/win", r.winRaw(r.id("win"), b.tx, b.round, 0).set("type", jsonString(string(wallet.WinTypeZeroWin))))
	})
	if end != "" {
		return end, ev
	}
	v.untouched(bal, "a win of 0", "WIN-5", "a zero_win credits nothing")
	switch {
	case a.accepted():
		v.see("/win of 0, type zero_win: %s (WIN-5)", a)
		r.bets[b.tx].settled = true
	case a.HTTPStatus >= 500 || a.HTTPStatus == 0:
		v.fail("/win of 0, type zero_win: %s: a 5xx is retried as a transport failure (WERR-21)", a)
	default:
		v.see("/win of 0, type zero_win: %s (refused: WIN-7 asks every type handled; needed once the zero_win capability is on, WIN-8)", a)
	}
	v.seeBalances(bal)
	if !r.bets[b.tx].settled {
		r.settle(ctx, &v, b)
		return v.result()
	}
	// The stake went with the lost round: win it back.
	var back verdict
	b2, _, end, ev := r.betStake(ctx, &back, " to win the stake back")
	if end != "" {
		v.see("the stake was not won back: %s", ev)
		return v.result()
	}
	res := r.win(ctx, r.id("win"), b2.tx, b2.round, 2*b2.amount)
	v.see("bet %d, win %d to win the stake back: %s", b2.amount, 2*b2.amount, describe(res))
	return v.result()
}

// checkDivergentWin: a win credited once, then its transaction_id again with
// twice the amount, credits nothing more (ENV-12: transaction_id is the
// idempotency key). The refusal the contract names for a divergent body is
// DUPLICATE_TRANSACTION (WERR-17); an ok that repeats the first answer moves
// nothing and passes too.
func (r *runner) checkDivergentWin(ctx context.Context) (Result, string) {
	var v verdict
	b, _, end, ev := r.betStake(ctx, &v, "")
	if end != "" {
		return end, ev
	}
	w := r.id("win")
	first := r.win(ctx, w, b.tx, b.round, b.amount)
	v.see("win %d: %s", b.amount, describe(first))
	if first.Outcome != wallet.Success {
		r.settle(ctx, &v, b)
		return Skip, "the win this check builds on was not credited (the win checks judge that) | " + joinEvidence(v.evidence)
	}
	var a rawAnswer
	bal, end, ev := r.around(ctx, func() {
		a = r.post(ctx, "/win", r.winRaw(w, b.tx, b.round, 2*b.amount))
	})
	if end != "" {
		return end, ev
	}
	v.untouched(bal, "a win repeating a credited transaction_id with another amount", "ENV-12",
		"look the transaction_id up before crediting, and refuse another content under it with DUPLICATE_TRANSACTION")
	label := fmt.Sprintf("same transaction_id, amount %d instead of %d", 2*b.amount, b.amount)
	switch {
	case a.accepted():
		v.see("%s: %s (answered as a retry; DUPLICATE_TRANSACTION is the contract's refusal, WERR-17)", label, a)
	case a.ErrorCode == wallet.CodeDuplicateTransaction:
		v.see("%s: %s", label, a)
	default:
		v.refused(label, a, "WERR-17", false)
	}
	v.seeBalances(bal)
	return v.result()
}

// checkWinAfterRollback: a win on a debit that was rolled back credits
// nothing. The debit is undone, so no debit stands under bet_id: the wallet
// refuses it as an orphan (WIN-10, 404 BET_NOT_FOUND, or another refusal),
// never pays a stake it already returned (RB-9).
func (r *runner) checkWinAfterRollback(ctx context.Context) (Result, string) {
	var v verdict
	b, _, end, ev := r.betStake(ctx, &v, "")
	if end != "" {
		return end, ev
	}
	rb := r.rollback(ctx, r.id("rb"), b.tx, b.round, b.amount, "wallet-check: before a win")
	v.see("rollback: %s", describe(rb))
	if rb.Outcome != wallet.Success {
		return Skip, "the rollback this check builds on was not accepted (the rollback checks judge that) | " + joinEvidence(v.evidence)
	}
	var a rawAnswer
	bal, end, ev := r.around(ctx, func() {
		a = r.post(ctx, "/win", r.winRaw(r.id("win"), b.tx, b.round, 2*b.amount))
	})
	if end != "" {
		return end, ev
	}
	v.untouched(bal, "a win on a rolled-back bet", "WIN-10",
		"credit a win only on a debit that stands: a rolled-back one does not")
	v.refused(fmt.Sprintf("win %d on the rolled-back bet", 2*b.amount), a, "WIN-10", false)
	v.seeBalances(bal)
	return v.result()
}

// settle rolls back a bet a probe placed, with its own amount, and notes the
// outcome; cleanup retries it when this fails.
func (r *runner) settle(ctx context.Context, v *verdict, b openBet) {
	res := r.rollback(ctx, r.id("rb"), b.tx, b.round, b.amount, "wallet-check: after a probe")
	v.see("bet rolled back: %s", describe(res))
}

// undoUnlessRefused rolls back, with the amount it meant, a bet a raw probe
// sent, unless the wallet refused it: as with the client's bets, anything but
// a refusal may have debited (a 5xx, or no answer, included). A rollback
// that fails is retried at cleanup.
func (r *runner) undoUnlessRefused(ctx context.Context, v *verdict, tx, round string, amount int64, a rawAnswer) {
	refused := a.HTTPStatus >= 400 && a.HTTPStatus < 500 || a.HTTPStatus == http.StatusOK && a.Status == "error"
	if refused {
		return
	}
	r.track(tx, round, amount)
	res := r.rollback(ctx, r.id("rb"), tx, round, amount, "wallet-check: after a probe")
	v.see("rolled back: %s", describe(res))
}

// track records a debit a raw probe caused, for cleanup.
func (r *runner) track(tx, round string, amount int64) {
	if _, seen := r.bets[tx]; seen {
		return
	}
	r.bets[tx] = &betRec{tx: tx, round: round, amount: amount}
	r.order = append(r.order, tx)
}

// firstRule is the first ID of a space-separated list.
func firstRule(rules string) string {
	first, _, _ := strings.Cut(rules, " ")
	return first
}

func joinEvidence(parts []string) string { return strings.Join(parts, "; ") }
