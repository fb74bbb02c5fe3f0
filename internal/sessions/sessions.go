// Package sessions owns player sessions: the entry of a player into a game from
// the launch URL's sid, and the session the browser then holds.
//
// Entry (Open) takes a launch ticket (tk_..., single use, 15 minutes) or, on the
// legacy path, the operator's own session token with the operator and game named
// by the request (VER-4, VER-5). An operator may switch the legacy path off
// (Operator.LegacyLaunchOff). A legacy session takes the responsible gambling
// controls of the player's latest /v1/launch for the operator. Outside demo it asks the operator's wallet who
// the player is with /balance, carrying the token only (BAL-1, BAL-2), on every
// entry and never per round (BAL-3): no player enters without a success
// (BAL-5). It checks the currency (BAL-11, BAL-12, VER-6), hands the freebet
// grants to package freebets (FB-*), masks the player's name (GAME-26, BAL-9),
// and opens a session whose id is 32 random bytes (base64url) that the browser
// presents as its Bearer. Only the SHA-256 of the id is stored, with the
// session's row in the sessions table; a session lives 12 hours from its
// opening.
//
// The balance a session shows is display only, the last one known: the wallet
// is the only source of truth (GEN-1). The service keeps it as the engine's
// Balances: the engine reports the /bet answers (Reported) and what a cashout
// or a cancel queued (Expect); the /win and /rollback answers arrive from the
// movement queue (OnWalletBalance); never a new /balance call (BAL-4). It is
// the one publisher of those changes: to the streams (Watch) and, in a
// cluster, to the other replicas (Options.Relay, taken there by Heard), see
// shown.go. A session loaded here later starts from the newest change heard,
// not an older row (follow.go); one loaded in the second before its row was
// written reads the row again, once, on its first use after rowSettle
// (entry.fromRow). Demo sessions keep their balance in the engine's DemoBank
// and never touch a wallet; their changes are shown and relayed all the same.
//
// Responsible gambling controls, switched per launch (tickets.Controls), live
// with the session: the session clock and net position (NetPosition, from the
// session's bets), the reality check (due every N minutes of session time
// after the last acknowledgement; AcknowledgeRealityCheck), and the inactivity
// timeout: a session whose player did nothing (Acted) for N minutes ends, and
// Get answers ErrSessionInactive from then on, unless a bet of the session is
// still in play (a control never costs the player a bet). The last action and
// the last acknowledgement are persisted with the display balances.
//
// The rules are this package's; the tables sessions and session_controls, and
// the reads of a session's bets (live bets, net position sums), are package
// store's, reached through the Repo interface declared here over this
// package's own types ((*store.Store).Sessions implements it). It never
// writes SQL nor names a database type.
//
// It knows nothing of HTTP. It must never log or return in an error a session
// id, a ticket, a token or a player id, and never show a player id or an
// unmasked name.
package sessions

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/crashstudio/crashgame/internal/engine"
	"github.com/crashstudio/crashgame/internal/freebets"
	"github.com/crashstudio/crashgame/internal/round"
	"github.com/crashstudio/crashgame/internal/tickets"
	"github.com/crashstudio/crashgame/internal/wallet"
)

// Defaults.
const (
	// TTL is how long a session lives from its opening (fixed, not sliding).
	TTL = 12 * time.Hour
	// DefaultDemoBalance is a demo session's starting balance in cents when
	// no amount is configured for its currency.
	DefaultDemoBalance int64 = 1_000_000
	// IDPrefix starts every session id.
	IDPrefix = "ps_"

	idBytes    = 32
	flushEvery = time.Second
	// rowSettle is how long after a session was loaded from its row that
	// row is read again once (see entry.fromRow): longer than a flush's
	// period and its write.
	rowSettle  = 2*flushEvery + 500*time.Millisecond
	sweepEvery = time.Minute
)

var idEncoding = base64.RawURLEncoding

// Refusals of Open and Get. Each maps to one player-facing code of the table.
var (
	ErrTicketInvalid = errors.New("sessions: no such ticket, operator or game") // TICKET_INVALID
	// ErrLegacyLaunchOff is the legacy launch of an operator whose
	// legacy_launch is false. It is an ErrTicketInvalid (TICKET_INVALID): the
	// player is told to open the game again from the operator's site.
	ErrLegacyLaunchOff   = fmt.Errorf("%w: the legacy launch is off for this operator", ErrTicketInvalid)
	ErrTicketUsed        = errors.New("sessions: ticket already used")                  // TICKET_USED
	ErrTicketExpired     = errors.New("sessions: ticket expired")                       // TICKET_EXPIRED
	ErrSessionRefused    = errors.New("sessions: the wallet refused the session")       // SESSION_REFUSED
	ErrCurrencyMismatch  = errors.New("sessions: currency mismatch or not enabled")     // SESSION_CURRENCY_MISMATCH
	ErrWalletUnavailable = errors.New("sessions: the wallet did not answer a decision") // WALLET_UNAVAILABLE
	ErrSessionExpired    = errors.New("sessions: unknown or expired session")           // SESSION_EXPIRED
	ErrSessionInactive   = errors.New("sessions: session ended after inactivity")       // SESSION_INACTIVE
)

