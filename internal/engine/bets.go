package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/crashstudio/crashgame/internal/leadership"
	"github.com/crashstudio/crashgame/internal/movements"
	"github.com/crashstudio/crashgame/internal/round"
	"github.com/crashstudio/crashgame/internal/wallet"
)

// BetRequest is a bet as the player asked for it.
type BetRequest struct {
	Amount      int64  // cents; ignored on a freebet (the grant's value is the stake)
	AutoCashout int64  // hundredths; 0 for none
	FreebetID   string // "" for an ordinary bet
	// ReceivedAt is when the request reached the game: the bet is admitted
	// by it, as a cashout is priced by its own, so that a bet that arrived
	// inside the window is not refused for the game's own queueing. Zero,
	// or later than the table's clock: the table's now.
	ReceivedAt time.Time
}

// BetView is a bet as its player sees it.
type BetView struct {
	BetID       string
	RoundID     string
	Amount      int64
	AutoCashout int64 // 0: none
	FreebetID   *string
	Status      string
	Multiplier  int64 // 0 unless cashed out
	Payout      int64
	PlacedAt    time.Time
}

// BetResult is the answer to an accepted bet: the bet and the balance the
// wallet answered (BAL-4), which the session's balance now shows.
type BetResult struct {
	Bet     BetView
	Balance int64
}

// CashoutResult is the answer to a cashout, with the balance to show: a demo
// session's bank balance; for real money, the balance expected once the win,
// which leaves through the queue, reaches the wallet (the operator's own
// figure follows on the stream, from the sessions, when it is delivered).
type CashoutResult struct {
	BetID      string
	Multiplier int64
	Payout     int64
	Balance    int64
}

// view is the bet as its player sees it, in state st (the round's).
func (b *liveBet) view(st round.State) *BetView { v := viewOf(b.rec); v.Status = string(st); return &v }

func viewOf(r BetRecord) BetView {
	v := BetView{BetID: r.ID, RoundID: r.RoundID, Amount: r.Amount, AutoCashout: r.AutoCashout, FreebetID: r.FreebetID,
		Status: r.Status, Multiplier: r.Multiplier, PlacedAt: r.PlacedAt}
	if r.Payout != nil {
		v.Payout = *r.Payout
	}
	return v
}

// ViewOf converts a stored bet for display.
func ViewOf(r BetRecord) BetView { return viewOf(r) }

// PlaceBet admits a bet: checks, commits the intent, debits the wallet within
// the betting window, and joins the bet to the round only on success.
func (t *Table) PlaceBet(ctx context.Context, p Player, req BetRequest) (BetResult, error) {
	lim, w, err := t.checkBet(p, req)
	if err != nil {
		return BetResult{}, err
	}
	s, err := t.reserveBet(ctx, p, req, lim)
	if err != nil {
		return BetResult{}, err
	}
	rec, err := t.commitIntent(ctx, s, p, req)
	if err != nil {
		return BetResult{}, err
	}
	res := t.debit(p, w, rec, s)
	return t.settleDebit(s.live, rec, res, s.epoch)
}

// checkBet applies the checks a bet passes before it takes a place in the
// round: a known operator, the limits of the player's currency (a freebet's
// stake is the grant's), round.CheckBet, freebets offered to this player and
// game, and, for real money, the operator's wallet with its breaker closed.
// It returns the currency's limits and the wallet (nil for a demo session).
func (t *Table) checkBet(p Player, req BetRequest) (round.Limits, BetWallet, error) {
	op, ok := t.cfg.Operators[p.Operator]
	if !ok {
		return round.Limits{}, nil, fmt.Errorf("engine: unknown operator %q", p.Operator)
	}
	lim, known := op.Currencies[p.Currency]
	if req.FreebetID == "" && !known {
		return round.Limits{}, nil, round.ErrBetLimit
	}
	if err := round.CheckBet(req.Amount, req.AutoCashout, req.FreebetID != "", lim, t.game.MaxMultiplier); err != nil {
		return round.Limits{}, nil, err
	}
	if req.FreebetID != "" && (p.Demo || t.cfg.Freebets == nil || !t.game.Freebet) {
		return round.Limits{}, nil, ErrFreebetUnavailable
	}
	if p.Demo {
		return lim, nil, nil
	}
	w, ok := t.cfg.Wallets(p.Operator)
	if !ok {
		return round.Limits{}, nil, fmt.Errorf("engine: no wallet for operator %q", p.Operator)
	}
	if w.BreakerOpen() {
		return round.Limits{}, nil, ErrWalletUnavailable
	}
	return lim, w, nil
}

