package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/internal/server"
)

func newServer(t *testing.T, ready func(context.Context) error, routes map[string]http.Handler) (http.Handler, *strings.Builder) {
	t.Helper()
	var logs strings.Builder
	logger := slog.New(slog.NewJSONHandler(&logs, nil))
	return server.New(server.Config{
		Logger:    logger,
		Documents: http.NotFoundHandler(),
		Ready:     ready,
		Routes:    routes,
	}), &logs
}

func TestHealthAndReadiness(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		path   string
		ready  error
		status int
	}{
		{"healthz", "/healthz", nil, 200},
		{"healthz does not depend on readiness", "/healthz", errors.New("db down"), 200},
		{"readyz ok", "/readyz", nil, 200},
		{"readyz with the database down", "/readyz", errors.New("db down"), 503},
		{"readyz with a reason to give", "/readyz", fmt.Errorf("game: %w", &server.NotReady{Reason: "game crash plays no round"}), 503},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h, _ := newServer(t, func(context.Context) error { return tt.ready }, nil)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tt.path, nil))
			if rec.Code != tt.status {
				t.Fatalf("status = %d, want %d", rec.Code, tt.status)
			}
			if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
				t.Fatalf("Content-Type = %q", ct)
			}
			// Only a NotReady's reason is shown; any other error is logged.
			var body map[string]string
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
				t.Fatal(err)
			}
			want := ""
			if nr, ok := errors.AsType[*server.NotReady](tt.ready); ok && tt.path == "/readyz" {
				want = nr.Reason
			}
			if body["reason"] != want {
				t.Fatalf("reason = %q, want %q", body["reason"], want)
			}
		})
	}
}

func TestRequestID(t *testing.T) {
	t.Parallel()
	var seen string
	h, _ := newServer(t, nil, map[string]http.Handler{
		"POST /x": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { seen = server.RequestID(r.Context()) }),
	})
	tests := []struct {
		name, in string
		keep     bool
	}{
		{"plain id kept", "op-123.abc_Z", true},
		{"absent id generated", "", false},
		{"id with a newline replaced", "a\nb", false},
		{"overlong id replaced", strings.Repeat("a", 65), false},
	}
	for _, tt := range tests {
		req := httptest.NewRequest(http.MethodPost, "/x", nil)
		if tt.in != "" {
			req.Header.Set(server.RequestIDHeader, tt.in)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		got := rec.Header().Get(server.RequestIDHeader)
		if got != seen || got == "" {
			t.Fatalf("%s: header %q, handler saw %q", tt.name, got, seen)
		}
		if (got == tt.in) != tt.keep {
			t.Fatalf("%s: got %q from %q", tt.name, got, tt.in)
		}
	}
}

func TestPanicAnswersContractError(t *testing.T) {
	t.Parallel()
	h, logs := newServer(t, nil, map[string]http.Handler{
		"POST /boom": http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("secret detail") }),
	})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/boom", nil))
	if rec.Code != http.StatusInternalServerError {
		t.Fatalf("status = %d", rec.Code)
	}
	body, _ := io.ReadAll(rec.Body)
	var e map[string]string
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("body %q: %v", body, err)
	}
	if e["status"] != "error" || e["error_code"] != "INTERNAL_ERROR" || e["request_id"] == "" {
		t.Fatalf("body = %v", e)
	}
	if strings.Contains(string(body), "secret detail") {
		t.Fatal("the cause leaked into the response")
	}
	if !strings.Contains(logs.String(), "secret detail") {
		t.Fatal("the cause is not in the log")
	}
}

func TestAccessLogOmitsQuery(t *testing.T) {
	t.Parallel()
	h, logs := newServer(t, nil, nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz?sid=tk_secretticket", nil))
	if strings.Contains(logs.String(), "tk_secretticket") {
		t.Fatalf("ticket logged: %s", logs.String())
	}
	if !strings.Contains(logs.String(), `"request_id"`) {
		t.Fatalf("no request_id in log: %s", logs.String())
	}
}

// Every request's route pattern, status and duration reach Observe: a
// route's pattern, not its path (so a path's ids never become labels), and
// "unmatched" for a request no route took.
func TestObserveRequests(t *testing.T) {
	t.Parallel()
	type seen struct {
		route  string
		status int
	}
	var (
		mu  sync.Mutex
		got []seen
	)
	h := server.New(server.Config{
		Logger:    slog.New(slog.DiscardHandler),
		Documents: http.NotFoundHandler(),
		Routes: map[string]http.Handler{
			"POST /api/v1/bets/{bet_id}/cashout": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusConflict)
			}),
			"GET /quiet": http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}),
		},
		Observe: func(route string, status int, d time.Duration) {
			if d <= 0 {
				t.Errorf("%s: duration %s", route, d)
			}
			mu.Lock()
			got = append(got, seen{route, status})
			mu.Unlock()
		},
	})
	for _, tt := range []struct {
		method, path string
		want         seen
	}{
		{http.MethodPost, "/api/v1/bets/b-123/cashout", seen{"POST /api/v1/bets/{bet_id}/cashout", http.StatusConflict}},
		{http.MethodGet, "/quiet", seen{"GET /quiet", http.StatusOK}},
		{http.MethodGet, "/healthz", seen{"GET /healthz", http.StatusOK}},
		{http.MethodGet, "/nowhere/b-123", seen{"unmatched", http.StatusNotFound}},
		{http.MethodDelete, "/quiet", seen{"unmatched", http.StatusMethodNotAllowed}},
	} {
		mu.Lock()
		got = nil
		mu.Unlock()
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(tt.method, tt.path, nil))
		mu.Lock()
		if len(got) != 1 || got[0] != tt.want {
			t.Errorf("%s %s: observed %v, want %v", tt.method, tt.path, got, tt.want)
		}
		mu.Unlock()
	}
}

// /docs/ and /docs reach the reference, beside /openapi/ and /openapi for
// the documents; a server without a reference answers 404 there.
func TestDocumentsAndReference(t *testing.T) {
	t.Parallel()
	named := func(name string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, name) })
	}
	with := server.New(server.Config{Logger: slog.New(slog.DiscardHandler), Documents: named("documents"), Reference: named("reference")})
	without := server.New(server.Config{Logger: slog.New(slog.DiscardHandler), Documents: named("documents")})
	tests := []struct {
		path       string
		with       string
		withoutRef int
	}{
		{"/openapi/", "documents", 200},
		{"/openapi", "documents", 200},
		{"/openapi/game.v1.yaml", "documents", 200},
		{"/docs/", "reference", 404},
		{"/docs", "reference", 404},
		{"/docs/game.v1", "reference", 404},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			t.Parallel()
			rec := httptest.NewRecorder()
			with.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tt.path, nil))
			if rec.Code != 200 || rec.Body.String() != tt.with {
				t.Errorf("with a reference: %d %q, want 200 %q", rec.Code, rec.Body.String(), tt.with)
			}
			rec = httptest.NewRecorder()
			without.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tt.path, nil))
			if rec.Code != tt.withoutRef {
				t.Errorf("without a reference: %d, want %d", rec.Code, tt.withoutRef)
			}
		})
	}
}
