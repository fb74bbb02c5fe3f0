// Package table is the player's side of the game: the HTTP driver of
// api/table.v1.yaml (the player API), its live WebSocket stream, and the
// embedded web page that plays it.
//
// Handlers are thin: they translate the generated types of gen/table to calls
// of package sessions (entry, the session, display balances) and package
// engine (rounds, bets, cashouts), and engine refusals to the document's Error
// with text for the player in the session language (pt, en or es; LANG-*).
// Wallet codes and operator messages never reach the browser (AUTH-18): a
// wallet refusal becomes one of the table's own codes.
//
// The session id is the Bearer of every route but the session's creation; it
// never appears in a URL, a log line or an error (the stream receives it in its
// first message). A cashout is priced at the moment its request reached the
// server: the handler chain reads the clock before anything else.
//
// It must never decide a bet, a cashout or a settlement (package engine does),
// never call the wallet, and never show a browser a wallet code, an operator
// message, a player id or an unmasked name. The balances it shows are the
// engine's results in its answers and, on the streams, the changes package
// sessions publishes (sessions.Watch), never its own arithmetic on money.
package table

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"

	"github.com/crashstudio/crashgame/gen/table"
	"github.com/crashstudio/crashgame/internal/backoffice"
	"github.com/crashstudio/crashgame/internal/engine"
	"github.com/crashstudio/crashgame/internal/server"
	"github.com/crashstudio/crashgame/internal/sessions"
)

// Defaults of Config.
const (
	DefaultReadRate    = 10 // reads (GET routes) per second per session
	DefaultReadBurst   = 20 // reads at once per session
	DefaultActionRate  = 10 // money actions (bet, cancel, cashout) per second per session
	DefaultActionBurst = 20 // money actions at once per session
	// DefaultAddressRate and DefaultAddressBurst bound, per client address,
	// session creations and the public routes that take no session (the
	// fairness pages, support links, export downloads): 100 players behind
	// one carrier address can launch at once (docs/config.md, address_limits).
	DefaultAddressRate  = 20
	DefaultAddressBurst = 100
	// DefaultStreamRate and DefaultStreamBurst bound, per client address,
	// stream openings apart from session creations: a session reopening its
	// stream (a replica paused, its players reconnecting at once) never
	// draws from the session creations' budget, and 200 players behind one
	// address reconnect to one replica at once.
	DefaultStreamRate   = 50
	DefaultStreamBurst  = 200
	DefaultStreamBuffer = 64 // events a stream may lag behind before it is dropped
	// DefaultBoardFrames is how many frames of the round's board this process
	// writes a second to all its streams together, at most: each stream gets
	// the latest board at most every streams/DefaultBoardFrames seconds, and
	// at most 4 times a second (the table's own rate). 10,000 frames a second
	// is about a third of a core here (docs/performance.md).
	DefaultBoardFrames = 10_000
	// MaxBodyBytes bounds a request body of the player API.
	MaxBodyBytes = 4 << 10
)

// Currency names a currency of an operator.
type Currency struct {
	Operator string
	Code     string
}

// Limits are a currency's limits in cents as a session shows them; a nil
// limit is unknown and left out.
type Limits struct {
	MinBet, MaxBet, MaxWin *int64
}

// Game is what the player API needs of one game's table: its reads and its
// player actions. In one process both are the *engine.Table; in a cluster
// the reads are the replica's own engine.Table (it follows the leader's
// events) and the actions are package replica's Table, which forwards them
// to the leader. A new player action is added to Actions, so a replica that
// does not forward it does not compile where the two are put together
// (cmd/crashgame).
type Game interface {
	Reads
	Actions
}

// Reads are a table's reads: the round in view, its events, an ended round.
type Reads interface {
	Round() (engine.RoundView, int64)
	Subscribe(session []byte, buf int) *engine.Subscription
	EndedRound(ctx context.Context, id string) (engine.RoundRecord, error)
}

