package docs

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// The reference reads the documents as parsed YAML nodes, not decoded maps,
// so that it shows paths, fields and examples in the order they are written.

// entry is one key of a mapping node with its value.
type entry struct {
	Key   string
	Value *yaml.Node
}

// deref returns the node an alias or a document node stands for.
func deref(n *yaml.Node) *yaml.Node {
	for n != nil {
		switch n.Kind {
		case yaml.AliasNode:
			n = n.Alias
		case yaml.DocumentNode:
			if len(n.Content) == 0 {
				return nil
			}
			n = n.Content[0]
		default:
			return n
		}
	}
	return nil
}

// entries lists the keys of a mapping node in document order; nil for any
// other node.
func entries(n *yaml.Node) []entry {
	n = deref(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	out := make([]entry, 0, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		out = append(out, entry{Key: n.Content[i].Value, Value: deref(n.Content[i+1])})
	}
	return out
}

// field returns the value of key in a mapping node, or nil.
func field(n *yaml.Node, key string) *yaml.Node {
	n = deref(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return deref(n.Content[i+1])
		}
	}
	return nil
}

// text returns the scalar value of key in a mapping node, or "".
func text(n *yaml.Node, key string) string {
	v := field(n, key)
	if v == nil || v.Kind != yaml.ScalarNode {
		return ""
	}
	return v.Value
}

// items returns the elements of a sequence node.
func items(n *yaml.Node) []*yaml.Node {
	n = deref(n)
	if n == nil || n.Kind != yaml.SequenceNode {
		return nil
	}
	out := make([]*yaml.Node, len(n.Content))
	for i, e := range n.Content {
		out[i] = deref(e)
	}
	return out
}

// scalars returns the scalar elements of a sequence node as written.
func scalars(n *yaml.Node) []string {
	var out []string
	for _, e := range items(n) {
		if e.Kind == yaml.ScalarNode {
			out = append(out, e.Value)
		}
	}
	return out
}

// showValue writes a node as a reader expects it in a table cell: a scalar
// as written, a list of scalars separated by commas, anything else as
// compact JSON.
func showValue(n *yaml.Node) string {
	n = deref(n)
	if n == nil {
		return ""
	}
	switch n.Kind {
	case yaml.ScalarNode:
		return n.Value
	case yaml.SequenceNode:
		if vs := scalars(n); len(vs) == len(n.Content) {
			return strings.Join(vs, ", ")
		}
	}
	js, err := nodeJSON(n, false)
	if err != nil {
		return fmt.Sprintf("(line %d: %v)", n.Line, err)
	}
	return js
}
