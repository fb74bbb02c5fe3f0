package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Load reads and validates the installation file at path, expanding ${NAME} from
// the process environment.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	c, err := Parse(data, os.LookupEnv)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	return c, nil
}

// Parse validates an installation file. getenv resolves ${NAME} references (use
// os.LookupEnv); it may be nil when the file references none.
//
// References are expanded inside YAML values after the file is parsed, never in
// keys or comments, so a secret holding YAML syntax (": ", "#", quotes, newlines)
// is taken literally and cannot change the file's structure. A value that is just
// a reference takes the type of its content (betting_ms: ${BETTING_MS} is a
// number when the variable holds digits).
//
// On failure the error joins every problem found (errors.Join), one per line, each
// naming the line, the operator or game, and the fix. Problems with ${NAME}
// references are reported alone, before any other check.
func Parse(data []byte, getenv func(string) (string, bool)) (*Config, error) {
	p := &parser{getenv: getenv, expanded: map[*yaml.Node]string{}}
	root, err := p.document(data)
	if err != nil {
		return nil, err
	}
	p.expand(root, "")
	if len(p.problems) > 0 {
		return nil, p.err()
	}
	c := p.config(root)
	if len(p.problems) > 0 {
		return nil, p.err()
	}
	return c, nil
}

type parser struct {
	getenv   func(string) (string, bool)
	expanded map[*yaml.Node]string // value nodes that held ${NAME}: their text before expansion
	problems []problem
}

type problem struct {
	line int // 0 when the problem has no place in the file
	err  error
}

func (p *parser) err() error {
	n := len(p.problems)
	noun := "problems"
	if n == 1 {
		noun = "problem"
	}
	// In file order, so the list reads top to bottom; problems without a line first.
	slices.SortStableFunc(p.problems, func(a, b problem) int { return a.line - b.line })
	errs := make([]error, n)
	for i, pr := range p.problems {
		errs[i] = pr.err
	}
	return fmt.Errorf("%d %s in the configuration:\n%w", n, noun, errors.Join(errs...))
}

// addf records one problem; n gives the line.
func (p *parser) addf(n *yaml.Node, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	line := 0
	if n != nil && n.Line > 0 {
		line = n.Line
		msg = fmt.Sprintf("line %d: %s", line, msg)
	}
	p.problems = append(p.problems, problem{line, errors.New(msg)})
}

// variable names the variable a value came from (" from ${NAME}"), or
// nothing for a value written in the file: it never shows the value itself.
func (p *parser) variable(n *yaml.Node) string {
	if orig, ok := p.expanded[n]; ok {
		return " from " + orig
	}
	return ""
}

// show quotes a value for a message: the ${NAME} text for an expanded value (its
// content may be a secret), nothing for a value that may carry credentials.
func (p *parser) show(n *yaml.Node) string {
	if orig, ok := p.expanded[n]; ok {
		return strconv.Quote(orig)
	}
	v := n.Value
	if strings.Contains(v, "@") {
		return "(value not shown: it may hold credentials)"
	}
	if len(v) > 60 {
		v = v[:60] + "..."
	}
	return strconv.Quote(v)
}

func (p *parser) document(data []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("the file is empty; start from docs/config.md")
		}
		return nil, fmt.Errorf("the file is not valid YAML: %w", err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		if err != nil {
			return nil, fmt.Errorf("the file is not valid YAML: %w", err)
		}
		return nil, fmt.Errorf("line %d: the file holds a second YAML document (after ---); keep one", extra.Line)
	}
	if len(doc.Content) == 0 || deref(doc.Content[0]).ShortTag() == "!!null" {
		return nil, errors.New("the file is empty; start from docs/config.md")
	}
	return doc.Content[0], nil
}

func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 100; i++ {
		n = n.Alias
	}
	return n
}

// --- ${NAME} expansion ---

var envName = regexp.MustCompile(`^[A-Z0-9_]+$`)

// expand replaces ${NAME} in every scalar value of the tree (not in keys).
func (p *parser) expand(n *yaml.Node, path string) {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			p.expand(n.Content[i+1], joinPath(path, n.Content[i].Value))
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			p.expand(c, fmt.Sprintf("%s[%d]", path, i))
		}
	case yaml.ScalarNode:
		if _, done := p.expanded[n]; done || !strings.Contains(n.Value, "${") {
			return
		}
		orig := n.Value
		v, ok := p.expandString(n, path, orig)
		if !ok {
			return
		}
		p.expanded[n] = orig
		n.Value = v
		n.Tag = "!!str" // read as text; numbers and booleans are parsed from the text
	}
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func (p *parser) expandString(n *yaml.Node, path, s string) (string, bool) {
	var b strings.Builder
	ok := true
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			break
		}
		b.WriteString(s[:i])
		rest := s[i+2:]
		j := strings.IndexByte(rest, '}')
		if j < 0 || !envName.MatchString(rest[:j]) {
			p.addf(n, "%s: malformed reference: write ${NAME} with NAME made of A-Z, 0-9 and _ (there is no escape for a literal ${)", path)
			return "", false
		}
		name := rest[:j]
		s = rest[j+1:]
		var v string
		var set bool
		if p.getenv != nil {
			v, set = p.getenv(name)
		}
		switch {
		case !set:
			p.addf(n, "%s: environment variable %s is not set; export it before starting crashgame", path, name)
			ok = false
		case v == "":
			p.addf(n, "%s: environment variable %s is set but empty; give it a value", path, name)
			ok = false
		}
		b.WriteString(v)
	}
	return b.String(), ok
}

// --- generic readers over the YAML tree ---

type pair struct{ key, val *yaml.Node }

