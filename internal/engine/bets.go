package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/crashstudio/crashgame/internal/store"
	"github.com/crashstudio/crashgame/internal/wallet"
)

// BetRequest is a bet as the player asked for it.
type BetRequest struct {
	Amount      int64  // cents; ignored on a freebet (the grant's value is the stake)
	AutoCashout int64  // hundredths; 0 for none
	FreebetID   string // "" for an ordinary bet
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
// wallet answered (BAL-4).
type BetResult struct {
	Bet     BetView
	Balance int64
}

// CashoutResult is the answer to a cashout. Balance is set for demo sessions;
// for real money the win leaves through the queue and the operator's answer
// brings the balance later.
type CashoutResult struct {
	BetID      string
	Multiplier int64
	Payout     int64
	Balance    int64
	HasBalance bool
}

func (b *liveBet) view() *BetView { v := viewOf(b.rec); v.Status = b.state; return &v }

func viewOf(r BetRecord) BetView {
	v := BetView{BetID: r.ID, RoundID: r.RoundID, Amount: r.Amount, AutoCashout: r.AutoCashout, FreebetID: r.FreebetID,
		Status: r.Status, Multiplier: r.Multiplier, PlacedAt: r.PlacedAt.Time()}
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
	op, ok := t.cfg.Operators(p.Operator)
	if !ok {
		return BetResult{}, fmt.Errorf("engine: unknown operator %q", p.Operator)
	}
	if req.AutoCashout != 0 && (req.AutoCashout < 101 || req.AutoCashout > t.game.MaxMultiplier) {
		return BetResult{}, ErrBadAutoCashout
	}
	if req.FreebetID == "" {
		limits, ok := op.Currency(p.Currency)
		if !ok || req.Amount <= 0 ||
			(limits.MinBet != nil && req.Amount < *limits.MinBet) ||
			(limits.MaxBet != nil && req.Amount > *limits.MaxBet) {
			return BetResult{}, ErrBetLimit
		}
	} else if p.Demo || t.cfg.Freebets == nil || !t.game.Freebet {
		return BetResult{}, ErrFreebetUnavailable
	}
	var w BetWallet
	if !p.Demo {
		if w, ok = t.cfg.Wallets(p.Operator); !ok {
			return BetResult{}, fmt.Errorf("engine: no wallet for operator %q", p.Operator)
		}
		if w.BreakerOpen() {
			return BetResult{}, ErrWalletUnavailable
		}
	}

	// Reserve a place in the round (the loop decides phase and count).
	var (
		live     *liveBet
		deadline time.Time
		rerr     error
	)
	now := t.clock.Now()
	err := t.do(ctx, func() {
		r := t.cur
		if r == nil || r.phase != PhaseBetting || !now.Before(r.bettingTo) {
			rerr = ErrBettingClosed
			return
		}
		// Five bets per player, whichever of their sessions placed them (LIM-5).
		if r.count[p.key()] >= MaxBetsPerRound {
			rerr = ErrTooManyBets
			return
		}
		r.count[p.key()]++
		rec := BetRecord{
			ID: "b_" + randomID(15), RoundID: r.rec.ID, GameID: t.game.ID, SessionHash: p.Session,
			Operator: p.Operator, PlayerID: p.PlayerID, Token: p.Token, PlayerName: p.Name, Currency: p.Currency,
			Demo: p.Demo, Amount: req.Amount, AutoCashout: req.AutoCashout, Status: StatusPending, PlacedAt: store.MillisOf(now),
		}
		live = &liveBet{rec: rec, player: p, state: StatusPending}
		r.bets[rec.ID] = live
		deadline = r.bettingTo
	})
	if err == nil {
		err = rerr
	}
	if err != nil {
		return BetResult{}, err
	}

	// Commit the intent (and spend the freebet) before the first attempt.
	rec := live.rec
	err = t.commit.Do(ctx, func(ctx context.Context, tx bun.Tx) error {
		rec.Amount, rec.FreebetID = req.Amount, nil
		if req.FreebetID != "" {
			id, amount, err := t.cfg.Freebets.Spend(ctx, tx, p, req.FreebetID)
			if err != nil {
				return err
			}
			rec.Amount, rec.FreebetID = amount, &id
		}
		_, err := tx.NewInsert().Model(&rec).Exec(ctx)
		return err
	})
	if err != nil {
		t.release(live)
		if req.FreebetID != "" && errors.Is(err, ErrFreebetUnavailable) {
			return BetResult{}, ErrFreebetUnavailable
		}
		return BetResult{}, fmt.Errorf("engine: commit bet intent: %w", err)
	}

	// Debit.
	var res wallet.Result
	if p.Demo {
		bal, derr := t.cfg.Demo.Debit(p.Session, rec.Amount)
		res = wallet.Result{Outcome: wallet.Success, Balance: bal, HasBalance: true}
		var refused *RefusedError
		if errors.As(derr, &refused) {
			res = wallet.Result{Outcome: wallet.Refused, ErrorCode: refused.Code, Balance: refused.Balance, HasBalance: refused.HasBalance}
		}
	} else {
		fb := rec.FreebetID
		res, _ = w.BetUntil(context.WithoutCancel(ctx), wallet.BetCall{
			PlayerID: p.PlayerID, Token: p.Token, Currency: p.Currency, GameID: t.game.ID,
			Amount: rec.Amount, TransactionID: rec.ID, RoundID: rec.RoundID, FreebetID: fb,
		}, deadline)
	}
	return t.settleDebit(live, rec, res)
}

// ownBet returns p's bet betID in the current round, or nil. Loop only.
func (t *Table) ownBet(p Player, betID string) *liveBet {
	if t.cur == nil {
		return nil
	}
	b := t.cur.bets[betID]
	if b == nil || string(b.player.Session) != string(p.Session) {
		return nil
	}
	return b
}

// release forgets a reservation that never reached the wallet.
func (t *Table) release(b *liveBet) {
	_ = t.do(context.Background(), func() {
		if r := t.cur; r != nil && r.rec.ID == b.rec.RoundID {
			delete(r.bets, b.rec.ID)
			r.count[b.player.key()]--
		}
	})
}

// settleDebit decides what the /bet outcome means for the bet, in the loop,
// commits it, then answers. rec is the bet as its intent was committed (the
// stake and grant a freebet spent).
func (t *Table) settleDebit(b *liveBet, rec BetRecord, res wallet.Result) (BetResult, error) {
	var (
		done   <-chan error
		answer error
		demo   = b.rec.Demo
		view   *BetView // taken in the loop, which owns b
		void   bool
	)
	err := t.do(context.Background(), func() {
		b.rec = rec
		defer func() { view, void = b.view(), b.state == StatusVoid }()
		r := t.cur
		inWindow := r != nil && r.rec.ID == b.rec.RoundID && r.phase == PhaseBetting
		switch {
		case res.Outcome == wallet.Success && inWindow:
			b.state = StatusAccepted
			b.rec.Status = StatusAccepted
			opTx := res.OperatorTxID
			done = t.commit.Submit(context.Background(), func(ctx context.Context, tx bun.Tx) error {
				_, err := setBetStatus(ctx, tx, b.rec.ID, StatusPending, StatusAccepted, 0, func(q *bun.UpdateQuery) *bun.UpdateQuery {
					return q.Set("operator_tx_id = ?", opTx)
				})
				return err
			})
			t.public = append(t.public, b.item())
		case res.Outcome == wallet.Refused:
			b.state = StatusRefused
			if r != nil && r.rec.ID == b.rec.RoundID {
				r.count[b.player.key()]--
				delete(r.bets, b.rec.ID)
			}
			code := res.ErrorCode
			answer = &RefusedError{Code: code, Balance: res.Balance, HasBalance: res.HasBalance}
			done = t.commit.Submit(context.Background(), func(ctx context.Context, tx bun.Tx) error {
				ok, err := setBetStatus(ctx, tx, b.rec.ID, StatusPending, StatusRefused, store.MillisOf(t.clock.Now()), func(q *bun.UpdateQuery) *bun.UpdateQuery {
					return q.Set("refusal = ?", code)
				})
				if err != nil || !ok || b.rec.FreebetID == nil || t.cfg.Freebets == nil {
					return err
				}
				// A refused freebet bet returns its grant (FB-23, AMB-18).
				return t.cfg.Freebets.Return(ctx, tx, b.player, *b.rec.FreebetID)
			})
		default:
			// Success after the window closed (refusal after the debit, RB-3),
			// or an outcome still unknown at its close: roll back.
			reason := "debit outcome unknown when the betting window closed"
			answer = ErrWalletUnavailable
			if res.Outcome == wallet.Success {
				reason, answer = "debit confirmed after the betting window closed", ErrBettingClosed
			}
			b.state = StatusVoid
			if r != nil && r.rec.ID == b.rec.RoundID {
				delete(r.bets, b.rec.ID)
			}
			done = t.commit.Submit(context.Background(), func(ctx context.Context, tx bun.Tx) error {
				return t.rollbackBet(ctx, tx, b, StatusPending, StatusVoid, reason)
			})
		}
	})
	if err != nil {
		return BetResult{}, err
	}
	if cerr := <-done; cerr != nil {
		t.logger.Error("committing a debit outcome failed; recovery at boot rolls it back", "bet_id", b.rec.ID, "err", cerr)
		if answer == nil {
			answer = fmt.Errorf("engine: commit bet: %w", cerr)
		}
	}
	t.notifyQueue()
	if void && demo {
		t.refundDemo(b)
	}
	t.hub.send(b.player.Session, &Event{Type: EventBet, Bet: view})
	if answer != nil {
		return BetResult{}, answer
	}
	if res.HasBalance {
		t.hub.send(b.player.Session, &Event{Type: EventBalance, Balance: res.Balance, Currency: b.rec.Currency})
	}
	return BetResult{Bet: *view, Balance: res.Balance}, nil
}

// Cashout cashes a bet out at the multiplier of receivedAt, the moment the
// server received the request; it is refused once that moment is past the crash.
func (t *Table) Cashout(ctx context.Context, p Player, betID string, receivedAt time.Time) (CashoutResult, error) {
	var (
		done <-chan error
		b    *liveBet
		out  CashoutResult
		rerr error
	)
	err := t.do(ctx, func() {
		r := t.cur
		if b = t.ownBet(p, betID); b == nil {
			rerr = ErrUnknownBet
			return
		}
		switch {
		case r.phase == PhaseBetting:
			rerr = ErrCashoutNotAllowed
		case b.state == StatusLost || r.phase == PhaseCrashed || !receivedAt.Before(r.crashAt):
			rerr = ErrRoundCrashed
		case b.state != StatusAccepted:
			rerr = ErrCashoutNotAllowed
		default:
			done = t.cashout(b, Multiplier(receivedAt.Sub(r.started)), receivedAt)
			out = CashoutResult{BetID: b.rec.ID, Multiplier: b.rec.Multiplier, Payout: *b.rec.Payout}
		}
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
		out.Balance, out.HasBalance = t.cfg.Demo.Balance(p.Session)
	}
	return out, nil
}

// cashout settles b at multiplier m, in the loop: the state changes at once,
// the bet's update and its /win movement commit together, and a goroutine
// delivers the outcome once committed. It returns the commit's outcome.
func (t *Table) cashout(b *liveBet, m int64, at time.Time) <-chan error {
	op, _ := t.cfg.Operators(b.rec.Operator)
	var maxWin int64
	if op != nil {
		if l, ok := op.Currency(b.rec.Currency); ok && l.MaxWin != nil {
			maxWin = *l.MaxWin
		}
	}
	payout := Payout(b.rec.Amount, m, maxWin) // capped at max_win (LIM-14)
	b.state, b.rec.Status, b.rec.Multiplier, b.rec.Payout = StatusCashedOut, StatusCashedOut, m, &payout
	t.public = append(t.public, b.item())
	rec := b.rec
	settled := store.MillisOf(at)
	done := t.commit.Submit(context.Background(), func(ctx context.Context, tx bun.Tx) error {
		ok, err := setBetStatus(ctx, tx, rec.ID, StatusAccepted, StatusCashedOut, settled, func(q *bun.UpdateQuery) *bun.UpdateQuery {
			return q.Set("multiplier = ?", m).Set("payout = ?", payout)
		})
		if err != nil {
			return err
		}
		if !ok {
			return ErrRoundCrashed
		}
		if rec.Demo {
			return nil
		}
		winType := wallet.WinTypeWin
		if rec.FreebetID != nil {
			winType = wallet.WinTypeFreebet // WIN-4; the payout includes the stake (WIN-16)
		}
		return enqueue(ctx, tx, wallet.Movement{
			TransactionID: rec.ID + "-w", Kind: wallet.KindWin,
			Operator: rec.Operator, GameID: rec.GameID, Currency: rec.Currency, PlayerID: rec.PlayerID,
			Token: rec.Token, RoundID: rec.RoundID, BetID: rec.ID, Amount: payout,
			WinType: winType, FreebetID: rec.FreebetID, // inherited from the debit (WIN-17)
		}, t.clock.Now())
	})
	out := make(chan error, 1)
	go func() {
		err := <-done
		if err == nil {
			t.notifyQueue()
			if rec.Demo {
				bal := t.cfg.Demo.Credit(rec.SessionHash, payout)
				t.hub.send(rec.SessionHash, &Event{Type: EventBalance, Balance: bal, Currency: rec.Currency})
			}
			v := viewOf(rec)
			t.hub.send(rec.SessionHash, &Event{Type: EventBet, Bet: &v})
		} else {
			t.logger.Error("cashout commit failed", "bet_id", rec.ID, "err", err)
		}
		out <- err
	}()
	return out
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
// back (RB-2). Once the rollback committed, settle (may be nil) gives the
// balance the answer carries. Cancelling again, at once or later in the round,
// waits for the first cancel and answers exactly what it answered: the bet
// stays in the round as cancelled until the round ends.
func (t *Table) Cancel(ctx context.Context, p Player, betID string, settle func(BetView) int64) (CancelResult, error) {
	var (
		done  <-chan error
		b     *liveBet
		c     *cancellation
		first bool
		rerr  error
	)
	err := t.do(ctx, func() {
		r := t.cur
		if b = t.ownBet(p, betID); b == nil {
			rerr = ErrUnknownBet
			return
		}
		if c = b.cancel; c != nil {
			return // a repeat
		}
		if r.phase != PhaseBetting || b.state != StatusAccepted {
			rerr = ErrCancelNotAllowed
			return
		}
		c, first = &cancellation{done: make(chan struct{})}, true
		b.cancel = c
		b.state, b.rec.Status = StatusCancelled, StatusCancelled
		c.res.Bet = *b.view()
		r.count[p.key()]--
		done = t.commit.Submit(context.Background(), func(ctx context.Context, tx bun.Tx) error {
			return t.rollbackBet(ctx, tx, b, StatusAccepted, StatusCancelled, "cancelled by the player")
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
			if settle != nil {
				c.res.Balance = settle(c.res.Bet)
			}
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
