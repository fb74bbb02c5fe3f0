package replica

import (
	"errors"
	"fmt"
	"testing"

	"github.com/crashstudio/crashgame/internal/cluster"
	"github.com/crashstudio/crashgame/internal/engine"
	"github.com/crashstudio/crashgame/internal/leadership"
	"github.com/crashstudio/crashgame/internal/round"
)

// A refusal of the leader reaches the requester as the same engine error, so
// that a player on any replica gets the code the leader's own player would.
func TestRefusalsCrossTheCluster(t *testing.T) {
	t.Parallel()
	fenced := fmt.Errorf("engine: commit cashout: commit: %w: %w", engine.ErrTableUnavailable, leadership.ErrFenced)
	cases := []struct {
		name string
		err  error
		want error // nil: no code, a failure of the leader
	}{
		{"betting closed", fmt.Errorf("engine: %w", round.ErrBettingClosed), round.ErrBettingClosed},
		{"a commit refused by the fence", fenced, engine.ErrTableUnavailable},
		{"a stopping leader", engine.ErrStopped, engine.ErrStopped},
		{"the wallet", engine.ErrWalletUnavailable, engine.ErrWalletUnavailable},
		{"anything else", errors.New("disk full"), nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var h *cluster.HandlerError
			if !errors.As(refusalOf(tc.err), &h) {
				if tc.want != nil {
					t.Fatalf("refusalOf(%v) has no code", tc.err)
				}
				return
			}
			if tc.want == nil {
				t.Fatalf("refusalOf(%v) has code %s, want none", tc.err, h.Code)
			}
			for i := 0; i < 20; i++ { // the same code every time
				var again *cluster.HandlerError
				errors.As(refusalOf(tc.err), &again)
				if again.Code != h.Code {
					t.Fatalf("refusalOf(%v) is %s, then %s", tc.err, h.Code, again.Code)
				}
			}
			if got := errorOf(h); !errors.Is(got, tc.want) {
				t.Fatalf("errorOf(%s) = %v, want %v", h.Code, got, tc.want)
			}
		})
	}
	// Every refusal of the one list crosses unchanged: the requester's error
	// is the same refusal, with the same code, so the player API answers a
	// player on a replica exactly as the leader's own (ErrUnknownRound
	// included, which an older list left out and made a 500).
	for _, r := range engine.Refusals {
		var h *cluster.HandlerError
		if !errors.As(refusalOf(fmt.Errorf("engine: an action: %w", r.Err)), &h) || h.Code != r.Code {
			t.Fatalf("refusal %s (%v) crossed as %+v", r.Code, r.Err, h)
		}
		got, ok := engine.RefusalOf(errorOf(h))
		if !ok || got.Code != r.Code || got.Err != r.Err {
			t.Fatalf("refusal %s came back as %+v (%v)", r.Code, got, ok)
		}
	}
	wr := &engine.RefusedError{Code: "INSUFFICIENT_FUNDS", Balance: 50, HasBalance: true}
	var h *cluster.HandlerError
	if !errors.As(refusalOf(wr), &h) {
		t.Fatal("a wallet refusal has no code")
	}
	var got *engine.RefusedError
	if !errors.As(errorOf(h), &got) || *got != *wr {
		t.Fatalf("a wallet refusal came back as %v", errorOf(h))
	}
}
