package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// moduleEnv is the environment of the commands run in a new module: ours,
// without a workspace and without a -mod flag (a -mod=vendor inherited from
// the caller would make every command of the guide fail in a module that has
// no vendor folder), with -trimpath: the module's folder is new on every run,
// and without -trimpath the build cache keys each package by its folder, so
// nothing would be reused from one run to the next.
func moduleEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		switch {
		case strings.HasPrefix(kv, "GOWORK="), strings.HasPrefix(kv, "GOFLAGS="):
			continue
		}
		env = append(env, kv)
	}
	flags := []string{"-trimpath"}
	for _, f := range strings.Fields(os.Getenv("GOFLAGS")) {
		if !strings.HasPrefix(f, "-mod=") && f != "-trimpath" {
			flags = append(flags, f)
		}
	}
	return append(env, "GOWORK=off", "GOFLAGS="+strings.Join(flags, " "))
}

// runIn runs a command in dir, quietly unless it fails: then its output is
// written to w.
func runIn(w io.Writer, dir string, env []string, name string, args ...string) error {
	out, err := outputIn(dir, env, name, args...)
	if err != nil {
		fmt.Fprint(w, indent(out))
	}
	return err
}

// outputIn runs a command in dir and returns its combined output.
func outputIn(dir string, env []string, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func writeFile(path, content string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(content), 0o644)
}

func copyFile(src, dst string) error {
	raw, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return writeFile(dst, string(raw))
}

// ignoreLine is the build constraint that keeps the examples and the client
// check out of the module they live in; it is dropped when they are copied.
const ignoreLine = "//go:build ignore\n\n"

// copyStripped copies a Go file without its ignore constraint.
func copyStripped(src, dst string) error {
	raw, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	code, ok := strings.CutPrefix(string(raw), ignoreLine)
	if !ok {
		return fmt.Errorf("%s does not start with %q", src, strings.TrimSpace(ignoreLine))
	}
	return writeFile(dst, code)
}

// copyExample copies the Go files of an example folder into dir, each
// without its ignore constraint, as the guide tells the reader to.
func copyExample(src, dir string) error {
	files, err := filepath.Glob(filepath.Join(src, "*.go"))
	if err != nil || len(files) == 0 {
		return fmt.Errorf("no Go file in %s (%v)", src, err)
	}
	for _, f := range files {
		if err := copyStripped(f, filepath.Join(dir, filepath.Base(f))); err != nil {
			return err
		}
	}
	return nil
}

// overlayJSON is a go build -overlay file replacing each key by its value.
func overlayJSON(replace map[string]string) string {
	raw, _ := json.Marshal(map[string]map[string]string{"Replace": replace})
	return string(raw)
}
