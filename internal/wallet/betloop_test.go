package wallet_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/internal/wallet"
	"github.com/crashstudio/crashgame/internal/wallet/wallettest"
)

func mqBet(txID string) wallet.BetCall {
	return wallet.BetCall{PlayerID: wallettest.Player, Token: wallettest.Token, Currency: "BRL", GameID: "crash-classic",
		Amount: 1000, TransactionID: txID, RoundID: "round-1"}
}

// Rule BET-2 LIM-2 ENV-4 ENV-5 ENV-11 WERR-8 WERR-20: BetUntil retries a
// temporary outcome with the same transaction_id and body while the betting
// window is open, and stops at a decision or at the deadline.
func TestBetUntil(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name        string
		answers     []wallettest.Answer
		window      time.Duration
		wantOutcome wallet.Outcome
		wantSends   func(n int) bool
		wantErr     error
	}{
		{"retries until success", []wallettest.Answer{wallettest.Error500, wallettest.Plain503, wallettest.OK}, 30 * time.Second, wallet.Success,
			func(n int) bool { return n == 3 }, nil},
		// Rule WERR-8 AMB-1: INSUFFICIENT_FUNDS, whatever the HTTP status, is final.
		{"stops on a final refusal", []wallettest.Answer{wallettest.Error500, wallettest.NoFunds, wallettest.OK}, 30 * time.Second, wallet.Refused,
			func(n int) bool { return n == 2 }, wallet.ErrRefused},
		// The outcome stays unknown at the deadline: Temporary.
		{"stops at the deadline", []wallettest.Answer{wallettest.Error500}, 700 * time.Millisecond, wallet.Temporary,
			func(n int) bool { return n >= 2 && n < wallet.MaxAttempts }, wallet.ErrTemporary},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			op := wallettest.New(t, wallettest.Sequence(tc.answers...))
			c := wallettest.Client(t, op, wallet.WithBreaker(wallet.BreakerSettings{ConsecutiveFailures: 1000, MinRequests: 1000}))
			call := mqBet("bet-" + tc.name)
			deadline := time.Now().Add(tc.window)
			res, err := c.BetUntil(context.Background(), call, deadline)
			end := time.Now()

			if res.Outcome != tc.wantOutcome {
				t.Fatalf("outcome %s (%s), want %s", res.Outcome, res.Reason, tc.wantOutcome)
			}
			if (tc.wantErr == nil) != (err == nil) || (tc.wantErr != nil && !errors.Is(err, tc.wantErr)) {
				t.Fatalf("error %v, want %v", err, tc.wantErr)
			}
			sent := op.ByTx(call.TransactionID)
			if !tc.wantSends(len(sent)) {
				t.Fatalf("%d attempts sent", len(sent))
			}
			if tc.wantOutcome == wallet.Temporary && end.After(deadline.Add(100*time.Millisecond)) {
				t.Errorf("BetUntil returned %s after the deadline", end.Sub(deadline))
			}
			ids := map[string]bool{}
			for i, a := range sent {
				ids[a.RequestID] = true
				if a.Route != "/bet" {
					t.Errorf("attempt %d on %s", i+1, a.Route)
				}
				if i > 0 && a.Timestamp <= sent[i-1].Timestamp {
					t.Errorf("attempt %d timestamp %d not after %d", i+1, a.Timestamp, sent[i-1].Timestamp)
				}
				if wallettest.StripEnvelope(t, a.Raw) != wallettest.StripEnvelope(t, sent[0].Raw) {
					t.Errorf("attempt %d body differs from the first", i+1)
				}
				// Rule BET-4: freebet_id is present, null on an ordinary bet.
				if v, ok := a.Body["freebet_id"]; !ok || v != nil {
					t.Errorf("attempt %d freebet_id present %v value %v", i+1, ok, v)
				}
			}
			if len(ids) != len(sent) {
				t.Errorf("%d distinct request_ids for %d attempts", len(ids), len(sent))
			}
			if last := sent[len(sent)-1]; res.RequestID != last.RequestID {
				t.Errorf("Result is not the last attempt's: request_id %q, want %q", res.RequestID, last.RequestID)
			}
		})
	}
}

