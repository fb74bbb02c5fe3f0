package docs

import (
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// httpMethods are the operations of a Path Item Object, in the order the
// page lists them within a path.
var httpMethods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// common fills what both kinds of document have: info, servers, tags.
func common(s *spec, format string) *page {
	info := field(s.root, "info")
	p := &page{
		Name:        s.name,
		File:        s.file,
		Format:      format,
		Title:       text(info, "title"),
		Version:     text(info, "version"),
		Description: markdown(text(info, "description"), 3),
	}
	for _, key := range []string{"contact", "license"} {
		var parts []string
		for _, e := range entries(field(info, key)) {
			parts = append(parts, e.Value.Value)
		}
		if len(parts) > 0 {
			p.Contact = append(p.Contact, key+": "+strings.Join(parts, ", "))
		}
	}
	for _, t := range items(field(s.root, "tags")) {
		p.Tags = append(p.Tags, tag{Name: text(t, "name"), Description: markdown(text(t, "description"), 5)})
	}
	return p
}

// openAPIPage builds the page of an OpenAPI document.
func (b *builder) openAPIPage(s *spec) (*page, error) {
	p := common(s, "OpenAPI "+text(s.root, "openapi"))
	for _, sv := range items(field(s.root, "servers")) {
		p.Servers = append(p.Servers, server{URL: text(sv, "url"), Description: markdown(text(sv, "description"), 5)})
	}
	for _, e := range entries(field(field(s.root, "components"), "securitySchemes")) {
		sc := securityScheme{Name: e.Key, Description: markdown(text(e.Value, "description"), 5)}
		for _, f := range entries(e.Value) {
			if f.Key != "description" {
				sc.Facts = append(sc.Facts, fact{Key: f.Key, Value: showValue(f.Value)})
			}
		}
		p.Security = append(p.Security, sc)
	}
	defaultSecurity := security(field(s.root, "security"))
	for _, pe := range entries(field(s.root, "paths")) {
		_, item, _, err := b.resolve(s, pe.Value)
		if err != nil {
			return nil, fmt.Errorf("path %s: %w", pe.Key, err)
		}
		for _, method := range httpMethods {
			on := field(item, method)
			if on == nil {
				continue
			}
			op, err := b.operation(s, pe.Key, method, item, on, defaultSecurity)
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w", strings.ToUpper(method), pe.Key, err)
			}
			p.Operations = append(p.Operations, op)
		}
	}
	for _, e := range entries(field(field(s.root, "components"), "schemas")) {
		v, err := b.schema(s, s, e.Value, 0)
		if err != nil {
			return nil, fmt.Errorf("schema %s: %w", e.Key, err)
		}
		v.Name, v.Anchor = e.Key, "schema-"+e.Key
		p.Schemas = append(p.Schemas, v)
	}
	return p, nil
}

// security lists the schemes a Security Requirement list names; "none" for
// an empty list, nil when there is no list.
func security(n *yaml.Node) []string {
	if n == nil {
		return nil
	}
	var out []string
	for _, req := range items(n) {
		var names []string
		for _, e := range entries(req) {
			name := e.Key
			if scopes := scalars(e.Value); len(scopes) > 0 {
				name += " (" + strings.Join(scopes, ", ") + ")"
			}
			names = append(names, name)
		}
		if len(names) == 0 {
			names = []string{"none"}
		}
		out = append(out, strings.Join(names, " and "))
	}
	if len(out) == 0 {
		return []string{"none"}
	}
	return out
}

