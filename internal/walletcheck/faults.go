package walletcheck

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/crashstudio/crashgame/internal/wallet"
)

// The fault probes play the mistakes operators' wallets really make, that a
// script sending one call at a time, replaying at once, holding one player
// and signing in full never meets (issue 50): bets that race for the same
// balance, a retry that comes back minutes later, a second settlement of one
// bet under a fresh transaction_id, a signature shorter than an HMAC, a
// movement naming another player than its bet's, two ids that differ only in
// case, and a freebet grant spent twice. Where the contract does not say what
// the wallet answers (docs/ambiguities.md, WC-1 to WC-6), a probe judges by
// the money that moved, read through /balance, not by the status code; its
// failure line leads with MONEY MOVED, the amount and the fix.

// Fixes, written into the failure line of each probe.
const (
	fixConcurrent = "fix: decide and debit in one atomic step per player (a row lock, SELECT ... FOR UPDATE, " +
		"or UPDATE ... SET balance = balance - stake WHERE balance >= stake and check the rows changed)"
	fixMemory = "fix: keep every transaction_id with its first answer at least as long as the game may retry it " +
		"(20 attempts within about 8 minutes, longer while a movement is parked: docs/operators.md, \"How long to keep transaction ids\")"
	fixSettleOnce = "fix: settle each debit once: a /win or /rollback naming a bet_id already won or rolled back " +
		"moves nothing (refuse it; a second rollback may answer ok without crediting, RB-13)"
	fixSignature = "fix: decode X-Signature as hex, refuse any length but 32 bytes, and compare the whole HMAC " +
		"with hmac.Equal, never the part the request sent"
	fixPlayer = "fix: look the debit up by (player_id, bet_id): another player holds no debit under that bet_id, " +
		"so a /win naming them is an orphan (404 BET_NOT_FOUND) and a /rollback moves nothing; refuse a /bet whose token is not player_id's session"
	fixCase = "fix: compare transaction_id byte for byte: a case-insensitive collation (MySQL's default " +
		"utf8mb4_0900_ai_ci, SQL Server's *_CI_*) merges two movements into one; use a binary collation or key"
	fixFreebet = "fix: mark a grant spent when its /bet is accepted and refuse a /bet naming a spent grant " +
		"(its rollback opens it again)"
)

// concurrentBets bets of one stake each race for a balance that covers
// coveredBets of them (and half a stake more).
const (
	concurrentBets = 10
	coveredBets    = 3
)

// faultSteps are the fault probes, in the order they run. Each holds its
// own bets, settles them before it ends, and gives back what a faulty wallet
// moved (restore), so that the balance ends where it started.
func (r *runner) faultSteps() []step {
	settle := func(first, second string) step {
		return step{rules: "WC-3 " + settleRules[second], name: "second settlement: " + first + " then " + second,
			money: true, fix: fixSettleOnce, run: func(ctx context.Context) (Result, string) {
				return r.checkSecondSettlement(ctx, first, second)
			}}
	}
	return []step{
		{rules: "WC-1 GEN-6 BET-2", name: "concurrent bets near the balance", money: true, fix: fixConcurrent, run: r.checkConcurrentBets},
		{rules: "WC-2 ENV-12 BET-8", name: "retries after a delay move nothing", money: true, fix: fixMemory, run: r.checkDelayedRetries},
		settle("win", "win"),
		settle("rollback", "rollback"),
		settle("win", "rollback"),
		settle("rollback", "win"),
		{rules: "AUTH-1 AUTH-9 AUTH-15", name: "short, truncated and wrong-length signatures refused", fix: fixSignature, run: r.checkSignatureLengths},
		{rules: "WC-4 ENV-12 WIN-10 RB-13", name: "movements naming another player move nothing", money: true, fix: fixPlayer, run: r.checkWrongPlayer},
		{rules: "WC-5 ENV-11 ENV-12", name: "ids differing only in case are two transactions", money: true, fix: fixCase, run: r.checkCaseIDs},
		{rules: "WC-6 BET-6 FB-21", name: "freebet grant used twice", money: true, fix: fixFreebet, run: r.checkFreebetTwice},
	}
}

