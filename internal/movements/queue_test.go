package movements_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/crashstudio/crashgame/internal/movements"
	"github.com/crashstudio/crashgame/internal/store"
	"github.com/crashstudio/crashgame/internal/wallet"
	"github.com/crashstudio/crashgame/internal/wallet/wallettest"
)

// TestQueueOutcomes: what each answer of the operator makes of a movement.
func TestQueueOutcomes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		movement   movements.Movement
		answers    []wallettest.Answer
		wantStatus movements.MovementStatus
		wantSends  int
		wantOpTx   string
	}{
		// Success on the third attempt: done, with the operator's own id (ENV-19).
		{"success on the 3rd attempt", mqWin("w-3rd"), []wallettest.Answer{wallettest.Error500, wallettest.Error500, wallettest.OK}, movements.StatusDone, 3, "op-77"},
		// Rule WERR-12 AMB-3: BET_NOT_FOUND in a 200 is a final refusal: parked.
		{"final refusal", mqWin("w-refused"), []wallettest.Answer{wallettest.Refusal}, movements.StatusRefused, 1, ""},
		// Rule WIN-12 AMB-3: a 4xx on /win refuses nothing; it is retried.
		{"4xx on /win retried", mqWin("w-404"), []wallettest.Answer{wallettest.Win404, wallettest.Win404, wallettest.OK}, movements.StatusDone, 3, "op-77"},
		// Rule WERR-20: a 5xx, whatever its body, is retried.
		{"5xx retried", mqRollback("rb-503"), []wallettest.Answer{wallettest.Plain503, wallettest.OK}, movements.StatusDone, 2, "op-77"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			mqEachBackend(t, func(t *testing.T, s *store.Store) {
				clock := newMQClock()
				op := wallettest.New(t, wallettest.Sequence(tc.answers...))
				var settled []wallet.Result
				var mu sync.Mutex
				q := mqQueue(t, s, wallettest.Client(t, op, wallet.WithClock(clock.Now)), movements.WithQueueClock(clock.Now),
					movements.WithOnSettled(func(m movements.Movement, r wallet.Result) {
						mu.Lock()
						defer mu.Unlock()
						settled = append(settled, r)
					}))
				mqEnqueue(t, s, clock.Now(), tc.movement)
				mqStart(t, q)
				rec := mqDrive(t, s, q, clock, tc.movement.TransactionID, 20*time.Second)

				if rec.Status != tc.wantStatus || rec.Attempts != tc.wantSends {
					t.Fatalf("status %s after %d attempts, want %s after %d (last error %q)",
						rec.Status, rec.Attempts, tc.wantStatus, tc.wantSends, rec.LastError)
				}
				if got := len(op.ByTx(tc.movement.TransactionID)); got != tc.wantSends {
					t.Errorf("operator received %d attempts, want %d", got, tc.wantSends)
				}
				if rec.OperatorTxID != tc.wantOpTx {
					t.Errorf("operator_tx_id %q, want %q", rec.OperatorTxID, tc.wantOpTx)
				}
				if rec.DoneAt.IsZero() || rec.ClaimedBy != "" {
					t.Errorf("done_at %v, claimed_by %q: want a final time and no claim", rec.DoneAt, rec.ClaimedBy)
				}
				if last := op.ByTx(tc.movement.TransactionID); rec.LastRequestID != last[len(last)-1].RequestID {
					t.Errorf("last_request_id %q, want the last attempt's %q", rec.LastRequestID, last[len(last)-1].RequestID)
				}
				if tc.wantStatus == movements.StatusDone { // the hook runs just after the commit
					mqWaitFor(t, 5*time.Second, "OnSettled", func() bool {
						mu.Lock()
						defer mu.Unlock()
						return len(settled) > 0
					})
				}
				time.Sleep(20 * time.Millisecond) // a second call would come now
				mu.Lock()
				defer mu.Unlock()
				switch tc.wantStatus {
				case movements.StatusDone:
					if rec.BalanceAfter == nil || *rec.BalanceAfter != 5000 {
						t.Errorf("balance_after %v, want 5000", rec.BalanceAfter)
					}
					if len(settled) != 1 || settled[0].Balance != 5000 || settled[0].Outcome != wallet.Success {
						t.Errorf("OnSettled calls %+v, want one success with balance 5000", settled)
					}
				default:
					if len(settled) != 0 {
						t.Errorf("OnSettled called %d times for a movement not applied", len(settled))
					}
					if rec.LastError == "" {
						t.Error("last_error is empty for a refused movement")
					}
				}
			})
		})
	}
}

