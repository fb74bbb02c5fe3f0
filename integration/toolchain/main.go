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
// the generated code, so the guide cannot drift from what ogen generates, and
// the guide's example wallet (docs/examples/ogenwallet) is built on them and
// must pass `crashgame wallet-check`.
//
//	cd integration/toolchain && go run . -api ../../api   (make toolchain)
package main

import (
	"bufio"
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
	example := flag.String("example", "../../docs/examples/ogenwallet", "the guide's example wallet, which crashgame wallet-check must pass")
	game := flag.String("game", "../..", "the game's module, whose crashgame wallet-check runs")
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
	if err == nil {
		err = copyExample(*example, filepath.Join(tmp, "ogenwallet"))
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "toolchain: %v\n", err)
		code = 1
		return
	}
	if err := run("go", "build", "./"+tmp+"/..."); err != nil {
		fmt.Fprintf(os.Stderr, "toolchain: ogen's code, or the guide's snippets and example with it, does not build: %v\n", err)
		code = 1
		return
	}
	fmt.Printf("toolchain: ogen's code of every document, the %d snippets of %s and its example wallet build\n", n, filepath.Base(*guide))
	if err := checkExample(tmp, *game); err != nil {
		fmt.Fprintf(os.Stderr, "toolchain: the guide's example wallet: %v\n", err)
		code = 1
		return
	}
	fmt.Println("toolchain: crashgame wallet-check passes the guide's example wallet")
}

// copyExample copies the example wallet's Go files into dir, without their
// ignore constraint and with the guide's stand-in module path replaced.
func copyExample(src, dir string) error {
	files, err := filepath.Glob(filepath.Join(src, "*.go"))
	if err != nil || len(files) == 0 {
		return fmt.Errorf("no example wallet in %s (%v)", src, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		code := strings.TrimPrefix(string(raw), "//go:build ignore\n\n")
		code = strings.ReplaceAll(code, `"example.com/operator/`, `"`+modulePath+"/"+outDir+"/")
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), []byte(code), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// checkExample starts the example wallet built in dir and runs the game's
// `crashgame wallet-check` (from the game's module at game) against it; the
// report is printed, and a failed check fails.
func checkExample(dir, game string) error {
	bin := filepath.Join(dir, "ogenwallet.bin")
	if err := run("go", "build", "-o", bin, "./"+filepath.Join(dir, "ogenwallet")); err != nil {
		return fmt.Errorf("build: %w", err)
	}
	creds := map[string]string{
		"SECRET": "toolchain-secret-0123456789abcdef", "API_KEY": "tc_key1_0123456789", "SECOND_API_KEY": "tc_key2_0123456789",
		"TOKEN": "tok-live-0123456789abcdef", "EXPIRED_TOKEN": "tok-expired-0123456789ab",
	}
	wallet := exec.Command(bin, "-operator", "acme", "-currency", "BRL", "-freebet-id", "fb-1", "-freebet-amount", "100")
	wallet.Env = os.Environ()
	for k, v := range creds {
		wallet.Env = append(wallet.Env, "OGENWALLET_"+k+"="+v)
	}
	wallet.Stderr = os.Stderr
	out, err := wallet.StdoutPipe()
	if err != nil {
		return err
	}
	if err := wallet.Start(); err != nil {
		return fmt.Errorf("start: %w", err)
	}
	defer func() { _ = wallet.Process.Kill(); _ = wallet.Wait() }()
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		return fmt.Errorf("its address: %w", err)
	}
	check := exec.Command("go", "run", "./cmd/crashgame", "wallet-check", "--wallet-url", "http://"+strings.TrimSpace(addr),
		"--operator", "acme", "--currency", "BRL", "--freebet-id", "fb-1", "--freebet-amount", "100")
	check.Dir = game
	check.Env = os.Environ()
	for k, v := range creds {
		check.Env = append(check.Env, "WALLET_CHECK_"+k+"="+v)
	}
	check.Stdout, check.Stderr = os.Stdout, os.Stderr
	if err := check.Run(); err != nil {
		return fmt.Errorf("crashgame wallet-check: %w", err)
	}
	return nil
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
