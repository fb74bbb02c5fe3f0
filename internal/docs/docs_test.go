package docs_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"gopkg.in/yaml.v3"

	"github.com/crashstudio/crashgame/api"
	"github.com/crashstudio/crashgame/internal/docs"
)

func TestServesYAMLAndJSON(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{
		"game.v1.yaml": {Data: []byte("openapi: 3.0.3\npaths:\n  /v1/games:\n    post:\n      responses:\n        200:\n          description: ok\n        '401':\n          description: no\n")},
	}
	h, err := docs.New(fsys)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path        string
		status      int
		contentType string
	}{
		{"/openapi/game.v1.yaml", 200, "text/plain; charset=utf-8"},
		{"/openapi/game.v1", 200, "text/plain; charset=utf-8"},
		{"/openapi/game.v1.json", 200, "application/json"},
		{"/openapi/", 200, "application/json"},
		{"/openapi/wallet.v1.yaml", 404, "application/json"},
		{"/openapi/game.v1.txt", 404, "application/json"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			t.Parallel()
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tt.path, nil))
			if rec.Code != tt.status {
				t.Fatalf("status = %d, want %d", rec.Code, tt.status)
			}
			if got := rec.Header().Get("Content-Type"); got != tt.contentType {
				t.Fatalf("Content-Type = %q, want %q", got, tt.contentType)
			}
		})
	}

	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/openapi/game.v1.json", nil))
	var doc struct {
		OpenAPI string `json:"openapi"`
		Paths   map[string]map[string]struct {
			Responses map[string]any `json:"responses"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		t.Fatalf("JSON form does not parse: %v", err)
	}
	if doc.OpenAPI != "3.0.3" {
		t.Fatalf("openapi = %q", doc.OpenAPI)
	}
	resp := doc.Paths["/v1/games"]["post"].Responses
	if _, ok := resp["200"]; !ok {
		t.Fatalf("integer status key lost in JSON: %v", resp)
	}
	if _, ok := resp["401"]; !ok {
		t.Fatalf("quoted status key lost in JSON: %v", resp)
	}
}

func TestRefusesOtherMethods(t *testing.T) {
	t.Parallel()
	h, err := docs.New(fstest.MapFS{})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/openapi/game.v1.yaml", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Fatalf("status = %d", rec.Code)
	}
}

// The published documents themselves convert and are served byte for byte.
func TestPublishedDocuments(t *testing.T) {
	t.Parallel()
	h, err := docs.New(api.Documents)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	// The stream's AsyncAPI document is served beside the OpenAPI ones.
	if names := h.Names(); !slices.Contains(names, "table-stream.asyncapi") || !slices.Contains(names, "table.v1") {
		t.Errorf("documents served: %v", names)
	}
	for _, name := range h.Names() {
		want, err := api.Documents.ReadFile(name + ".yaml")
		if err != nil {
			t.Fatal(err)
		}
		res, err := http.Get(srv.URL + "/openapi/" + name + ".yaml")
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if string(got) != string(want) {
			t.Errorf("%s.yaml is not served byte for byte", name)
		}
		res, err = http.Get(srv.URL + "/openapi/" + name + ".json")
		if err != nil {
			t.Fatal(err)
		}
		var v map[string]any
		if err := json.NewDecoder(res.Body).Decode(&v); err != nil {
			t.Errorf("%s.json: %v", name, err)
		}
		res.Body.Close()
	}
}

// The JSON form keeps the document's key order (paths before components, as
// written) and says what the YAML says: decoded, both give the same values.
func TestJSONKeepsTheDocumentsOrder(t *testing.T) {
	t.Parallel()
	h, err := docs.New(api.Documents)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range h.Names() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			raw, err := api.Documents.ReadFile(name + ".yaml")
			if err != nil {
				t.Fatal(err)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/openapi/"+name+".json", nil))
			got := rec.Body.Bytes()

			var root yaml.Node
			if err := yaml.Unmarshal(raw, &root); err != nil {
				t.Fatal(err)
			}
			var want []string
			for i := 0; i < len(root.Content[0].Content); i += 2 {
				want = append(want, root.Content[0].Content[i].Value)
			}
			if keys := topKeys(t, got); !slices.Equal(keys, want) {
				t.Errorf("top-level keys of the JSON: %v, want the YAML's order %v", keys, want)
			}

			var fromYAML any
			if err := yaml.Unmarshal(raw, &fromYAML); err != nil {
				t.Fatal(err)
			}
			var fromJSON any
			if err := json.Unmarshal(got, &fromJSON); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(normalize(fromYAML), fromJSON) {
				t.Error("the JSON form does not hold the same values as the YAML")
			}
		})
	}
}

// topKeys lists the keys of the JSON object doc in the order they appear.
func topKeys(t *testing.T, doc []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(doc))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not a JSON object: %v %v", tok, err)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// normalize turns what yaml.v3 decodes into what encoding/json decodes:
// string keys and float64 numbers.
func normalize(v any) any {
	switch t := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			m[k] = normalize(e)
		}
		return m
	case map[any]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			m[fmtKey(k)] = normalize(e)
		}
		return m
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = normalize(e)
		}
		return out
	case int:
		return float64(t)
	case uint64:
		return float64(t)
	default:
		return v
	}
}

func fmtKey(k any) string {
	b, _ := json.Marshal(k)
	return strings.Trim(string(b), `"`)
}

func TestJSONRefusesWhatItCannotConvert(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"a key given twice": "openapi: 3.0.3\nopenapi: 3.1.0\n",
		"an infinite float": "openapi: 3.0.3\nx: .inf\n",
		"not YAML":          "openapi: [3.0.3\n",
	}
	for name, doc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if _, err := docs.New(fstest.MapFS{"bad.v1.yaml": {Data: []byte(doc)}}); err == nil {
				t.Fatal("New accepted it")
			}
		})
	}
}
