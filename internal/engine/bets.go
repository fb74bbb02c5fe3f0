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
	// Forwarded: another replica received the bet and runs its money path.
	// It also fires the bet's auto-cashout (PayDebitedAutos); the leader's round
	// only shows it, and pays it after the crash if that replica has not
	// (payAutosLeft).
	Forwarded bool
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
	// Note is what the table's leader is told of the cashout (Cashed) when
	// the table that took it does not lead.
	Note CashoutNote
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

// PlaceBet places a bet where the table leads: the same five steps a
// replica of a cluster takes for a bet it receives (package replica), with
// the leader's two steps run here: CheckBet, Admit (leader), Debit, Decide
// (leader), Accept.
func (t *Table) PlaceBet(ctx context.Context, p Player, req BetRequest) (BetResult, error) {
	w, err := t.CheckBet(p, req)
	if err != nil {
		return BetResult{}, err
	}
	adm, err := t.Admit(ctx, p, req)
	if err != nil {
		return BetResult{}, err
	}
	out, err := t.Debit(ctx, p, req, w, adm)
	if err != nil {
		t.Release(p.Session, adm.BetID)
		return BetResult{}, err
	}
	dec, err := t.Decide(ctx, p.Session, adm, out)
	if err != nil {
		return BetResult{}, err
	}
	return t.Accept(ctx, p, adm, out, dec)
}

// CheckBet applies the checks a bet passes before it asks for a place in the
// round: the rules of the player's currency (betRules), and, for real
// money, the operator's wallet with its breaker closed. It returns the
// wallet that debits the bet (nil for a demo session). It runs where the bet
// was received.
func (t *Table) CheckBet(p Player, req BetRequest) (BetWallet, error) {
	if _, err := t.betRules(p, req); err != nil {
		return nil, err
	}
	if p.Demo {
		return nil, nil
	}
	w, ok := t.cfg.Wallets(p.Operator)
	if !ok {
		return nil, fmt.Errorf("engine: no wallet for operator %q", p.Operator)
	}
	if w.BreakerOpen() {
		return nil, ErrWalletUnavailable
	}
	return w, nil
}

// betRules applies the rules of a bet: a known operator, the limits of the
// player's currency (a freebet's stake is the grant's), round.CheckBet, and
// freebets offered to this player and game. It returns the currency's
// limits.
func (t *Table) betRules(p Player, req BetRequest) (round.Limits, error) {
	op, ok := t.cfg.Operators[p.Operator]
	if !ok {
		return round.Limits{}, fmt.Errorf("engine: unknown operator %q", p.Operator)
	}
	lim, known := op.Currencies[p.Currency]
	if req.FreebetID == "" && !known {
		return round.Limits{}, round.ErrBetLimit
	}
	if err := round.CheckBet(req.Amount, req.AutoCashout, req.FreebetID != "", lim, t.game.MaxMultiplier); err != nil {
		return round.Limits{}, err
	}
	if req.FreebetID != "" && (p.Demo || t.cfg.Freebets == nil || !t.game.Freebet) {
		return round.Limits{}, ErrFreebetUnavailable
	}
	return lim, nil
}

// Admission is a bet's place in the current round, as the table's leader
// gave it (Admit): the bet's id and round, the instant it was admitted at
// (its placed_at), until when its debit may be answered, and the term of
// leadership that admitted it. The bet's intent commits, and its outcome is
// decided, only while that term holds the table.
type Admission struct {
	BetID    string
	RoundID  string
	PlacedAt time.Time
	Deadline time.Time // the round's window end plus DebitGrace: no /bet attempt starts at or after it
	Epoch    int64
	// term is the admitting term's context when the bet was admitted in this
	// process (its attempts end with the term); nil for an admission that
	// came from the leader over the cluster (they end at Deadline).
	term context.Context
}

