//go:build integration

package browser

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUntranslatedFinds checks the checker: on the real dictionaries it flags
// English strings (with or without filled placeholders) and raw keys, and
// passes Portuguese text, amounts and multipliers.
func TestUntranslatedFinds(t *testing.T) {
	read := func(lang string) map[string]string {
		raw, err := os.ReadFile(filepath.Join(moduleRoot(t), "internal", "table", "web", "static", "i18n", lang+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var d map[string]string
		if err := json.Unmarshal(raw, &d); err != nil {
			t.Fatal(err)
		}
		return d
	}
	en, pt := read("en"), read("pt")
	u := newUntranslated(en, pt)
	if len(u.english) < 50 {
		t.Fatalf("only %d English strings to look for", len(u.english))
	}
	bad := []string{
		en["balance.label"],
		en["phase.flying"],
		strings.ReplaceAll(en["panel.bet"], "{amount}", "R$ 1,00"),
		strings.NewReplacer("{m}", "1.01x", "{amount}", "R$10.10").Replace(en["panel.won"]),
		"  " + en["bets.none"] + "\n",
		"panel.cashout",
		"status.refunded",
		"Apostar {amount}",
	}
	for _, s := range bad {
		if got := u.find([]shown{{Text: s, Where: "test"}}); len(got) != 1 {
			t.Errorf("%q: found %v, want one finding", s, got)
		}
	}
	good := []string{
		pt["balance.label"], pt["phase.flying"], "Apostar R$ 1,00", "Sacou em 1.01x: R$ 10,10", "R$ 10.000,10",
		"1.01x", "Crash", "½", "2×", "7 ms", "Jo***a", pt["help.formula"],
		"r = the top 52 bits of HMAC-SHA256(key = the round hash), from 1 to 2 and so on up to max_multiplier",
	}
	for _, s := range good {
		if got := u.find([]shown{{Text: s, Where: "test"}}); len(got) != 0 {
			t.Errorf("%q: found %v, want nothing", s, got)
		}
	}
}
