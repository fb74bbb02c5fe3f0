package main

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/crashstudio/crashgame/internal/config"
	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"helm.sh/helm/v3/pkg/chartutil"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
)

// namespaceLabel is the label Kubernetes puts on every namespace (1.21 on):
// the NetworkPolicies select the release's namespace by it.
const namespaceLabel = "kubernetes.io/metadata.name"

// checker collects the problems of one value set's manifests.
type checker struct {
	ms       []*manifest
	values   chartutil.Values
	external map[string]map[string]string // Secrets the chart does not render: name -> key -> value
	facts    *facts
	errs     []error
}

func (c *checker) fail(format string, args ...any) {
	c.errs = append(c.errs, fmt.Errorf(format, args...))
}

// check runs every check on the decoded manifests of one value set.
func check(ms []*manifest, values chartutil.Values, external map[string]map[string]string, fc *facts) error {
	c := &checker{ms: ms, values: values, external: external, facts: fc}
	c.names()
	dep := one[*appsv1.Deployment](c, "apps/v1/Deployment")
	if dep == nil {
		return errors.Join(c.errs...)
	}
	pod := dep.Spec.Template
	if dep.Spec.Selector == nil || len(dep.Spec.Selector.MatchLabels)+len(dep.Spec.Selector.MatchExpressions) == 0 {
		c.fail("Deployment %s: an empty selector", dep.Name)
	} else if !selects(c, "Deployment "+dep.Name, dep.Spec.Selector, pod.Labels) {
		c.fail("Deployment %s: its selector does not select its own pod template's labels", dep.Name)
	}
	if want, ok := intValue(values, "replicas"); !ok || dep.Spec.Replicas == nil || int(*dep.Spec.Replicas) != want {
		c.fail("Deployment %s: replicas is not values.replicas", dep.Name)
	}
	c.rolling(dep)
	if len(pod.Spec.Containers) != 1 {
		c.fail("Deployment %s: %d containers, want 1 (crashgame serve)", dep.Name, len(pod.Spec.Containers))
		return errors.Join(c.errs...)
	}
	ctr := pod.Spec.Containers[0]
	cfg := c.installation(&pod.Spec, ctr)
	if cfg == nil {
		return errors.Join(c.errs...)
	}
	httpPort := c.listenPort(ctr, "listen", cfg.Listen)
	metricsPort := c.listenPort(ctr, "metrics_listen", cfg.MetricsListen)
	if httpPort == metricsPort {
		c.fail("listen and metrics_listen share port %d: /metrics would be on the player port", httpPort)
	}
	c.probes(ctr, httpPort)
	c.stop(dep, ctr, cfg)
	player, metrics := c.services(pod, ctr, httpPort, metricsPort)
	c.serviceMonitor(metrics, player)
	c.pdb(pod.Labels)
	c.networkPolicies(pod.Labels, c.env(&pod.Spec, ctr), cfg)
	return errors.Join(c.errs...)
}

// one returns the only manifest of a kind, or nil with a failure.
func one[T any](c *checker, kind string) T {
	var zero T
	all := all[T](c, kind)
	if len(all) != 1 {
		c.fail("%d %s, want 1", len(all), kind)
		return zero
	}
	return all[0]
}

func all[T any](c *checker, kind string) []T {
	var out []T
	for _, m := range c.ms {
		if m.kind == kind {
			out = append(out, m.obj.(T))
		}
	}
	return out
}

// names checks what the API server checks of every object's metadata.
func (c *checker) names() {
	for _, m := range c.ms {
		var problems []string
		if m.kind == "v1/Service" {
			problems = validation.IsDNS1035Label(m.meta.Name)
		} else {
			problems = validation.IsDNS1123Subdomain(m.meta.Name)
		}
		if m.meta.Namespace != "" {
			problems = append(problems, validation.IsDNS1123Label(m.meta.Namespace)...)
		}
		for k, v := range m.meta.Labels {
			problems = append(problems, validation.IsQualifiedName(k)...)
			problems = append(problems, validation.IsValidLabelValue(v)...)
		}
		for k := range m.meta.Annotations {
			problems = append(problems, validation.IsQualifiedName(k)...)
		}
		if len(problems) > 0 {
			c.fail("%s %s (%s): %s", m.kind, m.meta.Name, m.template, strings.Join(problems, "; "))
		}
	}
}

