package secret

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

func TestNeverShown(t *testing.T) {
	t.Parallel()
	const raw = "s3cret-0123456789abcdef"
	s := Secret(raw)
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X"} {
		if got := fmt.Sprintf(verb, s); got != redacted {
			t.Errorf("%s prints %q, want %q", verb, got, redacted)
		}
	}
	if got := fmt.Sprintf("%v", struct{ Key Secret }{s}); strings.Contains(got, raw) {
		t.Errorf("a struct holding it prints %q", got)
	}
	j, err := json.Marshal(map[string]Secret{"key": s})
	if err != nil || string(j) != `{"key":"[redacted]"}` {
		t.Errorf("json = %s, %v", j, err)
	}
	var logged bytes.Buffer
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("x", "key", s)
	if strings.Contains(logged.String(), raw) || !strings.Contains(logged.String(), `"key":"[redacted]"`) {
		t.Errorf("slog output %s", logged.String())
	}
	if string(s.Bytes()) != raw || string(s) != raw {
		t.Error("the value itself is lost")
	}
	if got := fmt.Sprint(Secret("")); got != "" {
		t.Errorf("an empty secret prints %q", got)
	}
}