// Admit reserves a place for the bet in the current round (the rules decide
// phase, window and the five bets a player may hold), admitted at
// req.ReceivedAt, or at the table's now when that is zero or later. The
// table must lead: the place is held until Decide or Release. The leader's
// share of a bet is this and Decide; the money path between them (Debit)
// runs where the bet was received.
func (t *Table) Admit(ctx context.Context, p Player, req BetRequest) (Admission, error) {
	lim, err := t.betRules(p, req)
	if err != nil {
		return Admission{}, err
	}
	var (
		adm  Admission
		rerr error
	)
	now := t.clock.Now()
	if !req.ReceivedAt.IsZero() && req.ReceivedAt.Before(now) {
		now = req.ReceivedAt
	}
	err = t.do(ctx, func() {
		r := t.cur
		if r == nil || t.epoch == 0 {
			rerr = round.ErrBettingClosed
			return
		}
		id := "b_" + randomID(15)
		if _, rerr = r.core.Admit(now, round.Intent{ID: id, Owner: string(p.Session), Player: p.key(),
			Amount: req.Amount, AutoCashout: req.AutoCashout, MaxWin: lim.MaxWin}); rerr != nil {
			return
		}
		placed := toMillis(now)
		r.live[id] = &liveBet{rec: t.betRecord(id, r.rec.ID, p, req, placed), player: p, round: r,
			elsewhere: req.Forwarded && !p.Demo}
		// The debit may be answered until the round takes off (DebitGrace).
		adm = Admission{BetID: id, RoundID: r.rec.ID, PlacedAt: placed,
			Deadline: r.core.BettingEnds().Add(t.cfg.DebitGrace), Epoch: t.epoch, term: t.term}
	})
	if err == nil {
		err = rerr
	}
	if err != nil {
		return Admission{}, err
	}
	return adm, nil
}

// betRecord is the pending bet id of round roundID, placed by p at placed.
func (t *Table) betRecord(id, roundID string, p Player, req BetRequest, placed time.Time) BetRecord {
	return BetRecord{
		ID: id, RoundID: roundID, GameID: t.game.ID, SessionHash: p.Session,
		Operator: p.Operator, PlayerID: p.PlayerID, Token: p.Token, PlayerName: p.Name, Currency: p.Currency,
		Demo: p.Demo, Amount: req.Amount, AutoCashout: req.AutoCashout, Status: StatusPending, PlacedAt: placed,
	}
}

// Release frees the place of a bet that Admit gave and that never reached
// the wallet (its intent did not commit). The table must lead; a bet it
// does not hold is left alone.
func (t *Table) Release(session []byte, betID string) {
	_ = t.do(context.Background(), func() {
		if b := t.ownBet(session, betID); b != nil && b.rec.Status == StatusPending {
			b.round.core.Forget(betID)
			delete(b.round.live, betID)
		}
	})
}

// DebitOutcome is what the money path of an admitted bet came to where it
// ran (Debit): the stake and grant its committed intent spent, and what the
// operator's wallet answered to its /bet (the zero Result for a demo bet,
// whose play money the leader's bank takes in Decide).
type DebitOutcome struct {
	Amount    int64
	FreebetID *string
	Result    wallet.Result
}

