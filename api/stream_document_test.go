package api_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"gopkg.in/yaml.v3"

	"github.com/crashstudio/crashgame/api"
	"github.com/crashstudio/crashgame/internal/apitest"
)

// The stream's AsyncAPI document names every message of the stream, each
// with a payload schema of table.v1.yaml: what the server sends is exactly
// table.v1.yaml's StreamEvent union, what the client sends its ClientMessage
// union; each message's name is its payload's type, each payload declares
// the OpenAPI 3.0 schema format (its schema is one of an OpenAPI 3.0
// document), and each example validates against its payload read in that
// format.
func TestStreamDocument(t *testing.T) {
	t.Parallel()
	doc := gwLoadDocument(t, "table.v1.yaml")
	if doc.Paths.Find("/api/v1/stream") == nil {
		t.Fatal("table.v1.yaml has no /api/v1/stream")
	}
	for action, union := range map[string]string{"send": "StreamEvent", "receive": "ClientMessage"} {
		t.Run(action, func(t *testing.T) {
			t.Parallel()
			msgs := apitest.StreamMessages(t, action)
			var want []string
			for _, ref := range doc.Components.Schemas[union].Value.OneOf {
				want = append(want, strings.TrimPrefix(ref.Ref, "#/components/schemas/"))
			}
			var got []string
			for _, m := range msgs {
				got = append(got, m.Schema)
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("%s messages %v, want %s's %v", action, got, union, want)
			}
			for _, typ := range slices.Sorted(maps.Keys(msgs)) {
				m := msgs[typ]
				if enum := m.Payload.Properties["type"].Value.Enum; len(enum) != 1 || enum[0] != typ {
					t.Errorf("message %s is named %q, its payload's type is %v", m.Key, typ, enum)
				}
				if !slices.Contains(apitest.OpenAPI30Formats, m.Format) {
					t.Errorf("message %s: payload's schemaFormat is %q, want %q (its schema is of table.v1.yaml, an OpenAPI 3.0 document)",
						m.Key, m.Format, apitest.OpenAPI30Formats[0])
				}
				if len(m.Examples) == 0 {
					t.Errorf("message %s has no example", m.Key)
				}
				for _, ex := range m.Examples {
					if err := m.Validate(ex); err != nil {
						raw, _ := json.Marshal(ex)
						t.Errorf("message %s: example %s does not validate as %q: %v", m.Key, raw, m.Format, err)
					}
				}
			}
		})
	}
}

// Without its schemaFormat a payload is an AsyncAPI Schema Object, which has
// no `nullable`: a generic AsyncAPI tool then refuses the document's own
// `bet` example (freebet_id null). This is why every payload declares the
// OpenAPI 3.0 format; the test also shows that the examples' check can fail.
func TestStreamDocumentWithoutSchemaFormat(t *testing.T) {
	t.Parallel()
	raw, err := api.Documents.ReadFile(api.StreamDocument)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	messages := doc["components"].(map[string]any)["messages"].(map[string]any)
	for _, m := range messages {
		m := m.(map[string]any)
		if p, ok := m["payload"].(map[string]any)["schema"]; ok {
			m["payload"] = p
		}
	}
	stripped, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	msgs := apitest.StreamMessagesOf(t, stripped, "send")
	bet := msgs["bet"]
	if bet.Format != "" {
		t.Fatalf("bet's payload still declares %q", bet.Format)
	}
	if len(bet.Examples) == 0 {
		t.Fatal("message bet has no example")
	}
	for _, ex := range bet.Examples {
		err := bet.Validate(ex)
		if err == nil || !strings.Contains(err.Error(), "freebet_id") {
			t.Errorf("bet's example read as an AsyncAPI Schema Object: %v, want an error on freebet_id", err)
		}
	}
}