// Actions are the player actions on a table, decided by its leader.
type Actions interface {
	PlaceBet(ctx context.Context, p engine.Player, req engine.BetRequest) (engine.BetResult, error)
	Cashout(ctx context.Context, p engine.Player, betID string, receivedAt time.Time) (engine.CashoutResult, error)
	Cancel(ctx context.Context, p engine.Player, betID string) (engine.CancelResult, error)
}

// Split is a Game whose reads and actions are two values (a cluster's).
type Split struct {
	Reads
	Actions
}

var _ Game = (*engine.Table)(nil)

// Config is what the table is built from.
type Config struct {
	BaseURL         string // the public address of the game: the stream's own origin
	DefaultLanguage string // the language of a message to a request that names none
	// Limits are the limits of every currency enabled for an operator.
	Limits   map[Currency]Limits
	Sessions *sessions.Service
	// Tables returns the running table of a game.
	Tables func(gameID string) (Game, bool)
	// Records are the game's bets and finished rounds, read only.
	Records Records
	// Chains are the hash chains, read only, for the public fairness routes.
	Chains Chains
	// BackOffice opens the operators' links (a round's support page, a CSV
	// export) and the player's replay of a past round; Movements are what an
	// export reads.
	BackOffice *backoffice.Service
	Movements  backoffice.TransactionReader
	Logger     *slog.Logger     // nil: slog.Default()
	Now        func() time.Time // nil: time.Now; must be the engine's clock
	// CutOff says why this replica is cut off from the cluster now
	// (replica.Health.CutOff), or nil. While it is not nil a new stream is
	// refused with 503 TABLE_UNAVAILABLE before the upgrade, so that the
	// page opens it again through the load balancer on another replica,
	// instead of opening one here that the drain closes (Leave). nil: never.
	CutOff func() error
	// ExtraOrigins lists origins ("https://host[:port]") allowed to open the
	// stream besides base_url's, e.g. a development address.
	ExtraOrigins []string
	// ReadRate and ReadBurst limit the reads of one session: its GET routes
	// (defaults 10/s, 20).
	ReadRate  float64
	ReadBurst int
	// ActionRate and ActionBurst limit the money actions of one session: bets,
	// cancels and cashouts, apart from its reads (defaults 10/s, 20). A
	// cashout that pays is never refused by it.
	ActionRate  float64
	ActionBurst int
	// AddressRate and AddressBurst limit, per client address, session
	// creations and the public routes that take no session (defaults
	// DefaultAddressRate a second, DefaultAddressBurst at once).
	AddressRate  float64
	AddressBurst int
	// StreamRate and StreamBurst limit stream openings per client address,
	// apart from AddressRate: a stream that reopens for a session already
	// open is a reconnection, never counted as a new session (defaults
	// DefaultStreamRate a second, DefaultStreamBurst at once). The budget is
	// taken before the upgrade, since the session comes in the first
	// message: a stream whose hello names no live session drew from it too,
	// and is closed (4401) without creating one.
	StreamRate  float64
	StreamBurst int
	// TrustedProxies are the load balancers in front of the game: behind
	// one, the client address is the nearest one X-Forwarded-For names that
	// is not a trusted proxy itself. Empty: the peer address.
	TrustedProxies []netip.Prefix
	// StreamBuffer bounds how many events a stream may lag (default 64).
	StreamBuffer int
	// HelloTimeout bounds the wait for the stream's hello (default 5 s).
	HelloTimeout time.Duration
	// BoardFrames bounds the board frames written a second to all the
	// streams together (default DefaultBoardFrames).
	BoardFrames int
	// Heartbeat is the longest a stream goes without a message: a `ping`
	// fills a silence of half of it (default DefaultHeartbeat, stream.go).
	Heartbeat time.Duration
	// Registerer receives the streams' metrics (metrics.go); nil: none.
	Registerer prometheus.Registerer
}