// mapping returns the key/value pairs of a mapping, with YAML merge keys (<<)
// resolved: explicit keys win, then merged mappings in order.
func (p *parser) mapping(n *yaml.Node, where string) []pair {
	return p.mappingDepth(n, where, 0)
}

func (p *parser) mappingDepth(n *yaml.Node, where string, depth int) []pair {
	n = deref(n)
	if n == nil || n.ShortTag() == "!!null" {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		p.addf(n, "%s must be a mapping of key: value lines", where)
		return nil
	}
	if depth > 8 {
		p.addf(n, "%s: merge keys (<<) nest too deep", where)
		return nil
	}
	var explicit, merged []pair
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.ShortTag() != "!!merge" {
			explicit = append(explicit, pair{k, v})
			continue
		}
		srcs := []*yaml.Node{deref(v)}
		if srcs[0].Kind == yaml.SequenceNode {
			srcs = srcs[0].Content
		}
		for _, src := range srcs {
			merged = append(merged, p.mappingDepth(src, where, depth+1)...)
		}
	}
	seen := map[string]bool{}
	for _, e := range explicit {
		seen[e.key.Value] = true
	}
	out := explicit
	for _, m := range merged {
		if !seen[m.key.Value] {
			seen[m.key.Value] = true
			out = append(out, m)
		}
	}
	return out
}

// fields checks the keys of a mapping against the allowed ones and returns the
// values by key. Unknown and repeated keys are problems.
func (p *parser) fields(pairs []pair, where string, allowed ...string) map[string]*yaml.Node {
	out := make(map[string]*yaml.Node, len(pairs))
	for _, e := range pairs {
		k := e.key.Value
		switch {
		case e.key.Kind != yaml.ScalarNode:
			p.addf(e.key, "%s: a key must be a plain word", where)
		case !slices.Contains(allowed, k):
			p.addf(e.key, "%s: unknown key %q; the keys here are %s (see docs/config.md)", where, k, strings.Join(allowed, ", "))
		case out[k] != nil:
			p.addf(e.key, "%s: key %q appears twice; keep one", where, k)
		default:
			out[k] = deref(e.val)
		}
	}
	return out
}

// str reads an optional text value. It returns the node (nil when the key is
// absent); a null value reads as "".
func (p *parser) str(f map[string]*yaml.Node, key, where string) (string, *yaml.Node) {
	n := f[key]
	if n == nil {
		return "", nil
	}
	if n.Kind != yaml.ScalarNode {
		p.addf(n, "%s: %s must be a single text value", where, key)
		return "", n
	}
	if n.ShortTag() == "!!null" {
		return "", n
	}
	return n.Value, n
}

// integer reads an optional whole number; hint explains the unit. ok is false
// when the key is absent or a problem was recorded.
func (p *parser) integer(f map[string]*yaml.Node, key, where, hint string) (v int64, ok bool) {
	n := f[key]
	if n == nil {
		return 0, false
	}
	want := fmt.Sprintf("%s: %s must be a whole number%s", where, key, hint)
	if n.Kind != yaml.ScalarNode {
		p.addf(n, "%s, not a list or mapping", want)
		return 0, false
	}
	if _, env := p.expanded[n]; env {
		v, err := strconv.ParseInt(n.Value, 10, 64)
		if err != nil {
			p.addf(n, "%s; the variable in %s does not hold one", want, p.show(n))
			return 0, false
		}
		return v, true
	}
	switch n.ShortTag() {
	case "!!int":
		if err := n.Decode(&v); err != nil {
			p.addf(n, "%s; %s is out of range", want, p.show(n))
			return 0, false
		}
		return v, true
	case "!!float":
		p.addf(n, "%s, not %s: write it without a decimal point", want, p.show(n))
	case "!!null":
		p.addf(n, "%s; it has no value: write one or remove the key", want)
	case "!!str":
		if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 {
			p.addf(n, "%s, not the text %s: write it without quotes", want, p.show(n))
		} else {
			p.addf(n, "%s, not %s", want, p.show(n))
		}
	default:
		p.addf(n, "%s, not %s", want, p.show(n))
	}
	return 0, false
}

// boolean reads an optional true/false, def when absent.
func (p *parser) boolean(f map[string]*yaml.Node, key, where string, def bool) bool {
	n := f[key]
	if n == nil {
		return def
	}
	if n.Kind == yaml.ScalarNode {
		if _, env := p.expanded[n]; env {
			if b, err := strconv.ParseBool(n.Value); err == nil && (n.Value == "true" || n.Value == "false") {
				return b
			}
		} else if n.ShortTag() == "!!bool" {
			var b bool
			if err := n.Decode(&b); err == nil {
				return b
			}
		}
	}
	p.addf(n, "%s: %s must be true or false, not %s", where, key, p.show(n))
	return def
}

// list reads an optional sequence node; null reads as empty.
func (p *parser) list(f map[string]*yaml.Node, key, where string) []*yaml.Node {
	n := f[key]
	if n == nil || n.ShortTag() == "!!null" {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		p.addf(n, "%s: %s must be a list (- item lines, or [a, b])", where, key)
		return nil
	}
	out := make([]*yaml.Node, len(n.Content))
	for i, c := range n.Content {
		out[i] = deref(c)
	}
	return out
}

// --- the installation ---

var (
	idPattern       = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
	currencyPattern = regexp.MustCompile(`^[A-Z]{3}$`)
)

const idRule = "1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit"

