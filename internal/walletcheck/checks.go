package walletcheck

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/crashstudio/crashgame/internal/jsonint"
	"github.com/crashstudio/crashgame/internal/wallet"
)

// Movements. Each helper makes one attempt with the live session, unless a
// token is given, and keeps track of the debits for cleanup.

func (r *runner) balanceNow(ctx context.Context) (int64, string, bool) {
	return r.balanceOf(ctx, string(r.t.Token))
}

// balanceOf reads the balance of the session of token.
func (r *runner) balanceOf(ctx context.Context, token string) (int64, string, bool) {
	res, _ := r.client.Balance(ctx, wallet.BalanceCall{Token: token, Currency: r.currency, GameID: r.t.GameID})
	if res.Outcome != wallet.Success {
		return 0, "/balance " + describe(res), false
	}
	return res.Balance, fmt.Sprintf("/balance %d", res.Balance), true
}

// who is the player a movement names and the session token it carries; the
// zero value is the session's player with the live token.
type who struct{ player, token string }

// resolve fills what w leaves empty with the session's player and token.
func (r *runner) resolve(w who) who {
	if w.player == "" {
		w.player = r.player
	}
	if w.token == "" {
		w.token = string(r.t.Token)
	}
	return w
}

func (r *runner) betWith(ctx context.Context, token, tx, round string, amount int64, freebetID *string) wallet.Result {
	return r.betAs(ctx, who{token: token}, tx, round, amount, freebetID)
}

// betAs is a bet naming as's player with as's token.
func (r *runner) betAs(ctx context.Context, as who, tx, round string, amount int64, freebetID *string) wallet.Result {
	w := r.resolve(as)
	res, _ := r.client.Bet(ctx, wallet.BetCall{PlayerID: w.player, Token: w.token, Currency: r.currency, GameID: r.t.GameID,
		Amount: amount, TransactionID: tx, RoundID: round, FreebetID: freebetID})
	r.trackResult(as, tx, round, amount, res)
	return res
}

// trackResult records a bet for cleanup unless the wallet refused it:
// anything but a final refusal may have debited, so it is rolled back at
// the end unless a win or a rollback settles it first.
func (r *runner) trackResult(as who, tx, round string, amount int64, res wallet.Result) {
	if as.player == "" {
		as.token = "" // the session's player: cleanup uses the live token
	}
	if _, seen := r.bets[tx]; !seen && res.Outcome != wallet.Refused {
		r.bets[tx] = &betRec{tx: tx, round: round, amount: amount, as: as}
		r.order = append(r.order, tx)
	}
}

func (r *runner) bet(ctx context.Context, tx, round string, amount int64, freebetID *string) wallet.Result {
	return r.betWith(ctx, string(r.t.Token), tx, round, amount, freebetID)
}

func (r *runner) winWith(ctx context.Context, token, tx, betTx, round string, amount int64) wallet.Result {
	return r.winAs(ctx, who{token: token}, tx, betTx, round, amount)
}

// winAs is a win naming as's player with as's token.
func (r *runner) winAs(ctx context.Context, as who, tx, betTx, round string, amount int64) wallet.Result {
	w := r.resolve(as)
	res, _ := r.client.Win(ctx, wallet.WinCall{PlayerID: w.player, Token: w.token, Currency: r.currency, GameID: r.t.GameID,
		Amount: amount, TransactionID: tx, BetID: betTx, RoundID: round, Type: wallet.WinTypeWin})
	if b, ok := r.bets[betTx]; ok && b.as.player == as.player {
		r.settled(betTx, res)
	}
	return res
}

func (r *runner) win(ctx context.Context, tx, betTx, round string, amount int64) wallet.Result {
	return r.winWith(ctx, string(r.t.Token), tx, betTx, round, amount)
}

func (r *runner) rollback(ctx context.Context, tx, betTx, round string, amount int64, reason string) wallet.Result {
	return r.rollbackAs(ctx, who{}, tx, betTx, round, amount, reason)
}

// rollbackAs is a rollback naming as's player with as's token.
func (r *runner) rollbackAs(ctx context.Context, as who, tx, betTx, round string, amount int64, reason string) wallet.Result {
	w := r.resolve(as)
	res, _ := r.client.Rollback(ctx, wallet.RollbackCall{PlayerID: w.player, Token: w.token, Currency: r.currency,
		GameID: r.t.GameID, Amount: amount, TransactionID: tx, BetID: betTx, RoundID: round, Reason: reason})
	if b, ok := r.bets[betTx]; ok && b.as.player == as.player {
		r.settled(betTx, res)
	}
	return res
}

func (r *runner) settled(betTx string, res wallet.Result) {
	if b, ok := r.bets[betTx]; ok && res.Outcome == wallet.Success {
		b.settled = true
	}
}

// verdict gathers the problems one check found.
type verdict struct {
	evidence []string
	problems []string
}

func (v *verdict) see(format string, a ...any) {
	v.evidence = append(v.evidence, fmt.Sprintf(format, a...))
}
func (v *verdict) fail(format string, a ...any) {
	v.problems = append(v.problems, fmt.Sprintf(format, a...))
}

