package engine

import (
	"bytes"
	"slices"
	"sync"
)

// debitedBets are the bets whose money path ran on this replica (Debit), in
// the last rounds it saw, as their records stood when the leader's decision
// came back: a cashout of one of them needs no read of its row. A record
// may be stale (the bet cancelled, voided or cashed out elsewhere since):
// the cashout's commit moves the row only from accepted, and a bet moved
// first is read then (movedFirst). Only accepted records are used.
type debitedBets struct {
	mu     sync.Mutex
	order  []string                        // round ids, oldest first
	rounds map[string]map[string]BetRecord // round id → bet id → record
}

// debitedRounds is how many rounds' bets are kept: the one in play and the
// one before it, whose last cashouts may still be on their way.
const debitedRounds = 2

// put keeps rec, forgetting the oldest round's bets once more than
// debitedRounds rounds are kept.
func (d *debitedBets) put(rec BetRecord) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.rounds == nil {
		d.rounds = map[string]map[string]BetRecord{}
	}
	bets, ok := d.rounds[rec.RoundID]
	if !ok {
		bets = map[string]BetRecord{}
		d.rounds[rec.RoundID] = bets
		d.order = append(d.order, rec.RoundID)
		for len(d.order) > debitedRounds {
			delete(d.rounds, d.order[0])
			d.order = slices.Delete(d.order, 0, 1)
		}
	}
	bets[rec.ID] = rec
}

// decided records what the leader decided of bet id: its status.
func (d *debitedBets) decided(roundID, id, status string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if rec, ok := d.rounds[roundID][id]; ok {
		rec.Status = status
		d.rounds[roundID][id] = rec
	}
}

// accepted returns bet id of session when it is kept and was accepted.
func (d *debitedBets) accepted(session []byte, id string) (BetRecord, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, bets := range d.rounds {
		if rec, ok := bets[id]; ok {
			return rec, rec.Status == StatusAccepted && bytes.Equal(rec.SessionHash, session)
		}
	}
	return BetRecord{}, false
}

// withAutos returns the bets of roundID kept, pending or accepted, with an
// auto-cashout target.
func (d *debitedBets) withAutos(roundID string) []BetRecord {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []BetRecord
	for _, rec := range d.rounds[roundID] {
		if (rec.Status == StatusAccepted || rec.Status == StatusPending) && rec.AutoCashout != 0 {
			out = append(out, rec)
		}
	}
	return out
}

// status returns the status kept of bet id of roundID; "" when it is not
// kept.
func (d *debitedBets) status(roundID, id string) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.rounds[roundID][id].Status
}
