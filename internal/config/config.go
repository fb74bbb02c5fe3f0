// Package config owns the installation file of `crashgame serve --config FILE`: the
// listen address, the public base URL, the default language, the database, the games
// and the operators with their secrets, wallets, games, currencies and limits. It
// reads the file once at start-up, expands ${NAME} from the environment, fills
// defaults and refuses an unsafe or inconsistent installation with every problem
// named at once. Its types are plain values that other packages read.
//
// It must never let a secret or an API key reach an error message, a log line or a
// printed value, never start a real-money operator without a secret (AUTH-7) or with
// a wallet at http:// outside loopback (AUTH-21), and never turn an unknown limit
// into zero (LIM-11). It does no I/O besides reading the file and the environment.
package config

import (
	"fmt"
	"log/slog"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/crashstudio/crashgame/internal/secret"
)

// Languages are the languages of the contract, in the order the docs list them.
var Languages = []string{"pt", "en", "es"}

// Defaults of the keys that may be left out of the file; docs/config.md lists them.
const (
	DefaultListen         = "127.0.0.1:8080"
	DefaultMetricsListen  = "127.0.0.1:9090" // loopback: /metrics never reaches the public port by default
	DefaultLanguage       = "en"
	DefaultDatabase       = "sqlite://data/crashgame.db"
	DefaultRTPBasisPoints = 9700   // 97.00 %
	DefaultMaxMultiplier  = 100000 // 1000.00x, in hundredths
	DefaultBettingMS      = 5000
	DefaultPauseMS        = 3000
)

// MinSecretLen is the shortest HMAC secret accepted. A shorter one can be found by
// brute force from a single signed request.
const MinSecretLen = 16

// Config is one installation, as read from its file and validated.
type Config struct {
	Listen string // host:port the HTTP server listens on
	// MetricsListen is the host:port that alone serves /metrics
	// (DefaultMetricsListen when the file leaves it out). Listen never serves
	// /metrics.
	MetricsListen string
	// Profiling adds Go's profiles (/debug/pprof/) to MetricsListen, for an
	// engineer who must see where a replica's CPU goes. Off by default.
	Profiling       bool
	BaseURL         string // public address of the game, no trailing slash (GEN-11)
	DefaultLanguage string // one of Languages (LANG-4)
	Database        DSN    // sqlite://PATH or postgres://USER:PASSWORD@HOST:PORT/DB?...
	Games           []Game
	Operators       []Operator
	// TrustedProxies are the load balancers in front of the game: a request
	// from one of them is taken to come from the client its X-Forwarded-For
	// names (the per-address limits count that client, not the balancer).
	// Empty: the peer address is the client.
	TrustedProxies []netip.Prefix
	// AddressLimits are the per-address budgets of the player API (the
	// `address_limits` section; DefaultAddressLimits when left out).
	AddressLimits AddressLimits
	// Cluster is set when the installation runs as several replicas (the
	// `cluster` section); nil: one process, as before.
	Cluster *Cluster
	// Fairness is how the hash chains are kept (the `fairness` section,
	// required).
	Fairness Fairness
	// LinkTTLMS is how long a back office link (a round's support page, a
	// CSV export) stays valid (`back_office.link_ttl_ms`).
	LinkTTLMS int64
	// RetentionDays is how long the bets and movements of an ended round
	// are kept once settled (`back_office.retention_days`; 0: forever).
	RetentionDays int64
}

// AddressLimits are the budgets of one client address (the one
// trusted_proxies makes of X-Forwarded-For) on each replica: token buckets
// that refill continuously, PerSecond a second up to Burst at once. A request
// past its budget answers 429 RATE_LIMITED with Retry-After.
type AddressLimits struct {
	// SessionsPerSecond and SessionsBurst bound session creations
	// (POST /api/v1/sessions, a player's launch) and the public routes that
	// take no session: the fairness pages, support links, export downloads.
	SessionsPerSecond, SessionsBurst int64
	// StreamsPerSecond and StreamsBurst bound stream openings
	// (GET /api/v1/stream), apart: a session reopening its stream (a
	// reconnection) never draws from the session creations' budget.
	StreamsPerSecond, StreamsBurst int64
}