func (v *verdict) result() (Result, string) {
	ev := strings.Join(v.evidence, "; ")
	if len(v.problems) == 0 {
		return Pass, ev
	}
	return Fail, strings.Join(v.problems, "; ") + " | " + ev
}

// unmoved notes the balance after a check whose call must move nothing, and
// fails the check when it moved or could not be read; why, when not empty,
// says which rule a movement breaks.
func (v *verdict) unmoved(b balances, why string) {
	v.see("before %d, %s", b.before, b.afterEv)
	if !b.afterOK || b.after != b.before {
		v.fail("the balance moved by %d%s", b.after-b.before, why)
	}
}

// balances is the player's balance read before and after the calls of one
// check, as balanceNow gives them.
type balances struct {
	before  int64
	after   int64  // 0 when the read after failed
	afterEv string // "/balance N", or how the read after failed
	afterOK bool
}

// around reads the balance the check starts from, makes the check's calls,
// and reads the balance again. end is empty when the first read succeeded;
// otherwise the calls are not made and the check ends with (Fail, ev).
func (r *runner) around(ctx context.Context, calls func()) (b balances, end Result, ev string) {
	before, ev, ok := r.balanceNow(ctx)
	if !ok {
		return balances{}, Fail, ev
	}
	calls()
	after, afterEv, afterOK := r.balanceNow(ctx)
	return balances{before: before, after: after, afterEv: afterEv, afterOK: afterOK}, "", ""
}

// oneCall runs a check of one call judged against the balance around it: it
// reads the balance (around), makes call, reads the balance again and hands
// the answer and both balances to judge, whose verdict is the check's. When
// the first read fails the call is not made and the check fails.
func (r *runner) oneCall(ctx context.Context, call func() wallet.Result, judge func(v *verdict, res wallet.Result, bal balances)) (Result, string) {
	var res wallet.Result
	bal, end, ev := r.around(ctx, func() { res = call() })
	if end != "" {
		return end, ev
	}
	var v verdict
	judge(&v, res, bal)
	return v.result()
}

// betStake starts a check that judges what becomes of its own debit: it reads
// the balance the check starts from, bets one stake on a new round with the
// live token, and notes both ("before B; bet S<with>: answer"). end is empty
// when the bet was placed; otherwise the check ends with (end, ev): Fail when
// /balance failed, Skip when the bet was not accepted (notPlaced).
func (r *runner) betStake(ctx context.Context, v *verdict, with string) (b openBet, bal0 int64, end Result, ev string) {
	bal0, ev, ok := r.balanceNow(ctx)
	if !ok {
		return openBet{}, 0, Fail, ev
	}
	b = openBet{tx: r.id("bet"), round: r.id("round"), amount: r.o.Stake}
	res := r.bet(ctx, b.tx, b.round, b.amount, nil)
	v.see("before %d; bet %d%s: %s", bal0, b.amount, with, describe(res))
	if res.Outcome != wallet.Success {
		end, ev = notPlaced(res)
		return openBet{}, 0, end, ev
	}
	return b, bal0, "", ""
}

// openBet is a debit a later check builds on.
type openBet struct {
	tx, round string
	amount    int64
}

// state shared between consecutive checks.
type chain struct {
	betA    *openBet // the replayed bet
	rbA     string   // the rollback of betA
	freebet *openBet
}

func (r *runner) moneySteps() []step {
	var c chain
	return []step{
		{rules: "BET-8 ENV-12 ENV-6", name: "bet replay: same answer, one debit", money: true, run: func(ctx context.Context) (Result, string) { return r.checkBetReplay(ctx, &c) }},
		{rules: "BET-9 WERR-17", name: "divergent duplicate bet refused", money: true, run: func(ctx context.Context) (Result, string) { return r.checkDivergentBet(ctx, &c) }},
		{rules: "RB-9 ENV-12", name: "rollback reverts the debit, once", money: true, run: func(ctx context.Context) (Result, string) { return r.checkRollback(ctx, &c) }},
		{rules: "RB-8", name: "rollback retried with another amount refused", money: true, run: func(ctx context.Context) (Result, string) { return r.checkDivergentRollback(ctx, &c) }},
		{rules: "BET-3 LIM-5 ENV-14", name: "five bets in one round all debited", money: true, run: r.checkFiveBets},
		{rules: "WIN-13 WIN-14 ENV-12", name: "win above stake credited, once", money: true, run: r.checkWinAbove},
		{rules: "WIN-13 WIN-15", name: "win below stake credited", money: true, run: r.checkWinBelow},
		{rules: "WIN-10", name: "orphan win refused with 404", money: true, run: r.checkOrphanWin},
		{rules: "BET-10 WERR-1 WERR-7 WERR-21", name: "insufficient funds refused", money: true, run: r.checkInsufficient},
		{rules: "BET-6 BET-5", name: "freebet bet not debited", money: true, run: func(ctx context.Context) (Result, string) { return r.checkFreebet(ctx, &c) }},
		{rules: "RB-12", name: "freebet rollback moves nothing", money: true, run: func(ctx context.Context) (Result, string) { return r.checkFreebetRollback(ctx, &c) }},
		{rules: "RB-13", name: "rollback of an unknown bet answers 200", money: true, run: r.checkUnknownRollback},
		{rules: "RB-9 RB-10", name: "rollback declaring more than the debit", money: true, run: r.checkRollbackMismatch},
		{rules: "BAL-7", name: "expired token refused on /balance", run: r.checkExpiredBalance},
		{rules: "BET-11", name: "bet with an expired token refused", money: true, run: r.checkExpiredBet},
		{rules: "WIN-11", name: "win with an expired token credited", money: true, run: r.checkExpiredWin},
	}
}

