package sessions

import (
	"crypto/rand"
	"strings"
	"unicode"
)

// Mask returns the name other players see for a player (GAME-26, BAL-9).
//
// The rule, on the name with surrounding spaces removed and control or
// invisible characters dropped, counted in characters (runes, not bytes):
//
//   - 0 characters: "" (the caller shows an alias instead);
//   - 1 to 3 characters: the first character and "***" ("Ana" -> "A***");
//   - 4 or more: the first two characters, "***" and the last character
//     ("Maria Silva" -> "Ma***a", "joana" -> "jo***a").
//
// So at most three characters of a name are ever shown, never its length, and
// the result is at most 6 characters (the table document allows 32).
func Mask(name string) string {
	rs := make([]rune, 0, len(name))
	for _, r := range strings.TrimSpace(name) {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == unicode.ReplacementChar {
			continue
		}
		rs = append(rs, r)
	}
	// Trim again: dropping invisible characters may expose spaces.
	for len(rs) > 0 && unicode.IsSpace(rs[0]) {
		rs = rs[1:]
	}
	for len(rs) > 0 && unicode.IsSpace(rs[len(rs)-1]) {
		rs = rs[:len(rs)-1]
	}
	switch n := len(rs); {
	case n == 0:
		return ""
	case n <= 3:
		return string(rs[:1]) + "***"
	default:
		return string(rs[:2]) + "***" + string(rs[n-1])
	}
}

// displayName is the masked name of a player: the operator's name masked, or a
// random alias when there is none or when the name is the player id itself
// (the player id never reaches a browser).
func displayName(name, playerID string) string {
	if playerID != "" && strings.EqualFold(strings.TrimSpace(name), playerID) {
		name = ""
	}
	if m := Mask(name); m != "" {
		return m
	}
	return Alias()
}

// aliasDigits are the characters of a generated alias.
const aliasDigits = "0123456789"

// Alias returns a generated display name: "Pl***" and a random digit, shaped
// like a masked name; it says nothing about the player.
func Alias() string {
	b := make([]byte, 1)
	_, _ = rand.Read(b)
	return "Pl***" + string(aliasDigits[int(b[0])%len(aliasDigits)])
}
