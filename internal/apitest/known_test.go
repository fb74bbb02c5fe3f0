package apitest

import (
	"encoding/json"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// KnownValues fails on a value an open set does not list, wherever it sits in
// the body, and accepts the listed ones: what the closed enums caught in the
// game's own tests before the documents' answers were opened.
func TestKnownValues(t *testing.T) {
	t.Parallel()
	const doc = `{
	  "type": "object",
	  "properties": {
	    "error_code": {"type": "string", "x-extensible-enum": ["A_CODE", "B_CODE"]},
	    "free": {"type": "string"},
	    "items": {"type": "array", "items": {"type": "object", "properties": {
	      "kind": {"type": "string", "x-extensible-enum": ["win", "rollback"]}}}},
	    "either": {"oneOf": [
	      {"type": "object", "required": ["n"], "properties": {"n": {"type": "integer"}}},
	      {"type": "object", "required": ["s"], "properties": {"s": {"type": "string", "x-extensible-enum": ["x"]}}}
	    ]}
	  }
	}`
	var s openapi3.Schema
	if err := json.Unmarshal([]byte(doc), &s); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, body string
		ok         bool
	}{
		{"known code", `{"error_code":"A_CODE","free":"anything"}`, true},
		{"unknown code", `{"error_code":"NEW_CODE"}`, false},
		{"known kinds in an array", `{"items":[{"kind":"win"},{"kind":"rollback"}]}`, true},
		{"unknown kind in an array", `{"items":[{"kind":"win"},{"kind":"bet"}]}`, false},
		{"member without an open set", `{"either":{"n":1}}`, true},
		{"member with a known value", `{"either":{"s":"x"}}`, true},
		{"member with an unknown value", `{"either":{"s":"y"}}`, false},
		{"no open set touched", `{"free":"NEW_CODE"}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var v any
			if err := json.Unmarshal([]byte(tt.body), &v); err != nil {
				t.Fatal(err)
			}
			err := KnownValues(&s, v)
			if tt.ok && err != nil {
				t.Errorf("refused: %v", err)
			}
			if !tt.ok && err == nil {
				t.Errorf("accepted %s, want refused", tt.body)
			}
		})
	}
}
