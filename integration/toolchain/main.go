// Command toolchain checks the published documents of api/ and the
// integrators' guide with the tools an operator would use, outside the
// game's module:
//
//   - pb33f's libopenapi-validator validates each OpenAPI document;
//   - docs/integrators.md is followed literally, once per generator (ogen and
//     oapi-codegen): in a new module in a temporary folder, its file blocks
//     are written and its marked command blocks run, in document order;
//   - each generator's example wallet (docs/examples) is built there on the
//     guide's code and must pass every probe of `crashgame wallet-check`;
//   - the oapi-codegen wallet built without its request validator must fail
//     wallet-check's negative-amount probe, so the check can fail;
//   - an ogen client and an oapi-codegen client of game.v1.yaml and
//     table.v1.yaml must decode, or fail with an error the caller can branch
//     on, the answers we may add: an unknown code, an unknown field, a 429 and
//     a proxy's HTML 503 (clientcheck/).
//
// The two generators' paths run at the same time, each in its own module and
// folder, sharing the Go module and build caches (the game's wallet-check is
// built once, while the documents are validated); each path's output is
// printed in one piece when it ends.
//
// It is its own module, so that none of these tools enters the game's
// dependencies. Nothing generated is kept.
//
//	cd integration/toolchain && go run . -api ../../api   (make toolchain)
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

func main() {
	apiDir := flag.String("api", "../../api", "the folder of the published documents")
	guide := flag.String("guide", "../../docs/integrators.md", "the integrators' guide, followed literally")
	examples := flag.String("examples", "../../docs/examples", "the folder of the guide's example wallets")
	game := flag.String("game", "../..", "the game's module, whose crashgame wallet-check runs")
	keep := flag.Bool("keep", false, "keep the temporary folder and print its path (to debug)")
	flag.Parse()
	if err := run(*apiDir, *guide, *examples, *game, *keep); err != nil {
		fmt.Fprintf(os.Stderr, "toolchain: FAIL: %v\n", err)
		os.Exit(1)
	}
	fmt.Println("toolchain: PASS")
}

// run checks the documents of apiDir, then follows the guide once per
// generator in a temporary folder (kept when keep is set), printing as it goes.
func run(apiDir, guide, examples, game string, keep bool) error {
	start := time.Now()
	docs, err := filepath.Glob(filepath.Join(apiDir, "*.v1.yaml"))
	if err != nil || len(docs) == 0 {
		return fmt.Errorf("no document found in %s (%v)", apiDir, err)
	}
	tmp, err := os.MkdirTemp("", "crashgame-toolchain-")
	if err != nil {
		return err
	}
	if keep {
		fmt.Printf("toolchain: working in %s (kept)\n", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}
	checker := filepath.Join(tmp, "crashgame")
	if err := validateAndBuild(docs, game, checker); err != nil {
		return err
	}
	blocks, err := readGuide(guide, game)
	if err != nil {
		return err
	}
	failed := followGuides(blocks, docs, examples, checker, tmp)
	fmt.Printf("toolchain: took %s\n", time.Since(start).Round(time.Second))
	if len(failed) > 0 {
		return fmt.Errorf("failed: %s", strings.Join(failed, ", "))
	}
	return nil
}

// validateAndBuild validates each of docs with libopenapi-validator while it
// builds the game's wallet-check (crashgame, of the module game) at checker.
func validateAndBuild(docs []string, game, checker string) error {
	// The game's wallet-check, built once for both paths below, while the
	// documents and the guide are checked. It is built with the paths'
	// environment (-trimpath), so that the standard library, which both paths
	// compile, and the modules the oapi-codegen path shares with the game
	// (kin-openapi and oapi-codegen's runtime, at the versions checkVersions
	// holds the guide to) are in the build cache before the two paths start:
	// on an empty cache the two would otherwise compile the standard library
	// side by side, twice.
	built := make(chan error, 1)
	go func() {
		var out bytes.Buffer
		err := runIn(&out, game, moduleEnv(), "go", "build", "-o", checker, "./cmd/crashgame")
		os.Stderr.Write(out.Bytes())
		built <- err
	}()
	checked := func() error {
		for _, doc := range docs {
			if err := validate(doc); err != nil {
				return fmt.Errorf("%s: %w", doc, err)
			}
			fmt.Printf("toolchain: %s is valid for libopenapi-validator\n", filepath.Base(doc))
		}
		return nil
	}()
	return errors.Join(checked, buildErr(<-built))
}

// readGuide reads the guide's marked blocks and checks that the versions it
// pins are those of the go.mod of the module game.
func readGuide(guide, game string) ([]block, error) {
	raw, err := os.ReadFile(guide)
	if err != nil {
		return nil, err
	}
	blocks, err := parseGuide(string(raw))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", guide, err)
	}
	pins, err := checkVersions(blocks, filepath.Join(game, "go.mod"), "go.mod")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", guide, err)
	}
	fmt.Printf("toolchain: the guide's %d marked blocks parse; its %d pinned versions are the repository's\n", len(blocks), pins)
	return blocks, nil
}