// config reads the whole installation file, section by section, into a Config
// that starts from the defaults.
func (p *parser) config(root *yaml.Node) *Config {
	f := p.fields(p.mapping(root, "the file"), "top level",
		"listen", "metrics_listen", "base_url", "default_language", "database", "games", "operators", "cluster", "trusted_proxies", "address_limits", "fairness", "back_office", "profiling")
	c := &Config{
		Listen:          DefaultListen,
		MetricsListen:   DefaultMetricsListen,
		DefaultLanguage: DefaultLanguage,
		Database:        DefaultDatabase,
	}
	p.listenAddresses(f, c)
	p.installation(f, c)
	c.TrustedProxies = p.trustedProxies(f)

	c.AddressLimits = DefaultAddressLimits
	if n := f["address_limits"]; n != nil {
		c.AddressLimits = p.addressLimits(n)
	}

	if n := f["cluster"]; n != nil {
		c.Cluster = p.cluster(n, c.Database)
	}
	c.Fairness = p.fairness(f["fairness"])
	c.LinkTTLMS = DefaultLinkTTLMS
	if n := f["back_office"]; n != nil {
		p.backOffice(n, c)
	}

	var gameName map[string]string
	c.Games, gameName = p.games(f)
	c.Operators = p.operators(f, gameName)
	return c
}

// listenAddresses reads listen and metrics_listen into c.
func (p *parser) listenAddresses(f map[string]*yaml.Node, c *Config) {
	if v, n := p.str(f, "listen", "top level"); n != nil {
		c.Listen = v
		if _, port, err := net.SplitHostPort(v); err != nil || !validPort(port) {
			p.addf(n, "listen %s is not host:port; write e.g. 127.0.0.1:8080 or :8080", p.show(n))
		}
	}

	// /metrics is served on metrics_listen alone, never on listen: by default
	// on loopback, where only the machine's own monitoring reaches it.
	if v, n := p.str(f, "metrics_listen", "top level"); n != nil {
		c.MetricsListen = v
		if _, port, err := net.SplitHostPort(v); err != nil || !validPort(port) {
			p.addf(n, "metrics_listen %s is not host:port; write e.g. %s (the default), or 10.0.0.5:9090 for a monitoring network", p.show(n), DefaultMetricsListen)
		} else if v == c.Listen && port != "0" {
			p.addf(n, "metrics_listen %s is the same address as listen; give /metrics an address of its own, e.g. %s (the default)", p.show(n), DefaultMetricsListen)
		}
	} else if c.Listen == DefaultMetricsListen {
		p.addf(f["listen"], "listen %q is also the default of metrics_listen; set metrics_listen to another address, e.g. 127.0.0.1:9091", c.Listen)
	}
	c.Profiling = p.boolean(f, "profiling", "top level", false)
}

// installation reads base_url, default_language and database into c.
func (p *parser) installation(f map[string]*yaml.Node, c *Config) {
	// Rule GEN-11: launch URLs are built on base_url.
	if v, n := p.str(f, "base_url", "top level"); n == nil || v == "" {
		p.addf(n, "base_url is missing; set the public address of the game that browsers reach, e.g. base_url: https://games.example.com (launch URLs are built on it)")
	} else if u, why := checkURL(v); why != "" {
		p.addf(n, "base_url %s %s; write it like https://games.example.com", p.show(n), why)
	} else {
		c.BaseURL = normaliseURL(u, v)
	}

	// Rule LANG-4: the fallback language is the installation's, any of the three.
	if v, n := p.str(f, "default_language", "top level"); n != nil {
		if !slices.Contains(Languages, v) {
			p.addf(n, "default_language %s is not one of %s; pick one of them", p.show(n), strings.Join(Languages, ", "))
		} else {
			c.DefaultLanguage = v
		}
	}

	if v, n := p.str(f, "database", "top level"); n != nil {
		if why := checkDatabase(v); why != "" {
			p.addf(n, "database %s; write sqlite://PATH (e.g. sqlite://data/crashgame.db) or postgres://USER:PASSWORD@HOST:5432/DB?sslmode=require (value not shown: it may hold a password)", why)
		} else {
			c.Database = DSN(v)
		}
	}
}

// trustedProxies reads the trusted_proxies list: addresses and CIDR ranges,
// each returned as a masked prefix.
func (p *parser) trustedProxies(f map[string]*yaml.Node) []netip.Prefix {
	var out []netip.Prefix
	for _, n := range p.list(f, "trusted_proxies", "top level") {
		pfx, err := netip.ParsePrefix(n.Value)
		if err != nil {
			addr, aerr := netip.ParseAddr(n.Value)
			if aerr != nil {
				p.addf(n, "trusted_proxies: %s is neither an address nor a CIDR range; write e.g. 10.0.0.7 or 172.16.0.0/12 (your load balancers' addresses)", p.show(n))
				continue
			}
			pfx = netip.PrefixFrom(addr, addr.BitLen())
		}
		out = append(out, pfx.Masked())
	}
	return out
}

// backOffice reads the back_office section (link_ttl_ms, retention_days) into c.
func (p *parser) backOffice(n *yaml.Node, c *Config) {
	bf := p.fields(p.mapping(n, "back_office"), "back_office", "link_ttl_ms", "retention_days")
	if ttl, ok := p.integer(bf, "link_ttl_ms", "back_office", " of milliseconds (604800000 means a week)"); ok {
		if ttl < 60_000 || ttl > 366*24*3600*1000 {
			p.addf(bf["link_ttl_ms"], "back_office: link_ttl_ms %d is outside 60000..31622400000 (a minute to a year); a support page or export link stays valid this long", ttl)
		}
		c.LinkTTLMS = ttl
	}
	if days, ok := p.integer(bf, "retention_days", "back_office", " of days (1825 means 5 years)"); ok {
		if days != 0 && (days < MinRetentionDays || days > 36_500) {
			p.addf(bf["retention_days"], "back_office: retention_days %d is neither 0 (forever) nor within %d..36500; your regulator sets it: Brazil's SPA/MF 1.207 asks for 5 years (1825)", days, MinRetentionDays)
		}
		c.RetentionDays = days
	}
}

