package store_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/crashstudio/crashgame/internal/store"
)

// The contract of re-delivery: only an exhausted movement goes back to
// pending, once however many ask at once, with its history kept.
var redeliveryCases = []contractCase{
	{"RedeliverOnlyExhaustedOnce", testRedeliver},
	{"RedeliverConcurrentlyOnce", testRedeliverRace},
	{"OperatorMovementsPageStably", testOperatorMovementsPaging},
}

func parked(txID, status string) store.MovementRecord {
	m := newMovement(txID)
	m.Status, m.Attempts, m.LastError = status, 20, "503 from the wallet"
	return m
}

func testRedeliver(t *testing.T, s *store.Store, _ string) {
	ctx := t.Context()
	insertMovement(t, s, parked("w-parked", store.MovementExhausted), parked("w-refused", store.MovementRefused), parked("w-done", store.MovementDone))
	got, again, err := s.RedeliverMovement(ctx, "w-parked", "op-1", "operator:op-1", 7000)
	if err != nil || !again || got.Status != store.MovementPending || got.Attempts != 0 || got.NextAttemptAt != 7000 || got.Token != "" {
		t.Fatalf("RedeliverMovement(exhausted) = %+v, %t, %v", got, again, err)
	}
	stored := getMovement(t, s, "w-parked")
	if stored.Status != store.MovementPending || stored.Attempts != 0 || stored.NextAttemptAt != 7000 || stored.Token != mvToken {
		t.Fatalf("stored after the re-delivery: %+v (the token stays, for the attempts)", stored)
	}
	if got, again, err := s.RedeliverMovement(ctx, "w-parked", "op-1", "operator:op-1", 8000); err != nil || again || got.NextAttemptAt != 7000 {
		t.Fatalf("a second request: %+v, %t, %v; want the movement as the first left it", got, again, err)
	}
	if _, _, err := s.RedeliverMovement(ctx, "w-parked", "op-2", "operator:op-2", 8000); !errors.Is(err, store.ErrMovementNotFound) {
		t.Fatalf("another operator's movement: %v, want ErrMovementNotFound", err)
	}
	if _, _, err := s.RedeliverMovement(ctx, "w-nope", "", "on-call:ana", 8000); !errors.Is(err, store.ErrMovementNotFound) {
		t.Fatalf("no movement: %v, want ErrMovementNotFound", err)
	}
	if _, _, err := s.RedeliverMovement(ctx, "w-refused", "", "on-call:ana", 8000); !errors.Is(err, store.ErrNotRedeliverable) {
		t.Fatalf("a refused movement: %v, want ErrNotRedeliverable", err)
	}
	if got, again, err := s.RedeliverMovement(ctx, "w-done", "", "on-call:ana", 8000); err != nil || again || got.Status != store.MovementDone {
		t.Fatalf("a delivered movement: %+v, %t, %v; want it as it is", got, again, err)
	}
	hist, err := redeliveriesOf(s, ctx, "w-parked")
	if err != nil || len(hist) != 1 || hist[0].Number != 1 || hist[0].RequestedBy != "operator:op-1" || hist[0].AttemptsBefore != 20 ||
		hist[0].LastErrorBefore != "503 from the wallet" || hist[0].RequestedAt != 7000 {
		t.Fatalf("history = %+v, %v", hist, err)
	}
}

func testRedeliverRace(t *testing.T, s *store.Store, _ string) {
	insertMovement(t, s, parked("w-race", store.MovementExhausted))
	const n = 8
	var wg sync.WaitGroup
	results := make([]bool, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() { _, results[i], errs[i] = s.RedeliverMovement(t.Context(), "w-race", "", "on-call:ana", 7000) })
	}
	wg.Wait()
	count := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("request %d: %v", i, errs[i])
		}
		if results[i] {
			count++
		}
	}
	if hist, err := redeliveriesOf(s, t.Context(), "w-race"); count != 1 || err != nil || len(hist) != 1 {
		t.Fatalf("%d of %d requests re-delivered, history %d (%v); want exactly one", count, n, len(hist), err)
	}
}

// redeliveriesOf is the history of one movement.
func redeliveriesOf(s *store.Store, ctx context.Context, id string) ([]store.RedeliveryRecord, error) {
	m, err := s.RedeliveriesOf(ctx, []string{id})
	return m[id], err
}

// An operator's movements page by (created_at, transaction_id) within the
// range: every page follows the last, none repeats or skips one, another
// operator's never show, the range's end is excluded, the status filters.
func testOperatorMovementsPaging(t *testing.T, s *store.Store, _ string) {
	ctx := t.Context()
	var want []string
	for i := range 23 {
		m := newMovement(fmt.Sprintf("w-%02d", 22-i)) // ids against the time order
		m.CreatedAt = store.Millis(1000 + 10*(i/3))   // three at each time
		if i%5 == 0 {
			m.Status = store.MovementExhausted
		}
		insertMovement(t, s, m)
		if m.CreatedAt < 1070 {
			want = append(want, fmt.Sprintf("%d %s", m.CreatedAt, m.TransactionID))
		}
	}
	other := newMovement("w-other")
	other.Operator, other.CreatedAt = "op-2", 1000
	insertMovement(t, s, other)
	slices.Sort(want)
	var got []string
	f := store.OperatorMovementFilter{Operator: "op-1", From: 1000, To: 1070, Limit: 4}
	for range 20 {
		page, err := s.OperatorMovements(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range page {
			got = append(got, fmt.Sprintf("%d %s", m.CreatedAt, m.TransactionID))
			if m.Token != "" {
				t.Fatal("a listed movement carries its token")
			}
		}
		if len(page) < f.Limit {
			break
		}
		f.AfterCreated, f.AfterID = page[len(page)-1].CreatedAt, page[len(page)-1].TransactionID
	}
	if !slices.Equal(got, want) {
		t.Fatalf("pages:\n%v\nwant\n%v", got, want)
	}
	parked, err := s.OperatorMovements(ctx, store.OperatorMovementFilter{Operator: "op-1", From: 0, To: 5000, Status: store.MovementExhausted, Limit: 100})
	if err != nil || len(parked) != 5 {
		t.Fatalf("exhausted ones: %d, %v; want 5", len(parked), err)
	}
}
