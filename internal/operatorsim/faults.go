package operatorsim

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/crashstudio/crashgame/gen/wallet"
)

// Fault kinds.
const (
	// FaultNone injects nothing but latency and RefusalStatus.
	FaultNone = ""
	// Fault5xx answers a 5xx (Status, default 503) with an INTERNAL_ERROR body.
	Fault5xx = "5xx"
	// FaultTimeout never answers: the handler waits until the client gives up.
	FaultTimeout = "timeout"
	// FaultRefuse answers status = error with ErrorCode (default
	// INTERNAL_ERROR), with HTTP Status (default 200, or a 4xx).
	FaultRefuse = "refuse"
)

// Refusal statuses: how genuine business refusals travel (AMB-1, AMB-8).
const (
	// RefusalsAsDocumented is the default, as api/wallet.v1.yaml reads the
	// contract: business refusals are HTTP 200 with status = error, except
	// /balance's TOKEN_INVALID/TOKEN_EXPIRED (401), /bet's
	// DUPLICATE_TRANSACTION (409) and /win's orphan BET_NOT_FOUND (404).
	RefusalsAsDocumented = ""
	// RefusalsAs200 sends every business refusal as HTTP 200, those three
	// included (AMB-8 and AMB-3 reading B).
	RefusalsAs200 = "200"
	// RefusalsAs4xx also sends /bet's INSUFFICIENT_FUNDS as 402 and
	// TOKEN_EXPIRED as 409, as the contract's per-route table lists them
	// (AMB-1 reading B).
	RefusalsAs4xx = "4xx"
)

// Fault is what the test suites inject into one wallet route at runtime.
type Fault struct {
	// LatencyMS delays every answer of the route.
	LatencyMS int `json:"latency_ms,omitempty"`
	// Kind is FaultNone, Fault5xx, FaultTimeout or FaultRefuse.
	Kind string `json:"kind,omitempty"`
	// Rate is the probability (0 to 1) that Kind applies to a request;
	// absent means 1.
	Rate *float64 `json:"rate,omitempty"`
	// Count, above 0, limits Kind to that many requests; then the fault
	// clears itself ("fail the next 3 attempts").
	Count int `json:"count,omitempty"`
	// After applies Kind once the request has been processed and committed:
	// the movement happened but its answer is lost (or wrong).
	After bool `json:"after,omitempty"`
	// Status is the HTTP status of Fault5xx (500..599, default 503) or of
	// FaultRefuse (200 or 400..499, default 200).
	Status int `json:"status,omitempty"`
	// ErrorCode is FaultRefuse's error_code (default INTERNAL_ERROR).
	ErrorCode string `json:"error_code,omitempty"`
	// RefusalStatus is RefusalsAsDocumented, RefusalsAs200 or RefusalsAs4xx.
	RefusalStatus string `json:"refusal_status,omitempty"`
}

// FaultRoutes are the keys of a fault set: one per wallet route, and "*" for
// every route without its own entry.
var FaultRoutes = []string{"balance", "bet", "win", "rollback", "*"}

func (f *Fault) validate() error {
	switch f.Kind {
	case FaultNone, FaultTimeout:
	case Fault5xx:
		if f.Status == 0 {
			f.Status = http.StatusServiceUnavailable
		}
		if f.Status < 500 || f.Status > 599 {
			return fmt.Errorf("status %d of a 5xx fault is not 500..599", f.Status)
		}
	case FaultRefuse:
		if f.Status == 0 {
			f.Status = http.StatusOK
		}
		if f.Status != http.StatusOK && (f.Status < 400 || f.Status > 499) {
			return fmt.Errorf("status %d of a refuse fault is neither 200 nor 4xx", f.Status)
		}
		if f.ErrorCode == "" {
			f.ErrorCode = codeInternalError
		}
	default:
		return fmt.Errorf("unknown fault kind %q (want %q, %q, %q or none)", f.Kind, Fault5xx, FaultTimeout, FaultRefuse)
	}
	if f.Rate != nil && (*f.Rate < 0 || *f.Rate > 1) {
		return fmt.Errorf("rate %v is outside 0..1", *f.Rate)
	}
	if f.LatencyMS < 0 || f.Count < 0 {
		return fmt.Errorf("latency_ms and count must not be negative")
	}
	switch f.RefusalStatus {
	case RefusalsAsDocumented, RefusalsAs200, RefusalsAs4xx:
	default:
		return fmt.Errorf("unknown refusal_status %q (want %q, %q or empty)", f.RefusalStatus, RefusalsAs200, RefusalsAs4xx)
	}
	return nil
}