// games reads the games list. It also returns the names of the games by id,
// which operators entries are checked against.
func (p *parser) games(f map[string]*yaml.Node) ([]Game, map[string]string) {
	gameNodes := p.list(f, "games", "top level")
	if len(gameNodes) == 0 {
		p.addf(f["games"], "games: no game is configured; add at least one under games: (see docs/config.md)")
	}
	var out []Game
	gameLine, gameName := map[string]int{}, map[string]string{}
	for i, n := range gameNodes {
		g, where, ok := p.game(n, i)
		if !ok {
			continue
		}
		if line, dup := gameLine[g.ID]; dup {
			p.addf(n, "%s is defined twice (lines %d and %d); give each game its own game_id or remove one", where, line, n.Line)
			continue
		}
		gameLine[g.ID], gameName[g.ID] = n.Line, strings.TrimPrefix(where, "game ")
		out = append(out, g)
	}
	return out, gameName
}

// operators reads the operators list; games maps the defined game ids to their
// names.
func (p *parser) operators(f map[string]*yaml.Node, games map[string]string) []Operator {
	opNodes := p.list(f, "operators", "top level")
	if len(opNodes) == 0 {
		p.addf(f["operators"], "operators: no operator is configured; add at least one under operators: (see docs/config.md)")
	}
	var out []Operator
	opLine := map[string]int{}
	for i, n := range opNodes {
		op, where, ok := p.operator(n, i, games)
		if !ok {
			continue
		}
		if line, dup := opLine[op.ID]; dup {
			p.addf(n, "%s is defined twice (lines %d and %d); give each operator its own id or remove one", where, line, n.Line)
			continue
		}
		opLine[op.ID] = n.Line
		out = append(out, op)
	}
	return out
}

// addressLimits reads the `address_limits` section; a key left out takes
// its default.
func (p *parser) addressLimits(n *yaml.Node) AddressLimits {
	const where = "address_limits"
	f := p.fields(p.mapping(n, where), where, "sessions_per_second", "sessions_burst", "streams_per_second", "streams_burst")
	l := DefaultAddressLimits
	for _, k := range []struct {
		key  string
		v    *int64
		max  int64
		what string
	}{
		{"sessions_per_second", &l.SessionsPerSecond, 100_000, "session creations a second per client address"},
		{"sessions_burst", &l.SessionsBurst, 1_000_000, "session creations at once per client address"},
		{"streams_per_second", &l.StreamsPerSecond, 100_000, "stream openings a second per client address"},
		{"streams_burst", &l.StreamsBurst, 1_000_000, "stream openings at once per client address"},
	} {
		v, ok := p.integer(f, k.key, where, " of "+k.what)
		if !ok {
			continue
		}
		if v < 1 || v > k.max {
			p.addf(f[k.key], "%s: %s %d is outside 1..%d (%s); leave it out for the default, %d", where, k.key, v, k.max, k.what, *k.v)
			continue
		}
		*k.v = v
	}
	return l
}

// fairness reads the fairness section: seed_key (required),
// seeding_window_ms, reveal_window_ms, beacon.
func (p *parser) fairness(n *yaml.Node) Fairness {
	const where = "fairness"
	out := Fairness{SeedingWindowMS: DefaultSeedingWindowMS, RevealWindowMS: DefaultRevealWindowMS}
	if n == nil {
		p.addf(nil, "fairness: the section is missing; add fairness: with seed_key: ${CRASHGAME_SEED_KEY}, a key of 64 hex digits (openssl rand -hex 32) that seals the hash chains' seeds (see docs/config.md)")
		return out
	}
	f := p.fields(p.mapping(n, where), where, "seed_key", "seeding_window_ms", "reveal_window_ms", "beacon")
	if v, vn := p.str(f, "seed_key", where); vn == nil || v == "" {
		p.addf(n, "fairness: seed_key is missing; set seed_key: ${CRASHGAME_SEED_KEY} with 64 hex digits (openssl rand -hex 32), the same on every replica, kept outside the database")
	} else if len(v) != 64 || strings.Trim(strings.ToLower(v), "0123456789abcdef") != "" {
		// The value is never shown, not even a part of it: it is a key.
		p.addf(vn, "fairness: seed_key%s is not 64 hex digits (it has %d characters; the value is not shown); make one with openssl rand -hex 32", p.variable(vn), len(v))
	} else {
		out.SeedKey = Secret(v)
	}
	if w, ok := p.integer(f, "seeding_window_ms", where, " of milliseconds (300000 means 5 minutes)"); ok {
		if w < 0 || w > 86_400_000 {
			p.addf(f["seeding_window_ms"], "fairness: seeding_window_ms %d is outside 0..86400000; operators contribute to a new chain's salt this long (300000, 5 minutes, is the default)", w)
		}
		out.SeedingWindowMS = w
	}
	if out.SeedingWindowMS == 0 {
		out.RevealWindowMS = 0 // no operator can commit, so none reveals
	}
	if w, ok := p.integer(f, "reveal_window_ms", where, " of milliseconds (120000 means 2 minutes)"); ok {
		switch {
		case w < 0 || w > 86_400_000:
			p.addf(f["reveal_window_ms"], "fairness: reveal_window_ms %d is outside 0..86400000; operators reveal the values they committed to this long after the seeding window (120000, 2 minutes, is the default)", w)
		case w == 0 && out.SeedingWindowMS != 0:
			p.addf(f["reveal_window_ms"], "fairness: reveal_window_ms is 0 but seeding_window_ms is %d: operators could commit but never reveal; 0 is allowed only with seeding_window_ms: 0", out.SeedingWindowMS)
		}
		out.RevealWindowMS = w
	}
	if bn := f["beacon"]; bn != nil {
		out.BeaconNetwork, out.BeaconURL = p.beacon(bn, where+".beacon")
	}
	return out
}

