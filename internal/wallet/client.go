package wallet

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"time"

	walletapi "github.com/crashstudio/crashgame/gen/wallet"
	"github.com/crashstudio/crashgame/internal/secret"
	"github.com/crashstudio/crashgame/internal/signature"
)

// DefaultAttemptTimeout bounds one attempt (connection, request, answer) when
// the Client builds its own *http.Client.
const DefaultAttemptTimeout = 5 * time.Second

// MaxAnswerBytes is the largest answer body read. A longer one is unparsable,
// hence Temporary.
const MaxAnswerBytes = 1 << 20

// Header names.
const (
	SignatureHeader     = "X-Signature"
	AuthorizationHeader = "Authorization"
)

// Errors. err is nil exactly when Result.Outcome is Success; otherwise it wraps
// ErrRefused or ErrTemporary, and ErrTemporary comes with ErrBreakerOpen or
// ErrInvalidCall when no request was sent.
var (
	ErrRefused     = errors.New("wallet refused")
	ErrTemporary   = errors.New("wallet temporary failure")
	ErrBreakerOpen = errors.New("wallet circuit breaker open")
	ErrInvalidCall = errors.New("invalid wallet call")
)

// errSign marks a request the editor could not sign: nothing was sent.
var errSign = errors.New("request not signed")

// Result is what one attempt produced.
type Result struct {
	Outcome Outcome
	Reason  string // one of the Reason constants
	Route   Route

	// HTTPStatus is the answer's status; 0 when nothing was answered.
	HTTPStatus int

	// Balance is the balance in cents from a success, or from an
	// INSUFFICIENT_FUNDS refusal (WERR-7); HasBalance says whether the answer
	// carried one.
	Balance    int64
	HasBalance bool
	Currency   string // as answered; empty when absent
	PlayerID   string // as answered (required on /balance: BAL-8)
	PlayerName string // /balance only; mask it before display (BAL-9)
	// OperatorTxID is the operator's own id of the movement (ENV-19), to store
	// for reconciliation. Empty when the operator sent none.
	OperatorTxID string

	// ErrorCode is the answered error_code (or TOKEN_INVALID for a /balance
	// 401, AMB-8). ErrorMessage is the operator's diagnostic text: for the
	// game's log only, never for the browser (AUTH-18).
	ErrorCode    string
	ErrorMessage string

	// RequestID and Timestamp are the Envelope of this attempt (ENV-4, ENV-5);
	// empty and 0 when the call was invalid.
	RequestID string
	Timestamp int64

	// Freebets are the raw grants of a /balance success, unvalidated: package
	// freebets discards the invalid ones (FB-10 to FB-14). Always nil on the
	// other routes: only /balance grants (FB-1).
	Freebets []json.RawMessage
}

// BalanceCall resolves a session: the token only, no player_id (BAL-1).
type BalanceCall struct {
	Token    string
	Currency string // the session currency, or the installation default before it is known (AMB-15)
	GameID   string // empty when unknown: game_id is then left out (ENV-8)
}

func (b BalanceCall) body(operator string, env envelope) walletapi.BalanceRequest {
	return walletapi.BalanceRequest{
		Operator: operator, Timestamp: env.timestamp, RequestId: env.requestID,
		Currency: b.Currency, GameId: gameID(b.GameID), Token: b.Token,
	}
}

// BetCall debits a stake.
type BetCall struct {
	PlayerID      string
	Token         string
	Currency      string
	GameID        string
	Amount        int64 // cents; on a freebet, the full stake (BET-7)
	TransactionID string
	RoundID       string
	FreebetID     *string // nil for an ordinary bet: sent as null (BET-4)
}

func (b BetCall) body(operator string, env envelope) walletapi.BetRequest {
	return walletapi.BetRequest{
		Operator: operator, Timestamp: env.timestamp, RequestId: env.requestID,
		Currency: b.Currency, GameId: gameID(b.GameID),
		PlayerId: b.PlayerID, Token: b.Token, Amount: b.Amount,
		TransactionId: b.TransactionID, RoundId: b.RoundID, FreebetId: b.FreebetID,
	}
}

