// Command toolchain checks the published documents of api/ with a second,
// independent toolchain, as an integrator with other tools would: pb33f's
// libopenapi-validator validates each OpenAPI document, and ogen (a strict Go
// generator) generates a client and a server from each, which must build. So
// a change that only oapi-codegen and kin-openapi tolerate fails here.
//
// It is its own module (this folder's go.mod pins both tools), so that
// neither enters the game's dependencies. The generated code goes to a
// temporary folder inside this module and is removed at the end: it never
// enters the repository. The Go snippets of docs/integrators.md are built with
// the generated code, so the guide cannot drift from what ogen generates.
//
//	cd integration/toolchain && go run . -api ../../api   (make toolchain)
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
)

func main() {
	apiDir := flag.String("api", "../../api", "the folder of the published documents")
	guide := flag.String("guide", "../../docs/integrators.md", "the integrators' guide, whose Go snippets must build against ogen's code")
	flag.Parse()
	docs, err := filepath.Glob(filepath.Join(*apiDir, "*.v1.yaml"))
	if err != nil || len(docs) == 0 {
		fail("no document found in %s (%v)", *apiDir, err)
	}
	for _, doc := range docs {
		if err := validate(doc); err != nil {
			fail("%s: %v", doc, err)
		}
		fmt.Printf("toolchain: %s is valid for libopenapi-validator\n", filepath.Base(doc))
	}
	// A fixed folder, so that the guide's snippets can import the generated
	// packages by path; removed before and after.
	tmp := outDir
	_ = os.RemoveAll(tmp)
	if err := os.Mkdir(tmp, 0o755); err != nil {
		fail("output folder: %v", err)
	}
	code := 0
	defer func() {
		_ = os.RemoveAll(tmp)
		os.Exit(code)
	}()
	for _, doc := range docs {
		name := strings.ReplaceAll(strings.TrimSuffix(filepath.Base(doc), ".yaml"), ".", "")
		target := filepath.Join(tmp, name)
		if err := run("go", "tool", "ogen", "--target", target, "--package", name, "--clean", doc); err != nil {
			fmt.Fprintf(os.Stderr, "toolchain: ogen refuses %s: %v\n", doc, err)
			code = 1
			return
		}
		fmt.Printf("toolchain: ogen generated %s\n", filepath.Base(doc))
	}
	n, err := extractSnippets(*guide, filepath.Join(tmp, "integrator"))
	if err != nil {
		fmt.Fprintf(os.Stderr, "toolchain: %s: %v\n", *guide, err)
		code = 1
		return
	}
	if err := run("go", "build", "./"+tmp+"/..."); err != nil {
		fmt.Fprintf(os.Stderr, "toolchain: ogen's code, or the guide's snippets with it, does not build: %v\n", err)
		code = 1
		return
	}
	fmt.Printf("toolchain: ogen's code of every document and the %d snippets of %s build\n", n, filepath.Base(*guide))
}

// outDir is where the generated code and the guide's snippets go while the
// command runs, inside this module.
const outDir = "ogen-out"

// modulePath is this module's path: the guide's snippets import the
// generated packages as example.com/operator/<package>, which becomes
// modulePath/outDir/<package> here.
const modulePath = "github.com/crashstudio/crashgame/integration/toolchain"

// extractSnippets writes every Go block of the guide that starts with a
// "// file: NAME.go" line into dir, as the file NAME.go, with the guide's
// stand-in module path replaced; it returns how many it wrote.
func extractSnippets(guide, dir string) (int, error) {
	raw, err := os.ReadFile(guide)
	if err != nil {
		return 0, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, err
	}
	n := 0
	for _, block := range strings.Split(string(raw), "```go\n")[1:] {
		code, _, ok := strings.Cut(block, "\n```")
		if !ok {
			return n, fmt.Errorf("a Go block is not closed")
		}
		first, rest, _ := strings.Cut(code, "\n")
		name, ok := strings.CutPrefix(first, "// file: ")
		if !ok {
			continue
		}
		if filepath.Base(name) != name || !strings.HasSuffix(name, ".go") {
			return n, fmt.Errorf("snippet file name %q", name)
		}
		rest = strings.ReplaceAll(rest, `"example.com/operator/`, `"`+modulePath+"/"+outDir+"/")
		if err := os.WriteFile(filepath.Join(dir, name), []byte(rest+"\n"), 0o644); err != nil {
			return n, err
		}
		n++
	}
	if n == 0 {
		return 0, fmt.Errorf("no Go block starting with // file: found")
	}
	return n, nil
}

// validate checks one OpenAPI document with libopenapi-validator.
func validate(path string) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	doc, err := libopenapi.NewDocument(raw)
	if err != nil {
		return fmt.Errorf("libopenapi: %w", err)
	}
	v, errs := validator.NewValidator(doc)
	if len(errs) > 0 {
		return fmt.Errorf("libopenapi-validator: %v", errs)
	}
	if ok, verrs := v.ValidateDocument(); !ok {
		var b strings.Builder
		for _, e := range verrs {
			fmt.Fprintf(&b, "\n  %s: %s", e.Message, e.Reason)
		}
		return fmt.Errorf("libopenapi-validator:%s", b.String())
	}
	return nil
}

// run runs a command with its output on ours, quietly unless it fails.
func run(name string, args ...string) error {
	cmd := exec.Command(name, args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		os.Stderr.Write(out)
	}
	return err
}

func fail(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "toolchain: "+format+"\n", a...)
	os.Exit(1)
}
