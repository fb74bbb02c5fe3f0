package sessions

import "time"

// The balances a player is shown come from here. Every change of a session's
// balance, whatever made it, is published to the session's watchers (the
// streams open on it in this process, Watch): the wallet's answer to a bet
// and the demo bank's figure (Reported), what a cashout or a cancel queued
// (Expect), the wallet's answer to a delivered /win or /rollback
// (OnWalletBalance), what another replica decided (Heard), and the row read
// again (settleRow). Nothing else sends a player a balance.
//
// In a cluster the changes decided here (the first three) are also handed to
// Options.Relay, which carries them to the other replicas; each of them
// takes them with Heard, which never relays.

// Change is a balance decided for one session (Session set), or for every
// session of a player in a currency ("" currency: every currency), as it
// crosses to the other replicas of a cluster.
type Change struct {
	Session  []byte // SHA-256 of the session id; nil: the player's sessions
	Demo     bool   // a demo session's: its balance is its bank's
	Operator string
	PlayerID string
	Currency string
	Balance  int64 // cents
}

// Shown is a balance to show on a session's stream.
type Shown struct {
	Balance  int64 // cents, never negative
	Currency string
}

// Watch is a stream's view of its session's balance: C holds the latest
// change not yet taken (an older one is replaced: only the newest balance
// matters to a page).
type Watch struct {
	C    <-chan Shown
	c    chan Shown
	hash string
	s    *Service
}

// Watch starts publishing the balance changes of the session stored under
// hash to the returned Watch, until Stop.
func (s *Service) Watch(hash []byte) *Watch {
	w := &Watch{c: make(chan Shown, 1), hash: string(hash), s: s}
	w.C = w.c
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.watchers[w.hash]
	if m == nil {
		m = map[*Watch]struct{}{}
		s.watchers[w.hash] = m
	}
	m[w] = struct{}{}
	return w
}

// Stop ends the watch.
func (w *Watch) Stop() {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	if m := w.s.watchers[w.hash]; m != nil {
		delete(m, w)
		if len(m) == 0 {
			delete(w.s.watchers, w.hash)
		}
	}
}

// showLocked publishes a session's new balance to its watchers. Callers
// hold mu, so that two changes reach a watcher in the order they were made.
func (s *Service) showLocked(sess Session, balance int64) {
	v := Shown{Balance: max(balance, 0), Currency: sess.Currency}
	for w := range s.watchers[string(sess.Hash)] {
		select {
		case w.c <- v:
		default:
			select { // replace the change not taken yet
			case <-w.c:
			default:
			}
			w.c <- v
		}
	}
}

// relay hands a change decided here to the other replicas (Options.Relay).
// It is called without mu held.
func (s *Service) relay(c Change) {
	if s.relayTo != nil {
		s.relayTo(c)
	}
}

// Heard takes a change another replica decided (Options.Relay there): a
// session held here shows it at once, and one loaded here later starts from
// it (follow.go). A demo session's balance is its bank's: the bank here
// takes it. It is never relayed again.
func (s *Service) Heard(c Change) {
	balance := max(c.Balance, 0)
	now := s.now()
	if c.Session == nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.playerBalanceLocked(c.Operator, c.PlayerID, c.Currency, balance, now)
		return
	}
	if c.Demo {
		s.demo.Follow(c.Session, balance)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.byHash[string(c.Session)]; ok {
		if !e.s.Demo {
			e.s.Balance, e.seq, e.fromRow = balance, e.seq+1, time.Time{}
		}
		s.showLocked(e.s, balance)
		return
	}
	s.followSeq++
	s.followHash[string(c.Session)] = followed{balance: balance, seq: s.followSeq, at: now}
}
