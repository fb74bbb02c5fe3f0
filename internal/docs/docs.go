// Package docs serves the published documents of api/ (the OpenAPI documents and
// the stream's AsyncAPI document) in two ways. At /openapi/{name} each is the
// committed YAML (served as text/plain, so that a browser shows it) or JSON
// converted from it once at start-up, in the document's key order. At /docs/
// (Reference) they are an API reference rendered on the server: one HTML page
// per document with its operations, channels, messages, schemas, examples and
// error codes, styled by a stylesheet embedded here, with no script and
// nothing fetched from anywhere but the game.
//
// It owns the presentation only. It must never rewrite what a document says:
// every page shows the document's own words, values and examples, in its
// order, and adds, drops or changes none of them; a document it cannot read
// stops the server at start-up rather than being shown in part.
package docs

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"sort"
	"strings"
)

// Document is one published document in both of its encodings.
type Document struct {
	Name string // file name without extension, e.g. "game.v1"
	YAML []byte
	JSON []byte
}

// Handler serves the documents found in a file system of *.yaml files.
type Handler struct {
	docs      map[string]Document
	index     []byte
	reference *Reference
}

// New reads every *.yaml file at the root of fsys (the OpenAPI *.v1.yaml
// documents and the stream's AsyncAPI document) and prepares its JSON form.
// A document that does not parse is an error: the server must not start with it.
func New(fsys fs.FS) (*Handler, error) {
	names, err := fs.Glob(fsys, "*.yaml")
	if err != nil {
		return nil, fmt.Errorf("docs: list documents: %w", err)
	}
	h := &Handler{docs: make(map[string]Document, len(names))}
	var listed []string
	for _, file := range names {
		raw, err := fs.ReadFile(fsys, file)
		if err != nil {
			return nil, fmt.Errorf("docs: read %s: %w", file, err)
		}
		js, err := toJSON(raw)
		if err != nil {
			return nil, fmt.Errorf("docs: convert %s to JSON: %w", file, err)
		}
		name := strings.TrimSuffix(file, ".yaml")
		h.docs[name] = Document{Name: name, YAML: raw, JSON: js}
		listed = append(listed, name+".yaml", name+".json")
	}
	sort.Strings(listed)
	h.index, err = json.Marshal(map[string][]string{"documents": listed})
	if err != nil {
		return nil, fmt.Errorf("docs: index: %w", err)
	}
	if h.reference, err = newReference(h.docs); err != nil {
		return nil, err
	}
	return h, nil
}

// Reference returns the handler of /docs/: the same documents rendered as
// HTML pages.
func (h *Handler) Reference() *Reference {
	return h.reference
}

// Names lists the documents without extension, sorted.
func (h *Handler) Names() []string {
	out := make([]string, 0, len(h.docs))
	for n := range h.docs {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// ServeHTTP answers GET /openapi/ (an index) and GET /openapi/{name}.yaml|.json.
// A document asked for without an extension is served as YAML.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeError(w, http.StatusMethodNotAllowed, "method not allowed")
		return
	}
	file := path.Base(r.URL.Path)
	if file == "openapi" || file == "/" || file == "." {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(h.index)
		return
	}
	name, format := file, "yaml"
	for _, ext := range []string{".json", ".yaml", ".yml"} {
		if strings.HasSuffix(file, ext) {
			name, format = strings.TrimSuffix(file, ext), strings.TrimPrefix(ext, ".")
			break
		}
	}
	doc, ok := h.docs[name]
	if !ok {
		writeError(w, http.StatusNotFound, "no document named "+file+"; see /openapi/ for the list")
		return
	}
	w.Header().Set("Cache-Control", "no-cache")
	if format == "json" {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		_, _ = w.Write(doc.JSON)
		return
	}
	// text/plain, not application/yaml: a browser shows it instead of
	// downloading it, and curl and the programs read the same bytes.
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write(doc.YAML)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"status": "error", "error_code": "NOT_FOUND", "error_message": msg})
}
