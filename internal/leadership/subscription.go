package leadership

// Notification announces a change of leadership: a term begins, or this
// process no longer leads.
type Notification struct {
	// Term is the term that began; nil when this process does not lead.
	Term *Term
}

// Leading reports whether the notification announces a term.
func (n Notification) Leading() bool { return n.Term != nil }

// Epoch is the announced term's epoch, 0 when not leading.
func (n Notification) Epoch() int64 {
	if n.Term == nil {
		return 0
	}
	return n.Term.epoch
}

// Subscription receives the elector's announcements: first the state at
// subscription, then each change. A subscriber that lags gets the latest
// state: an announcement not yet received is replaced by the next one (a
// term's end is also on its Done channel), so the elector never waits for a
// subscriber.
type Subscription struct {
	e  *Elector
	ch chan Notification
}

// Subscribe returns a subscription to the elector's announcements. Stop it
// when done.
func (e *Elector) Subscribe() *Subscription {
	s := &Subscription{e: e, ch: make(chan Notification, 1)}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.subs[s] = struct{}{}
	s.put(Notification{Term: e.term})
	return s
}

// C delivers the announcements.
func (s *Subscription) C() <-chan Notification { return s.ch }

// Stop ends the subscription; C receives nothing more.
func (s *Subscription) Stop() {
	s.e.mu.Lock()
	defer s.e.mu.Unlock()
	delete(s.e.subs, s)
}

// announce hands n to every subscriber. Elector's mu held.
func (e *Elector) announce(n Notification) {
	for s := range e.subs {
		s.put(n)
	}
}

// put replaces an announcement not yet received by n. Elector's mu held: the
// elector is the only sender, so the send never blocks.
func (s *Subscription) put(n Notification) {
	select {
	case <-s.ch:
	default:
	}
	s.ch <- n
}
