package docs

import (
	"fmt"
	"html/template"
	"net/url"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// spec is one parsed document of the set.
type spec struct {
	name string // file name without extension: "game.v1"
	file string // "game.v1.yaml"
	root *yaml.Node
}

// asyncAPI reports whether the document is an AsyncAPI document.
func (s *spec) asyncAPI() bool { return text(s.root, "asyncapi") != "" }

// link is a reference to a place of the rendered pages.
type link struct {
	Text string
	Href string
}

// page is one document as the reference shows it.
type page struct {
	Name        string // "game.v1"
	File        string // "game.v1.yaml"
	Format      string // "OpenAPI 3.0.3", "AsyncAPI 3.0.0"
	Title       string
	Version     string
	Description template.HTML
	Contact     []string
	Servers     []server
	Tags        []tag
	Security    []securityScheme
	Operations  []operation
	Schemas     []*schemaView
	Channels    []channel
	Messages    []message
	Errors      []errorCode // AsyncAPI: the codes of its messages' examples
}

type server struct {
	URL         string
	Description template.HTML
}

type tag struct {
	Name        string
	Description template.HTML
}

type securityScheme struct {
	Name        string
	Facts       []fact
	Description template.HTML
}

// fact is a key of a document's object that the page shows as written.
type fact struct {
	Key   string
	Value string
}

// operation is an OpenAPI operation (Method, Path) or an AsyncAPI one
// (Action on Channel).
type operation struct {
	Anchor      string
	Method      string
	Path        string
	Summary     template.HTML
	OperationID string
	Tags        []string
	Security    []string
	Deprecated  bool
	Description template.HTML
	Parameters  []parameter
	Body        *body
	Responses   []response
	Errors      []errorCode

	// AsyncAPI
	Action   string
	Title    string
	Channel  link
	Address  string
	Messages []link
}

type parameter struct {
	Name        string
	In          string
	Required    bool
	Schema      *schemaView
	Description template.HTML
	Example     string
}

type body struct {
	Required    bool
	Description template.HTML
	Content     []media
}

type response struct {
	Status      string
	Class       string // "2xx", "4xx"... for the colour of the status
	From        string // the component it comes from, "responses/BadRequest"
	Description template.HTML
	Headers     []header
	Content     []media
}

type header struct {
	Name        string
	Schema      *schemaView
	Description template.HTML
}

type media struct {
	Type     string
	Schema   *schemaView
	Examples []example
}

type example struct {
	Name        string
	Summary     string
	Description template.HTML
	Value       string
	node        *yaml.Node // the value, for the error codes it carries
}

// errorCode is an error_code that an example of the document carries.
type errorCode struct {
	Status  string // the response's status; "" on the stream
	Code    string
	Reason  string
	Example string // where it is shown: the example's name and summary
}

type channel struct {
	Anchor      string
	Key         string
	Address     string
	Title       string
	Description template.HTML
	Messages    []link
}

type message struct {
	Anchor       string
	Key          string
	Name         string
	Title        string
	Summary      template.HTML
	Description  template.HTML
	ContentType  string
	SchemaFormat string
	Payload      *schemaView
	PayloadRef   *link // the named schema the payload is, shown in full
	Headers      *schemaView
	HeadersRef   *link
	Examples     []example
}

// schemaView is a schema as the page shows it: a reference to a named
// schema (Ref), or its own type, facts and fields.
type schemaView struct {
	Anchor       string // set on the components' schemas
	Name         string
	Ref          *link
	Summary      template.HTML // the type in one line: "string (date-time)", a link, "array of ..."
	Description  template.HTML
	Facts        []fact
	Properties   []property
	Items        *schemaView
	Values       *schemaView // additionalProperties as a schema
	Composition  []composition
	Example      string // JSON
	ShortExample bool   // Example is a scalar: shown in the line
}

type property struct {
	Name     string
	Required bool
	Schema   *schemaView
}

type composition struct {
	Kind    string // allOf, oneOf, anyOf, not
	Schemas []*schemaView
}

// HasBody reports whether the view has more to show than its summary and
// description: a nested object, a list's inline items, a composition, facts.
func (v *schemaView) HasBody() bool {
	if v == nil || v.Ref != nil {
		return false
	}
	return len(v.Facts) > 0 || len(v.Properties) > 0 || len(v.Composition) > 0 || v.Items.HasBody() || v.Values.HasBody() || v.Example != ""
}

// schemaKeys are the keys of a Schema Object that a view shows in its own
// place; every other key is listed as a fact, as written.
var schemaKeys = []string{"$ref", "type", "format", "nullable", "description", "properties", "required", "items", "additionalProperties", "allOf", "oneOf", "anyOf", "example"}

// maxDepth bounds how deep inline schemas are shown. Named schemas are
// links, so only a document's inline nesting counts.
const maxDepth = 12

// builder renders the documents of one set, resolving $ref within a
// document and across documents of the set (the AsyncAPI payloads are
// schemas of table.v1.yaml).
type builder struct {
	specs map[string]*spec // by file name
}

// resolve follows $ref from n, in the document s, until a node without one.
// It returns that node, the document it is in, and the last reference
// followed ("" when n had none).
func (b *builder) resolve(s *spec, n *yaml.Node) (*spec, *yaml.Node, string, error) {
	last := ""
	for range 16 {
		ref := text(n, "$ref")
		if ref == "" {
			return s, n, last, nil
		}
		file, pointer, _ := strings.Cut(ref, "#")
		target := s
		if file != "" {
			target = b.specs[file]
			if target == nil {
				return nil, nil, "", fmt.Errorf("$ref %q: no document %s in the set", ref, file)
			}
		}
		found := target.root
		for _, part := range strings.Split(strings.TrimPrefix(pointer, "/"), "/") {
			if part == "" {
				continue
			}
			part = strings.NewReplacer("~1", "/", "~0", "~").Replace(part)
			if p, err := url.PathUnescape(part); err == nil {
				part = p
			}
			if seq := items(found); seq != nil {
				var i int
				if _, err := fmt.Sscan(part, &i); err != nil || i < 0 || i >= len(seq) {
					return nil, nil, "", fmt.Errorf("$ref %q: no element %s", ref, part)
				}
				found = seq[i]
				continue
			}
			found = field(found, part)
			if found == nil {
				return nil, nil, "", fmt.Errorf("$ref %q: nothing at %s", ref, pointer)
			}
		}
		s, n, last = target, found, ref
	}
	return nil, nil, "", fmt.Errorf("$ref %q: more than 16 references in a row", last)
}

// refName is the last part of a reference: "BadRequest" of
// "#/components/responses/BadRequest".
func refName(ref string) string {
	return ref[strings.LastIndex(ref, "/")+1:]
}

// refFrom is where a reference points within its document's components:
// "responses/BadRequest" of "#/components/responses/BadRequest".
func refFrom(ref string) string {
	_, pointer, _ := strings.Cut(ref, "#")
	return strings.TrimPrefix(pointer, "/components/")
}

// schemaLink is the link from the page of on to the named schema that a
// $ref in the document s names, or nil when it names something else.
func (b *builder) schemaLink(on, s *spec, ref string) *link {
	file, pointer, _ := strings.Cut(ref, "#")
	parts := strings.Split(strings.TrimPrefix(pointer, "/"), "/")
	if len(parts) < 3 || parts[0] != "components" || parts[1] != "schemas" {
		return nil
	}
	target := s
	if file != "" {
		target = b.specs[file]
	}
	if target == nil || target.asyncAPI() {
		return nil
	}
	label := strings.Join(parts[2:], ".")
	href := "#schema-" + parts[2]
	if target != on {
		label = target.file + " " + label
		href = target.name + href
	}
	return &link{Text: label, Href: href}
}

// schema builds the view of the schema node n of the document s, for the
// page of on.
func (b *builder) schema(on, s *spec, n *yaml.Node, depth int) (*schemaView, error) {
	if n == nil {
		return nil, nil
	}
	if ref := text(n, "$ref"); ref != "" {
		if l := b.schemaLink(on, s, ref); l != nil {
			return &schemaView{Ref: l, Summary: markup(`<a href="` + template.HTMLEscapeString(l.Href) + `">` + template.HTMLEscapeString(l.Text) + `</a>`)}, nil
		}
		ts, tn, _, err := b.resolve(s, n)
		if err != nil {
			return nil, err
		}
		return b.schema(on, ts, tn, depth+1)
	}
	if depth > maxDepth {
		return &schemaView{Summary: "…"}, nil
	}
	v := &schemaView{Description: markdown(text(n, "description"), 5)}
	if ex := field(n, "example"); ex != nil {
		js, err := nodeJSON(ex, true)
		if err != nil {
			return nil, err
		}
		v.Example, v.ShortExample = js, ex.Kind == yaml.ScalarNode
	}
	for _, e := range entries(n) {
		if !slices.Contains(schemaKeys, e.Key) {
			v.Facts = append(v.Facts, fact{Key: e.Key, Value: showValue(e.Value)})
		}
	}
	required := scalars(field(n, "required"))
	for _, p := range entries(field(n, "properties")) {
		ps, err := b.schema(on, s, p.Value, depth+1)
		if err != nil {
			return nil, fmt.Errorf("property %s: %w", p.Key, err)
		}
		v.Properties = append(v.Properties, property{Name: p.Key, Required: slices.Contains(required, p.Key), Schema: ps})
	}
	var err error
	if v.Items, err = b.schema(on, s, field(n, "items"), depth+1); err != nil {
		return nil, fmt.Errorf("items: %w", err)
	}
	if ap := field(n, "additionalProperties"); ap != nil {
		if ap.Kind == yaml.ScalarNode {
			v.Facts = append(v.Facts, fact{Key: "additionalProperties", Value: ap.Value})
		} else if v.Values, err = b.schema(on, s, ap, depth+1); err != nil {
			return nil, fmt.Errorf("additionalProperties: %w", err)
		}
	}
	for _, kind := range []string{"allOf", "oneOf", "anyOf"} {
		list := items(field(n, kind))
		if list == nil {
			continue
		}
		c := composition{Kind: kind}
		for i, e := range list {
			es, err := b.schema(on, s, e, depth+1)
			if err != nil {
				return nil, fmt.Errorf("%s[%d]: %w", kind, i, err)
			}
			c.Schemas = append(c.Schemas, es)
		}
		v.Composition = append(v.Composition, c)
	}
	v.Summary = summary(n, v)
	return v, nil
}

// summary writes the type of a schema in one line.
func summary(n *yaml.Node, v *schemaView) template.HTML {
	var parts []string
	typ := text(n, "type")
	switch {
	case typ == "array" && v.Items != nil:
		parts = append(parts, "array of "+string(v.Items.Summary))
	case typ == "object" && v.Values != nil:
		parts = append(parts, "map of "+string(v.Values.Summary))
	case typ != "":
		t := template.HTMLEscapeString(typ)
		if f := text(n, "format"); f != "" {
			t += " (" + template.HTMLEscapeString(f) + ")"
		}
		parts = append(parts, t)
	}
	for _, c := range v.Composition {
		var each []string
		for _, s := range c.Schemas {
			if s.Summary != "" {
				each = append(each, string(s.Summary))
			} else {
				each = append(each, "inline schema")
			}
		}
		if c.Kind == "allOf" && len(each) == 1 && typ == "" {
			parts = append(parts, each[0])
			continue
		}
		parts = append(parts, c.Kind+": "+strings.Join(each, " | "))
	}
	if text(n, "nullable") == "true" {
		parts = append(parts, "nullable")
	}
	if len(parts) == 0 {
		return "any"
	}
	return markup(strings.Join(parts, ", "))
}

// examples lists the examples of a Media Type Object (or of an AsyncAPI
// message's examples), resolving $ref to components/examples.
func (b *builder) examples(s *spec, n *yaml.Node, mediaType string) ([]example, error) {
	var out []example
	if ex := field(n, "example"); ex != nil {
		v, err := exampleValue(ex, mediaType)
		if err != nil {
			return nil, err
		}
		out = append(out, example{Name: "example", Value: v, node: ex})
	}
	for _, e := range entries(field(n, "examples")) {
		_, en, _, err := b.resolve(s, e.Value)
		if err != nil {
			return nil, fmt.Errorf("example %s: %w", e.Key, err)
		}
		ex := example{Name: e.Key, Summary: text(en, "summary"), Description: markdown(text(en, "description"), 5), node: field(en, "value")}
		if ext := text(en, "externalValue"); ext != "" {
			ex.Value = "(externalValue) " + ext
		} else if ex.Value, err = exampleValue(field(en, "value"), mediaType); err != nil {
			return nil, fmt.Errorf("example %s: %w", e.Key, err)
		}
		out = append(out, ex)
	}
	return out, nil
}

// exampleValue shows an example's value: JSON, or the text itself when the
// media type is not JSON and the value is a string (an HTML page of a proxy).
func exampleValue(n *yaml.Node, mediaType string) (string, error) {
	if n == nil {
		return "", nil
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" && !strings.Contains(mediaType, "json") {
		return n.Value, nil
	}
	return nodeJSON(n, true)
}

// errorCodes adds to rows the error codes that the examples of content
// carry, each once per status and reason.
func errorCodes(status string, content []media, rows []errorCode) []errorCode {
	for _, m := range content {
		for _, ex := range m.Examples {
			code := text(ex.node, "error_code")
			if code == "" {
				continue
			}
			row := errorCode{Status: status, Code: code, Reason: text(ex.node, "error_reason"), Example: ex.Name}
			if ex.Summary != "" {
				row.Example += ": " + ex.Summary
			}
			if !slices.ContainsFunc(rows, func(r errorCode) bool {
				return r.Status == row.Status && r.Code == row.Code && r.Reason == row.Reason
			}) {
				rows = append(rows, row)
			}
		}
	}
	return rows
}