// selects reports whether a label selector selects a set of labels.
func selects(c *checker, where string, sel *metav1.LabelSelector, set map[string]string) bool {
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		c.fail("%s: selector: %v", where, err)
		return false
	}
	return s.Matches(labels.Set(set))
}

// rolling: a roll replaces one pod at a time, and an old pod stops only once
// its replacement answers /readyz.
func (c *checker) rolling(dep *appsv1.Deployment) {
	ru := dep.Spec.Strategy.RollingUpdate
	if dep.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType || ru == nil || ru.MaxUnavailable == nil || ru.MaxSurge == nil {
		c.fail("Deployment %s: strategy must be RollingUpdate with maxUnavailable and maxSurge", dep.Name)
		return
	}
	if *ru.MaxUnavailable != intstr.FromInt32(0) || *ru.MaxSurge != intstr.FromInt32(1) {
		c.fail("Deployment %s: a roll must go one pod at a time, each replaced once its successor is ready (maxUnavailable 0, maxSurge 1), not %s and %s", dep.Name, ru.MaxUnavailable.String(), ru.MaxSurge.String())
	}
}

// env is the container's environment as the kubelet would set it: values,
// the pod's name, and keys of Secrets (rendered, or given as external).
func (c *checker) env(spec *corev1.PodSpec, ctr corev1.Container) map[string]string {
	secrets := map[string]map[string]string{}
	for name, keys := range c.external {
		secrets[name] = keys
	}
	for _, s := range all[*corev1.Secret](c, "v1/Secret") {
		keys := map[string]string{}
		for k, v := range s.Data {
			keys[k] = string(v)
		}
		for k, v := range s.StringData {
			keys[k] = v
		}
		secrets[s.Name] = keys
	}
	env := map[string]string{}
	for _, e := range ctr.Env {
		if errs := validation.IsEnvVarName(e.Name); len(errs) > 0 {
			c.fail("container %s: env %s: %s", ctr.Name, e.Name, strings.Join(errs, "; "))
		}
		switch {
		case e.ValueFrom == nil:
			env[e.Name] = e.Value
		case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.name":
			env[e.Name] = releaseName + "-crashgame-6d9f7c8b5-x2x9z" // a pod's name, as a ReplicaSet names it
		case e.ValueFrom.SecretKeyRef != nil:
			ref := e.ValueFrom.SecretKeyRef
			keys, ok := secrets[ref.Name]
			if !ok {
				c.fail("container %s: env %s: Secret %s is neither rendered nor one the value set names as existing", ctr.Name, e.Name, ref.Name)
				continue
			}
			v, ok := keys[ref.Key]
			if !ok {
				c.fail("container %s: env %s: Secret %s has no key %s", ctr.Name, e.Name, ref.Name, ref.Key)
				continue
			}
			env[e.Name] = v
		default:
			c.fail("container %s: env %s: a source this check does not know", ctr.Name, e.Name)
		}
	}
	return env
}