// checkBetReplay: a bet sent twice with identical content (a new request_id
// and timestamp) gets the same answer, HTTP 200, and debits once (BET-8,
// ENV-12; ENV-6: request_id is not the key).
func (r *runner) checkBetReplay(ctx context.Context, c *chain) (Result, string) {
	var v verdict
	stake := r.o.Stake
	var tx, round string
	var first, second wallet.Result
	bal, end, ev := r.around(ctx, func() {
		tx, round = r.id("bet"), r.id("round")
		first = r.bet(ctx, tx, round, stake, nil)
		second = r.bet(ctx, tx, round, stake, nil)
	})
	if end != "" {
		return end, ev
	}
	v.see("before %d; bet %d: %s", bal.before, stake, describe(first))
	v.see("identical retry, other request_id and timestamp: %s", describe(second))
	v.see("%s", bal.afterEv)
	if first.RequestID == second.RequestID || first.Timestamp == second.Timestamp {
		v.fail("the two attempts shared a request_id or timestamp (battery bug)")
	}
	if first.Outcome == wallet.Success || second.Outcome == wallet.Success {
		c.betA = &openBet{tx: tx, round: round, amount: stake}
	}
	switch {
	case first.Outcome != wallet.Success:
		v.fail("the bet was not accepted")
	case second.Outcome != wallet.Success || second.HTTPStatus != http.StatusOK:
		v.fail("the retry did not get HTTP 200 ok (BET-8)")
	default:
		if first.Balance != bal.before-stake {
			v.fail("the bet answered balance %d, want %d", first.Balance, bal.before-stake)
		}
		if second.Balance != first.Balance {
			v.fail("the retry answered balance %d, the first %d (BET-8: same answer)", second.Balance, first.Balance)
		}
		if first.OperatorTxID != second.OperatorTxID {
			v.fail("the retry carried another operator transaction_id (BET-8: same answer)")
		}
	}
	if bal.afterOK && bal.after != bal.before-stake && first.Outcome == wallet.Success {
		v.fail("the balance moved by %d, want -%d: debited %d times (ENV-12)", bal.after-bal.before, stake, (bal.before-bal.after)/stake)
	}
	if !bal.afterOK {
		v.fail("/balance after the bet failed")
	}
	return v.result()
}

// checkDivergentBet: the same transaction_id with another amount is refused
// DUPLICATE_TRANSACTION, HTTP 409 (BET-9) or HTTP 200 (AMB-1 reading A), and
// moves nothing.
func (r *runner) checkDivergentBet(ctx context.Context, c *chain) (Result, string) {
	if c.betA == nil {
		return Skip, "needs the bet of the replay check"
	}
	return r.oneCall(ctx, func() wallet.Result {
		return r.bet(ctx, c.betA.tx, c.betA.round, c.betA.amount+1, nil)
	}, func(v *verdict, res wallet.Result, bal balances) {
		v.see("same transaction_id, amount %d instead of %d: %s", c.betA.amount+1, c.betA.amount, describe(res))
		switch {
		case res.Outcome == wallet.Success:
			v.fail("the divergent bet was accepted (BET-9 asks DUPLICATE_TRANSACTION)")
		case !errorBody(res) || res.ErrorCode != wallet.CodeDuplicateTransaction:
			v.fail("BET-9 asks error DUPLICATE_TRANSACTION")
		case res.HTTPStatus == http.StatusConflict:
			v.see("HTTP 409 as BET-9 says")
		case res.HTTPStatus == http.StatusOK:
			v.see("HTTP 200 (AMB-1 reading A)")
		default:
			v.fail("HTTP %d: BET-9 asks 409 (or 200, AMB-1)", res.HTTPStatus)
		}
		v.unmoved(bal, "")
	})
}

