// Command toolchain checks the published documents of api/ with a second,
// independent toolchain, as an integrator with other tools would: pb33f's
// libopenapi-validator validates each OpenAPI document, and ogen (a strict Go
// generator) generates a client and a server from each, which must build. So
// a change that only oapi-codegen and kin-openapi tolerate fails here.
//
// It is its own module (this folder's go.mod pins both tools), so that
// neither enters the game's dependencies. The generated code goes to a
// temporary folder inside this module and is removed at the end: it never
// enters the repository.
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
	tmp, err := os.MkdirTemp(".", "ogen-")
	if err != nil {
		fail("temporary folder: %v", err)
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
	if err := run("go", "build", "./"+tmp+"/..."); err != nil {
		fmt.Fprintf(os.Stderr, "toolchain: ogen's code does not build: %v\n", err)
		code = 1
		return
	}
	fmt.Println("toolchain: ogen's code of every document builds")
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