// Debit runs the money path of the admitted bet adm where the bet was
// received: it commits the bet's intent (and spends its freebet) for the
// admitting term, then sends the signed /bet through w, attempted until
// adm.Deadline and, for a bet admitted here, no longer than the admitting
// term. An error means the intent did not commit and nothing was sent: the
// place is the leader's to Release.
func (t *Table) Debit(ctx context.Context, p Player, req BetRequest, w BetWallet, adm Admission) (DebitOutcome, error) {
	start := t.clock.Now()
	if !p.Demo {
		// A debit this process would learn the outcome of after the round's
		// debit deadline would be rolled back: refused now, before its
		// intent or its /bet, so no money moves for nothing.
		if need := t.pace.estimate(start); need > 0 && start.Add(need).After(adm.Deadline) {
			t.shed.Add(1)
			return DebitOutcome{}, fmt.Errorf("%w: its debit takes about %s here and %s is left before its round's debit deadline",
				ErrTableBusy, need.Round(time.Millisecond), adm.Deadline.Sub(start).Round(time.Millisecond))
		}
	}
	rec := t.betRecord(adm.BetID, adm.RoundID, p, req, adm.PlacedAt)
	err := t.commit.Do(ctx, job{epoch: adm.Epoch, run: func(ctx context.Context) error {
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
		if req.FreebetID != "" && errors.Is(err, ErrFreebetUnavailable) {
			return DebitOutcome{}, ErrFreebetUnavailable
		}
		return DebitOutcome{}, fmt.Errorf("engine: commit bet intent: %w", err)
	}
	t.debited.put(rec)
	out := DebitOutcome{Amount: rec.Amount, FreebetID: rec.FreebetID}
	if p.Demo {
		return out, nil
	}
	// The attempts end with the term that admitted the bet, not with the
	// player's request: a player who leaves does not stop a debit, whose
	// outcome must be known; a leader that lost the table must stop, since
	// the next one may roll the bet back. An admission from another process
	// ends at its deadline, which the next leader's recovery waits for
	// (awaitDebits).
	term := adm.term
	if term == nil {
		term = context.WithoutCancel(ctx)
	}
	out.Result, _ = w.BetUntil(term, wallet.BetCall{
		PlayerID: p.PlayerID, Token: p.Token, Currency: p.Currency, GameID: t.game.ID,
		Amount: rec.Amount, TransactionID: rec.ID, RoundID: rec.RoundID, FreebetID: rec.FreebetID,
	}, adm.Deadline)
	if o := out.Result.Outcome; o == wallet.Success || o == wallet.Refused {
		now := t.clock.Now()
		t.pace.took(now, now.Sub(start))
	}
	return out, nil
}

// ownBet returns session's bet betID in the current round, or nil. Loop only.
func (t *Table) ownBet(session []byte, betID string) *liveBet {
	if t.cur == nil {
		return nil
	}
	b := t.cur.live[betID]
	if b == nil || string(b.player.Session) != string(session) {
		return nil
	}
	return b
}

// Decide feeds the outcome of an admitted bet's debit (Debit) to its round,
// in the loop, for the admitting term: the bet is accepted, refused (a
// freebet's grant returned), or voided and rolled back (its debit came after
// take-off, or its outcome is unknown), as the rules decide. A refusal or a
// void is committed here, then answered with its error. An acceptance is
// answered at once, with no commit: the replica that debited the bet
// commits it (Accept), and the round's take-off commits every acceptance
// that has not committed by then (takeOff). The table must lead at
// adm.Epoch: a table whose term ended meanwhile commits nothing and leaves
// the pending bet to the next leader's recovery. A demo bet's play money is
// taken here, from the leader's bank.
func (t *Table) Decide(ctx context.Context, session []byte, adm Admission, out DebitOutcome) (BetResult, error) {
	var (
		d    debitDecision
		b    *liveBet
		res  wallet.Result
		demo bool
	)
	// Not the caller's ctx: a player who leaves, or a requester that stops
	// waiting, must not leave a debited bet undecided.
	err := t.do(context.WithoutCancel(ctx), func() {
		if b = t.ownBet(session, adm.BetID); b == nil || b.rec.Status != StatusPending || t.epoch != adm.Epoch {
			b = nil
			return
		}
		demo, res = b.rec.Demo, out.Result
		if demo {
			res = t.debitDemo(session, out.Amount)
		}
		d = t.decideDebit(b, out, res, adm.Epoch)
	})
	if err != nil {
		return BetResult{}, err
	}
	if b == nil {
		// The round moved on, or another term leads: the bet, still pending
		// in the database, is the recovery's or the sweep's to roll back.
		return BetResult{}, fmt.Errorf("%w: the table no longer holds bet %s pending", ErrTableUnavailable, adm.BetID)
	}
	if d.accepted {
		return BetResult{Bet: *d.view, Balance: res.Balance}, nil
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
	t.events.Send(b.player.Session, &Event{Type: EventBet, Bet: d.view})
	if refused := (*RefusedError)(nil); errors.As(d.answer, &refused) && refused.HasBalance && !demo {
		t.cfg.Balances.Reported(b.player.Session, refused.Balance) // the wallet's figure (WERR-7)
	}
	return BetResult{}, d.answer
}

// Accept commits the acceptance the leader decided (Decide answered dec) of
// the bet adm admitted, whose money path ran here (Debit, out), in this
// table's committer, and answers the player once it committed: the bet's
// event, and the balance the wallet answered (BAL-4), which the session's
// balance now shows. The commit moves the bet from pending only, so the row
// itself fences it: the round's take-off, which accepts every bet its round
// accepted that is still pending, may have moved it first (a replica slow
// to commit, or paused), and the player is then answered from the row as it
// reads (accepted, or settled since); a round voided meanwhile (a new
// leader's recovery, a failed take-off) leaves the bet void and its debit
// rolled back, and the player is told the table was unavailable, the stream
// showing the void bet.
func (t *Table) Accept(ctx context.Context, p Player, adm Admission, out DebitOutcome, dec BetResult) (BetResult, error) {
	opTx := out.Result.OperatorTxID
	var moved bool
	// Not the caller's ctx: a player who leaves must not leave to the
	// take-off an acceptance that can commit now.
	err := t.commit.Do(context.WithoutCancel(ctx), job{epoch: unfenced, run: func(ctx context.Context) error {
		var err error
		moved, err = t.store.MoveBet(ctx, adm.BetID, StatusPending, StatusAccepted, BetChange{OperatorTxID: opTx})
		return err
	}})
	if err != nil {
		// The bet stays pending: the take-off accepts it, or a recovery
		// rolls it back; the stream shows which.
		t.logger.Error("committing a bet's acceptance failed; the round's take-off commits it", "bet_id", adm.BetID, "err", err)
		return BetResult{}, fmt.Errorf("%w: the bet's acceptance did not commit here: %w", ErrTableUnavailable, err)
	}
	view := dec.Bet
	if !moved {
		recs, err := t.store.Bets(context.WithoutCancel(ctx), BetFilter{ID: adm.BetID})
		if err != nil || len(recs) != 1 {
			return BetResult{}, fmt.Errorf("%w: bet %s moved before its acceptance committed here, and reading it failed (%d rows): %v", ErrTableUnavailable, adm.BetID, len(recs), err)
		}
		view = viewOf(recs[0])
	}
	t.debited.decided(adm.RoundID, adm.BetID, view.Status)
	switch view.Status {
	case StatusAccepted, StatusCashedOut, StatusLost:
		// Committed here, or accepted by the take-off first; the round may
		// have settled it since.
	default:
		return BetResult{}, fmt.Errorf("%w: bet %s was %s before its acceptance committed here", ErrTableUnavailable, adm.BetID, view.Status)
	}
	t.events.Send(p.Session, &Event{Type: EventBet, Bet: &view})
	if p.Demo || out.Result.HasBalance {
		// BAL-4; a demo bet's figure is its bank's. The sessions show it.
		t.cfg.Balances.Reported(p.Session, dec.Balance)
	}
	return BetResult{Bet: view, Balance: dec.Balance}, nil
}

// debitDemo takes a demo bet's stake from the bank, as a wallet would.
func (t *Table) debitDemo(session []byte, amount int64) wallet.Result {
	bal, derr := t.cfg.Demo.Debit(session, amount)
	res := wallet.Result{Outcome: wallet.Success, Balance: bal, HasBalance: true}
	var refused *RefusedError
	if errors.As(derr, &refused) {
		res = wallet.Result{Outcome: wallet.Refused, ErrorCode: refused.Code, Balance: refused.Balance, HasBalance: refused.HasBalance}
	}
	return res
}

// debitDecision is what the rules decided, in the loop, of a bet's debit
// outcome (decideDebit).
type debitDecision struct {
	done     <-chan error // the commit of a refusal or a void; nil when nothing was committed
	answer   error        // the player's answer; nil for an accepted bet
	view     *BetView     // the bet as decided, taken in the loop, which owns b
	void     bool         // the bet was voided
	accepted bool         // the bet was accepted: committed by Accept, or the take-off
}

// decideDebit feeds the /bet outcome res to b's round, b's intent having
// committed with out's stake and grant: the bet accepted (on the board; its
// commit is Accept's, or the take-off's), or refused (a freebet's grant
// returned) or voided and rolled back, each submitted for the term of
// epoch. Loop only.
func (t *Table) decideDebit(b *liveBet, out DebitOutcome, res wallet.Result, epoch int64) debitDecision {
	var d debitDecision
	outcome := round.Undecided
	switch res.Outcome {
	case wallet.Success:
		outcome = round.Debited
	case wallet.Refused:
		outcome = round.Refusal
	}
	b.rec.Amount, b.rec.FreebetID = out.Amount, out.FreebetID
	r := b.round
	core, derr := r.core.Debited(b.rec.ID, out.Amount, outcome, t.clock.Now())
	if derr != nil {
		d.answer = fmt.Errorf("engine: debit outcome of %s: %w", b.rec.ID, derr)
		return d
	}
	b.rec.Status = string(core.State)
	d.view, d.void = b.view(core.State), core.State == round.Voided
	switch core.State {
	case round.Accepted:
		// Committed where the bet was debited (Accept), or by the take-off.
		b.rec.OperatorTxID, d.accepted = res.OperatorTxID, true
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
		switch {
		case res.Outcome == wallet.Success:
			reason, d.answer = reasonDebitLate, round.ErrBettingClosed
		case res.Reason == wallet.ReasonWindowClosed:
			// Nothing was sent: the bet is refused as one shed before
			// its debit (TABLE_BUSY), which the player may place again.
			d.answer = fmt.Errorf("engine: bet %s not sent to the wallet: %w (%w)", b.rec.ID, ErrTableBusy, errDebitNotSent)
		default:
			d.answer = ErrWalletUnavailable
		}
		// The player is refused a bet they sent in time: say why, with
		// the wallet's last answer (its attempts log at debug when cut).
		if res.Reason == wallet.ReasonWindowClosed {
			// The game was late, not the wallet: the player is not told
			// the wallet did not answer (TABLE_BUSY, not
			// WALLET_UNAVAILABLE). The rollback is still queued: only the
			// replica that ran the debit knows nothing left, and a rollback
			// of a transaction the wallet never saw is answered 200 (RB-13).
			t.logger.Error("a bet's /bet was not sent: its intent committed after its debit deadline (the game was too slow, not the wallet); the bet is void and its rollback queued",
				"round_id", r.rec.ID, "bet_id", b.rec.ID, "reason", reason)
		} else {
			t.logger.Warn("a bet's debit was not confirmed in its betting window: the bet is void and its rollback queued",
				"round_id", r.rec.ID, "bet_id", b.rec.ID, "reason", reason,
				"wallet_outcome", res.Outcome.String(), "wallet_reason", res.Reason, "http_status", res.HTTPStatus)
		}
		delete(r.live, b.rec.ID)
		d.done = t.submitAt(epoch, func(ctx context.Context) error {
			_, err := t.rollbackBet(ctx, b, StatusPending, StatusVoid, reason)
			return err
		})
	}
	return d
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
		if b = t.ownBet(p.Session, betID); b == nil {
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
			_, err := t.rollbackAccepted(ctx, b, StatusCancelled, reasonCancelled)
			return err
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