// settleRules are the catalogue rules a second settlement touches, by its
// kind: a win needs a debit that stands (WIN-10), a rollback reverts the
// debit's own amount, once (RB-9).
var settleRules = map[string]string{"win": "WIN-10", "rollback": "RB-9"}

// restore gives back what a faulty wallet moved on the balance of as, so
// that the run ends where it started: a surplus goes with a bet left lost,
// a shortfall comes back with a bet won at twice its stake. It reads the
// balance, compares it with want, and notes what it did.
func (r *runner) restore(ctx context.Context, v *verdict, as who, want int64) {
	w := r.resolve(as)
	got, ev, ok := r.balanceOf(ctx, w.token)
	if !ok || got == want {
		if !ok {
			v.see("could not read the balance to give back what moved: %s", ev)
		}
		return
	}
	d := got - want
	tx, round := r.id("restore"), r.id("round")
	if d > 0 {
		res := r.betAs(ctx, as, tx, round, d, nil)
		if res.Outcome == wallet.Success {
			r.bets[tx].settled = true // a lost round: the surplus stays with the house
		}
		v.see("gave back %d with a bet left lost: %s", d, describe(res))
		return
	}
	res := r.betAs(ctx, as, tx, round, -d, nil)
	if res.Outcome != wallet.Success {
		v.see("could not give back %d: bet %s", -d, describe(res))
		return
	}
	win := r.winAs(ctx, as, r.id("win"), tx, round, -2*d)
	v.see("gave back %d with a bet of %d won at %d: %s", -d, -d, -2*d, describe(win))
}

// moneyMoved fails the check when the balance is not want, naming the rule,
// what moved it and the fix.
func (v *verdict) moneyMoved(got, want int64, rule, on string) bool {
	switch {
	case got > want:
		v.fail("MONEY MOVED (%s): the wallet credited %d cents on %s", rule, got-want, on)
	case got < want:
		v.fail("MONEY MOVED (%s): the wallet debited %d cents on %s", rule, want-got, on)
	default:
		return false
	}
	return true
}

