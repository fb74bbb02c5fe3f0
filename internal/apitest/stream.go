package apitest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"gopkg.in/yaml.v3"

	"github.com/crashstudio/crashgame/api"
)

// The schema formats a payload of the stream's AsyncAPI 3.0.0 document may
// declare (the schemaFormat of a Multi Format Schema Object), by how
// StreamMessage.Validate reads them.
var (
	// OpenAPI 3.0 Schema Objects, read by kin-openapi as table.v1.yaml is
	// everywhere else (nullable, OpenAPI's exclusiveMinimum, ...).
	OpenAPI30Formats = []string{
		"application/vnd.oai.openapi;version=3.0.0",
		"application/vnd.oai.openapi+json;version=3.0.0",
		"application/vnd.oai.openapi+yaml;version=3.0.0",
	}
	// AsyncAPI Schema Objects (the format of a payload that declares none)
	// and JSON Schema draft-07, read as JSON Schema draft-07: the AsyncAPI
	// Schema Object is draft-07 plus keywords that do not validate
	// (discriminator, externalDocs, deprecated). This is how a generic
	// AsyncAPI tool reads a payload without a schemaFormat.
	JSONSchemaFormats = []string{
		"",
		"application/vnd.aai.asyncapi;version=3.0.0",
		"application/vnd.aai.asyncapi+json;version=3.0.0",
		"application/vnd.aai.asyncapi+yaml;version=3.0.0",
		"application/schema+json;version=draft-07",
		"application/schema+yaml;version=draft-07",
	}
)

// StreamMessage is one message of the stream's AsyncAPI document, with its
// payload resolved to the schema of table.v1.yaml it names.
type StreamMessage struct {
	Key      string // its key under components.messages
	Type     string // its name: the value of the payload's "type"
	Schema   string // the table.v1.yaml schema of its payload
	Format   string // the payload's schemaFormat as declared; "" when it declares none
	Payload  *openapi3.Schema
	Examples []any

	validate func(raw []byte) error
	checked  *checked
}

// checked counts the values validated through a set of messages, by type.
type checked struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *checked) add(typ string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n[typ]++
}

// String is "<total> (<type> <count>, ...)", types in order.
func (c *checked) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	total := 0
	var each []string
	for _, typ := range slices.Sorted(maps.Keys(c.n)) {
		total += c.n[typ]
		each = append(each, fmt.Sprintf("%s %d", typ, c.n[typ]))
	}
	if total == 0 {
		return ""
	}
	return fmt.Sprintf("%d (%s)", total, strings.Join(each, ", "))
}

// Validate checks v (a decoded JSON value, or anything that marshals to
// JSON) against the message's payload schema, read as the payload's declared
// schemaFormat says: an OpenAPI 3.0 schema through kin-openapi, an AsyncAPI
// or JSON Schema draft-07 schema through a draft-07 validator.
func (m StreamMessage) Validate(v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("message %s: %w", m.Key, err)
	}
	if m.checked != nil {
		m.checked.add(m.Type)
	}
	return m.validate(raw)
}

// StreamMessages reads api.StreamDocument and returns the messages of its
// operation of the given action ("send": what the server sends; "receive":
// what it takes from the client), by type. A message whose payload is not a
// schema of table.v1.yaml, or declares a schema format Validate cannot read,
// fails t. When t ends, it logs how many values were validated through the
// messages returned.
func StreamMessages(t testing.TB, action string) map[string]StreamMessage {
	t.Helper()
	raw, err := api.Documents.ReadFile(api.StreamDocument)
	if err != nil {
		t.Fatalf("apitest: %v", err)
	}
	return StreamMessagesOf(t, raw, action)
}

