package cluster

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/crashstudio/crashgame/internal/cluster/natstest"
)

// received collects what a Subscribe handler got.
type received struct {
	mu     sync.Mutex
	events []event
	signal chan struct{} // one value per event, never blocking
}

type event struct {
	data string
	gap  bool
}

func newReceived() *received { return &received{signal: make(chan struct{}, 1<<16)} }

func (r *received) handle(data []byte, gap bool) {
	r.mu.Lock()
	r.events = append(r.events, event{string(data), gap})
	r.mu.Unlock()
	r.signal <- struct{}{}
}

// wait waits for n more events.
func (r *received) wait(t *testing.T, n int) {
	t.Helper()
	for range n {
		<-r.signal
	}
}

func (r *received) all() []event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]event(nil), r.events...)
}

func subscribe(t *testing.T, b *Bus, subject string) *received {
	t.Helper()
	r := newReceived()
	stop, err := b.Subscribe(subject, r.handle)
	if err != nil {
		t.Fatalf("Subscribe: %v", err)
	}
	t.Cleanup(stop)
	return r
}

func publish(t *testing.T, b *Bus, subject, data string) {
	t.Helper()
	if err := b.Publish(subject, []byte(data)); err != nil {
		t.Fatalf("Publish(%s): %v", data, err)
	}
}

func TestEventsArriveInOrderWithoutGaps(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	leader, _ := connect(t, srv, "leader")
	replica, reg := connect(t, srv, "replica")
	subject := EventSubject("crash")
	onReplica := subscribe(t, replica, subject)
	onLeader := subscribe(t, leader, subject) // the leader fans out to its own streams too
	other := subscribe(t, replica, EventSubject("crash.v2"))

	const n = 1000
	for i := range n {
		publish(t, leader, subject, fmt.Sprintf("tick %d", i))
	}
	onReplica.wait(t, n)
	onLeader.wait(t, n)
	for _, r := range []*received{onReplica, onLeader} {
		got := r.all()
		if len(got) != n {
			t.Fatalf("received %d events, want %d", len(got), n)
		}
		for i, e := range got {
			if want := fmt.Sprintf("tick %d", i); e.data != want || e.gap {
				t.Fatalf("event %d = %+v, want %q without a gap", i, e, want)
			}
		}
	}
	if got := other.all(); len(got) != 0 {
		t.Errorf("another table's subscription received %d events", len(got))
	}
	if g := counterValue(t, reg, "crashgame_cluster_events_gaps_total", nil); g != 0 {
		t.Errorf("events_gaps_total = %v, want 0", g)
	}
}

// Events published while the leader is cut off from NATS are lost: the next
// one arrives with a gap, so the replica resynchronises.
func TestEventsLostInAnOutageArriveAsAGap(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	leader, _ := connect(t, srv, "leader")
	replica, reg := connect(t, srv, "replica")
	subject := EventSubject("crash")
	r := subscribe(t, replica, subject)

	publish(t, leader, subject, "betting")
	r.wait(t, 1)

	srv.Shutdown()
	waitFor(t, "the leader to see the outage", func() bool { return !leader.Connected() })
	err := leader.Publish(subject, []byte("in flight"))
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Publish during the outage: %v, want ErrUnavailable (nothing buffered)", err)
	}
	srv.Restart()
	waitConnected(t, leader, replica)
	publish(t, leader, subject, "crashed")
	r.wait(t, 1)

	want := []event{{"betting", false}, {"crashed", true}}
	if got := r.all(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("received %v, want %v (the event published during the outage never arrives)", got, want)
	}
	if g := counterValue(t, reg, "crashgame_cluster_events_gaps_total", map[string]string{"reason": "sequence"}); g != 1 {
		t.Errorf("events_gaps_total{reason=sequence} = %v, want 1", g)
	}
}