// WinType is the type of a /win (WIN-1 to WIN-8).
type WinType string

// The /win types. This game sends win, freebet and zero_win; lose is the older
// enumeration, accepted for completeness (AMB-4).
const (
	WinTypeWin     WinType = "win"
	WinTypeFreebet WinType = "freebet"
	WinTypeZeroWin WinType = "zero_win"
	WinTypeLose    WinType = "lose"
)

// WinCall credits a prize, or closes a lost bet (zero_win).
type WinCall struct {
	PlayerID      string
	Token         string
	Currency      string
	GameID        string
	Amount        int64
	TransactionID string
	BetID         string // the transaction_id of the debit (ENV-16)
	RoundID       string
	Type          WinType
	FreebetID     *string // inherited from the debit; nil is sent as null (WIN-17)
}

func (w WinCall) body(operator string, env envelope) walletapi.WinRequest {
	return walletapi.WinRequest{
		Operator: operator, Timestamp: env.timestamp, RequestId: env.requestID,
		Currency: w.Currency, GameId: gameID(w.GameID),
		PlayerId: w.PlayerID, Token: w.Token, Amount: w.Amount,
		TransactionId: w.TransactionID, BetId: w.BetID, RoundId: w.RoundID,
		Type: walletapi.WinType(w.Type), FreebetId: w.FreebetID,
	}
}

// RollbackCall undoes a debit. It has no freebet_id (RB-1).
type RollbackCall struct {
	PlayerID      string
	Token         string
	Currency      string
	GameID        string
	Amount        int64 // the amount of the debit under BetID (RB-6)
	TransactionID string
	BetID         string
	RoundID       string
	Reason        string // diagnostic only (RB-11)
}

func (r RollbackCall) body(operator string, env envelope) walletapi.RollbackRequest {
	return walletapi.RollbackRequest{
		Operator: operator, Timestamp: env.timestamp, RequestId: env.requestID,
		Currency: r.Currency, GameId: gameID(r.GameID),
		PlayerId: r.PlayerID, Token: r.Token, Amount: r.Amount,
		TransactionId: r.TransactionID, BetId: r.BetID, RoundId: r.RoundID, Reason: r.Reason,
	}
}

// Client talks to one operator's wallet. It is safe for concurrent use.
type Client struct {
	operator string
	// api is the generated client. Its raw methods (Bet, not BetWithResponse)
	// are used: the *WithResponse ones drop the HTTP status and the body when
	// a JSON body does not decode, and read bodies without a limit; classify
	// needs both, whatever the body holds.
	api       *walletapi.ClientWithResponses
	key       secret.Secret
	secret    secret.Secret
	now       func() time.Time
	requestID func() string
	logger    *slog.Logger
	breaker   *breaker
	metrics   Metrics
}

// Option configures a Client.
type Option func(*options)

type options struct {
	httpClient *http.Client
	now        func() time.Time
	logger     *slog.Logger
	requestID  func() string
	breaker    BreakerSettings
	metrics    Metrics
}

// WithHTTPClient sets the HTTP client of every attempt; its Timeout is the
// attempt's timeout. The Client uses a copy that never follows redirects: a
// 3xx is answered like any other status, and no body or key is sent elsewhere.
func WithHTTPClient(hc *http.Client) Option { return func(o *options) { o.httpClient = hc } }

// WithClock sets the clock of the Envelope's timestamp. Durations are measured
// with the monotonic clock whatever this is.
func WithClock(now func() time.Time) Option { return func(o *options) { o.now = now } }

// WithLogger sets the logger; the default is slog.Default().
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// WithRequestID sets the generator of request_id; it must return a new value
// on every call (ENV-5). The default is "req-" and 26 random base32 characters.
func WithRequestID(gen func() string) Option { return func(o *options) { o.requestID = gen } }

// WithBreaker sets the circuit breaker; zero fields keep their defaults.
func WithBreaker(s BreakerSettings) Option { return func(o *options) { o.breaker = s } }

// WithMetrics sets where measurements go; the default discards them.
func WithMetrics(m Metrics) Option { return func(o *options) { o.metrics = m } }

