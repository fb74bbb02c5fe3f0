package operatorsim

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/crashstudio/crashgame/gen/wallet"
	"github.com/crashstudio/crashgame/internal/signature"
)

// MaxBodyBytes is the largest request body the operator reads.
const MaxBodyBytes = 64 << 10

// Header names of the wallet direction.
const (
	SignatureHeader     = "X-Signature"
	AuthorizationHeader = "Authorization"
	// bearerPrefix is written with a capital B and one space (AUTH-11,
	// AUTH-12); the key follows raw.
	bearerPrefix = "Bearer "
)

// readBody reads the whole body, at most MaxBodyBytes, answering 400 itself
// when it cannot.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	if err != nil {
		msg := "malformed body: the body could not be read"
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			msg = "malformed body: the body is larger than 64 KiB"
		}
		writeWalletError(w, malformedStatus(r.URL.Path), codeInternalError, msg, nil)
		return nil, false
	}
	return body, true
}

// restoreBody puts the bytes back for the next reader.
func restoreBody(r *http.Request, body []byte) {
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
}

// keyDigests hashes the accepted API keys once, so that every comparison
// has the same length and takes the same time whatever the key presented.
func keyDigests(keys []string) [][sha256.Size]byte {
	out := make([][sha256.Size]byte, len(keys))
	for i, k := range keys {
		out[i] = sha256.Sum256([]byte(k))
	}
	return out
}

// bearerOK reports whether the Authorization header is "Bearer <key>", with a
// capital B and one space (AUTH-12), and key one of the accepted keys (two
// during a rotation: AUTH-19). Every accepted key is compared, in constant
// time (AUTH-14), whether or not an earlier one matched.
func bearerOK(header string, accepted [][sha256.Size]byte) bool {
	key, ok := strings.CutPrefix(header, bearerPrefix)
	if !ok || key == "" {
		return false
	}
	got := sha256.Sum256([]byte(key))
	match := 0
	for i := range accepted {
		match |= subtle.ConstantTimeCompare(got[:], accepted[i][:])
	}
	return match == 1
}

// authenticate is the outermost middleware of the wallet routes. It reads the
// raw body (at most 64 KiB), then refuses with 401 INVALID_SIGNATURE, the same
// answer whatever failed (AUTH-15): a missing or unknown Bearer key, a missing
// or wrong X-Signature over the exact bytes received (AUTH-3), a timestamp
// outside the 5 minute window (LIM-1), or an envelope naming another operator.
// It hands the same bytes on.
func (s *Sim) authenticate(next http.Handler) http.Handler {
	keys := keyDigests(s.cfg.APIKeys)
	secret := []byte(s.cfg.Secret)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := readBody(w, r)
		if !ok {
			return
		}
		var cause error
		if !bearerOK(r.Header.Get(AuthorizationHeader), keys) {
			cause = errors.New("missing or unknown API key (want Authorization: Bearer <key>)")
		} else if err := signature.VerifyRequest(secret, body, r.Header.Get(SignatureHeader), s.cfg.Now()); err != nil {
			cause = err
		} else if op := envelopeOperator(body); op != s.cfg.Operator {
			cause = fmt.Errorf("envelope operator %q is not this operator", loggable(op))
		}
		if cause != nil {
			// The cause names the failed check, never the key or the signature.
			s.logger.WarnContext(r.Context(), "operator-sim: wallet call refused", "route", r.URL.Path, "reason", cause.Error())
			writeWalletError(w, http.StatusUnauthorized, codeInvalidSignature, "", nil)
			return
		}
		restoreBody(r, body)
		next.ServeHTTP(w, r)
	})
}

// envelopeOperator returns the body's operator, or "".
func envelopeOperator(body []byte) string {
	var head struct {
		Operator string `json:"operator"`
	}
	_ = json.Unmarshal(body, &head)
	return head.Operator
}

// loggable keeps an unauthenticated value short enough for a log line.
func loggable(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

// validator checks wallet requests against api/wallet.v1.yaml (the document
// embedded in gen/wallet), strictly: closed schemas, required fields, integer
// cents, the WinType enumeration.
type validator struct {
	router routers.Router
}

func newValidator() (*validator, error) {
	doc, err := wallet.GetSpec()
	if err != nil {
		return nil, fmt.Errorf("load the wallet document: %w", err)
	}
	// The document's server is a variable ({wallet_url}); match on paths only.
	doc.Servers = nil
	router, err := legacy.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("route the wallet document: %w", err)
	}
	return &validator{router: router}, nil
}

// validate answers INTERNAL_ERROR with the violation when the request breaks
// the document, and otherwise hands the same bytes on. The status is 400
// (WERR-2), except on /balance, whose document lists no 400: there a
// malformed body is the 403 "protocol failure" it lists (BAL-13).
func (v *validator) validate(next http.Handler) http.Handler {
	opts := &openapi3filter.Options{
		// Authentication is checked by authenticate, before this.
		AuthenticationFunc: openapi3filter.NoopAuthenticationFunc,
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := readBody(w, r)
		if !ok {
			return
		}
		restoreBody(r, body)
		route, params, err := v.router.FindRoute(r)
		if err != nil {
			writeWalletError(w, http.StatusNotFound, codeInternalError, "no such wallet route", nil)
			return
		}
		err = openapi3filter.ValidateRequest(r.Context(), &openapi3filter.RequestValidationInput{
			Request: r, PathParams: params, Route: route, Options: opts,
		})
		if err != nil {
			writeWalletError(w, malformedStatus(r.URL.Path), codeInternalError, "malformed body: "+violation(err), nil)
			return
		}
		restoreBody(r, body)
		next.ServeHTTP(w, r)
	})
}

// malformedStatus is the status of a malformed body on route.
func malformedStatus(route string) int {
	if route == "/balance" {
		return http.StatusForbidden
	}
	return http.StatusBadRequest
}

// violation describes a validation error in one line: where, and what. It
// never quotes the value (which could be a token).
func violation(err error) string {
	var se *openapi3.SchemaError
	if errors.As(err, &se) {
		at := strings.Join(se.JSONPointer(), ".")
		// An allOf wrapper ("doesn't match all schemas") hides the reason.
		reason := se.Reason
		for inner := se; inner.Origin != nil && errors.As(inner.Origin, &inner); {
			reason = inner.Reason
		}
		// A "not required" constraint (freebet_id on /rollback) says
		// nothing itself: name the fields it forbids.
		if reason == "" && se.SchemaField == "not" && se.Schema != nil && se.Schema.Not != nil && se.Schema.Not.Value != nil {
			reason = "carries " + strings.Join(se.Schema.Not.Value.Required, ", ") + ", which this route never takes"
		}
		if at == "" {
			return reason
		}
		return at + ": " + reason
	}
	var re *openapi3filter.RequestError
	if errors.As(err, &re) && re.Reason != "" {
		return re.Reason
	}
	return "the request does not match api/wallet.v1.yaml"
}

// ctxWithoutCancel is used by handlers whose writes must finish even when
// the client has gone (a movement is committed or not, never half).
func ctxWithoutCancel(ctx context.Context) context.Context { return context.WithoutCancel(ctx) }