// Rule LIM-2 ENV-4 ENV-5 ENV-11 AMB-7: a movement that never succeeds gets
// exactly 20 attempts, with one transaction_id and one body, 20 distinct
// request_ids and increasing timestamps, then is parked as exhausted and
// counted.
func TestQueueExhaustsAfter20Attempts(t *testing.T) {
	t.Parallel()
	mqEachBackend(t, func(t *testing.T, s *store.Store) {
		clock := newMQClock()
		op := wallettest.New(t, wallettest.Sequence(wallettest.Error500))
		reg := prometheus.NewPedanticRegistry()
		// A breaker that never opens: this test is about the attempt cap.
		c := wallettest.Client(t, op, wallet.WithClock(clock.Now), wallet.WithBreaker(wallet.BreakerSettings{ConsecutiveFailures: 1000, MinRequests: 1000}))
		q := mqQueue(t, s, c, movements.WithQueueClock(clock.Now), movements.WithRegisterer(reg))
		m := mqWin("w-exhaust")
		mqEnqueue(t, s, clock.Now(), m)
		mqStart(t, q)
		rec := mqDrive(t, s, q, clock, m.TransactionID, 60*time.Second)

		if rec.Status != movements.StatusExhausted || rec.Attempts != wallet.MaxAttempts {
			t.Fatalf("status %s after %d attempts, want exhausted after %d", rec.Status, rec.Attempts, wallet.MaxAttempts)
		}
		time.Sleep(50 * time.Millisecond) // nothing more may come
		sent := op.ByTx(m.TransactionID)
		if len(sent) != wallet.MaxAttempts || op.Count() != wallet.MaxAttempts {
			t.Fatalf("operator received %d attempts (%d in all), want %d", len(sent), op.Count(), wallet.MaxAttempts)
		}
		ids := map[string]bool{}
		body0 := wallettest.StripEnvelope(t, sent[0].Raw)
		for i, a := range sent {
			ids[a.RequestID] = true
			if i > 0 && a.Timestamp <= sent[i-1].Timestamp {
				t.Errorf("attempt %d timestamp %d not after attempt %d's %d", i+1, a.Timestamp, i, sent[i-1].Timestamp)
			}
			if got := wallettest.StripEnvelope(t, a.Raw); got != body0 {
				t.Errorf("attempt %d body differs:\n%s\nwant\n%s", i+1, got, body0)
			}
		}
		if len(ids) != wallet.MaxAttempts {
			t.Errorf("%d distinct request_ids, want %d", len(ids), wallet.MaxAttempts)
		}
		if got := mqMetric(t, reg, "crashgame_wallet_queue_exhausted_total", map[string]string{"kind": "win"}); got != 1 {
			t.Errorf("exhausted_total{kind=win} = %v, want 1", got)
		}
		if got := mqMetric(t, reg, "crashgame_wallet_queue_attempts_total", map[string]string{"kind": "win", "outcome": "temporary"}); got != wallet.MaxAttempts {
			t.Errorf("attempts_total{win,temporary} = %v, want %d", got, wallet.MaxAttempts)
		}
		if got := mqMetric(t, reg, "crashgame_wallet_queue_movements", map[string]string{"status": "exhausted"}); got != 1 {
			t.Errorf("movements{status=exhausted} = %v, want 1", got)
		}
	})
}