func (b *builder) operation(s *spec, path, method string, item, n *yaml.Node, defaultSecurity []string) (operation, error) {
	op := operation{
		Method:      strings.ToUpper(method),
		Path:        path,
		Summary:     inlineHTML(text(n, "summary")),
		OperationID: text(n, "operationId"),
		Tags:        scalars(field(n, "tags")),
		Deprecated:  text(n, "deprecated") == "true",
		Description: markdown(text(n, "description"), 5),
		Security:    defaultSecurity,
	}
	op.Anchor = "op-" + op.OperationID
	if op.OperationID == "" {
		op.Anchor = "op-" + method + strings.NewReplacer("/", "-", "{", "", "}", "").Replace(path)
	}
	if sec := field(n, "security"); sec != nil {
		op.Security = security(sec)
	}
	// The path's parameters, then the operation's (which override them).
	var params []parameter
	for _, list := range []*yaml.Node{field(item, "parameters"), field(n, "parameters")} {
		for _, pn := range items(list) {
			ps, pr, _, err := b.resolve(s, pn)
			if err != nil {
				return op, err
			}
			schema, err := b.schema(s, ps, field(pr, "schema"), 0)
			if err != nil {
				return op, fmt.Errorf("parameter %s: %w", text(pr, "name"), err)
			}
			prm := parameter{
				Name:        text(pr, "name"),
				In:          text(pr, "in"),
				Required:    text(pr, "required") == "true",
				Schema:      schema,
				Description: markdown(text(pr, "description"), 5),
			}
			if ex := field(pr, "example"); ex != nil {
				prm.Example = showValue(ex)
			}
			params = slices.DeleteFunc(params, func(q parameter) bool { return q.Name == prm.Name && q.In == prm.In })
			params = append(params, prm)
		}
	}
	op.Parameters = params
	if rb := field(n, "requestBody"); rb != nil {
		rs, rn, _, err := b.resolve(s, rb)
		if err != nil {
			return op, fmt.Errorf("requestBody: %w", err)
		}
		content, err := b.content(s, rs, field(rn, "content"))
		if err != nil {
			return op, fmt.Errorf("requestBody: %w", err)
		}
		op.Body = &body{Required: text(rn, "required") == "true", Description: markdown(text(rn, "description"), 5), Content: content}
	}
	for _, re := range entries(field(n, "responses")) {
		rs, rn, ref, err := b.resolve(s, re.Value)
		if err != nil {
			return op, fmt.Errorf("response %s: %w", re.Key, err)
		}
		r := response{Status: re.Key, Class: statusClass(re.Key), Description: markdown(text(rn, "description"), 5)}
		if ref != "" {
			r.From = refFrom(ref)
		}
		for _, he := range entries(field(rn, "headers")) {
			hs, hn, _, err := b.resolve(rs, he.Value)
			if err != nil {
				return op, fmt.Errorf("response %s header %s: %w", re.Key, he.Key, err)
			}
			schema, err := b.schema(s, hs, field(hn, "schema"), 0)
			if err != nil {
				return op, fmt.Errorf("response %s header %s: %w", re.Key, he.Key, err)
			}
			r.Headers = append(r.Headers, header{Name: he.Key, Schema: schema, Description: markdown(text(hn, "description"), 5)})
		}
		if r.Content, err = b.content(s, rs, field(rn, "content")); err != nil {
			return op, fmt.Errorf("response %s: %w", re.Key, err)
		}
		op.Errors = errorCodes(re.Key, r.Content, op.Errors)
		op.Responses = append(op.Responses, r)
	}
	return op, nil
}

// statusClass is "2xx" for 200, "5xx" for 5XX, "default" for default.
func statusClass(status string) string {
	if status == "" || status[0] < '1' || status[0] > '5' {
		return "default"
	}
	return status[:1] + "xx"
}

// content lists the media types of a Content map (found in the document s)
// for the page of on.
func (b *builder) content(on *spec, s *spec, n *yaml.Node) ([]media, error) {
	var out []media
	for _, e := range entries(n) {
		schema, err := b.schema(on, s, field(e.Value, "schema"), 0)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e.Key, err)
		}
		exs, err := b.examples(s, e.Value, e.Key)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e.Key, err)
		}
		out = append(out, media{Type: e.Key, Schema: schema, Examples: exs})
	}
	return out, nil
}