// Settings are what a Client of one operator's wallet is built from.
type Settings struct {
	Operator string        // the operator's id
	URL      string        // the base of the wallet routes, no trailing slash
	Secret   secret.Secret // the HMAC key; empty: requests go unsigned (AUTH-8)
	APIKey   secret.Secret // the Bearer credential of every call
}

// NewClient returns the Client of one operator. It reads the operator's key and
// secret now: a new key takes effect with a new Client (AUTH-20). With no
// secret, requests go unsigned (AUTH-8); package config refuses that for a
// real-money operator (AUTH-7).
func NewClient(op Settings, opts ...Option) (*Client, error) {
	if op.URL == "" {
		return nil, fmt.Errorf("wallet client for operator %q: no wallet URL configured", op.Operator)
	}
	u, err := url.Parse(op.URL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("wallet client for operator %q: wallet URL is not an absolute http(s) URL", op.Operator)
	}
	if op.APIKey == "" {
		return nil, fmt.Errorf("wallet client for operator %q: no API key configured", op.Operator)
	}
	if !validHeaderValue(string(op.APIKey)) {
		// The key is opaque (AUTH-13) but must fit in a header; never say what it holds.
		return nil, fmt.Errorf("wallet client for operator %q: API key holds a control character and cannot be sent in a header", op.Operator)
	}
	o := options{logger: slog.Default(), now: time.Now, requestID: newRequestID}
	for _, opt := range opts {
		opt(&o)
	}
	if o.logger == nil {
		o.logger = slog.Default()
	}
	if o.metrics == nil {
		o.metrics = noMetrics{}
	}
	hc := defaultHTTPClient()
	if o.httpClient != nil {
		cp := *o.httpClient
		hc = &cp
	}
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

	c := &Client{
		operator:  op.Operator,
		key:       op.APIKey,
		secret:    op.Secret,
		now:       o.now,
		requestID: o.requestID,
		logger:    o.logger.With(slog.String("operator", op.Operator)),
		metrics:   o.metrics,
	}
	c.breaker = newBreaker(op.Operator, o.breaker, c.logger, o.metrics)
	c.api, err = walletapi.NewClientWithResponses(op.URL,
		walletapi.WithHTTPClient(hc),
		walletapi.WithRequestEditorFn(c.authenticate))
	if err != nil {
		return nil, fmt.Errorf("wallet client for operator %q: %w", op.Operator, err)
	}
	if op.Secret == "" {
		c.logger.Warn("wallet client without a secret: requests to this wallet are not signed (AUTH-8)")
	}
	return c, nil
}

// Operator returns the operator's id.
func (c *Client) Operator() string { return c.operator }

// defaultHTTPClient keeps connections to the one wallet host alive and lets
// many attempts run at once.
func defaultHTTPClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 1024
	t.MaxIdleConnsPerHost = 256
	t.IdleConnTimeout = 90 * time.Second
	t.TLSHandshakeTimeout = DefaultAttemptTimeout
	t.ResponseHeaderTimeout = DefaultAttemptTimeout
	t.ForceAttemptHTTP2 = true
	return &http.Client{Transport: t, Timeout: DefaultAttemptTimeout}
}

// newRequestID names an attempt: "req-" and 26 random base32 characters.
func newRequestID() string { return "req-" + rand.Text() }

// validHeaderValue refuses control characters other than tab, which no
// header value may hold.
func validHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if b := v[i]; (b < 0x20 && b != '\t') || b == 0x7f {
			return false
		}
	}
	return true
}

