// Package operatorapi is the HTTP driver of the operator routes of gen/game
// (POST /v1/games, /v1/launch, /v1/fairness/contributions, and the back
// office's /v1/rounds/details, /v1/bets/history, /v1/transactions,
// /v1/transactions/redeliver and the links /v1/rounds/support-link and
// /v1/transactions/export): it authenticates each request over its raw
// bytes, translates between the generated types and packages launch,
// backoffice and wallet, and answers every refusal in the game
// direction's error shape. It holds no business rule, never answers one
// operator with another's data, and must never log a secret, a token, a
// player id or a full signature.
package operatorapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/crashstudio/crashgame/gen/game"
	"github.com/crashstudio/crashgame/internal/backoffice"
	"github.com/crashstudio/crashgame/internal/launch"
	"github.com/crashstudio/crashgame/internal/movements"
	"github.com/crashstudio/crashgame/internal/secret"
	"github.com/crashstudio/crashgame/internal/server"
	"github.com/crashstudio/crashgame/internal/signature"
)

// MaxBodyBytes is the largest request body the operator routes read.
const MaxBodyBytes = 64 << 10

// SignatureHeader carries the lowercase hex HMAC-SHA256 of the body.
const SignatureHeader = "X-Signature"

// Operator is how an operator's requests are authenticated.
type Operator struct {
	ID string
	// Enabled false answers the operator like an unknown one (AUTH-9).
	Enabled bool
	// Secret is the HMAC key of its requests; empty: they are accepted
	// unsigned, with no time window (demo only, AUTH-8).
	Secret secret.Secret
}

// API serves the operator routes of one installation.
type API struct {
	ops        map[string]*Operator
	launch     *launch.Service
	chains     Chains
	movements  backoffice.TransactionReader
	redeliver  movements.Redeliverer
	backoffice *backoffice.Service
	baseURL    string
	logger     *slog.Logger
	now        func() time.Time
	dummy      []byte
}

// Config is what the operator routes are built from.
type Config struct {
	Operators  []Operator
	Launch     *launch.Service
	Chains     Chains                       // contributions to the chains' salts
	Movements  backoffice.TransactionReader // the back office's transactions
	Redeliver  movements.Redeliverer        // sends a parked movement again
	BackOffice *backoffice.Service          // the back office's rounds, bets and links
	BaseURL    string                       // the installation's public address, of the links
	Logger     *slog.Logger
	// Now is the clock of the signature window, the contributions and the
	// back office's horizon.
	Now func() time.Time
}

// New returns the operator routes of cfg.
func New(cfg Config) *API {
	a := &API{ops: map[string]*Operator{}, launch: cfg.Launch, chains: cfg.Chains, movements: cfg.Movements, redeliver: cfg.Redeliver,
		backoffice: cfg.BackOffice, baseURL: cfg.BaseURL, logger: cfg.Logger, now: cfg.Now,
		dummy: []byte("crashgame: no such operator, same work")}
	for i := range cfg.Operators {
		op := cfg.Operators[i]
		a.ops[op.ID] = &op
	}
	return a
}

// Routes returns the handlers by ServeMux pattern.
func (a *API) Routes() map[string]http.Handler {
	strict := game.NewStrictHandlerWithOptions(a, nil, game.StrictHTTPServerOptions{
		RequestErrorHandlerFunc:  a.requestError,
		ResponseErrorHandlerFunc: a.responseError,
	})
	wrapper := game.ServerInterfaceWrapper{Handler: strict, ErrorHandlerFunc: a.requestError}
	return map[string]http.Handler{
		"POST /v1/games":                  a.authenticate(http.HandlerFunc(wrapper.ListGames)),
		"POST /v1/launch":                 a.authenticate(http.HandlerFunc(wrapper.LaunchGame)),
		"POST /v1/fairness/contributions": a.authenticate(http.HandlerFunc(wrapper.ContributeToChain)),
		"POST /v1/transactions":           a.authenticate(http.HandlerFunc(wrapper.ListTransactions)),
		"POST /v1/transactions/redeliver": a.authenticate(http.HandlerFunc(wrapper.RedeliverTransaction)),
		"POST /v1/rounds/details":         a.authenticate(http.HandlerFunc(wrapper.GetRoundDetails)),
		"POST /v1/bets/history":           a.authenticate(http.HandlerFunc(wrapper.GetBetHistory)),
		"POST /v1/rounds/support-link":    a.authenticate(http.HandlerFunc(wrapper.CreateRoundSupportLink)),
		"POST /v1/transactions/export":    a.authenticate(http.HandlerFunc(wrapper.CreateTransactionsExport)),
	}
}