// asyncAPIPage builds the page of an AsyncAPI 3 document: its operations,
// channels and messages, each message with its payload schema (shown in
// full, also when it is a schema of another document of the set) and its
// examples.
func (b *builder) asyncAPIPage(s *spec) (*page, error) {
	p := common(s, "AsyncAPI "+text(s.root, "asyncapi"))
	for _, e := range entries(field(s.root, "servers")) {
		u := text(e.Value, "protocol") + "://" + text(e.Value, "host") + text(e.Value, "pathname")
		p.Servers = append(p.Servers, server{URL: e.Key + ": " + u, Description: markdown(text(e.Value, "description"), 5)})
	}
	for _, e := range entries(field(field(s.root, "components"), "securitySchemes")) {
		sc := securityScheme{Name: e.Key, Description: markdown(text(e.Value, "description"), 5)}
		for _, f := range entries(e.Value) {
			if f.Key != "description" {
				sc.Facts = append(sc.Facts, fact{Key: f.Key, Value: showValue(f.Value)})
			}
		}
		p.Security = append(p.Security, sc)
	}
	messageLinks := func(list []*yaml.Node) ([]link, error) {
		var out []link
		for _, m := range list {
			_, mn, ref, err := b.resolve(s, m)
			if err != nil {
				return nil, err
			}
			key := refName(ref)
			label := text(mn, "title")
			if label == "" {
				label = text(mn, "name")
			}
			out = append(out, link{Text: label, Href: "#message-" + key})
		}
		return out, nil
	}
	for _, e := range entries(field(s.root, "operations")) {
		_, on, _, err := b.resolve(s, e.Value)
		if err != nil {
			return nil, fmt.Errorf("operation %s: %w", e.Key, err)
		}
		_, ch, ref, err := b.resolve(s, field(on, "channel"))
		if err != nil {
			return nil, fmt.Errorf("operation %s channel: %w", e.Key, err)
		}
		op := operation{
			Anchor:      "op-" + e.Key,
			OperationID: e.Key,
			Action:      text(on, "action"),
			Title:       text(on, "title"),
			Summary:     inlineHTML(text(on, "summary")),
			Description: markdown(text(on, "description"), 5),
			Address:     text(ch, "address"),
			Channel:     link{Text: refName(ref), Href: "#channel-" + refName(ref)},
		}
		if op.Messages, err = messageLinks(items(field(on, "messages"))); err != nil {
			return nil, fmt.Errorf("operation %s messages: %w", e.Key, err)
		}
		p.Operations = append(p.Operations, op)
	}
	for _, e := range entries(field(s.root, "channels")) {
		c := channel{
			Anchor:      "channel-" + e.Key,
			Key:         e.Key,
			Address:     text(e.Value, "address"),
			Title:       text(e.Value, "title"),
			Description: markdown(text(e.Value, "description"), 5),
		}
		var list []*yaml.Node
		for _, m := range entries(field(e.Value, "messages")) {
			list = append(list, m.Value)
		}
		var err error
		if c.Messages, err = messageLinks(list); err != nil {
			return nil, fmt.Errorf("channel %s messages: %w", e.Key, err)
		}
		p.Channels = append(p.Channels, c)
	}
	contentType := text(s.root, "defaultContentType")
	for _, e := range entries(field(field(s.root, "components"), "messages")) {
		ms, mn, _, err := b.resolve(s, e.Value)
		if err != nil {
			return nil, fmt.Errorf("message %s: %w", e.Key, err)
		}
		m := message{
			Anchor:      "message-" + e.Key,
			Key:         e.Key,
			Name:        text(mn, "name"),
			Title:       text(mn, "title"),
			Summary:     inlineHTML(text(mn, "summary")),
			Description: markdown(text(mn, "description"), 5),
			ContentType: text(mn, "contentType"),
		}
		if m.ContentType == "" {
			m.ContentType = contentType
		}
		payload := field(mn, "payload")
		if sf := text(payload, "schemaFormat"); sf != "" { // a Multi Format Schema Object
			m.SchemaFormat = sf
			payload = field(payload, "schema")
		}
		if m.Payload, m.PayloadRef, err = b.payload(s, ms, payload); err != nil {
			return nil, fmt.Errorf("message %s payload: %w", e.Key, err)
		}
		if m.Headers, m.HeadersRef, err = b.payload(s, ms, field(mn, "headers")); err != nil {
			return nil, fmt.Errorf("message %s headers: %w", e.Key, err)
		}
		for i, ex := range items(field(mn, "examples")) {
			name := text(ex, "name")
			if name == "" {
				name = fmt.Sprintf("example %d", i+1)
			}
			value, err := exampleValue(field(ex, "payload"), m.ContentType)
			if err != nil {
				return nil, fmt.Errorf("message %s example %s: %w", e.Key, name, err)
			}
			m.Examples = append(m.Examples, example{Name: name, Summary: text(ex, "summary"), Value: value, node: field(ex, "payload")})
		}
		for _, row := range errorCodes("", []media{{Type: m.ContentType, Examples: m.Examples}}, nil) {
			row.Status = m.Title // on the stream, the message that carries the code
			p.Errors = append(p.Errors, row)
		}
		p.Messages = append(p.Messages, m)
	}
	return p, nil
}

// payload builds the view of a message's payload (or headers) schema. A
// named schema (of this document or another of the set) is shown in full,
// with the link to its place, so that the message reads on its own.
func (b *builder) payload(on *spec, s *spec, n *yaml.Node) (*schemaView, *link, error) {
	if n == nil {
		return nil, nil, nil
	}
	v, err := b.schema(on, s, n, 0)
	if err != nil || v.Ref == nil {
		return v, nil, err
	}
	ts, tn, _, err := b.resolve(s, n)
	if err != nil {
		return nil, nil, err
	}
	full, err := b.schema(on, ts, tn, 0) // tn has no $ref: its own fields
	if err != nil {
		return nil, nil, err
	}
	return full, v.Ref, nil
}