// faults is the current fault set, safe for concurrent use.
type faults struct {
	mu  sync.Mutex
	set map[string]*Fault
	// done is closed by Close: hung FaultTimeout handlers return.
	done chan struct{}
}

func newFaults() *faults { return &faults{set: map[string]*Fault{}, done: make(chan struct{})} }

// replace installs a new fault set, validated as a whole.
func (f *faults) replace(set map[string]Fault) error {
	next := make(map[string]*Fault, len(set))
	for route, fault := range set {
		known := false
		for _, r := range FaultRoutes {
			known = known || r == route
		}
		if !known {
			return fmt.Errorf("unknown route %q (want one of %s)", route, strings.Join(FaultRoutes, ", "))
		}
		if err := fault.validate(); err != nil {
			return fmt.Errorf("route %s: %w", route, err)
		}
		next[route] = &fault
	}
	f.mu.Lock()
	f.set = next
	f.mu.Unlock()
	return nil
}

func (f *faults) snapshot() map[string]Fault {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make(map[string]Fault, len(f.set))
	for k, v := range f.set {
		out[k] = *v
	}
	return out
}

// plan is what happens to one request.
type plan struct {
	latency       time.Duration
	inject        *Fault // nil: answer normally
	refusalStatus string
}

// planFor draws the fate of one request of route, spending one Count.
func (f *faults) planFor(route string) plan {
	f.mu.Lock()
	defer f.mu.Unlock()
	key := route
	fault, ok := f.set[key]
	if !ok {
		key = "*"
		if fault, ok = f.set[key]; !ok {
			return plan{}
		}
	}
	p := plan{latency: time.Duration(fault.LatencyMS) * time.Millisecond, refusalStatus: fault.RefusalStatus}
	if fault.Kind == FaultNone || (fault.Rate != nil && rand.Float64() >= *fault.Rate) {
		return p
	}
	copied := *fault
	p.inject = &copied
	if fault.Count > 0 {
		fault.Count--
		if fault.Count == 0 { // spent: the route answers normally again
			fault.Kind = FaultNone
		}
	}
	return p
}

type refusalStatusKey struct{}

// refusalStatusFrom returns the RefusalStatus of the request's route.
func refusalStatusFrom(ctx context.Context) string {
	s, _ := ctx.Value(refusalStatusKey{}).(string)
	return s
}

// withFaults applies the route's fault plan around the wallet handler.
func (s *Sim) withFaults(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		route := strings.TrimPrefix(r.URL.Path, "/")
		p := s.faults.planFor(route)
		r = r.WithContext(context.WithValue(r.Context(), refusalStatusKey{}, p.refusalStatus))
		if p.latency > 0 {
			t := time.NewTimer(p.latency)
			select {
			case <-t.C:
			case <-r.Context().Done():
				t.Stop()
				return
			}
		}
		if p.inject == nil {
			next.ServeHTTP(w, r)
			return
		}
		if p.inject.After {
			next.ServeHTTP(discardWriter{header: http.Header{}}, r)
		}
		s.logger.InfoContext(r.Context(), "operator-sim: fault injected", "route", route, "kind", p.inject.Kind, "after", p.inject.After)
		switch p.inject.Kind {
		case FaultTimeout:
			select {
			case <-r.Context().Done():
			case <-s.faults.done:
			}
		case Fault5xx:
			writeWalletError(w, p.inject.Status, codeInternalError, "injected fault: service unavailable", nil)
		case FaultRefuse:
			writeWalletError(w, p.inject.Status, p.inject.ErrorCode, "injected refusal", nil)
		}
	})
}

// discardWriter swallows the answer of a request whose fault comes after it.
type discardWriter struct{ header http.Header }

func (d discardWriter) Header() http.Header         { return d.header }
func (d discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (d discardWriter) WriteHeader(int)             {}

// writeWalletError writes the contract's wallet error body.
func writeWalletError(w http.ResponseWriter, status int, code, msg string, balance *int64) {
	e := wallet.WalletError{Status: wallet.WalletErrorStatusError, ErrorCode: code, Balance: balance}
	if msg != "" {
		e.ErrorMessage = &msg
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(e)
}
