package engine_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/internal/engine"
	"github.com/crashstudio/crashgame/internal/store"
)

// takeOffFails is the table's store whose next TakeOffRound fails once armed.
type takeOffFails struct {
	engine.Store
	armed atomic.Bool
}

func (s *takeOffFails) TakeOffRound(ctx context.Context, id string, at time.Time) error {
	if s.armed.CompareAndSwap(true, false) {
		return errors.New("injected: the database refused the take-off")
	}
	return s.Store.TakeOffRound(ctx, id, at)
}

// A round whose take-off the database refuses is voided (RB-4) and records
// that rule and when, never a crash: void_rule takeoff_failed, voided_at the
// moment of the refusal, no crashed_at.
func TestTakeOffFailedRecordsItsRule(t *testing.T) {
	t.Parallel()
	var st *takeOffFails
	h := newHarnessAdjusted(t, "", nil, nil, func(c *engine.Config) {
		st = &takeOffFails{Store: c.Store}
		c.Store = st
	})
	h.run()
	v, _ := h.table.Round()
	st.armed.Store(true)
	h.clock.Set(v.BettingEndsAt.Add(engine.DefaultDebitGrace))
	eventually(t, "the round is voided", func() bool {
		r, err := h.st.Round(context.Background(), "crash", v.RoundID)
		return err == nil && r.Status == engine.RoundVoid
	})
	r, err := h.st.Round(context.Background(), "crash", v.RoundID)
	if err != nil || r.VoidRule != engine.VoidTakeOffFailed || r.VoidedAt != store.MillisOf(v.BettingEndsAt.Add(engine.DefaultDebitGrace)) ||
		r.CrashedAt != 0 || r.StartedAt != 0 || r.Hash == "" {
		t.Fatalf("the round refused at take-off: %+v, %v; want void by %q at the refusal, no take-off nor crash, its hash revealed",
			r, err, engine.VoidTakeOffFailed)
	}
}
