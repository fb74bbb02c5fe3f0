package config_test

import (
	"strings"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/internal/config"
)

// fairness.reveal_window_ms: two minutes by default, none when there is no
// seeding window; 0 only with seeding_window_ms 0.
func TestRevealWindow(t *testing.T) {
	t.Parallel()
	key := strings.Repeat("ab", 32)
	with := func(section string) string {
		return strings.Replace(base, "fairness: {seed_key: "+key+"}\n", section, 1)
	}
	for _, tt := range []struct {
		section string
		want    time.Duration
	}{
		{"fairness: {seed_key: " + key + "}\n", 2 * time.Minute},
		{"fairness: {seed_key: " + key + ", seeding_window_ms: 0}\n", 0},
		{"fairness: {seed_key: " + key + ", seeding_window_ms: 0, reveal_window_ms: 0}\n", 0},
		{"fairness: {seed_key: " + key + ", seeding_window_ms: 5000, reveal_window_ms: 5000}\n", 5 * time.Second},
	} {
		if c := mustParse(t, with(tt.section)); c.Fairness.RevealWindow() != tt.want {
			t.Errorf("%q: reveal window %v, want %v", tt.section, c.Fairness.RevealWindow(), tt.want)
		}
	}
	if config.DefaultRevealWindowMS != 120_000 {
		t.Errorf("DefaultRevealWindowMS = %d", config.DefaultRevealWindowMS)
	}
	for _, tt := range []struct{ section, want string }{
		{"fairness: {seed_key: " + key + ", reveal_window_ms: 0}\n", "reveal_window_ms is 0 but seeding_window_ms is 300000"},
		{"fairness: {seed_key: " + key + ", reveal_window_ms: -1}\n", "reveal_window_ms -1 is outside"},
	} {
		if _, err := config.Parse([]byte(with(tt.section)), nil); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: %v, want %q", tt.section, err, tt.want)
		}
	}
}
