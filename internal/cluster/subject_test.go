package cluster

import (
	"errors"
	"testing"
)

func TestSubjects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, got, want string
	}{
		{"events", EventSubject("crash"), "crashgame.table.crash.events"},
		{"admit", ActionSubject("crash", ActionAdmit, 1), "crashgame.table.crash.action.admit.1"},
		{"cashout", ActionSubject("crash-eu_2", ActionCashout, 1), "crashgame.table.crash-eu_2.action.cashout.1"},
		{"a dotted id stays one token", EventSubject("crash.v2"), "crashgame.table.crash%2Ev2.events"},
		{"wildcards and spaces are escaped", EventSubject("a*b> c%"), "crashgame.table.a%2Ab%3E%20c%25.events"},
		{"non-ASCII bytes are escaped", GameToken("é"), "%C3%A9"},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, tc.got, tc.want)
		}
	}
}

func TestGameTokensAreDistinctAndValid(t *testing.T) {
	t.Parallel()
	ids := []string{"crash", "crash.v2", "crash%2Ev2", "crash-v2", "crash_v2", "crash.", ".crash", "a..b", "*", ">", " "}
	seen := map[string]string{}
	for _, id := range ids {
		tok := GameToken(id)
		if other, dup := seen[tok]; dup {
			t.Errorf("GameToken(%q) = GameToken(%q) = %q", id, other, tok)
		}
		seen[tok] = id
		if err := checkSubject(EventSubject(id), false); err != nil {
			t.Errorf("EventSubject(%q): %v", id, err)
		}
	}
}

func TestCheckSubject(t *testing.T) {
	t.Parallel()
	tests := []struct {
		subject   string
		wildcards bool
		ok        bool
	}{
		{"crashgame.table.crash.events", false, true},
		{"crashgame.table.*.events", true, true},
		{"crashgame.table.>", true, true},
		{"crashgame.table.*.events", false, false},
		{"crashgame.table.>", false, false},
		{"crashgame.>.events", true, false},
		{"crashgame.ta*ble", true, false},
		{"", true, false},
		{"crashgame..events", true, false},
		{"crashgame.table.", true, false},
		{".crashgame", true, false},
		{"crash game", true, false},
		{"crash\tgame", true, false},
		{"crash\x7fgame", true, false},
	}
	for _, tc := range tests {
		err := checkSubject(tc.subject, tc.wildcards)
		if (err == nil) != tc.ok {
			t.Errorf("checkSubject(%q, wildcards=%v) = %v, want ok=%v", tc.subject, tc.wildcards, err, tc.ok)
		}
		if err != nil && !errors.Is(err, errSubject) {
			t.Errorf("checkSubject(%q): %v does not wrap errSubject", tc.subject, err)
		}
	}
}

// The kind label never holds an id: only a short lower-case action word.
func TestKindOf(t *testing.T) {
	t.Parallel()
	tests := []struct{ subject, want string }{
		{ActionSubject("crash", ActionAdmit, 1), "admit"},
		{ActionSubject("crash.v2", ActionCashout, 1), "cashout"},
		{ActionSubject("crash", ActionCancel, 1), "cancel"},
		{ActionSubject("crash", "player-42", 1), "other"},
		{ActionSubject("crash", "averyveryverylongaction", 1), "other"},
		{ActionSubject("crash", "bet.extra", 1), "other"},
		{EventSubject("crash"), "other"},
		{"elsewhere.crash.action.bet", "other"},
	}
	for _, tc := range tests {
		if got := kindOf(tc.subject); got != tc.want {
			t.Errorf("kindOf(%q) = %q, want %q", tc.subject, got, tc.want)
		}
	}
}