// reservation is a bet's place in its round, as reserveBet took it in the
// loop: the bet, the deadline of its debit, and the term that admitted it
// (its epoch, and the context that ends with it).
type reservation struct {
	live     *liveBet
	deadline time.Time
	epoch    int64
	term     context.Context
}

// reserveBet reserves a place for the bet in the current round (the rules
// decide phase and count), admitted at req.ReceivedAt, or at the table's now
// when that is zero or later.
func (t *Table) reserveBet(ctx context.Context, p Player, req BetRequest, lim round.Limits) (reservation, error) {
	var (
		s    reservation
		rerr error
	)
	now := t.clock.Now()
	if !req.ReceivedAt.IsZero() && req.ReceivedAt.Before(now) {
		now = req.ReceivedAt
	}
	err := t.do(ctx, func() {
		r := t.cur
		if r == nil {
			rerr = round.ErrBettingClosed
			return
		}
		id := "b_" + randomID(15)
		if _, rerr = r.core.Admit(now, round.Intent{ID: id, Owner: string(p.Session), Player: p.key(),
			Amount: req.Amount, AutoCashout: req.AutoCashout, MaxWin: lim.MaxWin}); rerr != nil {
			return
		}
		rec := BetRecord{
			ID: id, RoundID: r.rec.ID, GameID: t.game.ID, SessionHash: p.Session,
			Operator: p.Operator, PlayerID: p.PlayerID, Token: p.Token, PlayerName: p.Name, Currency: p.Currency,
			Demo: p.Demo, Amount: req.Amount, AutoCashout: req.AutoCashout, Status: StatusPending, PlacedAt: toMillis(now),
		}
		s.live = &liveBet{rec: rec, player: p, round: r}
		r.live[id] = s.live
		// The debit may be answered until the round takes off (DebitGrace).
		s.deadline, s.epoch, s.term = r.core.BettingEnds().Add(t.cfg.DebitGrace), t.epoch, t.term
	})
	if err == nil {
		err = rerr
	}
	if err != nil {
		return reservation{}, err
	}
	return s, nil
}

// commitIntent commits the intent of the bet s reserved (and spends its
// freebet) before the first debit attempt, for the term that admitted it,
// and returns the bet as committed: the stake and grant a freebet spent. A
// failed commit releases the reservation.
func (t *Table) commitIntent(ctx context.Context, s reservation, p Player, req BetRequest) (BetRecord, error) {
	rec := s.live.rec
	err := t.commit.Do(ctx, job{epoch: s.epoch, run: func(ctx context.Context) error {
		rec.Amount, rec.FreebetID = req.Amount, nil
		if req.FreebetID != "" {
			id, amount, err := t.cfg.Freebets.Spend(ctx, p, req.FreebetID)
			if err != nil {
				return err
			}
			rec.Amount, rec.FreebetID = amount, &id
		}
		return t.store.InsertBet(ctx, &rec)
	}})
	if err != nil {
		t.release(s.live)
		if req.FreebetID != "" && errors.Is(err, ErrFreebetUnavailable) {
			return BetRecord{}, ErrFreebetUnavailable
		}
		return BetRecord{}, fmt.Errorf("engine: commit bet intent: %w", err)
	}
	return rec, nil
}

// debit takes the stake of the committed bet rec: from the demo bank, or
// from the operator's wallet w, attempted until the deadline s gives.
func (t *Table) debit(p Player, w BetWallet, rec BetRecord, s reservation) wallet.Result {
	if p.Demo {
		bal, derr := t.cfg.Demo.Debit(p.Session, rec.Amount)
		res := wallet.Result{Outcome: wallet.Success, Balance: bal, HasBalance: true}
		var refused *RefusedError
		if errors.As(derr, &refused) {
			res = wallet.Result{Outcome: wallet.Refused, ErrorCode: refused.Code, Balance: refused.Balance, HasBalance: refused.HasBalance}
		}
		return res
	}
	// The attempts end with the term that admitted the bet, not with the
	// player's request: a player who leaves does not stop a debit, whose
	// outcome must be known; a leader that lost the table must stop, since
	// the next one may roll the bet back.
	res, _ := w.BetUntil(s.term, wallet.BetCall{
		PlayerID: p.PlayerID, Token: p.Token, Currency: p.Currency, GameID: t.game.ID,
		Amount: rec.Amount, TransactionID: rec.ID, RoundID: rec.RoundID, FreebetID: rec.FreebetID,
	}, s.deadline)
	return res
}

