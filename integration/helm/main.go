package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// variant is one value set the chart is rendered with: files from values/,
// merged in order over the chart's values.yaml.
type variant struct {
	name  string
	files []string
	// external holds the Secrets the value set names as existing (created by
	// a secret store, not by the chart): name -> key -> a value of the right
	// form, so that the game's parser can read the file with them.
	external map[string]map[string]string
}

// outDir is -out: where to write the rendered manifests, if anywhere.
var outDir string

var variants = []variant{
	{name: "ci: 3 replicas, the chart's Secret, NetworkPolicies", files: []string{"ci.yaml"}},
	{name: "5 replicas, ServiceMonitor, PostgreSQL and NATS in namespaces of their own", files: []string{"ci.yaml", "five-replicas.yaml"}},
	{name: "1 replica, an existing Secret, no NetworkPolicy", files: []string{"ci.yaml", "existing-secret.yaml"}, external: map[string]map[string]string{
		"crash-secrets": {
			"CRASHGAME_DATABASE_URL":          "postgres://crash:from-the-store@postgres:5432/crash?sslmode=require",
			"CRASHGAME_SEED_KEY":              "5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed",
			"CRASHGAME_OPERATOR_ACME_SECRET":  "from-the-store-0123456789abcdef0123",
			"CRASHGAME_OPERATOR_ACME_API_KEY": "from-the-store-api-key",
		},
	}},
}

func main() {
	chartDir := flag.String("chart", "../../deploy/helm/crashgame", "the chart's directory")
	repo := flag.String("repo", "../..", "the game's repository (for cmd/crashgame/serve.go)")
	valuesDir := flag.String("values", "values", "the directory of the value sets")
	flag.StringVar(&outDir, "out", "", "also write each value set's rendered manifests to DIR/N.yaml (they hold the value sets' development secrets)")
	flag.Parse()
	if err := run(os.Stdout, *chartDir, *repo, *valuesDir); err != nil {
		fmt.Fprintln(os.Stderr, "helm:", err)
		os.Exit(1)
	}
}

// run renders and checks every value set, printing one line per manifest.
func run(w io.Writer, chartDir, repo, valuesDir string) error {
	ch, err := loadChart(chartDir)
	if err != nil {
		return err
	}
	fc, err := readFacts(repo)
	if err != nil {
		return err
	}
	var failed []error
	for i, v := range variants {
		var files []string
		for _, f := range v.files {
			files = append(files, filepath.Join(valuesDir, f))
		}
		if outDir != "" {
			if err := write(ch, files, filepath.Join(outDir, fmt.Sprintf("%d.yaml", i+1))); err != nil {
				return err
			}
		}
		ms, err := validate(ch, files, v, fc)
		if err != nil {
			failed = append(failed, fmt.Errorf("%s (%s):\n%w", v.name, strings.Join(v.files, " + "), err))
			fmt.Fprintf(w, "FAIL %s\n", v.name)
			continue
		}
		fmt.Fprintf(w, "ok   %s: %d manifests\n", v.name, len(ms))
		for _, m := range ms {
			fmt.Fprintf(w, "       %-42s %s\n", m.kind, m.meta.Name)
		}
	}
	if len(failed) > 0 {
		return errors.Join(failed...)
	}
	fmt.Fprintf(w, "%d value sets rendered with helm's engine, every manifest decoded strictly into its API type, and checked against the game\n", len(variants))
	return nil
}
