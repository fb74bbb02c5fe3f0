package store_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/internal/store"
)

// launchControlCases are the contract cases of launch_controls: the controls
// of each player's latest launch, which a legacy session takes.
var launchControlCases = []contractCase{
	{"LaunchControlsOfTheLatestLaunch", testLaunchControlsLatest},
	{"LaunchControlsOfConcurrentLaunches", testLaunchControlsConcurrent},
}

// launchTicket is a ticket of operator's player issued at t0+at.
func launchTicket(seed, operator, player string, at time.Duration, c store.TicketControls) *store.TicketRecord {
	rec := newTicket(seed)
	rec.Operator, rec.PlayerID = operator, player
	rec.CreatedAt, rec.ExpiresAt = store.MillisOf(t0.Add(at)), store.MillisOf(t0.Add(at+15*time.Minute))
	rec.Controls = c
	return rec
}

func wantLaunchControls(t *testing.T, s *store.Store, operator, player string, want store.LaunchControlsRecord, wantOK bool) {
	t.Helper()
	got, ok, err := s.LaunchControls(t.Context(), operator, player)
	if err != nil {
		t.Fatalf("LaunchControls(%s, %s): %v", operator, player, err)
	}
	if ok != wantOK || got != want {
		t.Fatalf("LaunchControls(%s, %s) = %+v, %t; want %+v, %t", operator, player, got, ok, want, wantOK)
	}
}

// A launch records its controls for its operator and player; a later launch
// replaces them, even with every control off; an earlier launch committed
// late does not; demo launches and other operators' players are apart.
func testLaunchControlsLatest(t *testing.T, s *store.Store, _ string) {
	on := store.TicketControls{SessionClock: true, RealityCheckMinutes: 60, InactivityMinutes: 30}
	wantLaunchControls(t, s, "acme", "p1", store.LaunchControlsRecord{}, false)

	insert(t, s, launchTicket("first", "acme", "p1", 0, on))
	first := store.LaunchControlsRecord{Operator: "acme", PlayerID: "p1", SessionClock: true, RealityCheckMinutes: 60,
		InactivityMinutes: 30, LaunchedAt: store.MillisOf(t0)}
	wantLaunchControls(t, s, "acme", "p1", first, true)

	insert(t, s, launchTicket("off", "acme", "p1", time.Minute, store.TicketControls{}))
	off := store.LaunchControlsRecord{Operator: "acme", PlayerID: "p1", LaunchedAt: store.MillisOf(t0.Add(time.Minute))}
	wantLaunchControls(t, s, "acme", "p1", off, true)

	insert(t, s, launchTicket("late", "acme", "p1", 30*time.Second, on)) // issued before "off"
	wantLaunchControls(t, s, "acme", "p1", off, true)

	demo := launchTicket("demo", "acme", "p2", 0, on)
	demo.Demo, demo.Token, demo.PlayerID = true, "", ""
	insert(t, s, demo)
	if n := countRows(t, s, "SELECT count(*) FROM launch_controls"); n != 1 {
		t.Fatalf("launch_controls rows = %d after a demo launch, want 1", n)
	}

	insert(t, s, launchTicket("other-op", "other", "p1", 2*time.Minute, on))
	wantLaunchControls(t, s, "acme", "p1", off, true)
	wantLaunchControls(t, s, "other", "p1", store.LaunchControlsRecord{Operator: "other", PlayerID: "p1", SessionClock: true,
		RealityCheckMinutes: 60, InactivityMinutes: 30, LaunchedAt: store.MillisOf(t0.Add(2 * time.Minute))}, true)
}

// Launches of one player at once share a group commit: every ticket is
// stored (one batch may hold several of the player's rows) and the row is the
// latest launch's.
func testLaunchControlsConcurrent(t *testing.T, s *store.Store, _ string) {
	const n = 40
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			c := store.TicketControls{RealityCheckMinutes: i + 1}
			if err := s.InsertTicket(t.Context(), launchTicket(fmt.Sprintf("c-%d", i), "acme", "p1", time.Duration(i)*time.Millisecond, c)); err != nil {
				t.Errorf("InsertTicket %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	if got := countRows(t, s, "SELECT count(*) FROM tickets"); got != n {
		t.Fatalf("tickets = %d, want %d", got, n)
	}
	wantLaunchControls(t, s, "acme", "p1", store.LaunchControlsRecord{Operator: "acme", PlayerID: "p1", RealityCheckMinutes: n,
		LaunchedAt: store.MillisOf(t0.Add((n - 1) * time.Millisecond))}, true)
}