// Rule RB-1 RB-6 RB-7 ENV-11 WIN-17: every attempt of a rollback carries the
// debit's amount, the same transaction_id and body, and no freebet_id; a win
// always carries freebet_id (null for an ordinary bet).
func TestQueueBodies(t *testing.T) {
	t.Parallel()
	mqEachBackend(t, func(t *testing.T, s *store.Store) {
		clock := newMQClock()
		op := wallettest.New(t, wallettest.Sequence(wallettest.Error500, wallettest.Error500, wallettest.OK))
		q := mqQueue(t, s, wallettest.Client(t, op, wallet.WithClock(clock.Now)), movements.WithQueueClock(clock.Now))
		rb, win := mqRollback("rb-body"), mqWin("w-body")
		fb := mqWin("w-freebet")
		fb.WinType, fb.FreebetID = wallet.WinTypeFreebet, new("grant-9#2")
		mqEnqueue(t, s, clock.Now(), rb, win, fb)
		mqStart(t, q)
		for _, m := range []movements.Movement{rb, win, fb} {
			if rec := mqDrive(t, s, q, clock, m.TransactionID, 20*time.Second); rec.Status != movements.StatusDone {
				t.Fatalf("%s: status %s", m.TransactionID, rec.Status)
			}
		}

		rbs := op.ByTx(rb.TransactionID)
		if len(rbs) != 3 {
			t.Fatalf("rollback attempts %d, want 3", len(rbs))
		}
		for i, a := range rbs {
			if a.Route != "/rollback" || a.Body["amount"] != float64(1000) || a.Body["bet_id"] != rb.BetID {
				t.Errorf("rollback attempt %d: route %s amount %v bet_id %v, want /rollback 1000 %s", i+1, a.Route, a.Body["amount"], a.Body["bet_id"], rb.BetID)
			}
			if _, ok := a.Body["freebet_id"]; ok {
				t.Errorf("rollback attempt %d carries freebet_id", i+1)
			}
			if wallettest.StripEnvelope(t, a.Raw) != wallettest.StripEnvelope(t, rbs[0].Raw) {
				t.Errorf("rollback attempt %d body differs from the first", i+1)
			}
		}
		for _, tc := range []struct {
			m    movements.Movement
			want any
		}{{win, nil}, {fb, "grant-9#2"}} {
			for i, a := range op.ByTx(tc.m.TransactionID) {
				v, ok := a.Body["freebet_id"]
				if !ok || v != tc.want {
					t.Errorf("%s attempt %d: freebet_id present %v value %v, want %v", tc.m.TransactionID, i+1, ok, v, tc.want)
				}
				if a.Body["type"] != string(tc.m.WinType) {
					t.Errorf("%s attempt %d: type %v", tc.m.TransactionID, i+1, a.Body["type"])
				}
			}
		}
	})
}

// Rule AUTH-17: while the operator's breaker is open, a movement waits and
// spends no attempt; once it closes the movement is delivered.
func TestQueueBreakerOpenSpendsNoAttempt(t *testing.T) {
	t.Parallel()
	mqEachBackend(t, func(t *testing.T, s *store.Store) {
		clock := newMQClock()
		var sent atomic.Int64
		op := wallettest.New(t, func(wallettest.Attempt) wallettest.Answer { // only the very first request fails
			if sent.Add(1) == 1 {
				return wallettest.Error500
			}
			return wallettest.OK
		})
		// The breaker's OpenFor runs on real time (not the test's clock): long
		// enough that the first attempt's record, read under -race beside
		// other packages' tests, is seen while it is still open (400 ms was
		// not, once in eight runs of make quick).
		c := wallettest.Client(t, op, wallet.WithClock(clock.Now), wallet.WithBreaker(wallet.BreakerSettings{ConsecutiveFailures: 1, OpenFor: 5 * time.Second}))
		q := mqQueue(t, s, c, movements.WithQueueClock(clock.Now), movements.WithBreakerWait(20*time.Millisecond))
		m := mqWin("w-breaker")
		other := mqRollback("rb-breaker")
		mqEnqueue(t, s, clock.Now(), m)
		mqStart(t, q)

		// The first attempt fails with a 5xx and opens the breaker.
		mqWaitFor(t, 10*time.Second, "the first attempt recorded", func() bool {
			r := mqGet(t, s, m.TransactionID)
			return r.Attempts == 1 && r.ClaimedBy == ""
		})
		if !c.BreakerOpen() {
			t.Fatal("breaker not open after a 5xx with ConsecutiveFailures 1")
		}
		// While it is open, time passes, both movements are due, and nothing is sent.
		mqEnqueue(t, s, clock.Now(), other)
		clock.AdvanceTo(clock.Now().Add(time.Hour))
		for range 10 {
			q.Notify()
			time.Sleep(15 * time.Millisecond)
		}
		// Read first, then ask whether the breaker is still open: if it is,
		// nothing was sent before the reads (the breaker only lets a probe
		// through half-open, and the probe's success closes it), so the
		// reads saw the open period only. The breaker's OpenFor runs on real
		// time: on a very slow machine it may be half-open already, and then
		// there is nothing to check here.
		n := op.Count()
		rm, ro := mqGet(t, s, m.TransactionID), mqGet(t, s, other.TransactionID)
		if c.BreakerOpen() {
			if rm.Attempts != 1 || rm.Status != movements.StatusPending {
				t.Fatalf("while open: %s after %d attempts, want pending after 1", rm.Status, rm.Attempts)
			}
			if ro.Attempts != 0 {
				t.Fatalf("while open: the new movement spent %d attempts", ro.Attempts)
			}
			if n != 1 {
				t.Fatalf("operator received %d attempts while the breaker was open, want 1", n)
			}
		}
		// Half-open lets a probe through; both are then delivered.
		for _, id := range []string{m.TransactionID, other.TransactionID} {
			if rec := mqDrive(t, s, q, clock, id, 20*time.Second); rec.Status != movements.StatusDone {
				t.Fatalf("%s: %s after %d attempts, want done", id, rec.Status, rec.Attempts)
			}
		}
		if r := mqGet(t, s, m.TransactionID); r.Attempts != 2 {
			t.Errorf("attempts %d, want 2 (one failed, one delivered)", r.Attempts)
		}
		if r := mqGet(t, s, other.TransactionID); r.Attempts != 1 {
			t.Errorf("attempts %d, want 1", r.Attempts)
		}
	})
}

