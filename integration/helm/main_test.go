package main

import (
	"io"
	"path/filepath"
	"strings"
	"testing"
)

// fixture renders a value set (an index into variants) once per test.
func fixture(t *testing.T, vi int) ([]source, *rendered, *facts) {
	t.Helper()
	ch, err := loadChart("../../deploy/helm/crashgame")
	if err != nil {
		t.Fatal(err)
	}
	fc, err := readFacts("../..")
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, f := range variants[vi].files {
		files = append(files, filepath.Join("values", f))
	}
	r, err := render(ch, files)
	if err != nil {
		t.Fatal(err)
	}
	return r.manifests, r, fc
}

func TestChartValidates(t *testing.T) {
	t.Parallel()
	if err := run(io.Discard, "../../deploy/helm/crashgame", "../..", "values"); err != nil {
		t.Fatal(err)
	}
}

func TestDefaultValuesNeedTheSecrets(t *testing.T) {
	t.Parallel()
	ch, err := loadChart("../../deploy/helm/crashgame")
	if err != nil {
		t.Fatal(err)
	}
	_, err = renderValues(ch, map[string]any{})
	if err == nil || !strings.Contains(err.Error(), "secrets.databaseURL") {
		t.Fatalf("rendering without secrets: %v, want the secrets.databaseURL message", err)
	}
	_, err = renderValues(ch, map[string]any{"secrets": map[string]any{"create": false}})
	if err == nil || !strings.Contains(err.Error(), "secrets.existingSecret") {
		t.Fatalf("rendering with secrets.create false and no Secret named: %v, want the secrets.existingSecret message", err)
	}
}

