package engine

import (
	"sync"
	"sync/atomic"
)

// Event types, as the live stream names them.
const (
	EventRoundBetting = "round.betting"
	EventRoundFlying  = "round.flying"
	EventRoundCrashed = "round.crashed"
	EventBets         = "bets" // the round's public board: latest bets and cashouts, and counts
	EventBet          = "bet"  // one of the session's own bets changed
)

// Event is one message of the live stream. Which fields are set depends on Type.
// Subscribers receive the same *Event and must never change it.
type Event struct {
	Type      string
	Round     RoundView // round.* events
	Items     []BetItem // bets: the board's latest changes, newest first
	Count     int       // bets: bets standing in the round
	CashedOut int       // bets: bets of the round cashed out
	Bet       *BetView  // bet

	once    sync.Once
	encoded []byte
}

// Encoded returns enc(e), computed once for all the subscribers that share e:
// a broadcast to 10,000 streams is encoded once, not 10,000 times.
func (e *Event) Encoded(enc func(*Event) []byte) []byte {
	e.once.Do(func() { e.encoded = enc(e) })
	return e.encoded
}

// BetItem is a bet as other players see it: a masked name, no ids of the player.
type BetItem struct {
	BetID      string
	Name       string
	Currency   string
	Amount     int64
	Multiplier int64 // 0 until cashed out
	Payout     int64 // 0 until cashed out
}

// Subscription receives the events of one table for one session. A subscriber
// that does not keep up is dropped (its channel closed, Dropped true); it never
// blocks the table.
type Subscription struct {
	C       <-chan *Event
	ch      chan *Event
	session string
	hub     *hub
	mu      sync.Mutex
	dropped bool
	closed  bool
}

// Dropped reports whether the table dropped the subscriber for being slow.
func (s *Subscription) Dropped() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dropped
}

// Close unsubscribes. It is safe to call more than once.
func (s *Subscription) Close() { s.hub.remove(s, false) }

// Events is where a table's events go: to every subscriber (Broadcast) or
// to those of one session (Send). Without one, a table delivers them to its
// own subscribers (one process). In a cluster the leader's table publishes
// them to every replica, whose tables hand them to their subscribers with
// Deliver. Implementations must not block the table's loop, and must never
// change an event.
type Events interface {
	Broadcast(ev *Event)
	Send(session []byte, ev *Event)
}

// localEvents delivers a table's events to its own subscribers.
type localEvents struct{ h *hub }

func (l localEvents) Broadcast(ev *Event)            { l.h.broadcast(ev) }
func (l localEvents) Send(session []byte, ev *Event) { l.h.send(session, ev) }

type hub struct {
	mu        sync.RWMutex
	all       map[*Subscription]struct{}
	bySession map[string]map[*Subscription]struct{}
	board     atomic.Pointer[Event] // the latest bets event broadcast
}

func newHub() *hub {
	return &hub{all: map[*Subscription]struct{}{}, bySession: map[string]map[*Subscription]struct{}{}}
}

// add subscribes session. A new subscriber of round v starts from its phase
// event and its board: the latest board broadcast for v, or an empty one.
// Both are queued under the lock that broadcasts wait for, so the subscriber
// misses no later board and receives none twice.
func (h *hub) add(session []byte, buf int, v RoundView) *Subscription {
	ch := make(chan *Event, buf)
	s := &Subscription{C: ch, ch: ch, session: string(session), hub: h}
	h.mu.Lock()
	defer h.mu.Unlock()
	if v.RoundID != "" {
		b := h.board.Load()
		if b == nil || b.Round.RoundID != v.RoundID {
			b = &Event{Type: EventBets, Round: v}
		}
		for _, ev := range []*Event{{Type: phaseEvent(v.Phase), Round: v}, b} {
			select {
			case ch <- ev:
			default:
			}
		}
	}
	h.all[s] = struct{}{}
	m := h.bySession[s.session]
	if m == nil {
		m = map[*Subscription]struct{}{}
		h.bySession[s.session] = m
	}
	m[s] = struct{}{}
	return s
}

func (h *hub) remove(s *Subscription, slow bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.closed, s.dropped = true, slow
	delete(h.all, s)
	if m := h.bySession[s.session]; m != nil {
		delete(m, s)
		if len(m) == 0 {
			delete(h.bySession, s.session)
		}
	}
	close(s.ch)
}

// broadcast sends ev to every subscriber, dropping those whose buffer is full.
// A bets event becomes the board that new subscribers start from.
func (h *hub) broadcast(ev *Event) {
	h.deliver(ev, func() map[*Subscription]struct{} {
		if ev.Type == EventBets {
			h.board.Store(ev) // under the read lock that add waits for
		}
		return h.all
	})
}

// loadBoard makes ev the board new subscribers start from, unless a board of
// that round or a later one was broadcast meanwhile.
func (h *hub) loadBoard(ev *Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if b := h.board.Load(); b == nil || b.Round.Seq < ev.Round.Seq {
		h.board.Store(ev)
	}
}

// send sends ev to the subscribers of one session.
func (h *hub) send(session []byte, ev *Event) {
	h.deliver(ev, func() map[*Subscription]struct{} { return h.bySession[string(session)] })
}

// deliver sends ev to the subscribers that subs returns, read under the hub's
// read lock, without blocking: those whose buffer is full are dropped once the
// lock is released.
func (h *hub) deliver(ev *Event, subs func() map[*Subscription]struct{}) {
	var slow []*Subscription
	h.mu.RLock()
	for s := range subs() {
		select {
		case s.ch <- ev:
		default:
			slow = append(slow, s)
		}
	}
	h.mu.RUnlock()
	for _, s := range slow {
		h.remove(s, true)
	}
}

// holds reports whether session has a subscriber.
func (h *hub) holds(session []byte) bool {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return len(h.bySession[string(session)]) > 0
}

// count returns the number of subscribers.
func (h *hub) count() int {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return len(h.all)
}