// An operator without a Client keeps its movements pending: nothing is sent
// and no attempt is spent.
func TestQueueUnknownOperatorWaits(t *testing.T) {
	t.Parallel()
	mqEachBackend(t, func(t *testing.T, s *store.Store) {
		clock := newMQClock()
		op := wallettest.New(t, wallettest.Sequence(wallettest.OK))
		q := mqQueue(t, s, wallettest.Client(t, op), movements.WithQueueClock(clock.Now))
		m := mqWin("w-nobody")
		m.Operator = "unknown-operator"
		mqEnqueue(t, s, clock.Now(), m)
		mqStart(t, q)
		mqWaitFor(t, 10*time.Second, "the movement looked at", func() bool { return mqGet(t, s, m.TransactionID).LastError != "" })
		if r := mqGet(t, s, m.TransactionID); r.Status != movements.StatusPending || r.Attempts != 0 || op.Count() != 0 {
			t.Fatalf("%s after %d attempts, %d sent: want pending, 0, 0", r.Status, r.Attempts, op.Count())
		}
		// The paused operator does not hold up the others, even when its
		// movement is due again.
		clock.AdvanceTo(clock.Now().Add(2 * movements.UnknownOperatorWait))
		known := mqWin("w-somebody")
		mqEnqueue(t, s, clock.Now(), known)
		q.Notify()
		if r := mqDrive(t, s, q, clock, known.TransactionID, 10*time.Second); r.Status != movements.StatusDone {
			t.Fatalf("the known operator's movement: %s", r.Status)
		}
		if r := mqGet(t, s, m.TransactionID); r.Status != movements.StatusPending || r.Attempts != 0 || op.Count() != 1 {
			t.Fatalf("%s after %d attempts, %d sent: want pending, 0, 1", r.Status, r.Attempts, op.Count())
		}
	})
}

// Rule ENV-13: Enqueue writes inside the caller's transaction (nothing is left
// when it rolls back) and refuses a transaction_id already queued.
func TestEnqueueTransactional(t *testing.T) {
	t.Parallel()
	mqEachBackend(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		now := time.UnixMilli(1795000000000)
		errAbort := errors.New("abort")
		err := s.InTx(ctx, func(ctx context.Context) error {
			if err := movements.Enqueue(ctx, s.Movements(), mqWin("w-rolled-back"), now); err != nil {
				return err
			}
			return errAbort
		})
		if !errors.Is(err, errAbort) {
			t.Fatalf("RunInTx: %v", err)
		}
		if n := mqCountStatus(t, s); len(n) != 0 {
			t.Fatalf("a rolled-back Enqueue left %v", n)
		}

		mqEnqueue(t, s, now, mqWin("w-dup"))
		// In another transaction, and twice within one: both refused loudly.
		err = s.InTx(ctx, func(ctx context.Context) error {
			return movements.Enqueue(ctx, s.Movements(), mqRollback("w-dup"), now)
		})
		if !errors.Is(err, movements.ErrDuplicateMovement) {
			t.Fatalf("second Enqueue of one transaction_id: %v, want ErrDuplicateMovement", err)
		}
		err = s.InTx(ctx, func(ctx context.Context) error {
			if err := movements.Enqueue(ctx, s.Movements(), mqWin("w-dup2"), now); err != nil {
				return err
			}
			if err := movements.Enqueue(ctx, s.Movements(), mqWin("w-dup2"), now); !errors.Is(err, movements.ErrDuplicateMovement) {
				t.Errorf("duplicate within one transaction: %v, want ErrDuplicateMovement", err)
			}
			return nil // the transaction stays usable after the refusal
		})
		if err != nil {
			t.Fatalf("commit after a refused duplicate: %v", err)
		}
		if n := mqCountStatus(t, s); n[movements.StatusPending] != 2 {
			t.Fatalf("pending %d, want 2", n[movements.StatusPending])
		}

		// A debit ends in exactly one settlement: a second movement for one
		// bet_id, under another transaction_id, is refused.
		second := mqRollback("rb-second")
		second.BetID = "bet-w-dup"
		err = s.InTx(ctx, func(ctx context.Context) error {
			return movements.Enqueue(ctx, s.Movements(), second, now)
		})
		if !errors.Is(err, movements.ErrDebitSettled) {
			t.Fatalf("second settlement of one debit: %v, want ErrDebitSettled", err)
		}
		rec := mqGet(t, s, "w-dup")
		if rec.Kind != movements.KindWin || rec.Amount != 2350 || rec.Token != wallettest.Token || rec.FreebetID != nil || !rec.NextAttemptAt.Equal(now.Truncate(time.Millisecond)) {
			t.Errorf("stored %+v", rec)
		}
	})
}