// installation finds the installation file the container reads and parses it
// with the game's own parser and the container's environment.
func (c *checker) installation(spec *corev1.PodSpec, ctr corev1.Container) *config.Config {
	path := ""
	for i, a := range ctr.Args {
		if a == "--config" && i+1 < len(ctr.Args) {
			path = ctr.Args[i+1]
		}
	}
	if len(ctr.Args) == 0 || ctr.Args[0] != "serve" || path == "" {
		c.fail("container %s: args %q: want serve --config FILE", ctr.Name, ctr.Args)
		return nil
	}
	var data string
	found := false
	for _, vm := range ctr.VolumeMounts {
		for _, v := range spec.Volumes {
			if v.Name != vm.Name || v.ConfigMap == nil || vm.SubPath != "" {
				continue
			}
			for _, cm := range all[*corev1.ConfigMap](c, "v1/ConfigMap") {
				if cm.Name != v.ConfigMap.Name {
					continue
				}
				for k, d := range cm.Data {
					if errs := validation.IsConfigMapKey(k); len(errs) > 0 {
						c.fail("ConfigMap %s: key %s: %s", cm.Name, k, strings.Join(errs, "; "))
					}
					if strings.TrimSuffix(vm.MountPath, "/")+"/"+k == path {
						data, found = d, true
					}
				}
			}
		}
	}
	if !found {
		c.fail("container %s: --config %s is no key of a rendered ConfigMap mounted there", ctr.Name, path)
		return nil
	}
	env := c.env(spec, ctr)
	for _, s := range all[*corev1.Secret](c, "v1/Secret") {
		for k, v := range s.StringData {
			if len(v) >= 8 && strings.Contains(data, v) {
				c.fail("the installation file holds the value of Secret %s key %s: secrets belong in the Secret", s.Name, k)
			}
		}
	}
	cfg, err := config.Parse([]byte(data), func(name string) (string, bool) {
		v, ok := env[name]
		return v, ok
	})
	if err != nil {
		c.fail("the game refuses the installation file of the ConfigMap with the pod's environment:\n%v", err)
		return nil
	}
	if cfg.Cluster == nil {
		c.fail("the installation file has no cluster section: replicas need it")
		return nil
	}
	return cfg
}

// listenPort checks that an address of the file is a container port that the
// kubelet and the Services reach (not loopback), and returns the port.
func (c *checker) listenPort(ctr corev1.Container, key, addr string) int32 {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		c.fail("%s %q: %v", key, addr, err)
		return 0
	}
	if ip := net.ParseIP(host); host != "" && (ip == nil || !ip.IsUnspecified()) {
		c.fail("%s %q: listens on %s only, which the probes and the Services cannot reach; use 0.0.0.0", key, addr, host)
	}
	n, _ := strconv.Atoi(p)
	for _, cp := range ctr.Ports {
		if int(cp.ContainerPort) == n {
			if cp.Name != "" {
				if errs := validation.IsValidPortName(cp.Name); len(errs) > 0 {
					c.fail("container port %s: %s", cp.Name, strings.Join(errs, "; "))
				}
			}
			return cp.ContainerPort
		}
	}
	c.fail("%s port %d is no container port of %s", key, n, ctr.Name)
	return 0
}

// containerPort resolves a probe's or a Service's target (a name or a number).
func containerPort(ctr corev1.Container, p intstr.IntOrString) (int32, bool) {
	for _, cp := range ctr.Ports {
		if (p.Type == intstr.String && cp.Name == p.StrVal) || (p.Type == intstr.Int && cp.ContainerPort == p.IntVal) {
			return cp.ContainerPort, true
		}
	}
	return 0, false
}

// probes: readiness follows /readyz (503 while PostgreSQL or NATS is away),
// liveness and startup a route that answers 200 while the process serves,
// ready or not (a database outage must not restart every replica). All three
// on the listen port, and the game's own handler answers their paths.
func (c *checker) probes(ctr corev1.Container, httpPort int32) {
	type probe struct {
		name            string
		p               *corev1.Probe
		ready, notReady int
	}
	for _, pr := range []probe{
		{"readinessProbe", ctr.ReadinessProbe, 200, 503},
		{"livenessProbe", ctr.LivenessProbe, 200, 200},
		{"startupProbe", ctr.StartupProbe, 200, 200},
	} {
		if pr.p == nil || pr.p.HTTPGet == nil {
			c.fail("container %s: %s: missing, or not an httpGet", ctr.Name, pr.name)
			continue
		}
		g := pr.p.HTTPGet
		if port, ok := containerPort(ctr, g.Port); !ok || port != httpPort {
			c.fail("container %s: %s: port %s is not the listen port %d", ctr.Name, pr.name, g.Port.String(), httpPort)
		}
		if got := c.facts.status(g.Path, true); got != pr.ready {
			c.fail("container %s: %s: GET %s answers %d on a ready replica, want %d", ctr.Name, pr.name, g.Path, got, pr.ready)
		}
		if got := c.facts.status(g.Path, false); got != pr.notReady {
			c.fail("container %s: %s: GET %s answers %d while PostgreSQL is away, want %d", ctr.Name, pr.name, g.Path, got, pr.notReady)
		}
	}
}