// ownBet returns p's bet betID in the current round, or nil. Loop only.
func (t *Table) ownBet(p Player, betID string) *liveBet {
	if t.cur == nil {
		return nil
	}
	b := t.cur.live[betID]
	if b == nil || string(b.player.Session) != string(p.Session) {
		return nil
	}
	return b
}

// release forgets a reservation that never reached the wallet.
func (t *Table) release(b *liveBet) {
	_ = t.do(context.Background(), func() {
		b.round.core.Forget(b.rec.ID)
		delete(b.round.live, b.rec.ID)
	})
}

// settleDebit feeds the /bet outcome to the bet's round, in the loop, commits
// what the rules decided, then answers. rec is the bet as its intent was
// committed (the stake and grant a freebet spent); epoch is the term that
// admitted it, which alone may commit its outcome (a table whose term ended
// meanwhile leaves the bet pending to the next leader's recovery).
func (t *Table) settleDebit(b *liveBet, rec BetRecord, res wallet.Result, epoch int64) (BetResult, error) {
	var (
		d    debitDecision
		demo = b.rec.Demo
	)
	err := t.do(context.Background(), func() { d = t.decideDebit(b, rec, res, epoch) })
	if err != nil {
		return BetResult{}, err
	}
	if d.done == nil {
		return BetResult{}, d.answer
	}
	if cerr := <-d.done; cerr != nil {
		switch {
		case errors.Is(cerr, leadership.ErrFenced):
			// The term ended: the next leader's recovery voids the pending
			// bet and rolls it back, whatever the wallet said; the bet shows
			// on the stream as that leader settles it.
			t.logger.Warn("a debit outcome came after the table's term ended; the next leader rolls the bet back", "bet_id", b.rec.ID)
			if demo && res.Outcome == wallet.Success {
				t.refundDemo(b) // recovery settles demo bets in their records only
			}
			return BetResult{}, ErrTableUnavailable
		default:
			t.logger.Error("committing a debit outcome failed; recovery rolls it back", "bet_id", b.rec.ID, "err", cerr)
			if d.answer == nil {
				d.answer = fmt.Errorf("engine: commit bet: %w", cerr)
			}
		}
	}
	t.notifyQueue()
	if d.void && demo {
		t.refundDemo(b)
	}
	return t.answerDebit(b, res, d, demo)
}

// debitDecision is what the rules decided, in the loop, of a bet's debit
// outcome (decideDebit).
type debitDecision struct {
	done   <-chan error // the commit of the decision; nil when nothing was decided
	answer error        // the player's answer; nil for an accepted bet
	view   *BetView     // the bet as decided, taken in the loop, which owns b
	void   bool         // the bet was voided
}

// decideDebit feeds the /bet outcome res to b's round, b being the bet rec
// whose intent was committed, and submits what the rules decided for the
// term of epoch: the bet accepted, refused (a freebet's grant returned), or
// voided and rolled back. Loop only.
func (t *Table) decideDebit(b *liveBet, rec BetRecord, res wallet.Result, epoch int64) debitDecision {
	var d debitDecision
	outcome := round.Undecided
	switch res.Outcome {
	case wallet.Success:
		outcome = round.Debited
	case wallet.Refused:
		outcome = round.Refusal
	}
	b.rec = rec
	r := b.round
	core, derr := r.core.Debited(b.rec.ID, rec.Amount, outcome, t.clock.Now())
	if derr != nil {
		d.answer = fmt.Errorf("engine: debit outcome of %s: %w", b.rec.ID, derr)
		return d
	}
	b.rec.Status = string(core.State)
	d.view, d.void = b.view(core.State), core.State == round.Voided
	switch core.State {
	case round.Accepted:
		opTx := res.OperatorTxID
		d.done = t.submitAt(epoch, func(ctx context.Context) error {
			_, err := t.store.MoveBet(ctx, b.rec.ID, StatusPending, StatusAccepted, BetChange{OperatorTxID: opTx})
			return err
		})
		t.board.accepted(b.item(core))
	case round.Refused:
		delete(r.live, b.rec.ID)
		code := res.ErrorCode
		d.answer = &RefusedError{Code: code, Balance: res.Balance, HasBalance: res.HasBalance}
		d.done = t.submitAt(epoch, func(ctx context.Context) error {
			ok, err := t.store.MoveBet(ctx, b.rec.ID, StatusPending, StatusRefused, BetChange{SettledAt: toMillis(core.SettledAt), Refusal: code})
			if err != nil || !ok || b.rec.FreebetID == nil || t.cfg.Freebets == nil {
				return err
			}
			// A refused freebet bet returns its grant (FB-23, AMB-18).
			return t.cfg.Freebets.Return(ctx, b.player, *b.rec.FreebetID)
		})
	default:
		// Success after the window closed (refusal after the debit, RB-3),
		// or an outcome still unknown at its close: roll back.
		reason := reasonDebitUnknown
		d.answer = ErrWalletUnavailable
		if res.Outcome == wallet.Success {
			reason, d.answer = reasonDebitLate, round.ErrBettingClosed
		}
		delete(r.live, b.rec.ID)
		d.done = t.submitAt(epoch, func(ctx context.Context) error {
			return t.rollbackBet(ctx, b, StatusPending, StatusVoid, reason)
		})
	}
	return d
}