// Records is what the player API reads of the game's records: a player's bets
// (their history, the current round's for the stream), the finished rounds
// of a game (their hashes are public once crashed), and a chain's ended
// rounds, checkpoints and void rounds for the public fairness routes.
// (*store.Store).Records satisfies it, over engine's records.
type Records interface {
	Bets(ctx context.Context, f engine.BetFilter) ([]engine.BetRecord, error)
	RecentRounds(ctx context.Context, gameID string, limit int) ([]engine.RoundRecord, error)
	ChainRounds(ctx context.Context, chainID string, from int64, limit int) ([]engine.RoundRecord, error)
	ChainCheckpoints(ctx context.Context, chainID string, every, through int64) ([]engine.RoundRecord, error)
	ChainVoids(ctx context.Context, chainID string) ([]engine.RoundRecord, error)
}

// Server serves the player API, the stream and the page.
type Server struct {
	cfg        Config
	defLang    string
	limits     map[Currency]Limits
	sessions   *sessions.Service
	tables     func(string) (Game, bool)
	records    Records
	chains     Chains
	backoffice *backoffice.Service
	movements  backoffice.TransactionReader
	log        *slog.Logger
	now        func() time.Time
	origins    map[string]bool
	msgs       messages

	readLimits   *limiters // per session
	actionLimits *limiters // per session
	perAddress   *limiters // session creations and public routes
	streamsByAdr *limiters // stream openings

	streamMu sync.Mutex
	streams  map[string]*stream // by session hash
	open     atomic.Int64       // len(streams), read without the lock
	closing  bool

	// streamMessages counts the messages written to the streams, and
	// streamWrites the writes to their sockets that carried them (metrics.go).
	streamMessages atomic.Int64
	streamWrites   atomic.Int64
}