// stop: the preStop hook is the kubelet's sleep (the image has no shell), and
// the grace covers the hook, the drain and the game's hand-over.
func (c *checker) stop(dep *appsv1.Deployment, ctr corev1.Container, cfg *config.Config) {
	var hook time.Duration
	switch l := ctr.Lifecycle; {
	case l == nil || l.PreStop == nil:
		c.fail("container %s: no preStop hook", ctr.Name)
	case l.PreStop.Sleep == nil:
		c.fail("container %s: the preStop hook must be a sleep action: the image has no shell to exec", ctr.Name)
	default:
		hook = time.Duration(l.PreStop.Sleep.Seconds) * time.Second
	}
	need := hook + cfg.Cluster.Drain() + c.facts.tableGrace + 2*c.facts.shutdownGrace
	g := dep.Spec.Template.Spec.TerminationGracePeriodSeconds
	if g == nil || time.Duration(*g)*time.Second < need {
		c.fail("Deployment %s: terminationGracePeriodSeconds is under the stop's %s (preStop %s + drain_ms %s + the tables' %s + 2 × %s of cmd/crashgame/serve.go)",
			dep.Name, need, hook, cfg.Cluster.Drain(), c.facts.tableGrace, c.facts.shutdownGrace)
	}
}

// services: each selects the game's pods and targets container ports; one
// carries the listen port, another the metrics port, and none both.
func (c *checker) services(pod corev1.PodTemplateSpec, ctr corev1.Container, httpPort, metricsPort int32) (player, metrics *corev1.Service) {
	for _, s := range all[*corev1.Service](c, "v1/Service") {
		if len(s.Spec.Selector) == 0 || !labels.SelectorFromSet(s.Spec.Selector).Matches(labels.Set(pod.Labels)) {
			c.fail("Service %s: its selector does not select the game's pods", s.Name)
		}
		var http, met bool
		for _, p := range s.Spec.Ports {
			if errs := validation.IsValidPortName(p.Name); p.Name != "" && len(errs) > 0 {
				c.fail("Service %s: port %s: %s", s.Name, p.Name, strings.Join(errs, "; "))
			}
			target := p.TargetPort
			if target.Type == intstr.Int && target.IntVal == 0 {
				target = intstr.FromInt32(p.Port)
			}
			cp, ok := containerPort(ctr, target)
			switch {
			case !ok:
				c.fail("Service %s: port %s targets %s, no container port", s.Name, p.Name, target.String())
			case cp == httpPort:
				http = true
			case cp == metricsPort:
				met = true
			}
		}
		switch {
		case http && met:
			c.fail("Service %s: carries both the player port and /metrics", s.Name)
		case http:
			player = s
		case met:
			metrics = s
		}
	}
	if player == nil {
		c.fail("no Service carries the player port %d", httpPort)
	}
	if metrics == nil {
		c.fail("no Service carries the metrics port %d", metricsPort)
	}
	return player, metrics
}