// TestChecksCatch breaks one thing in the rendered output of a value set and
// expects the check to name it.
func TestChecksCatch(t *testing.T) {
	t.Parallel()
	const (
		ci   = 0
		five = 1
	)
	cases := []struct {
		name               string
		variant            int
		template, old, new string
		want               string
	}{
		{"an unknown field", ci, "deployment.yaml", "revisionHistoryLimit: 5", "revisionHistoryLimit: 5\n  replica: 3", `unknown field "spec.replica"`},
		{"a field of the wrong type", ci, "deployment.yaml", "replicas: 3", `replicas: "3"`, "cannot unmarshal string"},
		{"a field in the wrong case", ci, "deployment.yaml", "terminationGracePeriodSeconds:", "TerminationGracePeriodSeconds:", "unknown field"},
		{"a duplicate key", ci, "deployment.yaml", "revisionHistoryLimit: 5", "revisionHistoryLimit: 5\n  revisionHistoryLimit: 6", "already set in map"},
		{"an unknown kind", ci, "pdb.yaml", "apiVersion: policy/v1", "apiVersion: policy/v1beta1", "not a kind this check knows"},
		{"a name the API refuses", ci, "pdb.yaml", "name: crash-crashgame", "name: Crash_Crashgame", "PodDisruptionBudget Crash_Crashgame"},
		{"a selector that misses its pods", ci, "deployment.yaml", "  selector:\n    matchLabels:\n      app.kubernetes.io/name: crashgame", "  selector:\n    matchLabels:\n      app.kubernetes.io/name: crashgame-x", "does not select its own pod template"},
		{"a roll of two pods at once", ci, "deployment.yaml", "maxUnavailable: 0", "maxUnavailable: 1", "one pod at a time"},
		{"readiness on the liveness route", ci, "deployment.yaml", "path: /readyz", "path: /healthz", "readinessProbe: GET /healthz answers 200 while PostgreSQL is away, want 503"},
		{"liveness on the readiness route", ci, "deployment.yaml", "livenessProbe:\n            httpGet:\n              path: /healthz", "livenessProbe:\n            httpGet:\n              path: /readyz", "livenessProbe: GET /readyz answers 503 while PostgreSQL is away"},
		{"a probe on no route", ci, "deployment.yaml", "path: /readyz", "path: /ready", "answers 404"},
		{"a probe on the metrics port", ci, "deployment.yaml", "path: /readyz\n              port: http", "path: /readyz\n              port: metrics", "is not the listen port"},
		{"a grace shorter than the hand-over", ci, "deployment.yaml", "terminationGracePeriodSeconds: 75", "terminationGracePeriodSeconds: 60", "terminationGracePeriodSeconds is under the stop's"},
		{"a preStop hook that needs a shell", ci, "deployment.yaml", "sleep:\n                seconds: 5", "exec:\n                command: [sleep, \"5\"]", "must be a sleep action"},
		{"listen on no container port", ci, "configmap.yaml", "listen: 0.0.0.0:8080", "listen: 0.0.0.0:8081", "listen port 8081 is no container port"},
		{"metrics on loopback", ci, "configmap.yaml", "metrics_listen: 0.0.0.0:9090", "metrics_listen: 127.0.0.1:9090", "listens on 127.0.0.1 only"},
		{"a file the game refuses", ci, "configmap.yaml", "lease_renew_ms: 500", "lease_renew_ms: 1500", "the game refuses the installation file"},
		{"a secret in the file", ci, "configmap.yaml", "seed_key: ${CRASHGAME_SEED_KEY}", "seed_key: 0de5eedc0de5eedc0de5eedc0de5eedc0de5eedc0de5eedc0de5eedc0de5eed1", "holds the value of Secret"},
		{"a variable the pod lacks", ci, "deployment.yaml", "- name: CRASHGAME_SEED_KEY", "- name: CRASHGAME_SEED", "CRASHGAME_SEED_KEY is not set"},
		{"a Secret key that is not there", ci, "deployment.yaml", "key: CRASHGAME_SEED_KEY", "key: SEED_KEY", "has no key SEED_KEY"},
		{"a Service on no container port", ci, "service.yaml", "targetPort: http", "targetPort: 8081", "targets 8081, no container port"},
		{"/metrics on the player Service", ci, "service.yaml", "targetPort: http\n      protocol: TCP", "targetPort: http\n      protocol: TCP\n    - name: metrics\n      port: 9090\n      targetPort: metrics", "carries both the player port and /metrics"},
		{"a PDB that keeps no majority", ci, "pdb.yaml", "minAvailable: 2", "minAvailable: 1", "minAvailable 1 of 3 replicas is not a majority"},
		{"a PDB that selects other pods", ci, "pdb.yaml", "      app.kubernetes.io/component: game", "      app.kubernetes.io/component: gam", "does not select the game's pods"},
		{"PostgreSQL's policy on another port", ci, "networkpolicy.yaml", "port: 5432", "port: 5433", "cannot reach port 5432"},
		{"PostgreSQL open to every pod", ci, "networkpolicy.yaml", "      ports:\n        - protocol: TCP\n          port: 5432", "        - namespaceSelector: {}\n      ports:\n        - protocol: TCP\n          port: 5432", "a pod that is not the game's"},
		{"NATS open to any pod of the namespace", ci, "networkpolicy.yaml", "      ports:\n        - protocol: TCP\n          port: 4222", "        - podSelector: {}\n      ports:\n        - protocol: TCP\n          port: 4222", "a pod that is not the game's (namespace games) reaches port 4222"},
		{"a policy on PostgreSQL's pods missing", ci, "networkpolicy.yaml", "app.kubernetes.io/name: postgresql", "app.kubernetes.io/name: postgres", "selects the postgres pods"},
		{"NATS's policy on the game's URL port missing", five, "networkpolicy.yaml", "port: 4223", "port: 4222", "cannot reach port 4223"},
		{"a ServiceMonitor on the wrong path", five, "servicemonitor.yaml", "path: /metrics", "path: /metric", `path "/metric", but serve answers GET /metrics`},
		{"a ServiceMonitor on no port of the Service", five, "servicemonitor.yaml", "- port: metrics", "- port: http", `endpoint port "http" is no port name`},
		{"a ServiceMonitor that also selects the player Service", five, "servicemonitor.yaml", "      app.kubernetes.io/part: metrics\n", "", "also selects the player Service"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srcs, r, fc := fixture(t, tc.variant)
			changed := false
			for i, s := range srcs {
				if !changed && strings.HasSuffix(s.template, "/"+tc.template) && strings.Contains(s.yaml, tc.old) {
					srcs[i].yaml = strings.Replace(s.yaml, tc.old, tc.new, 1)
					changed = true
				}
			}
			if !changed {
				t.Fatalf("%q is not in the rendered %s: the case no longer breaks anything", tc.old, tc.template)
			}
			ms, err := decodeAll(srcs)
			if err == nil {
				err = check(ms, r.values, variants[tc.variant].external, fc)
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v\nwant an error containing %q", err, tc.want)
			}
		})
	}
}

func TestReadFactsFindsTheStopSequence(t *testing.T) {
	t.Parallel()
	fc, err := readFacts("../..")
	if err != nil {
		t.Fatal(err)
	}
	if fc.tableGrace <= 0 || fc.shutdownGrace <= 0 || fc.metricsRoute != "GET /metrics" {
		t.Fatalf("facts %+v", fc)
	}
	if _, err := readFacts(t.TempDir()); err == nil {
		t.Fatal("readFacts of a directory without serve.go succeeded")
	}
}