// Balancer is what entry needs of an operator's wallet client (*wallet.Client).
type Balancer interface {
	Balance(ctx context.Context, call wallet.BalanceCall) (wallet.Result, error)
}

// Tickets redeems launch tickets (*tickets.Service).
type Tickets interface {
	Redeem(ctx context.Context, raw string) (tickets.Session, error)
}

// Freebets takes and lists grants (*freebets.Service).
type Freebets interface {
	Intake(ctx context.Context, owner freebets.Owner, entries []json.RawMessage, limits freebets.Limits, currencyAccepted bool) (freebets.Summary, error)
	Open(ctx context.Context, owner freebets.Owner) ([]freebets.Grant, error)
}

// Repo is what the package needs of the storage, over its own types: the
// sessions and their controls, and sums of a session's bets. Package store
// implements it ((*store.Store).Sessions).
type Repo interface {
	// InsertSession stores sess (its hash, its settings, its balance and
	// its instants) and, when withControls, the state of its controls,
	// both or neither, in the transaction of ctx if any.
	InsertSession(ctx context.Context, sess Session, withControls bool) error
	// SessionByHash reads a stored session without its controls' state;
	// ErrNotStored when there is none.
	SessionByHash(ctx context.Context, hash []byte) (Session, error)
	// SessionControls reads the state of a session's controls;
	// ErrNoControls when none is stored (every control off).
	SessionControls(ctx context.Context, hash []byte) (ControlsState, error)
	// WriteSessionStates writes display balances and controls' states in one
	// transaction.
	WriteSessionStates(ctx context.Context, balances []BalanceChange, controls []ControlsState) error
	// SessionBetTotals sums a session's bets by status and by freebet or not.
	SessionBetTotals(ctx context.Context, sessionHash []byte) ([]BetTotal, error)
	// SessionHasBets reports whether a bet of the session is in one of
	// statuses.
	SessionHasBets(ctx context.Context, sessionHash []byte, statuses ...string) (bool, error)
	// LaunchControls are the controls of the player's latest /v1/launch for
	// the operator: a legacy session takes them. ok is false when there was
	// none.
	LaunchControls(ctx context.Context, operator, playerID string) (c tickets.Controls, ok bool, err error)
}

// Refusals of a Repo.
var (
	// ErrNotStored: no session has that hash.
	ErrNotStored = errors.New("sessions: no such session stored")
	// ErrNoControls: the session has no controls' state stored.
	ErrNoControls = errors.New("sessions: no controls stored for the session")
)

// ControlsState is a session's responsible gambling controls and their
// state, as stored beside it.
type ControlsState struct {
	Hash       []byte
	Controls   tickets.Controls
	LastAction time.Time
	RealityAck time.Time // zero before the first acknowledgement
}

// BalanceChange is a session's display balance to store.
type BalanceChange struct {
	Hash    []byte // the session; nil: the player's sessions named below
	Balance int64
	// A player's balance (Hash nil): the wallet's answer to a /win or a
	// /rollback delivered here, for every session of Operator's PlayerID in
	// Currency ("" every currency) that is not demo and not expired at At.
	Operator, PlayerID, Currency string
	At                           time.Time
}

// BetTotal is the sum of a session's bets of one status, freebets apart.
type BetTotal struct {
	Status  string // a round.State
	Freebet bool   // bets paid with a freebet
	Count   int64
	Amount  int64 // cents staked
	Payout  int64 // cents paid (none counts 0)
}

var _ engine.Balances = (*Service)(nil)

// Operator is what opening a session needs of an operator.
type Operator struct {
	ID string
	// Enabled false refuses the operator's launches like an unknown
	// operator's (AUTH-9).
	Enabled    bool
	Games      []string   // the game ids enabled for it, in file order
	Currencies []Currency // its enabled currencies, sorted by code
	// LegacyLaunchOff refuses its legacy launches (the operator's own token
	// as sid) with ErrLegacyLaunchOff; config's legacy_launch: false.
	LegacyLaunchOff bool
}

// Currency is a currency enabled for an operator, with the limits a freebet
// grant in it must meet.
type Currency struct {
	Code   string
	Limits freebets.Limits
}

// currency returns the limits of an enabled currency (code matched exactly).
func (o *Operator) currency(code string) (freebets.Limits, bool) {
	for _, c := range o.Currencies {
		if c.Code == code {
			return c.Limits, true
		}
	}
	return freebets.Limits{}, false
}

// Options builds a Service.
type Options struct {
	Operators []Operator
	Games     []string // the ids of the installation's games
	// Languages are the session languages (pt, en, es); any other requested
	// language is DefaultLanguage (LANG-1..LANG-4).
	Languages       []string
	DefaultLanguage string
	Store           Repo // the sessions and their controls ((*store.Store).Sessions, migrated)
	Tickets         Tickets
	Wallets         func(operator string) (Balancer, bool)
	Freebets        Freebets         // nil: grants are ignored and none are listed
	Demo            *engine.DemoBank // the bank the engine's tables use; required for demo
	// DemoBalance is a demo session's starting balance per currency, in
	// cents; DefaultDemoBalance for a currency not listed.
	DemoBalance map[string]int64
	// DefaultCurrency is the installation's default currency, sent on the
	// legacy path's /balance before the session currency is known (AMB-15
	// reading A) and used by a demo launch that named none. Empty: the
	// operator's first enabled currency.
	DefaultCurrency string
	// Relay carries the balance changes decided in this process to the
	// other replicas of a cluster, whose Heard takes them (shown.go). nil:
	// one process.
	Relay  func(Change)
	Now    func() time.Time // nil: time.Now
	Logger *slog.Logger     // nil: slog.Default()
}