// checkRollback: a rollback of the replayed bet reverts its amount, and its
// identical retry does not credit again (RB-9, ENV-12).
func (r *runner) checkRollback(ctx context.Context, c *chain) (Result, string) {
	if c.betA == nil {
		return Skip, "needs the bet of the replay check"
	}
	var v verdict
	var rb string
	var first, second wallet.Result
	bal, end, ev := r.around(ctx, func() {
		rb = r.id("rb")
		first = r.rollback(ctx, rb, c.betA.tx, c.betA.round, c.betA.amount, "wallet-check: rollback")
		second = r.rollback(ctx, rb, c.betA.tx, c.betA.round, c.betA.amount, "wallet-check: rollback")
	})
	if end != "" {
		return end, ev
	}
	if first.Outcome == wallet.Success || second.Outcome == wallet.Success {
		c.rbA = rb
	}
	v.see("before %d; rollback of the %d bet: %s", bal.before, c.betA.amount, describe(first))
	v.see("identical retry: %s", describe(second))
	v.see("%s", bal.afterEv)
	want := bal.before + c.betA.amount
	switch {
	case first.Outcome != wallet.Success:
		v.fail("the rollback was not accepted")
	case first.Balance != want:
		v.fail("the rollback answered balance %d, want %d", first.Balance, want)
	}
	if first.Outcome == wallet.Success && (second.Outcome != wallet.Success || second.Balance != first.Balance) {
		v.fail("the retry did not get the same ok answer (ENV-12)")
	}
	if !bal.afterOK || bal.after != want {
		v.fail("the balance moved by %d, want +%d", bal.after-bal.before, c.betA.amount)
	}
	return v.result()
}

// checkDivergentRollback: the rollback's transaction_id again with another
// amount is refused as divergent and moves nothing (RB-8; the code and
// status are AMB-11).
func (r *runner) checkDivergentRollback(ctx context.Context, c *chain) (Result, string) {
	if c.rbA == "" {
		return Skip, "needs the rollback of the previous check"
	}
	return r.oneCall(ctx, func() wallet.Result {
		return r.rollback(ctx, c.rbA, c.betA.tx, c.betA.round, c.betA.amount-1, "wallet-check: divergent rollback")
	}, func(v *verdict, res wallet.Result, bal balances) {
		v.see("same rollback transaction_id, amount %d instead of %d: %s", c.betA.amount-1, c.betA.amount, describe(res))
		switch {
		case res.Outcome == wallet.Success:
			v.fail("answered ok: RB-8 asks a refusal of the divergent attempt")
		case !errorBody(res):
			v.fail("not a status = error answer")
		case res.ErrorCode == wallet.CodeDuplicateTransaction && res.HTTPStatus == http.StatusOK:
			v.see("DUPLICATE_TRANSACTION in HTTP 200 (AMB-11, as api/wallet.v1.yaml reads it)")
		case res.ErrorCode == wallet.CodeDuplicateTransaction && res.HTTPStatus == http.StatusConflict:
			v.see("DUPLICATE_TRANSACTION with 409 (AMB-11 reading A)")
		case res.HTTPStatus == http.StatusOK || res.HTTPStatus == http.StatusBadRequest:
			v.see("refused with %s, HTTP %d (AMB-11 reading B)", printable(res.ErrorCode), res.HTTPStatus)
		default:
			v.fail("HTTP %d is not listed for /rollback", res.HTTPStatus)
		}
		v.unmoved(bal, "")
	})
}

// checkFiveBets: five bets of one round, each with its own transaction_id,
// are all debited (BET-3, LIM-5, ENV-14); they are rolled back after.
func (r *runner) checkFiveBets(ctx context.Context) (Result, string) {
	var v verdict
	stake := r.o.Stake
	var round string
	var placed []string
	answers := make([]string, 0, 5)
	bal, end, ev := r.around(ctx, func() {
		round = r.id("round")
		for i := range 5 {
			tx := r.id(fmt.Sprintf("bet%d", i+1))
			res := r.bet(ctx, tx, round, stake, nil)
			answers = append(answers, describe(res))
			if res.Outcome == wallet.Success {
				placed = append(placed, tx)
			}
		}
	})
	if end != "" {
		return end, ev
	}
	v.see("before %d; five bets of %d, one round_id: %s", bal.before, stake, strings.Join(answers, ", "))
	v.see("%s", bal.afterEv)
	if len(placed) != 5 {
		v.fail("%d of 5 bets accepted (BET-3: round_id is not a deduplication key)", len(placed))
	}
	if want := int64(len(placed)) * stake; !bal.afterOK || bal.after != bal.before-want {
		v.fail("the balance moved by %d, want -%d", bal.after-bal.before, want)
	}
	back := 0
	for _, tx := range placed {
		if res := r.rollback(ctx, r.id("rb"), tx, round, stake, "wallet-check: five bets"); res.Outcome == wallet.Success {
			back++
		}
	}
	_, ev2, _ := r.balanceNow(ctx)
	v.see("then %d rolled back, %s", back, ev2)
	return v.result()
}

// winDelta is how far the wins of WIN-14 and WIN-15 lie from the stake; the
// two cancel out.
func (r *runner) winDelta() int64 { return max(1, r.o.Stake*37/100) }

// checkWinAbove: a win above the stake (a promotion added in) is credited in
// full, and its identical retry credits nothing more (WIN-13, WIN-14, ENV-12).
func (r *runner) checkWinAbove(ctx context.Context) (Result, string) {
	return r.checkWin(ctx, r.o.Stake+r.winDelta(), true)
}