// beacon reads fairness.beacon: the network (quicknet) and the URL of one
// of its HTTP relays. The older form, a fixed value with its label, is
// refused with what to write instead: a value known before a chain exists
// does not stop the house from choosing the salt.
func (p *parser) beacon(n *yaml.Node, where string) (network, relay string) {
	pairs := p.mapping(n, where)
	for _, e := range pairs {
		if e.key.Value == "label" || e.key.Value == "value" {
			p.addf(e.key, "%s: a fixed beacon value (label, value) is no longer taken: it is known before a chain exists, so it does not stop the house from choosing the salt. "+
				"Name the live beacon instead, whose round after each chain's reveal window every new salt takes: beacon: {network: quicknet, url: https://api.drand.sh} (docs/fairness.md); chains published before keep the value they were given", where)
			return "", ""
		}
	}
	f := p.fields(pairs, where, "network", "url")
	network, nn := p.str(f, "network", where)
	relay, un := p.str(f, "url", where)
	switch {
	case nn == nil || network == "":
		p.addf(n, "%s: network is missing; the known one is quicknet (drand's League of Entropy network, a round every 3 seconds)", where)
	case network != "quicknet":
		p.addf(nn, "%s: network %s is not known; the known one is quicknet", where, p.show(nn))
	}
	switch {
	case un == nil || relay == "":
		p.addf(n, "%s: url is missing; name one of the network's HTTP relays, e.g. url: https://api.drand.sh (or https://drand.cloudflare.com)", where)
	case !validRelayURL(relay):
		p.addf(un, "%s: url must be an absolute http or https URL with no query, fragment or user information, e.g. https://api.drand.sh (the value is not shown)", where)
	}
	return network, relay
}

// validRelayURL reports whether s is an absolute http or https URL with a
// host and no query, fragment or user information.
func validRelayURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" &&
		u.RawQuery == "" && u.Fragment == "" && u.User == nil
}

// cluster reads the cluster section: replica, nats, lease_ttl_ms,
// lease_renew_ms, drain_ms.
func (p *parser) cluster(n *yaml.Node, db DSN) *Cluster {
	const where = "cluster"
	f := p.fields(p.mapping(n, where), where, "replica", "nats", "lease_ttl_ms", "lease_renew_ms", "drain_ms")
	c := &Cluster{LeaseTTLMS: DefaultLeaseTTLMS, LeaseRenewMS: DefaultLeaseRenewMS, DrainMS: DefaultDrainMS}
	if !strings.HasPrefix(string(db), "postgres://") && !strings.HasPrefix(string(db), "postgresql://") {
		p.addf(n, "cluster: a cluster needs PostgreSQL, which every replica shares; set database: postgres://USER:PASSWORD@HOST:5432/DB, or remove the cluster section to run one process")
	}
	if v, vn := p.str(f, "replica", where); vn != nil && v != "" {
		if strings.ContainsFunc(v, func(r rune) bool { return r <= ' ' || r > '~' }) || len(v) > 64 {
			p.addf(vn, "cluster: replica %s must be 1 to 64 printable ASCII characters without spaces, e.g. game-1", p.show(vn))
		}
		c.Replica = v
	} else if host, err := os.Hostname(); err == nil && host != "" {
		c.Replica = host
	} else {
		p.addf(n, "cluster: replica is missing and the host has no name; set replica: game-1 (each replica its own)")
	}
	v, vn := p.str(f, "nats", where)
	for _, raw := range strings.Split(v, ",") {
		raw = strings.TrimSpace(raw)
		if raw == "" {
			continue
		}
		if u, err := url.Parse(raw); err != nil || (u.Scheme != "nats" && u.Scheme != "tls") || u.Host == "" {
			p.addf(vn, "cluster: nats holds %q, which is not nats://HOST:PORT or tls://HOST:PORT; list every NATS server, comma-separated", redactUserinfo(raw))
			continue
		}
		c.NATS = append(c.NATS, raw)
	}
	if len(c.NATS) == 0 {
		p.addf(n, "cluster: nats is missing; list the NATS servers the replicas share, e.g. nats: nats://nats-1:4222,nats://nats-2:4222")
	}
	if ttl, ok := p.integer(f, "lease_ttl_ms", where, " of milliseconds (2000 means 2 s)"); ok {
		if ttl < 200 || ttl > 60000 {
			p.addf(f["lease_ttl_ms"], "cluster: lease_ttl_ms %d is outside 200..60000; a dead leader holds its tables this long, 2000 is the default", ttl)
		}
		c.LeaseTTLMS = ttl
	}
	if renew, ok := p.integer(f, "lease_renew_ms", where, " of milliseconds (500 means 0.5 s)"); ok {
		c.LeaseRenewMS = renew
	}
	if c.LeaseRenewMS < 50 || c.LeaseRenewMS*2 > c.LeaseTTLMS {
		p.addf(f["lease_renew_ms"], "cluster: lease_renew_ms %d must be at least 50 and at most half of lease_ttl_ms (%d), so that one lost renewal does not lose the lease", c.LeaseRenewMS, c.LeaseTTLMS)
	}
	if drain, ok := p.integer(f, "drain_ms", where, " of milliseconds (2500 means 2.5 s)"); ok {
		if drain < 0 || drain > 30000 {
			p.addf(f["drain_ms"], "cluster: drain_ms %d is outside 0..30000; set it to the time your load balancer takes to stop sending to a replica whose /readyz fails (2500 for deploy/haproxy.cfg)", drain)
		}
		c.DrainMS = drain
	}
	return c
}

