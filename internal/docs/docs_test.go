package docs_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"testing/fstest"

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
		{"/openapi/game.v1.yaml", 200, "application/yaml"},
		{"/openapi/game.v1", 200, "application/yaml"},
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
