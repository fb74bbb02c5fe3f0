package docs

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"net/http"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

var (
	//go:embed reference.html
	pageTemplates string
	//go:embed reference.css
	stylesheet []byte

	templates = template.Must(template.New("reference").Parse(pageTemplates))
)

// contentSecurityPolicy lets a page load its stylesheet from the game and
// nothing else: no script, no image, no font, from anywhere.
const contentSecurityPolicy = "default-src 'none'; style-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Reference serves the documents rendered as HTML pages, at /docs/: an index
// at /docs/, one page per document at /docs/{name} (every operation with its
// parameters, bodies, responses, error codes and examples, then every
// schema), and the pages' stylesheet. The pages are rendered once, by New.
type Reference struct {
	index []byte
	pages map[string][]byte
}

// newReference renders the pages of every document of docs.
func newReference(docs map[string]Document) (*Reference, error) {
	b := &builder{specs: make(map[string]*spec, len(docs))}
	names := make([]string, 0, len(docs))
	for name, d := range docs {
		var root yaml.Node
		if err := yaml.Unmarshal(d.YAML, &root); err != nil {
			return nil, fmt.Errorf("docs: parse %s.yaml: %w", name, err)
		}
		b.specs[name+".yaml"] = &spec{name: name, file: name + ".yaml", root: deref(&root)}
		names = append(names, name)
	}
	// The OpenAPI documents first, then the AsyncAPI ones; by name within each.
	slices.SortFunc(names, func(a, c string) int {
		if x, y := b.specs[a+".yaml"].asyncAPI(), b.specs[c+".yaml"].asyncAPI(); x != y {
			if x {
				return 1
			}
			return -1
		}
		return strings.Compare(a, c)
	})
	ref := &Reference{pages: make(map[string][]byte, len(names))}
	var all []*page
	for _, name := range names {
		s := b.specs[name+".yaml"]
		var (
			p   *page
			err error
		)
		switch {
		case s.asyncAPI():
			p, err = b.asyncAPIPage(s)
		case text(s.root, "openapi") != "":
			p, err = b.openAPIPage(s)
		default:
			continue // neither kind: served at /openapi/ only
		}
		if err != nil {
			return nil, fmt.Errorf("docs: render %s.yaml: %w", name, err)
		}
		var out bytes.Buffer
		if err := templates.ExecuteTemplate(&out, "page", p); err != nil {
			return nil, fmt.Errorf("docs: render %s.yaml: %w", name, err)
		}
		ref.pages[name] = out.Bytes()
		all = append(all, p)
	}
	var out bytes.Buffer
	if err := templates.ExecuteTemplate(&out, "index", all); err != nil {
		return nil, fmt.Errorf("docs: render the index: %w", err)
	}
	ref.index = out.Bytes()
	return ref, nil
}

// ServeHTTP answers GET /docs/ (the index), /docs/{name} and
// /docs/reference.css.
func (ref *Reference) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	name, ok := strings.CutPrefix(r.URL.Path, "/docs/")
	if !ok {
		// /docs: relative, so that it also holds behind a proxy that serves
		// the game under a path prefix.
		w.Header().Set("Location", "docs/")
		w.WriteHeader(http.StatusMovedPermanently)
		return
	}
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	var body []byte
	switch name {
	case "":
		body = ref.index
	case "reference.css":
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
		_, _ = w.Write(stylesheet)
		return
	default:
		body, ok = ref.pages[name]
		if !ok {
			http.Error(w, "no document named "+name+"; see /docs/ for the list", http.StatusNotFound)
			return
		}
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", contentSecurityPolicy)
	_, _ = w.Write(body)
}
