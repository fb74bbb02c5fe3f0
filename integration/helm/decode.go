package main

import (
	"errors"
	"fmt"
	"strings"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// manifest is one decoded object of the output.
type manifest struct {
	template string
	kind     string // apiVersion/kind, e.g. apps/v1/Deployment
	meta     *metav1.ObjectMeta
	obj      any
}

// kinds are the objects the chart may render, each with the Go type of its
// API version. Anything else fails: the check cannot vouch for it.
var kinds = map[string]func() (any, *metav1.ObjectMeta){
	"apps/v1/Deployment": func() (any, *metav1.ObjectMeta) {
		o := &appsv1.Deployment{}
		return o, &o.ObjectMeta
	},
	"v1/Service": func() (any, *metav1.ObjectMeta) {
		o := &corev1.Service{}
		return o, &o.ObjectMeta
	},
	"v1/ConfigMap": func() (any, *metav1.ObjectMeta) {
		o := &corev1.ConfigMap{}
		return o, &o.ObjectMeta
	},
	"v1/Secret": func() (any, *metav1.ObjectMeta) {
		o := &corev1.Secret{}
		return o, &o.ObjectMeta
	},
	"policy/v1/PodDisruptionBudget": func() (any, *metav1.ObjectMeta) {
		o := &policyv1.PodDisruptionBudget{}
		return o, &o.ObjectMeta
	},
	"networking.k8s.io/v1/NetworkPolicy": func() (any, *metav1.ObjectMeta) {
		o := &networkingv1.NetworkPolicy{}
		return o, &o.ObjectMeta
	},
	"monitoring.coreos.com/v1/ServiceMonitor": func() (any, *metav1.ObjectMeta) {
		o := &monitoringv1.ServiceMonitor{}
		return o, &o.ObjectMeta
	},
}

// decode decodes one YAML document strictly into its typed object, as an API
// server with strict field validation reads it: the YAML must have no
// duplicate keys, and the JSON it becomes must match the Go type field by
// field (names case-sensitive, no unknown field, no duplicate, every value of
// its field's type). An empty document (comments only) gives nil.
func decode(s source) (*manifest, error) {
	j, err := yaml.YAMLToJSONStrict([]byte(s.yaml))
	if err != nil {
		return nil, fmt.Errorf("%s: not YAML: %w", s.template, err)
	}
	if strings.TrimSpace(string(j)) == "null" {
		return nil, nil
	}
	var tm metav1.TypeMeta
	if err := kjson.UnmarshalCaseSensitivePreserveInts(j, &tm); err != nil {
		return nil, fmt.Errorf("%s: apiVersion and kind: %w", s.template, err)
	}
	kind := tm.APIVersion + "/" + tm.Kind
	mk, ok := kinds[kind]
	if !ok {
		return nil, fmt.Errorf("%s: %s is not a kind this check knows (apiVersion %q, kind %q)", s.template, kind, tm.APIVersion, tm.Kind)
	}
	obj, meta := mk()
	strict, err := kjson.UnmarshalStrict(j, obj)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", s.template, kind, err)
	}
	if len(strict) > 0 {
		return nil, fmt.Errorf("%s: %s: %w", s.template, kind, errors.Join(strict...))
	}
	return &manifest{template: s.template, kind: kind, meta: meta, obj: obj}, nil
}

// decodeAll decodes every document; it reports every failure at once.
func decodeAll(srcs []source) ([]*manifest, error) {
	var out []*manifest
	var errs []error
	for _, s := range srcs {
		m, err := decode(s)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if m != nil {
			out = append(out, m)
		}
	}
	return out, errors.Join(errs...)
}
