package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/integration/pgtest"
	"github.com/crashstudio/crashgame/internal/store"
)

// A statement whose context ends is cancelled by PostgreSQL and its
// connection kept: the lease's next renewal runs on the same backend, not on
// a new connection that would first need its TCP handshake and SCRAM
// authentication (on a saturated replica, more than the renewal's second:
// the leader lost its lease to its own load, 28 November).
func TestCancelledStatementKeepsItsConnection(t *testing.T) {
	t.Parallel()
	s, err := store.Open(t.Context(), pgtest.Start(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	before, err := store.LeaseBackend(t.Context(), s)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := store.SleepOnLease(ctx, s, 10); err == nil {
		t.Fatal("a 10 s statement under a 100 ms context returned no error")
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("the cancelled statement returned after %v; PostgreSQL was not asked to cancel it", took)
	}
	after, err := store.LeaseBackend(t.Context(), s)
	if err != nil {
		t.Fatalf("the lease's connection after a cancelled statement: %v", err)
	}
	if after != before {
		t.Fatalf("the lease's connection was replaced after a cancelled statement: backend %d, then %d", before, after)
	}
}