// redactUserinfo shows a URL without its user information.
func redactUserinfo(raw string) string {
	if at := strings.LastIndex(raw, "@"); at >= 0 {
		if scheme := strings.Index(raw, "://"); scheme >= 0 && scheme < at {
			return raw[:scheme+3] + "[redacted]@" + raw[at+1:]
		}
		return "[redacted]@" + raw[at+1:]
	}
	return raw
}

func validPort(s string) bool {
	n, err := strconv.Atoi(s)
	return err == nil && n >= 0 && n <= 65535
}

// entryName names a list entry by its id key for messages, before its keys are
// checked: `game "crash"`, or `games entry 2` when it has no id. An id that came
// from the environment is shown as its ${NAME} text.
func (p *parser) entryName(pairs []pair, key, kind, list string, i int) string {
	for _, e := range pairs {
		if v := deref(e.val); e.key.Value == key && v.Kind == yaml.ScalarNode && v.Value != "" {
			return kind + " " + p.show(v)
		}
	}
	return fmt.Sprintf("%s entry %d", list, i+1)
}

// game reads one games entry; ok is false when it has no usable id.
func (p *parser) game(n *yaml.Node, i int) (g Game, where string, ok bool) {
	pairs := p.mapping(n, fmt.Sprintf("games entry %d", i+1))
	where = p.entryName(pairs, "game_id", "game", "games", i)
	f := p.fields(pairs, where, "game_id", "name", "studio", "category", "image_url",
		"rtp_bp", "max_multiplier", "betting_ms", "pause_ms", "demo", "freebet", "mobile", "desktop")

	g = Game{
		RTPBasisPoints: DefaultRTPBasisPoints,
		MaxMultiplier:  DefaultMaxMultiplier,
		BettingMS:      DefaultBettingMS,
		PauseMS:        DefaultPauseMS,
	}
	var idNode *yaml.Node
	g.ID, idNode = p.str(f, "game_id", where)
	switch {
	case g.ID == "":
		p.addf(orNode(idNode, n), "%s: game_id is missing; give the game an id such as crash", where)
	case !idPattern.MatchString(g.ID):
		p.addf(idNode, "%s: game_id must be %s", where, idRule)
	}

	// Rule GAME-8: name, studio and category are required in every catalogue entry.
	for _, k := range []struct {
		key string
		dst *string
	}{{"name", &g.Name}, {"studio", &g.Studio}, {"category", &g.Category}} {
		v, vn := p.str(f, k.key, where)
		if strings.TrimSpace(v) == "" {
			p.addf(orNode(vn, n), "%s: %s is missing; it is shown in the catalogue (e.g. %s)", where, k.key, exampleFor(k.key))
		}
		*k.dst = v
	}
	if v, vn := p.str(f, "image_url", where); v != "" {
		if _, why := checkURL(v); why != "" {
			p.addf(vn, "%s: image_url %s %s; write a full https:// address or remove the key", where, p.show(vn), why)
		}
		g.ImageURL = v
	}

	if v, ok := p.integer(f, "rtp_bp", where, " of basis points (9700 means 97.00 %)"); ok {
		if v < 1 || v > 10000 {
			p.addf(f["rtp_bp"], "%s: rtp_bp %d is outside 1..10000 (basis points: 9700 means 97.00 %%); set e.g. rtp_bp: 9700", where, v)
		}
		g.RTPBasisPoints = v
	}
	if v, ok := p.integer(f, "max_multiplier", where, " in hundredths (100000 means 1000.00x)"); ok {
		if v < 101 {
			p.addf(f["max_multiplier"], "%s: max_multiplier %d is below 101 (hundredths: 101 means 1.01x); set e.g. max_multiplier: 100000 for 1000.00x", where, v)
		}
		g.MaxMultiplier = v
	}
	for _, k := range []struct {
		key string
		dst *int64
	}{{"betting_ms", &g.BettingMS}, {"pause_ms", &g.PauseMS}} {
		if v, ok := p.integer(f, k.key, where, " of milliseconds"); ok {
			if v <= 0 {
				p.addf(f[k.key], "%s: %s %d must be above 0 milliseconds; remove the key for the default", where, k.key, v)
			}
			*k.dst = v
		}
	}
	g.Demo = p.boolean(f, "demo", where, true)
	g.Freebet = p.boolean(f, "freebet", where, true)
	g.Mobile = p.boolean(f, "mobile", where, true)
	g.Desktop = p.boolean(f, "desktop", where, true)
	return g, where, idPattern.MatchString(g.ID)
}

func exampleFor(key string) string {
	switch key {
	case "name":
		return "name: Crash"
	case "studio":
		return "studio: Example Studio"
	default:
		return "category: crash"
	}
}

func orNode(n, fallback *yaml.Node) *yaml.Node {
	if n != nil {
		return n
	}
	return fallback
}