// checkConcurrentBets: ten bets of one stake sent at once, on a balance that
// covers three of them (a first bet brings it there), must never take the
// balance below zero, and the balance after them must be the balance before
// less the stakes accepted (WC-1; GEN-6: Cents has minimum 0; BET-2: a bet
// exists only if it was accepted). Every bet is rolled back after.
func (r *runner) checkConcurrentBets(ctx context.Context) (Result, string) {
	var v verdict
	s := r.o.Stake
	bal0, ev, ok := r.balanceNow(ctx)
	if !ok {
		return Fail, ev
	}
	v.see("before %d", bal0)
	room := coveredBets*s + s/2
	var park *openBet
	if amount := bal0 - room; amount > 0 {
		park = &openBet{tx: r.id("park"), round: r.id("round"), amount: amount}
		res := r.bet(ctx, park.tx, park.round, park.amount, nil)
		v.see("bet %d to leave %d: %s", amount, room, describe(res))
		if res.Outcome != wallet.Success {
			return Skip, "the bet that brings the balance near three stakes was not accepted (a bet limit?) | " + joinEvidence(v.evidence)
		}
	}
	unpark := func() {
		if park != nil {
			r.settle(ctx, &v, *park)
		}
	}
	bal1, ev, ok := r.balanceNow(ctx)
	if !ok {
		unpark()
		return Fail, ev
	}

	type shot struct {
		tx, round string
		res       wallet.Result
	}
	shots := make([]shot, concurrentBets)
	for i := range shots {
		shots[i].tx, shots[i].round = r.id(fmt.Sprintf("conc%d", i+1)), r.id("round")
	}
	gate := make(chan struct{})
	var wg sync.WaitGroup
	for i := range shots {
		wg.Add(1)
		go func(sh *shot) {
			defer wg.Done()
			<-gate
			sh.res, _ = r.client.Bet(ctx, wallet.BetCall{PlayerID: r.player, Token: string(r.t.Token), Currency: r.currency,
				GameID: r.t.GameID, Amount: s, TransactionID: sh.tx, RoundID: sh.round})
		}(&shots[i])
	}
	close(gate) // all at once
	wg.Wait()

	accepted, unknown, lowest := 0, 0, bal1
	answers := make([]string, 0, len(shots))
	for _, sh := range shots {
		r.trackResult(who{}, sh.tx, sh.round, s, sh.res)
		answers = append(answers, describe(sh.res))
		switch {
		case sh.res.Outcome == wallet.Success:
			accepted++
		case sh.res.Outcome != wallet.Refused:
			unknown++
		}
		if sh.res.HasBalance {
			lowest = min(lowest, sh.res.Balance)
		}
	}
	bal2, ev2, ok2 := r.balanceNow(ctx)
	v.see("%d bets of %d at once on %d: %d accepted, %d refused, %d unanswered (%s); %s",
		concurrentBets, s, bal1, accepted, concurrentBets-accepted-unknown, unknown, strings.Join(answers, ", "), ev2)
	on := fmt.Sprintf("%d concurrent bets of %d on a balance of %d", concurrentBets, s, bal1)
	switch {
	case !ok2:
		v.fail("/balance after the bets failed")
	case bal2 < 0 || lowest < 0:
		v.fail("MONEY MOVED (WC-1): the balance went to %d on %s (%d accepted where %d fit): the check of the funds and the debit are not atomic",
			min(bal2, lowest), on, accepted, coveredBets)
	case accepted > coveredBets:
		v.fail("MONEY MOVED (WC-1): %d bets accepted on %s, where %d fit", accepted, on, coveredBets)
	case unknown == 0:
		v.moneyMoved(bal2, bal1-int64(accepted)*s, "WC-1", on+fmt.Sprintf(" beyond the %d stakes accepted", accepted))
	case bal2 > bal1-int64(accepted)*s || bal2 < bal1-int64(accepted+unknown)*s || (bal1-bal2)%s != 0:
		v.fail("MONEY MOVED (WC-1): the balance moved by %d on %s, not a whole number of the stakes accepted or unanswered", bal2-bal1, on)
	}
	if accepted < coveredBets && unknown == 0 {
		v.see("fewer bets accepted than fit: allowed, the game refuses those to the player")
	}
	for _, sh := range shots {
		if b := r.bets[sh.tx]; b != nil && !b.settled {
			r.rollback(ctx, r.id("rb"), sh.tx, sh.round, s, "wallet-check: after concurrent bets")
		}
	}
	unpark()
	r.restore(ctx, &v, who{}, bal0)
	return v.result()
}

// checkDelayedRetries: a bet left open, a win and a rollback, each sent
// again identically after Options.RetryDelay (the game retries a movement for
// about 8 minutes), get an ok answer and move nothing (WC-2, ENV-12, BET-8).
func (r *runner) checkDelayedRetries(ctx context.Context) (Result, string) {
	var v verdict
	s := r.o.Stake
	open, _, end, ev := r.betStake(ctx, &v, " (left open)")
	if end != "" {
		return end, ev
	}
	won, _, end, ev := r.betStake(ctx, &v, " (to win)")
	if end != "" {
		return end, ev
	}
	winTx := r.id("win")
	if res := r.win(ctx, winTx, won.tx, won.round, s); res.Outcome != wallet.Success {
		return Skip, "the win this check retries was not credited (the win checks judge that): " + describe(res)
	}
	undone, _, end, ev := r.betStake(ctx, &v, " (to roll back)")
	if end != "" {
		return end, ev
	}
	rbTx := r.id("rb")
	if res := r.rollback(ctx, rbTx, undone.tx, undone.round, s, "wallet-check: before a delayed retry"); res.Outcome != wallet.Success {
		return Skip, "the rollback this check retries was not accepted (the rollback checks judge that): " + describe(res)
	}
	before, ev, ok := r.balanceNow(ctx)
	if !ok {
		return Fail, ev
	}
	if err := r.o.Sleep(ctx, r.o.RetryDelay); err != nil {
		r.settle(context.WithoutCancel(ctx), &v, open)
		return Skip, "interrupted while waiting before the retries"
	}
	v.see("before the retries %d, after waiting %s", before, r.o.RetryDelay)
	retries := []struct {
		label string
		res   wallet.Result
	}{
		{"/bet", r.bet(ctx, open.tx, open.round, s, nil)},
		{"/win", r.win(ctx, winTx, won.tx, won.round, s)},
		{"/rollback", r.rollback(ctx, rbTx, undone.tx, undone.round, s, "wallet-check: before a delayed retry")},
	}
	after, afterEv, afterOK := r.balanceNow(ctx)
	for _, rt := range retries {
		v.see("%s again: %s", rt.label, describe(rt.res))
	}
	v.see("%s", afterEv)
	if !afterOK {
		v.fail("/balance after the retries failed")
	} else if v.moneyMoved(after, before, "WC-2", fmt.Sprintf("identical retries sent %s later: the wallet forgot their transaction_id", r.o.RetryDelay)) {
		r.restore(ctx, &v, who{}, before)
	}
	for _, rt := range retries {
		if rt.res.Outcome != wallet.Success {
			v.fail("%s retried after %s was not answered ok: BET-8 asks the first answer again", rt.label, r.o.RetryDelay)
		}
	}
	r.settle(ctx, &v, open)
	return v.result()
}

