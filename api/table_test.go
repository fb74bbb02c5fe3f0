package api_test

import (
	"cmp"
	"context"
	"maps"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/crashstudio/crashgame/api"
)

// loadTable loads table.v1.yaml from the embedded documents, the same bytes the
// programs serve.
func loadTable(t *testing.T) *openapi3.T {
	t.Helper()
	data, err := api.Documents.ReadFile("table.v1.yaml")
	if err != nil {
		t.Fatalf("read table.v1.yaml: %v", err)
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(data)
	if err != nil {
		t.Fatalf("load table.v1.yaml: %v", err)
	}
	return doc
}

func TestTableDocumentValidates(t *testing.T) {
	doc := loadTable(t)
	if doc.OpenAPI != "3.0.3" {
		t.Errorf("openapi = %q, want 3.0.3", doc.OpenAPI)
	}
	ctx := context.Background()
	err := doc.Validate(ctx,
		openapi3.EnableExamplesValidation(),
		openapi3.EnableSchemaPatternValidation(),
		openapi3.EnableSchemaDefaultsValidation(),
		openapi3.EnableSchemaFormatValidation(),
	)
	if err != nil {
		t.Fatalf("table.v1.yaml does not validate: %v", err)
	}
}

// operations lists every operation of the document as "METHOD path".
func operations(doc *openapi3.T) map[string]*openapi3.Operation {
	out := map[string]*openapi3.Operation{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			out[method+" "+path] = op
		}
	}
	return out
}

// walkSchemas calls fn once for every schema reachable from the document:
// components, parameters, headers, request and response bodies, and everything
// nested in them.
func walkSchemas(doc *openapi3.T, fn func(where string, s *openapi3.Schema)) {
	seen := map[*openapi3.Schema]bool{}
	var walk func(where string, ref *openapi3.SchemaRef)
	walk = func(where string, ref *openapi3.SchemaRef) {
		if ref == nil || ref.Value == nil || seen[ref.Value] {
			return
		}
		s := ref.Value
		seen[s] = true
		fn(where, s)
		for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
			walk(where+"."+name, s.Properties[name])
		}
		walk(where+"[]", s.Items)
		walk(where+"{}", s.AdditionalProperties.Schema)
		walk(where+"!", s.Not)
		for i, sub := range s.AllOf {
			walk(where+".allOf"+strconv.Itoa(i), sub)
		}
		for i, sub := range s.AnyOf {
			walk(where+".anyOf"+strconv.Itoa(i), sub)
		}
		for i, sub := range s.OneOf {
			walk(where+".oneOf"+strconv.Itoa(i), sub)
		}
	}
	content := func(where string, c openapi3.Content) {
		for mt, m := range c {
			walk(where+" "+mt, m.Schema)
		}
	}
	params := func(where string, ps openapi3.Parameters) {
		for _, p := range ps {
			if p.Value != nil {
				walk(where+" param "+p.Value.Name, p.Value.Schema)
				content(where+" param "+p.Value.Name, p.Value.Content)
			}
		}
	}
	headers := func(where string, hs openapi3.Headers) {
		for name, h := range hs {
			if h.Value != nil {
				walk(where+" header "+name, h.Value.Schema)
			}
		}
	}
	c := doc.Components
	for name, s := range c.Schemas {
		walk("#/components/schemas/"+name, s)
	}
	for name, p := range c.Parameters {
		params("#/components/parameters/"+name, openapi3.Parameters{p})
	}
	headers("#/components/headers", c.Headers)
	for name, r := range c.Responses {
		headers("#/components/responses/"+name, r.Value.Headers)
		content("#/components/responses/"+name, r.Value.Content)
	}
	for name, rb := range c.RequestBodies {
		content("#/components/requestBodies/"+name, rb.Value.Content)
	}
	for key, op := range operations(doc) {
		params(key, op.Parameters)
		if op.RequestBody != nil {
			content(key+" request", op.RequestBody.Value.Content)
		}
		for status, r := range op.Responses.Map() {
			headers(key+" "+status, r.Value.Headers)
			content(key+" "+status, r.Value.Content)
		}
	}
	for path, item := range doc.Paths.Map() {
		params(path, item.Parameters)
	}
}

// effective returns the schema whose constraints apply to s: s itself, or the
// single allOf member when s only wraps a $ref to add a description.
func effective(s *openapi3.Schema) *openapi3.Schema {
	if s.Type.IsEmpty() && len(s.AllOf) == 1 && s.AllOf[0].Value != nil {
		return s.AllOf[0].Value
	}
	return s
}