// New returns the table's server. It registers itself with the sessions
// service to publish balance changes on the streams.
func New(cfg Config) (*Server, error) {
	switch {
	case cfg.DefaultLanguage == "":
		return nil, errors.New("table: no default language")
	case cfg.Sessions == nil:
		return nil, errors.New("table: no sessions service")
	case cfg.Tables == nil:
		return nil, errors.New("table: no tables")
	case cfg.Records == nil:
		return nil, errors.New("table: no database")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.CutOff == nil {
		cfg.CutOff = func() error { return nil }
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	positiveOr(&cfg.ReadRate, DefaultReadRate)
	positiveOr(&cfg.ReadBurst, DefaultReadBurst)
	positiveOr(&cfg.ActionRate, DefaultActionRate)
	positiveOr(&cfg.ActionBurst, DefaultActionBurst)
	positiveOr(&cfg.AddressRate, DefaultAddressRate)
	positiveOr(&cfg.AddressBurst, DefaultAddressBurst)
	positiveOr(&cfg.StreamRate, DefaultStreamRate)
	positiveOr(&cfg.StreamBurst, DefaultStreamBurst)
	positiveOr(&cfg.StreamBuffer, DefaultStreamBuffer)
	positiveOr(&cfg.HelloTimeout, 5*time.Second)
	positiveOr(&cfg.BoardFrames, DefaultBoardFrames)
	positiveOr(&cfg.Heartbeat, DefaultHeartbeat)
	msgs, err := loadMessages()
	if err != nil {
		return nil, err
	}
	s := &Server{
		cfg: cfg, defLang: cfg.DefaultLanguage, limits: cfg.Limits, sessions: cfg.Sessions, tables: cfg.Tables, records: cfg.Records, chains: cfg.Chains, backoffice: cfg.BackOffice, movements: cfg.Movements,
		log: cfg.Logger, now: cfg.Now, msgs: msgs,
		origins:      map[string]bool{},
		readLimits:   newLimiters(rate.Limit(cfg.ReadRate), cfg.ReadBurst),
		actionLimits: newLimiters(rate.Limit(cfg.ActionRate), cfg.ActionBurst),
		perAddress:   newLimiters(rate.Limit(cfg.AddressRate), cfg.AddressBurst),
		streamsByAdr: newLimiters(rate.Limit(cfg.StreamRate), cfg.StreamBurst),
		streams:      map[string]*stream{},
	}
	if o := originOf(cfg.BaseURL); o != "" {
		s.origins[o] = true
	}
	for _, o := range cfg.ExtraOrigins {
		if o = originOf(o); o != "" {
			s.origins[o] = true
		}
	}
	if cfg.Registerer != nil {
		if err := s.registerMetrics(cfg.Registerer); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Routes returns the table's routes for server.Config.Routes: the player API
// under /api/v1/, the stream, the page at / and its assets under /static/.
func (s *Server) Routes() map[string]http.Handler {
	strict := table.NewStrictHandlerWithOptions(&api{s}, []table.StrictMiddlewareFunc{s.actions}, table.StrictHTTPServerOptions{
		RequestErrorHandlerFunc:  s.requestError,
		ResponseErrorHandlerFunc: s.responseError,
	})
	si := &withStream{ServerInterface: strict, s: s}
	w := &table.ServerInterfaceWrapper{Handler: si, ErrorHandlerFunc: s.requestError}
	open := func(h http.HandlerFunc) http.Handler { return s.received(s.byAddress(s.perAddress, s.limitBody(h))) }
	authed := func(b budget, h http.HandlerFunc) http.Handler {
		return s.received(s.authenticate(b, s.limitBody(h)))
	}
	routes := map[string]http.Handler{
		"POST /api/v1/sessions":                  open(w.CreateSession),
		"GET /api/v1/session":                    authed(readBudget, w.GetSession),
		"POST /api/v1/session/reality-check":     authed(actionBudget, w.AcknowledgeRealityCheck),
		"GET /api/v1/round":                      authed(readBudget, w.GetCurrentRound),
		"GET /api/v1/bets":                       authed(readBudget, w.ListBets),
		"POST /api/v1/bets":                      authed(actionBudget, w.PlaceBet),
		"POST /api/v1/bets/{bet_id}/cashout":     authed(cashoutBudget, w.CashOut),
		"DELETE /api/v1/bets/{bet_id}":           authed(actionBudget, w.CancelBet),
		"GET /api/v1/rounds":                     authed(readBudget, w.ListRounds),
		"GET /api/v1/rounds/{round_id}":          authed(readBudget, w.GetRound),
		"GET /api/v1/fairness":                   authed(readBudget, w.GetFairness),
		"GET /fairness/chains":                   open(s.chainsPageOr(w.ListChains)),
		"GET /fairness/chains/{chain_id}":        open(w.GetChain),
		"GET /fairness/chains/{chain_id}/rounds": open(w.ListChainRounds),
		"GET /api/v1/rounds/{round_id}/replay":   authed(readBudget, w.GetRoundReplay),
		"GET /support/rounds/{link}":             open(s.page("web/support.html")),
		"GET /support/rounds/{link}/data":        open(w.GetSupportRound),
		"GET /exports/transactions/{link}":       open(w.GetTransactionsExport),
		"GET /api/v1/stream":                     s.byAddress(s.streamsByAdr, http.HandlerFunc(w.OpenStream)),
	}
	for p, h := range s.pageRoutes() {
		routes[p] = h
	}
	return routes
}

// Handler returns the routes on their own mux (tests, or mounting alone).
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	for p, h := range s.Routes() {
		mux.Handle(p, h)
	}
	return mux
}

// withStream gives the strict server a real OpenStream: the strict form cannot
// upgrade a connection.
type withStream struct {
	table.ServerInterface
	s *Server
}

func (w *withStream) OpenStream(rw http.ResponseWriter, r *http.Request) { w.s.openStream(rw, r) }

// Context values.
type (
	receivedKey   struct{}
	sessionKey    struct{}
	languageKey   struct{}
	overBudgetKey struct{}
)

// budget names the rate limit an authenticated route draws from.
type budget int

const (
	// readBudget: the session's reads. Polling never delays a money action.
	readBudget budget = iota
	// actionBudget: the session's money actions (bets, cancels).
	actionBudget
	// cashoutBudget draws from the money actions too, but is never refused up
	// front: a cashout of the player's own live bet always reaches the round
	// (the five bets bound it already). Past the budget, the handler answers
	// 429 only where it would do more work than the round's own answer.
	cashoutBudget
)

// overBudget reports how long until the session's action budget has room,
// when a cashout came past it.
func overBudget(ctx context.Context) (time.Duration, bool) {
	d, ok := ctx.Value(overBudgetKey{}).(time.Duration)
	return d, ok
}

// received stamps the moment the request reached the table, first thing: a
// cashout is priced at it.
func (s *Server) received(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		at := s.now()
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), receivedKey{}, at)))
	})
}