// checkSecondSettlement: a bet settled by a win or a rollback, then settled
// again under a fresh transaction_id, moves no money the second time (WC-3):
// a debit is won or rolled back once.
func (r *runner) checkSecondSettlement(ctx context.Context, first, second string) (Result, string) {
	var v verdict
	b, _, end, ev := r.betStake(ctx, &v, "")
	if end != "" {
		return end, ev
	}
	settleOnce := func(kind string) wallet.Result {
		if kind == "win" {
			return r.win(ctx, r.id("win"), b.tx, b.round, b.amount)
		}
		return r.rollback(ctx, r.id("rb"), b.tx, b.round, b.amount, "wallet-check: settlement")
	}
	res := settleOnce(first)
	v.see("%s of %d: %s", first, b.amount, describe(res))
	if res.Outcome != wallet.Success {
		r.settle(ctx, &v, b)
		return Skip, "the first settlement was not accepted (the " + first + " checks judge that) | " + joinEvidence(v.evidence)
	}
	before, ev, ok := r.balanceNow(ctx)
	if !ok {
		return Fail, ev
	}
	again := settleOnce(second)
	after, afterEv, afterOK := r.balanceNow(ctx)
	v.see("%s of %d under a fresh transaction_id: %s; before %d, %s", second, b.amount, describe(again), before, afterEv)
	switch {
	case !afterOK:
		v.fail("/balance after the second settlement failed")
	case v.moneyMoved(after, before, "WC-3", "a "+second+" of a bet already settled by a "+first):
		r.restore(ctx, &v, who{}, before)
	}
	switch {
	case again.HTTPStatus == 0 || again.HTTPStatus >= 500:
		v.fail("the second settlement got %s: answer it with a refusal, never a 5xx (WERR-21)", describe(again))
	case again.Outcome == wallet.Success && second == "rollback" && first == "rollback":
		v.see("answered ok without crediting (RB-13: nothing left to undo)")
	case again.Outcome == wallet.Success:
		v.see("answered ok, yet nothing moved")
	}
	return v.result()
}

