package apitest

import (
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"gopkg.in/yaml.v3"

	"github.com/crashstudio/crashgame/api"
)

// StreamMessage is one message of the stream's AsyncAPI document, with its
// payload resolved to the schema of table.v1.yaml it names.
type StreamMessage struct {
	Key      string // its key under components.messages
	Type     string // its name: the value of the payload's "type"
	Schema   string // the table.v1.yaml schema of its payload
	Payload  *openapi3.Schema
	Examples []any
}

// StreamMessages reads api.StreamDocument and returns the messages of its
// operation of the given action ("send": what the server sends; "receive":
// what it takes from the client), by type. A message whose payload is not a
// schema of table.v1.yaml fails t.
func StreamMessages(t testing.TB, action string) map[string]StreamMessage {
	t.Helper()
	raw, err := api.Documents.ReadFile(api.StreamDocument)
	if err != nil {
		t.Fatalf("apitest: %v", err)
	}
	var doc struct {
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
			Messages map[string]struct {
				Name    string `yaml:"name"`
				Payload struct {
					Ref string `yaml:"$ref"`
				} `yaml:"payload"`
				Examples []struct {
					Payload any `yaml:"payload"`
				} `yaml:"examples"`
			} `yaml:"messages"`
		} `yaml:"components"`
	}
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
	out := map[string]StreamMessage{}
	found := false
	for name, op := range doc.Operations {
		if op.Action != action {
			continue
		}
		found = true
		for _, ref := range op.Messages {
			// #/channels/<channel>/messages/<key> -> #/components/messages/<key>
			parts := strings.Split(strings.TrimPrefix(ref.Ref, "#/channels/"), "/messages/")
			if len(parts) != 2 {
				t.Fatalf("apitest: operation %s: message %q is not a channel's message", name, ref.Ref)
			}
			chRef := doc.Channels[parts[0]].Messages[parts[1]].Ref
			key := strings.TrimPrefix(chRef, "#/components/messages/")
			m, ok := doc.Components.Messages[key]
			if !ok {
				t.Fatalf("apitest: channel %s: message %q (%q) is not in components", parts[0], parts[1], chRef)
			}
			schema, ok := strings.CutPrefix(m.Payload.Ref, "table.v1.yaml#/components/schemas/")
			s := table.Components.Schemas[schema]
			if !ok || s == nil || s.Value == nil {
				t.Fatalf("apitest: message %s: payload %q is not a schema of table.v1.yaml", key, m.Payload.Ref)
			}
			sm := StreamMessage{Key: key, Type: m.Name, Schema: schema, Payload: s.Value}
			for _, ex := range m.Examples {
				sm.Examples = append(sm.Examples, ex.Payload)
			}
			out[m.Name] = sm
		}
	}
	if !found {
		t.Fatalf("apitest: %s has no %s operation", api.StreamDocument, action)
	}
	return out
}