// StreamMessagesOf is StreamMessages for the AsyncAPI document raw, whose
// payloads are schemas of the embedded table.v1.yaml.
func StreamMessagesOf(t testing.TB, raw []byte, action string) map[string]StreamMessage {
	t.Helper()
	var doc streamDocument
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("apitest: %s: %v", api.StreamDocument, err)
	}
	if doc.AsyncAPI != "3.0.0" {
		t.Fatalf("apitest: %s is AsyncAPI %q, want 3.0.0", api.StreamDocument, doc.AsyncAPI)
	}
	tableRaw, err := api.Documents.ReadFile("table.v1.yaml")
	if err != nil {
		t.Fatalf("apitest: %v", err)
	}
	table, err := openapi3.NewLoader().LoadFromData(tableRaw)
	if err != nil {
		t.Fatalf("apitest: table.v1.yaml: %v", err)
	}
	ps := payloadSchemas{
		table:   table,
		draft07: sync.OnceValues(func() (*jsonschema.Compiler, error) { return tableCompiler(tableRaw) }),
		counts:  &checked{n: map[string]int{}},
	}
	t.Cleanup(func() {
		if n := ps.counts.String(); n != "" {
			t.Logf("apitest: validated %s against the %s messages of %s", n, action, api.StreamDocument)
		}
	})
	out := map[string]StreamMessage{}
	found := false
	for name, op := range doc.Operations {
		if op.Action != action {
			continue
		}
		found = true
		for _, ref := range op.Messages {
			key, m := doc.componentMessage(t, name, ref.Ref)
			out[m.Name] = ps.message(t, key, m)
		}
	}
	if !found {
		t.Fatalf("apitest: %s has no %s operation", api.StreamDocument, action)
	}
	return out
}

// streamDocument is the part of an AsyncAPI 3.0.0 document that
// StreamMessagesOf reads.
type streamDocument struct {
	AsyncAPI   string `yaml:"asyncapi"`
	Operations map[string]struct {
		Action   string `yaml:"action"`
		Messages []struct {
			Ref string `yaml:"$ref"`
		} `yaml:"messages"`
	} `yaml:"operations"`
	Channels map[string]struct {
		Messages map[string]struct {
			Ref string `yaml:"$ref"`
		} `yaml:"messages"`
	} `yaml:"channels"`
	Components struct {
		Messages map[string]streamDocumentMessage `yaml:"messages"`
	} `yaml:"components"`
}

// streamDocumentMessage is one message under the document's
// components.messages.
type streamDocumentMessage struct {
	Name    string `yaml:"name"`
	Payload struct {
		Ref          string `yaml:"$ref"`
		SchemaFormat string `yaml:"schemaFormat"`
		Schema       struct {
			Ref string `yaml:"$ref"`
		} `yaml:"schema"`
	} `yaml:"payload"`
	Examples []struct {
		Payload any `yaml:"payload"`
	} `yaml:"examples"`
}

// componentMessage follows the message reference ref of the operation named
// op, #/channels/<channel>/messages/<key>, to the channel's message and on to
// the one under components.messages, which it returns with its key. A
// reference that does not lead there fails t.
func (doc *streamDocument) componentMessage(t testing.TB, op, ref string) (string, streamDocumentMessage) {
	t.Helper()
	// #/channels/<channel>/messages/<key> -> #/components/messages/<key>
	parts := strings.Split(strings.TrimPrefix(ref, "#/channels/"), "/messages/")
	if len(parts) != 2 {
		t.Fatalf("apitest: operation %s: message %q is not a channel's message", op, ref)
	}
	chRef := doc.Channels[parts[0]].Messages[parts[1]].Ref
	key := strings.TrimPrefix(chRef, "#/components/messages/")
	m, ok := doc.Components.Messages[key]
	if !ok {
		t.Fatalf("apitest: channel %s: message %q (%q) is not in components", parts[0], parts[1], chRef)
	}
	return key, m
}

// payloadSchemas resolves the messages' payloads to schemas of table.v1.yaml
// and validates values through them, counting the values validated.
type payloadSchemas struct {
	table   *openapi3.T
	draft07 func() (*jsonschema.Compiler, error) // table.v1.yaml in a draft-07 compiler
	counts  *checked
}