// DefaultAddressLimits let 100 players behind one carrier address launch at
// once, and 200 reconnect to one replica at once (docs/config.md says why).
var DefaultAddressLimits = AddressLimits{SessionsPerSecond: 20, SessionsBurst: 100, StreamsPerSecond: 50, StreamsBurst: 200}

// MinRetentionDays is the shortest retention: four months, what an
// aggregator such as Hub88 keeps transactions at least.
const MinRetentionDays = 120

// Retention is Config.RetentionDays as a duration (0: forever).
func (c *Config) Retention() time.Duration { return time.Duration(c.RetentionDays) * 24 * time.Hour }

// DefaultLinkTTLMS is a week.
const DefaultLinkTTLMS = 7 * 24 * 3600 * 1000

// LinkTTL is Config.LinkTTLMS as a duration.
func (c *Config) LinkTTL() time.Duration { return time.Duration(c.LinkTTLMS) * time.Millisecond }

// Fairness is the `fairness` section: the key that seals every chain's
// seed, how long a new chain takes contributions to its salt, and the
// public randomness beacon, if any, whose future round every new salt takes.
type Fairness struct {
	// SeedKey is the AES-256 key, 64 hex digits, that seals the chains'
	// seeds at rest; the same on every replica, never in the database.
	SeedKey Secret
	// SeedingWindowMS is how long a new chain takes operators' commitments.
	SeedingWindowMS int64
	// RevealWindowMS is how long, after the seeding window, the operators
	// reveal the values they committed to; the salt is fixed at its end.
	RevealWindowMS int64
	// BeaconNetwork names the public randomness beacon whose round after
	// each new chain's reveal window the chain's salt takes ("quicknet");
	// "" with BeaconURL: none. BeaconURL is one of its HTTP relays.
	BeaconNetwork string
	BeaconURL     string
}

// DefaultSeedingWindowMS is five minutes: the operators' time to
// contribute to a new chain's salt.
const DefaultSeedingWindowMS = 300_000

// DefaultRevealWindowMS is two minutes: the operators' time to reveal their
// values once the seeding window is over.
const DefaultRevealWindowMS = 120_000

// RevealWindow is Fairness.RevealWindowMS as a duration.
func (f *Fairness) RevealWindow() time.Duration {
	return time.Duration(f.RevealWindowMS) * time.Millisecond
}

// SeedingWindow is Fairness.SeedingWindowMS as a duration.
func (f *Fairness) SeedingWindow() time.Duration {
	return time.Duration(f.SeedingWindowMS) * time.Millisecond
}

// Cluster is how a replica joins the others: its name, the NATS servers
// between the replicas, and the lease by which one replica leads each table.
// A cluster needs PostgreSQL.
type Cluster struct {
	Replica      string   // this replica's name in leases, logs and metrics
	NATS         []string // nats://HOST:PORT URLs; may carry credentials, never printed
	LeaseTTLMS   int64    // how long a dead leader holds its tables at most
	LeaseRenewMS int64    // how often a leader renews its leases
	// DrainMS is how long a replica keeps serving after SIGTERM, /readyz
	// answering 503, before its tables stop and its streams close: the
	// load balancer's time to take it out of rotation, so that the players
	// it lets go reconnect straight to another replica.
	DrainMS int64
}

// Defaults of the cluster section.
const (
	DefaultLeaseTTLMS   = 2000
	DefaultLeaseRenewMS = 500
	// DefaultDrainMS covers deploy/haproxy.cfg's checks (two failed, a
	// second apart) with half a second to spare.
	DefaultDrainMS = 2500
)

// Drain is Cluster.DrainMS as a duration.
func (c *Cluster) Drain() time.Duration { return time.Duration(c.DrainMS) * time.Millisecond }

// LeaseTTL is Cluster.LeaseTTLMS as a duration.
func (c *Cluster) LeaseTTL() time.Duration { return time.Duration(c.LeaseTTLMS) * time.Millisecond }

// LeaseRenew is Cluster.LeaseRenewMS as a duration.
func (c *Cluster) LeaseRenew() time.Duration { return time.Duration(c.LeaseRenewMS) * time.Millisecond }

// LogValue describes the cluster section without the NATS URLs' user
// information.
func (c *Cluster) LogValue() slog.Value {
	hosts := make([]string, len(c.NATS))
	for i, raw := range c.NATS {
		if u, err := url.Parse(raw); err == nil {
			hosts[i] = u.Host
		}
	}
	return slog.GroupValue(slog.String("replica", c.Replica), slog.Any("nats", hosts),
		slog.Int64("lease_ttl_ms", c.LeaseTTLMS), slog.Int64("lease_renew_ms", c.LeaseRenewMS))
}