func TestTableHasNoFloats(t *testing.T) {
	doc := loadTable(t)
	n := 0
	walkSchemas(doc, func(where string, s *openapi3.Schema) {
		n++
		if s.Type.Permits("number") && !s.Type.IsEmpty() {
			t.Errorf("%s: type number; every number of the player API is an integer", where)
		}
		if s.Format == "float" || s.Format == "double" {
			t.Errorf("%s: format %s", where, s.Format)
		}
		if s.Type.Is("integer") && s.Format != "int64" && s.Format != "int32" {
			t.Errorf("%s: integer without format int32 or int64", where)
		}
	})
	if n < 50 {
		t.Fatalf("walked only %d schemas; the walk is broken", n)
	}

	// And no example carries a fractional number either.
	var check func(where string, v any)
	check = func(where string, v any) {
		switch x := v.(type) {
		case float64:
			if x != math.Trunc(x) {
				t.Errorf("%s: example number %v has a fraction", where, x)
			}
		case map[string]any:
			for k, e := range x {
				check(where+"."+k, e)
			}
		case []any:
			for i, e := range x {
				check(where+"["+strconv.Itoa(i)+"]", e)
			}
		}
	}
	for name, e := range doc.Components.Examples {
		check("#/components/examples/"+name, e.Value.Value)
	}
	walkSchemas(doc, func(where string, s *openapi3.Schema) { check(where, s.Example) })
	for key, op := range operations(doc) {
		var bodies []openapi3.Content
		if op.RequestBody != nil {
			bodies = append(bodies, op.RequestBody.Value.Content)
		}
		for _, r := range op.Responses.Map() {
			bodies = append(bodies, r.Value.Content)
		}
		for _, c := range bodies {
			for _, m := range c {
				check(key, m.Example)
				for name, e := range m.Examples {
					check(key+" "+name, e.Value.Value)
				}
			}
		}
	}
}

func TestTableMultipliersAreHundredths(t *testing.T) {
	doc := loadTable(t)
	schemas := doc.Components.Schemas
	for name, want := range map[string]float64{"Multiplier": 100, "AutoCashout": 101, "MaxMultiplier": 101} {
		s := schemas[name]
		if s == nil {
			t.Errorf("schema %s missing", name)
			continue
		}
		if !s.Value.Type.Is("integer") || s.Value.Format != "int64" || s.Value.Min == nil || *s.Value.Min != want {
			t.Errorf("schema %s: want integer int64 minimum %v", name, want)
		}
	}
	wantMin := map[string]float64{
		"multiplier":     100,
		"crash_point":    100,
		"max_multiplier": 101,
		"auto_cashout":   101,
	}
	found := map[string]int{}
	walkSchemas(doc, func(where string, s *openapi3.Schema) {
		for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
			want, ok := wantMin[name]
			if !ok {
				continue
			}
			found[name]++
			p := effective(s.Properties[name].Value)
			if !p.Type.Is("integer") || p.Format != "int64" {
				t.Errorf("%s.%s: a multiplier is an int64 in hundredths", where, name)
			}
			if p.Min == nil {
				t.Errorf("%s.%s: no minimum, want %v", where, name, want)
			} else if *p.Min != want {
				t.Errorf("%s.%s: minimum %v, want %v", where, name, *p.Min, want)
			}
		}
	})
	for name := range wantMin {
		if found[name] == 0 {
			t.Errorf("no property %s found; the check is broken", name)
		}
	}
}

func TestTableMoneyIsCents(t *testing.T) {
	doc := loadTable(t)
	money := map[string]float64{
		"amount": 1, "balance": 0, "payout": 0,
		"min_bet": 0, "max_bet": 0, "max_win": 0,
	}
	walkSchemas(doc, func(where string, s *openapi3.Schema) {
		for name, ref := range s.Properties {
			want, ok := money[name]
			if !ok {
				continue
			}
			if name == "amount" && (strings.HasSuffix(where, "ReplayMovement") || strings.HasSuffix(where, ".movements[]")) {
				want = 0 // a wallet call of a bet: a zero_win moves 0
			}
			p := effective(ref.Value)
			if !p.Type.Is("integer") || p.Format != "int64" || p.Min == nil || *p.Min != want {
				t.Errorf("%s.%s: money is Cents, an int64 with minimum %v", where, name, want)
			}
		}
	})
}

// The codes of the operator integration (contract "Errors"), both directions.
var (
	walletCodes = []string{
		"INSUFFICIENT_FUNDS", "TOKEN_EXPIRED", "TOKEN_INVALID", "PLAYER_NOT_FOUND",
		"BET_NOT_FOUND", "CURRENCY_MISMATCH", "PLAYER_BLOCKED", "INTERNAL_ERROR",
		"INVALID_SIGNATURE", "DUPLICATE_TRANSACTION",
	}
	gameCodes = []string{
		"MISSING_GAME_ID", "MISSING_TOKEN", "MISSING_PLAYER_ID", "INVALID_TOKEN",
		"DEMO_NOT_AVAILABLE", "GAME_NOT_FOUND", "INVALID_SIGNATURE", "INTERNAL_ERROR",
	}
)

