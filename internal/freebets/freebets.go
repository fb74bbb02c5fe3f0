// Package freebets owns the free rounds an operator grants a player: the intake
// of the freebets list of each /balance answer, its splitting into one grant per
// round, the per-player queue of open grants, spending a grant for a freebet
// /bet (with substitution by an equal-value grant) and returning it when the bet
// does not happen. It holds the rules; the tables freebet_sources and
// freebet_grants (migration 0004_freebets) and every statement on them are
// package store's (internal/store/freebets.go), reached through the Repo
// interface this package declares over its own types, which
// (*store.Store).Freebets implements (internal/store/freebets_repo.go).
//
// It must never grant from anything but a /balance answer, never spend one grant
// twice, never let a repeated id change a grant, never log a token or a player
// id, and never talk to the wallet: the engine does, and tells this package what
// happened. It never writes SQL nor names a database type.
//
// # Owner and currency
//
// A grant belongs to one operator's player (Owner) and takes the session
// currency, since a grant carries none (AMB-24 reading A). Grant ids are unique
// per operator and player whatever the currency (FB-3): an id first seen in a
// BRL session is a repeat in a later USD session, and stays a BRL grant, which
// only a BRL session lists, spends or returns. When the session currency is not
// accepted for the operator, nothing of the list becomes usable (FB-19) and
// nothing is stored, so a later session in an accepted currency creates it.
//
// # Intake
//
// Intake validates each entry of the list alone (FB-13): a bad entry is
// discarded silently (a debug log with the reason and the entry's index and
// id, and the counter crashgame_freebets_discarded_total{reason}) and the
// others are still taken; the player always enters. An entry is discarded
// when:
//
//   - it is not a JSON object (ReasonNotObject);
//   - id is absent, not a string, or empty (ReasonID, FB-10);
//   - amount is absent or null (ReasonAmountMissing, FB-11), not a number or
//     beyond int64 (ReasonAmountInvalid), zero or negative (ReasonAmountNotPositive,
//     FB-11), or has a fraction of a cent (ReasonAmountFraction, FB-12);
//   - quantity is present and not a whole number in 1..1000 (ReasonQuantity, FB-5
//     LIM-6); absent or null means 1;
//   - amount is below min_bet or above max_bet of the session currency
//     (ReasonBelowMinBet, ReasonAboveMaxBet; FB-9 LIM-7): the bounds are inclusive
//     (AMB-21 reading A) and an unknown (nil) bound does not limit;
//   - the session currency is not accepted for the operator (ReasonCurrency,
//     FB-19), given to an otherwise valid entry.
//
// Amounts are always cents (FB-14, AMB-17 reading A): 5 means 5 cents, never 5
// currency units. A number is read exactly, never through a float: an integer
// literal is that many cents; a literal with a fraction or an exponent is taken
// when its exact value is a whole number of cents (5.0 is 5 cents, 5e2 is 500
// cents, 1.50e2 is 150 cents) and discarded as a fraction otherwise (5.5, 5e-1).
// quantity is read the same way (3.0 is 3). Object keys match exactly ("Amount"
// is not amount); of a key repeated inside one entry, the last counts.
//
// # Splitting and repeats
//
// A valid entry with quantity N > 1 becomes N grants <id>#1 … <id>#N (FB-6,
// FB-8); with quantity 1 or absent, one grant under the bare id (FB-7). Each is
// open, with the entry's amount, and takes an intake sequence number: lower is
// older, and within one entry #1 is older than #2 (FB-20).
//
// Repeats are decided by the entry's id, the family: once an id has been taken,
// an entry with that id creates nothing more, whether its grants are open or
// spent (FB-15, FB-16), with another amount (the first prevails, FB-17) or with
// another quantity (camp-7 taken with quantity 3, then sent with quantity 5,
// still has three rounds: a new value or a new quantity needs a new id). Inside
// one list the first entry with an id counts and the later ones are repeats. A
// discarded entry is not taken, so its id is not "seen": a later valid entry
// with that id creates its grants. When a per-round id collides with an
// existing grant of another family (an entry "x#2" and an entry "x" with
// quantity 3), the existing grant is kept and that one round is not created:
// one freebet_id always names one grant.
//
// Resending the whole list on every /balance is the normal case (FB-18): an
// intake in which every id is known costs one indexed read; new ids add one
// transaction with one batch insert per table. Concurrent intakes of one id
// create its grants once (the family row's primary key decides).
//
// Intake must not be called inside a transaction: it uses the database itself
// (on SQLite a held transaction would deadlock it, see package store).
//
// # Only /balance grants
//
// Intake is the only way in. The package exposes nothing that takes grants from
// a /bet, /win or /rollback answer: a freebets array there is read and discarded
// by the caller (FB-1).
//
// # Spending and returning
//
// Spend and Return run inside the caller's transaction, the one that writes the
// bet row, so that the grant's state and the bet commit together. Spend spends
// the requested grant when it is open (FB-21); otherwise the oldest open grant of
// exactly the same amount (and currency) (FB-22), so the grant returned, whose
// ID goes on /bet as freebet_id, may differ from the one requested; with none,
// ErrUnavailable and the bet is refused to the player. Each spend is one
// conditional UPDATE (WHERE … AND state = 'open'): of concurrent spends of one
// grant exactly one wins, on SQLite and on PostgreSQL (at READ COMMITTED, its
// default; a stricter isolation turns the loser into a serialization error).
//
// Return puts a spent grant back in the queue (spent → open). The engine calls
// it in two cases, and these are the package's choices:
//
//   - the wallet refuses the freebet /bet, whatever the refusal: HTTP 4xx, or
//     HTTP 200 with status = error, any error_code (AMB-18 reading A, as
//     api/wallet.v1.yaml states). The grant goes back to the queue and a later
//     /bet sends the same freebet_id under a new transaction_id: a return, not a
//     double spend (FB-23, FB-24, FB-25).
//   - a freebet bet is rolled back (a voided round, a cancellation, a bet whose
//     outcome stayed unknown): the /rollback moves no money (RB-12), the player
//     did not get the round, so the grant is open again. The operator lists it
//     again on /balance only if it also undid the spend on its side; either way
//     the id is known here, so the resend creates nothing.
//
// Return must be called at most once per spend, in the transaction that
// records the refusal or rollback of that bet: a grant returned and spent again
// by a later bet would otherwise be reopened under that bet. Returning an open
// grant changes nothing.
//
// # The win
//
// Paying is the engine's: the win of a freebet bet is a /win with type freebet
// (WIN-4), amount the complete payout, freebet value times multiplier with the
// stake included, capped at max_win (WIN-16), and freebet_id inherited from the
// debit (WIN-17), the operator's only reliable signal (WIN-18). A lost freebet
// bet sends zero_win only where that capability is on.
package freebets

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Limits of the contract.
const (
	// MaxQuantity is the largest number of rounds one entry may grant (LIM-6).
	MaxQuantity = 1000
	// Separator joins an entry's id and its round number: <id>#<n> (FB-6).
	Separator = "#"
)