// Game is one game of the catalogue.
type Game struct {
	ID             string
	Name           string
	Studio         string
	Category       string
	ImageURL       string // empty when not configured; then omitted from the catalogue
	RTPBasisPoints int64  // return to player in basis points: 9700 means 97.00 %
	MaxMultiplier  int64  // crash point ceiling in hundredths: 100000 means 1000.00x
	BettingMS      int64  // length of the betting phase
	PauseMS        int64  // pause after a crash before the next round
	Demo           bool   // demo launches allowed (and the operator must allow them too)
	Freebet        bool   // accepts operator-granted free rounds
	Mobile         bool
	Desktop        bool
}

// Betting is the length of the betting phase.
func (g *Game) Betting() time.Duration { return time.Duration(g.BettingMS) * time.Millisecond }

// Pause is the pause between a crash and the next betting phase.
func (g *Game) Pause() time.Duration { return time.Duration(g.PauseMS) * time.Millisecond }

// Operator is one operator (brand) and how the two directions talk to it.
type Operator struct {
	ID string
	// Enabled false refuses the operator's catalogue and launch requests like an
	// unknown operator (AUTH-9); movements already queued for its wallet are still
	// delivered, so no confirmed debit is left without its settlement.
	Enabled bool
	// Secret is the HMAC key of both directions; empty means the operator is not
	// signed (demo only, AUTH-8).
	Secret Secret
	// APIKey is the Bearer credential the game presents on wallet calls; set
	// exactly when WalletURL is.
	APIKey Secret
	// WalletURL is the base of the operator's wallet routes, no trailing slash;
	// empty for an operator without a wallet (demo only).
	WalletURL string
	Games     []string // game ids, in file order
	Demo      bool     // demo launches allowed
	ZeroWin   bool     // send a zero-amount /win for a lost bet
	// LegacyLaunch allows the legacy launch (POST /api/v1/sessions with the
	// operator's own token, the operator and the game named: VER-4). Default
	// true. A legacy session takes the responsible gambling controls of the
	// player's latest /v1/launch for this operator.
	LegacyLaunch bool
	Currencies   []Currency // sorted by Code (GEN-8)
}

// Currency is one currency enabled for an operator, with its limits.
type Currency struct {
	Code string // ISO 4217, three upper-case letters
	Limits
}

// Limits holds the per-currency limits in cents. A nil field is a limit that is
// unknown: it is left out of the catalogue, never sent as zero (LIM-10 LIM-11).
type Limits struct {
	MinBet *int64
	MaxBet *int64
	MaxWin *int64
}

func (l Limits) clone() Limits {
	cp := func(p *int64) *int64 {
		if p == nil {
			return nil
		}
		v := *p
		return &v
	}
	return Limits{MinBet: cp(l.MinBet), MaxBet: cp(l.MaxBet), MaxWin: cp(l.MaxWin)}
}

// Operator returns the operator with this id, enabled or not. A caller serving the
// operator's own requests must treat a disabled operator exactly like an unknown one
// (AUTH-9); the movement queue still needs it to settle what is pending.
func (c *Config) Operator(id string) (*Operator, bool) {
	for i := range c.Operators {
		if c.Operators[i].ID == id {
			return &c.Operators[i], true
		}
	}
	return nil, false
}

// Game returns the game with this id.
func (c *Config) Game(id string) (*Game, bool) {
	for i := range c.Games {
		if c.Games[i].ID == id {
			return &c.Games[i], true
		}
	}
	return nil, false
}

// Language returns s when it is one of Languages (matched exactly), otherwise the
// installation's default language (LANG-1 LANG-2 LANG-3 LANG-4).
func (c *Config) Language(s string) string {
	if slices.Contains(Languages, s) {
		return s
	}
	return c.DefaultLanguage
}

