// Command helm renders the game's Helm chart (deploy/helm/crashgame) and
// validates what it renders; `make helm` runs it and its tests. It is a module
// of its own so that helm's and Kubernetes' packages never enter the game's
// go.mod.
//
// It owns the chart's check: it renders the chart with helm's own chart
// loader and template engine (helm.sh/helm/v3 pkg/chart/loader and
// pkg/engine, the packages `helm template` renders with) for each value set in
// values/, decodes every manifest strictly into its typed Go object from
// k8s.io/api (or the Prometheus Operator's types for a ServiceMonitor):
// unknown fields, duplicate fields, fields in the wrong case and values of the
// wrong type fail. That is a validation against the Kubernetes API's schemas
// as Go types, not a dry run against an API server. It then checks what ties
// the manifests to the game: the installation file from the ConfigMap is
// accepted by the game's own config parser with the environment the pods get;
// the probes reach routes that the game's HTTP handler answers; the ports
// agree with listen and metrics_listen; the termination grace covers the
// hand-over of cmd/crashgame/serve.go; the Services, the PodDisruptionBudget,
// the ServiceMonitor and the NetworkPolicies select what they must.
//
// It must never reach a Kubernetes cluster or a chart repository, and never
// print a secret of the rendered Secret.
package main