// errorCodes returns the known codes of ErrorCode (x-extensible-enum: an open
// set since 1.1.0) and the HTTP status its description's table gives each code.
func errorCodes(t *testing.T, doc *openapi3.T) ([]string, map[string]string) {
	t.Helper()
	ref := doc.Components.Schemas["ErrorCode"]
	if ref == nil {
		t.Fatal("schema ErrorCode missing")
	}
	if ref.Value.Enum != nil {
		t.Fatalf("ErrorCode must be an open string, not the closed enum %v", ref.Value.Enum)
	}
	var codes []string
	known, _ := ref.Value.Extensions["x-extensible-enum"].([]any)
	for _, v := range known {
		codes = append(codes, v.(string))
	}
	row := regexp.MustCompile(`(?m)^\| ([A-Z_]+) \| ([0-9]{3}) \|`)
	status := map[string]string{}
	for _, m := range row.FindAllStringSubmatch(ref.Value.Description, -1) {
		status[m[1]] = m[2]
	}
	return codes, status
}

func TestTableErrorCodesAreTheTablesOwn(t *testing.T) {
	doc := loadTable(t)
	codes, status := errorCodes(t, doc)
	if len(codes) < 15 {
		t.Fatalf("ErrorCode has %d codes", len(codes))
	}
	for _, c := range codes {
		if slices.Contains(walletCodes, c) && c != "INSUFFICIENT_FUNDS" {
			t.Errorf("%s is a wallet-direction code; the player codes are their own set", c)
		}
		if slices.Contains(gameCodes, c) {
			t.Errorf("%s is a game-direction code; the player codes are their own set", c)
		}
		if status[c] == "" {
			t.Errorf("%s is not described in ErrorCode's table", c)
		}
	}
	for c := range status {
		if !slices.Contains(codes, c) {
			t.Errorf("ErrorCode's table describes %s, which is not in x-extensible-enum", c)
		}
	}
	// The Go names of the codes (x-enum-varnames) follow the known codes, one for one.
	names, _ := doc.Components.Schemas["ErrorCode"].Value.Extensions["x-enum-varnames"].([]any)
	if len(names) != len(codes) {
		t.Errorf("ErrorCode: %d x-enum-varnames for %d codes", len(names), len(codes))
	}
	for i := 0; i < len(names) && i < len(codes); i++ {
		var want strings.Builder
		for _, w := range strings.Split(codes[i], "_") {
			want.WriteString(w[:1] + strings.ToLower(w[1:]))
		}
		if names[i] != want.String() {
			t.Errorf("ErrorCode x-enum-varnames[%d] = %v, want %s for %s", i, names[i], want.String(), codes[i])
		}
	}
	// Error carries the table's codes, and ErrorEvent the same.
	for _, name := range []string{"Error", "ErrorEvent"} {
		p := doc.Components.Schemas[name].Value.Properties["error_code"]
		if p == nil || p.Ref != "#/components/schemas/ErrorCode" {
			t.Errorf("%s.error_code must be ErrorCode", name)
		}
	}
}

// Every error example sits under the status its code's row names, and every code
// is shown by at least one example.
func TestTableErrorExamplesMatchTheirStatus(t *testing.T) {
	doc := loadTable(t)
	codes, status := errorCodes(t, doc)
	used := map[string]bool{}
	for key, op := range operations(doc) {
		for code, r := range op.Responses.Map() {
			n, err := strconv.Atoi(code)
			if err != nil || n < 400 {
				continue
			}
			m := r.Value.Content.Get("application/json")
			if m == nil || m.Schema == nil || m.Schema.Ref != "#/components/schemas/Error" {
				t.Errorf("%s %s: an error response is an Error in application/json", key, code)
				continue
			}
			for name, e := range m.Examples {
				body, _ := e.Value.Value.(map[string]any)
				ec, _ := body["error_code"].(string)
				used[ec] = true
				if status[ec] != code {
					t.Errorf("%s %s example %s: %s belongs to HTTP %s", key, code, name, ec, status[ec])
				}
			}
		}
	}
	for _, c := range codes {
		if !used[c] {
			t.Errorf("no response example shows %s", c)
		}
	}
}

