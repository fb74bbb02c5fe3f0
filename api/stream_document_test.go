package api_test

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/crashstudio/crashgame/internal/apitest"
)

// The stream's AsyncAPI document names every message of the stream, each
// with a payload schema of table.v1.yaml: what the server sends is exactly
// table.v1.yaml's StreamEvent union, what the client sends its ClientMessage
// union; each message's name is its payload's type, and each example
// validates against its payload.
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
				if len(m.Examples) == 0 {
					t.Errorf("message %s has no example", m.Key)
				}
				for _, ex := range m.Examples {
					raw, _ := json.Marshal(ex)
					var v any
					_ = json.Unmarshal(raw, &v)
					if err := m.Payload.VisitJSON(v); err != nil {
						t.Errorf("message %s: example %s does not validate: %v", m.Key, raw, err)
					}
				}
			}
		})
	}
}