// authenticate is the RequestEditorFn of every request: the Bearer key as
// configured (AUTH-5, AUTH-11, AUTH-13) and X-Signature over the exact bytes
// the request will send, read back through GetBody (AUTH-1, AUTH-2). Without a
// secret no X-Signature is sent (AUTH-8).
func (c *Client) authenticate(_ context.Context, req *http.Request) error {
	req.Header.Set(AuthorizationHeader, "Bearer "+string(c.key))
	req.Header.Set("Accept", "application/json")
	if c.secret == "" {
		return nil
	}
	if req.GetBody == nil {
		return fmt.Errorf("%w: the body cannot be read back", errSign)
	}
	rc, err := req.GetBody()
	if err != nil {
		return fmt.Errorf("%w: %w", errSign, err)
	}
	defer func() { _ = rc.Close() }()
	body, err := io.ReadAll(rc)
	if err != nil {
		return fmt.Errorf("%w: %w", errSign, err)
	}
	req.Header.Set(SignatureHeader, signature.Sign(c.secret.Bytes(), body))
	return nil
}

// envelope is the per-attempt part of the Envelope: a new request_id and the
// current time in milliseconds (ENV-3, ENV-4, ENV-5).
type envelope struct {
	requestID string
	timestamp int64
}

func (c *Client) envelope() envelope {
	return envelope{requestID: c.requestID(), timestamp: c.now().UnixMilli()}
}

func gameID(id string) *string {
	if id == "" {
		return nil
	}
	return &id
}

// Balance asks who owns a session token and how much it holds: one attempt.
func (c *Client) Balance(ctx context.Context, call BalanceCall) (Result, error) {
	return send(ctx, c, RouteBalance, "", call, c.api.Balance)
}

// Bet debits a stake: one attempt. Only Success means the bet exists (BET-2);
// after Temporary the debit may or may not have happened.
func (c *Client) Bet(ctx context.Context, call BetCall) (Result, error) {
	return send(ctx, c, RouteBet, call.TransactionID, call, c.api.Bet)
}

// Win credits a prize or closes a lost bet: one attempt. Any 4xx is Temporary
// (WIN-12).
func (c *Client) Win(ctx context.Context, call WinCall) (Result, error) {
	return send(ctx, c, RouteWin, call.TransactionID, call, c.api.Win)
}

// Rollback undoes a debit: one attempt.
func (c *Client) Rollback(ctx context.Context, call RollbackCall) (Result, error) {
	return send(ctx, c, RouteRollback, call.TransactionID, call, c.api.Rollback)
}

// routeCall is the call of one route (BalanceCall, BetCall, WinCall,
// RollbackCall) whose request body is B.
type routeCall[B any] interface {
	// Validate refuses, before anything is sent, a call that the operator
	// could only answer with a 400.
	Validate() error
	// body is the request of one attempt: the call's members in the
	// Envelope of operator and env.
	body(operator string, env envelope) B
}

// send is every route's one attempt: an invalid call is refused with no
// request sent and no envelope drawn; a valid one gets a new envelope and its
// body goes through attempt by post, the generated client's method of the
// route. txID is the transaction_id to log, empty on /balance.
func send[B any](ctx context.Context, c *Client, route Route, txID string, call routeCall[B],
	post func(context.Context, B, ...walletapi.RequestEditorFn) (*http.Response, error)) (Result, error) {
	if err := call.Validate(); err != nil {
		return c.invalid(route, txID, err)
	}
	env := c.envelope()
	body := call.body(c.operator, env)
	return c.attempt(ctx, route, txID, env, func(ctx context.Context) (*http.Response, error) {
		return post(ctx, body)
	})
}

// attempt sends one request through the breaker and classifies its answer.
func (c *Client) attempt(ctx context.Context, route Route, txID string, env envelope, send func(context.Context) (*http.Response, error)) (Result, error) {
	done, berr := c.breaker.allow()
	if berr != nil {
		res := Result{Route: route, Reason: ReasonBreakerOpen, RequestID: env.requestID, Timestamp: env.timestamp}
		c.metrics.BreakerRejected(c.operator, route)
		err := fmt.Errorf("wallet %s: %w: %w", route, ErrTemporary, ErrBreakerOpen)
		c.log(ctx, res, txID, 0, err)
		return res, err
	}
	start := time.Now()
	resp, err := send(ctx)
	var body []byte
	if err == nil {
		body, err = readAnswer(resp)
	}
	elapsed := time.Since(start)

	var res Result
	switch {
	case err != nil:
		res = Result{Route: route, Reason: transportReason(ctx, err)}
		if resp != nil {
			res.HTTPStatus = resp.StatusCode
		}
		switch res.Reason {
		case ReasonCanceled, ReasonRequest:
			done(errExcluded) // the operator is not to blame
		default:
			done(errFailure)
		}
		err = fmt.Errorf("wallet %s: %w (%s): %w", route, ErrTemporary, res.Reason, err)
	default:
		res = classify(route, resp.StatusCode, body)
		if resp.StatusCode >= 500 {
			done(errFailure)
		} else {
			done(nil) // a 4xx or a refusal never opens the breaker (AUTH-17)
		}
		err = outcomeError(res)
	}
	res.RequestID, res.Timestamp = env.requestID, env.timestamp
	c.metrics.Attempt(c.operator, route, res.Outcome, elapsed)
	c.log(ctx, res, txID, elapsed, err)
	return res, err
}

