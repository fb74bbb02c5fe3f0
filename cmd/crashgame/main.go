// Command crashgame is the game server and its tools.
//
//	crashgame serve --config FILE   the game server of one installation
//	crashgame dev                   the whole thing on this machine, one command
//	crashgame migrate --config FILE apply the database migrations and exit
//	crashgame check-config --config FILE  validate an installation file and exit
//	crashgame movements --config FILE     list wallet movements for reconciliation, re-deliver a parked one
//	crashgame reconcile --config FILE --operator-sim URL  operator-sim's ledger against the game's records
//	crashgame verify --hash H --chain F       recompute a round's crash point with its chain's published document
//	crashgame wallet-check ...            the contract battery against an operator's wallet
//
// It owns the command line and the wiring: it parses flags and the installation
// file and assembles the packages of internal/ in dependency order. It holds no
// game or money rule of its own, and must never print a secret, an API key, a
// token or a signature (a flag's value included), nor move money outside the
// packages that own it: movements, reconcile and verify only read.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/crashstudio/crashgame/internal/config"
	"github.com/crashstudio/crashgame/internal/store"
)

const usage = `usage: crashgame <command> [flags]

commands:
  serve --config FILE         run the game server of an installation
  dev                         run the whole thing on this machine (SQLite, demo operator)
  migrate --config FILE       apply the database migrations and exit
  check-config --config FILE  validate an installation file and exit
  movements --config FILE     list wallet movements (--round, --player, --operator, --status),
                              or deliver an exhausted one again (--redeliver TRANSACTION_ID --by NAME)
  reconcile --config FILE --operator-sim URL
                              compare operator-sim's ledger with the game's records
  verify --hash H --chain FILE
                              recompute a round's crash point with its chain's published settings and salt,
                              check the salt and walk to the chain's terminal (or --server URL --chain-id ID)
  wallet-check --wallet-url U --operator O --secret S --api-key K --token T
                              run the contract battery against an operator's wallet
`

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go stopOnSignals(sigs, cancel)
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "crashgame:", err)
		}
		// A command that ran and found failures (wallet-check) exits 1;
		// a command that could not run exits 2.
		var coded interface{ ExitCode() int }
		if errors.As(err, &coded) {
			os.Exit(coded.ExitCode())
		}
		os.Exit(2)
	}
}

// stopOnSignals cancels the command's context at the first signal of sigs
// (SIGINT or SIGTERM, notified before the command starts): the command stops in order (serve settles the rounds in play,
// which may take its grace). A second signal stops the process at once,
// settling nothing: the next start's recovery settles what was in play by
// the fail-over rule (docs/failover.md). The exit status is then 128 plus
// the signal's number, as a shell reports a process the signal killed.
func stopOnSignals(sigs <-chan os.Signal, cancel context.CancelFunc) {
	sig := <-sigs
	slog.Info("stopping; a second SIGINT (Ctrl-C) or SIGTERM stops at once", "signal", sig.String())
	cancel()
	sig = <-sigs
	slog.Warn("stopping at once on a second signal, settling nothing: the next start settles the rounds in play by the fail-over rule (docs/failover.md)",
		"signal", sig.String())
	code := 1
	if s, ok := sig.(syscall.Signal); ok {
		code = 128 + int(s)
	}
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return flag.ErrHelp
	}
	logger := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	slog.SetDefault(logger) // packages that log without a logger of their own log JSON too
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "serve":
		cfg, _, err := configFromFlag(cmd, rest, stderr)
		if err != nil {
			return err
		}
		return withStore(ctx, cfg, func(st *store.Store) error { return serve(ctx, cfg, st, logger, stdout, serveOptions{}) })
	case "dev":
		return dev(ctx, rest, logger, stdout, stderr)
	case "migrate":
		cfg, _, err := configFromFlag(cmd, rest, stderr)
		if err != nil {
			return err
		}
		return withStore(ctx, cfg, func(*store.Store) error {
			fmt.Fprintln(stdout, "migrations applied")
			return nil
		})
	case "check-config":
		_, path, err := configFromFlag(cmd, rest, stderr)
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, path+": valid")
		return nil
	case "verify":
		return verifyCmd(ctx, rest, stdout, stderr)
	case "movements":
		return movementsCmd(ctx, rest, stdout, stderr)
	case "reconcile":
		return reconcileCmd(ctx, rest, stdout, stderr)
	case "wallet-check":
		return walletCheckCmd(ctx, rest, stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	default:
		fmt.Fprint(stderr, usage)
		return fmt.Errorf("unknown command %q", cmd)
	}
}

// configFromFlag parses the one flag of cmd, --config FILE, and loads that
// installation file; path is the file's name as given.
func configFromFlag(cmd string, args []string, stderr io.Writer) (cfg *config.Config, path string, err error) {
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&path, "config", "", "installation file (YAML); ${NAME} expands from the environment")
	if err := fs.Parse(args); err != nil {
		return nil, "", err
	}
	if path == "" {
		return nil, "", fmt.Errorf("%s: --config FILE is required (see docs/config.md)", cmd)
	}
	cfg, err = loadConfig(path)
	if err != nil {
		return nil, "", err
	}
	return cfg, path, nil
}

// newFlagSet is the flag set of a command with a usage text of its own: -h
// prints usage, then the flags' defaults, to stderr.
func newFlagSet(name, usage string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	return fs
}