// checkSignatureLengths: /balance of the live session signed with the right
// signature cut to 1, 16 and 31.5 bytes, with one byte more, and with one
// wrong byte, is refused 401 INVALID_SIGNATURE (AUTH-1: the signature is the
// whole HMAC; AUTH-9, AUTH-15). A wallet that compares only the bytes sent
// accepts the cut ones, and a 1-byte signature is then forged in at most 256
// tries. Then a /bet signed with 1 byte must move nothing.
func (r *runner) checkSignatureLengths(ctx context.Context) (Result, string) {
	var v verdict
	forms := []struct {
		label string
		cut   func(full string) string
	}{
		{"its first byte (2 hex digits)", func(f string) string { return f[:2] }},
		{"its first 16 bytes", func(f string) string { return f[:32] }},
		{"63 of its 64 hex digits", func(f string) string { return f[:63] }},
		{"one byte more", func(f string) string { return f + "00" }},
		{"one byte, not its first", func(f string) string { return flipByte(f[:2]) }},
	}
	accepted := 0
	for _, f := range forms {
		body := r.liveBody(0)
		a := r.probe(ctx, body, r.bearer(), f.cut(r.sign(body)))
		label := "/balance signed with " + f.label
		if ok, note := signatureRefused(a, "AUTH-15", ""); !ok {
			v.fail("%s: %s%s", label, a, note)
			if a.accepted() {
				accepted++
			}
			continue
		}
		v.see("%s: %s", label, a)
	}
	if accepted > 0 {
		v.fail("%d short or long signature(s) ACCEPTED: a 1-byte signature is forged in at most 256 tries", accepted)
	}
	if r.noMoney != "" || r.player == "" {
		v.see("the signed /bet is skipped: %s", r.noMoney)
		return v.result()
	}
	tx, round := r.id("bet"), r.id("round")
	var a rawAnswer
	bal, end, ev := r.around(ctx, func() {
		raw := r.betRaw(tx, round, r.o.Stake).bytes()
		a = r.send(ctx, "/bet", raw, r.bearer(), r.sign(raw)[:2])
	})
	if end != "" {
		return end, ev
	}
	v.untouched(bal, "a /bet signed with 1 byte", "AUTH-15", fixSignature)
	if ok, note := signatureRefused(a, "AUTH-15", ""); !ok {
		v.fail("/bet signed with its first byte: %s%s", a, note)
	} else {
		v.see("/bet signed with its first byte: %s", a)
	}
	v.seeBalances(bal)
	r.undoUnlessRefused(ctx, &v, tx, round, r.o.Stake, a)
	return v.result()
}

// flipByte is a 2-digit hex byte other than b.
func flipByte(b string) string {
	if b == "00" {
		return "01"
	}
	return "00"
}

// secondPlayer resolves the second test player's session, when a second
// token was given: ok is false when none was, and end, when set, ends the
// check.
func (r *runner) secondPlayer(ctx context.Context) (w who, bal int64, ok bool, end string) {
	if r.t.SecondToken == "" {
		return who{}, 0, false, ""
	}
	res, _ := r.client.Balance(ctx, wallet.BalanceCall{Token: string(r.t.SecondToken), Currency: r.currency, GameID: r.t.GameID})
	switch {
	case res.Outcome != wallet.Success:
		return who{}, 0, false, "the second token did not resolve on /balance: " + describe(res)
	case res.PlayerID == r.player:
		return who{}, 0, false, "the second token is a session of the first player, not of a second one"
	case res.Currency != "" && res.Currency != r.currency:
		return who{}, 0, false, "the second player's currency " + printable(res.Currency) + " is not the first player's " + r.currency
	}
	return who{player: res.PlayerID, token: string(r.t.SecondToken)}, res.Balance, true, ""
}