// answerDebit answers the player once the decision d committed: the bet's
// event, then the refusal or error, or the bet with the balance the wallet
// answered (BAL-4), which the session's balance now shows.
func (t *Table) answerDebit(b *liveBet, res wallet.Result, d debitDecision, demo bool) (BetResult, error) {
	t.events.Send(b.player.Session, &Event{Type: EventBet, Bet: d.view})
	if d.answer != nil {
		if refused := (*RefusedError)(nil); errors.As(d.answer, &refused) && refused.HasBalance && !demo {
			t.cfg.Balances.Reported(b.player.Session, refused.Balance) // the wallet's figure (WERR-7)
		}
		return BetResult{}, d.answer
	}
	if res.HasBalance {
		// BAL-4; a demo bet's figure is its bank's. The sessions show it.
		t.cfg.Balances.Reported(b.player.Session, res.Balance)
	}
	return BetResult{Bet: *d.view, Balance: res.Balance}, nil
}

// Cashout cashes a bet out at the multiplier of receivedAt, the moment the
// server received the request; it is refused once that moment is past the crash.
func (t *Table) Cashout(ctx context.Context, p Player, betID string, receivedAt time.Time) (CashoutResult, error) {
	var (
		done <-chan error
		out  CashoutResult
		rerr error
		mark = t.cfg.Balances.Balance(p.Session)
	)
	err := t.do(ctx, func() {
		b := t.ownBet(p, betID)
		if b == nil {
			rerr = round.ErrUnknownBet
			return
		}
		var core round.Bet
		if core, rerr = b.round.core.Cashout(string(p.Session), betID, receivedAt); rerr != nil {
			return
		}
		done = t.cashout(b, core)
		out = CashoutResult{BetID: core.ID, Multiplier: core.Multiplier, Payout: core.Payout}
	})
	if err == nil {
		err = rerr
	}
	if err != nil {
		return CashoutResult{}, err
	}
	if cerr := <-done; cerr != nil {
		return CashoutResult{}, fmt.Errorf("engine: commit cashout: %w", cerr)
	}
	if p.Demo {
		out.Balance, _ = t.cfg.Demo.Balance(p.Session)
	} else {
		out.Balance = t.cfg.Balances.Expect(p.Session, mark, out.Payout)
	}
	return out, nil
}

// cashout commits what the round decided for b, in the loop: the bet's update
// and its /win movement commit together, and a goroutine delivers the outcome
// once committed. It returns the commit's outcome.
func (t *Table) cashout(b *liveBet, core round.Bet) <-chan error {
	payout, m := core.Payout, core.Multiplier
	b.rec.Status, b.rec.Multiplier, b.rec.Payout = StatusCashedOut, m, &payout
	t.board.cashed(b.item(core))
	rec := b.rec
	settled := toMillis(core.SettledAt)
	done := t.submit(func(ctx context.Context) error {
		ok, err := t.store.MoveBet(ctx, rec.ID, StatusAccepted, StatusCashedOut, BetChange{SettledAt: settled, Multiplier: m, Payout: &payout})
		if err != nil {
			return err
		}
		if !ok {
			return round.ErrRoundCrashed
		}
		if rec.Demo {
			return nil
		}
		return t.enqueue(ctx, winMovement(rec, payout), t.clock.Now())
	})
	out := make(chan error, 1)
	go func() {
		err := <-done
		if err == nil {
			t.notifyQueue()
			if rec.Demo {
				t.cfg.Balances.Reported(rec.SessionHash, t.cfg.Demo.Credit(rec.SessionHash, payout))
			}
			v := viewOf(rec)
			t.events.Send(rec.SessionHash, &Event{Type: EventBet, Bet: &v})
		} else {
			t.logger.Error("cashout commit failed", "bet_id", rec.ID, "err", err)
		}
		out <- err
	}()
	return out
}