// readAnswer reads at most MaxAnswerBytes+1 bytes of the body and closes it. A
// longer body is cut, which makes it unparsable.
func readAnswer(resp *http.Response) ([]byte, error) {
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxAnswerBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading the answer: %w", err)
	}
	if len(body) > MaxAnswerBytes {
		return body[:0], nil
	}
	return body, nil
}

func transportReason(ctx context.Context, err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, errSign):
		return ReasonRequest
	case ctx.Err() != nil:
		return ReasonCanceled
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return ReasonTimeout
	default:
		return ReasonTransport
	}
}

// outcomeError is the error of a classified answer: nil on Success. It never
// holds the operator's error_message (AUTH-18).
func outcomeError(r Result) error {
	switch r.Outcome {
	case Success:
		return nil
	case Refused:
		return fmt.Errorf("wallet %s: %w: %s (HTTP %d)", r.Route, ErrRefused, short(r.ErrorCode), r.HTTPStatus)
	default:
		if r.ErrorCode != "" {
			return fmt.Errorf("wallet %s: %w (%s): error_code %q (HTTP %d)", r.Route, ErrTemporary, r.Reason, short(r.ErrorCode), r.HTTPStatus)
		}
		return fmt.Errorf("wallet %s: %w (%s, HTTP %d)", r.Route, ErrTemporary, r.Reason, r.HTTPStatus)
	}
}

func (c *Client) invalid(route Route, txID string, cause error) (Result, error) {
	res := Result{Route: route, Reason: ReasonInvalidCall}
	err := fmt.Errorf("wallet %s: %w: %w: %w", route, ErrTemporary, ErrInvalidCall, cause)
	c.log(context.Background(), res, txID, 0, err)
	return res, err
}

// log writes the one line of an attempt. Success at debug, a refusal at info,
// a temporary failure at warn, INVALID_SIGNATURE at error: it is the game's
// own configuration that is broken (AUTH-16). No token, key, secret,
// signature or player id is ever an attribute.
func (c *Client) log(ctx context.Context, r Result, txID string, d time.Duration, err error) {
	level := slog.LevelWarn
	msg := "wallet attempt: temporary failure"
	switch {
	case r.Outcome == Success:
		level, msg = slog.LevelDebug, "wallet attempt: success"
	case r.Outcome == Refused:
		level, msg = slog.LevelInfo, "wallet attempt: refused"
	case r.Reason == ReasonInvalidSignature:
		level, msg = slog.LevelError, "wallet refused our API key or signature: the game's configuration for this operator is wrong (key, secret or clock)"
	case r.Reason == ReasonBreakerOpen, r.Reason == ReasonCanceled:
		level = slog.LevelDebug
	case r.Reason == ReasonInvalidCall:
		level, msg = slog.LevelError, "wallet call not sent: it breaks the contract"
	}
	if !c.logger.Enabled(ctx, level) {
		return
	}
	attrs := make([]slog.Attr, 0, 11)
	attrs = append(attrs,
		slog.String("route", string(r.Route)),
		slog.String("request_id", r.RequestID),
	)
	if txID != "" {
		attrs = append(attrs, slog.String("transaction_id", txID))
	}
	attrs = append(attrs,
		slog.String("outcome", r.Outcome.String()),
		slog.String("reason", r.Reason),
		slog.Int("http_status", r.HTTPStatus),
		slog.Duration("duration", d),
	)
	if r.ErrorCode != "" {
		attrs = append(attrs, slog.String("error_code", short(r.ErrorCode)))
	}
	if r.ErrorMessage != "" {
		attrs = append(attrs, slog.String("error_message", short(r.ErrorMessage)))
	}
	if r.OperatorTxID != "" {
		attrs = append(attrs, slog.String("operator_transaction_id", short(r.OperatorTxID)))
	}
	if err != nil && r.Outcome == Temporary {
		attrs = append(attrs, slog.String("error", err.Error()))
	}
	c.logger.LogAttrs(ctx, level, msg, attrs...)
}