// Enqueue refuses, before writing anything, a movement that breaks the
// contract.
func TestEnqueueRefusesInvalid(t *testing.T) {
	t.Parallel()
	mut := func(base movements.Movement, f func(*movements.Movement)) movements.Movement { f(&base); return base }
	cases := []struct {
		name string
		m    movements.Movement
	}{
		// Rule RB-1: a rollback has no freebet_id.
		{"rollback with freebet_id", mut(mqRollback("x"), func(m *movements.Movement) { m.FreebetID = new("g-1") })},
		// Rule RB-6: a rollback carries the debit's amount, never zero.
		{"rollback of zero", mut(mqRollback("x"), func(m *movements.Movement) { m.Amount = 0 })},
		{"rollback with a win type", mut(mqRollback("x"), func(m *movements.Movement) { m.WinType = wallet.WinTypeWin })},
		// Rule WIN-5: a zero_win moves nothing.
		{"zero_win with an amount", mut(mqWin("x"), func(m *movements.Movement) { m.WinType = wallet.WinTypeZeroWin })},
		{"win type lose", mut(mqWin("x"), func(m *movements.Movement) { m.WinType = wallet.WinTypeLose })},
		{"win without type", mut(mqWin("x"), func(m *movements.Movement) { m.WinType = "" })},
		{"win with a reason", mut(mqWin("x"), func(m *movements.Movement) { m.Reason = "why" })},
		{"unknown kind", mut(mqWin("x"), func(m *movements.Movement) { m.Kind = "bet" })},
		// Rule ENV-11: a movement has a transaction_id.
		{"no transaction_id", mut(mqWin("x"), func(m *movements.Movement) { m.TransactionID = "" })},
		// Rule ENV-13: its own, not the debit's.
		{"bet_id as transaction_id", mut(mqWin("x"), func(m *movements.Movement) { m.BetID = "x" })},
		// Rule ENV-16: bet_id names the debit.
		{"no bet_id", mut(mqWin("x"), func(m *movements.Movement) { m.BetID = "" })},
		{"no operator", mut(mqWin("x"), func(m *movements.Movement) { m.Operator = "" })},
		{"no player", mut(mqWin("x"), func(m *movements.Movement) { m.PlayerID = "" })},
		{"no token", mut(mqWin("x"), func(m *movements.Movement) { m.Token = "" })},
		{"bad currency", mut(mqWin("x"), func(m *movements.Movement) { m.Currency = "brl" })},
		{"negative amount", mut(mqWin("x"), func(m *movements.Movement) { m.Amount = -1 })},
		{"empty freebet_id", mut(mqWin("x"), func(m *movements.Movement) { m.FreebetID = new("") })},
	}
	s := mqOpen(t, mqBackends[0].dsn(t))
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := movements.Enqueue(context.Background(), s.Movements(), tc.m, time.Now())
			if !errors.Is(err, movements.ErrInvalidMovement) {
				t.Fatalf("Enqueue: %v, want ErrInvalidMovement", err)
			}
			if wallettest.ContainsToken(err.Error()) {
				t.Errorf("error holds the token: %v", err)
			}
		})
	}
	if n := mqCountStatus(t, s); len(n) != 0 {
		t.Fatalf("invalid movements were stored: %v", n)
	}
	// A zero_win of 0 and a freebet win are valid.
	zw := mqWin("zw-ok")
	zw.WinType, zw.Amount = wallet.WinTypeZeroWin, 0
	if err := movements.Enqueue(context.Background(), s.Movements(), zw, time.Now()); err != nil {
		t.Fatalf("zero_win: %v", err)
	}
}

