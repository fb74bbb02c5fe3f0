package table

import (
	"testing"
	"time"

	"github.com/crashstudio/crashgame/internal/engine"
)

// A stream writes the round's board at most once per interval, and always
// the latest: a board that comes before its turn is held, a newer one
// replaces it, and a new round drops a held board of the last one.
func TestBoardPacer(t *testing.T) {
	t.Parallel()
	board := func(round string, count int) *engine.Event {
		return &engine.Event{Type: engine.EventBets, Round: engine.RoundView{RoundID: round}, Count: count}
	}
	var b boardPacer
	defer b.stop()
	if !b.take(board("r1", 1), time.Hour) {
		t.Fatal("the first board was held")
	}
	if b.take(board("r1", 2), time.Hour) || b.take(board("r1", 3), time.Hour) {
		t.Fatal("a board before its turn was written")
	}
	if b.due() == nil {
		t.Fatal("a held board has no turn")
	}
	if ev := b.release(); ev == nil || ev.Count != 3 {
		t.Fatalf("released %+v, want the latest board (count 3)", ev)
	}
	if b.due() != nil || b.release() != nil {
		t.Fatal("a board released twice")
	}

	// Held across a new round: dropped.
	b.take(board("r1", 4), time.Hour)
	b.newRound("r1")
	if b.due() == nil {
		t.Fatal("a phase event of the same round dropped its board")
	}
	b.newRound("r2")
	if b.due() != nil || b.release() != nil {
		t.Fatal("the last round's board outlived the new round")
	}

	// Its turn comes: the held board is due.
	var c boardPacer
	defer c.stop()
	c.take(board("r3", 1), 0)
	if c.take(board("r3", 2), 20*time.Millisecond) {
		t.Fatal("a board 20 ms before its turn was written")
	}
	select {
	case <-c.due():
		if ev := c.release(); ev == nil || ev.Count != 2 {
			t.Fatalf("released %+v at its turn", ev)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the held board's turn never came")
	}
}