// OpenRequest is the page's POST /api/v1/sessions.
type OpenRequest struct {
	SID      string // a ticket (tk_...) or, on the legacy path, the operator's token
	Operator string // legacy path only
	GameID   string // legacy path only; may be left out when the operator has one game
	Language string // legacy path: the session language; else only for errors
}

// Session is a snapshot of one player session.
type Session struct {
	// ID is the session id, the browser's Bearer. Set only by Open: it is not
	// stored, only its hash is.
	ID   string
	Hash []byte // SHA-256 of ID

	Operator, GameID     string
	Token, PlayerID      string // the operator's; never shown to a browser
	Name                 string // masked
	Currency, Language   string
	Theme                string
	Demo, Mobile         bool
	LobbyURL, DepositURL string
	Balance              int64 // display only: the last known
	CreatedAt, ExpiresAt time.Time

	// Controls are the responsible gambling controls of the launch.
	Controls tickets.Controls
	// LastAction is the player's last action (opening, a bet, a cashout, a
	// cancellation, a reality check's Continue): the idle clock.
	LastAction time.Time
	// RealityAck is when the player last acknowledged a reality check; zero
	// before the first.
	RealityAck time.Time
}

// RealityCheckAt is when the next reality check is due: the interval after the
// last acknowledgement, or after the opening before the first. Zero when the
// session has no reality check.
func (s Session) RealityCheckAt() time.Time {
	if s.Controls.RealityCheckMinutes <= 0 {
		return time.Time{}
	}
	from := s.CreatedAt
	if s.RealityAck.After(from) {
		from = s.RealityAck
	}
	return from.Add(time.Duration(s.Controls.RealityCheckMinutes) * time.Minute)
}

// RealityCheckDue reports whether a reality check is due at now and not yet
// acknowledged: new bets wait for the player's Continue.
func (s Session) RealityCheckDue(now time.Time) bool {
	at := s.RealityCheckAt()
	return !at.IsZero() && !now.Before(at)
}

// IdleAt is when the session ends if the player does nothing more; zero when
// it has no inactivity timeout.
func (s Session) IdleAt() time.Time {
	if s.Controls.InactivityMinutes <= 0 {
		return time.Time{}
	}
	return s.LastAction.Add(time.Duration(s.Controls.InactivityMinutes) * time.Minute)
}

// controlsOn reports whether the session has any control to persist.
func (s Session) controlsOn() bool {
	c := s.Controls
	return c.SessionClock || c.RealityCheckMinutes > 0 || c.InactivityMinutes > 0
}

// Player returns who acts in the engine for this session.
func (s Session) Player() engine.Player {
	return engine.Player{Session: s.Hash, Operator: s.Operator, PlayerID: s.PlayerID, Token: s.Token,
		Currency: s.Currency, Name: s.Name, Demo: s.Demo}
}

// Owner returns the owner of the session's freebets.
func (s Session) Owner() freebets.Owner {
	return freebets.Owner{Operator: s.Operator, PlayerID: s.PlayerID, Currency: s.Currency}
}

// entry is a live session in the cache.
type entry struct {
	s     Session // immutable but for Balance, LastAction and RealityAck, guarded by Service.mu
	seq   uint64  // bumped by every balance the wallet reported
	dirty bool
	// fromRow is when the balance was read from the session's row, while
	// nothing newer has been heard or reported here since (zero otherwise).
	// The row is written by the replica that decided a balance within a
	// second of the decision: a replica that loaded it in that second, and
	// that started after the decision (so never heard it), holds an older
	// balance. The first read after rowSettle takes the row again (once).
	fromRow time.Time
	// controlsDirty: LastAction or RealityAck changed since the last write.
	controlsDirty bool
}

type playerKey struct{ operator, playerID string }

// Service opens and holds sessions. It is safe for concurrent use.
type Service struct {
	ops      map[string]*Operator
	games    []string
	langs    []string
	defLang  string
	repo     Repo
	tickets  Tickets
	wallets  func(string) (Balancer, bool)
	freebets Freebets
	demo     *engine.DemoBank
	demoBal  map[string]int64
	defCur   string
	now      func() time.Time
	log      *slog.Logger

	mu        sync.Mutex
	byHash    map[string]*entry
	byPlayer  map[playerKey]map[string]struct{}
	lastSweep time.Time
	// Balances heard for sessions not held here (follow.go).
	followHash   map[string]followed
	followPlayer map[followKey]followed
	// toWrite are the players' balances OnWalletBalance took, for their
	// sessions' rows at the next flush (the replica that delivered a movement
	// may hold none of the player's sessions: without this, a replica that
	// loads one later, after a restart, would show the older row).
	toWrite   map[followKey]followed
	followSeq uint64
	// The streams' watches of their sessions' balances (shown.go).
	watchers map[string]map[*Watch]struct{}
	relayTo  func(Change)

	stop     chan struct{}
	stopOnce sync.Once
	done     chan struct{}
}