// Rule RB-6 WIN-17: when the debit is in the bets table, a rollback must carry
// its amount and a win its freebet_id.
func TestEnqueueChecksTheDebit(t *testing.T) {
	t.Parallel()
	mqEachBackend(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		if _, err := s.ExecForTest(ctx, `INSERT INTO rounds (id, game_id, seq, hash, crash_point, status, betting_ends_at, created_at)
			VALUES ('round-1', 'crash-classic', 1, 'h', 100, 'finished', 1, 1)`); err != nil {
			t.Skipf("the bets schema (migration 0002) differs from what this test writes: %v", err)
		}
		for _, b := range []struct {
			id      string
			freebet any
		}{{"bet-plain", nil}, {"bet-free", "grant-1"}} {
			if _, err := s.ExecForTest(ctx, `INSERT INTO bets (id, round_id, game_id, session_hash, operator, currency, amount, freebet_id, status, placed_at)
				VALUES (?, 'round-1', 'crash-classic', ?, ?, 'BRL', 1000, ?, 'accepted', 1)`, b.id, make([]byte, 32), wallettest.OperatorID, b.freebet); err != nil {
				t.Skipf("the bets schema (migration 0002) differs from what this test writes: %v", err)
			}
		}
		rb := func(id, bet string, amount int64) movements.Movement {
			m := mqRollback(id)
			m.BetID, m.Amount = bet, amount
			return m
		}
		win := func(id, bet string, fb *string) movements.Movement {
			m := mqWin(id)
			m.BetID, m.FreebetID = bet, fb
			return m
		}
		cases := []struct {
			name    string
			m       movements.Movement
			wantErr bool
		}{
			{"rollback of the debit's amount", rb("rb-1", "bet-plain", 1000), false},
			{"rollback of another amount", rb("rb-2", "bet-plain", 1500), true},
			{"rollback of a freebet debit, its stake", rb("rb-3", "bet-free", 1000), false},
			{"rollback of an unknown debit", rb("rb-4", "bet-unknown", 700), false},
			{"win inheriting null", win("w-1", "bet-plain", nil), false},
			{"win inventing a freebet", win("w-2", "bet-plain", new("grant-1")), true},
			{"win inheriting the grant", win("w-3", "bet-free", new("grant-1")), false},
			{"win dropping the grant", win("w-4", "bet-free", nil), true},
		}
		for _, tc := range cases {
			// Each in its own transaction, rolled back: one settlement per debit.
			var err error
			_ = s.InTx(ctx, func(ctx context.Context) error {
				err = movements.Enqueue(ctx, s.Movements(), tc.m, time.Now())
				return errors.New("roll back")
			})
			if (err != nil) != tc.wantErr || (err != nil && !errors.Is(err, movements.ErrInvalidMovement)) {
				t.Errorf("%s: Enqueue = %v, want error %v", tc.name, err, tc.wantErr)
			}
		}
	})
}

