package table

import (
	"math"
	"testing"
)

// The document's int32 fields never show a wrapped number.
func TestInt32Of(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   int64
		want int32
	}{
		{0, 0}, {9700, 9700}, {-5, -5},
		{math.MaxInt32, math.MaxInt32}, {math.MaxInt32 + 1, math.MaxInt32}, {math.MaxInt64, math.MaxInt32},
		{math.MinInt32, math.MinInt32}, {math.MinInt32 - 1, math.MinInt32}, {math.MinInt64, math.MinInt32},
	} {
		if got := int32Of(tc.in); got != tc.want {
			t.Errorf("int32Of(%d) = %d, want %d", tc.in, got, tc.want)
		}
	}
	if got := int32Of(1 << 40); got != math.MaxInt32 {
		t.Errorf("int32Of(int 1<<40) = %d", got)
	}
}
