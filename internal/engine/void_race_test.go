package engine_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/crashstudio/crashgame/integration/pgtest"
	"github.com/crashstudio/crashgame/internal/engine"
	"github.com/crashstudio/crashgame/internal/movements"
)

// acceptedDuringItsVoid is a table's store on which the take-off's own
// commit of the acceptances is cut once armed (its context ended: the term's
// deadline, a loaded machine), so the round is voided, and on which the
// replica that debited bet commits that bet's acceptance just after the
// void's first statement on the bet: between the void's statements, where
// it takes more than one.
type acceptedDuringItsVoid struct {
	engine.Store
	bet   string
	armed atomic.Bool
	once  sync.Once
}

func (s *acceptedDuringItsVoid) MoveDecidedBets(ctx context.Context, roundID, from, to string, txIDs map[string]string) (int, error) {
	if s.armed.CompareAndSwap(true, false) {
		return 0, fmt.Errorf("injected: %w", context.Canceled)
	}
	return s.Store.MoveDecidedBets(ctx, roundID, from, to, txIDs)
}

func (s *acceptedDuringItsVoid) MoveBet(ctx context.Context, id, from, to string, ch engine.BetChange) (bool, error) {
	moved, err := s.Store.MoveBet(ctx, id, from, to, ch)
	if err == nil && id == s.bet && to == engine.StatusVoid {
		err = s.accept(ctx)
	}
	return moved, err
}

func (s *acceptedDuringItsVoid) MoveOpenBet(ctx context.Context, id, to string, ch engine.BetChange) (bool, error) {
	moved, err := s.Store.MoveOpenBet(ctx, id, to, ch)
	if err == nil && id == s.bet && to == engine.StatusVoid {
		err = s.accept(ctx)
	}
	return moved, err
}

// accept commits the bet's acceptance as its replica does (Accept: from
// pending only), once.
func (s *acceptedDuringItsVoid) accept(ctx context.Context) error {
	var err error
	s.once.Do(func() {
		_, err = s.Store.MoveBet(ctx, s.bet, engine.StatusPending, engine.StatusAccepted, engine.BetChange{OperatorTxID: "op-" + s.bet})
	})
	return err
}

// RB-4: a round voided at its take-off rolls back every bet in play exactly
// once, also one whose acceptance its replica commits while the void moves
// it: the void moves the bet from either unsettled status in one statement,
// so the acceptance either lands first and is voided, or finds the bet void.
// Before, the void moved it "from accepted", then "from pending": an
// acceptance committed between the two left the bet accepted in a void
// round, debited and never refunded (seen in a cluster under load).
func TestRB4VoidSettlesABetAcceptedBetweenItsStatements(t *testing.T) {
	t.Parallel()
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			voidRacesAcceptance(t, backend)
		})
	}
}

func voidRacesAcceptance(t *testing.T, backend string) {
	dsn := ""
	if backend == "postgres" {
		dsn = pgtest.Start(t)
	}
	var st *acceptedDuringItsVoid
	h := newHarnessAdjusted(t, dsn, nil, nil, func(c *engine.Config) {
		st = &acceptedDuringItsVoid{Store: c.Store}
		c.Store = st
	})
	{
		ctx := context.Background()
		p := playerOf("acme", "racing")
		h.run()
		v, _ := h.table.Round()
		adm, out := h.debited(p, engine.BetRequest{Amount: 600})
		if dec, err := h.table.Decide(ctx, p.Session, adm, out); err != nil || dec.Bet.Status != engine.StatusAccepted {
			t.Fatalf("decide: %+v, %v", dec, err)
		}
		st.bet = adm.BetID
		st.armed.Store(true)
		h.clock.Set(v.BettingEndsAt.Add(engine.DefaultDebitGrace))
		eventually(t, "the round is voided at its take-off", func() bool {
			r, err := h.st.Round(ctx, testGame.ID, v.RoundID)
			return err == nil && r.Status == engine.RoundVoid
		})
		if r, _ := h.st.Round(ctx, testGame.ID, v.RoundID); r.VoidRule != engine.VoidTakeOffFailed {
			t.Fatalf("the round is void by %q, want %q", r.VoidRule, engine.VoidTakeOffFailed)
		}
		if rec := h.bet(adm.BetID); rec.Status != engine.StatusVoid {
			t.Fatalf("the bet accepted during the void of its round = %s; want %s (refunded)", rec.Status, engine.StatusVoid)
		}
		rollbacks := 0
		for _, m := range h.movements() {
			if m.BetID == adm.BetID && m.Kind == movements.KindRollback {
				rollbacks++
				if m.Amount != 600 {
					t.Errorf("the rollback's amount = %d, want the debit's 600 (RB-6)", m.Amount)
				}
			}
		}
		if rollbacks != 1 {
			t.Fatalf("rollbacks of the bet: %d; want 1", rollbacks)
		}
	}
}