// New returns a Service and starts the writer that persists display balances
// (at most once a second, in one transaction). Call Close to stop it.
func New(opts Options) (*Service, error) {
	switch {
	case opts.DefaultLanguage == "":
		return nil, errors.New("sessions: no default language")
	case opts.Store == nil:
		return nil, errors.New("sessions: no database")
	case opts.Tickets == nil:
		return nil, errors.New("sessions: no ticket service")
	case opts.Demo == nil:
		return nil, errors.New("sessions: no demo bank")
	}
	s := &Service{
		ops: map[string]*Operator{}, games: opts.Games, langs: opts.Languages, defLang: opts.DefaultLanguage, repo: opts.Store, tickets: opts.Tickets, wallets: opts.Wallets, freebets: opts.Freebets,
		demo: opts.Demo, demoBal: opts.DemoBalance, defCur: opts.DefaultCurrency, now: opts.Now, log: opts.Logger,
		byHash: map[string]*entry{}, byPlayer: map[playerKey]map[string]struct{}{},
		followHash: map[string]followed{}, followPlayer: map[followKey]followed{}, toWrite: map[followKey]followed{},
		watchers: map[string]map[*Watch]struct{}{}, relayTo: opts.Relay,
		stop: make(chan struct{}), done: make(chan struct{}),
	}
	for i := range opts.Operators {
		op := opts.Operators[i]
		s.ops[op.ID] = &op
	}
	if s.wallets == nil {
		s.wallets = func(string) (Balancer, bool) { return nil, false }
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	go s.flushLoop()
	return s, nil
}

// Close stops the balance writer after a last write.
func (s *Service) Close() error {
	s.stopOnce.Do(func() { close(s.stop) })
	<-s.done
	return nil
}

// Now is the sessions' clock: the responsible gambling controls are timed by it.
func (s *Service) Now() time.Time { return s.now() }

// Language returns the session language for a requested one: pt, en or es as
// given, anything else the installation default (LANG-1..LANG-4).
func (s *Service) Language(lang string) string {
	if slices.Contains(s.langs, lang) {
		return lang
	}
	return s.defLang
}

// Open opens a session from the launch URL's sid. See the package
// documentation; the refusals are the Err* of this package, any other error is
// an internal failure.
func (s *Service) Open(ctx context.Context, req OpenRequest) (Session, error) {
	var (
		launch tickets.Session
		legacy bool
	)
	if strings.HasPrefix(req.SID, tickets.Prefix) {
		t, err := s.tickets.Redeem(ctx, req.SID)
		switch {
		case errors.Is(err, tickets.ErrUsed):
			return Session{}, ErrTicketUsed // Rule TKT-5: never a second session
		case errors.Is(err, tickets.ErrExpired):
			return Session{}, ErrTicketExpired // Rule LIM-3
		case errors.Is(err, tickets.ErrUnknown):
			return Session{}, ErrTicketInvalid
		case err != nil:
			return Session{}, fmt.Errorf("sessions: open: %w", err)
		}
		launch = t
	} else {
		// Legacy launch (VER-4): sid is the operator's token (VER-5).
		legacy = true
		launch = tickets.Session{Operator: req.Operator, GameID: req.GameID, Token: req.SID, Language: req.Language}
	}

	op, ok := s.ops[launch.Operator]
	if !ok || !op.Enabled {
		return Session{}, ErrTicketInvalid
	}
	if legacy && op.LegacyLaunchOff {
		s.log.InfoContext(ctx, "legacy launch refused: legacy_launch is false for the operator; launch with POST /v1/launch", "operator", op.ID)
		return Session{}, ErrLegacyLaunchOff
	}
	if legacy && launch.GameID == "" && len(op.Games) == 1 {
		launch.GameID = op.Games[0]
	}
	if !slices.Contains(s.games, launch.GameID) || !slices.Contains(op.Games, launch.GameID) {
		return Session{}, ErrTicketInvalid
	}
	launch.Language = s.Language(launch.Language)

	if launch.Demo {
		return s.openDemo(ctx, op, launch)
	}
	return s.openReal(ctx, op, launch, legacy)
}

// openDemo opens a demo session: a balance held by the game, no wallet call.
func (s *Service) openDemo(ctx context.Context, op *Operator, launch tickets.Session) (Session, error) {
	cur := launch.Currency
	if cur == "" {
		cur = s.defaultCurrency(op)
	}
	if _, ok := op.currency(cur); !ok {
		return Session{}, ErrCurrencyMismatch
	}
	bal, ok := s.demoBal[cur]
	if !ok {
		bal = DefaultDemoBalance
	}
	name := Mask(launch.PlayerName)
	if name == "" {
		name = "Demo"
	}
	sess := s.newSession(op.ID, launch)
	sess.Currency, sess.Name, sess.Demo, sess.Balance = cur, name, true, bal
	sess.Token, sess.PlayerID = "", ""
	if err := s.insert(ctx, sess); err != nil {
		return Session{}, err
	}
	s.demo.Open(sess.Hash, bal)
	s.remember(sess, time.Time{})
	return sess, nil
}

// openReal asks /balance who the player is and opens the session.
func (s *Service) openReal(ctx context.Context, op *Operator, launch tickets.Session, legacy bool) (Session, error) {
	w, ok := s.wallets(op.ID)
	if !ok {
		s.log.ErrorContext(ctx, "session refused: the operator has no wallet client", "operator", op.ID)
		return Session{}, ErrSessionRefused
	}
	callCurrency := launch.Currency
	if callCurrency == "" {
		callCurrency = s.defaultCurrency(op) // AMB-15 reading A: some currency is always sent
	}
	// Rule BAL-1 BAL-2: the token only, no player_id.
	res, err := w.Balance(ctx, wallet.BalanceCall{Token: launch.Token, Currency: callCurrency, GameID: launch.GameID})
	switch res.Outcome {
	case wallet.Success:
	case wallet.Refused:
		// Rule BAL-5 BAL-6 BAL-7: no entry without a success. The operator's
		// message stays in the log (AUTH-18); the code is enough.
		s.log.InfoContext(ctx, "session refused by the wallet", "operator", op.ID, "error_code", res.ErrorCode, "legacy", legacy)
		return Session{}, ErrSessionRefused
	default:
		s.log.WarnContext(ctx, "session entry: wallet unavailable", "operator", op.ID, "reason", res.Reason, "err", err)
		return Session{}, ErrWalletUnavailable
	}
	if !legacy && launch.PlayerID != "" && res.PlayerID != launch.PlayerID {
		// The token the launch carried belongs to another player.
		s.log.WarnContext(ctx, "session refused: /balance names another player than the launch", "operator", op.ID)
		return Session{}, ErrSessionRefused
	}
	cur := res.Currency
	switch {
	case launch.Currency != "" && cur != "" && cur != launch.Currency:
		return Session{}, ErrCurrencyMismatch // Rule BAL-11
	case launch.Currency != "":
		cur = launch.Currency // Rule BAL-12: absent means the launch's
	case cur == "":
		// Rule VER-6: on the legacy path (or a launch without currency) /balance is
		// the only source; without one the limits are unknown, so no session.
		return Session{}, ErrCurrencyMismatch
	}
	limits, ok := op.currency(cur)
	if !ok {
		return Session{}, ErrCurrencyMismatch // not enabled for the operator
	}
	bal := res.Balance
	if bal < 0 {
		bal = 0
	}
	if legacy {
		// The legacy launch carries no controls: it takes those of the
		// player's latest /v1/launch, so that it cannot bypass them. Without
		// them known, no session.
		c, found, err := s.repo.LaunchControls(ctx, op.ID, res.PlayerID)
		if err != nil {
			return Session{}, fmt.Errorf("sessions: open: the controls of the player's latest launch: %w", err)
		}
		if found {
			launch.Controls = c
		}
	}
	sess := s.newSession(op.ID, launch)
	sess.PlayerID, sess.Currency, sess.Balance = res.PlayerID, cur, bal
	name := res.PlayerName
	if name == "" {
		name = launch.PlayerName
	}
	sess.Name = displayName(name, res.PlayerID) // Rule GAME-26 BAL-9
	if err := s.insert(ctx, sess); err != nil {
		return Session{}, err
	}
	if s.freebets != nil && len(res.Freebets) > 0 {
		// Invalid grants are discarded inside; an error leaves the player in
		// (FB-13), and the next entry's /balance tries again (FB-18).
		if _, err := s.freebets.Intake(ctx, sess.Owner(), res.Freebets, limits, true); err != nil {
			s.log.ErrorContext(ctx, "freebet intake failed; the player enters without new grants", "operator", op.ID, "err", err)
		}
	}
	s.remember(sess, time.Time{})
	return sess, nil
}

func (s *Service) defaultCurrency(op *Operator) string {
	if s.defCur != "" {
		if _, ok := op.currency(s.defCur); ok {
			return s.defCur
		}
	}
	if len(op.Currencies) > 0 {
		return op.Currencies[0].Code
	}
	return s.defCur
}

func (s *Service) newSession(operator string, launch tickets.Session) Session {
	raw := make([]byte, idBytes)
	_, _ = rand.Read(raw) // never fails (Go 1.24+)
	id := IDPrefix + idEncoding.EncodeToString(raw)
	now := s.now()
	return Session{
		ID: id, Hash: hashID(id), Operator: operator, GameID: launch.GameID, Token: launch.Token,
		Language: launch.Language, Theme: launch.Theme, Mobile: launch.Mobile,
		LobbyURL: launch.LobbyURL, DepositURL: launch.DepositURL,
		CreatedAt: now, ExpiresAt: now.Add(TTL),
		Controls: launch.Controls, LastAction: now,
	}
}

func hashID(id string) []byte {
	h := sha256.Sum256([]byte(id))
	return h[:]
}

// HashID returns the SHA-256 of a session id, the key it is stored under.
func HashID(id string) []byte { return hashID(id) }

// wellFormed reports whether id can be a session id, before any lookup.
func wellFormed(id string) bool {
	body, ok := strings.CutPrefix(id, IDPrefix)
	return ok && len(body) == idEncoding.EncodedLen(idBytes)
}

// Get returns the live session with this id, from memory or else from the
// database (after a restart); ErrSessionExpired when it is unknown or expired.
// A session idle past its inactivity timeout answers ErrSessionInactive with
// the session (for its language), unless a bet of it is still in play.
func (s *Service) Get(ctx context.Context, id string) (Session, error) {
	out, err := s.get(ctx, id)
	if err != nil {
		return out, err
	}
	now := s.now()
	if idle := out.IdleAt(); !idle.IsZero() && !now.Before(idle) {
		live, err := s.repo.SessionHasBets(ctx, out.Hash, liveStatuses...)
		if err != nil {
			return Session{}, fmt.Errorf("sessions: inactivity: %w", err)
		}
		if !live {
			return out, ErrSessionInactive
		}
	}
	return out, nil
}

func (s *Service) get(ctx context.Context, id string) (Session, error) {
	if !wellFormed(id) {
		return Session{}, ErrSessionExpired
	}
	return s.byHashID(ctx, hashID(id))
}

// Player is the player of the session stored under hash, made live in this
// process (loaded from the database when it is not): its display balance,
// and a demo session's bank balance, are then kept here. In a cluster the
// table's leader reads the player of every action forwarded to it here: the
// balances of the actions it decides are kept where it runs, and the
// operator's token is read from the session's row, never sent between
// replicas.
func (s *Service) Player(ctx context.Context, hash []byte) (engine.Player, error) {
	sess, err := s.byHashID(ctx, hash)
	if err != nil {
		return engine.Player{}, err
	}
	return sess.Player(), nil
}

// byHashID is the live session stored under h.
func (s *Service) byHashID(ctx context.Context, h []byte) (Session, error) {
	now := s.now()
	s.mu.Lock()
	s.sweepLocked(now)
	e, ok := s.byHash[string(h)]
	var (
		out  Session
		from time.Time
	)
	if ok {
		out, from = e.s, e.fromRow
	}
	s.mu.Unlock()
	if !ok {
		rec, err := s.load(ctx, h)
		if err != nil {
			return Session{}, err
		}
		out = rec
		var fromRow time.Time
		s.mu.Lock()
		if b, ok := s.heardLocked(out); ok && !out.Demo {
			out.Balance = b // newer than the row: see follow.go
		} else if !out.Demo {
			fromRow = now
		}
		s.mu.Unlock()
		if err := s.loadControls(ctx, &out); err != nil {
			return Session{}, err
		}
		if !now.Before(out.ExpiresAt) {
			return Session{}, ErrSessionExpired
		}
		if out.Demo {
			s.demo.Open(out.Hash, out.Balance) // a restart emptied the bank
		}
		out = s.remember(out, fromRow)
	} else if !from.IsZero() && now.Sub(from) >= rowSettle {
		out = s.settleRow(ctx, h, from, out)
	}
	if !now.Before(out.ExpiresAt) {
		return Session{}, ErrSessionExpired
	}
	if out.Demo {
		if b, ok := s.demo.Balance(out.Hash); ok {
			out.Balance = b
		}
	}
	return out, nil
}

// settleRow reads the balance of a session, held since loaded at from, from
// its row again: a balance decided elsewhere just before this process loaded
// it has been written there since (entry.fromRow). It keeps what was heard
// meanwhile, and answers out unchanged when the read fails (a display
// balance; the next read tries again).
func (s *Service) settleRow(ctx context.Context, h []byte, from time.Time, out Session) Session {
	rec, err := s.repo.SessionByHash(ctx, h)
	if err != nil {
		s.log.Warn("sessions: reading a session's balance again failed", "err", err)
		return out
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.byHash[string(h)]
	if !ok || !e.fromRow.Equal(from) {
		if ok {
			return e.s
		}
		return out
	}
	e.fromRow = time.Time{}
	if rec.Balance != e.s.Balance {
		e.s.Balance, e.seq = rec.Balance, e.seq+1
		s.showLocked(e.s, e.s.Balance)
	}
	return e.s
}

// remember caches sess (or returns the cached one when another call was
// first). fromRow is when its balance was read from its row, if it was.
func (s *Service) remember(sess Session, fromRow time.Time) Session {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.byHash[string(sess.Hash)]; ok {
		return e.s
	}
	s.byHash[string(sess.Hash)] = &entry{s: sess, fromRow: fromRow}
	if sess.PlayerID != "" {
		k := playerKey{sess.Operator, sess.PlayerID}
		m := s.byPlayer[k]
		if m == nil {
			m = map[string]struct{}{}
			s.byPlayer[k] = m
		}
		m[string(sess.Hash)] = struct{}{}
	}
	return sess
}

// sweepLocked forgets expired sessions, at most once a minute.
func (s *Service) sweepLocked(now time.Time) {
	if now.Sub(s.lastSweep) < sweepEvery {
		return
	}
	s.lastSweep = now
	s.sweepFollowedLocked(now)
	for h, e := range s.byHash {
		if now.Before(e.s.ExpiresAt) {
			continue
		}
		delete(s.byHash, h)
		k := playerKey{e.s.Operator, e.s.PlayerID}
		if m := s.byPlayer[k]; m != nil {
			delete(m, h)
			if len(m) == 0 {
				delete(s.byPlayer, k)
			}
		}
	}
}

// Balance returns a session's display balance, marked with the version of the
// wallet's figures it comes from, for Expect (engine.Balances). A demo
// session's is its bank balance.
func (s *Service) Balance(hash []byte) engine.BalanceMark {
	s.mu.Lock()
	e, ok := s.byHash[string(hash)]
	var m engine.BalanceMark
	demo := false
	if ok {
		m = engine.BalanceMark{Balance: e.s.Balance, Version: e.seq}
		demo = e.s.Demo
	}
	s.mu.Unlock()
	if demo {
		if b, ok := s.demo.Balance(hash); ok {
			m.Balance = b
		}
	}
	return m
}

// Reported records a balance the wallet reported for this session (a /bet
// answer, or the balance of an INSUFFICIENT_FUNDS refusal): BAL-4. For a demo
// session it is its bank's balance after a bet, a cashout or a refund, which
// the bank keeps: it is only shown. Either way the session's streams show it
// and, in a cluster, the other replicas hear it.
func (s *Service) Reported(hash []byte, balance int64) {
	balance = max(balance, 0)
	s.mu.Lock()
	e, ok := s.byHash[string(hash)]
	var c Change
	if ok {
		if !e.s.Demo {
			e.s.Balance, e.seq, e.dirty, e.fromRow = balance, e.seq+1, true, time.Time{}
		}
		s.showLocked(e.s, balance)
		c = Change{Session: hash, Demo: e.s.Demo, Balance: balance}
	}
	s.mu.Unlock()
	if ok {
		s.relay(c)
	}
}

// Expect returns the balance expected once a movement of delta cents the game
// has queued (a win's payout, a rollback's stake) reaches the wallet: the
// balance of mark plus delta. When the wallet reported no balance for the
// session since mark was read, the display balance takes delta too; otherwise
// the wallet's newer figure stays (it may already hold the movement), and the
// balance event of the delivered movement corrects it.
func (s *Service) Expect(hash []byte, mark engine.BalanceMark, delta int64) int64 {
	s.mu.Lock()
	e, ok := s.byHash[string(hash)]
	if !ok || e.s.Demo || e.seq != mark.Version {
		s.mu.Unlock()
		return mark.Balance + delta
	}
	e.s.Balance += delta
	e.dirty, e.fromRow = true, time.Time{}
	balance := e.s.Balance
	s.showLocked(e.s, balance)
	s.mu.Unlock()
	s.relay(Change{Session: hash, Balance: balance})
	return balance
}

// OnWalletBalance records a balance the wallet answered for a player outside a
// bet (a delivered /win or /rollback): it updates every live session of that
// player in that currency (an empty currency matches all) and returns them, so
// that each session's stream gets a balance event (BAL-4). The next flush
// writes it to the rows of every such session, held here or not.
func (s *Service) OnWalletBalance(operator, playerID, currency string, balance int64) []Session {
	balance = max(balance, 0)
	now := s.now()
	s.mu.Lock()
	changed := s.playerBalanceLocked(operator, playerID, currency, balance, now)
	s.toWrite[followKey{operator, playerID, currency}] = followed{balance: balance, at: now}
	s.mu.Unlock()
	s.relay(Change{Operator: operator, PlayerID: playerID, Currency: currency, Balance: balance})
	return changed
}

// playerBalanceLocked sets the balance of every live session of a player in
// currency ("" matches all), shows it on their streams, remembers it for the
// sessions loaded here later (follow.go), and returns the sessions changed.
func (s *Service) playerBalanceLocked(operator, playerID, currency string, balance int64, now time.Time) []Session {
	var changed []Session
	s.followPlayerLocked(operator, playerID, currency, balance, now)
	for h := range s.byPlayer[playerKey{operator, playerID}] {
		e := s.byHash[h]
		if e == nil || e.s.Demo || (currency != "" && e.s.Currency != currency) {
			continue
		}
		e.s.Balance, e.seq, e.dirty, e.fromRow = balance, e.seq+1, true, time.Time{}
		s.showLocked(e.s, balance)
		changed = append(changed, e.s)
	}
	return changed
}

// Acted records a player action of the session now (a bet, a cashout, a
// cancellation, a reality check's Continue): it resets the idle clock. Reads,
// polling and the stream are not actions.
func (s *Service) Acted(hash []byte) {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.byHash[string(hash)]; ok && now.After(e.s.LastAction) {
		e.s.LastAction = now
		e.controlsDirty = e.controlsDirty || e.s.controlsOn()
	}
}

// AcknowledgeRealityCheck records the player's Continue: when a reality check
// is due, the next one is due a whole interval from now. It is also an action
// (Acted). It returns the session as it now stands.
func (s *Service) AcknowledgeRealityCheck(hash []byte) (Session, error) {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.byHash[string(hash)]
	if !ok {
		return Session{}, ErrSessionExpired
	}
	if e.s.RealityCheckDue(now) {
		e.s.RealityAck = now
		e.controlsDirty = true
	}
	if now.After(e.s.LastAction) {
		e.s.LastAction = now
		e.controlsDirty = e.controlsDirty || e.s.controlsOn()
	}
	return e.s, nil
}

// NetPosition is what a session's player staked and won in the session.
type NetPosition struct {
	Staked int64 // the player's own money the wallet debited and kept
	Won    int64 // payouts of cashed-out bets
}

// Net is won minus staked: negative when the player is down.
func (n NetPosition) Net() int64 { return n.Won - n.Staked }

// liveStatuses are the states of a bet still in play: pending (its debit not
// yet decided) or accepted (in a round not yet settled).
var liveStatuses = []string{string(round.Pending), string(round.Accepted)}

// stakedStatuses are the states of a bet whose debit the wallet accepted and
// kept.
var stakedStatuses = []string{string(round.Accepted), string(round.CashedOut), string(round.Lost)}

// netPosition sums a session's bet totals. Staked counts the amount of every
// bet the wallet accepted and kept (accepted, cashed_out, lost) that was paid
// with the player's money: a freebet stakes nothing of the player's, and a
// pending, refused, cancelled or void bet has no debit or had it rolled back.
// Won counts the payout of every cashed-out bet, a freebet's included (it is
// paid to the player).
func netPosition(totals []BetTotal) NetPosition {
	var n NetPosition
	for _, t := range totals {
		if !t.Freebet && slices.Contains(stakedStatuses, t.Status) {
			n.Staked += t.Amount
		}
		if t.Status == string(round.CashedOut) {
			n.Won += t.Payout
		}
	}
	return n
}

// NetPosition is what the session's player staked and won in this session,
// from its bets (the session clock and the reality check show it).
func (s *Service) NetPosition(ctx context.Context, sess Session) (NetPosition, error) {
	totals, err := s.repo.SessionBetTotals(ctx, sess.Hash)
	if err != nil {
		return NetPosition{}, fmt.Errorf("sessions: net position: %w", err)
	}
	return netPosition(totals), nil
}

// OpenFreebets lists the session's open grants, oldest first (none for demo).
func (s *Service) OpenFreebets(ctx context.Context, sess Session) ([]freebets.Grant, error) {
	if s.freebets == nil || sess.Demo || sess.PlayerID == "" {
		return nil, nil
	}
	return s.freebets.Open(ctx, sess.Owner())
}

func (s *Service) insert(ctx context.Context, sess Session) error {
	// The controls' state is stored only when a control is on.
	if err := s.repo.InsertSession(ctx, sess, sess.controlsOn()); err != nil {
		return fmt.Errorf("sessions: store the session: %w", err)
	}
	return nil
}

// controlsStateOf is the state of sess's controls to store.
func controlsStateOf(sess Session) ControlsState {
	return ControlsState{Hash: sess.Hash, Controls: sess.Controls, LastAction: sess.LastAction, RealityAck: sess.RealityAck}
}

// loadControls reads the session's controls after a restart; none stored is
// every control off.
func (s *Service) loadControls(ctx context.Context, sess *Session) error {
	c, err := s.repo.SessionControls(ctx, sess.Hash)
	switch {
	case errors.Is(err, ErrNoControls):
		sess.LastAction = sess.CreatedAt
		return nil
	case err != nil:
		return fmt.Errorf("sessions: load a session's controls: %w", err)
	}
	sess.Controls, sess.LastAction, sess.RealityAck = c.Controls, c.LastAction, c.RealityAck
	return nil
}

func (s *Service) load(ctx context.Context, hash []byte) (Session, error) {
	rec, err := s.repo.SessionByHash(ctx, hash)
	if errors.Is(err, ErrNotStored) {
		return Session{}, ErrSessionExpired
	}
	if err != nil {
		return Session{}, fmt.Errorf("sessions: load a session: %w", err)
	}
	return rec, nil
}

// flushLoop writes changed display balances, at most once a second, in one
// transaction; a failed write is tried again on the next tick.
func (s *Service) flushLoop() {
	defer close(s.done)
	t := time.NewTicker(flushEvery)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			s.flush()
		case <-s.stop:
			s.flush()
			return
		}
	}
}