// operator reads one operators entry; ok is false when it has no usable id. games
// maps the defined game ids to their names for messages.
func (p *parser) operator(n *yaml.Node, i int, games map[string]string) (op Operator, where string, ok bool) {
	pairs := p.mapping(n, fmt.Sprintf("operators entry %d", i+1))
	where = p.entryName(pairs, "operator", "operator", "operators", i)
	f := p.fields(pairs, where, "operator", "enabled", "secret", "api_key", "wallet_url",
		"games", "demo", "zero_win", "legacy_launch", "currencies")

	var idNode *yaml.Node
	op.ID, idNode = p.str(f, "operator", where)
	stem := envStem(op.ID)
	if _, env := p.expanded[idNode]; env {
		stem = "OPERATOR"
	}
	switch {
	case op.ID == "":
		p.addf(orNode(idNode, n), "%s: operator is missing; give the operator the id it sends in its requests, e.g. operator: acme", where)
	case !idPattern.MatchString(op.ID):
		p.addf(idNode, "%s: operator id must be %s", where, idRule)
	}
	op.Enabled = p.boolean(f, "enabled", where, true)
	op.Demo = p.boolean(f, "demo", where, true)
	op.ZeroWin = p.boolean(f, "zero_win", where, false)
	op.LegacyLaunch = p.boolean(f, "legacy_launch", where, true)

	wallet := p.credentials(f, n, where, stem, &op)
	op.Games = p.operatorGames(f, n, where, games)
	op.Currencies = p.currencies(f, where)
	if wallet != "" && len(op.Currencies) == 0 && f["currencies"] == nil {
		p.addf(n, "%s: has a wallet but no currencies; add e.g. currencies: { BRL: { min_bet: 100, max_bet: 100000, max_win: 10000000 } }", where)
	}
	return op, where, idPattern.MatchString(op.ID)
}

// credentials reads an operators entry's secret, api_key and wallet_url into op
// and checks that they go together: a wallet needs both of the others. stem
// prefixes the environment variables that messages suggest. It returns
// wallet_url as written, "" when absent.
func (p *parser) credentials(f map[string]*yaml.Node, n *yaml.Node, where, stem string, op *Operator) string {
	secret, secretNode := p.str(f, "secret", where)
	apiKey, apiKeyNode := p.str(f, "api_key", where)
	wallet, walletNode := p.str(f, "wallet_url", where)

	if secretNode != nil {
		p.checkSecret(secret, secretNode, where, stem)
		op.Secret = Secret(secret)
	}
	if apiKeyNode != nil {
		p.checkAPIKey(apiKey, apiKeyNode, where, stem)
		op.APIKey = Secret(apiKey)
	}
	if walletNode != nil {
		op.WalletURL = p.walletURL(wallet, walletNode, where)
	}
	switch {
	case wallet != "" && secret == "":
		// Rule AUTH-7: no operator mode without a secret.
		p.addf(orNode(walletNode, n), "%s: wallet_url is set but secret is missing; a real-money operator must be signed: add secret: ${%s_SECRET} (or remove wallet_url for demo only)", where, stem)
	}
	switch {
	case wallet != "" && apiKey == "" && apiKeyNode == nil:
		p.addf(orNode(walletNode, n), "%s: wallet_url is set but api_key is missing; add api_key: ${%s_API_KEY} with the Bearer key the operator issued", where, stem)
	case wallet == "" && walletNode == nil && apiKey != "":
		p.addf(apiKeyNode, "%s: api_key is set but wallet_url is missing; add the wallet_url the key is for, or remove api_key", where)
	}
	if walletNode == nil && !op.Demo {
		p.addf(n, "%s: has no wallet_url, so it can only launch demo games, but demo is false; add wallet_url or set demo: true", where)
	}
	return wallet
}

// checkSecret checks an operator's HMAC secret, as written at node.
func (p *parser) checkSecret(secret string, node *yaml.Node, where, stem string) {
	switch {
	case secret == "":
		p.addf(node, "%s: secret is empty; set it (secret: ${%s_SECRET}) or remove the key for an unsigned demo-only operator", where, stem)
	case strings.TrimSpace(secret) != secret:
		p.addf(node, "%s: secret starts or ends with white space; remove it (the HMAC uses every byte)", where)
	case len(secret) < MinSecretLen:
		p.addf(node, "%s: secret is shorter than %d bytes; use a long random value, e.g. from openssl rand -hex 32", where, MinSecretLen)
	}
}

// checkAPIKey checks the Bearer key an operator issued, as written at node.
func (p *parser) checkAPIKey(apiKey string, node *yaml.Node, where, stem string) {
	switch {
	case apiKey == "":
		p.addf(node, "%s: api_key is empty; set the key the operator issued (api_key: ${%s_API_KEY}) or remove the key", where, stem)
	case strings.TrimSpace(apiKey) != apiKey || strings.ContainsFunc(apiKey, isControl):
		p.addf(node, "%s: api_key has white space at an end or a control character, which cannot go in an Authorization header; remove it", where)
	}
}

// walletURL checks an operator's wallet_url, as written at node, and returns it
// normalised, or "" after recording a problem.
func (p *parser) walletURL(wallet string, node *yaml.Node, where string) string {
	switch u, why := checkURL(wallet); {
	case wallet == "":
		p.addf(node, "%s: wallet_url is empty; set the operator's wallet address or remove the key for a demo-only operator", where)
	case why != "":
		p.addf(node, "%s: wallet_url %s %s; write it like https://wallet.example.com/api", where, p.show(node), why)
	case u.Scheme == "http" && !isLoopback(u.Hostname()):
		// Rule AUTH-21
		p.addf(node, "%s: wallet_url %s uses http:// outside loopback; the API key and the players' money would cross the network in clear: use https:// (http:// is accepted only for localhost, 127.0.0.0/8 and ::1)", where, p.show(node))
	default:
		return normaliseURL(u, wallet)
	}
	return ""
}

