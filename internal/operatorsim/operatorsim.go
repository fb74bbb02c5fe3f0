// Package operatorsim is the reference operator: the wallet side of the
// integration contract (POST /balance, /bet, /win, /rollback of
// api/wallet.v1.yaml) implemented exactly, over a ledger of its own, with a
// signed admin API under /admin/ for the test suites and a small lobby page at
// / that launches the game.
//
// It owns every rule of the ledger (players, session tokens, movements,
// freebet grants): which request is refused and how, replay versus divergent
// content, what a rollback undoes, when a freebet round is spent, how a
// balance moves. It also owns the wallet routes' authentication (Bearer key and
// X-Signature over the exact bytes), request validation against the published
// document, idempotency on (player_id, transaction_id), fault injection, and
// the lobby's signed /v1/launch call to the game.
//
// It does not own the ledger's storage: package internal/store/ledger opens
// the SQLite file, migrates it and runs every SQL statement, behind the small
// interfaces declared here (walletStore, ledgerStore) that *ledger.Store
// satisfies; a transaction travels in the context (InTx, and InGroupTx, which
// lets concurrent movements share one transaction and one durable commit).
// This package never imports a database library nor writes SQL.
//
// It must never move a balance outside a transaction that also records the
// movement, never answer a business refusal with a 5xx or a refusal as 200
// without status = error, never use request_id as an idempotency key, and never
// log a secret, an API key, a session token, a player id or a signature.
//
// Integrators: wallet.go maps each route's outcome to its HTTP answer,
// ledger.go holds every money rule, auth.go the checks that come before both.
package operatorsim

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/crashstudio/crashgame/internal/store/ledger"
)

// MemoryDB is the Config.DB value of a ledger that lives only in memory.
const MemoryDB = ledger.MemoryDB

// Defaults of Config.
const (
	DefaultOperator    = "dev"
	DefaultCurrency    = "BRL"
	DefaultGameID      = "crash"
	DefaultSeedBalance = 1_000_000 // cents
	DefaultTokenTTL    = 12 * time.Hour
)

// Config describes one reference operator.
type Config struct {
	// DB is the ledger's SQLite file, or MemoryDB (the default).
	DB string
	// Operator is this operator's name: the envelope's operator on every
	// wallet call, and the operator of the lobby's /v1/launch.
	Operator string
	// Secret is the HMAC secret shared with the game (X-Signature, both
	// directions) and used to sign admin calls. Required.
	Secret string
	// APIKeys are the Bearer keys accepted on the wallet routes. Two at once
	// during a rotation (AUTH-19); at least one.
	APIKeys []string
	// GameURL is the game's base address, for the lobby's /v1/launch.
	// Empty: the lobby's Play buttons explain that it is not configured.
	GameURL string
	// GameID is the game the lobby launches.
	GameID string
	// Currency is the currency of seeded and newly created players.
	Currency string
	// SeedPlayers funded test players are created at start (idempotent on a
	// file ledger), each with SeedBalance cents.
	SeedPlayers int
	SeedBalance int64
	// TokenTTL is the lifetime of a session token issued by the lobby or the
	// admin API.
	TokenTTL time.Duration
	// Logger receives JSON-friendly structured logs; nil means slog.Default().
	Logger *slog.Logger
	// Now is the clock (signature window, token expiry); nil means time.Now.
	Now func() time.Time
	// HTTPClient makes the lobby's /v1/launch call; nil means a client with a
	// 10 s timeout.
	HTTPClient *http.Client
}

// Sim is one running reference operator.
type Sim struct {
	cfg     Config
	store   *ledger.Store
	ledger  *teller
	faults  *faults
	logger  *slog.Logger
	handler http.Handler

	closeOnce sync.Once
}

// New opens (and migrates) the ledger, seeds the test players and builds the
// handler. Close releases the ledger. Opening is bounded by 30 s.
func New(cfg Config) (*Sim, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cfg.withDefaults(); err != nil {
		return nil, fmt.Errorf("operatorsim: %w", err)
	}
	st, err := ledger.Open(ctx, cfg.DB)
	if err != nil {
		return nil, fmt.Errorf("operatorsim: %w", err)
	}
	s := &Sim{
		cfg:    cfg,
		store:  st,
		ledger: &teller{store: st, now: cfg.Now, tokenTTL: cfg.TokenTTL},
		faults: newFaults(),
		logger: cfg.Logger,
	}
	if err := s.ledger.seed(ctx, cfg.SeedPlayers, cfg.SeedBalance, cfg.Currency); err != nil {
		_ = st.Close()
		return nil, fmt.Errorf("operatorsim: %w", err)
	}
	h, err := s.routes()
	if err != nil {
		_ = st.Close()
		return nil, fmt.Errorf("operatorsim: %w", err)
	}
	s.handler = h
	return s, nil
}

func (c *Config) withDefaults() error {
	if c.Secret == "" {
		return errors.New("a secret is required: it signs the wallet calls and the admin API")
	}
	keys := c.APIKeys[:0:0]
	for _, k := range c.APIKeys {
		if k = strings.TrimSpace(k); k != "" {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return errors.New("at least one API key is required: the game presents it as Authorization: Bearer <key>")
	}
	c.APIKeys = keys
	if c.DB == "" {
		c.DB = MemoryDB
	}
	if c.Operator == "" {
		c.Operator = DefaultOperator
	}
	if c.GameID == "" {
		c.GameID = DefaultGameID
	}
	if c.Currency == "" {
		c.Currency = DefaultCurrency
	}
	if !isCurrency(c.Currency) {
		return fmt.Errorf("currency %q is not an ISO 4217 code (three upper-case letters)", c.Currency)
	}
	if c.SeedPlayers < 0 {
		return fmt.Errorf("seed players %d is negative", c.SeedPlayers)
	}
	if c.SeedBalance == 0 {
		c.SeedBalance = DefaultSeedBalance
	}
	if c.SeedBalance < 0 {
		return fmt.Errorf("seed balance %d is negative", c.SeedBalance)
	}
	if c.TokenTTL <= 0 {
		c.TokenTTL = DefaultTokenTTL
	}
	c.GameURL = strings.TrimRight(c.GameURL, "/")
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	return nil
}

func isCurrency(s string) bool {
	if len(s) != 3 {
		return false
	}
	for i := 0; i < 3; i++ {
		if s[i] < 'A' || s[i] > 'Z' {
			return false
		}
	}
	return true
}

// Handler serves the wallet routes (POST /balance, /bet, /win, /rollback),
// the admin API (POST /admin/...) and the lobby (GET /). Mount it at the
// wallet_url's path (http.StripPrefix for a prefix).
func (s *Sim) Handler() http.Handler { return s.handler }

// Close releases requests held by a timeout fault and closes the ledger.
// Requests in flight fail. A second call does nothing.
func (s *Sim) Close() error {
	var err error
	s.closeOnce.Do(func() {
		close(s.faults.done)
		if cerr := s.store.Close(); cerr != nil {
			err = fmt.Errorf("operatorsim: %w", cerr)
		}
	})
	return err
}