// checkWinBelow: a win below the stake (the per-bet ceiling hit) is credited
// as declared (WIN-13, WIN-15).
func (r *runner) checkWinBelow(ctx context.Context) (Result, string) {
	return r.checkWin(ctx, r.o.Stake-r.winDelta(), false)
}

func (r *runner) checkWin(ctx context.Context, amount int64, replay bool) (Result, string) {
	var v verdict
	b, bal0, end, ev := r.betStake(ctx, &v, "")
	if end != "" {
		return end, ev
	}
	w := r.id("win")
	res := r.win(ctx, w, b.tx, b.round, amount)
	v.see("win %d: %s", amount, describe(res))
	want := bal0 - b.amount + amount
	switch {
	case res.Outcome != wallet.Success:
		v.fail("the win was not credited (WIN-13: the operator does not validate stake times multiplier)")
	case res.Balance != want:
		v.fail("the win answered balance %d, want %d", res.Balance, want)
	}
	if replay {
		again := r.win(ctx, w, b.tx, b.round, amount)
		v.see("identical retry: %s", describe(again))
		if res.Outcome == wallet.Success && (again.Outcome != wallet.Success || again.Balance != res.Balance) {
			v.fail("the retry did not get the same ok answer (ENV-12)")
		}
	}
	bal1, ev1, ok1 := r.balanceNow(ctx)
	v.see("%s", ev1)
	if !ok1 || bal1 != want {
		v.fail("the balance moved by %d, want %+d", bal1-bal0, amount-b.amount)
	}
	return v.result()
}

// checkOrphanWin: a win whose bet_id names no debit is refused with HTTP 404
// and credits nothing (WIN-10). One cent is declared, so that a wallet that
// pays orphans loses little.
func (r *runner) checkOrphanWin(ctx context.Context) (Result, string) {
	return r.oneCall(ctx, func() wallet.Result {
		return r.win(ctx, r.id("win"), r.id("nobet"), r.id("round"), 1)
	}, func(v *verdict, res wallet.Result, bal balances) {
		v.see("win of 1 on a bet_id never debited: %s", describe(res))
		switch {
		case res.Outcome == wallet.Success:
			v.fail("the orphan win was credited")
		case res.HTTPStatus == http.StatusNotFound && res.ErrorCode == wallet.CodeBetNotFound:
		case res.HTTPStatus == http.StatusNotFound:
			v.see("404 with code %q, not BET_NOT_FOUND", printable(res.ErrorCode))
		default:
			v.fail("HTTP %d: WIN-10 asks HTTP 404 (the game keeps retrying a 4xx, AMB-3)", res.HTTPStatus)
		}
		v.unmoved(bal, "")
	})
}

// checkInsufficient: a stake above the balance is refused INSUFFICIENT_FUNDS,
// in HTTP 200 (WERR-1, AMB-1 reading A) or 402 (BET-10, AMB-1 reading B),
// with the balance when the wallet sends it (WERR-7), and debits nothing.
func (r *runner) checkInsufficient(ctx context.Context) (Result, string) {
	var v verdict
	bal0, ev, ok := r.balanceNow(ctx)
	if !ok {
		return Fail, ev
	}
	tx, round := r.id("bet"), r.id("round")
	res := r.bet(ctx, tx, round, bal0+1, nil)
	v.see("bet of %d with balance %d: %s", bal0+1, bal0, describe(res))
	switch {
	case res.Outcome == wallet.Success:
		v.fail("the bet was accepted")
		if rb := r.rollback(ctx, r.id("rb"), tx, round, bal0+1, "wallet-check: insufficient funds accepted"); rb.Outcome == wallet.Success {
			v.see("rolled back")
		}
	case res.HTTPStatus >= 500:
		v.fail("a refusal sent as a 5xx is retried as a transport failure (WERR-21); BET-10 asks error INSUFFICIENT_FUNDS")
	case res.ErrorCode != wallet.CodeInsufficientFunds || !errorBody(res):
		v.fail("BET-10 asks error INSUFFICIENT_FUNDS")
	case res.HTTPStatus == http.StatusOK:
		v.see("HTTP 200 (AMB-1 reading A, WERR-1)")
	case res.HTTPStatus == http.StatusPaymentRequired:
		v.see("HTTP 402 (AMB-1 reading B, BET-10)")
	default:
		v.fail("HTTP %d: BET-10 asks 200 or 402 (AMB-1)", res.HTTPStatus)
	}
	if res.Outcome == wallet.Refused && res.ErrorCode == wallet.CodeInsufficientFunds {
		if res.HasBalance {
			v.see("with balance (WERR-7)")
			if res.Balance != bal0 {
				v.fail("the refusal carried balance %d, the player has %d", res.Balance, bal0)
			}
		} else {
			v.see("without balance (WERR-7: optional)")
		}
	}
	bal1, ev1, ok1 := r.balanceNow(ctx)
	v.see("%s", ev1)
	if res.Outcome != wallet.Success && (!ok1 || bal1 != bal0) {
		v.fail("the balance moved by %d", bal1-bal0)
	}
	return v.result()
}