func receivedAt(ctx context.Context, now func() time.Time) time.Time {
	if t, ok := ctx.Value(receivedKey{}).(time.Time); ok {
		return t
	}
	return now()
}

func sessionFrom(ctx context.Context) (sessions.Session, bool) {
	sess, ok := ctx.Value(sessionKey{}).(sessions.Session)
	return sess, ok
}

// language is the language of the messages of this request: the session's,
// else the one the request named, else the installation default.
func (s *Server) language(ctx context.Context) string {
	if sess, ok := sessionFrom(ctx); ok {
		return sess.Language
	}
	if l, ok := ctx.Value(languageKey{}).(string); ok {
		return s.sessions.Language(l)
	}
	return s.defLang
}

// authenticate resolves the Bearer session (never from a URL), then applies the
// session's rate limit of budget b.
func (s *Server) authenticate(b budget, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, ok := bearer(r.Header.Get("Authorization"))
		var sess sessions.Session
		err := sessions.ErrSessionExpired
		if ok {
			sess, err = s.sessions.Get(r.Context(), id)
		}
		if errors.Is(err, sessions.ErrSessionInactive) { // ended by its inactivity timeout
			s.writeError(w, context.WithValue(r.Context(), sessionKey{}, sess), http.StatusUnauthorized, table.ErrorCodeSessionInactive, nil)
			return
		}
		if err != nil {
			if !errors.Is(err, sessions.ErrSessionExpired) {
				s.log.ErrorContext(r.Context(), "reading a session failed", "request_id", server.RequestID(r.Context()), "err", err)
				s.writeError(w, r.Context(), http.StatusInternalServerError, table.ErrorCodeServerError, nil)
				return
			}
			s.writeError(w, r.Context(), http.StatusUnauthorized, table.ErrorCodeSessionExpired, nil)
			return
		}
		sess.ID = id // Get does not return the id: it is not stored
		ctx := context.WithValue(r.Context(), sessionKey{}, sess)
		lim := s.readLimits
		if b != readBudget {
			lim = s.actionLimits
		}
		if wait, ok := lim.allow(string(sess.Hash), s.now()); !ok {
			if b != cashoutBudget {
				s.writeRateLimited(w, ctx, wait)
				return
			}
			ctx = context.WithValue(ctx, overBudgetKey{}, wait)
		}
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

func bearer(h string) (string, bool) {
	scheme, id, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	id = strings.TrimSpace(id)
	return id, id != ""
}

// byAddress limits requests per client address, each kind from its own
// budget: session creations and public routes from perAddress, stream
// openings (reconnections included) from streamsByAdr.
func (s *Server) byAddress(budget *limiters, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if wait, ok := budget.allow(clientAddress(r, s.cfg.TrustedProxies), s.now()); !ok {
			s.writeRateLimited(w, r.Context(), wait)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// clientAddress is the address of the request's client: its peer, or, when
// the peer is a trusted proxy, the nearest address of X-Forwarded-For (read
// from the right: each proxy appends the address it received from) that is
// not a trusted proxy. A client can write anything on the left of that list;
// only what the trusted proxies appended is believed.
func clientAddress(r *http.Request, trusted []netip.Prefix) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	if len(trusted) == 0 || !isTrusted(host, trusted) {
		return host
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		hop := strings.TrimSpace(hops[i])
		if _, err := netip.ParseAddr(hop); err != nil {
			return host // not an address: the list cannot be believed past here
		}
		if !isTrusted(hop, trusted) {
			return hop
		}
	}
	return host
}

func isTrusted(addr string, trusted []netip.Prefix) bool {
	a, err := netip.ParseAddr(addr)
	if err != nil {
		return false
	}
	a = a.Unmap()
	for _, p := range trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

func (s *Server) limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, MaxBodyBytes)
		}
		next.ServeHTTP(w, r)
	})
}