// ErrUnavailable is returned by Spend when neither the requested grant nor an
// open grant of the same value exists for the owner: the bet is refused.
var ErrUnavailable = errors.New("freebets: no open grant of this value")

// ErrUnknown is returned by Return when the owner has no grant with that id.
var ErrUnknown = errors.New("freebets: unknown grant")

// Owner is who a grant belongs to: one operator's player, in the session
// currency (AMB-24).
type Owner struct {
	Operator, PlayerID, Currency string
}

// State is the state of a per-round grant.
type State string

// States of a grant (contract: States and transitions).
const (
	StateOpen  State = "open"
	StateSpent State = "spent"
)

// Grant is one round's grant.
type Grant struct {
	ID       string // per-round id, the freebet_id of /bet: <source>#<n>, or the bare source id
	SourceID string // the id of the /balance entry it came from
	Amount   int64  // value of the round in cents, the stake of the freebet /bet
	Currency string
	State    State
	Seq      int64     // intake order: lower is older
	Created  time.Time // when it was taken from /balance
	Spent    time.Time // when spent; zero while open
}

// Value is the open grants of one amount, as the table shows them.
type Value struct {
	Amount   int64  // cents
	Count    int    // open grants of this amount
	OldestID string // the grant a bet of this value would spend first
}

// Summary reports one intake.
type Summary struct {
	Entries   int            // entries in the list
	Created   int            // per-round grants created
	Repeated  int            // valid entries whose id was already taken: no-ops
	Discarded map[Reason]int // invalid entries by reason; nil when none
}

