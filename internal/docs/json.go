package docs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"gopkg.in/yaml.v3"
)

// toJSON converts a YAML document to indented JSON, keeping the document's
// key order (a reader finds paths before components, as in the YAML) and its
// keys as written: a status code 200 becomes the key "200". Integers stay
// integers. A key given twice, a merge key or a value JSON cannot hold (an
// infinite float) is an error.
func toJSON(raw []byte) ([]byte, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(raw, &root); err != nil {
		return nil, err
	}
	var compact bytes.Buffer
	if err := writeJSON(&compact, &root); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, compact.Bytes(), "", "  "); err != nil {
		return nil, fmt.Errorf("indent: %w", err)
	}
	return out.Bytes(), nil
}

// nodeJSON is toJSON for one node of a parsed document (an example's value),
// indented or compact.
func nodeJSON(n *yaml.Node, indent bool) (string, error) {
	var compact bytes.Buffer
	if err := writeJSON(&compact, n); err != nil {
		return "", err
	}
	if !indent {
		return compact.String(), nil
	}
	var out bytes.Buffer
	if err := json.Indent(&out, compact.Bytes(), "", "  "); err != nil {
		return "", fmt.Errorf("indent: %w", err)
	}
	return out.String(), nil
}

func writeJSON(buf *bytes.Buffer, n *yaml.Node) error {
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			buf.WriteString("null")
			return nil
		}
		return writeJSON(buf, n.Content[0])
	case yaml.AliasNode:
		return writeJSON(buf, n.Alias)
	case yaml.MappingNode:
		buf.WriteByte('{')
		seen := make(map[string]bool, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode || k.Tag == "!!merge" {
				return fmt.Errorf("line %d: only plain keys are supported", k.Line)
			}
			if seen[k.Value] {
				return fmt.Errorf("line %d: key %q given twice", k.Line, k.Value)
			}
			seen[k.Value] = true
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeScalar(buf, k.Value); err != nil {
				return err
			}
			buf.WriteByte(':')
			if err := writeJSON(buf, v); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
		return nil
	case yaml.SequenceNode:
		buf.WriteByte('[')
		for i, e := range n.Content {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeJSON(buf, e); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
		return nil
	case yaml.ScalarNode:
		var v any
		if err := n.Decode(&v); err != nil {
			return fmt.Errorf("line %d: %w", n.Line, err)
		}
		if err := writeScalar(buf, v); err != nil {
			return fmt.Errorf("line %d: %w", n.Line, err)
		}
		return nil
	default:
		return errors.New("unknown YAML node kind")
	}
}

// writeScalar writes v as JSON without escaping <, > and &: the JSON is read
// by people and programs, never embedded in HTML.
func writeScalar(buf *bytes.Buffer, v any) error {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	buf.Truncate(buf.Len() - 1) // Encode's newline
	return nil
}