// short cuts operator-supplied text for logs and errors.
func short(s string) string {
	const max = 200
	if len(s) <= max {
		return s
	}
	return s[:max] + "…"
}

var currencyRE = regexp.MustCompile(`^[A-Z]{3}$`)

// The checks below refuse, before anything is sent, a call that the operator
// could only answer with a 400: they are programming errors.

func checkEnvelope(token, currency string) error {
	if token == "" {
		return errors.New("token is empty")
	}
	if !currencyRE.MatchString(currency) {
		return errors.New("currency is not three upper-case letters (ENV-7)")
	}
	return nil
}

func checkMovement(playerID, token, currency string, amount int64, txID, roundID string) error {
	if err := checkEnvelope(token, currency); err != nil {
		return err
	}
	switch {
	case playerID == "":
		return errors.New("player_id is empty (ENV-9)")
	case amount < 0:
		return errors.New("amount is negative (GEN-6)")
	case txID == "":
		return errors.New("transaction_id is empty (ENV-11)")
	case roundID == "":
		return errors.New("round_id is empty")
	}
	return nil
}

// Validate refuses, with what is wrong, a /balance call that the operator could
// only answer with a 400; nothing is sent. The client checks every call with
// it, and the movement queue checks a movement with it before storing it.
func (b BalanceCall) Validate() error { return checkEnvelope(b.Token, b.Currency) }

// Validate refuses, with what is wrong, a /bet call that the operator could
// only answer with a 400; nothing is sent. The client checks every call with
// it, and the movement queue checks a movement with it before storing it.
func (b BetCall) Validate() error {
	if err := checkMovement(b.PlayerID, b.Token, b.Currency, b.Amount, b.TransactionID, b.RoundID); err != nil {
		return err
	}
	if b.FreebetID != nil && *b.FreebetID == "" {
		return errors.New("freebet_id is empty: use nil for an ordinary bet (BET-4)")
	}
	return nil
}

// Validate refuses, with what is wrong, a /win call that the operator could
// only answer with a 400; nothing is sent. The client checks every call with
// it, and the movement queue checks a movement with it before storing it.
func (w WinCall) Validate() error {
	if err := checkMovement(w.PlayerID, w.Token, w.Currency, w.Amount, w.TransactionID, w.RoundID); err != nil {
		return err
	}
	switch {
	case w.BetID == "":
		return errors.New("bet_id is empty (ENV-16)")
	case !walletapi.WinType(w.Type).Valid():
		return fmt.Errorf("type %q is not one of win, freebet, zero_win, lose (WIN-2)", short(string(w.Type)))
	case w.FreebetID != nil && *w.FreebetID == "":
		return errors.New("freebet_id is empty: use nil when the debit was an ordinary bet (WIN-17)")
	}
	return nil
}

// Validate refuses, with what is wrong, a /rollback call that the operator could
// only answer with a 400; nothing is sent. The client checks every call with
// it, and the movement queue checks a movement with it before storing it.
func (r RollbackCall) Validate() error {
	if err := checkMovement(r.PlayerID, r.Token, r.Currency, r.Amount, r.TransactionID, r.RoundID); err != nil {
		return err
	}
	if r.BetID == "" {
		return errors.New("bet_id is empty (ENV-16)")
	}
	return nil
}