func (s *Service) flush() {
	var (
		changes  []BalanceChange
		controls []ControlsState
	)
	s.mu.Lock()
	for _, e := range s.byHash {
		if e.s.Demo {
			// A demo balance lives in the bank; keep the row close to it so a
			// restart reopens the bank with it.
			if b, ok := s.demo.Balance(e.s.Hash); ok && b != e.s.Balance {
				e.s.Balance, e.dirty = b, true
			}
		}
		if e.dirty {
			e.dirty = false
			changes = append(changes, BalanceChange{Hash: e.s.Hash, Balance: e.s.Balance})
		}
		if e.controlsDirty {
			e.controlsDirty = false
			controls = append(controls, controlsStateOf(e.s))
		}
	}
	// A player's balance is written before the sessions held here, so that a
	// session's own newer balance, decided here since, is the one that stays.
	players := s.toWrite
	s.toWrite = map[followKey]followed{}
	for k, f := range players {
		changes = append([]BalanceChange{{Balance: f.balance, Operator: k.operator, PlayerID: k.playerID, Currency: k.currency, At: f.at}}, changes...)
	}
	s.mu.Unlock()
	if len(changes) == 0 && len(controls) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.repo.WriteSessionStates(ctx, changes, controls); err != nil {
		s.log.Warn("sessions: persisting display balances failed; retrying", "err", err)
		s.mu.Lock()
		for k, f := range players {
			if _, newer := s.toWrite[k]; !newer {
				s.toWrite[k] = f
			}
		}
		for _, c := range changes {
			if e, ok := s.byHash[string(c.Hash)]; ok {
				e.dirty = true
			}
		}
		for _, c := range controls {
			if e, ok := s.byHash[string(c.Hash)]; ok {
				e.controlsDirty = true
			}
		}
		s.mu.Unlock()
	}
}
