package sessions

import "time"

// In a cluster a session's display balance changes where the table's leader
// runs (a bet's /bet answer, a cashout's expected balance) and where the
// movement queue delivered a /win or /rollback (any replica). Every replica
// hears of each change (Heard: the relayed changes of the others), but only
// one that holds the session live keeps it. A replica that
// loads the session later (its player's stream reconnected here after a
// fail-over) would otherwise show the row the leader writes at most once a
// second, and never wrote if it died before: a balance older than the one the
// page showed. So the changes heard for sessions this process does not hold
// are remembered (for the sessions' lifetime, TTL) and the newest one heard
// becomes the balance of the session when it is loaded here. A process that
// heard nothing (it started since) reads the row, which the wallet's answers
// to delivered movements reach too: the delivering process writes them to
// the rows of the player's sessions, whether it holds them or not
// (OnWalletBalance).

// followed is a balance heard for a session, or a player, not held here.
type followed struct {
	balance int64
	seq     uint64 // the order in which this process heard it
	at      time.Time
}

// followKey names a player's sessions in one currency ("" matches every
// currency, as OnWalletBalance's).
type followKey struct{ operator, playerID, currency string }

// followPlayerLocked records a balance the wallet answered for a player's
// sessions in currency, for those loaded here later.
func (s *Service) followPlayerLocked(operator, playerID, currency string, balance int64, now time.Time) {
	s.followSeq++
	s.followPlayer[followKey{operator, playerID, currency}] = followed{balance: balance, seq: s.followSeq, at: now}
}

// heardLocked is the newest balance heard for sess, loaded from its row, while
// it was not held here, if any. A player's balance heard before the session
// was opened is not the session's: its opening asked the wallet (/balance).
func (s *Service) heardLocked(sess Session) (int64, bool) {
	var best followed
	if f, ok := s.followHash[string(sess.Hash)]; ok {
		best = f
	}
	if sess.PlayerID != "" {
		for _, cur := range []string{sess.Currency, ""} {
			if f, ok := s.followPlayer[followKey{sess.Operator, sess.PlayerID, cur}]; ok && f.seq > best.seq && !f.at.Before(sess.CreatedAt) {
				best = f
			}
		}
	}
	return best.balance, best.seq != 0
}

// sweepFollowedLocked forgets what was heard longer ago than a session lives.
func (s *Service) sweepFollowedLocked(now time.Time) {
	for h, f := range s.followHash {
		if now.Sub(f.at) > TTL {
			delete(s.followHash, h)
		}
	}
	for k, f := range s.followPlayer {
		if now.Sub(f.at) > TTL {
			delete(s.followPlayer, k)
		}
	}
}
