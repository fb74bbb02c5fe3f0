package walletcheck

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/crashstudio/crashgame/internal/secret"
	"github.com/crashstudio/crashgame/internal/wallet"
)

// Defaults of Options.
const (
	DefaultStake   = 100 // cents
	DefaultTimeout = 10 * time.Second
	// DefaultRetryDelay is how long the delayed-retry probe (WC-2) waits
	// before it sends a movement again: the quick profile.
	DefaultRetryDelay = 5 * time.Second
	// FullRetryDelay is the wait of the full profile: longer than the
	// game's whole retry schedule of one movement (20 attempts within about
	// 8 minutes, docs/operators.md), which the idempotency memory must
	// outlive.
	FullRetryDelay = 8*time.Minute + 30*time.Second
)

// Profile names a set of defaults for a run.
type Profile string

// Profiles.
const (
	// ProfileQuick waits DefaultRetryDelay before the delayed retries.
	ProfileQuick Profile = "quick"
	// ProfileFull waits FullRetryDelay: a run of about ten minutes.
	ProfileFull Profile = "full"
)

// RetryDelay is the delayed-retry wait of a profile; ok is false for a name
// that is no profile.
func (p Profile) RetryDelay() (d time.Duration, ok bool) {
	switch p {
	case ProfileQuick, "":
		return DefaultRetryDelay, true
	case ProfileFull:
		return FullRetryDelay, true
	}
	return 0, false
}

// stakesAtOnce is the largest number of stakes the script holds debited at
// the same time (one bet left open by the replay check, then five in one
// round); the player needs one more to be safe.
const stakesAtOnce = 7

// Target is the wallet under test and the test session the battery plays on.
type Target struct {
	// WalletURL is the base of the wallet routes, as in the game's
	// installation file: https://, or http:// on loopback only.
	WalletURL string
	// Operator is the envelope's operator.
	Operator string
	// Secret is the shared HMAC secret; APIKey the Bearer key the operator
	// issued to the game.
	Secret secret.Secret
	APIKey secret.Secret
	// SecondAPIKey, optional, is a second key valid during a rotation
	// (AUTH-19); without it that check is skipped.
	SecondAPIKey secret.Secret
	// Token is a live session token of a funded test player.
	Token secret.Secret
	// ExpiredToken, optional, is an expired session token of the same
	// player (WIN-11, BET-11); without it those checks are skipped.
	ExpiredToken secret.Secret
	// SecondToken, optional, is a live session token of a second funded
	// test player, in the same currency: the wrong-player probe (WC-4) then
	// also watches that player's balance. Without it the probe names a
	// player id the operator never issued and watches the first player only.
	SecondToken secret.Secret
	// Currency is sent on /balance before the session's currency is known
	// (AMB-15); the /balance answer decides the currency of the movements.
	Currency string
	// GameID is the envelope's game_id; empty leaves it out.
	GameID string
	// FreebetID, optional, is the freebet_id of an open grant of the player,
	// FreebetAmount its value. Empty: the first grant listed by /balance,
	// else an id the operator never granted (the check is then skipped when
	// the operator refuses it).
	FreebetID     string
	FreebetAmount int64
}

var currencyRE = regexp.MustCompile(`^[A-Z]{3}$`)