// A worker stopped mid-way leaves no claim behind; a new worker delivers the
// rest and never sends again a movement already done. A worker that died
// holding a lease delays its movements only until the lease runs out.
func TestQueueRestartDeliversTheRest(t *testing.T) {
	t.Parallel()
	mqEachBackend(t, func(t *testing.T, s *store.Store) {
		// Quick for the first 30 attempts, then slow: the first worker is
		// stopped long before it could deliver everything.
		var sent atomic.Int64
		op := wallettest.New(t, func(wallettest.Attempt) wallettest.Answer {
			if sent.Add(1) > 30 {
				time.Sleep(20 * time.Millisecond)
			}
			return wallettest.OK
		})
		c := wallettest.Client(t, op)
		const n = 200
		ids := mqIDs("w-restart", n)
		ms := make([]movements.Movement, n)
		for i, id := range ids {
			ms[i] = mqWin(id)
		}
		mqEnqueue(t, s, time.Now(), ms...)

		q1 := mqQueue(t, s, c, movements.WithConcurrency(4), movements.WithBatchSize(4))
		stop := mqStart(t, q1)
		mqWaitFor(t, 20*time.Second, "a few deliveries", func() bool { return mqCountStatus(t, s)[movements.StatusDone] >= 20 })
		stop()
		mid := mqCountStatus(t, s)
		if mid[movements.StatusDone] == n {
			t.Fatal("the first worker delivered everything: nothing left to test")
		}
		var claimed int
		if err := s.QueryRowForTest(context.Background(), "SELECT COUNT(*) FROM movements WHERE claimed_by <> ''").Scan(&claimed); err != nil {
			t.Fatal(err)
		}
		if claimed != 0 {
			t.Fatalf("%d movements still claimed after a clean stop", claimed)
		}
		if got := op.Count(); got != mid[movements.StatusDone] {
			t.Fatalf("operator received %d attempts, %d are done: an attempt went unrecorded", got, mid[movements.StatusDone])
		}

		// A dead worker's lease on one movement: the new worker leaves it
		// alone until the lease runs out.
		clock := newMQClock()
		clock.AdvanceTo(time.Now())
		var leased string
		if err := s.QueryRowForTest(context.Background(), "SELECT transaction_id FROM movements WHERE status = 'pending' ORDER BY transaction_id LIMIT 1").Scan(&leased); err != nil {
			t.Fatal(err)
		}
		leaseEnd := clock.Now().Add(time.Minute)
		if _, err := s.ExecForTest(context.Background(), "UPDATE movements SET claimed_by = 'dead-worker', next_attempt_at = ? WHERE transaction_id = ?",
			store.MillisOf(leaseEnd), leased); err != nil {
			t.Fatal(err)
		}
		q2 := mqQueue(t, s, c, movements.WithQueueClock(clock.Now))
		mqStart(t, q2)
		mqWaitFor(t, 30*time.Second, "all but the leased delivered", func() bool { return mqCountStatus(t, s)[movements.StatusDone] == n-1 })
		if got := len(op.ByTx(leased)); got != 0 {
			t.Fatalf("the leased movement was sent %d times before its lease ran out", got)
		}
		clock.AdvanceTo(leaseEnd)
		q2.Notify()
		mqWaitFor(t, 10*time.Second, "the leased one delivered", func() bool { return mqCountStatus(t, s)[movements.StatusDone] == n })
		for _, id := range ids {
			if k := op.Counts()[id]; k != 1 {
				t.Errorf("%s sent %d times, want exactly once", id, k)
			}
		}
	})
}

// Rule ENV-11: two workers on one PostgreSQL database never send one movement
// twice at once, and a movement delivered is never sent again.
func TestQueueConcurrentWorkersPostgres(t *testing.T) {
	t.Parallel()
	dsn := mqBackends[1].dsn(t)
	s1, s2 := mqOpen(t, dsn), mqOpen(t, dsn)
	const n = 400
	ids := mqIDs("w-conc", n)
	// A third of the movements fail once (retried after Backoff), the rest succeed.
	op := wallettest.New(t, func(a wallettest.Attempt) wallettest.Answer {
		if a.N == 1 && a.TxID[len(a.TxID)-1]%3 == 0 {
			return wallettest.Error500
		}
		return wallettest.OK
	})
	op.Delay = time.Millisecond
	ms := make([]movements.Movement, n)
	for i, id := range ids {
		ms[i] = mqWin(id)
	}
	mqEnqueue(t, s1, time.Now(), ms...)
	never := wallet.WithBreaker(wallet.BreakerSettings{ConsecutiveFailures: 1 << 30, MinRequests: 1 << 30})
	q1 := mqQueue(t, s1, wallettest.Client(t, op, never), movements.WithConcurrency(16), movements.WithBatchSize(8))
	q2 := mqQueue(t, s2, wallettest.Client(t, op, never), movements.WithConcurrency(16), movements.WithBatchSize(8))
	mqStart(t, q1)
	mqStart(t, q2)
	mqWaitFor(t, 60*time.Second, "every movement done", func() bool { return mqCountStatus(t, s1)[movements.StatusDone] == n })

	if o := op.Overlaps(); o != 0 {
		t.Errorf("%d attempts overlapped another attempt of the same movement", o)
	}
	for _, id := range ids {
		sent := op.ByTx(id)
		successes := 0
		for _, a := range sent {
			if a.N == len(sent) {
				successes++
			}
		}
		want := 1
		if id[len(id)-1]%3 == 0 {
			want = 2
		}
		if len(sent) != want {
			t.Errorf("%s sent %d times, want %d", id, len(sent), want)
		}
		if rec := mqGet(t, s1, id); rec.Attempts != len(sent) {
			t.Errorf("%s: %d attempts recorded, %d sent", id, rec.Attempts, len(sent))
		}
	}
}

