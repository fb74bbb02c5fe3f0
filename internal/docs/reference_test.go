package docs_test

import (
	"html"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"gopkg.in/yaml.v3"

	"github.com/crashstudio/crashgame/api"
	"github.com/crashstudio/crashgame/internal/docs"
)

// get answers path from the reference of the published documents.
func get(t *testing.T, ref http.Handler, path string) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	ref.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec
}

var (
	tagRE   = regexp.MustCompile(`<[^>]*>`)
	spaceRE = regexp.MustCompile(`\s+`)
)

// pageText is what a reader sees of a page: its text without tags, with
// every run of white space made one space.
func pageText(page string) string {
	return spaceRE.ReplaceAllString(html.UnescapeString(tagRE.ReplaceAllString(page, " ")), " ")
}

// published is one published document, parsed here on its own (not by the
// package under test), and its rendered page.
type published struct {
	name string
	root *yaml.Node
	page string // the HTML
	text string // pageText of it
}

func publishedDocuments(t *testing.T) []published {
	t.Helper()
	h, err := docs.New(api.Documents)
	if err != nil {
		t.Fatal(err)
	}
	var out []published
	for _, name := range h.Names() {
		raw, err := api.Documents.ReadFile(name + ".yaml")
		if err != nil {
			t.Fatal(err)
		}
		var root yaml.Node
		if err := yaml.Unmarshal(raw, &root); err != nil {
			t.Fatal(err)
		}
		rec := get(t, h.Reference(), "/docs/"+name)
		if rec.Code != http.StatusOK {
			t.Fatalf("/docs/%s: %d", name, rec.Code)
		}
		out = append(out, published{name: name, root: root.Content[0], page: rec.Body.String(), text: pageText(rec.Body.String())})
	}
	if len(out) != 4 {
		t.Fatalf("%d documents published, want game.v1, table.v1, wallet.v1 and the stream's", len(out))
	}
	return out
}

// mapping returns the value of key in a mapping node, or nil.
func mapping(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// keys lists the keys of a mapping node.
func keys(n *yaml.Node) []string {
	var out []string
	if n != nil && n.Kind == yaml.MappingNode {
		for i := 0; i < len(n.Content); i += 2 {
			out = append(out, n.Content[i].Value)
		}
	}
	return out
}

// operations lists what a reader must find for each operation of a
// document: "POST /v1/games" for OpenAPI, "sendEvents send /api/v1/stream"
// (id, action, the channel's address) for AsyncAPI.
func operations(t *testing.T, root *yaml.Node) []string {
	t.Helper()
	var out []string
	if mapping(root, "asyncapi") != nil {
		for _, id := range keys(mapping(root, "operations")) {
			op := mapping(mapping(root, "operations"), id)
			ref := mapping(mapping(op, "channel"), "$ref").Value
			channel := mapping(mapping(root, "channels"), strings.TrimPrefix(ref, "#/channels/"))
			out = append(out, id+" "+mapping(op, "action").Value+" "+mapping(channel, "address").Value)
		}
		return out
	}
	for _, path := range keys(mapping(root, "paths")) {
		for _, method := range keys(mapping(mapping(root, "paths"), path)) {
			switch method {
			case "get", "put", "post", "delete", "options", "head", "patch", "trace":
				out = append(out, strings.ToUpper(method)+" "+path)
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("no operation found in the document")
	}
	return out
}

// errorCodesOf lists every error code that a document names in a
// structured place: an example's error_code, the enum (closed or
// x-extensible-enum) of an error_code field or an *ErrorCode schema, and the
// lists x-known-error-codes and x-final-error-codes.
func errorCodesOf(root *yaml.Node) []string {
	var out []string
	add := func(vs ...string) {
		for _, v := range vs {
			if !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
	}
	scalarsOf := func(n *yaml.Node) []string {
		var vs []string
		if n != nil && n.Kind == yaml.SequenceNode {
			for _, e := range n.Content {
				vs = append(vs, e.Value)
			}
		}
		return vs
	}
	var walk func(key string, n *yaml.Node)
	walk = func(key string, n *yaml.Node) {
		switch n.Kind {
		case yaml.ScalarNode:
			if key == "error_code" {
				add(n.Value)
			}
		case yaml.SequenceNode:
			for _, e := range n.Content {
				walk("", e)
			}
		case yaml.MappingNode:
			if key == "error_code" || strings.HasSuffix(key, "ErrorCode") {
				add(scalarsOf(mapping(n, "enum"))...)
				add(scalarsOf(mapping(n, "x-extensible-enum"))...)
			}
			add(scalarsOf(mapping(n, "x-known-error-codes"))...)
			add(scalarsOf(mapping(n, "x-final-error-codes"))...)
			for i := 0; i+1 < len(n.Content); i += 2 {
				walk(n.Content[i].Value, n.Content[i+1])
			}
		}
	}
	walk("", root)
	return out
}

// examplesOf lists the names of a document's request, response and message
// examples.
func examplesOf(root *yaml.Node) []string {
	var out []string
	var walk func(key string, n *yaml.Node)
	walk = func(key string, n *yaml.Node) {
		if n == nil {
			return
		}
		switch n.Kind {
		case yaml.MappingNode:
			if key == "examples" {
				out = append(out, keys(n)...)
				return
			}
			for i := 0; i+1 < len(n.Content); i += 2 {
				walk(n.Content[i].Value, n.Content[i+1])
			}
		case yaml.SequenceNode:
			for _, e := range n.Content {
				if key == "examples" { // AsyncAPI: a list of Message Example Objects
					if name := mapping(e, "name"); name != nil {
						out = append(out, name.Value)
					}
					continue
				}
				walk("", e)
			}
		}
	}
	walk("", mapping(root, "paths"))
	walk("", mapping(mapping(root, "components"), "messages"))
	return out
}

func TestReferenceShowsEveryOperation(t *testing.T) {
	t.Parallel()
	for _, d := range publishedDocuments(t) {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			ops := operations(t, d.root)
			for _, op := range ops {
				if !strings.Contains(d.text, op) {
					t.Errorf("%q is not on /docs/%s", op, d.name)
				}
			}
			t.Logf("%d operations", len(ops))
		})
	}
}

func TestReferenceShowsEveryErrorCode(t *testing.T) {
	t.Parallel()
	for _, d := range publishedDocuments(t) {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			codes := errorCodesOf(d.root)
			if len(codes) == 0 {
				t.Fatal("the document names no error code: the walk is wrong")
			}
			for _, code := range codes {
				if !regexp.MustCompile(`\b` + regexp.QuoteMeta(code) + `\b`).MatchString(d.text) {
					t.Errorf("error code %s is not on /docs/%s", code, d.name)
				}
			}
			t.Logf("%d error codes", len(codes))
		})
	}
}