// followGuides follows the guide on both generators' paths at once, each in
// its own folder under tmp, and returns the names of those that failed.
func followGuides(blocks []block, docs []string, examples, checker, tmp string) (failed []string) {
	// Both paths at once: separate modules and folders, one module cache and
	// one build cache (both lock what they write). Each path writes to its
	// own buffer, printed whole when the path ends, first ended first.
	type result struct {
		name string
		out  bytes.Buffer
		took time.Duration
		err  error
	}
	results := make(chan *result, len(generators))
	for _, gen := range generators {
		go func() {
			r := &result{name: gen.name}
			began := time.Now()
			fmt.Fprintf(&r.out, "toolchain: --- %s: docs/integrators.md, followed literally\n", gen.name)
			r.err = followGuide(&r.out, gen, blocks, docs, examples, checker, filepath.Join(tmp, gen.name))
			r.took = time.Since(began)
			results <- r
		}()
	}
	for range generators {
		r := <-results
		os.Stdout.Write(r.out.Bytes())
		if r.err != nil {
			fmt.Fprintf(os.Stderr, "toolchain: %s: %v\n", r.name, r.err)
			failed = append(failed, r.name)
		}
		fmt.Printf("toolchain: --- %s: took %s\n", r.name, r.took.Round(time.Second))
	}
	return failed
}

func buildErr(err error) error {
	if err != nil {
		return fmt.Errorf("build crashgame: %w", err)
	}
	return nil
}

// generator is one path of the guide.
type generator struct {
	// name is the guide's marker for this path ("<!-- toolchain: name -->").
	name string
	// example is the folder under docs/examples of its example wallet.
	example string
	// mutations turn the example into the same wallet without request
	// validation, which wallet-check must fail; none for a generator whose
	// validation cannot be removed by the reader.
	mutations []mutation
	// clients generates the clients the client check needs that the guide
	// does not (run in the module after the guide).
	clients [][]string
	// clientFiles are the files of clientcheck/ that check this generator's
	// clients.
	clientFiles []string
}

// mutation replaces the one line of file that contains old with new.
type mutation struct {
	file, old, new string
}

var generators = []generator{
	{
		name:    "ogen",
		example: "ogenwallet",
		clients: [][]string{
			{"go", "tool", "ogen", "--target", "tablev1", "--package", "tablev1", "--clean", "table.v1.yaml"},
		},
		clientFiles: []string{"cases.go", "ogen.go"},
	},
	{
		name:    "oapi-codegen",
		example: "oapicodegenwallet",
		mutations: []mutation{
			// The guide's validation step.
			{file: "oapiwiring/wallet.go", old: "next = validator.Middleware(next)", new: "_ = validator"},
			// The example ledger's own guard, which would refuse a negative
			// amount even without the validator.
			{file: "walletledger/walletledger.go", old: "if amount < 0 {", new: "if amount < 0 && false {"},
		},
		clients: [][]string{
			{"go", "tool", "oapi-codegen", "--config", "table.oapi-codegen.yaml", "table.v1.yaml"},
		},
		clientFiles: []string{"cases.go", "oapicodegen.go"},
	},
}

// tableConfig is the oapi-codegen configuration of the table.v1 client the
// client check uses (the guide generates no table client).
const tableConfig = `package: tableapi
output: tableapi/table.gen.go
generate:
  models: true
  client: true
`

