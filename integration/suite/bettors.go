//go:build integration

package suite

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"
)

// Bettors are players who each bet every 300 ms, from their own goroutine,
// while a test injects a fault: every answer is counted and every accepted bet
// kept, for the checks after the fault (checkAcceptedKept, Reconcile).
type Bettors struct {
	stop chan struct{}
	wg   sync.WaitGroup

	mu       sync.Mutex
	answers  map[string]int // by "status error_code"
	accepted []Bet
}

// StartBetting starts ss betting amount with auto-cashout autoCashout (0:
// none). check, when not nil, is called with each answer and the index of its
// player in ss: it fails t for an answer the test forbids.
func StartBetting(t *testing.T, ss []*Session, amount, autoCashout int64, check func(i int, r Reply)) *Bettors {
	b := &Bettors{stop: make(chan struct{}), answers: map[string]int{}}
	for i, s := range ss {
		b.wg.Add(1)
		go func() {
			defer b.wg.Done()
			for {
				select {
				case <-b.stop:
					return
				default:
				}
				bet, r := s.TryBet(t, amount, autoCashout)
				b.mu.Lock()
				b.answers[fmt.Sprintf("%d %s", r.Status, r.ErrorCode())]++
				if r.Status == http.StatusCreated {
					b.accepted = append(b.accepted, bet)
				}
				b.mu.Unlock()
				if check != nil {
					check(i, r)
				}
				time.Sleep(300 * time.Millisecond)
			}
		}()
	}
	return b
}

// Stop stops the players, waits for their last bets' answers and returns
// the answers counted and the bets accepted.
func (b *Bettors) Stop() (answers map[string]int, accepted []Bet) {
	close(b.stop)
	b.wg.Wait()
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.answers, b.accepted
}
