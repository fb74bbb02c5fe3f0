// Package docs serves the published documents of api/ (the OpenAPI documents and
// the stream's AsyncAPI document) at /openapi/{name},
// each as the committed YAML and as JSON converted from it once at start-up.
// It owns nothing else: it must never rewrite what a document says.
package docs

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// Document is one published document in both of its encodings.
type Document struct {
	Name string // file name without extension, e.g. "game.v1"
	YAML []byte
	JSON []byte
}

// Handler serves the documents found in a file system of *.yaml files.
type Handler struct {
	docs  map[string]Document
	index []byte
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
	return h, nil
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
		_, _ = w.Write(doc.JSON)
		return
	}
	w.Header().Set("Content-Type", "application/yaml")
	_, _ = w.Write(doc.YAML)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"status": "error", "error_code": "NOT_FOUND", "error_message": msg})
}

// toJSON converts a YAML document to JSON, keeping integers as integers.
func toJSON(raw []byte) ([]byte, error) {
	var v any
	if err := yaml.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	return json.MarshalIndent(jsonable(v), "", "  ")
}

// jsonable turns the maps that yaml.v3 may decode with non-string keys into
// JSON objects; OpenAPI documents only have string keys (status codes are quoted
// or decoded as ints, both become strings here). It only rewrites keys, so it
// cannot fail; json.MarshalIndent reports a value JSON cannot hold.
func jsonable(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			t[k] = jsonable(e)
		}
		return t
	case map[any]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			m[fmt.Sprint(k)] = jsonable(e)
		}
		return m
	case []any:
		for i, e := range t {
			t[i] = jsonable(e)
		}
		return t
	default:
		return v
	}
}