type operatorKey struct{}

func operatorFrom(ctx context.Context) *Operator {
	op, _ := ctx.Value(operatorKey{}).(*Operator)
	return op
}

// authenticate reads the body (at most MaxBodyBytes), finds the operator it names
// and verifies X-Signature over exactly those bytes, then hands the same bytes on.
// The order of the checks, and so of the answers:
//
//  1. body unreadable or over 64 KiB, not JSON, or not a JSON object -> 400 INTERNAL_ERROR
//  2. unknown or disabled operator, absent or wrong signature, altered body,
//     timestamp absent, not an integer or outside 5 minutes          -> 401 INVALID_SIGNATURE
//
// Every case of 2 gives the same body, and an unknown operator costs the same
// HMAC as a known one. An operator configured without a secret (demo only) is
// not signed and has no window; its timestamp must still be an integer (else 1).
func (a *API) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
		if err != nil {
			var tooBig *http.MaxBytesError
			msg := "the body could not be read"
			if errors.As(err, &tooBig) {
				msg = "the body is larger than 64 KiB"
			}
			writeError(w, http.StatusBadRequest, "INTERNAL_ERROR", msg, "")
			return
		}
		var head struct {
			Operator any `json:"operator"`
		}
		if err := json.Unmarshal(body, &head); err != nil {
			writeError(w, http.StatusBadRequest, "INTERNAL_ERROR", "the body is not a JSON object", "")
			return
		}
		name, _ := head.Operator.(string)
		op, known := a.ops[name]
		sig := r.Header.Get(SignatureHeader)
		switch {
		case !known || !op.Enabled:
			_ = signature.VerifyRequest(a.dummy, body, sig, a.now())
			a.refuse(ctx, w, name, errors.New("unknown or disabled operator"))
			return
		case op.Secret == "":
			if _, err := signature.Timestamp(body); err != nil {
				writeError(w, http.StatusBadRequest, "INTERNAL_ERROR", "timestamp must be an integer number of milliseconds", "")
				return
			}
		default:
			if err := signature.VerifyRequest(op.Secret.Bytes(), body, sig, a.now()); err != nil {
				a.refuse(ctx, w, name, err)
				return
			}
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		next.ServeHTTP(w, r.WithContext(context.WithValue(ctx, operatorKey{}, op)))
	})
}

func (a *API) refuse(ctx context.Context, w http.ResponseWriter, operator string, cause error) {
	// The cause names which check failed; never the signature or the secret.
	a.logger.WarnContext(ctx, "operator request refused", "request_id", server.RequestID(ctx),
		"operator", loggable(operator), "reason", cause.Error())
	writeError(w, http.StatusUnauthorized, "INVALID_SIGNATURE", "", "")
}

// loggable keeps an unauthenticated operator name short enough for a log line.
func loggable(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

// requestError answers a body that is JSON but does not fit the schema's types.
func (a *API) requestError(w http.ResponseWriter, r *http.Request, err error) {
	writeError(w, http.StatusBadRequest, "INTERNAL_ERROR", "the body does not match the request schema: "+err.Error(), "")
}

// responseError answers a failure of ours, with the cause in the log only.
func (a *API) responseError(w http.ResponseWriter, r *http.Request, err error) {
	id := server.RequestID(r.Context())
	a.logger.ErrorContext(r.Context(), "operator route failed", "request_id", id, "err", err)
	writeError(w, http.StatusInternalServerError, "INTERNAL_ERROR", "", id)
}

func writeError(w http.ResponseWriter, status int, code, msg, requestID string) {
	e := game.GameError{Status: "error", ErrorCode: game.GameErrorCode(code)}
	if msg != "" {
		e.ErrorMessage = &msg
	}
	if requestID != "" {
		e.RequestId = &requestID
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(e)
}