// errorBody is the document's Error in the request's language.
func (s *Server) errorBody(ctx context.Context, code table.ErrorCode, balance *int64) table.Error {
	return table.Error{Status: "error", ErrorCode: code, Message: s.msgs.text(s.language(ctx), code), Balance: balance}
}

func (s *Server) writeError(w http.ResponseWriter, ctx context.Context, status int, code table.ErrorCode, balance *int64) {
	if status >= http.StatusInternalServerError && w.Header().Get("Retry-After") == "" {
		w.Header().Set("Retry-After", strconv.Itoa(failureRetryAfter))
	}
	writeJSON(w, status, s.errorBody(ctx, code, balance))
}

func (s *Server) writeRateLimited(w http.ResponseWriter, ctx context.Context, wait time.Duration) {
	w.Header().Set("Retry-After", strconv.Itoa(retryAfter(wait)))
	s.writeError(w, ctx, http.StatusTooManyRequests, table.ErrorCodeRateLimited, nil)
}

// retryAfter is the Retry-After of a 429: whole seconds until the budget has
// room again, at least 1.
func retryAfter(wait time.Duration) int {
	return max(int(math.Ceil(wait.Seconds())), 1)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		w.Header().Set("Retry-After", strconv.Itoa(failureRetryAfter))
		http.Error(w, `{"status":"error","error_code":"SERVER_ERROR","message":"-"}`, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// requestError answers a request the generated code could not read (body not
// JSON, too big, a parameter of the wrong type): 400 BAD_REQUEST.
func (s *Server) requestError(w http.ResponseWriter, r *http.Request, err error) {
	s.log.DebugContext(r.Context(), "bad table request", "request_id", server.RequestID(r.Context()), "path", r.URL.Path, "err", err)
	s.writeError(w, r.Context(), http.StatusBadRequest, table.ErrorCodeBadRequest, nil)
}

// responseError answers a handler's unexpected error: 500 SERVER_ERROR.
func (s *Server) responseError(w http.ResponseWriter, r *http.Request, err error) {
	s.log.ErrorContext(r.Context(), "table handler failed", "request_id", server.RequestID(r.Context()), "path", r.URL.Path, "err", err)
	s.writeError(w, r.Context(), http.StatusInternalServerError, table.ErrorCodeServerError, nil)
}

// limiters holds one token bucket per key, forgetting idle ones.
type limiters struct {
	mu        sync.Mutex
	limit     rate.Limit
	burst     int
	m         map[string]*limiterEntry
	lastSweep time.Time
}

type limiterEntry struct {
	lim  *rate.Limiter
	seen time.Time
}

func newLimiters(limit rate.Limit, burst int) *limiters {
	return &limiters{limit: limit, burst: burst, m: map[string]*limiterEntry{}}
}

// allow takes one token for key, or reports how long until one is free.
func (l *limiters) allow(key string, now time.Time) (time.Duration, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.lastSweep) > time.Minute {
		l.lastSweep = now
		for k, e := range l.m {
			if now.Sub(e.seen) > 5*time.Minute {
				delete(l.m, k)
			}
		}
	}
	e := l.m[key]
	if e == nil {
		e = &limiterEntry{lim: rate.NewLimiter(l.limit, l.burst)}
		l.m[key] = e
	}
	e.seen = now
	r := e.lim.ReserveN(now, 1)
	if !r.OK() {
		return time.Second, false
	}
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return d, false
	}
	return 0, true
}

// positiveOr sets *v to def unless *v is positive: an unset (or nonsensical)
// setting takes its default.
func positiveOr[T int | float64 | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

// int32Of is n as the document's int32 fields hold it, held to int32's range.
// Their values (an RTP in basis points, a formula version, minutes of a
// control, counts of one round's bets) are far inside it; a value outside
// would be a defect shown as the nearest bound, never as a wrapped number.
func int32Of[T int | int64](n T) int32 {
	if n > math.MaxInt32 {
		return math.MaxInt32
	}
	if n < math.MinInt32 {
		return math.MinInt32
	}
	return int32(n)
}