// Rule AUTH-17: with the breaker open, BetUntil sends nothing and says so at
// once; with the window already closed, it sends nothing either.
func TestBetUntilSendsNothing(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		open       bool
		window     time.Duration
		wantErr    error
		wantReason string
	}{
		{"breaker open", true, 30 * time.Second, wallet.ErrBreakerOpen, wallet.ReasonBreakerOpen},
		{"window closed", false, -time.Millisecond, wallet.ErrBetWindowClosed, wallet.ReasonWindowClosed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			op := wallettest.New(t, wallettest.Sequence(wallettest.Error500, wallettest.OK))
			c := wallettest.Client(t, op, wallet.WithBreaker(wallet.BreakerSettings{ConsecutiveFailures: 1, OpenFor: time.Hour}))
			if tc.open {
				if res, _ := c.Bet(context.Background(), mqBet("bet-opener")); res.Outcome != wallet.Temporary || !c.BreakerOpen() {
					t.Fatalf("could not open the breaker: %s, open %v", res.Outcome, c.BreakerOpen())
				}
			}
			before := op.Count()
			start := time.Now()
			res, err := c.BetUntil(context.Background(), mqBet("bet-"+tc.name), time.Now().Add(tc.window))
			if !errors.Is(err, tc.wantErr) || res.Outcome != wallet.Temporary || res.Reason != tc.wantReason {
				t.Fatalf("BetUntil = %s (%s), %v; want Temporary (%s), %v", res.Outcome, res.Reason, err, tc.wantReason, tc.wantErr)
			}
			if n := op.Count() - before; n != 0 {
				t.Fatalf("%d attempts sent, want none", n)
			}
			if d := time.Since(start); d > 100*time.Millisecond {
				t.Errorf("took %s, want at once", d)
			}
		})
	}
}

// A breaker that opens after an attempt was sent leaves the outcome unknown:
// BetUntil returns that attempt's Temporary, not a breaker refusal.
func TestBetUntilBreakerOpensMidway(t *testing.T) {
	t.Parallel()
	op := wallettest.New(t, wallettest.Sequence(wallettest.Error500, wallettest.OK))
	c := wallettest.Client(t, op, wallet.WithBreaker(wallet.BreakerSettings{ConsecutiveFailures: 1, OpenFor: time.Hour}))
	call := mqBet("bet-midway")
	res, err := c.BetUntil(context.Background(), call, time.Now().Add(30*time.Second))
	if res.Outcome != wallet.Temporary || errors.Is(err, wallet.ErrBreakerOpen) || !errors.Is(err, wallet.ErrTemporary) {
		t.Fatalf("BetUntil = %s (%s), %v; want the sent attempt's Temporary", res.Outcome, res.Reason, err)
	}
	if sent := op.ByTx(call.TransactionID); len(sent) != 1 || res.RequestID != sent[0].RequestID || res.HTTPStatus != 500 {
		t.Fatalf("%d sent; result request_id %q HTTP %d", len(sent), res.RequestID, res.HTTPStatus)
	}
}

// A cancelled context ends the loop with the last Result and ctx's error.
func TestBetUntilCancelled(t *testing.T) {
	t.Parallel()
	op := wallettest.New(t, wallettest.Sequence(wallettest.Error500))
	c := wallettest.Client(t, op, wallet.WithBreaker(wallet.BreakerSettings{ConsecutiveFailures: 1000, MinRequests: 1000}))
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(150*time.Millisecond, cancel)
	res, err := c.BetUntil(ctx, mqBet("bet-cancel"), time.Now().Add(30*time.Second))
	if res.Outcome != wallet.Temporary || !errors.Is(err, context.Canceled) {
		t.Fatalf("BetUntil = %s, %v; want Temporary, context.Canceled", res.Outcome, err)
	}
}

// Rule WERR-20 ENV-11: a retry never starts at or after the window's deadline, even
// when the wait before it ends late (a starved process wakes after the
// deadline): the result is then the last sent attempt's, whose request_id the
// operator's log holds, not one of an attempt that was never sent.
func TestBetUntilWokenPastTheDeadlineSendsNoMore(t *testing.T) {
	t.Parallel()
	// after counts the clock's reads once the first attempt was answered;
	// -1 before. The first read after it is the loop's check before its
	// wait; every later one sees the process woken past the deadline.
	var after atomic.Int64
	after.Store(-1)
	deadline := time.Now().Add(time.Minute)
	now := func() time.Time {
		if after.Load() < 0 || after.Add(1) == 1 {
			return time.Now()
		}
		return deadline.Add(time.Millisecond)
	}
	op := wallettest.New(t, func(wallettest.Attempt) wallettest.Answer {
		after.CompareAndSwap(-1, 0)
		return wallettest.Error500
	})
	c := wallettest.Client(t, op, wallet.WithClock(now), wallet.WithBreaker(wallet.BreakerSettings{ConsecutiveFailures: 1000, MinRequests: 1000}))
	call := mqBet("bet-woken-late")
	res, err := c.BetUntil(context.Background(), call, deadline)
	if res.Outcome != wallet.Temporary || !errors.Is(err, wallet.ErrTemporary) {
		t.Fatalf("outcome %s, error %v: want the first attempt's Temporary", res.Outcome, err)
	}
	sent := op.ByTx(call.TransactionID)
	if len(sent) != 1 {
		t.Fatalf("%d attempts sent, want 1: none may start past the deadline", len(sent))
	}
	if res.RequestID != sent[0].RequestID {
		t.Errorf("Result's request_id %q, want the sent attempt's %q", res.RequestID, sent[0].RequestID)
	}
}
