package main

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/releaseutil"
)

// release is what `helm template NAME CHART -n NAMESPACE` would be told.
const (
	releaseName      = "crash"
	releaseNamespace = "games"
	// kubeVersion is the oldest Kubernetes the chart claims (Chart.yaml's
	// kubeVersion): the preStop sleep action is on by default from 1.30.
	kubeVersion = "v1.30.0"
)

// rendered is one value set's output: its merged values and its manifests.
type rendered struct {
	values    chartutil.Values // the chart's values coalesced with the files'
	manifests []source
}

// source is one YAML document of the output, named by its template.
type source struct {
	template string
	yaml     string
}

// loadChart reads the chart directory as helm does.
func loadChart(dir string) (*chart.Chart, error) {
	ch, err := loader.Load(dir)
	if err != nil {
		return nil, fmt.Errorf("load chart %s: %w", dir, err)
	}
	if ch.Metadata.KubeVersion != "" && !chartutil.IsCompatibleRange(ch.Metadata.KubeVersion, kubeVersion) {
		return nil, fmt.Errorf("chart %s: kubeVersion %q does not admit %s", dir, ch.Metadata.KubeVersion, kubeVersion)
	}
	return ch, nil
}

// render renders the chart with the value files merged in order (a later
// file wins, as with helm's repeated -f).
func render(ch *chart.Chart, files []string) (*rendered, error) {
	vals := map[string]any{}
	for _, f := range files {
		v, err := chartutil.ReadValuesFile(f)
		if err != nil {
			return nil, fmt.Errorf("values %s: %w", f, err)
		}
		vals = mergeMaps(vals, v)
	}
	return renderValues(ch, vals)
}

func renderValues(ch *chart.Chart, vals map[string]any) (*rendered, error) {
	caps := chartutil.DefaultCapabilities.Copy()
	caps.KubeVersion = chartutil.KubeVersion{Version: kubeVersion, Major: "1", Minor: "30"}
	opts := chartutil.ReleaseOptions{Name: releaseName, Namespace: releaseNamespace, Revision: 1, IsInstall: true}
	top, err := chartutil.ToRenderValues(ch, vals, opts, caps)
	if err != nil {
		return nil, fmt.Errorf("values: %w", err)
	}
	out, err := engine.Render(ch, top)
	if err != nil {
		return nil, fmt.Errorf("render: %w", err)
	}
	coalesced, err := top.Table("Values")
	if err != nil {
		return nil, fmt.Errorf("values: %w", err)
	}
	r := &rendered{values: coalesced}
	for _, name := range slices.Sorted(maps.Keys(out)) {
		// Like helm: NOTES.txt and partials are not manifests.
		if ext := filepath.Ext(name); ext != ".yaml" && ext != ".yml" {
			continue
		}
		docs := releaseutil.SplitManifests(out[name])
		for _, k := range slices.Sorted(maps.Keys(docs)) {
			if strings.TrimSpace(docs[k]) == "" {
				continue
			}
			r.manifests = append(r.manifests, source{template: name, yaml: docs[k]})
		}
	}
	return r, nil
}

// mergeMaps merges b over a, recursing into maps, as helm merges -f files.
func mergeMaps(a, b map[string]any) map[string]any {
	out := make(map[string]any, len(a))
	maps.Copy(out, a)
	for k, v := range b {
		if vm, ok := v.(map[string]any); ok {
			if am, ok := out[k].(map[string]any); ok {
				out[k] = mergeMaps(am, vm)
				continue
			}
		}
		out[k] = v
	}
	return out
}
