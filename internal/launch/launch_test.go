package launch_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/crashstudio/crashgame/internal/launch"
	"github.com/crashstudio/crashgame/internal/tickets"
)

// issued records the sessions a launch asked tickets for.
type issued struct{ got []tickets.Session }

func (i *issued) Issue(_ context.Context, s tickets.Session) (string, error) {
	i.got = append(i.got, s)
	return "tk_test", nil
}

func newService(t *testing.T) (*launch.Service, *issued) {
	t.Helper()
	tk := new(issued)
	s := launch.New(launch.Installation{
		BaseURL:         "https://games.example.com",
		Languages:       []string{"pt", "en", "es"},
		DefaultLanguage: "en",
		Games:           []launch.Game{{ID: "crash", Name: "Crash"}},
		Operators:       []launch.Operator{{ID: "acme", Games: []string{"crash"}, Currencies: []launch.Currency{{Code: "BRL"}}, HasWallet: true}},
	}, tk)
	return s, tk
}

// Rule GAME-19 LIM-4: a token is at least 16 characters that are not
// whitespace, and holds no Unicode control (Cc) or format (Cf) character:
// invisible characters are not a token, however many there are.
func TestLaunchRefusesInvisibleTokens(t *testing.T) {
	t.Parallel()
	valid := "tok_0123456789abcdef"
	tests := []struct {
		name  string
		token string
		ok    bool
	}{
		{"a plain token", valid, true},
		{"exactly 16 characters", "abcdefghijklmnop", true},
		{"16 characters around a space", "abcdefgh ijklmnop", true},
		{"16 zero-width spaces (U+200B, Cf)", strings.Repeat("\u200b", 16), false},
		{"a token with a zero-width space", valid + "\u200b", false},
		{"a byte order mark (U+FEFF, Cf)", "\ufeff" + valid, false},
		{"a NUL (U+0000, Cc)", valid + "\x00", false},
		{"a tab (U+0009, Cc)", valid[:8] + "\t" + valid[8:], false},
		{"a right-to-left override (U+202E, Cf)", valid + "\u202e", false},
		{"a DEL (U+007F, Cc)", valid + "\x7f", false},
		{"16 spaces", strings.Repeat(" ", 16), false},
		{"15 characters", "abcdefghijklmno", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, tk := newService(t)
			_, err := s.Launch(context.Background(), "acme", launch.Request{GameID: "crash", Token: tt.token, PlayerID: "p1"})
			if tt.ok {
				if err != nil {
					t.Fatalf("Launch: %v, want a ticket", err)
				}
				if len(tk.got) != 1 || tk.got[0].Token != tt.token {
					t.Fatalf("ticket sessions %+v, want one with the token", tk.got)
				}
				return
			}
			if !errors.Is(err, launch.ErrInvalidToken) {
				t.Fatalf("Launch: %v, want ErrInvalidToken", err)
			}
			if len(tk.got) != 0 {
				t.Fatal("a ticket was issued for a refused token")
			}
			if tt.token != "" && strings.Contains(err.Error(), tt.token) {
				t.Fatal("the refusal quotes the token")
			}
		})
	}
}