// missedByItsVoid is a table's store on which the void of a round misses
// bet (its acceptance lands instead of the void's move: the race before
// MoveOpenBet), and on which moving that bet out of accepted fails while
// refusing is set (a sick database).
type missedByItsVoid struct {
	engine.Store
	bet      string
	armed    atomic.Bool
	refusing atomic.Bool
}

func (s *missedByItsVoid) MoveDecidedBets(ctx context.Context, roundID, from, to string, txIDs map[string]string) (int, error) {
	if s.armed.CompareAndSwap(true, false) {
		return 0, fmt.Errorf("injected: %w", context.Canceled)
	}
	return s.Store.MoveDecidedBets(ctx, roundID, from, to, txIDs)
}

func (s *missedByItsVoid) MoveOpenBet(ctx context.Context, id, to string, ch engine.BetChange) (bool, error) {
	if id == s.bet && to == engine.StatusVoid {
		_, err := s.Store.MoveBet(ctx, id, engine.StatusPending, engine.StatusAccepted, engine.BetChange{OperatorTxID: "op-" + id})
		return false, err
	}
	return s.Store.MoveOpenBet(ctx, id, to, ch)
}

func (s *missedByItsVoid) MoveBet(ctx context.Context, id, from, to string, ch engine.BetChange) (bool, error) {
	if id == s.bet && from == engine.StatusAccepted && s.refusing.Load() {
		return false, fmt.Errorf("injected: the database refused the move of bet %s", id)
	}
	return s.Store.MoveBet(ctx, id, from, to, ch)
}

// RB-4: a bet a void round's settlement missed (left accepted in the void
// round) is counted (Unsettled, crashgame_unsettled_bets) while the sweep
// after the next crash cannot settle it, and is then refunded once by the
// sweep, with the debit's amount; the count is 0 again.
func TestRB4SweepRefundsABetItsVoidMissed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var st *missedByItsVoid
	h := newHarnessAdjusted(t, "", nil, nil, func(c *engine.Config) {
		st = &missedByItsVoid{Store: c.Store}
		c.Store = st
	})
	h.run()
	v, _ := h.table.Round()
	p := playerOf("acme", "missed")
	adm, out := h.debited(p, engine.BetRequest{Amount: 600})
	if dec, err := h.table.Decide(ctx, p.Session, adm, out); err != nil || dec.Bet.Status != engine.StatusAccepted {
		t.Fatalf("decide: %+v, %v", dec, err)
	}
	st.bet = adm.BetID
	st.refusing.Store(true)
	st.armed.Store(true)
	h.clock.Set(v.BettingEndsAt.Add(engine.DefaultDebitGrace))
	eventually(t, "the round is voided at its take-off", func() bool {
		r, err := h.st.Round(ctx, testGame.ID, v.RoundID)
		return err == nil && r.Status == engine.RoundVoid
	})
	if rec := h.bet(adm.BetID); rec.Status != engine.StatusAccepted {
		t.Fatalf("the bet the void missed = %s; want it left accepted", rec.Status)
	}
	// The void is stored before the view leaves the round: wait for the
	// next round's betting in the view.
	eventually(t, "the next round takes bets", func() bool {
		n, _ := h.table.Round()
		return n.RoundID != v.RoundID && n.Phase == engine.PhaseBetting
	})
	h.nextRound()
	eventually(t, "the unsettled bet is counted", func() bool { return h.table.Unsettled() == 1 })
	st.refusing.Store(false)
	h.nextRound()
	eventually(t, "the sweep refunds the bet", func() bool { return h.bet(adm.BetID).Status == engine.StatusVoid })
	eventually(t, "the count is 0 again", func() bool { return h.table.Unsettled() == 0 })
	var rollbacks []movements.MovementRecord
	for _, m := range h.movements() {
		if m.BetID == adm.BetID && m.Kind == movements.KindRollback {
			rollbacks = append(rollbacks, m)
		}
	}
	if len(rollbacks) != 1 || rollbacks[0].Amount != 600 || rollbacks[0].Reason != "take-off failed" {
		t.Fatalf("rollbacks of the bet: %+v; want one of 600, reason %q", rollbacks, "take-off failed")
	}
}
