package engine

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

func itemIDs(items []BetItem) []string {
	out := make([]string, 0, len(items))
	for _, it := range items {
		out = append(out, it.BetID)
	}
	return out
}

// The round's board lists its latest changes newest first, at most BoardSize,
// each bet once, with the counts of the whole round; a cancelled bet leaves it.
func TestBoard(t *testing.T) {
	t.Parallel()
	item := func(id string) BetItem { return BetItem{BetID: id, Name: "p***", Currency: "BRL", Amount: 100} }
	won := func(id string) BetItem {
		it := item(id)
		it.Multiplier, it.Payout = 150, 150
		return it
	}
	tests := []struct {
		name      string
		play      func(b *board)
		wantIDs   []string
		wantCount int
		wantCash  int
	}{
		{"empty", func(b *board) {}, []string{}, 0, 0},
		{"newest first", func(b *board) {
			b.accepted(item("a"))
			b.accepted(item("b"))
		}, []string{"b", "a"}, 2, 0},
		{"a cashout moves its bet to the top, once", func(b *board) {
			b.accepted(item("a"))
			b.accepted(item("b"))
			b.cashed(won("a"))
		}, []string{"a", "b"}, 2, 1},
		{"a cancelled bet leaves the board and the count", func(b *board) {
			b.accepted(item("a"))
			b.accepted(item("b"))
			b.cancelled("a")
		}, []string{"b"}, 1, 0},
		{"bounded, counts whole", func(b *board) {
			for i := range BoardSize + 5 {
				b.accepted(item(fmt.Sprint(i)))
			}
		}, func() []string {
			var ids []string
			for i := BoardSize + 4; i >= 5; i-- {
				ids = append(ids, fmt.Sprint(i))
			}
			return ids
		}(), BoardSize + 5, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var b board
			tc.play(&b)
			ev := b.event(RoundView{RoundID: "r-1"})
			if got := itemIDs(ev.Items); !slices.Equal(got, tc.wantIDs) {
				t.Errorf("items %v, want %v", got, tc.wantIDs)
			}
			if ev.Count != tc.wantCount || ev.CashedOut != tc.wantCash || ev.Type != EventBets || ev.Round.RoundID != "r-1" {
				t.Errorf("event %s of %s: count %d cashed_out %d, want %d %d", ev.Type, ev.Round.RoundID, ev.Count, ev.CashedOut, tc.wantCount, tc.wantCash)
			}
			if b.changed {
				t.Error("still changed once its event was made")
			}
		})
	}
}

// The board a table builds from the stored bets (a replica that starts
// mid-round) orders them by their latest change, a cashout by when it settled.
func TestBoardOfStoredBets(t *testing.T) {
	t.Parallel()
	pay := int64(300)
	at := func(ms int64) time.Time { return time.UnixMilli(ms).UTC() }
	recs := []BetRecord{
		{ID: "a", Amount: 100, Status: StatusAccepted, PlacedAt: at(10)},
		{ID: "b", Amount: 200, Status: StatusCashedOut, PlacedAt: at(11), SettledAt: at(40), Multiplier: 150, Payout: &pay},
		{ID: "c", Amount: 100, Status: StatusLost, PlacedAt: at(12)},
	}
	ev := boardOf(RoundView{RoundID: "r-2"}, recs)
	if got := itemIDs(ev.Items); !slices.Equal(got, []string{"b", "c", "a"}) {
		t.Fatalf("items %v, want [b c a]", got)
	}
	if ev.Count != 3 || ev.CashedOut != 1 || ev.Items[0].Payout != 300 || ev.Items[0].Multiplier != 150 {
		t.Fatalf("board %+v", ev)
	}
}

// A new subscriber starts from the round's phase and its latest board; a
// board of another round is not this round's, so it starts from an empty one.
func TestHubStartsSubscribersFromTheBoard(t *testing.T) {
	t.Parallel()
	h := newHub()
	v := RoundView{RoundID: "r-7", Seq: 7, Phase: PhaseBetting}
	board := &Event{Type: EventBets, Round: v, Count: 3, Items: []BetItem{{BetID: "x"}}}
	h.broadcast(board)
	s := h.add([]byte("s"), 4, v)
	if ev := <-s.C; ev.Type != EventRoundBetting || ev.Round.RoundID != "r-7" {
		t.Fatalf("first event %s of %s, want round.betting of r-7", ev.Type, ev.Round.RoundID)
	}
	if ev := <-s.C; ev != board {
		t.Fatalf("second event %+v, want the latest board", ev)
	}

	next := RoundView{RoundID: "r-8", Seq: 8, Phase: PhaseBetting}
	s2 := h.add([]byte("s2"), 4, next)
	<-s2.C
	if ev := <-s2.C; ev.Type != EventBets || ev.Round.RoundID != "r-8" || ev.Count != 0 || len(ev.Items) != 0 {
		t.Fatalf("board of a new round %+v, want an empty one of r-8", ev)
	}
	// A board loaded from the database never replaces a newer broadcast one.
	h.loadBoard(&Event{Type: EventBets, Round: RoundView{RoundID: "r-6", Seq: 6}})
	if h.board.Load() != board {
		t.Fatal("an older stored board replaced the broadcast one")
	}
	if n := len(h.add([]byte("none"), 4, RoundView{}).C); n != 0 {
		t.Fatalf("a subscriber with no round shown got %d events", n)
	}
}