// checkFreebet: a bet with a freebet_id is answered ok with the balance
// unchanged, and not debited (BET-6); ordinary bets of this run carried
// freebet_id null and were debited (BET-5).
func (r *runner) checkFreebet(ctx context.Context, c *chain) (Result, string) {
	var v verdict
	id, amount, source := r.t.FreebetID, r.t.FreebetAmount, "--freebet-id"
	synthetic := false
	switch {
	case id != "":
	case len(r.grants) > 0:
		id, amount, source = r.grants[0].id, r.grants[0].amount, "the first grant /balance listed"
	default:
		id, source, synthetic = r.rep.RunID+"-freebet", "an id never granted", true
	}
	if amount <= 0 {
		amount = r.o.Stake
	}
	var tx, round string
	var res wallet.Result
	bal, end, ev := r.around(ctx, func() {
		tx, round = r.id("bet"), r.id("round")
		res = r.bet(ctx, tx, round, amount, &id)
	})
	if end != "" {
		return end, ev
	}
	v.see("freebet bet of %d with %s: %s", amount, source, describe(res))
	if res.Outcome != wallet.Success {
		if synthetic && errorBody(res) {
			return Skip, fmt.Sprintf("the wallet refused a freebet_id it never granted (%s): grant the test player a freebet, or pass --freebet-id", describe(res))
		}
		v.fail("the freebet bet was not accepted (BET-6)")
		return v.result()
	}
	c.freebet = &openBet{tx: tx, round: round, amount: amount}
	if res.Balance != bal.before {
		v.fail("the answer's balance %d is not the unchanged %d (BET-6)", res.Balance, bal.before)
	}
	v.unmoved(bal, ": a freebet is not debited (BET-6)")
	v.see("ordinary bets carry freebet_id null")
	return v.result()
}

// checkFreebetRollback: the rollback of a freebet bet moves no balance
// (RB-12).
func (r *runner) checkFreebetRollback(ctx context.Context, c *chain) (Result, string) {
	if c.freebet == nil {
		return Skip, "needs the freebet bet of the previous check"
	}
	return r.oneCall(ctx, func() wallet.Result {
		return r.rollback(ctx, r.id("rb"), c.freebet.tx, c.freebet.round, c.freebet.amount, "wallet-check: freebet rollback")
	}, func(v *verdict, res wallet.Result, bal balances) {
		v.see("rollback of the %d freebet bet: %s", c.freebet.amount, describe(res))
		switch {
		case res.Outcome != wallet.Success:
			v.fail("the rollback was not accepted")
		case res.Balance != bal.before:
			v.fail("the answer's balance %d is not the unchanged %d", res.Balance, bal.before)
		}
		v.unmoved(bal, ": a stake never charged was returned (RB-12)")
	})
}

// checkUnknownRollback: a rollback whose bet_id names no debit answers HTTP
// 200, ok with the balance (AMB-13 reading A) or BET_NOT_FOUND (reading B),
// and moves nothing (RB-13).
func (r *runner) checkUnknownRollback(ctx context.Context) (Result, string) {
	return r.oneCall(ctx, func() wallet.Result {
		return r.rollback(ctx, r.id("rb"), r.id("nobet"), r.id("round"), r.o.Stake, "wallet-check: unknown bet")
	}, func(v *verdict, res wallet.Result, bal balances) {
		v.see("rollback of %d on a bet_id never debited: %s", r.o.Stake, describe(res))
		switch {
		case res.HTTPStatus != http.StatusOK:
			v.fail("RB-13 asks HTTP 200 (an error makes the game retry)")
		case res.Outcome == wallet.Success:
			v.see("ok (AMB-13 reading A)")
			if res.Balance != bal.before {
				v.fail("the answer's balance %d is not the unchanged %d", res.Balance, bal.before)
			}
		case res.ErrorCode == wallet.CodeBetNotFound:
			v.see("BET_NOT_FOUND in HTTP 200 (AMB-13 reading B)")
		default:
			v.fail("RB-13 asks ok (or BET_NOT_FOUND, AMB-13)")
		}
		v.unmoved(bal, "")
	})
}

