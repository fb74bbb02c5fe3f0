package main

import (
	"fmt"
	"os"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
)

// validate renders one value set, decodes its manifests and checks them.
func validate(ch *chart.Chart, files []string, v variant, fc *facts) ([]*manifest, error) {
	r, err := render(ch, files)
	if err != nil {
		return nil, err
	}
	ms, err := decodeAll(r.manifests)
	if err != nil {
		return nil, err
	}
	return ms, check(ms, r.values, v.external, fc)
}

// write renders one value set into a file, as `helm template` prints it.
func write(ch *chart.Chart, files []string, path string) error {
	r, err := render(ch, files)
	if err != nil {
		return err
	}
	var b strings.Builder
	for _, m := range r.manifests {
		fmt.Fprintf(&b, "---\n# Source: %s\n%s\n", m.template, m.yaml)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