func TestTableSecurity(t *testing.T) {
	doc := loadTable(t)
	scheme := doc.Components.SecuritySchemes["Bearer"]
	if scheme == nil || scheme.Value.Type != "http" || scheme.Value.Scheme != "bearer" {
		t.Fatal("security scheme Bearer must be http bearer")
	}
	if len(doc.Security) != 1 || doc.Security[0]["Bearer"] == nil {
		t.Fatalf("the document's default security must be Bearer, got %v", doc.Security)
	}
	// The player's routes live under /api/v1/; the public commitments of
	// the hash chains, readable by anyone without a session, under
	// /fairness/; what an operator's link opens (its last segment is the
	// credential), under /support/ and /exports/.
	public := map[string]bool{"createSession": true, "openStream": true,
		"listChains": true, "getChain": true, "listChainRounds": true,
		"getSupportPage": true, "getSupportRound": true, "getTransactionsExport": true}
	prefix := map[string]string{"listChains": "/fairness/", "getChain": "/fairness/", "listChainRounds": "/fairness/",
		"getSupportPage": "/support/", "getSupportRound": "/support/", "getTransactionsExport": "/exports/"}
	for key, op := range operations(doc) {
		path := strings.SplitN(key, " ", 2)[1]
		want := cmp.Or(prefix[op.OperationID], "/api/v1/")
		if !strings.HasPrefix(path, want) {
			t.Errorf("%s: lives under %s (a player's route under /api/v1/, a chain's public document under /fairness/, a link's page under /support/ or /exports/)", key, want)
		}
		if op.OperationID == "" {
			t.Errorf("%s: no operationId", key)
			continue
		}
		switch {
		case public[op.OperationID]:
			if op.Security == nil || len(*op.Security) != 0 {
				t.Errorf("%s: must declare security: [] (the sid, the stream's hello or the link is the credential; a chain is public)", key)
			}
		case op.Security != nil:
			t.Errorf("%s: must use the default Bearer security", key)
		default:
			if op.Responses.Status(401) == nil {
				t.Errorf("%s: a Bearer route documents its 401", key)
			}
		}
		for _, p := range op.Parameters {
			if strings.Contains(strings.ToLower(p.Value.Name), "session") || strings.Contains(strings.ToLower(p.Value.Name), "token") {
				t.Errorf("%s: parameter %s: the session never travels in a URL", key, p.Value.Name)
			}
		}
	}
}

func TestTableEveryBodyHasExamples(t *testing.T) {
	doc := loadTable(t)
	for key, op := range operations(doc) {
		if op.RequestBody != nil {
			for mt, m := range op.RequestBody.Value.Content {
				if m.Example == nil && len(m.Examples) == 0 {
					t.Errorf("%s request %s: no example", key, mt)
				}
			}
		}
		for code, r := range op.Responses.Map() {
			if len(r.Value.Content) == 0 && code != "101" {
				t.Errorf("%s %s: no body", key, code)
			}
			for mt, m := range r.Value.Content {
				if m.Example == nil && len(m.Examples) == 0 {
					t.Errorf("%s %s %s: no example", key, code, mt)
				}
			}
		}
	}
}

func TestTableStreamMessages(t *testing.T) {
	doc := loadTable(t)
	for _, tc := range []struct {
		union string
		types []string
	}{
		{"StreamEvent", []string{"round.betting", "round.flying", "round.crashed", "bets", "bet", "balance", "ping", "pong", "error"}},
		{"ClientMessage", []string{"hello", "ping", "pong"}},
	} {
		ref := doc.Components.Schemas[tc.union]
		if ref == nil {
			t.Errorf("schema %s missing", tc.union)
			continue
		}
		u := ref.Value
		if u.Discriminator == nil || u.Discriminator.PropertyName != "type" {
			t.Errorf("%s: discriminator must be type", tc.union)
			continue
		}
		keys := slices.Collect(maps.Keys(u.Discriminator.Mapping))
		sort.Strings(keys)
		want := slices.Clone(tc.types)
		sort.Strings(want)
		if !slices.Equal(keys, want) {
			t.Errorf("%s: mapping %v, want %v", tc.union, keys, want)
		}
		if len(u.OneOf) != len(tc.types) {
			t.Errorf("%s: %d oneOf members, want %d", tc.union, len(u.OneOf), len(tc.types))
		}
		for key, target := range u.Discriminator.Mapping {
			var member *openapi3.SchemaRef
			for _, m := range u.OneOf {
				if m.Ref == target.Ref {
					member = m
				}
			}
			if member == nil {
				t.Errorf("%s: mapping %s -> %s is not a oneOf member", tc.union, key, target.Ref)
				continue
			}
			s := member.Value
			typ := s.Properties["type"]
			if typ == nil || len(typ.Value.Enum) != 1 || typ.Value.Enum[0] != key || !slices.Contains(s.Required, "type") {
				t.Errorf("%s: member %s must require type with the single value %q", tc.union, member.Ref, key)
			}
			ex, _ := s.Example.(map[string]any)
			if ex == nil || ex["type"] != key {
				t.Errorf("%s: member %s needs an example of type %q", tc.union, member.Ref, key)
			}
		}
	}
}
