package api_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every curl example of the published guides that sends a body says it is
// JSON: without the header curl sends application/x-www-form-urlencoded,
// which a strict receiver refuses and a copy-paste carries into production.
func TestCurlExamplesSendJSON(t *testing.T) {
	t.Parallel()
	var files []string
	for _, pattern := range []string{"../docs/*.md", "../cmd/*/README.md", "../internal/*/README.md", "../README.md"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	seen := 0
	for _, name := range files {
		raw, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(raw), "\n")
		for i := 0; i < len(lines); i++ {
			if !strings.HasPrefix(strings.TrimSpace(lines[i]), "curl ") {
				continue
			}
			cmd := lines[i]
			for strings.HasSuffix(strings.TrimSpace(cmd), "\\") && i+1 < len(lines) {
				i++
				cmd += "\n" + lines[i]
			}
			if !strings.Contains(cmd, " -d ") && !strings.Contains(cmd, "--data") {
				continue
			}
			seen++
			if !strings.Contains(cmd, "Content-Type: application/json") {
				t.Errorf("%s:%d: a curl example sends a body without Content-Type: application/json:\n%s", name, i+1, cmd)
			}
		}
	}
	if seen == 0 {
		t.Fatal("no curl example with a body found: the test reads the wrong files")
	}
}
