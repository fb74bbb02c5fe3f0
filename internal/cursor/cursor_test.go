package cursor_test

import (
	"testing"

	"github.com/crashstudio/crashgame/internal/cursor"
)

func TestRoundTripAndRefusals(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		ms int64
		id string
	}{{0, "a"}, {1795000000120, "bt_01JR6ZM2S8D4F6G8H0J2K4M6N8-w"}, {42, "id:with:colons"}} {
		ms, id, ok := cursor.Decode(cursor.Encode(tc.ms, tc.id))
		if !ok || ms != tc.ms || id != tc.id {
			t.Errorf("Decode(Encode(%d, %q)) = %d, %q, %t", tc.ms, tc.id, ms, id, ok)
		}
	}
	for _, bad := range []string{"", "not base64!", "bm9wZQ", cursor.Encode(5, "")[:2], "MTI6"} {
		if _, _, ok := cursor.Decode(bad); ok {
			t.Errorf("Decode(%q) accepted", bad)
		}
	}
}