// checkWrongPlayer: a bet of the first player, then a /win and a /rollback
// that name another player on it (with that player's token, and with the
// bet's token), and a /bet naming another player with the first player's
// token: none may move either player's balance (WC-4; ENV-12: a movement is
// keyed by (player_id, transaction_id), so the other player holds no debit
// under bet_id, WIN-10, RB-13). The other player is the second test player
// (--second-token), else an id the operator never issued.
func (r *runner) checkWrongPlayer(ctx context.Context) (Result, string) {
	var v verdict
	other, otherBal, second, end := r.secondPlayer(ctx)
	if end != "" {
		return Fail, end + "; pass a live token of another funded test player in the same currency"
	}
	if !second {
		other = who{player: r.rep.RunID + "-nobody", token: string(r.t.Token)}
		v.see("no second player (--second-token): naming %s, a player never issued; only the first player's balance is watched", other.player)
	}
	b, bal0, end2, ev := r.betStake(ctx, &v, " by the first player")
	if end2 != "" {
		return end2, ev
	}
	own := who{player: other.player, token: string(r.t.Token)} // the other player named, the bet's token carried
	wrongBet := r.id("bet")
	calls := []struct {
		label string
		call  func() wallet.Result
	}{
		{"/win of " + jsonInt(2*b.amount) + " naming the other player, with their token", func() wallet.Result {
			return r.winAs(ctx, other, r.id("win"), b.tx, b.round, 2*b.amount)
		}},
		{"/win of " + jsonInt(2*b.amount) + " naming the other player, with the bet's token", func() wallet.Result {
			return r.winAs(ctx, own, r.id("win"), b.tx, b.round, 2*b.amount)
		}},
		{"/rollback of the bet naming the other player", func() wallet.Result {
			return r.rollbackAs(ctx, other, r.id("rb"), b.tx, b.round, b.amount, "wallet-check: wrong player")
		}},
		{"/bet of " + jsonInt(b.amount) + " naming the other player, with the first player's token", func() wallet.Result {
			return r.betAs(ctx, own, wrongBet, r.id("round"), b.amount, nil)
		}},
	}
	for _, c := range calls {
		before, ev, ok := r.balanceNow(ctx)
		if !ok {
			return Fail, ev
		}
		res := c.call()
		after, afterEv, afterOK := r.balanceNow(ctx)
		line := fmt.Sprintf("%s: %s; first player %d, %s", c.label, describe(res), before, afterEv)
		if !afterOK {
			v.fail("/balance of the first player after %s failed", c.label)
		}
		moved := afterOK && v.moneyMoved(after, before, "WC-4", c.label+" (the first player)")
		if second {
			otherNow, otherEv, otherOK := r.balanceOf(ctx, other.token)
			line += "; other player " + otherEv
			if !otherOK {
				v.fail("/balance of the other player failed")
			} else if v.moneyMoved(otherNow, otherBal, "WC-4", c.label+" (the other player)") {
				r.restore(ctx, &v, other, otherBal)
			}
		}
		v.see("%s", line)
		if moved {
			if rec := r.bets[wrongBet]; rec != nil {
				rec.settled = true // restore gives back what it took: cleanup must not undo it again
			}
			r.restore(ctx, &v, who{}, before)
		}
		if res.HTTPStatus >= 500 {
			v.fail("%s got HTTP %d: answer a movement you do not take with a refusal, never a 5xx (WERR-21)", c.label, res.HTTPStatus)
		}
	}
	r.settle(ctx, &v, b)
	r.restore(ctx, &v, who{}, bal0)
	return v.result()
}

// checkCaseIDs: two bets of one round and amount whose transaction_ids
// differ only in case are two movements (two debits) or the second is
// refused; a wallet that answers both ok and debits once has merged them
// (WC-5; ENV-11, ENV-12: transaction_id is the key, compared as written).
func (r *runner) checkCaseIDs(ctx context.Context) (Result, string) {
	var v verdict
	s := r.o.Stake
	lower, round := r.id("case"), r.id("round")
	upper := strings.ToUpper(lower)
	var first, second wallet.Result
	bal, end, ev := r.around(ctx, func() {
		first = r.bet(ctx, lower, round, s, nil)
		second = r.bet(ctx, upper, round, s, nil)
	})
	if end != "" {
		return end, ev
	}
	v.see("before %d; bet %d as %s: %s; the same as %s: %s; %s", bal.before, s, lower, describe(first), upper, describe(second), bal.afterEv)
	switch {
	case first.Outcome != wallet.Success:
		return Skip, "the first bet was not accepted (the bet checks judge that) | " + joinEvidence(v.evidence)
	case !bal.afterOK:
		v.fail("/balance after the bets failed")
	case second.Outcome == wallet.Success && bal.after == bal.before-s:
		v.fail("MONEY MOVED (WC-5): two bets whose transaction_ids differ only in case were answered ok and debited once: " +
			"the game holds two bets where the wallet holds one, and pays both")
	case second.Outcome == wallet.Success:
		v.moneyMoved(bal.after, bal.before-2*s, "WC-5", "two bets of "+jsonInt(s))
	default:
		v.moneyMoved(bal.after, bal.before-s, "WC-5", "a bet and a refused one")
		v.see("the second refused (allowed)")
	}
	for _, tx := range []string{lower, upper} {
		if b := r.bets[tx]; b != nil && !b.settled {
			res := r.rollback(ctx, r.id("rb"), tx, round, s, "wallet-check: case of ids")
			v.see("rollback of %s: %s", tx, describe(res))
		}
	}
	if bal.afterOK {
		r.restore(ctx, &v, who{}, bal.before)
	}
	return v.result()
}

