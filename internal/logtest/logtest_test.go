package logtest

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// A line logged once the test's cleanups have run (a goroutine that outlives
// its test) is dropped, where writing it to the finished test's output would
// panic; the lines before it are the test's.
func TestLinesAfterTheTestAreDropped(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	w := &output{out: &out}
	log := slog.New(slog.NewTextHandler(w, nil))
	log.Info("during the test")
	w.close()
	log.Info("after the test")
	if got := out.String(); !strings.Contains(got, "during the test") || strings.Contains(got, "after the test") {
		t.Fatalf("output %q: want the line logged during the test and not the one after", got)
	}
}