// A new leader publishing on the table's subject starts its own sequence:
// its first event heard is a gap (what it published before is unknown);
// then the old leader's and the new one's events may interleave (a replica
// that cashed a bet out publishes the bet's event while the leader
// publishes the round's), each one's numbering followed on its own: no gap
// while neither skips (a skip is TestEventsLostInAnOutageArriveAsAGap's).
func TestANewPublisherIsAGap(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	oldLeader, _ := connect(t, srv, "replica-1")
	newLeader, _ := connect(t, srv, "replica-2")
	replica, reg := connect(t, srv, "replica-3")
	subject := EventSubject("crash")
	r := subscribe(t, replica, subject)

	publish(t, oldLeader, subject, "old 1")
	publish(t, oldLeader, subject, "old 2")
	r.wait(t, 2)
	publish(t, newLeader, subject, "new 1")
	r.wait(t, 1)
	publish(t, newLeader, subject, "new 2")
	r.wait(t, 1)
	publish(t, oldLeader, subject, "old 3")
	r.wait(t, 1)
	publish(t, newLeader, subject, "new 3")
	r.wait(t, 1)

	want := []event{{"old 1", false}, {"old 2", false}, {"new 1", true}, {"new 2", false},
		{"old 3", false}, {"new 3", false}}
	if got := r.all(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("received %v, want %v", got, want)
	}
	if g := counterValue(t, reg, "crashgame_cluster_events_gaps_total", map[string]string{"reason": "publisher"}); g != 1 {
		t.Errorf("events_gaps_total{reason=publisher} = %v, want 1", g)
	}
}

// Each subject has its own sequence, on the publishing and on the receiving
// side: a wildcard subscription over two tables sees no gap.
func TestSequencesArePerSubject(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	leader, _ := connect(t, srv, "leader")
	replica, _ := connect(t, srv, "replica")
	r := subscribe(t, replica, SubjectPrefix+".*.events")
	for i := range 10 {
		publish(t, leader, EventSubject("crash"), fmt.Sprint("crash ", i))
		publish(t, leader, EventSubject("crash-eu"), fmt.Sprint("crash-eu ", i))
	}
	r.wait(t, 20)
	for _, e := range r.all() {
		if e.gap {
			t.Errorf("event %q has a gap", e.data)
		}
	}
}

func TestSubscribeDropsMessagesWithoutASequence(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	leader, _ := connect(t, srv, "leader")
	replica, _ := connect(t, srv, "replica")
	subject := EventSubject("crash")
	r := subscribe(t, replica, subject)
	// Another client (not a Bus) publishes on the table's subject.
	if err := leader.nc.Publish(subject, []byte("foreign")); err != nil {
		t.Fatalf("raw publish: %v", err)
	}
	publish(t, leader, subject, "ours")
	r.wait(t, 1)
	want := []event{{"ours", false}}
	if got := r.all(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("received %v, want %v", got, want)
	}
}

func TestNoEventAfterStop(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	leader, _ := connect(t, srv, "leader")
	replica, _ := connect(t, srv, "replica")
	subject := EventSubject("crash")
	stopped := newReceived()
	stop, err := replica.Subscribe(subject, stopped.handle)
	if err != nil {
		t.Fatalf("Subscribe: %v", err)
	}
	publish(t, leader, subject, "before")
	stopped.wait(t, 1)
	stop()
	stop() // twice is fine
	barrier := subscribe(t, replica, subject)
	publish(t, leader, subject, "after")
	barrier.wait(t, 1)
	if got := stopped.all(); len(got) != 1 {
		t.Errorf("a stopped subscription received %v", got)
	}
}

func TestPublishRefusesAnInvalidSubject(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	b, _ := connect(t, srv, "leader")
	for _, subject := range []string{"", EventSubject(""), SubjectPrefix + ".>", "a b"} {
		if err := b.Publish(subject, nil); !errors.Is(err, errSubject) {
			t.Errorf("Publish(%q): %v, want an invalid subject", subject, err)
		}
	}
	if _, err := b.Subscribe(EventSubject(""), func([]byte, bool) {}); !errors.Is(err, errSubject) {
		t.Errorf("Subscribe to an empty game's subject: %v, want an invalid subject", err)
	}
	if _, err := b.Serve(ActionSubject("", ActionAdmit, 1), nil); !errors.Is(err, errSubject) {
		t.Errorf("Serve an empty game's subject: %v, want an invalid subject", err)
	}
}

