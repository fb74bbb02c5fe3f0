package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/crashstudio/crashgame/internal/config"
	"github.com/crashstudio/crashgame/internal/reconcile"
	"github.com/crashstudio/crashgame/internal/store"
)

const reconcileUsage = `usage: crashgame reconcile --config FILE --operator-sim URL [flags]

Compares the ledger of the reference operator (operator-sim, read through its
signed POST /admin/reconcile) with the game's bets and wallet movements in the
database of the installation FILE, and prints every difference. It moves no
money and changes no record of either side.

Run it when no bet is in flight: a movement still being delivered shows as a
difference (run it again once it is delivered).

The admin API is signed with the operator's shared secret: --secret, else
$OPERATOR_SIM_SECRET, else the secret of --operator in FILE.

Exit status: 0 when there is no difference, 1 when there is one, 2 when the
comparison could not be made.

flags:
`

// errDifferences is returned when the reconciliation ran and found
// differences. ExitCode tells main to exit 1 (a usage error exits 2).
type errDifferences struct{ n int }

func (e *errDifferences) Error() string {
	return fmt.Sprintf("reconcile: %d difference(s) between the operator's ledger and the game's records", e.n)
}

// ExitCode is the process's exit status for this error.
func (e *errDifferences) ExitCode() int { return 1 }

// reconcileCmd runs `crashgame reconcile`: the report goes to stdout. It
// returns *errDifferences when the two sides differ.
func reconcileCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("reconcile", reconcileUsage, stderr)
	path := fs.String("config", "", "installation file: the game's database and the operator")
	simURL := fs.String("operator-sim", "", "operator-sim's address, e.g. http://127.0.0.1:8081")
	secret := fs.String("secret", "", "operator-sim's secret (or $OPERATOR_SIM_SECRET; default: the operator's secret in --config)")
	operator := fs.String("operator", "", "the operator whose wallet is operator-sim (default: the only operator of --config with a wallet_url)")
	player := fs.String("player", "", "only this player")
	initial := fs.Int64("initial-balance", -1, "every player's balance before any movement, to check balance = initial + movements (e.g. operator-sim's --seed-balance); -1 leaves balances unchecked")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	timeout := fs.Duration("timeout", time.Minute, "timeout of the call to operator-sim")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("reconcile: unexpected argument %q", fs.Arg(0))
	case *path == "":
		return fmt.Errorf("reconcile: --config FILE is required")
	case *simURL == "":
		return fmt.Errorf("reconcile: --operator-sim URL is required")
	case !strings.HasPrefix(*simURL, "http://") && !strings.HasPrefix(*simURL, "https://"):
		return fmt.Errorf("reconcile: --operator-sim %q is not an http:// or https:// address", *simURL)
	}
	cfg, err := loadConfig(*path)
	if err != nil {
		return err
	}
	op, err := walletOperator(cfg, *operator)
	if err != nil {
		return err
	}
	key := config.Secret(fromEnv(*secret, "OPERATOR_SIM_SECRET"))
	if key == "" {
		key = op.Secret
	}

	var game reconcile.Game
	err = withStore(ctx, cfg, func(st *store.Store) error {
		g, err := reconcile.ReadGame(ctx, st.Reconcile(), reconcile.Filter{Operator: op.ID, PlayerID: *player})
		game = g
		return err
	})
	if err != nil {
		return err
	}
	ledger, err := reconcile.ReadOperatorSim(ctx, &http.Client{Timeout: *timeout}, *simURL, string(key))
	if err != nil {
		return err
	}
	if *player != "" {
		ledger = ledger.Only(func(id string) bool { return id == *player })
	}
	opts := reconcile.Options{ZeroWin: op.ZeroWin}
	if *initial >= 0 {
		opts.InitialBalances = map[string]int64{}
		for _, p := range ledger.Players {
			opts.InitialBalances[p.PlayerID] = *initial
		}
	}
	rep := reconcile.Compare(game, ledger, opts)
	if *asJSON {
		if rep.Differences == nil {
			rep.Differences = []string{}
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(rep)
	} else {
		_, err = io.WriteString(stdout, rep.String())
	}
	if err != nil {
		return fmt.Errorf("reconcile: write the report: %w", err)
	}
	if !rep.OK() {
		return &errDifferences{n: len(rep.Differences)}
	}
	return nil
}

// walletOperator is the operator named id, or, when id is empty, the only
// operator of the installation with a wallet.
func walletOperator(cfg *config.Config, id string) (*config.Operator, error) {
	if id != "" {
		op, ok := cfg.Operator(id)
		switch {
		case !ok:
			return nil, fmt.Errorf("reconcile: no operator %q in the installation file", id)
		case op.WalletURL == "":
			return nil, fmt.Errorf("reconcile: operator %q has no wallet_url: it moves no money", id)
		}
		return op, nil
	}
	var found []*config.Operator
	var ids []string
	for i := range cfg.Operators {
		if cfg.Operators[i].WalletURL != "" {
			found = append(found, &cfg.Operators[i])
			ids = append(ids, cfg.Operators[i].ID)
		}
	}
	switch len(found) {
	case 0:
		return nil, fmt.Errorf("reconcile: no operator of the installation file has a wallet_url")
	case 1:
		return found[0], nil
	}
	return nil, fmt.Errorf("reconcile: several operators have a wallet (%s): name one with --operator", strings.Join(ids, ", "))
}