// checkFreebetTwice: a freebet grant spent by an accepted /bet is spent: a
// second /bet naming it under a fresh transaction_id must not debit (BET-6)
// nor let its win be credited (WC-6: the operator would fund two rounds on
// one grant; FB-21). Both bets are rolled back after, which opens the grant
// again.
func (r *runner) checkFreebetTwice(ctx context.Context) (Result, string) {
	var v verdict
	id, amount := r.t.FreebetID, r.t.FreebetAmount
	if id == "" && len(r.grants) > 0 {
		id, amount = r.grants[0].id, r.grants[0].amount
	}
	if id == "" {
		return Skip, "no freebet grant: grant the test player one, or pass --freebet-id"
	}
	if amount <= 0 {
		amount = r.o.Stake
	}
	bal0, ev, ok := r.balanceNow(ctx)
	if !ok {
		return Fail, ev
	}
	firstTx, secondTx := r.id("bet"), r.id("bet")
	round1, round2 := r.id("round"), r.id("round")
	first := r.bet(ctx, firstTx, round1, amount, &id)
	v.see("before %d; freebet bet of %d: %s", bal0, amount, describe(first))
	if first.Outcome != wallet.Success {
		return Skip, "the grant is not open (the freebet checks judge its first use) | " + joinEvidence(v.evidence)
	}
	second := r.bet(ctx, secondTx, round2, amount, &id)
	bal1, ev1, ok1 := r.balanceNow(ctx)
	v.see("the same grant again under a fresh transaction_id: %s; %s", describe(second), ev1)
	if !ok1 {
		v.fail("/balance after the second bet failed")
		return v.result()
	}
	v.moneyMoved(bal1, bal0, "WC-6", "a freebet bet (BET-6: a freebet is not debited)")
	if second.Outcome == wallet.Success {
		res, _ := r.client.Win(ctx, wallet.WinCall{PlayerID: r.player, Token: string(r.t.Token), Currency: r.currency,
			GameID: r.t.GameID, Amount: 2 * amount, TransactionID: r.id("win"), BetID: secondTx, RoundID: round2,
			Type: wallet.WinTypeFreebet, FreebetID: &id})
		bal2, ev2, ok2 := r.balanceNow(ctx)
		v.see("win of %d on the second: %s; %s", 2*amount, describe(res), ev2)
		if res.Outcome == wallet.Success {
			r.bets[secondTx].settled = true
		}
		if ok2 && v.moneyMoved(bal2, bal1, "WC-6", "the win of a second round of one freebet grant") {
			r.restore(ctx, &v, who{}, bal1)
		}
	}
	for _, b := range []openBet{{tx: secondTx, round: round2, amount: amount}, {tx: firstTx, round: round1, amount: amount}} {
		if rec := r.bets[b.tx]; rec != nil && !rec.settled {
			r.settle(ctx, &v, b)
		}
	}
	r.restore(ctx, &v, who{}, bal0)
	return v.result()
}

// withFix writes fix into a failure's evidence, after what went wrong and
// before " | " and what was seen, unless the evidence names a fix already;
// it returns the evidence and the check's Fix.
func withFix(evidence, fix string) (string, string) {
	if fix == "" {
		if i := strings.Index(evidence, "fix: "); i >= 0 {
			f, _, _ := strings.Cut(evidence[i:], " | ")
			return evidence, strings.TrimSpace(f)
		}
		return evidence, ""
	}
	if strings.Contains(evidence, fix) {
		return evidence, fix
	}
	problems, seen, found := strings.Cut(evidence, " | ")
	if !found {
		return problems + "; " + fix, fix
	}
	return problems + "; " + fix + " | " + seen, fix
}