func TestReferenceShowsEverySchemaAndExample(t *testing.T) {
	t.Parallel()
	for _, d := range publishedDocuments(t) {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			for _, name := range keys(mapping(mapping(d.root, "components"), "schemas")) {
				if !strings.Contains(d.page, `id="schema-`+name+`"`) {
					t.Errorf("schema %s has no section on /docs/%s", name, d.name)
				}
			}
			for _, name := range keys(mapping(mapping(d.root, "components"), "messages")) {
				if !strings.Contains(d.page, `id="message-`+name+`"`) {
					t.Errorf("message %s has no section on /docs/%s", name, d.name)
				}
			}
			exs := examplesOf(d.root)
			if len(exs) == 0 {
				t.Fatal("the document has no example: the walk is wrong")
			}
			for _, name := range exs {
				if !strings.Contains(d.text, "Example "+name) {
					t.Errorf("example %s is not on /docs/%s", name, d.name)
				}
			}
		})
	}
}

// The pages load nothing but their stylesheet, from the game: no script, no
// image, nothing from another origin.
func TestReferenceLoadsNothingFromOutside(t *testing.T) {
	t.Parallel()
	h, err := docs.New(api.Documents)
	if err != nil {
		t.Fatal(err)
	}
	loads := regexp.MustCompile(`(?i)<(script|img|iframe|object|embed|link)\b[^>]*>|\bsrc\s*=|url\(`)
	for _, name := range append([]string{""}, h.Names()...) {
		page := get(t, h.Reference(), "/docs/"+name).Body.String()
		for _, m := range loads.FindAllString(page, -1) {
			if m != `<link rel="stylesheet" href="reference.css">` {
				t.Errorf("/docs/%s loads %s", name, m)
			}
		}
	}
	if css := get(t, h.Reference(), "/docs/reference.css").Body.String(); strings.Contains(css, "url(") || strings.Contains(css, "@import") {
		t.Error("the stylesheet loads something")
	}
}

