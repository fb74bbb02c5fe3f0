package operatorapi

import (
	"testing"
	"time"

	"github.com/crashstudio/crashgame/gen/game"
)

// Every list route reads its range, status, cursor and limit the same way:
// an absent field is the default, and a limit of 0 is out of range (the
// query refuses -1), as game.v1.yaml says.
func TestPageOf(t *testing.T) {
	t.Parallel()
	str := func(s string) *string { return &s }
	lim := func(n int32) *int32 { return &n }
	exhausted := game.TransactionsRequestStatus("exhausted")
	tests := []struct {
		name   string
		got    page
		status string
		cursor string
		limit  int
	}{
		{"nothing but the range", pageOf[string](1000, 2000, nil, nil, nil), "", "", 0},
		{"a status", pageOf(1000, 2000, &exhausted, nil, nil), "exhausted", "", 0},
		{"a cursor and a limit", pageOf[string](1000, 2000, nil, str("c1"), lim(50)), "", "c1", 50},
		{"a limit of 0 is out of range", pageOf[string](1000, 2000, nil, nil, lim(0)), "", "", -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := tc.got
			if !p.from.Equal(time.UnixMilli(1000)) || !p.to.Equal(time.UnixMilli(2000)) || p.status != tc.status || p.cursor != tc.cursor || p.limit != tc.limit {
				t.Errorf("page = %+v, want status %q cursor %q limit %d", p, tc.status, tc.cursor, tc.limit)
			}
		})
	}
}