// Validate reports what is missing or unsafe in the target. It never quotes
// a secret, a key or a token.
func (t Target) Validate() error {
	var errs []error
	u, err := url.Parse(t.WalletURL)
	switch {
	case t.WalletURL == "":
		errs = append(errs, errors.New("the wallet URL is required"))
	case err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http"):
		errs = append(errs, errors.New("the wallet URL is not an absolute http(s) URL"))
	case u.Scheme == "http" && !IsLoopback(t.WalletURL):
		errs = append(errs, errors.New("the wallet URL is http:// outside loopback: the key and the token would travel in clear (use https://)"))
	}
	if t.Operator == "" {
		errs = append(errs, errors.New("the operator is required"))
	}
	if t.Secret == "" {
		errs = append(errs, errors.New("the secret is required"))
	}
	if t.APIKey == "" {
		errs = append(errs, errors.New("the API key is required"))
	}
	if t.Token == "" {
		errs = append(errs, errors.New("a session token of a funded test player is required"))
	}
	if t.ExpiredToken != "" && t.ExpiredToken == t.Token {
		errs = append(errs, errors.New("the expired token is the live token"))
	}
	if t.SecondToken != "" && (t.SecondToken == t.Token || t.SecondToken == t.ExpiredToken) {
		errs = append(errs, errors.New("the second player's token is the first player's"))
	}
	if !currencyRE.MatchString(t.Currency) {
		errs = append(errs, errors.New("the currency is not an ISO 4217 code (three upper-case letters)"))
	}
	if t.FreebetAmount < 0 {
		errs = append(errs, errors.New("the freebet amount is negative"))
	}
	return errors.Join(errs...)
}

