// Package launch owns what an operator asks of the game: the catalogue of its
// games and the opening of a game for one player (POST /v1/games and
// POST /v1/launch of the contract). It decides every refusal of those routes and
// in which order, issues the launch ticket and builds the launch URL. It knows
// nothing of HTTP or signatures, and must never put the operator's token or
// player id anywhere but the ticket store.
package launch

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"unicode"

	"github.com/crashstudio/crashgame/internal/tickets"
)

// MinTokenLength is the shortest session token a launch accepts (contract
// Limits), counted in characters that are not whitespace: sixteen spaces are
// not a token. A token that holds a Unicode control or format character
// (categories Cc and Cf: a tab, U+0000, U+200B, U+FEFF...) is refused
// whatever its length: such characters are invisible, so sixteen of them
// would otherwise pass for a token.
const MinTokenLength = 16

// The refusals of a launch. Each maps to one error_code of the game direction.
var (
	ErrMissingGameID     = errors.New("game_id is required")
	ErrGameNotFound      = errors.New("game not found")
	ErrMissingToken      = errors.New("token is required outside demo")
	ErrMissingPlayerID   = errors.New("player_id is required outside demo")
	ErrInvalidToken      = errors.New("invalid token")
	ErrDemoNotAvailable  = errors.New("demo not available")
	ErrCurrencyNotServed = errors.New("currency not enabled")
	ErrNoWallet          = errors.New("operator has no wallet")
	// ErrInvalidField is a value the schema types allow but the launch does
	// not: a lobby_url or deposit_url that is not an absolute http(s) URL, a
	// responsible gambling value out of range. The message names the field.
	ErrInvalidField = errors.New("invalid field")
)

// Bounds of the responsible gambling minutes (reality check, inactivity).
const (
	MinControlMinutes = 1
	MaxControlMinutes = 1440
)

// Tickets issues launch tickets.
type Tickets interface {
	Issue(ctx context.Context, s tickets.Session) (string, error)
}

// Operator is what the operator routes serve an operator.
type Operator struct {
	ID         string
	Games      []string   // the game ids enabled for it, in file order
	Currencies []Currency // its enabled currencies, sorted by code (GEN-8)
	Demo       bool       // demo launches allowed
	HasWallet  bool       // it has a wallet: real-money launches can be served
}

// Currency is a currency enabled for an operator, with its limits in cents. A
// nil limit is unknown: it is left out of the catalogue, never sent as zero.
type Currency struct {
	Code                   string
	MinBet, MaxBet, MaxWin *int64
}

// Installation is what a Service serves: the public address of the game, the
// languages, the games and the operators.
type Installation struct {
	BaseURL string // the public address of the game, no trailing slash
	// Languages are the launch languages (pt, en, es); any other requested
	// language is DefaultLanguage (LANG-1..LANG-4).
	Languages       []string
	DefaultLanguage string
	Games           []Game // the installation's games; Currency and the limits unset
	Operators       []Operator
}

// Service answers the operator routes of one installation.
type Service struct {
	baseURL string
	langs   []string
	defLang string
	games   map[string]Game
	ops     map[string]*Operator
	tickets Tickets
}

// New returns a Service that serves c.
func New(c Installation, t Tickets) *Service {
	s := &Service{baseURL: c.BaseURL, langs: c.Languages, defLang: c.DefaultLanguage,
		games: map[string]Game{}, ops: map[string]*Operator{}, tickets: t}
	for _, g := range c.Games {
		s.games[g.ID] = g
	}
	for i := range c.Operators {
		op := c.Operators[i]
		s.ops[op.ID] = &op
	}
	return s
}

// operator returns the operator with this id, or one that has no game.
func (s *Service) operator(id string) *Operator {
	if op, ok := s.ops[id]; ok {
		return op
	}
	return &Operator{ID: id}
}

func (o *Operator) currency(code string) (Currency, bool) {
	for _, c := range o.Currencies {
		if c.Code == code {
			return c, true
		}
	}
	return Currency{}, false
}

// currencyRefused is the refusal of a currency o does not accept, naming
// those it does.
func (o *Operator) currencyRefused(code string) error {
	return fmt.Errorf("%w: %q is not enabled for operator %q (enabled: %s)",
		ErrCurrencyNotServed, code, o.ID, strings.Join(o.currencyCodes(), ", "))
}

