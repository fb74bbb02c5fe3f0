package main

import (
	"fmt"
	"os"
	"strings"
)

// checkVersions requires every "path@version" of the guide's command blocks
// to be the version the repository's go.mod files pin for that module (the
// game's for oapi-codegen, kin-openapi and the runtime, this module's for
// ogen), so the guide tells readers the versions we test.
func checkVersions(blocks []block, goMods ...string) (int, error) {
	pinned := map[string]string{}
	for _, f := range goMods {
		raw, err := os.ReadFile(f)
		if err != nil {
			return 0, err
		}
		for _, l := range strings.Split(string(raw), "\n") {
			fields := strings.Fields(strings.TrimPrefix(strings.TrimSpace(l), "require "))
			if len(fields) >= 2 && strings.HasPrefix(fields[1], "v") && strings.Contains(fields[0], ".") {
				pinned[fields[0]] = fields[1]
			}
		}
	}
	n := 0
	for _, b := range blocks {
		if b.file != "" {
			continue
		}
		for _, word := range strings.Fields(b.body) {
			pkg, version, ok := strings.Cut(word, "@")
			if !ok || !strings.Contains(pkg, "/") {
				continue
			}
			module := ""
			for m := range pinned {
				if (pkg == m || strings.HasPrefix(pkg, m+"/")) && len(m) > len(module) {
					module = m
				}
			}
			switch {
			case module == "":
				return n, fmt.Errorf("line %d: the guide pins %s, which no go.mod of the repository requires", b.line, word)
			case pinned[module] != version:
				return n, fmt.Errorf("line %d: the guide pins %s, but %s is %s in the repository's go.mod", b.line, word, module, pinned[module])
			}
			n++
		}
	}
	return n, nil
}