// IsLoopback reports whether the wallet URL's host is a loopback address or
// localhost.
func IsLoopback(walletURL string) bool {
	u, err := url.Parse(walletURL)
	if err != nil {
		return false
	}
	host := u.Hostname()
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Options tune a run.
type Options struct {
	// Stake is the amount of each ordinary bet, in cents (at least 2, so that
	// a win below the stake is not zero). Default DefaultStake.
	Stake int64
	// Timeout bounds each attempt. Default DefaultTimeout.
	Timeout time.Duration
	// Transport carries the requests; nil means http.DefaultTransport.
	Transport http.RoundTripper
	// Logger receives the wallet client's per-attempt logs; nil discards them.
	Logger *slog.Logger
	// Now is the clock of the envelope's timestamp; nil means time.Now.
	Now func() time.Time
	// RetryDelay is how long the delayed-retry probe waits before its
	// retries (WC-2). Default DefaultRetryDelay.
	RetryDelay time.Duration
	// Sleep waits d or until ctx is done, and says which (nil: the wait
	// ended). Default: a timer. Tests give one that moves a fake clock.
	Sleep func(ctx context.Context, d time.Duration) error
}

func (o Options) withDefaults() Options {
	if o.Stake == 0 {
		o.Stake = DefaultStake
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Transport == nil {
		o.Transport = http.DefaultTransport
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.RetryDelay <= 0 {
		o.RetryDelay = DefaultRetryDelay
	}
	if o.Sleep == nil {
		o.Sleep = sleep
	}
	return o
}

// sleep waits d, or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("wait %s: %w", d, ctx.Err())
	}
}

// Result is the verdict of one check.
type Result string

// Verdicts.
const (
	Pass Result = "pass"
	Fail Result = "fail"
	Skip Result = "skip"
)

// Check is one line of the report.
type Check struct {
	// Rules are the rules.md IDs the check covers.
	Rules []string `json:"rules"`
	Name  string   `json:"name"`
	// Result is pass, fail or skip.
	Result Result `json:"result"`
	// Evidence is what the wallet answered (HTTP statuses, error codes,
	// balances), or why the check was skipped. It never holds a secret, a
	// key, a token or a signature. A failure leads with what went wrong and
	// the fix, then " | " and what was seen.
	Evidence string `json:"evidence"`
	// Fix, on a failure, is what to change in the wallet, when the check
	// knows it.
	Fix string `json:"fix,omitempty"`
}

// Report is the outcome of a run.
type Report struct {
	WalletURL string `json:"wallet_url"`
	Operator  string `json:"operator"`
	// RunID prefixes every transaction_id and round_id of the run.
	RunID    string `json:"run_id"`
	PlayerID string `json:"player_id,omitempty"`
	Currency string `json:"currency,omitempty"`
	Stake    int64  `json:"stake"`
	// RetryDelayMS is how long the delayed retries waited.
	RetryDelayMS int64 `json:"retry_delay_ms"`
	// BalanceBefore and BalanceAfter are the player's balance at the start
	// and at the end of the run, when /balance answered.
	BalanceBefore *int64  `json:"balance_before,omitempty"`
	BalanceAfter  *int64  `json:"balance_after,omitempty"`
	Checks        []Check `json:"checks"`
	Passed        int     `json:"passed"`
	Failed        int     `json:"failed"`
	Skipped       int     `json:"skipped"`
	// DurationMS is how long the run took.
	DurationMS int64 `json:"duration_ms"`
}

// OK reports whether no check failed.
func (r *Report) OK() bool { return r.Failed == 0 }

// FailedRules lists the rule IDs of the failed checks, each once, in report
// order.
func (r *Report) FailedRules() []string {
	var out []string
	seen := map[string]bool{}
	for _, c := range r.Checks {
		if c.Result != Fail {
			continue
		}
		for _, id := range c.Rules {
			if !seen[id] {
				seen[id] = true
				out = append(out, id)
			}
		}
	}
	return out
}

func (r *Report) add(c Check) {
	r.Checks = append(r.Checks, c)
	switch c.Result {
	case Pass:
		r.Passed++
	case Fail:
		r.Failed++
	default:
		r.Skipped++
	}
}

// Run plays the battery against the target and returns its report. It never
// returns early on a failed check: every check that can still run does, and
// checks that depend on a failed one are skipped with the reason. An invalid
// target yields a report with one failed "target" check. Open debits are
// rolled back before Run returns, even when ctx is done.
func Run(ctx context.Context, t Target, o Options) Report {
	start := time.Now()
	o = o.withDefaults()
	rep := Report{WalletURL: t.WalletURL, Operator: t.Operator, RunID: "wc-" + strings.ToLower(rand.Text()[:12]), Stake: o.Stake,
		RetryDelayMS: o.RetryDelay.Milliseconds()}
	if err := t.Validate(); err != nil {
		rep.add(Check{Name: "target", Result: Fail, Evidence: err.Error()})
		return rep
	}
	if o.Stake < 2 {
		rep.add(Check{Name: "target", Result: Fail, Evidence: fmt.Sprintf("stake %d is below 2 cents", o.Stake)})
		return rep
	}
	r, err := newRunner(t, o, &rep)
	if err != nil {
		rep.add(Check{Name: "target", Result: Fail, Evidence: err.Error()})
		return rep
	}
	r.run(ctx)
	rep.DurationMS = time.Since(start).Milliseconds()
	return rep
}

// betRec is a debit the battery may have caused: cleanup rolls it back
// unless a win or a rollback settled it.
type betRec struct {
	tx, round string
	amount    int64
	settled   bool
	// as is the player and token the bet named; the zero value is the
	// session's player.
	as who
}

// runner holds the state of one run.
type runner struct {
	t      Target
	o      Options
	rep    *Report
	client *wallet.Client
	hc     *http.Client
	rec    *recorder
	now    func() time.Time
	logger *slog.Logger

	player   string
	currency string
	grants   []grant
	start    int64

	bets  map[string]*betRec
	order []string
	// noMoney, when set, is why the checks that move money are skipped.
	noMoney string
	seq     int
}

type grant struct {
	id     string
	amount int64
}

func newRunner(t Target, o Options, rep *Report) (*runner, error) {
	rec := &recorder{base: o.Transport}
	hc := &http.Client{Transport: rec, Timeout: o.Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	now := monotonicMillis(o.Now)
	settings := wallet.Settings{Operator: t.Operator, URL: strings.TrimRight(t.WalletURL, "/"),
		Secret: t.Secret, APIKey: t.APIKey}
	client, err := wallet.NewClient(settings,
		wallet.WithHTTPClient(hc),
		wallet.WithClock(now),
		wallet.WithLogger(o.Logger),
		// The battery must see every answer: a breaker opened by a faulty
		// wallet would hide them behind ErrBreakerOpen.
		wallet.WithBreaker(wallet.BreakerSettings{ConsecutiveFailures: 1 << 30, MinRequests: 1 << 30}),
	)
	if err != nil {
		return nil, fmt.Errorf("wallet client: %w", err)
	}
	return &runner{t: t, o: o, rep: rep, client: client, hc: hc, rec: rec, now: now, logger: o.Logger,
		currency: t.Currency, bets: map[string]*betRec{}}, nil
}

// monotonicMillis wraps a clock so that two calls never return the same
// millisecond: a retry must carry another timestamp than its first attempt
// (ENV-4), even when both leave within one millisecond.
func monotonicMillis(now func() time.Time) func() time.Time {
	var (
		mu   sync.Mutex
		last int64
	)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t := now()
		if ms := t.UnixMilli(); ms <= last {
			t = time.UnixMilli(last + 1)
		}
		last = t.UnixMilli()
		return t
	}
}

// id names a transaction or a round of this run.
func (r *runner) id(name string) string {
	r.seq++
	return fmt.Sprintf("%s-%02d-%s", r.rep.RunID, r.seq, name)
}

// step is one check of the script.
type step struct {
	rules string // space-separated rule IDs
	name  string
	money bool // moves money: skipped when r.noMoney is set
	// fix, when set, is what to change in a wallet that fails the check: it
	// is written into the failure line and into Check.Fix.
	fix string
	run func(context.Context) (Result, string)
}

func (r *runner) do(ctx context.Context, s step) {
	c := Check{Rules: strings.Fields(s.rules), Name: s.name}
	switch {
	case s.money && r.noMoney != "":
		c.Result, c.Evidence = Skip, r.noMoney
	case ctx.Err() != nil:
		c.Result, c.Evidence = Skip, "interrupted before this check"
	default:
		c.Result, c.Evidence = s.run(ctx)
	}
	if c.Result == Fail {
		c.Evidence, c.Fix = withFix(c.Evidence, s.fix)
	}
	r.logger.LogAttrs(ctx, slog.LevelInfo, "wallet-check: check", slog.String("check", c.Name), slog.String("result", string(c.Result)))
	r.rep.add(c)
}

// run plays the whole script, in this order: the session, the
// authentication probes (no money moves), the movements, the cleanup, then
// the checks over every answer seen and the final balance.
func (r *runner) run(ctx context.Context) {
	sessionOK := r.session(ctx)
	r.do(ctx, step{rules: "BAL-7", name: "unknown token refused on /balance", run: r.checkUnknownToken})
	// The Bearer probes run even without a session: a wallet that refuses
	// the capital B refuses the session too, and that must be named.
	for _, s := range r.bearerSteps() {
		r.do(ctx, s)
	}
	if !sessionOK {
		r.noMoney = "needs a resolved session: /balance with the token did not succeed"
		for _, s := range r.authSteps() {
			s.money = true
			r.do(ctx, s)
		}
	} else {
		for _, s := range r.authSteps() {
			r.do(ctx, s)
		}
		if need := stakesAtOnce * r.o.Stake; r.start < need {
			r.noMoney = fmt.Sprintf("the player's balance %d is below the %d cents the battery needs (%d stakes of %d)", r.start, need, stakesAtOnce, r.o.Stake)
		}
	}
	for _, s := range r.moneySteps() {
		r.do(ctx, s)
	}
	for _, s := range r.hostileSteps() {
		r.do(ctx, s)
	}
	for _, s := range r.faultSteps() {
		r.do(ctx, s)
	}
	// What follows runs even when ctx is done: the debits go back, and the
	// report says where the balance ended.
	cleanup := r.cleanup(ctx)
	ctx = context.WithoutCancel(ctx)
	r.do(ctx, step{rules: "GEN-2 GEN-4 WERR-4 WERR-5 ENV-17 ENV-18", name: "every answer is JSON with status, integer cents", run: r.checkAnswers})
	r.do(ctx, step{rules: "ENV-19", name: "operator transaction_id is the operator's own", run: r.checkOperatorTxIDs})
	if sessionOK {
		r.do(ctx, step{rules: "", name: "balance restored at the end", run: func(ctx context.Context) (Result, string) {
			return r.checkRestored(ctx, cleanup)
		}})
	}
}
