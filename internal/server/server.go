// Package server assembles the HTTP surface of `crashgame serve`: the published
// documents and their rendered reference, health and readiness, and the routes that other packages provide,
// under one middleware chain (request id, access log and the requests'
// durations, panic recovery). It owns no business rule and must never read
// or transform a request body.
package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"
)

// RequestIDHeader carries the id of one request, in and out. An incoming value
// is kept when it is short and plain, so an operator can match both logs.
const RequestIDHeader = "X-Request-Id"

// Config lists what the server is built from.
type Config struct {
	Logger *slog.Logger
	// Documents serves /openapi/: the published documents as YAML and JSON.
	Documents http.Handler
	// Reference, when set, serves /docs/: the same documents rendered as
	// the API reference. /docs is its too (it redirects to /docs/).
	Reference http.Handler
	// Ready reports whether the server can take traffic (database reachable...).
	Ready func(context.Context) error
	// Routes holds the routes of the domain packages (operator routes, table...).
	Routes map[string]http.Handler
	// Observe, when set, is given every request's route pattern ("POST
	// /api/v1/bets", or "unmatched" for a request no route took), the
	// status answered (101 for a stream's upgrade) and how long the process
	// took, from the request's headers read to its handler's return.
	Observe func(route string, status int, d time.Duration)
}

// NotReady is a reason for /readyz to fail that its answer gives, as
// "reason", to whoever asks: it must hold nothing an outsider may not read
// (/readyz is on the public port). Any other error of Config.Ready is only
// logged: a database's error may name its host.
type NotReady struct {
	Reason string
}

func (e *NotReady) Error() string { return e.Reason }

// New returns the root handler.
func New(cfg Config) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /openapi/", cfg.Documents)
	mux.Handle("GET /openapi", cfg.Documents)
	if cfg.Reference != nil {
		mux.Handle("GET /docs/", cfg.Reference)
		mux.Handle("GET /docs", cfg.Reference)
	}
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if cfg.Ready != nil {
			ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
			defer cancel()
			if err := cfg.Ready(ctx); err != nil {
				cfg.Logger.WarnContext(r.Context(), "not ready", "request_id", RequestID(r.Context()), "err", err)
				body := map[string]string{"status": "unavailable"}
				if nr, ok := errors.AsType[*NotReady](err); ok {
					body["reason"] = nr.Reason
				}
				writeJSON(w, http.StatusServiceUnavailable, body)
				return
			}
		}
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	for pattern, h := range cfg.Routes {
		mux.Handle(pattern, h)
	}
	return withRequestID(withAccessLog(cfg.Logger, cfg.Observe, withRecover(cfg.Logger, mux)))
}

type ctxKey struct{}

// RequestID returns the id that the middleware gave the request, or "".
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(ctxKey{}).(string)
	return id
}

// WithRequestID returns a context that carries id; handlers and tests use it.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, ctxKey{}, id)
}

// NewRequestID returns 16 random bytes in hex.
func NewRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func withRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(RequestIDHeader)
		if !plainID(id) {
			id = NewRequestID()
		}
		w.Header().Set(RequestIDHeader, id)
		next.ServeHTTP(w, r.WithContext(WithRequestID(r.Context(), id)))
	})
}

// plainID accepts 1 to 64 characters of [A-Za-z0-9._-], so a header cannot
// inject anything into a log line.
func plainID(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for _, c := range []byte(s) {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

type statusRecorder struct {
	http.ResponseWriter
	status int
	bytes  int
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	n, err := s.ResponseWriter.Write(b)
	s.bytes += n
	return n, err
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// withAccessLog logs every request and, when observe is set, gives it the
// request's route pattern (which the mux below sets on r), status and
// duration.
func withAccessLog(logger *slog.Logger, observe func(route string, status int, d time.Duration), next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		took := time.Since(start)
		status := rec.status
		if status == 0 {
			status = http.StatusOK // nothing written: net/http answers 200
		}
		if observe != nil {
			route := r.Pattern
			if route == "" {
				route = "unmatched"
			}
			observe(route, status, took)
		}
		// The URL may carry a launch ticket (?sid=): log the path only.
		logger.LogAttrs(r.Context(), slog.LevelInfo, "http",
			slog.String("request_id", RequestID(r.Context())),
			slog.String("method", r.Method),
			slog.String("path", r.URL.Path),
			slog.Int("status", status),
			slog.Int("bytes", rec.bytes),
			slog.Duration("duration", took),
		)
	})
}

func withRecover(logger *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				logger.ErrorContext(r.Context(), "panic", "request_id", RequestID(r.Context()), "panic", v, "stack", string(debug.Stack()))
				writeJSON(w, http.StatusInternalServerError, map[string]string{
					"status": "error", "error_code": "INTERNAL_ERROR", "request_id": RequestID(r.Context()),
				})
			}
		}()
		next.ServeHTTP(w, r)
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