// DiscardedTotal is the number of discarded entries.
func (s Summary) DiscardedTotal() int {
	n := 0
	for _, c := range s.Discarded {
		n += c
	}
	return n
}

// Options configures a Service.
type Options struct {
	// Registerer receives the metrics crashgame_freebets_discarded_total{reason}
	// and crashgame_freebets_created_total; nil registers none (they still count).
	Registerer prometheus.Registerer
	// Logger logs discarded entries (debug); nil means slog.Default().
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Repo is what the package needs of the storage, over this package's own
// types: the freebet tables, in package store ((*store.Store).Freebets). Each
// write is one conditional statement whose outcome the repository reports
// (ErrGrantNotFound, ErrGrantNotOpen, ErrGrantNotSpent, wrapped, when no row
// met the condition); the rules that read those outcomes are this package's.
// A method called with a context carrying a transaction (InTx) runs in it.
type Repo interface {
	InTx(ctx context.Context, fn func(ctx context.Context) error) error
	KnownSources(ctx context.Context, operator, playerID string, ids []string) ([]string, error)
	// InsertSources stores the sources not stored yet and returns their ids.
	InsertSources(ctx context.Context, sources []Source) ([]string, error)
	// InsertGrants stores the grants of new sources; Seq and Spent are set by
	// the repository.
	InsertGrants(ctx context.Context, grants []OwnedGrant) (int, error)
	OpenGrants(ctx context.Context, owner Owner) ([]Grant, error)
	Grant(ctx context.Context, owner Owner, id string) (Grant, error)
	SpendGrant(ctx context.Context, owner Owner, id string, at time.Time) (Grant, error)
	OldestOpenGrant(ctx context.Context, owner Owner, amount int64) (seq int64, err error)
	SpendGrantBySeq(ctx context.Context, seq int64, at time.Time) (Grant, error)
	ReturnGrant(ctx context.Context, owner Owner, id string) error
}

// The repository's answers when no row met a write's condition.
var (
	ErrGrantNotFound = errors.New("freebets: no such grant")
	ErrGrantNotOpen  = errors.New("freebets: the grant is not open")
	ErrGrantNotSpent = errors.New("freebets: the grant is not spent")
)

// Source is one entry of a /balance answer as stored: a family of Quantity
// grants of Amount cents for its owner.
type Source struct {
	Owner      Owner
	ID         string
	Amount     int64
	Quantity   int
	ReceivedAt time.Time
}

// OwnedGrant is a grant with its owner, as the repository stores it.
type OwnedGrant struct {
	Owner Owner
	Grant
}

// Service takes, lists, spends and returns grants. It is safe for concurrent
// use.
type Service struct {
	repo      Repo
	log       *slog.Logger
	now       func() time.Time
	discarded *prometheus.CounterVec
	created   prometheus.Counter
}

// New returns a Service over the store (a *store.Store migrated with
// 0004_freebets), and registers its metrics with opts.Registerer, if any.
func New(repo Repo, opts Options) (*Service, error) {
	if repo == nil {
		return nil, errors.New("freebets: new: nil store")
	}
	s := &Service{
		repo: repo,
		log:  opts.Logger,
		now:  opts.Now,
		discarded: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "crashgame_freebets_discarded_total",
			Help: "Freebet entries of /balance answers discarded on intake, by reason.",
		}, []string{"reason"}),
		created: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "crashgame_freebets_created_total",
			Help: "Per-round freebet grants created from /balance answers.",
		}),
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.now == nil {
		s.now = time.Now
	}
	for _, r := range Reasons {
		s.discarded.WithLabelValues(string(r)) // every series exists from the start, at 0
	}
	if opts.Registerer != nil {
		for _, c := range []prometheus.Collector{s.discarded, s.created} {
			if err := opts.Registerer.Register(c); err != nil {
				return nil, fmt.Errorf("freebets: new: register metrics: %w", err)
			}
		}
	}
	return s, nil
}
