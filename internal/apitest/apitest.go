// Package apitest validates HTTP exchanges against the published documents of
// api/ with kin-openapi, strictly: an undeclared status, a missing required field
// or a value outside its schema fails the test. It is for tests only and must
// never be imported by a program.
package apitest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/crashstudio/crashgame/api"
)

// Validator checks exchanges against one document.
type Validator struct {
	doc    *openapi3.T
	router routers.Router
	// ownRoutes: the document describes the game's own routes (every
	// document but the wallet's), whose answers Response also holds to
	// ownAnswer.
	ownRoutes bool
}

// New loads api/<file> (e.g. "game.v1.yaml"). Routes match on path and method
// whatever the host, since the documents' servers are variables. The wallet
// document's requests are the game's own: New closes them (CloseRequests), so
// a field the game sends beyond the document fails the test.
//
// A document is loaded and validated once per test binary and its Validator
// shared (read only, safe for concurrent use): under the race detector a
// load costs about 0.7 s of CPU, and many tests ask for the same document.
func New(t testing.TB, file string) *Validator {
	t.Helper()
	loadedMu.Lock()
	l := loaded[file]
	if l == nil {
		l = &load{}
		loaded[file] = l
	}
	loadedMu.Unlock()
	l.once.Do(func() { l.v, l.err = newValidator(file) })
	if l.err != nil {
		t.Fatalf("apitest: %v", l.err)
	}
	return l.v
}

// load is one document's Validator, built once.
type load struct {
	once sync.Once
	v    *Validator
	err  error
}

var (
	loadedMu sync.Mutex
	loaded   = map[string]*load{}
)

func newValidator(file string) (*Validator, error) {
	raw, err := api.Documents.ReadFile(file)
	if err != nil {
		return nil, err
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(raw)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", file, err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("%s is not a valid document: %w", file, err)
	}
	if file == "wallet.v1.yaml" {
		CloseRequests(doc)
	}
	doc.Servers = nil
	router, err := legacy.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("router for %s: %w", file, err)
	}
	return &Validator{doc: doc, router: router, ownRoutes: file != "wallet.v1.yaml"}, nil
}

// CloseRequests is the tests' strict overlay of a document whose schemas are
// open: every request body schema refuses the fields it does not declare
// (additionalProperties false). The published wallet document lets a wallet
// ignore unknown fields, so that a field added in v1 breaks no operator; the
// game itself must send exactly the declared ones. doc must be the caller's
// own copy.
func CloseRequests(doc *openapi3.T) {
	closed := false
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			if op.RequestBody == nil || op.RequestBody.Value == nil {
				continue
			}
			for _, mt := range op.RequestBody.Value.Content {
				if mt.Schema != nil && mt.Schema.Value != nil {
					mt.Schema.Value.AdditionalProperties = openapi3.AdditionalProperties{Has: &closed}
				}
			}
		}
	}
}

// options: strict; security is checked by the tests themselves, not here.
func options() *openapi3filter.Options {
	return &openapi3filter.Options{
		IncludeResponseStatus: true,
		MultiError:            true,
		AuthenticationFunc:    openapi3filter.NoopAuthenticationFunc,
	}
}

// Request reports whether a request with this body satisfies the document.
func (v *Validator) Request(req *http.Request, body []byte) error {
	route, params, err := v.router.FindRoute(req)
	if err != nil {
		return err
	}
	r := req.Clone(req.Context())
	r.Body = io.NopCloser(bytes.NewReader(body))
	return openapi3filter.ValidateRequest(req.Context(), &openapi3filter.RequestValidationInput{
		Request: r, PathParams: params, Route: route, Options: options(),
	})
}

// Response fails t unless the response to req (status, headers and body) is
// one that the document declares for req's route, and, for a document of
// the game's own routes, one the game itself may send (ownAnswer).
func (v *Validator) Response(t testing.TB, req *http.Request, status int, header http.Header, body []byte) {
	t.Helper()
	route := v.response(t, req, status, header, body)
	if v.ownRoutes {
		if err := ownAnswer(route.Operation, status, header, body); err != nil {
			t.Errorf("apitest: response %d to %s %s: %v\nbody: %s", status, req.Method, req.URL.Path, err, body)
		}
	}
}

// ProxyResponse fails t unless the response to req, which what stands in
// front of the game answered (a load balancer's 408 or 502 page, without the
// game's request id), is one the document declares for req's route: a
// route's 5XX and default stand for those, with any body.
func (v *Validator) ProxyResponse(t testing.TB, req *http.Request, status int, header http.Header, body []byte) {
	t.Helper()
	v.response(t, req, status, header, body)
}

// A page of a proxy in front of the game is HTML, which kin-openapi has no
// decoder for: it is read as text, as a route's */* answer takes any body.
func init() { openapi3filter.RegisterBodyDecoder("text/html", openapi3filter.PlainBodyDecoder) }

// response validates a response against req's route, and returns the route.
func (v *Validator) response(t testing.TB, req *http.Request, status int, header http.Header, body []byte) *routers.Route {
	t.Helper()
	route, params, err := v.router.FindRoute(req)
	if err != nil {
		t.Fatalf("apitest: %s %s is not a route of the document: %v", req.Method, req.URL.Path, err)
	}
	err = openapi3filter.ValidateResponse(req.Context(), &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{
			Request: req, PathParams: params, Route: route, Options: options(),
		},
		Status:  status,
		Header:  header,
		Body:    io.NopCloser(bytes.NewReader(body)),
		Options: options(),
	})
	if err != nil {
		t.Errorf("apitest: response %d to %s %s breaks the document: %v\nbody: %s", status, req.Method, req.URL.Path, err, body)
	}
	return route
}

// Recorded validates a response captured by httptest.
func (v *Validator) Recorded(t testing.TB, req *http.Request, rec *httptest.ResponseRecorder) {
	t.Helper()
	v.Response(t, req, rec.Code, rec.Header(), rec.Body.Bytes())
}