func (o *Operator) currencyCodes() []string {
	codes := make([]string, len(o.Currencies))
	for i, c := range o.Currencies {
		codes[i] = c.Code
	}
	return codes
}

// language returns lang when it is a launch language, else the default.
func (s *Service) language(lang string) string {
	if slices.Contains(s.langs, lang) {
		return lang
	}
	return s.defLang
}

// Game is one entry of the catalogue. The limits are nil when unknown: an unknown
// limit is omitted, never sent as zero.
type Game struct {
	ID, Name, Studio, Category, ImageURL string
	Demo, Mobile, Desktop, Freebet       bool
	// Currency and the limits are set only when the catalogue was asked for a currency.
	Currency               string
	MinBet, MaxBet, MaxWin *int64
}

// Catalogue is the answer to POST /v1/games.
type Catalogue struct {
	Operator   string
	Currencies []string
	Games      []Game
}

// Games lists the games enabled for the operator, in the order of the
// operator's configuration. With a currency, each entry carries it and the
// limits known for it. A currency the operator does not accept is refused
// with ErrCurrencyNotServed, as Launch refuses it. An unknown operator has no
// game.
func (s *Service) Games(operator string, currency string) (Catalogue, error) {
	op := s.operator(operator)
	limits, accepted := op.currency(currency)
	if currency != "" && !accepted {
		return Catalogue{}, op.currencyRefused(currency)
	}
	c := Catalogue{Operator: op.ID, Currencies: op.currencyCodes(), Games: []Game{}}
	for _, id := range op.Games {
		e, ok := s.games[id]
		if !ok {
			continue // config validation refuses this at start-up
		}
		e.Demo = e.Demo && op.Demo
		if currency != "" {
			e.Currency = currency
			e.MinBet, e.MaxBet, e.MaxWin = limits.MinBet, limits.MaxBet, limits.MaxWin
		}
		c.Games = append(c.Games, e)
	}
	return c, nil
}

// Request is a launch as the operator sent it; an absent field is "".
type Request struct {
	GameID, Token, PlayerID, Currency, Language string
	PlayerName, Theme, LobbyURL, DepositURL     string
	Demo, Mobile                                bool
	// Controls are the responsible gambling controls the launch switched on;
	// a minutes value is nil when absent (off).
	SessionClock                           bool
	RealityCheckMinutes, InactivityMinutes *int
}

// Launch checks a launch and issues its ticket. The checks run in this order,
// and the first that fails decides the answer:
//
//  1. game_id absent                                   -> ErrMissingGameID
//  2. game_id not this installation's game, or not
//     enabled for this operator                        -> ErrGameNotFound
//  3. demo asked where the game or the operator has
//     demo off                                         -> ErrDemoNotAvailable
//  4. (outside demo) token absent                      -> ErrMissingToken
//  5. (outside demo) player_id absent                  -> ErrMissingPlayerID
//  6. (outside demo) token with a Unicode control or
//     format character (Cc, Cf), with fewer than 16
//     characters that are not whitespace, or equal to
//     player_id                                        -> ErrInvalidToken
//  7. (outside demo) the operator has no wallet_url    -> ErrNoWallet
//  8. currency given but not enabled for the operator  -> ErrCurrencyNotServed
//  9. lobby_url or deposit_url not an absolute http or
//     https URL, a responsible gambling value out of
//     1..1440                                          -> ErrInvalidField
//
// A demo launch ignores token and player_id: they are not stored.
func (s *Service) Launch(ctx context.Context, operator string, r Request) (string, error) {
	if r.GameID == "" {
		return "", ErrMissingGameID
	}
	op := s.operator(operator)
	game, ok := s.games[r.GameID]
	if !ok || !slices.Contains(op.Games, r.GameID) {
		return "", fmt.Errorf("%w: %q is not enabled for operator %q", ErrGameNotFound, r.GameID, op.ID)
	}
	if r.Demo {
		if !game.Demo || !op.Demo {
			return "", fmt.Errorf("%w: demo is off for game %q or operator %q", ErrDemoNotAvailable, game.ID, op.ID)
		}
		r.Token, r.PlayerID = "", ""
	} else {
		switch {
		case r.Token == "":
			return "", ErrMissingToken
		case r.PlayerID == "":
			return "", ErrMissingPlayerID
		case hasInvisible(r.Token):
			// Rule GAME-19 LIM-4: never say which character, nor where: the
			// token is the operator's secret.
			return "", fmt.Errorf("%w: holds a Unicode control or format character (category Cc or Cf)", ErrInvalidToken)
		case !longEnough(r.Token):
			return "", fmt.Errorf("%w: fewer than %d characters that are not whitespace", ErrInvalidToken, MinTokenLength)
		case r.Token == r.PlayerID:
			return "", fmt.Errorf("%w: equal to player_id", ErrInvalidToken)
		case !op.HasWallet:
			return "", fmt.Errorf("%w: operator %q has no wallet_url, so only demo launches can be served", ErrNoWallet, op.ID)
		}
	}
	if r.Currency != "" {
		if _, ok := op.currency(r.Currency); !ok {
			return "", op.currencyRefused(r.Currency)
		}
	}
	controls, err := checkControls(r)
	if err != nil {
		return "", err
	}
	lang := s.language(r.Language)
	raw, err := s.tickets.Issue(ctx, tickets.Session{
		Operator: op.ID, GameID: game.ID, Token: r.Token, PlayerID: r.PlayerID,
		Currency: r.Currency, Language: lang, PlayerName: r.PlayerName, Theme: r.Theme,
		Demo: r.Demo, Mobile: r.Mobile, LobbyURL: r.LobbyURL, DepositURL: r.DepositURL,
		Controls: controls,
	})
	if err != nil {
		return "", fmt.Errorf("launch: issue ticket: %w", err)
	}
	return URL(s.baseURL, raw, lang, r.Currency), nil
}

