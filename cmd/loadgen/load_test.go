package main

import (
	"net/http"
	"testing"
	"time"
)

// A bet sent inside its window and not accepted counts as the game's
// lateness when its answer is BETTING_CLOSED, WALLET_UNAVAILABLE (its
// debit unknown at take-off) or SERVER_ERROR (its /bet never sent in time,
// or another failure of the game); a refusal of the bet itself does not; a
// bet sent after the window is the load tool's lateness, whatever its answer.
func TestJudgeLateness(t *testing.T) {
	t.Parallel()
	endsAt := time.Date(2026, 11, 29, 12, 0, 5, 0, time.UTC)
	in, after := endsAt.Add(-time.Millisecond), endsAt
	tests := []struct {
		name                        string
		wire                        time.Time
		status                      int
		code                        string
		inWindow, refusedLate, late int64
	}{
		{"accepted", in, http.StatusCreated, "", 1, 0, 0},
		{"betting closed", in, http.StatusConflict, "BETTING_CLOSED", 1, 1, 0},
		{"debit unknown at take-off", in, http.StatusServiceUnavailable, "WALLET_UNAVAILABLE", 1, 1, 0},
		{"never sent to the wallet in time", in, http.StatusInternalServerError, "SERVER_ERROR", 1, 1, 0},
		{"a sixth bet", in, http.StatusConflict, "TOO_MANY_BETS", 1, 0, 0},
		{"insufficient funds", in, http.StatusUnprocessableEntity, "INSUFFICIENT_FUNDS", 1, 0, 0},
		{"sent after the window", after, http.StatusConflict, "BETTING_CLOSED", 0, 0, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var lg loadgen
			lg.judgeLateness(tc.wire, endsAt, tc.status, tc.code)
			if got := [3]int64{lg.sentInWindow.Load(), lg.refusedInWindow.Load(), lg.sentLate.Load()}; got != [3]int64{tc.inWindow, tc.refusedLate, tc.late} {
				t.Fatalf("in window, refused late, sent late = %v, want %v", got, [3]int64{tc.inWindow, tc.refusedLate, tc.late})
			}
		})
	}
}
