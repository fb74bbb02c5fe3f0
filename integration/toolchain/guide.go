package main

import (
	"fmt"
	"path"
	"strings"
)

// block is one code block of the guide marked for the toolchain by the line
// before its opening fence: <!-- toolchain: ogen|oapi-codegen|both -->.
type block struct {
	// path is the generator whose path the block belongs to, or "both".
	path string
	// file is the module-relative path named by the block's first line
	// ("// file: NAME" in Go, "# file: NAME" in YAML); "" for a command
	// block.
	file string
	// body is the block as written, its first line included.
	body string
	// line is the line of the opening fence.
	line int
}

// markerPrefix starts the line that marks the next code block.
const markerPrefix = "<!-- toolchain: "

// parseGuide returns the marked blocks of a Markdown guide, in order. Every
// fence must be closed; a marker must stand right before a fence and name a
// known path; a marked block is a sh command block or a Go or YAML block that
// starts with its file line; a Go block that starts with "// file:" must be
// marked, so that every such block is built.
func parseGuide(text string) ([]block, error) {
	lines := strings.Split(text, "\n")
	var blocks []block
	marker := ""
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if rest, ok := strings.CutPrefix(l, markerPrefix); ok {
			name, ok := strings.CutSuffix(rest, " -->")
			if !ok || (name != "ogen" && name != "oapi-codegen" && name != "both") {
				return nil, fmt.Errorf("line %d: a marker names ogen, oapi-codegen or both: %q", i+1, l)
			}
			if i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], "```") {
				return nil, fmt.Errorf("line %d: a marker must stand right before a code block", i+1)
			}
			marker = name
			continue
		}
		lang, ok := strings.CutPrefix(l, "```")
		if !ok {
			continue
		}
		if lang == "" {
			return nil, fmt.Errorf("line %d: a fence opens a block without a language, or closes none (a stray fence)", i+1)
		}
		open := i
		var body []string
		for i++; i < len(lines) && lines[i] != "```"; i++ {
			body = append(body, lines[i])
		}
		if i == len(lines) {
			return nil, fmt.Errorf("line %d: the %s block is not closed", open+1, lang)
		}
		b := block{path: marker, body: strings.Join(body, "\n") + "\n", line: open + 1}
		marker = ""
		first := ""
		if len(body) > 0 {
			first = body[0]
		}
		switch {
		case lang == "go" && strings.HasPrefix(first, "// file: "):
			b.file = strings.TrimPrefix(first, "// file: ")
		case lang == "yaml" && strings.HasPrefix(first, "# file: "):
			b.file = strings.TrimPrefix(first, "# file: ")
		case b.path == "":
			continue // not for the toolchain
		case lang != "sh":
			return nil, fmt.Errorf("line %d: a marked %s block must start with its file line", open+1, lang)
		}
		if b.path == "" {
			return nil, fmt.Errorf("line %d: the block of %s has no marker, so CI would not build it", open+1, b.file)
		}
		if b.file != "" && (path.Clean(b.file) != b.file || path.IsAbs(b.file) || strings.HasPrefix(b.file, "..")) {
			return nil, fmt.Errorf("line %d: file %q is not a plain path inside the module", open+1, b.file)
		}
		blocks = append(blocks, b)
	}
	if marker != "" {
		return nil, fmt.Errorf("a marker at the end marks no block")
	}
	if len(blocks) == 0 {
		return nil, fmt.Errorf("no block is marked for the toolchain")
	}
	return blocks, nil
}
