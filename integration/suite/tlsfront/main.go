// Command tlsfront is the integration suites' HTTPS front of operator-sim: a
// TLS-terminating reverse proxy, like the ingress a real operator puts in front
// of its wallet. The game refuses a wallet_url at http:// outside loopback
// (AUTH-21), operator-sim serves plain HTTP, so on the suites' Docker network
// the game calls https://wallet:8443 and this proxy hands each request, byte for
// byte, to http://operator-sim:8081. The game trusts the suite's test CA through
// SSL_CERT_FILE; nothing in the game is relaxed.
//
// It is also the suites' observation point on the wallet direction: it checks
// every wallet request and every wallet answer against api/wallet.v1.yaml
// (kin-openapi, strict) and writes one JSON line per exchange to stdout:
//
//	{"msg":"exchange","route":"/bet","status":200,"transaction_id":"...","request_id":"...",
//	 "error_code":"","request_violation":"","response_violation":"","ms":3}
//
// It never logs a token, a player id, a key or a signature. It is test
// tooling: it must never be deployed.
//
//	tlsfront --listen :8443 --upstream http://operator-sim:8081 --cert FILE --key FILE
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/crashstudio/crashgame/api"
)

const maxBody = 1 << 20

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "tlsfront:", err)
		os.Exit(2)
	}
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("tlsfront", flag.ContinueOnError)
	listen := fs.String("listen", ":8443", "HTTPS address")
	upstream := fs.String("upstream", "http://operator-sim:8081", "the plain-HTTP wallet behind this front")
	cert := fs.String("cert", "/certs/tls.crt", "PEM certificate (chain) of this front")
	key := fs.String("key", "/certs/tls.key", "PEM private key")
	if err := fs.Parse(args); err != nil {
		return err
	}
	up, err := url.Parse(*upstream)
	if err != nil || up.Scheme != "http" || up.Host == "" {
		return fmt.Errorf("--upstream %q: want http://host:port", *upstream)
	}
	logger := slog.New(slog.NewJSONHandler(os.Stdout, nil))
	v, err := newValidator()
	if err != nil {
		return err
	}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(up)
			r.Out.Host = up.Host
		},
		Transport: &http.Transport{
			MaxIdleConnsPerHost:   64,
			IdleConnTimeout:       90 * time.Second,
			ResponseHeaderTimeout: 5 * time.Minute, // the game's own timeout decides
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			w.WriteHeader(http.StatusBadGateway)
		},
	}
	srv := &http.Server{
		Addr:              *listen,
		Handler:           observe(logger, v, proxy),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServeTLS(*cert, *key) }()
	logger.Info("tlsfront: serving", "listen", *listen, "upstream", up.String())
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// walletRoutes are the routes checked against the document; anything else
// (the admin API, the lobby, /healthz) is passed on unchecked and unlogged.
var walletRoutes = map[string]bool{"/balance": true, "/bet": true, "/win": true, "/rollback": true}

// observe validates and logs each wallet exchange around next.
func observe(logger *slog.Logger, v *validator, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || !walletRoutes[r.URL.Path] {
			next.ServeHTTP(w, r)
			return
		}
		began := time.Now()
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
		if err != nil {
			http.Error(w, "body too large or unreadable", http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		var head struct {
			TransactionID string `json:"transaction_id"`
			RequestID     string `json:"request_id"`
		}
		_ = json.Unmarshal(body, &head)
		reqViolation := v.request(r, body)

		rec := &recorder{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(rec, r)

		respViolation := ""
		if rec.status != http.StatusBadGateway {
			respViolation = v.response(r, body, rec.status, rec.Header(), rec.body.Bytes())
		}
		var answer struct {
			ErrorCode string `json:"error_code"`
		}
		_ = json.Unmarshal(rec.body.Bytes(), &answer)
		logger.Info("exchange",
			"route", r.URL.Path, "status", rec.status, "transaction_id", head.TransactionID,
			"request_id", head.RequestID, "error_code", answer.ErrorCode,
			"request_violation", reqViolation, "response_violation", respViolation,
			"client_gone", r.Context().Err() != nil, "ms", time.Since(began).Milliseconds())
	})
}

// recorder passes the answer through and keeps a copy of it.
type recorder struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (r *recorder) WriteHeader(status int) {
	r.status = status
	r.ResponseWriter.WriteHeader(status)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.body.Len() < maxBody {
		r.body.Write(b)
	}
	return r.ResponseWriter.Write(b)
}

// validator checks exchanges against api/wallet.v1.yaml.
type validator struct {
	router routers.Router
}

func newValidator() (*validator, error) {
	raw, err := api.Documents.ReadFile("wallet.v1.yaml")
	if err != nil {
		return nil, err
	}
	doc, err := openapi3.NewLoader().LoadFromData(raw)
	if err != nil {
		return nil, fmt.Errorf("load wallet.v1.yaml: %w", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("wallet.v1.yaml: %w", err)
	}
	doc.Servers = nil // {wallet_url} is a variable: match on paths only
	router, err := legacy.NewRouter(doc)
	if err != nil {
		return nil, err
	}
	return &validator{router: router}, nil
}

func options() *openapi3filter.Options {
	return &openapi3filter.Options{
		IncludeResponseStatus: true,
		MultiError:            true,
		AuthenticationFunc:    openapi3filter.NoopAuthenticationFunc,
	}
}

func (v *validator) request(r *http.Request, body []byte) string {
	route, params, err := v.router.FindRoute(r)
	if err != nil {
		return "no such route: " + err.Error()
	}
	c := r.Clone(context.Background())
	c.Body = io.NopCloser(bytes.NewReader(body))
	err = openapi3filter.ValidateRequest(context.Background(), &openapi3filter.RequestValidationInput{
		Request: c, PathParams: params, Route: route, Options: options(),
	})
	return oneLine(err)
}

func (v *validator) response(r *http.Request, body []byte, status int, header http.Header, answer []byte) string {
	route, params, err := v.router.FindRoute(r)
	if err != nil {
		return "no such route: " + err.Error()
	}
	c := r.Clone(context.Background())
	c.Body = io.NopCloser(bytes.NewReader(body))
	err = openapi3filter.ValidateResponse(context.Background(), &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{
			Request: c, PathParams: params, Route: route, Options: options(),
		},
		Status: status, Header: header, Body: io.NopCloser(bytes.NewReader(answer)), Options: options(),
	})
	return oneLine(err)
}

// oneLine shortens a validation error to one line without quoting values
// (which could be a token): kin-openapi's schema errors name the field and the
// rule first, then the value.
func oneLine(err error) string {
	if err == nil {
		return ""
	}
	var me openapi3.MultiError
	if errors.As(err, &me) && len(me) > 0 {
		parts := make([]string, 0, len(me))
		for _, e := range me {
			parts = append(parts, oneLine(e))
		}
		return strings.Join(parts, "; ")
	}
	var se *openapi3.SchemaError
	if errors.As(err, &se) {
		return fmt.Sprintf("%s: %s", strings.Join(se.JSONPointer(), "."), se.Reason)
	}
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}
