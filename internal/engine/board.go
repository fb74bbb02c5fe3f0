package engine

import (
	"slices"
	"time"
)

// BoardSize is how many bets a round's public board lists: its latest
// changes (bets accepted and cashed out), newest first. A large table's
// stream carries this bounded list and the round's counts, never every bet.
const BoardSize = 30

// board is the round's public board as the loop keeps it: the latest changes
// and the counts of the whole round. It is owned by the loop goroutine.
type board struct {
	items     []BetItem // newest first, at most BoardSize
	count     int       // bets standing in the round (accepted, cashed out, lost)
	cashedOut int
	changed   bool // since the last event
}

// accepted puts a bet the wallet accepted on the board.
func (b *board) accepted(it BetItem) {
	b.count++
	b.top(it)
}

// cashed moves a bet that cashed out to the top of the board, with its payout.
func (b *board) cashed(it BetItem) {
	b.cashedOut++
	b.top(it)
}

// cancelled takes a bet the player withdrew off the board.
func (b *board) cancelled(betID string) {
	b.count--
	b.items = slices.DeleteFunc(b.items, func(it BetItem) bool { return it.BetID == betID })
	b.changed = true
}

func (b *board) top(it BetItem) {
	b.items = slices.DeleteFunc(b.items, func(x BetItem) bool { return x.BetID == it.BetID })
	b.items = slices.Insert(b.items, 0, it)
	if len(b.items) > BoardSize {
		b.items = b.items[:BoardSize]
	}
	b.changed = true
}

// event returns the board as a bets event of round v and marks it sent. Its
// items are a copy: subscribers share the event while the loop goes on.
func (b *board) event(v RoundView) *Event {
	b.changed = false
	return &Event{Type: EventBets, Round: v, Items: slices.Clone(b.items), Count: b.count, CashedOut: b.cashedOut}
}

// boardOf builds the board of round v from its stored bets, the latest change
// first (a cashout changes a bet when it settles).
func boardOf(v RoundView, recs []BetRecord) *Event {
	changed := func(r BetRecord) time.Time {
		if r.Status == StatusCashedOut {
			return r.SettledAt
		}
		return r.PlacedAt
	}
	slices.SortStableFunc(recs, func(a, b BetRecord) int { return changed(b).Compare(changed(a)) })
	var b board
	for _, r := range recs {
		b.count++
		if r.Status == StatusCashedOut {
			b.cashedOut++
		}
		if len(b.items) < BoardSize {
			it := BetItem{BetID: r.ID, Name: r.PlayerName, Currency: r.Currency, Amount: r.Amount}
			if r.Status == StatusCashedOut && r.Payout != nil {
				it.Multiplier, it.Payout = r.Multiplier, *r.Payout
			}
			b.items = append(b.items, it)
		}
	}
	return b.event(v)
}
