package api_test

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// gwWalkSchemas calls f on s and every schema below it (properties, items,
// allOf, oneOf, anyOf), each once, with the name of the property that holds
// it ("" at the root and for members).
func gwWalkSchemas(ref *openapi3.SchemaRef, prop string, seen map[*openapi3.Schema]bool, f func(prop string, s *openapi3.Schema)) {
	if ref == nil || ref.Value == nil || seen[ref.Value] {
		return
	}
	s := ref.Value
	seen[s] = true
	f(prop, s)
	for _, name := range gwSortedKeys(s.Properties) {
		gwWalkSchemas(s.Properties[name], name, seen, f)
	}
	gwWalkSchemas(s.Items, prop, seen, f)
	for _, list := range []openapi3.SchemaRefs{s.AllOf, s.OneOf, s.AnyOf} {
		for _, m := range list {
			gwWalkSchemas(m, prop, seen, f)
		}
	}
}

// gwEnvelopeEnum reports whether an enum in an answer is one that stays
// closed on purpose: the envelope's status (ok or error) and a stream
// message's one-value type, which say which shape the client reads.
func gwEnvelopeEnum(prop string, s *openapi3.Schema) bool {
	values := gwEnumStrings(s)
	switch prop {
	case "status":
		return slices.Equal(values, []string{"ok"}) || slices.Equal(values, []string{"error"})
	case "type":
		return len(values) == 1
	}
	return false
}

// No answer of the game's documents holds a closed enum, but for the
// envelope's status and a message's type: codes, statuses, phases and kinds
// are open strings whose known values are in x-extensible-enum and in the
// description, so that a generated client survives an addition. Requests keep
// their enums (they stay strict).
func TestAnswersAreOpen(t *testing.T) {
	t.Parallel()
	for _, name := range []string{gwGameDoc, "table.v1.yaml"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			doc := gwLoadDocument(t, name)
			seen := map[*openapi3.Schema]bool{}
			open := 0
			check := func(where string) func(prop string, s *openapi3.Schema) {
				return func(prop string, s *openapi3.Schema) {
					if len(s.Enum) > 0 && !gwEnvelopeEnum(prop, s) {
						t.Errorf("%s: %s is a closed enum %v in an answer", where, prop, s.Enum)
					}
					known := gwKnownStrings(t, s)
					if known == nil {
						return
					}
					open++
					if !s.Type.Is("string") {
						t.Errorf("%s: %s: x-extensible-enum on a %v", where, prop, s.Type)
					}
					for _, v := range known {
						if !strings.Contains(s.Description, v) {
							t.Errorf("%s: %s: the description does not name the known value %s", where, prop, v)
						}
					}
				}
			}
			for _, path := range doc.Paths.Keys() {
				for method, op := range doc.Paths.Value(path).Operations() {
					for status, r := range op.Responses.Map() {
						for mime, mt := range r.Value.Content {
							gwWalkSchemas(mt.Schema, "", seen, check(method+" "+path+" "+status+" "+mime))
						}
					}
				}
			}
			// The stream's messages (table.v1.yaml's components, named by the
			// AsyncAPI document) are answers too.
			for _, c := range gwSortedKeys(doc.Components.Schemas) {
				if strings.HasSuffix(c, "Event") {
					gwWalkSchemas(doc.Components.Schemas[c], "", seen, check("components "+c))
				}
			}
			if open == 0 {
				t.Fatalf("no open set found: the walk reached no answer")
			}
		})
	}
}