// longEnough reports whether token holds MinTokenLength characters that are
// not whitespace.
func longEnough(token string) bool {
	n := 0
	for _, r := range token {
		if !unicode.IsSpace(r) {
			n++
		}
	}
	return n >= MinTokenLength
}

// hasInvisible reports whether token holds a Unicode control (Cc) or format
// (Cf) character.
func hasInvisible(token string) bool {
	return strings.ContainsFunc(token, func(r rune) bool {
		return unicode.In(r, unicode.Cc, unicode.Cf)
	})
}

// checkControls checks the addresses the page will navigate to and the
// responsible gambling values (check 9 of Launch), and returns the controls.
func checkControls(r Request) (tickets.Controls, error) {
	for _, f := range []struct{ name, value string }{{"lobby_url", r.LobbyURL}, {"deposit_url", r.DepositURL}} {
		if f.value != "" && !IsWebURL(f.value) {
			return tickets.Controls{}, fmt.Errorf("%w: %s must be an absolute http or https URL", ErrInvalidField, f.name)
		}
	}
	c := tickets.Controls{SessionClock: r.SessionClock}
	for _, f := range []struct {
		name  string
		value *int
		into  *int
	}{
		{"responsible_gambling.reality_check_minutes", r.RealityCheckMinutes, &c.RealityCheckMinutes},
		{"responsible_gambling.inactivity_timeout_minutes", r.InactivityMinutes, &c.InactivityMinutes},
	} {
		if f.value == nil {
			continue
		}
		if *f.value < MinControlMinutes || *f.value > MaxControlMinutes {
			return tickets.Controls{}, fmt.Errorf("%w: %s must be between %d and %d, got %d",
				ErrInvalidField, f.name, MinControlMinutes, MaxControlMinutes, *f.value)
		}
		*f.into = *f.value
	}
	return c, nil
}

// IsWebURL reports whether raw is an absolute http or https URL with a host:
// the only kind of address the table page ever navigates to.
func IsWebURL(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.User != nil || strings.ContainsAny(raw, " \t\r\n\\") {
		return false
	}
	return u.Scheme == "http" || u.Scheme == "https"
}

// URL builds the launch URL {base_url}/?sid=<ticket>&lang=<language>&cur=<currency>,
// in that order; cur is empty when the launch declared no currency.
func URL(baseURL, sid, lang, currency string) string {
	return strings.TrimRight(baseURL, "/") + "/?sid=" + url.QueryEscape(sid) +
		"&lang=" + url.QueryEscape(lang) + "&cur=" + url.QueryEscape(currency)
}