// checkRollbackMismatch: a rollback declaring twice the debit never returns
// more than the debit (RB-10): refused (AMB-12 reading A, then a matching
// rollback reverts it), or the debit's own amount reverted (reading B, RB-9).
func (r *runner) checkRollbackMismatch(ctx context.Context) (Result, string) {
	var v verdict
	b, bal0, end, ev := r.betStake(ctx, &v, "")
	if end != "" {
		return end, ev
	}
	stake := b.amount
	res := r.rollback(ctx, r.id("rb"), b.tx, b.round, 2*stake, "wallet-check: amount mismatch")
	bal1, ev1, ok1 := r.balanceNow(ctx)
	v.see("rollback declaring %d: %s, %s", 2*stake, describe(res), ev1)
	switch {
	case !ok1:
		v.fail("/balance failed")
	case res.Outcome == wallet.Success && bal1 == bal0:
		v.see("the debit's own amount was reverted (AMB-12 reading B)")
	case res.Outcome == wallet.Success:
		v.fail("the balance moved by %+d for a debit of %d: a rollback returned more than was taken (RB-10)", bal1-(bal0-stake), stake)
	case bal1 != bal0-stake:
		v.fail("refused, yet the balance moved by %+d", bal1-(bal0-stake))
	default:
		v.see("refused (AMB-12 reading A)")
		again := r.rollback(ctx, r.id("rb"), b.tx, b.round, stake, "wallet-check: matching rollback")
		bal2, ev2, ok2 := r.balanceNow(ctx)
		v.see("rollback declaring %d: %s, %s", stake, describe(again), ev2)
		if again.Outcome != wallet.Success || !ok2 || bal2 != bal0 {
			v.fail("the matching rollback did not revert the debit (RB-9)")
		}
	}
	return v.result()
}

// notPlaced skips a check whose own bet was not accepted: the bet checks
// judge that, this one has nothing to judge.
func notPlaced(b wallet.Result) (Result, string) {
	return Skip, "the bet this check builds on was not accepted: " + describe(b)
}

func (r *runner) skipNoExpired() (Result, string) {
	return Skip, "no expired token given (--expired-token: an expired session token of the same player)"
}

// checkExpiredBalance: an expired token is refused on /balance (BAL-7).
func (r *runner) checkExpiredBalance(ctx context.Context) (Result, string) {
	if r.t.ExpiredToken == "" {
		return r.skipNoExpired()
	}
	body := mustJSON(r.balanceBody(string(r.t.ExpiredToken), 0))
	return judgeTokenRefusal(r.send(ctx, "/balance", body, r.bearer(), r.sign(body)))
}

// checkExpiredBet: a bet with an expired token is refused TOKEN_EXPIRED, in
// HTTP 409 (BET-11) or 200 (AMB-1 reading A), and debits nothing.
func (r *runner) checkExpiredBet(ctx context.Context) (Result, string) {
	if r.t.ExpiredToken == "" {
		return r.skipNoExpired()
	}
	return r.oneCall(ctx, func() wallet.Result {
		return r.betWith(ctx, string(r.t.ExpiredToken), r.id("bet"), r.id("round"), r.o.Stake, nil)
	}, func(v *verdict, res wallet.Result, bal balances) {
		v.see("bet of %d with the expired token: %s", r.o.Stake, describe(res))
		switch {
		case res.Outcome == wallet.Success:
			v.fail("the bet was accepted")
		case res.ErrorCode != wallet.CodeTokenExpired || !errorBody(res):
			v.fail("BET-11 asks error TOKEN_EXPIRED")
		case res.HTTPStatus == http.StatusConflict:
			v.see("HTTP 409 (AMB-1 reading B, BET-11)")
		case res.HTTPStatus == http.StatusOK:
			v.see("HTTP 200 (AMB-1 reading A)")
		default:
			v.fail("HTTP %d: BET-11 asks 409 (or 200, AMB-1)", res.HTTPStatus)
		}
		v.see("before %d, %s", bal.before, bal.afterEv)
		if res.Outcome != wallet.Success && (!bal.afterOK || bal.after != bal.before) {
			v.fail("the balance moved by %d", bal.after-bal.before)
		}
	})
}

// checkExpiredWin: a win sent with an expired token, on a bet placed with the
// live one, is still credited (WIN-11).
func (r *runner) checkExpiredWin(ctx context.Context) (Result, string) {
	if r.t.ExpiredToken == "" {
		return r.skipNoExpired()
	}
	var v verdict
	b, bal0, end, ev := r.betStake(ctx, &v, " with the live token")
	if end != "" {
		return end, ev
	}
	res := r.winWith(ctx, string(r.t.ExpiredToken), r.id("win"), b.tx, b.round, b.amount)
	bal1, ev1, ok1 := r.balanceNow(ctx)
	v.see("win %d with the expired token: %s, %s", b.amount, describe(res), ev1)
	switch {
	case res.Outcome != wallet.Success:
		v.fail("the win was not credited: an expired token must not block /win (WIN-11)")
	case !ok1 || bal1 != bal0:
		v.fail("the balance moved by %d, want 0", bal1-bal0)
	}
	return v.result()
}

// cleanup rolls back every debit the run may have left open, whatever the
// caller's context says: a debit must not outlive the battery.
func (r *runner) cleanup(ctx context.Context) string {
	ctx = context.WithoutCancel(ctx)
	open, back := 0, 0
	for _, tx := range r.order {
		b := r.bets[tx]
		if b.settled {
			continue
		}
		open++
		if res := r.rollbackAs(ctx, b.as, r.id("cleanup"), b.tx, b.round, b.amount, "wallet-check: cleanup"); res.Outcome == wallet.Success {
			back++
		}
	}
	if open == 0 {
		return ""
	}
	return fmt.Sprintf("cleanup: %d of %d unsettled bet(s) rolled back", back, open)
}