// followGuide runs one generator's path of the guide in dir, then builds its
// example wallet there and checks it, then checks its clients. What it
// prints goes to w.
func followGuide(w io.Writer, gen generator, blocks []block, docs []string, examples, checker, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	// The reader downloads the documents into the new folder.
	for _, doc := range docs {
		if err := copyFile(doc, filepath.Join(dir, filepath.Base(doc))); err != nil {
			return err
		}
	}
	env := moduleEnv()
	files, commands := 0, 0
	for _, b := range blocks {
		if b.path != gen.name && b.path != "both" {
			continue
		}
		if b.file != "" {
			if err := writeFile(filepath.Join(dir, b.file), b.body); err != nil {
				return err
			}
			files++
			continue
		}
		fmt.Fprintf(w, "toolchain: %s: line %d:\n%s", gen.name, b.line, indent(b.body))
		if err := runIn(w, dir, env, "bash", "-e", "-u", "-o", "pipefail", "-c", b.body); err != nil {
			return fmt.Errorf("the guide's command block at line %d fails: %w", b.line, err)
		}
		commands++
	}
	fmt.Fprintf(w, "toolchain: %s: the guide's %d files and %d command blocks build and vet\n", gen.name, files, commands)

	// The example wallet and its ledger, as the guide tells the reader.
	if err := copyExample(filepath.Join(examples, "walletledger"), filepath.Join(dir, "walletledger")); err != nil {
		return err
	}
	if err := copyExample(filepath.Join(examples, gen.example), filepath.Join(dir, "cmd", gen.example)); err != nil {
		return err
	}
	bin := filepath.Join(dir, "bin", gen.example)
	if err := runIn(w, dir, env, "go", "build", "-o", bin, "./cmd/"+gen.example); err != nil {
		return fmt.Errorf("build %s on the guide's code: %w", gen.example, err)
	}
	summary, out, err := walletCheck(bin, strings.ToUpper(gen.example)+"_", checker)
	fmt.Fprintf(w, "toolchain: %s: wallet-check of docs/examples/%s: %s\n", gen.name, gen.example, summary)
	if err != nil {
		fmt.Fprint(w, out)
		return fmt.Errorf("docs/examples/%s fails wallet-check: %w", gen.example, err)
	}

	if len(gen.mutations) > 0 {
		if err := checkWithoutValidation(w, gen, dir, env, checker); err != nil {
			return err
		}
	}

	if gen.name == "oapi-codegen" {
		if err := writeFile(filepath.Join(dir, "table.oapi-codegen.yaml"), tableConfig); err != nil {
			return err
		}
	}
	for _, c := range gen.clients {
		if err := runIn(w, dir, env, c[0], c[1:]...); err != nil {
			return fmt.Errorf("generate a client: %s: %w", strings.Join(c, " "), err)
		}
	}
	for _, f := range gen.clientFiles {
		if err := copyStripped(filepath.Join("clientcheck", f), filepath.Join(dir, "clientcheck", f)); err != nil {
			return err
		}
	}
	out, err = outputIn(dir, env, "go", "run", "./clientcheck")
	fmt.Fprint(w, indent(out))
	if err != nil {
		return fmt.Errorf("a generated client does not survive an answer we may send (clientcheck): %w", err)
	}
	return nil
}

// checkWithoutValidation builds the example once more with gen's mutations
// (through an overlay: the module's files stay as the guide wrote them) and
// requires wallet-check to fail its negative-amount probe.
func checkWithoutValidation(w io.Writer, gen generator, dir string, env []string, checker string) error {
	overlay := map[string]string{}
	for i, m := range gen.mutations {
		path := filepath.Join(dir, m.file)
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		lines := strings.Split(string(raw), "\n")
		hits := 0
		for j, l := range lines {
			if strings.Contains(l, m.old) {
				lines[j] = strings.Replace(l, m.old, m.new, 1)
				hits++
			}
		}
		if hits != 1 {
			return fmt.Errorf("%s holds %q %d times, not once: update the mutations in integration/toolchain/main.go", m.file, m.old, hits)
		}
		mutated := filepath.Join(dir, "mutated", fmt.Sprintf("%d.go", i))
		if err := writeFile(mutated, strings.Join(lines, "\n")); err != nil {
			return err
		}
		overlay[path] = mutated
	}
	overlayFile := filepath.Join(dir, "mutated", "overlay.json")
	if err := writeFile(overlayFile, overlayJSON(overlay)); err != nil {
		return err
	}
	bin := filepath.Join(dir, "bin", gen.example+"-novalidation")
	if err := runIn(w, dir, env, "go", "build", "-overlay", overlayFile, "-o", bin, "./cmd/"+gen.example); err != nil {
		return fmt.Errorf("build %s without validation: %w", gen.example, err)
	}
	summary, out, err := walletCheck(bin, strings.ToUpper(gen.example)+"_", checker)
	fmt.Fprintf(w, "toolchain: %s: wallet-check of docs/examples/%s WITHOUT its request validation: %s\n", gen.name, gen.example, summary)
	negative := failedRows(out, "negative")
	for _, row := range negative {
		fmt.Fprintf(w, "toolchain: %s:   %s\n", gen.name, row)
	}
	switch {
	case err == nil:
		fmt.Fprint(w, out)
		return fmt.Errorf("wallet-check passes %s without its request validation: the check cannot fail", gen.example)
	case len(negative) == 0:
		fmt.Fprint(w, out)
		return fmt.Errorf("wallet-check fails %s without its request validation, but not on a negative amount", gen.example)
	}
	return nil
}

func indent(s string) string {
	if s == "" {
		return ""
	}
	return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ") + "\n"
}