// A subscriber that holds some addressees only (SubscribeFor) is handed the
// events for them and those for everyone, never the others' (which every
// other subscriber still gets), and a gap found at an event it skipped is
// carried by the next event it is handed: a sequence lost in an outage,
// and a new publisher whose first event was for someone else.
func TestSubscribeForSkipsOthersEventsAndKeepsTheirGaps(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	leader, _ := connect(t, srv, "leader")
	newLeader, _ := connect(t, srv, "new-leader")
	replica, reg := connect(t, srv, "replica")
	subject := EventSubject("crash")
	mine := newReceived()
	var asked []string // touched by the subscription's goroutine only, read after waits
	stop, err := replica.SubscribeFor(subject, func(to string) bool {
		asked = append(asked, to)
		return to == "mine"
	}, mine.handle)
	if err != nil {
		t.Fatalf("SubscribeFor: %v", err)
	}
	t.Cleanup(stop)
	everyone := subscribe(t, replica, subject)
	publishFor := func(b *Bus, to, data string) {
		t.Helper()
		if err := b.PublishFor(subject, to, []byte(data)); err != nil {
			t.Fatalf("PublishFor(%s, %s): %v", to, data, err)
		}
	}

	publishFor(leader, "mine", "mine 1")
	publishFor(leader, "theirs", "theirs 1")
	publish(t, leader, subject, "phase 1")
	mine.wait(t, 2)
	everyone.wait(t, 3)

	// Lost in an outage: the event after it is someone else's.
	srv.Shutdown()
	waitFor(t, "the leader to see the outage", func() bool { return !leader.Connected() })
	if err := leader.PublishFor(subject, "mine", []byte("lost")); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("PublishFor during the outage: %v, want ErrUnavailable", err)
	}
	srv.Restart()
	waitConnected(t, leader, newLeader, replica)
	publishFor(leader, "theirs", "theirs 2")
	publish(t, leader, subject, "phase 2")
	publishFor(leader, "mine", "mine 2")
	mine.wait(t, 2)
	everyone.wait(t, 3)

	// A new publisher whose first event is someone else's.
	publishFor(newLeader, "theirs", "new theirs")
	publishFor(newLeader, "mine", "new mine")
	mine.wait(t, 1)
	everyone.wait(t, 2)

	want := []event{{"mine 1", false}, {"phase 1", false}, {"phase 2", true}, {"mine 2", false}, {"new mine", true}}
	if got := mine.all(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("the subscriber of mine received %v, want %v", got, want)
	}
	wantAll := []event{{"mine 1", false}, {"theirs 1", false}, {"phase 1", false}, {"theirs 2", true}, {"phase 2", false},
		{"mine 2", false}, {"new theirs", true}, {"new mine", false}}
	if got := everyone.all(); fmt.Sprint(got) != fmt.Sprint(wantAll) {
		t.Errorf("the subscriber of everyone received %v, want %v", got, wantAll)
	}
	if fmt.Sprint(asked) != fmt.Sprint([]string{"mine", "theirs", "theirs", "mine", "theirs", "mine"}) {
		t.Errorf("holds was asked about %v: want every addressed event, and never an event for everyone", asked)
	}
	// Each subscription counts its own gaps: two each.
	if g := counterValue(t, reg, "crashgame_cluster_events_gaps_total", map[string]string{"reason": "sequence"}); g != 2 {
		t.Errorf("events_gaps_total{reason=sequence} = %v, want 2", g)
	}
	if g := counterValue(t, reg, "crashgame_cluster_events_gaps_total", map[string]string{"reason": "publisher"}); g != 2 {
		t.Errorf("events_gaps_total{reason=publisher} = %v, want 2", g)
	}
}