// Requests stay strict: the back office's status filter and the table's lang
// parameter keep their closed enums.
func TestRequestsKeepTheirEnums(t *testing.T) {
	t.Parallel()
	game := gwLoadDocument(t, gwGameDoc)
	for _, c := range []string{"TransactionsRequest", "ExportRequest"} {
		if got := gwEnumStrings(gwProperty(t, gwComponent(t, game, c), "status")); !slices.Equal(got, gwSortedSet("delivered", "pending", "exhausted", "refused")) {
			t.Errorf("%s.status enum = %v", c, got)
		}
	}
	table := gwLoadDocument(t, "table.v1.yaml")
	n := 0
	for _, path := range table.Paths.Keys() {
		for _, op := range table.Paths.Value(path).Operations() {
			for _, p := range op.Parameters {
				if p.Value != nil && p.Value.Name == "lang" {
					n++
					if got := gwEnumStrings(p.Value.Schema.Value); !slices.Equal(got, gwSortedSet("pt", "en", "es")) {
						t.Errorf("%s lang enum = %v", path, got)
					}
				}
			}
		}
	}
	if n == 0 {
		t.Error("no lang parameter found")
	}
}

// Every route of the game and table documents declares 5XX and default with
// any body of any type: a proxy's HTML page decodes as a declared answer.
func TestProxyAnswersDeclared(t *testing.T) {
	t.Parallel()
	for _, name := range []string{gwGameDoc, "table.v1.yaml"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			doc := gwLoadDocument(t, name)
			for _, path := range doc.Paths.Keys() {
				for method, op := range doc.Paths.Value(path).Operations() {
					for _, status := range []string{"5XX", "default"} {
						r := op.Responses.Value(status)
						if r == nil || r.Value == nil {
							t.Errorf("%s %s: no %s", method, path, status)
							continue
						}
						gwAnyBody(t, path, r.Value)
					}
				}
			}
		})
	}
}

// error_reason names a refusal whose contract code is broader than its cause:
// an open string, sent next to error_code on the contract's routes' 400, never
// an error_code of either direction (GEN-9, GEN-10 keep those sets as they
// are). CURRENCY_NOT_ENABLED is its one known value, shown on both routes with
// the contract's INTERNAL_ERROR.
// Rule GEN-9 GEN-10 GAME-10 GAME-25
func TestErrorReason(t *testing.T) {
	t.Parallel()
	doc := gwLoadDocument(t, gwGameDoc)
	reason := gwComponent(t, doc, "ErrorReason")
	if reason.Enum != nil || !reason.Type.Is("string") {
		t.Fatalf("ErrorReason must be an open string")
	}
	known := gwKnownStrings(t, reason)
	if !slices.Equal(known, []string{"CURRENCY_NOT_ENABLED"}) {
		t.Errorf("ErrorReason x-extensible-enum = %v", known)
	}
	for _, r := range known {
		if slices.Contains(gwContractGameCodes, r) || slices.Contains(gwContractWalletCodes, r) {
			t.Errorf("error_reason %s is also an error_code", r)
		}
	}
	for _, path := range []string{"/v1/games", "/v1/launch"} {
		resp := gwResponse(t, doc, path, "400")
		s := resp.Content.Get("application/json").Schema.Value
		if p := s.Properties["error_reason"]; p == nil || p.Value != reason || slices.Contains(s.Required, "error_reason") {
			t.Errorf("%s 400: error_reason must be the optional ErrorReason", path)
		}
		ex := resp.Content.Get("application/json").Examples["CURRENCY_NOT_ENABLED"]
		if ex == nil {
			t.Errorf("%s 400: no CURRENCY_NOT_ENABLED example", path)
			continue
		}
		v := gwJSONValue(t, ex.Value.Value).(map[string]any)
		if v["error_code"] != "INTERNAL_ERROR" || v["error_reason"] != "CURRENCY_NOT_ENABLED" {
			t.Errorf("%s 400 CURRENCY_NOT_ENABLED example = %v", path, v)
		}
		gwExpect(t, s, map[string]any{"status": "error", "error_code": "INTERNAL_ERROR", "error_reason": "A_LATER_REASON"}, true)
	}
	if got := slices.Collect(maps.Keys(gwComponent(t, doc, "GameError").Properties)); !slices.Contains(got, "error_reason") {
		t.Errorf("GameError has no error_reason")
	}
}