// Rule ENV-19: the reconciliation listing filters by round, player, operator
// and status, keeps the operator's transaction id, and never shows the token.
func TestListAndWriteMovements(t *testing.T) {
	t.Parallel()
	mqEachBackend(t, func(t *testing.T, s *store.Store) {
		clock := newMQClock()
		op := wallettest.New(t, wallettest.Sequence(wallettest.OK))
		q := mqQueue(t, s, wallettest.Client(t, op), movements.WithQueueClock(clock.Now))
		a, b, c := mqWin("w-a"), mqRollback("rb-b"), mqWin("w-c")
		c.RoundID, c.PlayerID = "round-2", "mq-player-2"
		c.Reason = ""
		b.Reason = "refused\tafter\ndebit"
		mqEnqueue(t, s, clock.Now(), a, b, c)
		mqStart(t, q)
		mqDrive(t, s, q, clock, "w-a", 10*time.Second)
		mqDrive(t, s, q, clock, "rb-b", 10*time.Second)
		mqDrive(t, s, q, clock, "w-c", 10*time.Second)

		ctx := context.Background()
		cases := []struct {
			f    movements.MovementFilter
			want []string
		}{
			{movements.MovementFilter{RoundID: "round-1"}, []string{"rb-b", "w-a"}},
			{movements.MovementFilter{PlayerID: "mq-player-2"}, []string{"w-c"}},
			{movements.MovementFilter{Operator: wallettest.OperatorID, Status: "done"}, []string{"rb-b", "w-a", "w-c"}},
			{movements.MovementFilter{Status: "pending"}, nil},
			{movements.MovementFilter{Limit: 1}, []string{"rb-b"}},
		}
		for _, tc := range cases {
			recs, err := movements.ListMovements(ctx, s.Movements(), tc.f)
			if err != nil {
				t.Fatalf("ListMovements(%+v): %v", tc.f, err)
			}
			var got []string
			for _, r := range recs {
				got = append(got, r.TransactionID)
				if r.Token != "" {
					t.Errorf("%s: token listed", r.TransactionID)
				}
			}
			if len(got) != len(tc.want) {
				t.Errorf("ListMovements(%+v) = %v, want %v", tc.f, got, tc.want)
				continue
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("ListMovements(%+v) = %v, want %v", tc.f, got, tc.want)
					break
				}
			}
		}
		if _, err := movements.ListMovements(ctx, s.Movements(), movements.MovementFilter{Status: "lost"}); err == nil {
			t.Error("an unknown status was accepted")
		}

		recs, err := movements.ListMovements(ctx, s.Movements(), movements.MovementFilter{})
		if err != nil {
			t.Fatal(err)
		}
		var out strings.Builder
		if err := movements.WriteMovements(&out, recs); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		if len(lines) != 4 {
			t.Fatalf("%d lines, want a header and 3 rows:\n%s", len(lines), out.String())
		}
		for i, l := range lines {
			if got := strings.Count(l, "\t"); got != strings.Count(lines[0], "\t") {
				t.Errorf("line %d has %d tabs, want %d: %q", i, got, strings.Count(lines[0], "\t"), l)
			}
		}
		if wallettest.ContainsToken(out.String()) {
			t.Error("the table shows a token")
		}
		if !containsAll(lines[1], "rb-b", "rollback", "done", "op-77", "1000", "refused after debit") {
			t.Errorf("rollback row: %q", lines[1])
		}
	})
}

// mqMetric reads one sample's value from reg.
func mqMetric(t testing.TB, reg *prometheus.Registry, name string, labels map[string]string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			n := 0
			for _, lp := range m.GetLabel() {
				if v, ok := labels[lp.GetName()]; ok && v == lp.GetValue() {
					n++
				}
			}
			if n == len(labels) {
				switch {
				case m.GetCounter() != nil:
					return m.GetCounter().GetValue()
				case m.GetGauge() != nil:
					return m.GetGauge().GetValue()
				}
			}
		}
	}
	t.Fatalf("metric %s%v not found", name, labels)
	return 0
}

func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
