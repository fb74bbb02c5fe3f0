package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/crashstudio/crashgame/internal/secret"
	"github.com/crashstudio/crashgame/internal/walletcheck"
)

const walletCheckUsage = `usage: crashgame wallet-check --wallet-url URL --operator ID --secret S --api-key K --token T [flags]

Runs the contract battery against an operator's wallet and prints a table of
rules with pass or fail and the evidence. It moves real balance on the
player of --token (small stakes, all given back, and the last check verifies
it): use a dedicated test player on a staging wallet. A wallet outside
loopback needs --yes.

It also sends, signed with your key, what a broken or hostile game could
send: negative, zero and over-int64 amounts, a missing freebet_id, null
members, wrong JSON types ("500", 5.5), another currency than the
player's, a win on a rolled-back bet, a transaction_id repeated with
another amount, a duplicate "amount" key. Each must be refused, or leave the
balance where it was; a wallet that moves money on one fails with MONEY
MOVED, the rule, the amount and a fix.

Then it plays the faults wallets really make, each judged by the money
moved: 10 bets at once on a balance that covers 3 (a first bet brings the
balance there for a moment), a bet, a win and a rollback sent again after
a delay (--profile quick: 5 s; full: 8 min 30 s, past the game's whole
retry schedule of about 8 minutes), a second win or rollback of one bet
under a fresh transaction_id, signatures cut short or made longer,
movements naming another player than their bet's (--second-token: a live
token of a second funded test player in the same currency), ids that
differ only in case, and a freebet grant used twice (--freebet-id, or the
first grant /balance lists).

The secret, the API keys and the tokens may come from the environment
instead of the command line: WALLET_CHECK_SECRET, WALLET_CHECK_API_KEY,
WALLET_CHECK_SECOND_API_KEY, WALLET_CHECK_TOKEN, WALLET_CHECK_EXPIRED_TOKEN,
WALLET_CHECK_SECOND_TOKEN.

--report DIR writes, besides the table, DIR/result.json (each check with
its rules, verdict, evidence and fix, each rule's verdict, the exit
status), DIR/junit.xml (JUnit XML for your CI) and DIR/summary.html (one
page to file).

Exit status:
  0  every check passed or was skipped
  1  the battery ran and a check failed (the report says which, and how to fix it)
  2  usage error, invalid target, or the report could not be written

Once live, a movement your wallet failed 20 times is parked, never lost:
the game's back office routes (api/game.v1.yaml 1.1.0, docs/operators.md)
find it (POST /v1/transactions, status exhausted), deliver it again once
your wallet is fixed (POST /v1/transactions/redeliver), show what happened
in a round (POST /v1/rounds/details, /v1/rounds/support-link) and export a
day for reconciliation (POST /v1/transactions/export).

flags:
`

// errWalletCheckFailed is returned when the battery ran and a check failed.
// ExitCode tells main to exit 1 (a usage error exits 2).
type errWalletCheckFailed struct{ rules []string }

func (e *errWalletCheckFailed) Error() string {
	if len(e.rules) == 0 {
		return "wallet-check: a check failed"
	}
	return "wallet-check: failed rules " + strings.Join(e.rules, " ")
}

// ExitCode is the process's exit status for this error.
func (e *errWalletCheckFailed) ExitCode() int { return 1 }

