package engine_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/internal/engine"
	"github.com/crashstudio/crashgame/internal/movements"
	"github.com/crashstudio/crashgame/internal/wallet"
)

// fakeFreebets holds open grants by id; the real queue is package freebets'.
type fakeFreebets struct {
	mu       sync.Mutex
	open     map[string]int64
	returned []string
}

func (f *fakeFreebets) Spend(_ context.Context, _ engine.Player, id string) (string, int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	amount, ok := f.open[id]
	if !ok {
		return "", 0, engine.ErrFreebetUnavailable
	}
	delete(f.open, id)
	return id, amount, nil
}

func (f *fakeFreebets) Return(_ context.Context, _ engine.Player, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.returned = append(f.returned, id)
	return nil
}

// Rule BET-7 BET-4 WIN-4 WIN-16 WIN-17 WIN-18 FB-8 FB-21 AMB-5: a freebet bet
// carries the grant's id and its full value as amount; its win is type
// freebet, the complete payout (stake included), and inherits the freebet_id,
// the one signal an operator may rely on that the prize is of a freebet.
func TestFreebetBetAndWin(t *testing.T) {
	t.Parallel()
	fb := &fakeFreebets{open: map[string]int64{"camp-7#1": 500}}
	h := newHarnessWith(t, fb)
	h.run()
	h.roundCrashingAbove(200)
	res := mustBet(t, h, alice, engine.BetRequest{Amount: 1, FreebetID: "camp-7#1", AutoCashout: 200})
	call := h.callsSnapshot()[0]
	if call.FreebetID == nil || *call.FreebetID != "camp-7#1" || call.Amount != 500 {
		t.Fatalf("/bet %+v", call)
	}
	if res.Bet.Amount != 500 || res.Bet.FreebetID == nil {
		t.Fatalf("bet %+v", res.Bet)
	}
	// The grant is spent: a second bet with it is refused.
	if _, err := h.table.PlaceBet(context.Background(), alice, engine.BetRequest{Amount: 1, FreebetID: "camp-7#1"}); !errors.Is(err, engine.ErrFreebetUnavailable) {
		t.Fatalf("second spend: %v", err)
	}
	h.nextRound()
	mv := h.movements()
	if len(mv) != 1 || mv[0].WinType != wallet.WinTypeFreebet || mv[0].Amount != 1000 || mv[0].FreebetID == nil || *mv[0].FreebetID != "camp-7#1" {
		t.Fatalf("win %+v", mv)
	}
}

// Rule FB-23 FB-24 AMB-18 RB-12: a freebet bet refused by the wallet, or rolled
// back, returns its grant to the queue; the rollback carries no freebet_id.
func TestFreebetReturned(t *testing.T) {
	t.Parallel()
	fb := &fakeFreebets{open: map[string]int64{"g1": 300, "g2": 300}}
	h := newHarnessWith(t, fb)
	h.wallet.answer = func(c wallet.BetCall, _ time.Time) wallet.Result {
		if c.FreebetID != nil && *c.FreebetID == "g1" {
			return wallet.Result{Outcome: wallet.Refused, ErrorCode: "PLAYER_BLOCKED"}
		}
		return wallet.Result{Outcome: wallet.Success, Balance: 1000, HasBalance: true}
	}
	h.run()
	if _, err := h.table.PlaceBet(context.Background(), alice, engine.BetRequest{FreebetID: "g1"}); err == nil {
		t.Fatal("refused freebet bet accepted")
	}
	b := mustBet(t, h, alice, engine.BetRequest{FreebetID: "g2"})
	if _, err := h.table.Cancel(context.Background(), alice, b.Bet.BetID); err != nil {
		t.Fatal(err)
	}
	fb.mu.Lock()
	returned := append([]string(nil), fb.returned...)
	fb.mu.Unlock()
	if len(returned) != 2 || returned[0] != "g1" || returned[1] != "g2" {
		t.Fatalf("returned %v", returned)
	}
	mv := h.movements()
	if len(mv) != 1 || mv[0].Kind != movements.KindRollback || mv[0].FreebetID != nil || mv[0].Amount != 300 {
		t.Fatalf("movements %+v", mv)
	}
}

// Rule FB-1: demo sessions and games without freebets refuse a freebet bet.
func TestFreebetUnavailableInDemo(t *testing.T) {
	t.Parallel()
	h := newHarnessWith(t, &fakeFreebets{open: map[string]int64{"g": 100}})
	h.run()
	demo := alice
	demo.Demo = true
	if _, err := h.table.PlaceBet(context.Background(), demo, engine.BetRequest{FreebetID: "g"}); !errors.Is(err, engine.ErrFreebetUnavailable) {
		t.Fatalf("err = %v", err)
	}
}