func TestReferenceRoutes(t *testing.T) {
	t.Parallel()
	h, err := docs.New(api.Documents)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path        string
		status      int
		contentType string
	}{
		{"/docs/", 200, "text/html; charset=utf-8"},
		{"/docs/game.v1", 200, "text/html; charset=utf-8"},
		{"/docs/wallet.v1", 200, "text/html; charset=utf-8"},
		{"/docs/table.v1", 200, "text/html; charset=utf-8"},
		{"/docs/table-stream.asyncapi", 200, "text/html; charset=utf-8"},
		{"/docs/reference.css", 200, "text/css; charset=utf-8"},
		{"/docs/game.v1.yaml", 404, "text/plain; charset=utf-8"},
		{"/docs/nothing", 404, "text/plain; charset=utf-8"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			t.Parallel()
			rec := get(t, h.Reference(), tt.path)
			if rec.Code != tt.status {
				t.Fatalf("status = %d, want %d", rec.Code, tt.status)
			}
			if got := rec.Header().Get("Content-Type"); got != tt.contentType {
				t.Fatalf("Content-Type = %q, want %q", got, tt.contentType)
			}
			if tt.status == 200 && strings.HasPrefix(tt.contentType, "text/html") {
				if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") {
					t.Fatalf("Content-Security-Policy = %q", csp)
				}
			}
		})
	}
	// The index links every document's page and its YAML and JSON.
	index := get(t, h.Reference(), "/docs/").Body.String()
	for _, name := range h.Names() {
		for _, href := range []string{name, "../openapi/" + name + ".yaml", "../openapi/" + name + ".json"} {
			if !strings.Contains(index, `href="`+href+`"`) {
				t.Errorf("the index has no link to %s", href)
			}
		}
	}
	rec := get(t, h.Reference(), "/docs")
	if rec.Code != http.StatusMovedPermanently || rec.Header().Get("Location") != "docs/" {
		t.Errorf("/docs: %d to %q, want 301 to docs/", rec.Code, rec.Header().Get("Location"))
	}
	rec = httptest.NewRecorder()
	h.Reference().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/docs/", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST /docs/: %d", rec.Code)
	}
}

// What a description says reaches the page as text, whatever it holds: the
// Markdown the documents use is marked up, HTML in it is shown, not run.
func TestReferenceRendersDescriptions(t *testing.T) {
	t.Parallel()
	doc := `openapi: 3.0.3
info:
  title: T <b>bold</b>
  version: 1.0.0
  description: |
    ## Rules

    A <script>alert(1)</script> paragraph with ` + "`code <x>`" + ` and **strong** words.

    * one
    * two
      continued

    1. first
    2. second

    | code | meaning |
    | --- | --- |
    | 4401 | expired |
paths:
  /v1/x:
    post:
      operationId: doX
      summary: Do ` + "`x`" + `
      responses:
        '400':
          description: refused
          content:
            application/json:
              schema:
                $ref: '#/components/schemas/Refusal'
              examples:
                BAD:
                  summary: A bad one
                  value: {status: error, error_code: BAD_X, error_reason: WHY}
components:
  schemas:
    Refusal:
      type: object
      properties:
        error_code:
          type: string
          x-extensible-enum: [BAD_X, WORSE_X]
`
	h, err := docs.New(fstest.MapFS{"t.v1.yaml": {Data: []byte(doc)}})
	if err != nil {
		t.Fatal(err)
	}
	page := get(t, h.Reference(), "/docs/t.v1").Body.String()
	for _, want := range []string{
		"<h3>Rules</h3>",
		"A &lt;script&gt;alert(1)&lt;/script&gt; paragraph with <code>code &lt;x&gt;</code> and <strong>strong</strong> words.",
		"<li>one</li>", "<li>two\ncontinued</li>", "<ol>", "<li>second</li>",
		"<th>code</th><th>meaning</th>", "<td>4401</td><td>expired</td>",
		"T &lt;b&gt;bold&lt;/b&gt;",
		"Do <code>x</code>",
		`<a href="#schema-Refusal">Refusal</a>`,
		`<code>BAD_X</code><br><code>error_reason: WHY</code>`,
		"<code>x-extensible-enum</code>: <code>BAD_X, WORSE_X</code>",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Contains(page, "<script>") || strings.Contains(page, "<b>") {
		t.Error("HTML of the document reached the page as HTML")
	}
}

func TestReferenceRefusesABrokenReference(t *testing.T) {
	t.Parallel()
	doc := "openapi: 3.0.3\ninfo: {title: T, version: 1.0.0}\npaths:\n  /x:\n    get:\n      responses:\n        '200':\n          $ref: '#/components/responses/Missing'\n"
	if _, err := docs.New(fstest.MapFS{"t.v1.yaml": {Data: []byte(doc)}}); err == nil || !strings.Contains(err.Error(), "Missing") {
		t.Fatalf("New: %v, want an error naming the broken $ref", err)
	}
}
