package api_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/crashstudio/crashgame/api"
)

// documentFiles lists every published OpenAPI document of this folder: every
// *.yaml except the oapi-codegen configurations (*.codegen.yaml) and the
// stream's AsyncAPI document.
func gwDocumentFiles(t *testing.T) []string {
	t.Helper()
	all, err := filepath.Glob("*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var docs []string
	for _, name := range all {
		if strings.HasSuffix(name, ".codegen.yaml") || name == api.StreamDocument {
			continue
		}
		docs = append(docs, name)
	}
	if len(docs) == 0 {
		t.Fatal("no OpenAPI document found in api/")
	}
	return docs
}

type gwLoaded struct {
	doc *openapi3.T
	err error
}

var gwDocCache sync.Map // file name -> *sync.OnceValue[gwLoaded]

// loadDocument loads and resolves one document once per test binary. The
// returned document is shared and must be treated as read-only.
func gwLoadDocument(t *testing.T, name string) *openapi3.T {
	t.Helper()
	once, _ := gwDocCache.LoadOrStore(name, sync.OnceValue(func() gwLoaded {
		loader := openapi3.NewLoader()
		doc, err := loader.LoadFromFile(name)
		return gwLoaded{doc: doc, err: err}
	}))
	l := once.(func() gwLoaded)()
	if l.err != nil {
		t.Fatalf("%s: load: %v", name, l.err)
	}
	return l.doc
}

// Every document of api/ loads, is OpenAPI 3.0.3, validates, and describes
// itself (info.version and info.description).
func TestDocumentsLoadAndValidate(t *testing.T) {
	t.Parallel()
	for _, name := range gwDocumentFiles(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			doc := gwLoadDocument(t, name)
			if doc.OpenAPI != "3.0.3" {
				t.Errorf("openapi = %q, want 3.0.3", doc.OpenAPI)
			}
			if err := doc.Validate(context.Background()); err != nil {
				t.Errorf("validate: %v", err)
			}
			if doc.Info == nil || doc.Info.Version == "" || doc.Info.Description == "" {
				t.Errorf("info must carry a version and a description")
			}
		})
	}
}

// gwExampleCase is one example value found in a document and the schema it must
// satisfy.
type gwExampleCase struct {
	where  string
	schema *openapi3.SchemaRef
	value  any
}

type gwExampleWalker struct {
	cases []gwExampleCase
	// bare lists the request bodies and responses whose JSON content carries
	// no example at all.
	bare []string
}

func gwSortedKeys[M ~map[string]V, V any](m M) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// schema walks one schema, collecting its own example and those of the
// schemas it contains inline. A $ref below the root is not followed: the
// referenced component is walked on its own.
func (w *gwExampleWalker) schema(where string, ref *openapi3.SchemaRef, root bool) {
	if ref == nil || ref.Value == nil || (ref.Ref != "" && !root) {
		return
	}
	s := ref.Value
	if s.Example != nil {
		w.cases = append(w.cases, gwExampleCase{where: where + ".example", schema: ref, value: s.Example})
	}
	for _, name := range gwSortedKeys(s.Properties) {
		w.schema(where+".properties."+name, s.Properties[name], false)
	}
	w.schema(where+".items", s.Items, false)
	w.schema(where+".not", s.Not, false)
	w.schema(where+".additionalProperties", s.AdditionalProperties.Schema, false)
	for kind, list := range map[string]openapi3.SchemaRefs{"allOf": s.AllOf, "oneOf": s.OneOf, "anyOf": s.AnyOf} {
		for i, sub := range list {
			w.schema(where+"."+kind+"["+strconv.Itoa(i)+"]", sub, false)
		}
	}
}

func (w *gwExampleWalker) examples(where string, schema *openapi3.SchemaRef, example any, examples openapi3.Examples) int {
	n := 0
	if example != nil {
		w.cases = append(w.cases, gwExampleCase{where: where + ".example", schema: schema, value: example})
		n++
	}
	for _, name := range gwSortedKeys(examples) {
		ex := examples[name]
		if ex == nil || ex.Value == nil {
			continue
		}
		w.cases = append(w.cases, gwExampleCase{where: where + ".examples." + name, schema: schema, value: ex.Value.Value})
		n++
	}
	return n
}

