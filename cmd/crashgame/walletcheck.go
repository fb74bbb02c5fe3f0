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

The secret, the API keys and the tokens may come from the environment
instead of the command line: WALLET_CHECK_SECRET, WALLET_CHECK_API_KEY,
WALLET_CHECK_SECOND_API_KEY, WALLET_CHECK_TOKEN, WALLET_CHECK_EXPIRED_TOKEN.

Exit status: 0 when every check passed or was skipped, 1 when one failed,
2 on a usage error.

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
	if err := t.Validate(); err != nil {
		return fmt.Errorf("wallet-check: %w", err)
	}
	if *stake < 2 {
		return fmt.Errorf("wallet-check: --stake %d is below 2 cents", *stake)
	}
	if !*yes && !walletcheck.IsLoopback(t.WalletURL) {
		return fmt.Errorf("wallet-check: the battery moves real balance on the player of --token (up to %d cents at once, all given back); "+
			"run it on a test player of a staging wallet and pass --yes to confirm", 7**stake)
	}

	opts := walletcheck.Options{Stake: *stake, Timeout: *timeout}
	if *verbose {
		opts.Logger = slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	fmt.Fprintf(stderr, "wallet-check: moving stakes of %d cents on the test player of --token; every debit is won back or rolled back\n", *stake)
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
