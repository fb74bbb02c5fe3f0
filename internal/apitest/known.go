package apitest

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"

	"github.com/getkin/kin-openapi/openapi3"
)

// ExtensibleEnum is the extension that lists the known values of an open
// set (a string schema without enum, so that a client accepts a value added
// later).
const ExtensibleEnum = "x-extensible-enum"

// KnownValues reports every string of v that an open set of s does not list
// in x-extensible-enum. The published documents keep answers open so that a
// generated client survives an addition; the game's own tests must still fail
// on a value the document does not name. v is decoded JSON (map[string]any,
// []any, string...). Of a oneOf or anyOf, the members v validates against
// are checked, and one of them must be clean.
func KnownValues(s *openapi3.Schema, v any) error {
	var errs []error
	known(s, v, "", &errs)
	return errors.Join(errs...)
}

func known(s *openapi3.Schema, v any, at string, errs *[]error) {
	if s == nil {
		return
	}
	for _, sub := range s.AllOf {
		known(sub.Value, v, at, errs)
	}
	for _, union := range [][]openapi3.SchemaRefs{{s.OneOf}, {s.AnyOf}} {
		members := union[0]
		if len(members) == 0 {
			continue
		}
		var best []error
		matched := false
		for _, m := range members {
			if m.Value == nil || m.Value.VisitJSON(v) != nil {
				continue
			}
			var e []error
			known(m.Value, v, at, &e)
			if !matched || len(e) < len(best) {
				best, matched = e, true
			}
		}
		*errs = append(*errs, best...)
	}
	switch v := v.(type) {
	case string:
		if raw, ok := s.Extensions[ExtensibleEnum]; ok {
			list, _ := raw.([]any)
			if !slices.Contains(list, any(v)) {
				*errs = append(*errs, fmt.Errorf("%s: %q is not among the known values %v (%s)", where(at), v, list, ExtensibleEnum))
			}
		}
	case map[string]any:
		for name, p := range s.Properties {
			if pv, ok := v[name]; ok && p != nil {
				known(p.Value, pv, at+"/"+name, errs)
			}
		}
	case []any:
		if s.Items != nil {
			for i, item := range v {
				known(s.Items.Value, item, at+"/"+strconv.Itoa(i), errs)
			}
		}
	}
}

func where(at string) string {
	if at == "" {
		return "the body"
	}
	return at
}

// ownAnswer holds an answer of the game's own routes to what the document
// promises beyond its schemas: the status is one the route lists by number
// (a range such as 5XX, and default, stand for what a proxy in front may
// answer, never the game), and every value of an open set in its JSON body
// is one of the known values (KnownValues).
func ownAnswer(op *openapi3.Operation, status int, header http.Header, body []byte) error {
	r := op.Responses.Value(strconv.Itoa(status))
	if r == nil || r.Value == nil {
		return fmt.Errorf("status %d is not listed by number for the route (a 5XX or default answer is a proxy's, never the game's)", status)
	}
	mt := r.Value.Content.Get(header.Get("Content-Type"))
	if mt == nil || mt.Schema == nil || mt.Schema.Value == nil || !json.Valid(body) {
		return nil
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return fmt.Errorf("read the body: %w", err)
	}
	return KnownValues(mt.Schema.Value, v)
}
