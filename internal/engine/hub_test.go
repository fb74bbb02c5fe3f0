package engine

import "testing"

// A subscriber that does not keep up is dropped, its channel closed, and the
// others still receive: a slow client never blocks the table.
func TestHubDropsSlowSubscriber(t *testing.T) {
	t.Parallel()
	h := newHub()
	slow := h.add([]byte("slow"), 1, RoundView{})
	fast := h.add([]byte("fast"), 4, RoundView{})
	for i := 0; i < 3; i++ {
		h.broadcast(&Event{Type: EventBets})
	}
	if !slow.Dropped() {
		t.Fatal("the slow subscriber was not dropped")
	}
	n := 0
	for range slow.C { // one event, then closed
		n++
	}
	if n != 1 {
		t.Fatalf("the slow subscriber got %d events before its channel closed, want 1", n)
	}
	if fast.Dropped() || len(fast.C) != 3 {
		t.Fatalf("the fast subscriber: dropped %v, %d events", fast.Dropped(), len(fast.C))
	}
	if h.count() != 1 {
		t.Fatalf("%d subscribers left, want 1", h.count())
	}
	// Own events reach only their session, and a closed subscription is gone.
	h.send([]byte("fast"), &Event{Type: EventBet})
	if len(fast.C) != 4 {
		t.Fatalf("own event not delivered: %d", len(fast.C))
	}
	fast.Close()
	fast.Close()
	if h.count() != 0 || fast.Dropped() {
		t.Fatalf("after Close: %d subscribers, dropped %v", h.count(), fast.Dropped())
	}
}

// Event.Encoded runs the encoder once for every subscriber that shares the event.
func TestEventEncodedOnce(t *testing.T) {
	t.Parallel()
	ev := &Event{Type: EventBets}
	calls := 0
	enc := func(*Event) []byte { calls++; return []byte("x") }
	for i := 0; i < 5; i++ {
		if string(ev.Encoded(enc)) != "x" {
			t.Fatal("wrong encoding")
		}
	}
	if calls != 1 {
		t.Fatalf("encoded %d times", calls)
	}
}