// LogValue describes the installation without its secrets, keys or database
// password.
func (c Config) LogValue() slog.Value {
	ops := make([]any, 0, len(c.Operators))
	for _, op := range c.Operators {
		ops = append(ops, slog.Any(op.ID, op))
	}
	games := make([]string, 0, len(c.Games))
	for _, g := range c.Games {
		games = append(games, g.ID)
	}
	attrs := []slog.Attr{
		slog.String("listen", c.Listen),
		slog.String("metrics_listen", c.MetricsListen),
		slog.Bool("profiling", c.Profiling),
		slog.String("base_url", c.BaseURL),
		slog.String("default_language", c.DefaultLanguage),
		slog.Any("database", c.Database),
		slog.Any("games", games),
		slog.Group("operators", ops...),
	}
	if c.Cluster != nil {
		attrs = append(attrs, slog.Any("cluster", c.Cluster))
	}
	return slog.GroupValue(attrs...)
}

// Signed reports whether the operator has a secret: its requests must carry a valid
// X-Signature and the game signs what it sends to it (AUTH-1).
func (o *Operator) Signed() bool { return o.Secret != "" }

// HasWallet reports whether the operator has a wallet, that is real-money play.
func (o *Operator) HasWallet() bool { return o.WalletURL != "" }

// DemoOnly reports whether the operator has neither secret nor wallet: it may only
// launch demo games and its requests are accepted unsigned, with no time window
// (AUTH-8). An operator with a secret and no wallet is demo only too, but signed:
// DemoOnly is false for it and HasWallet tells the two apart.
func (o *Operator) DemoOnly() bool { return o.Secret == "" && o.WalletURL == "" }

// HasGame reports whether the game id is enabled for the operator.
func (o *Operator) HasGame(id string) bool { return slices.Contains(o.Games, id) }

// Currency returns the limits of an enabled currency (code matched exactly). The
// returned Limits is a copy: changing it does not change the configuration.
func (o *Operator) Currency(code string) (Limits, bool) {
	i, ok := slices.BinarySearchFunc(o.Currencies, code, func(c Currency, code string) int {
		return strings.Compare(c.Code, code)
	})
	if !ok {
		return Limits{}, false
	}
	return o.Currencies[i].Limits.clone(), true
}

// CurrencyCodes returns the enabled currency codes, sorted.
func (o *Operator) CurrencyCodes() []string {
	codes := make([]string, len(o.Currencies))
	for i, c := range o.Currencies {
		codes[i] = c.Code
	}
	return codes
}

// String describes the operator without its secret or API key.
func (o Operator) String() string {
	return fmt.Sprintf("operator %q (enabled=%t signed=%t wallet=%q games=%v currencies=%v demo=%t zero_win=%t legacy_launch=%t)",
		o.ID, o.Enabled, o.Signed(), o.WalletURL, o.Games, o.CurrencyCodes(), o.Demo, o.ZeroWin, o.LegacyLaunch)
}

// LogValue describes the operator for slog with the secret and API key redacted.
func (o Operator) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("operator", o.ID),
		slog.Bool("enabled", o.Enabled),
		slog.Any("secret", o.Secret),
		slog.Any("api_key", o.APIKey),
		slog.String("wallet_url", o.WalletURL),
		slog.Any("games", o.Games),
		slog.Any("currencies", o.CurrencyCodes()),
		slog.Bool("demo", o.Demo),
		slog.Bool("zero_win", o.ZeroWin),
		slog.Bool("legacy_launch", o.LegacyLaunch),
	)
}

// Secret is a credential read from the file: an HMAC secret or an API key. It is
// a secret.Secret: printed, logged or marshalled it shows "[redacted]" (or
// nothing when empty). Use string(s) or s.Bytes() where the value itself is
// needed, and nowhere else.
type Secret = secret.Secret

// DSN is the database URL. It may hold a password, so printing it with fmt,
// logging it with slog or marshalling it shows the URL with the password replaced
// (url.URL.Redacted). Use string(d) where the value itself is needed.
type DSN string

func (d DSN) shown() string {
	u, err := url.Parse(string(d))
	if err != nil {
		return "[unparsed]"
	}
	return u.Redacted()
}

// Format implements fmt.Formatter: every verb prints the redacted URL.
func (d DSN) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(d.shown())) }

// LogValue implements slog.LogValuer.
func (d DSN) LogValue() slog.Value { return slog.StringValue(d.shown()) }

// MarshalText implements encoding.TextMarshaler, used by encoding/json and yaml.
func (d DSN) MarshalText() ([]byte, error) { return []byte(d.shown()), nil }