// walletCheckCmd runs `crashgame wallet-check`: the table (or --json) goes to
// stdout, notices to stderr. It returns *errWalletCheckFailed when a check
// failed.
func walletCheckCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("wallet-check", walletCheckUsage, stderr)
	var t walletcheck.Target
	fs.StringVar(&t.WalletURL, "wallet-url", "", "base URL of the wallet routes (https://, or http:// on loopback)")
	fs.StringVar(&t.Operator, "operator", "", "the envelope's operator id")
	sharedSecret := fs.String("secret", "", "shared HMAC secret (or $WALLET_CHECK_SECRET)")
	apiKey := fs.String("api-key", "", "Bearer key the operator issued to the game (or $WALLET_CHECK_API_KEY)")
	secondKey := fs.String("second-api-key", "", "optional second key valid during a rotation, for AUTH-19 (or $WALLET_CHECK_SECOND_API_KEY)")
	token := fs.String("token", "", "live session token of a funded TEST player (or $WALLET_CHECK_TOKEN)")
	expired := fs.String("expired-token", "", "optional expired session token of the same player, for WIN-11 and BET-11 (or $WALLET_CHECK_EXPIRED_TOKEN)")
	secondToken := fs.String("second-token", "", "optional live session token of a second funded TEST player in the same currency, for WC-4 (or $WALLET_CHECK_SECOND_TOKEN)")
	profile := fs.String("profile", string(walletcheck.ProfileQuick), "quick (retries after 5s) or full (retries after 8m30s, past the game's retry schedule)")
	retryDelay := fs.Duration("retry-delay", 0, "wait before the delayed retries (WC-2); overrides --profile's")
	reportDir := fs.String("report", "", "directory to write result.json, junit.xml and summary.html into")
	fs.StringVar(&t.Currency, "currency", "BRL", "currency sent on /balance before the session's is known; the /balance answer decides")
	fs.StringVar(&t.GameID, "game-id", "crash", "the envelope's game_id (empty leaves it out)")
	fs.StringVar(&t.FreebetID, "freebet-id", "", "freebet_id of an open grant of the player (default: the first grant /balance lists)")
	fs.Int64Var(&t.FreebetAmount, "freebet-amount", 0, "value in cents of --freebet-id's round (default: --stake)")
	stake := fs.Int64("stake", walletcheck.DefaultStake, "stake of each bet, in cents; the player needs 7 stakes")
	timeout := fs.Duration("timeout", walletcheck.DefaultTimeout, "timeout of each wallet call")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	yes := fs.Bool("yes", false, "confirm that the token is a test player's on a staging wallet (required outside loopback)")
	verbose := fs.Bool("verbose", false, "log every wallet attempt to stderr")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("wallet-check: unexpected argument %q", fs.Arg(0))
	}
	t.Secret = secret.Secret(fromEnv(*sharedSecret, "WALLET_CHECK_SECRET"))
	t.APIKey = secret.Secret(fromEnv(*apiKey, "WALLET_CHECK_API_KEY"))
	t.SecondAPIKey = secret.Secret(fromEnv(*secondKey, "WALLET_CHECK_SECOND_API_KEY"))
	t.Token = secret.Secret(fromEnv(*token, "WALLET_CHECK_TOKEN"))
	t.ExpiredToken = secret.Secret(fromEnv(*expired, "WALLET_CHECK_EXPIRED_TOKEN"))
	t.SecondToken = secret.Secret(fromEnv(*secondToken, "WALLET_CHECK_SECOND_TOKEN"))
	delay, ok := walletcheck.Profile(*profile).RetryDelay()
	if !ok {
		return fmt.Errorf("wallet-check: --profile %q: want quick or full", *profile)
	}
	if *retryDelay < 0 {
		return fmt.Errorf("wallet-check: --retry-delay %s is negative", *retryDelay)
	}
	if *retryDelay > 0 {
		delay = *retryDelay
	}
	if err := t.Validate(); err != nil {
		return fmt.Errorf("wallet-check: %w", err)
	}
	if *stake < 2 {
		return fmt.Errorf("wallet-check: --stake %d is below 2 cents", *stake)
	}
	if !*yes && !walletcheck.IsLoopback(t.WalletURL) {
		return fmt.Errorf("wallet-check: the battery moves real balance on the player of --token (up to %d cents at once, and for a moment "+
			"all of the balance but 3.5 stakes, all given back); run it on a test player of a staging wallet and pass --yes to confirm", 7**stake)
	}

	opts := walletcheck.Options{Stake: *stake, Timeout: *timeout, RetryDelay: delay}
	if *verbose {
		opts.Logger = slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	fmt.Fprintf(stderr, "wallet-check: moving stakes of %d cents on the test player of --token; every debit is won back or rolled back; retries after %s\n", *stake, delay)
	rep := walletcheck.Run(ctx, t, opts)
	var err error
	if *asJSON {
		err = rep.WriteJSON(stdout)
	} else {
		err = rep.WriteTable(stdout)
	}
	if err != nil {
		return fmt.Errorf("wallet-check: write the report: %w", err)
	}
	if *reportDir != "" {
		if err := rep.WriteDir(*reportDir); err != nil {
			return fmt.Errorf("wallet-check: --report: %w", err)
		}
		fmt.Fprintf(stderr, "wallet-check: wrote %s, %s and %s in %s\n", walletcheck.ResultFile, walletcheck.JUnitFile, walletcheck.SummaryFile, *reportDir)
	}
	if !rep.OK() {
		return &errWalletCheckFailed{rules: rep.FailedRules()}
	}
	return nil
}

// fromEnv returns v, or the environment variable name when v is empty.
func fromEnv(v, name string) string {
	if v != "" {
		return v
	}
	return os.Getenv(name)
}
