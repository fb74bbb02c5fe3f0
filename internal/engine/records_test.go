package engine_test

import (
	"crypto/sha256"
	"testing"

	"github.com/crashstudio/crashgame/internal/engine"
	"github.com/crashstudio/crashgame/internal/store"
)

// The net position of a session (the session clock and the reality check) is
// computed from its bets: only the player's own money the wallet kept is
// staked, and every cashout's payout is won. Rule GEN-4: integer cents.
func TestSessionNetPosition(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, h *harness) {
		ctx := t.Context()
		round := &store.RoundRecord{ID: "rd-net", GameID: "crash", Seq: 987654, Hash: "h", CrashPoint: 250,
			RTPBasisPts: 9700, MaxMultiplier: 100000, Status: store.RoundFinished, BettingEndsAt: 1, CreatedAt: 1}
		if err := h.st.InsertRound(ctx, *round); err != nil {
			t.Fatal(err)
		}
		mine, other := sha256.Sum256([]byte("mine")), sha256.Sum256([]byte("other"))
		free := "camp#1"
		bets := []struct {
			id      string
			session []byte
			amount  int64
			status  string
			payout  *int64
			freebet *string
		}{
			{"b-accepted", mine[:], 1000, engine.StatusAccepted, nil, nil},
			{"b-cashed", mine[:], 500, engine.StatusCashedOut, cents(1250), nil},
			{"b-lost", mine[:], 300, engine.StatusLost, cents(0), nil},
			{"b-pending", mine[:], 7000, engine.StatusPending, nil, nil},
			{"b-refused", mine[:], 7000, engine.StatusRefused, nil, nil},
			{"b-cancelled", mine[:], 7000, engine.StatusCancelled, nil, nil},
			{"b-void", mine[:], 7000, engine.StatusVoid, nil, nil},
			{"b-free-won", mine[:], 200, engine.StatusCashedOut, cents(400), &free},
			{"b-free-lost", mine[:], 200, engine.StatusLost, cents(0), &free},
			{"b-other", other[:], 9999, engine.StatusCashedOut, cents(99999), nil},
		}
		for i, b := range bets {
			rec := &store.BetRecord{ID: b.id, RoundID: round.ID, GameID: "crash", SessionHash: b.session, Operator: "acme",
				PlayerID: "p-1", Currency: "BRL", Amount: b.amount, Status: b.status, Payout: b.payout, FreebetID: b.freebet,
				PlacedAt: store.Millis(1000 + i)}
			if err := h.st.InsertBet(ctx, rec); err != nil {
				t.Fatalf("insert %s: %v", b.id, err)
			}
		}
		got, err := engine.SessionNetPosition(ctx, h.st.Conn(ctx), mine[:])
		if err != nil {
			t.Fatal(err)
		}
		want := engine.NetPosition{Staked: 1000 + 500 + 300, Won: 1250 + 400}
		if got != want || got.Net() != -150 {
			t.Fatalf("net position = %+v (net %d), want %+v (net -150)", got, got.Net(), want)
		}
		empty := sha256.Sum256([]byte("no bets"))
		if got, err := engine.SessionNetPosition(ctx, h.st.Conn(ctx), empty[:]); err != nil || got != (engine.NetPosition{}) {
			t.Fatalf("a session without bets: %+v, %v", got, err)
		}

		live, err := engine.SessionHasLiveBets(ctx, h.st.Conn(ctx), mine[:])
		if err != nil || !live {
			t.Fatalf("live bets of a session holding accepted and pending bets: %v, %v", live, err)
		}
		if live, err := engine.SessionHasLiveBets(ctx, h.st.Conn(ctx), other[:]); err != nil || live {
			t.Fatalf("live bets of a session whose bets are settled: %v, %v", live, err)
		}
	})
}

func cents(v int64) *int64 { return &v }