// serviceMonitor: present exactly when enabled; it selects the metrics Service
// and not the player one, by a port of it, at the route serve registers.
func (c *checker) serviceMonitor(metrics, player *corev1.Service) {
	sms := all[*monitoringv1.ServiceMonitor](c, "monitoring.coreos.com/v1/ServiceMonitor")
	enabled, _ := c.values.PathValue("metrics.serviceMonitor.enabled")
	if want := enabled == true; want != (len(sms) == 1) || len(sms) > 1 {
		c.fail("%d ServiceMonitors with metrics.serviceMonitor.enabled %v", len(sms), enabled)
	}
	if metrics == nil || player == nil {
		return
	}
	route := strings.TrimPrefix(c.facts.metricsRoute, "GET ")
	for _, sm := range sms {
		where := "ServiceMonitor " + sm.Name
		if !selects(c, where, &sm.Spec.Selector, metrics.Labels) {
			c.fail("%s: does not select Service %s", where, metrics.Name)
		}
		if selects(c, where, &sm.Spec.Selector, player.Labels) {
			c.fail("%s: also selects the player Service %s", where, player.Name)
		}
		ns := sm.Spec.NamespaceSelector
		if !ns.Any && !contains(ns.MatchNames, releaseNamespace) && !(len(ns.MatchNames) == 0 && (sm.Namespace == "" || sm.Namespace == releaseNamespace)) {
			c.fail("%s: namespaceSelector leaves out the release's namespace %s", where, releaseNamespace)
		}
		if len(sm.Spec.Endpoints) == 0 {
			c.fail("%s: no endpoints", where)
		}
		for _, ep := range sm.Spec.Endpoints {
			found := false
			for _, p := range metrics.Spec.Ports {
				found = found || (ep.Port != "" && p.Name == ep.Port)
			}
			if !found {
				c.fail("%s: endpoint port %q is no port name of Service %s", where, ep.Port, metrics.Name)
			}
			if ep.Path != route {
				c.fail("%s: path %q, but serve answers %s", where, ep.Path, c.facts.metricsRoute)
			}
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// pdb: it selects the game's pods and keeps a majority of the replicas.
func (c *checker) pdb(podLabels map[string]string) {
	p := one[*policyv1.PodDisruptionBudget](c, "policy/v1/PodDisruptionBudget")
	if p == nil {
		return
	}
	if p.Spec.Selector == nil || !selects(c, "PodDisruptionBudget "+p.Name, p.Spec.Selector, podLabels) {
		c.fail("PodDisruptionBudget %s: does not select the game's pods", p.Name)
	}
	replicas, _ := intValue(c.values, "replicas")
	if p.Spec.MinAvailable == nil || p.Spec.MinAvailable.Type != intstr.Int || p.Spec.MaxUnavailable != nil {
		c.fail("PodDisruptionBudget %s: want minAvailable as a number of pods", p.Name)
		return
	}
	if m := int(p.Spec.MinAvailable.IntVal); 2*m <= replicas || m > replicas {
		c.fail("PodDisruptionBudget %s: minAvailable %d of %d replicas is not a majority", p.Name, m, replicas)
	}
}

// networkPolicies: with networkPolicy.enabled, one policy selects the
// PostgreSQL pods and one the NATS pods (by the values' labels, in their
// namespace); each admits the game's pods on the ports of the game's URLs
// (database, cluster.nats), and admits no other pod there.
func (c *checker) networkPolicies(podLabels map[string]string, env map[string]string, cfg *config.Config) {
	pols := all[*networkingv1.NetworkPolicy](c, "networking.k8s.io/v1/NetworkPolicy")
	enabled, _ := c.values.PathValue("networkPolicy.enabled")
	if enabled != true {
		if len(pols) > 0 {
			c.fail("%d NetworkPolicies with networkPolicy.enabled false", len(pols))
		}
		return
	}
	dbPorts, err := urlPorts([]string{env["CRASHGAME_DATABASE_URL"]}, 5432)
	if err != nil {
		c.fail("database URL: %v", err)
	}
	natsPorts, err := urlPorts(cfg.Cluster.NATS, 4222)
	if err != nil {
		c.fail("cluster.nats: %v", err)
	}
	for _, target := range []struct {
		name  string
		ports []int32
	}{{"postgres", dbPorts}, {"nats", natsPorts}} {
		sel, _ := c.values.Table("networkPolicy." + target.name + ".podSelector")
		want := map[string]string{}
		for k, v := range sel {
			want[k] = fmt.Sprint(v)
		}
		ns, _ := c.values.PathValue("networkPolicy." + target.name + ".namespace")
		polNS, _ := ns.(string)
		if polNS == "" {
			polNS = releaseNamespace
		}
		var pol *networkingv1.NetworkPolicy
		for _, p := range pols {
			if (p.Namespace == polNS || (p.Namespace == "" && polNS == releaseNamespace)) && len(want) > 0 &&
				len(p.Spec.PodSelector.MatchExpressions) == 0 && labels.Equals(p.Spec.PodSelector.MatchLabels, want) {
				pol = p
			}
		}
		if pol == nil {
			c.fail("no NetworkPolicy in namespace %s selects the %s pods %v of networkPolicy.%s.podSelector", polNS, target.name, want, target.name)
			continue
		}
		where := "NetworkPolicy " + pol.Name
		if polNS == releaseNamespace && selects(c, where, &pol.Spec.PodSelector, podLabels) {
			c.fail("%s: selects the game's own pods", where)
		}
		if !contains(policyTypes(pol), "Ingress") {
			c.fail("%s: policyTypes lacks Ingress", where)
		}
		stranger := map[string]string{"app.kubernetes.io/name": "stranger"}
		for _, port := range target.ports {
			if !admits(c, pol, polNS, releaseNamespace, podLabels, port, false) {
				c.fail("%s: the game's pods cannot reach port %d of the game's %s URL", where, port, target.name)
			}
			for _, ns := range []string{releaseNamespace, polNS, "elsewhere"} {
				if admits(c, pol, polNS, ns, stranger, port, true) {
					c.fail("%s: a pod that is not the game's (namespace %s) reaches port %d", where, ns, port)
				}
			}
		}
	}
}

func policyTypes(p *networkingv1.NetworkPolicy) []string {
	var out []string
	for _, t := range p.Spec.PolicyTypes {
		out = append(out, string(t))
	}
	return out
}

// admits evaluates a policy's ingress rules for a pod of namespace podNS
// (labelled as Kubernetes labels namespaces) connecting to a TCP port.
// ipBlock peers may hold pods' addresses: ipBlock says what to assume.
func admits(c *checker, pol *networkingv1.NetworkPolicy, polNS, podNS string, podLabels map[string]string, port int32, ipBlock bool) bool {
	nsLabels := map[string]string{namespaceLabel: podNS}
	for _, rule := range pol.Spec.Ingress {
		portOK := len(rule.Ports) == 0
		for _, p := range rule.Ports {
			proto := corev1.ProtocolTCP
			if p.Protocol != nil {
				proto = *p.Protocol
			}
			if proto != corev1.ProtocolTCP || p.Port == nil {
				portOK = portOK || (proto == corev1.ProtocolTCP && p.Port == nil)
				continue
			}
			lo, hi := p.Port.IntVal, p.Port.IntVal
			if p.EndPort != nil {
				hi = *p.EndPort
			}
			portOK = portOK || (p.Port.Type == intstr.Int && lo <= port && port <= hi)
		}
		if !portOK {
			continue
		}
		if len(rule.From) == 0 {
			return true
		}
		for _, peer := range rule.From {
			switch {
			case peer.IPBlock != nil:
				if ipBlock {
					return true
				}
			case peer.NamespaceSelector == nil && peer.PodSelector != nil:
				if podNS == polNS && selects(c, "NetworkPolicy "+pol.Name, peer.PodSelector, podLabels) {
					return true
				}
			case peer.NamespaceSelector != nil:
				nsOK := selects(c, "NetworkPolicy "+pol.Name, peer.NamespaceSelector, nsLabels)
				podOK := peer.PodSelector == nil || selects(c, "NetworkPolicy "+pol.Name, peer.PodSelector, podLabels)
				if nsOK && podOK {
					return true
				}
			}
		}
	}
	return false
}

// urlPorts returns the ports of URLs, def when one names none.
func urlPorts(raw []string, def int32) ([]int32, error) {
	var out []int32
	for _, r := range raw {
		u, err := url.Parse(r)
		if err != nil {
			return nil, errors.New("not a URL") // the URL may hold a password: never print it
		}
		p := def
		if s := u.Port(); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil {
				return nil, errors.New("a URL's port is not a number")
			}
			p = int32(n)
		}
		if !containsPort(out, p) {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no URL")
	}
	return out, nil
}

func containsPort(list []int32, p int32) bool {
	for _, x := range list {
		if x == p {
			return true
		}
	}
	return false
}

// intValue reads a whole number of the values (YAML numbers arrive as float64
// or int64).
func intValue(v chartutil.Values, path string) (int, bool) {
	x, err := v.PathValue(path)
	if err != nil {
		return 0, false
	}
	switch n := x.(type) {
	case float64:
		return int(n), n == float64(int(n))
	case int64:
		return int(n), true
	case int:
		return n, true
	}
	return 0, false
}
