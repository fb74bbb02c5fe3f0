package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseGuide(t *testing.T) {
	t.Parallel()
	const fence = "```"
	tests := []struct {
		name    string
		text    string
		want    []block // path, file and line only
		wantErr string
	}{
		{
			name: "marked blocks in order, unmarked ones skipped",
			text: "# Guide\n\n" + fence + "sh\ncurl -O x\n" + fence + "\n" +
				"<!-- toolchain: both -->\n" + fence + "sh\n# 1.\ngo mod init example.com/operator\n" + fence + "\n" +
				"<!-- toolchain: ogen -->\n" + fence + "go\n// file: a/b.go\n\npackage a\n" + fence + "\n" +
				"<!-- toolchain: oapi-codegen -->\n" + fence + "yaml\n# file: c.yaml\npackage: c\n" + fence + "\n" +
				fence + "go\nfmt.Println(1)\n" + fence + "\n",
			want: []block{{path: "both", line: 7}, {path: "ogen", file: "a/b.go", line: 12}, {path: "oapi-codegen", file: "c.yaml", line: 18}},
		},
		{
			// The guide of 22ffafe: a fence closed the Go block of section 3,
			// and the next one opened a block without a language.
			name:    "stray fence",
			text:    "<!-- toolchain: ogen -->\n" + fence + "go\n// file: a.go\npackage a\n" + fence + "\n\ntext\n" + fence + "\n\n## 4.\n",
			wantErr: "stray fence",
		},
		{
			name:    "unclosed block",
			text:    "<!-- toolchain: both -->\n" + fence + "sh\ngo build ./...\n",
			wantErr: "not closed",
		},
		{
			name:    "file block without a marker",
			text:    "<!-- toolchain: both -->\n" + fence + "sh\ngo build\n" + fence + "\n" + fence + "go\n// file: a.go\npackage a\n" + fence + "\n",
			wantErr: "has no marker",
		},
		{
			name:    "unknown path",
			text:    "<!-- toolchain: oapi -->\n" + fence + "sh\ngo build\n" + fence + "\n",
			wantErr: "names ogen, oapi-codegen or both",
		},
		{
			name:    "marker away from its block",
			text:    "<!-- toolchain: ogen -->\n\n" + fence + "sh\ngo build\n" + fence + "\n",
			wantErr: "right before a code block",
		},
		{
			name:    "file outside the module",
			text:    "<!-- toolchain: ogen -->\n" + fence + "go\n// file: ../a.go\npackage a\n" + fence + "\n",
			wantErr: "not a plain path",
		},
		{
			name:    "marked Go block without a file line",
			text:    "<!-- toolchain: ogen -->\n" + fence + "go\npackage a\n" + fence + "\n",
			wantErr: "must start with its file line",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := parseGuide(tt.text)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("parseGuide() error = %v, want one with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseGuide(): %v", err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("parseGuide() = %d blocks, want %d: %+v", len(got), len(tt.want), got)
			}
			for i, w := range tt.want {
				if got[i].path != w.path || got[i].file != w.file || got[i].line != w.line {
					t.Errorf("block %d = {%s %q line %d}, want {%s %q line %d}", i, got[i].path, got[i].file, got[i].line, w.path, w.file, w.line)
				}
			}
			if !strings.HasPrefix(got[1].body, "// file: a/b.go\n") {
				t.Errorf("a file block is written as written, its file line included; got %q", got[1].body)
			}
		})
	}
}

// The guide itself parses, and pins the versions the repository's go.mod
// files require.
func TestTheGuide(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join("..", "..", "docs", "integrators.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := parseGuide(string(raw))
	if err != nil {
		t.Fatalf("docs/integrators.md: %v", err)
	}
	paths := map[string]int{}
	for _, b := range blocks {
		paths[b.path]++
	}
	for _, p := range []string{"both", "ogen", "oapi-codegen"} {
		if paths[p] == 0 {
			t.Errorf("no block of docs/integrators.md is marked for %s", p)
		}
	}
	if n, err := checkVersions(blocks, filepath.Join("..", "..", "go.mod"), "go.mod"); err != nil || n == 0 {
		t.Errorf("checkVersions() = %d, %v; want the guide's pins to be the repository's", n, err)
	}
}

func TestCheckVersions(t *testing.T) {
	t.Parallel()
	mod := filepath.Join(t.TempDir(), "go.mod")
	if err := os.WriteFile(mod, []byte("module m\n\ngo 1.26\n\ntool github.com/ogen-go/ogen/cmd/ogen\n\nrequire (\n\tgithub.com/ogen-go/ogen v1.24.0\n)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		command, wantErr string
	}{
		{command: "go get -tool github.com/ogen-go/ogen/cmd/ogen@v1.24.0"},
		{command: "go get -tool github.com/ogen-go/ogen/cmd/ogen@v1.25.0", wantErr: "but github.com/ogen-go/ogen is v1.24.0"},
		{command: "go get github.com/getkin/kin-openapi@v0.152.0", wantErr: "which no go.mod of the repository requires"},
	}
	for _, tt := range tests {
		_, err := checkVersions([]block{{path: "ogen", body: tt.command, line: 1}}, mod)
		if (tt.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("checkVersions(%q) = %v, want %q", tt.command, err, tt.wantErr)
		}
	}
}

func TestFailedRows(t *testing.T) {
	t.Parallel()
	report := "RULES | CHECK | RESULT | EVIDENCE\n" +
		"GEN-6 | negative bet refused | FAIL   | MONEY MOVED\n" +
		"GEN-6 | negative win refused | PASS   | refused\n" +
		"BET-4 | missing freebet_id   | FAIL   | accepted\n"
	got := failedRows(report, "negative")
	if len(got) != 1 || !strings.Contains(got[0], "negative bet refused") {
		t.Errorf("failedRows() = %q, want the failed negative bet row only", got)
	}
}
