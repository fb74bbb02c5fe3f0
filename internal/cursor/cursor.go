// Package cursor encodes the keyset cursors of the back office's pages: the
// last listed row's time and id, opaque to the operator who passes it back.
// It must never carry anything but that row's own time and id.
package cursor

import (
	"encoding/base64"
	"strconv"
	"strings"
)

// Encode returns the cursor after the row at (ms, id).
func Encode(ms int64, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(ms, 10) + ":" + id))
}

// Decode reads a cursor Encode made; ok is false for anything else.
func Decode(c string) (ms int64, id string, ok bool) {
	raw, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return 0, "", false
	}
	head, id, found := strings.Cut(string(raw), ":")
	n, err := strconv.ParseInt(head, 10, 64)
	if !found || err != nil || id == "" {
		return 0, "", false
	}
	return n, id, true
}