// The document validates against the official AsyncAPI 3.0.0 JSON Schema
// (shared/schemas/asyncapi-3.0.0.json beside the repository) with 0 errors:
// as written (its $refs unresolved), and with its payloads' $refs resolved
// (table.v1.yaml's schemas inlined), as a tool that dereferences the payloads
// before validating sees it. Operations keep their $refs to channels and
// messages: AsyncAPI 3.0.0 allows only references there.
func TestStreamDocumentAsyncAPISchema(t *testing.T) {
	t.Parallel()
	path := apitest.SharedSchema(t, "asyncapi-3.0.0.json")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	official, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	id, _ := official.(map[string]any)["$id"].(string)
	if id == "" {
		t.Fatalf("%s has no $id", path)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft7)
	if err := c.AddResource(id, official); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	schema, err := c.Compile(id)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}

	docs := map[string]any{}
	for _, name := range []string{api.StreamDocument, "table.v1.yaml"} {
		raw, err := api.Documents.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if docs[name], err = apitest.YAMLToJSON(raw); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	for _, tc := range []struct {
		name string
		doc  any
	}{
		{"as written", docs[api.StreamDocument]},
		{"payloads resolved", resolvePayloads(t, docs)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			errs := schemaErrors(schema.Validate(tc.doc))
			for _, e := range errs {
				t.Error(e)
			}
			if len(errs) > 0 {
				t.Errorf("%s (%s): %d errors against %s, want 0", api.StreamDocument, tc.name, len(errs), path)
			}
		})
	}
}

// schemaErrors lists the errors of a validation, one a line, with the
// document's location of each; none when err is nil.
func schemaErrors(err error) []string {
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []string{err.Error()}
	}
	var out []string
	for _, u := range ve.BasicOutput().Errors {
		if u.Error == nil {
			continue
		}
		out = append(out, fmt.Sprintf("at %q (%s): %s", u.InstanceLocation, u.KeywordLocation, u.Error))
	}
	if len(out) == 0 {
		out = append(out, err.Error())
	}
	return out
}

// resolvePayloads returns a copy of the stream document whose message
// payloads (components.messages.*.payload) have every $ref resolved.
func resolvePayloads(t *testing.T, docs map[string]any) any {
	t.Helper()
	doc := maps.Clone(docs[api.StreamDocument].(map[string]any))
	components := maps.Clone(doc["components"].(map[string]any))
	messages := maps.Clone(components["messages"].(map[string]any))
	for key, m := range messages {
		m := maps.Clone(m.(map[string]any))
		m["payload"] = resolveRefs(t, docs, api.StreamDocument, m["payload"], nil)
		messages[key] = m
	}
	components["messages"] = messages
	doc["components"] = components
	return doc
}

// resolveRefs returns v (a value of the document named file) with every
// {"$ref": ...} replaced by what it points to, recursively; a reference
// names a document of docs (by file name) or, with no file, its own.
func resolveRefs(t *testing.T, docs map[string]any, file string, v any, stack []string) any {
	t.Helper()
	switch v := v.(type) {
	case map[string]any:
		if ref, ok := v["$ref"].(string); ok {
			target, ptr, _ := strings.Cut(ref, "#")
			if target == "" {
				target = file
			}
			key := target + "#" + ptr
			if slices.Contains(stack, key) {
				t.Fatalf("%s: $ref %q is a cycle: %v", file, ref, stack)
			}
			root, ok := docs[target]
			if !ok {
				t.Fatalf("%s: $ref %q names a document the test does not hold", file, ref)
			}
			node := root
			for tok := range strings.SplitSeq(strings.TrimPrefix(ptr, "/"), "/") {
				if ptr == "" {
					break
				}
				tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
				m, ok := node.(map[string]any)
				if !ok || m[tok] == nil {
					t.Fatalf("%s: $ref %q points to nothing", file, ref)
				}
				node = m[tok]
			}
			return resolveRefs(t, docs, target, node, append(slices.Clone(stack), key))
		}
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = resolveRefs(t, docs, file, e, stack)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = resolveRefs(t, docs, file, e, stack)
		}
		return out
	}
	return v
}