// winMovement is the /win of a cashed-out bet rec that pays payout.
func winMovement(rec BetRecord, payout int64) movements.Movement {
	winType := wallet.WinTypeWin
	if rec.FreebetID != nil {
		winType = wallet.WinTypeFreebet // WIN-4; the payout includes the stake (WIN-16)
	}
	return movements.Movement{
		TransactionID: rec.ID + "-w", Kind: movements.KindWin,
		Operator: rec.Operator, GameID: rec.GameID, Currency: rec.Currency, PlayerID: rec.PlayerID,
		Token: rec.Token, RoundID: rec.RoundID, BetID: rec.ID, Amount: payout,
		WinType: winType, FreebetID: rec.FreebetID, // inherited from the debit (WIN-17)
	}
}

// CancelResult is the answer to a cancel: the bet and the balance the answer
// carries (the settle function of the first cancel decides it).
type CancelResult struct {
	Bet     BetView
	Balance int64
}

// cancellation is the outcome of a bet's first cancel, shared by every repeat:
// done is closed once res and err are final.
type cancellation struct {
	done chan struct{}
	res  CancelResult
	err  error
}

// Cancel withdraws an accepted bet during the betting phase and rolls its debit
// back (RB-2). Once the rollback committed, the answer carries the balance to
// show: a demo session's bank balance, refunded; for real money, the balance
// expected once the rollback reaches the wallet (a freebet's rollback moves no
// money). Cancelling again, at once or later in the round, waits for the first
// cancel and answers exactly what it answered: the round keeps the bet as
// cancelled until it ends.
func (t *Table) Cancel(ctx context.Context, p Player, betID string) (CancelResult, error) {
	var (
		done  <-chan error
		b     *liveBet
		c     *cancellation
		first bool
		rerr  error
		mark  = t.cfg.Balances.Balance(p.Session)
	)
	err := t.do(ctx, func() {
		if b = t.ownBet(p, betID); b == nil {
			rerr = round.ErrUnknownBet
			return
		}
		core, repeat, err := b.round.core.Cancel(string(p.Session), betID, t.clock.Now())
		switch {
		case err != nil:
			rerr = err
			return
		case repeat:
			c = b.cancel
			return
		}
		c, first = &cancellation{done: make(chan struct{})}, true
		b.cancel = c
		b.rec.Status = StatusCancelled
		t.board.cancelled(b.rec.ID)
		c.res.Bet = *b.view(core.State)
		done = t.submit(func(ctx context.Context) error {
			return t.rollbackBet(ctx, b, StatusAccepted, StatusCancelled, reasonCancelled)
		})
	})
	if err == nil {
		err = rerr
	}
	if err != nil {
		return CancelResult{}, err
	}
	if first {
		if cerr := <-done; cerr != nil {
			c.err = fmt.Errorf("engine: commit cancel: %w", cerr)
		} else {
			t.notifyQueue()
			t.refundDemo(b)
			c.res.Balance = t.refunded(p, mark, c.res.Bet)
		}
		close(c.done)
	}
	select {
	case <-c.done:
		return c.res, c.err
	case <-ctx.Done():
		return CancelResult{}, ctx.Err()
	}
}

// refunded is the balance to show once the rollback of v, cancelled from mark,
// committed.
func (t *Table) refunded(p Player, mark BalanceMark, v BetView) int64 {
	switch {
	case p.Demo:
		bal, _ := t.cfg.Demo.Balance(p.Session) // the bank refunded it
		return bal
	case v.FreebetID != nil:
		return t.cfg.Balances.Expect(p.Session, mark, 0) // a free round debited nothing
	default:
		return t.cfg.Balances.Expect(p.Session, mark, v.Amount)
	}
}
