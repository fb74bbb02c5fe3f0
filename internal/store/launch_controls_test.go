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
	{"RefusedTicketWritesNoControls", testRefusedTicketWritesNoControls},
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

// A ticket, its controls and its player's launch_controls are written all or
// none: a ticket refused (its hash already stored) leaves no controls of its
// own and does not replace the player's, also when it shares a group commit
// with tickets that are stored.
func testRefusedTicketWritesNoControls(t *testing.T, s *store.Store, _ string) {
	on := store.TicketControls{SessionClock: true, RealityCheckMinutes: 60, InactivityMinutes: 30}
	insert(t, s, launchTicket("kept", "acme", "p1", 0, store.TicketControls{}))

	dup := launchTicket("kept", "acme", "p2", time.Minute, on) // the same hash, another player
	if err := s.InsertTicket(t.Context(), dup); err == nil {
		t.Fatal("InsertTicket with a stored hash: err = nil, want an error")
	}
	wantLaunchControls(t, s, "acme", "p2", store.LaunchControlsRecord{}, false)
	if n := countRows(t, s, "SELECT count(*) FROM ticket_controls"); n != 0 {
		t.Fatalf("ticket_controls rows = %d after a refused ticket, want 0", n)
	}

	// Refused and stored tickets at once: each stored one has its rows.
	const n = 20
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			seed := fmt.Sprintf("batch-%d", i)
			if i%2 == 0 {
				seed = "kept"
			}
			err := s.InsertTicket(t.Context(), launchTicket(seed, "acme", fmt.Sprintf("b%d", i), time.Minute, on))
			if (err == nil) != (i%2 == 1) {
				t.Errorf("InsertTicket %d (%s): err = %v", i, seed, err)
			}
		})
	}
	wg.Wait()
	for i := range n {
		want := store.LaunchControlsRecord{}
		if i%2 == 1 {
			want = store.LaunchControlsRecord{Operator: "acme", PlayerID: fmt.Sprintf("b%d", i), SessionClock: true,
				RealityCheckMinutes: 60, InactivityMinutes: 30, LaunchedAt: store.MillisOf(t0.Add(time.Minute))}
		}
		wantLaunchControls(t, s, "acme", fmt.Sprintf("b%d", i), want, i%2 == 1)
	}
	if got := countRows(t, s, "SELECT count(*) FROM ticket_controls"); got != n/2 {
		t.Fatalf("ticket_controls rows = %d, want %d", got, n/2)
	}
}