func (w *gwExampleWalker) content(where string, content openapi3.Content, demand bool) {
	for _, mime := range gwSortedKeys(content) {
		mt := content[mime]
		at := where + ".content." + mime
		n := w.examples(at, mt.Schema, mt.Example, mt.Examples)
		if demand && n == 0 && strings.Contains(mime, "json") {
			w.bare = append(w.bare, at)
		}
		w.schema(at+".schema", mt.Schema, false)
	}
}

func (w *gwExampleWalker) parameter(where string, p *openapi3.Parameter) {
	if p == nil {
		return
	}
	at := where + "." + p.In + "." + p.Name
	w.examples(at, p.Schema, p.Example, p.Examples)
	w.schema(at+".schema", p.Schema, false)
	w.content(at, p.Content, false)
}

func (w *gwExampleWalker) response(where string, r *openapi3.Response) {
	if r == nil {
		return
	}
	w.content(where, r.Content, true)
	for _, name := range gwSortedKeys(r.Headers) {
		if h := r.Headers[name]; h != nil && h.Value != nil {
			w.parameter(where+".headers", &h.Value.Parameter)
		}
	}
}

// walkExamples collects every example of a document: components (schemas,
// parameters, headers, request bodies, responses) and every path's
// parameters, request bodies and responses.
func gwWalkExamples(doc *openapi3.T) *gwExampleWalker {
	w := &gwExampleWalker{}
	if c := doc.Components; c != nil {
		for _, name := range gwSortedKeys(c.Schemas) {
			w.schema("components.schemas."+name, c.Schemas[name], true)
		}
		for _, name := range gwSortedKeys(c.Parameters) {
			w.parameter("components.parameters."+name, c.Parameters[name].Value)
		}
		for _, name := range gwSortedKeys(c.Headers) {
			if h := c.Headers[name]; h.Value != nil {
				w.parameter("components.headers."+name, &h.Value.Parameter)
			}
		}
		for _, name := range gwSortedKeys(c.RequestBodies) {
			if rb := c.RequestBodies[name]; rb.Value != nil {
				w.content("components.requestBodies."+name, rb.Value.Content, true)
			}
		}
		for _, name := range gwSortedKeys(c.Responses) {
			w.response("components.responses."+name, c.Responses[name].Value)
		}
	}
	paths := doc.Paths.Map()
	for _, path := range gwSortedKeys(paths) {
		item := paths[path]
		for _, p := range item.Parameters {
			if p.Ref == "" {
				w.parameter("paths."+path+".parameters", p.Value)
			}
		}
		ops := item.Operations()
		for _, method := range gwSortedKeys(ops) {
			op := ops[method]
			at := "paths." + path + "." + strings.ToLower(method)
			for _, p := range op.Parameters {
				if p.Ref == "" {
					w.parameter(at+".parameters", p.Value)
				}
			}
			if op.RequestBody != nil && op.RequestBody.Ref == "" && op.RequestBody.Value != nil {
				w.content(at+".requestBody", op.RequestBody.Value.Content, true)
			}
			responses := op.Responses.Map()
			for _, status := range gwSortedKeys(responses) {
				if r := responses[status]; r.Ref == "" {
					w.response(at+".responses."+status, r.Value)
				}
			}
		}
	}
	return w
}

// jsonValue turns a value decoded from YAML into the plain JSON shapes that
// the schema validator expects (map[string]any, []any, float64, ...).
func gwJSONValue(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal example: %v", err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("unmarshal example: %v", err)
	}
	return out
}

// Every example and every entry of every examples map, wherever it sits in
// any document of api/, validates against the schema it illustrates.
func TestDocumentExamplesValidate(t *testing.T) {
	t.Parallel()
	for _, name := range gwDocumentFiles(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			doc := gwLoadDocument(t, name)
			w := gwWalkExamples(doc)
			if len(w.cases) == 0 {
				t.Fatal("no example found")
			}
			for _, c := range w.cases {
				t.Run(c.where, func(t *testing.T) {
					t.Parallel()
					if c.schema == nil || c.schema.Value == nil {
						t.Skip("no schema to validate against")
					}
					if err := c.schema.Value.VisitJSON(gwJSONValue(t, c.value), openapi3.MultiErrors()); err != nil {
						t.Errorf("example does not validate: %v", err)
					}
				})
			}
		})
	}
}

// The game and wallet documents carry an example on every JSON request body
// and every JSON response.
func TestDocumentExamplesPresent(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"game.v1.yaml", "wallet.v1.yaml"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			for _, where := range gwWalkExamples(gwLoadDocument(t, name)).bare {
				t.Errorf("%s: no example", where)
			}
		})
	}
}