// message returns the StreamMessage of m, the message under key in
// components.messages. A payload that is not a schema of table.v1.yaml, or
// that declares a schema format Validate cannot read, fails t.
func (ps payloadSchemas) message(t testing.TB, key string, m streamDocumentMessage) StreamMessage {
	t.Helper()
	// A Schema Object ({$ref}) or a Multi Format Schema Object
	// ({schemaFormat, schema: {$ref}}).
	payloadRef := m.Payload.Ref
	if m.Payload.SchemaFormat != "" || m.Payload.Schema.Ref != "" {
		if payloadRef != "" {
			t.Fatalf("apitest: message %s: payload has both $ref and schema", key)
		}
		payloadRef = m.Payload.Schema.Ref
	}
	schema, ok := strings.CutPrefix(payloadRef, "table.v1.yaml#/components/schemas/")
	s := ps.table.Components.Schemas[schema]
	if !ok || s == nil || s.Value == nil {
		t.Fatalf("apitest: message %s: payload %q is not a schema of table.v1.yaml", key, payloadRef)
	}
	sm := StreamMessage{Key: key, Type: m.Name, Schema: schema, Format: m.Payload.SchemaFormat, Payload: s.Value, checked: ps.counts}
	switch {
	case slices.Contains(OpenAPI30Formats, sm.Format):
		sm.validate = openAPIValidator(s.Value)
	case slices.Contains(JSONSchemaFormats, sm.Format):
		sm.validate = ps.draft07Validator(schema)
	default:
		t.Fatalf("apitest: message %s: payload's schemaFormat %q is not one apitest reads", key, sm.Format)
	}
	for _, ex := range m.Examples {
		sm.Examples = append(sm.Examples, ex.Payload)
	}
	return sm
}

// openAPIValidator validates a raw JSON value against the OpenAPI 3.0 schema s
// through kin-openapi, then checks that it holds only the values the game
// sends (KnownValues).
func openAPIValidator(s *openapi3.Schema) func(raw []byte) error {
	return func(raw []byte) error {
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return err
		}
		if err := s.VisitJSON(v, openapi3.MultiErrors()); err != nil {
			return err
		}
		// The schema's open sets accept any string; the game
		// sends only the values they list (known.go).
		return KnownValues(s, v)
	}
}

// draft07Validator validates a raw JSON value against the table.v1.yaml schema
// named schema, read as JSON Schema draft-07; the schema is compiled at the
// first value.
func (ps payloadSchemas) draft07Validator(schema string) func(raw []byte) error {
	compiled := sync.OnceValues(func() (*jsonschema.Schema, error) {
		c, err := ps.draft07()
		if err != nil {
			return nil, err
		}
		sch, err := c.Compile(tableURL + "#/components/schemas/" + schema)
		if err != nil {
			return nil, fmt.Errorf("compile %s as JSON Schema draft-07: %w", schema, err)
		}
		return sch, nil
	})
	return func(raw []byte) error {
		sch, err := compiled()
		if err != nil {
			return err
		}
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			return err
		}
		return sch.Validate(v)
	}
}

// tableURL is where table.v1.yaml stands for the JSON Schema compiler; the
// stream document's payloads name it relative to their own file.
const tableURL = "file:///api/table.v1.yaml"

// tableCompiler returns a draft-07 compiler that holds table.v1.yaml (as
// JSON) at tableURL.
func tableCompiler(tableRaw []byte) (*jsonschema.Compiler, error) {
	doc, err := YAMLToJSON(tableRaw)
	if err != nil {
		return nil, fmt.Errorf("table.v1.yaml: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft7)
	if err := c.AddResource(tableURL, doc); err != nil {
		return nil, fmt.Errorf("table.v1.yaml: %w", err)
	}
	return c, nil
}

// YAMLToJSON decodes a YAML document into the values a JSON decoder gives
// (maps, slices, strings, json.Number, bools and nil), as
// jsonschema.UnmarshalJSON does.
func YAMLToJSON(raw []byte) (any, error) {
	var v any
	if err := yaml.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	j, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return jsonschema.UnmarshalJSON(bytes.NewReader(j))
}

// SharedSchema returns the path of a schema kept in the shared/ folder that
// stands beside the repository (shared/schemas/<name>; see its README.md):
// <module root>/../shared/schemas/<name>, the module root being the nearest
// folder above the working directory that holds go.mod. When the file is
// absent (a clone without shared/ beside it), it skips t, naming the path.
func SharedSchema(t testing.TB, name string) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatalf("apitest: %v", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatalf("apitest: no go.mod above the working directory")
		}
		dir = parent
	}
	path := filepath.Join(filepath.Dir(dir), "shared", "schemas", name)
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		t.Skipf("apitest: %s is absent (shared/ is not beside the repository): skipped", path)
	} else if err != nil {
		t.Fatalf("apitest: %v", err)
	}
	return path
}
