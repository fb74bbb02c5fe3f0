package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/crashstudio/crashgame/internal/store"
)

// Recover settles what a previous process of this game left unfinished, before
// Run (RB-5): a round that never finished is voided, and every bet of it still
// pending (debit outcome unknown) or accepted (never cashed out) is rolled back
// through the queue; so is a bet left pending in any other round. Bets that were
// cashed out keep their win, which is already in the queue. It returns the
// number of bets rolled back.
func (t *Table) Recover(ctx context.Context) (int, error) {
	unfinished, err := t.store.UnfinishedRounds(ctx, t.game.ID)
	if err != nil {
		return 0, fmt.Errorf("engine: %w", err)
	}
	// Every bet left pending, and every bet still accepted in a round that
	// never finished.
	bets, err := t.store.Bets(ctx, store.BetFilter{GameID: t.game.ID, Statuses: []string{StatusPending}})
	if err != nil {
		return 0, fmt.Errorf("engine: orphan bets: %w", err)
	}
	if len(unfinished) > 0 {
		accepted, err := t.store.Bets(ctx, store.BetFilter{GameID: t.game.ID, RoundIDs: unfinished, Statuses: []string{StatusAccepted}})
		if err != nil {
			return 0, fmt.Errorf("engine: orphan bets: %w", err)
		}
		bets = append(bets, accepted...)
	}
	n, err := t.rollBackOrphans(ctx, bets, unfinished, "orphan bet found at boot")
	if err != nil {
		return 0, fmt.Errorf("engine: recover %s: %w", t.game.ID, err)
	}
	if n > 0 || len(unfinished) > 0 {
		t.logger.Warn("recovered after an unclean stop", "rounds_voided", len(unfinished), "bets_rolled_back", n)
		t.notifyQueue()
	}
	return n, nil
}

// orphanAge is how long a bet may stay pending before the sweep takes its
// outcome for unknown: its attempts stop when its betting window closes, and
// the last one ends within the client's timeout.
const orphanAge = time.Minute

// sweepPending rolls back the bets of this game left pending in earlier rounds
// (a debit whose outcome stayed unknown because a commit failed), while the
// table runs, so that they need not wait for the next boot.
func (t *Table) sweepPending(ctx context.Context, currentRound string) {
	bets, err := t.store.Bets(ctx, store.BetFilter{GameID: t.game.ID, Statuses: []string{StatusPending},
		ExceptRound: currentRound, PlacedBefore: store.MillisOf(t.clock.Now().Add(-orphanAge)), Limit: 1000})
	if err != nil {
		t.logger.Warn("sweeping pending bets failed", "err", err)
		return
	}
	if len(bets) == 0 {
		return
	}
	n, err := t.rollBackOrphans(ctx, bets, nil, "debit outcome unknown after its round")
	if err != nil {
		t.logger.Warn("sweeping pending bets failed", "err", err)
		return
	}
	t.logger.Warn("pending bets of earlier rounds rolled back", "bets", n)
	t.notifyQueue()
}

// rollBackOrphans voids bets (each from the status it was read in, so a bet
// settled meanwhile is left alone), queues their rollbacks, and voids the
// unfinished rounds, in one transaction. It returns how many it rolled back.
func (t *Table) rollBackOrphans(ctx context.Context, bets []store.BetRecord, unfinished []string, reason string) (int, error) {
	now := store.MillisOf(t.clock.Now())
	n := 0
	err := t.store.InTx(ctx, func(ctx context.Context) error {
		n = 0
		for _, b := range bets {
			ok, err := t.store.MoveBet(ctx, b.ID, b.Status, StatusVoid, store.BetChange{SettledAt: now})
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
			p := Player{Session: b.SessionHash, Operator: b.Operator, PlayerID: b.PlayerID, Token: b.Token, Currency: b.Currency, Demo: b.Demo}
			if err := t.queueRollback(ctx, b, p, reason); err != nil {
				return err
			}
			n++
		}
		return t.store.VoidRounds(ctx, unfinished...)
	})
	return n, err
}
