//go:build ignore

// Command clientcheck feeds a generated client, from an httptest server, the
// answers the game may send as the documents grow or as a proxy in front of
// it answers: an error code the client does not know, a field it does not
// know, a 429 with the contract's error body (and Retry-After, as the game
// sends it) and a proxy's HTML 503. Each
// must decode, or fail with an error the caller can branch on (a status it
// can read), never with a validation failure of the body.
//
// make toolchain copies this file, without its ignore constraint, with one
// generator's file (ogen.go or oapicodegen.go) into the module it built from
// docs/integrators.md, and runs it there. It prints one line per answer and
// exits 1 when one fails.
package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
)

// answer is one answer the server gives.
type answer struct {
	name        string
	status      int
	contentType string
	body        string
	// decode: the client must decode this answer (its status is declared
	// with this body); otherwise an error carrying the status also does.
	decode bool
	// marker is a value the decoded answer must hold.
	marker string
	// retryAfter is the Retry-After header's value, when not "".
	retryAfter string
}

// outcome is what a client made of an answer.
type outcome struct {
	// ok: decoded, or failed with an error that carries the status.
	ok bool
	// decoded: the client returned a value, no error.
	decoded bool
	// what describes it for the report.
	what string
}

// operation is one operation of a document, called through one generator's
// client at the base URL of a test server.
type operation struct {
	doc, name string
	call      func(ctx context.Context, baseURL string, a answer) outcome
	answers   []answer
}

const added = "A_CODE_ADDED_LATER"

// gameAnswers are the answers of POST /v1/launch (game.v1.yaml).
var gameAnswers = []answer{
	{name: "unknown error_code", status: 400, contentType: "application/json", decode: true, marker: added,
		body: `{"status":"error","error_code":"` + added + `","error_message":"a refusal added in a later minor version"}`},
	{name: "unknown field", status: 200, contentType: "application/json", decode: true, marker: "tk_added",
		body: `{"status":"ok","url":"https://games.example.com/?sid=tk_added&lang=pt&cur=BRL","a_field_added_later":{"n":1}}`},
	{name: "429 with the contract's error body", status: 429, contentType: "application/json", retryAfter: "1",
		body: `{"status":"error","error_code":"RATE_LIMITED","error_message":"too many requests"}`},
	{name: "proxy's HTML 503", status: 503, contentType: "text/html; charset=utf-8",
		body: "<html><body><h1>503 Service Temporarily Unavailable</h1></body></html>"},
}

// tableAnswers are the answers of GET /api/v1/round (table.v1.yaml).
var tableAnswers = []answer{
	{name: "unknown error_code", status: 401, contentType: "application/json", decode: true, marker: added,
		body: `{"status":"error","error_code":"` + added + `","message":"a refusal added in a later minor version"}`},
	{name: "unknown field", status: 200, contentType: "application/json", decode: true, marker: "rd_added",
		body: `{"round_id":"rd_added","phase":"betting","betting_ends_at":1776000033736,"server_time":1776000031200,"multiplier":100,"a_field_added_later":1}`},
	{name: "429 with the contract's error body", status: 429, contentType: "application/json", retryAfter: "1",
		body: `{"status":"error","error_code":"RATE_LIMITED","message":"Too many actions in a short time."}`},
	{name: "proxy's HTML 503", status: 503, contentType: "text/html; charset=utf-8",
		body: "<html><body><h1>503 Service Temporarily Unavailable</h1></body></html>"},
}

func main() {
	failed := 0
	total := 0
	for _, op := range operations() {
		for _, a := range op.answers {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", a.contentType)
				if a.retryAfter != "" {
					w.Header().Set("Retry-After", a.retryAfter)
				}
				w.WriteHeader(a.status)
				_, _ = w.Write([]byte(a.body))
			}))
			o := op.call(context.Background(), srv.URL, a)
			srv.Close()
			total++
			verdict := "ok  "
			if !o.ok || (a.decode && !o.decoded) {
				verdict = "FAIL"
				failed++
			}
			fmt.Printf("%s %s %s %s, %s: %s\n", verdict, client, op.doc, op.name, a.name, o.what)
		}
	}
	fmt.Printf("clientcheck %s: %d passed, %d failed\n", client, total-failed, failed)
	if failed > 0 {
		os.Exit(1)
	}
}