// operatorGames reads the game ids an operators entry lists, each defined under
// games: (games maps the defined ids to their names) and listed once.
func (p *parser) operatorGames(f map[string]*yaml.Node, n *yaml.Node, where string, games map[string]string) []string {
	var out []string
	seen := map[string]bool{}
	gameNodes := p.list(f, "games", where)
	if len(gameNodes) == 0 {
		p.addf(orNode(f["games"], n), "%s: no games; list the game ids it may launch, e.g. games: [crash]", where)
	}
	for _, gn := range gameNodes {
		id := gn.Value
		switch {
		case gn.Kind != yaml.ScalarNode || id == "":
			p.addf(gn, "%s: games must list game ids", where)
		case seen[id]:
			p.addf(gn, "%s: game %s is listed twice; keep one", where, p.show(gn))
		case games[id] == "":
			p.addf(gn, "%s: game %s is not defined under games:; define it there or fix the id (defined: %s)", where, p.show(gn), strings.Join(sortedValues(games), ", "))
		default:
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// currencies reads an operators entry's currencies mapping, sorted by code.
func (p *parser) currencies(f map[string]*yaml.Node, where string) []Currency {
	var out []Currency
	// Rule GEN-8: the currencies are installation configuration.
	for _, e := range p.mapping(f["currencies"], where+": currencies") {
		code := e.key.Value
		cwhere := fmt.Sprintf("%s currency %s", where, code)
		if !currencyPattern.MatchString(code) {
			p.addf(e.key, "%s: currency %q is not three upper-case letters; write the ISO 4217 code, e.g. BRL", where, code)
			continue
		}
		if slices.ContainsFunc(out, func(c Currency) bool { return c.Code == code }) {
			p.addf(e.key, "%s: currency %s appears twice; keep one", where, code)
			continue
		}
		out = append(out, Currency{Code: code, Limits: p.limits(e.val, cwhere)})
	}
	slices.SortFunc(out, func(a, b Currency) int { return strings.Compare(a.Code, b.Code) })
	return out
}

// limits reads one currency's limits. Each may be omitted (unknown, LIM-11).
func (p *parser) limits(n *yaml.Node, where string) Limits {
	f := p.fields(p.mapping(n, where), where, "min_bet", "max_bet", "max_win")
	const hint = " of cents (150 means 1.50)"
	var l Limits
	read := func(key string) *int64 {
		v, ok := p.integer(f, key, where, hint)
		if !ok {
			return nil
		}
		switch {
		case v < 0:
			// Rule GEN-6
			p.addf(f[key], "%s: %s %d is negative; a limit is at least 1 cent: fix it, or remove the key if the limit is unknown", where, key, v)
			return nil
		case v == 0:
			// Rule LIM-11: an unknown limit is omitted, never zero.
			p.addf(f[key], "%s: %s is 0; a limit is at least 1 cent: remove the key if the limit is unknown (it is then left out of the catalogue)", where, key)
			return nil
		}
		return &v
	}
	l.MinBet, l.MaxBet, l.MaxWin = read("min_bet"), read("max_bet"), read("max_win")
	if l.MinBet != nil && l.MaxBet != nil && *l.MinBet > *l.MaxBet {
		p.addf(f["min_bet"], "%s: min_bet %d is above max_bet %d; swap them or fix one", where, *l.MinBet, *l.MaxBet)
	}
	if l.MaxWin != nil {
		if l.MaxBet != nil && *l.MaxWin < *l.MaxBet {
			p.addf(f["max_win"], "%s: max_win %d is below max_bet %d, so a winning bet could pay less than its stake; raise max_win", where, *l.MaxWin, *l.MaxBet)
		} else if l.MaxBet == nil && l.MinBet != nil && *l.MaxWin < *l.MinBet {
			p.addf(f["max_win"], "%s: max_win %d is below min_bet %d, so a winning bet could pay less than its stake; raise max_win", where, *l.MaxWin, *l.MinBet)
		}
	}
	return l
}

func sortedValues(m map[string]string) []string {
	vals := make([]string, 0, len(m))
	for _, v := range m {
		vals = append(vals, v)
	}
	slices.Sort(vals)
	return vals
}

// envStem suggests an environment variable prefix for an operator id.
func envStem(id string) string {
	var b strings.Builder
	for _, r := range strings.ToUpper(id) {
		if (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 {
		return "OPERATOR"
	}
	return b.String()
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

// checkURL accepts an absolute http:// or https:// URL with a host and without
// credentials, query or fragment; otherwise it says why not.
func checkURL(raw string) (*url.URL, string) {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return nil, "is not a valid URL"
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, "is not an absolute http:// or https:// URL"
	case u.Opaque != "" || u.Host == "" || u.Hostname() == "":
		return nil, "has no host"
	case u.User != nil:
		return nil, "holds user:password@; credentials do not belong in a URL"
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(raw, "#"):
		return nil, "has a query or fragment (? or #); paths are appended to it"
	}
	return u, ""
}

// normaliseURL returns the URL as written, lower-case scheme, without trailing
// slashes.
func normaliseURL(u *url.URL, raw string) string {
	rest := raw[strings.Index(raw, ":"):]
	return strings.TrimRight(u.Scheme+rest, "/")
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func checkDatabase(v string) string {
	u, err := url.Parse(v)
	switch {
	case v == "":
		return "is empty"
	case err != nil:
		return "is not a valid URL"
	case u.Scheme == "sqlite":
		if u.Host == "" && u.Path == "" && u.Opaque == "" {
			return "names no file"
		}
	case u.Scheme == "postgres" || u.Scheme == "postgresql":
		if u.Host == "" {
			return "names no host"
		}
	default:
		return "is neither sqlite:// nor postgres://"
	}
	return ""
}