// checkRestored compares the final balance with the first one.
func (r *runner) checkRestored(ctx context.Context, cleanup string) (Result, string) {
	bal, ev, ok := r.balanceNow(context.WithoutCancel(ctx))
	if !ok {
		return Fail, ev
	}
	r.rep.BalanceAfter = &bal
	ev = fmt.Sprintf("before %d, after %d", r.start, bal)
	if cleanup != "" {
		ev += "; " + cleanup
	}
	if bal != r.start {
		return Fail, fmt.Sprintf("the player's balance moved by %+d over the run | %s", bal-r.start, ev)
	}
	return Pass, ev
}

// checkAnswers looks at every answer of the run: a JSON object with status
// ok or error (GEN-2, WERR-4), error_code on an error (WERR-5), balance in
// integer cents on a success (ENV-17, GEN-4), currency on a success (ENV-18,
// a "should": counted, not judged). 5xx answers are left out: a proxy may
// have written them.
func (r *runner) checkAnswers(context.Context) (Result, string) {
	var problems []string
	judged, fivexx, oks, withCurrency := 0, 0, 0, 0
	problem := func(ex exchange, what string) {
		if len(problems) < 4 {
			problems = append(problems, fmt.Sprintf("%s HTTP %d: %s", ex.route, ex.status, what))
		} else if len(problems) == 4 {
			problems = append(problems, "...")
		}
	}
	for _, ex := range r.rec.exchanges() {
		if ex.status >= 500 {
			fivexx++
			continue
		}
		judged++
		var f map[string]json.RawMessage
		if json.Unmarshal(ex.answer, &f) != nil || f == nil {
			problem(ex, "body not a JSON object (GEN-2)")
			continue
		}
		var status string
		if json.Unmarshal(f["status"], &status) != nil {
			problem(ex, "no status string (WERR-4)")
			continue
		}
		if raw, has := f["balance"]; has && string(raw) != "null" && (!jsonint.Is(raw) || raw[0] == '-') {
			problem(ex, "balance "+printable(string(raw))+" is not integer cents (GEN-4)")
		}
		switch status {
		case "ok":
			oks++
			if raw, has := f["balance"]; !has || string(raw) == "null" {
				problem(ex, "status ok without balance (ENV-17)")
			}
			if ex.status < 200 || ex.status > 299 {
				problem(ex, "status ok outside 2xx")
			}
			if _, has := f["currency"]; has {
				withCurrency++
			}
			if ex.route == "/balance" {
				var grants []map[string]json.RawMessage
				if json.Unmarshal(f["freebets"], &grants) == nil {
					for _, g := range grants {
						if raw, has := g["amount"]; has && !jsonint.Is(raw) {
							problem(ex, "freebet amount "+printable(string(raw))+" is not integer cents (GEN-4)")
						}
					}
				}
			}
		case "error":
			var code string
			if json.Unmarshal(f["error_code"], &code) != nil || code == "" {
				problem(ex, "status error without error_code (WERR-5)")
			}
		default:
			problem(ex, "status "+printable(status)+" is neither ok nor error (WERR-4)")
		}
	}
	ev := fmt.Sprintf("%d answers judged", judged)
	if fivexx > 0 {
		ev += fmt.Sprintf(" (%d 5xx left out)", fivexx)
	}
	ev += fmt.Sprintf("; currency on %d of %d success answers (ENV-18: should)", withCurrency, oks)
	if len(problems) > 0 {
		return Fail, strings.Join(problems, "; ") + " | " + ev
	}
	return Pass, ev
}

// checkOperatorTxIDs: a transaction_id in a movement's success answer is the
// operator's own number, never the game's transaction_id echoed (ENV-19).
func (r *runner) checkOperatorTxIDs(context.Context) (Result, string) {
	oks, present, echoed := 0, 0, 0
	for _, ex := range r.rec.exchanges() {
		if ex.route == "/balance" || ex.status < 200 || ex.status > 299 {
			continue
		}
		var ans, req map[string]json.RawMessage
		if json.Unmarshal(ex.answer, &ans) != nil || json.Unmarshal(ex.request, &req) != nil {
			continue
		}
		var status string
		if json.Unmarshal(ans["status"], &status) != nil || status != "ok" {
			continue
		}
		oks++
		raw, has := ans["transaction_id"]
		if !has || string(raw) == "null" {
			continue
		}
		present++
		if string(raw) == string(req["transaction_id"]) {
			echoed++
		}
	}
	if oks == 0 {
		return Skip, "no movement succeeded"
	}
	ev := fmt.Sprintf("transaction_id on %d of %d movement success answers", present, oks)
	if echoed > 0 {
		return Fail, fmt.Sprintf("%d answer(s) echoed the game's transaction_id | %s", echoed, ev)
	}
	return Pass, ev + ", none echoing the game's"
}

// randomToken is a token no operator issued.
func randomToken() string { return "wc-unknown-" + strings.ToLower(rand.Text()) }
