// Command operator-sim runs the reference operator: the wallet side of the
// integration contract (POST /balance, /bet, /win, /rollback), a signed admin
// API under /admin/ and a lobby page at / that launches the game.
//
//	operator-sim --secret S --api-key K [--api-key K2] [--game-url http://127.0.0.1:8080]
//	             [--listen 127.0.0.1:8081] [--db :memory:|FILE] [--operator dev]
//	             [--seed-players N] [--currency BRL] [--game-id crash]
//
// Every flag can also come from the environment: OPERATOR_SIM_<FLAG> in upper
// case with underscores (OPERATOR_SIM_API_KEY takes a comma-separated list).
// A flag given on the command line wins over the environment.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/crashstudio/crashgame/internal/operatorsim"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "operator-sim:", err)
		}
		os.Exit(2)
	}
}

// keyList collects --api-key values, repeated or comma-separated.
type keyList []string

func (k *keyList) String() string { return fmt.Sprintf("%d key(s)", len(*k)) } // never the keys
func (k *keyList) Set(v string) error {
	for _, part := range strings.Split(v, ",") {
		if part = strings.TrimSpace(part); part != "" {
			*k = append(*k, part)
		}
	}
	return nil
}

// options are the command line, after the environment.
type options struct {
	listen string
	cfg    operatorsim.Config
}

func parse(args []string, getenv func(string) string, stderr io.Writer) (*options, error) {
	fs := flag.NewFlagSet("operator-sim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	env := func(name, def string) string {
		if v := getenv("OPERATOR_SIM_" + name); v != "" {
			return v
		}
		return def
	}
	o := &options{}
	var keys keyList
	fs.StringVar(&o.listen, "listen", env("LISTEN", "127.0.0.1:8081"), "address to listen on (env OPERATOR_SIM_LISTEN)")
	fs.StringVar(&o.cfg.DB, "db", env("DB", operatorsim.MemoryDB), "ledger: a SQLite file, or :memory: (env OPERATOR_SIM_DB)")
	fs.StringVar(&o.cfg.Operator, "operator", env("OPERATOR", operatorsim.DefaultOperator), "this operator's name, as the game knows it (env OPERATOR_SIM_OPERATOR)")
	fs.StringVar(&o.cfg.Secret, "secret", env("SECRET", ""), "HMAC secret shared with the game; required (env OPERATOR_SIM_SECRET)")
	fs.Var(&keys, "api-key", "accepted Bearer key; repeat or comma-separate for a rotation; at least one (env OPERATOR_SIM_API_KEY)")
	fs.StringVar(&o.cfg.GameURL, "game-url", env("GAME_URL", ""), "the game's base address, for the lobby's launch (env OPERATOR_SIM_GAME_URL)")
	fs.StringVar(&o.cfg.GameID, "game-id", env("GAME_ID", operatorsim.DefaultGameID), "the game the lobby launches (env OPERATOR_SIM_GAME_ID)")
	fs.StringVar(&o.cfg.Currency, "currency", env("CURRENCY", operatorsim.DefaultCurrency), "currency of seeded and new players (env OPERATOR_SIM_CURRENCY)")
	seed, err := strconv.Atoi(env("SEED_PLAYERS", "0"))
	if err != nil {
		return nil, fmt.Errorf("OPERATOR_SIM_SEED_PLAYERS: %w", err)
	}
	fs.IntVar(&o.cfg.SeedPlayers, "seed-players", seed, "create N funded test players player-0001.. (env OPERATOR_SIM_SEED_PLAYERS)")
	balance, err := strconv.ParseInt(env("SEED_BALANCE", strconv.Itoa(operatorsim.DefaultSeedBalance)), 10, 64)
	if err != nil {
		return nil, fmt.Errorf("OPERATOR_SIM_SEED_BALANCE: %w", err)
	}
	fs.Int64Var(&o.cfg.SeedBalance, "seed-balance", balance, "balance of each seeded player, in cents (env OPERATOR_SIM_SEED_BALANCE)")
	ttl, err := time.ParseDuration(env("TOKEN_TTL", operatorsim.DefaultTokenTTL.String()))
	if err != nil {
		return nil, fmt.Errorf("OPERATOR_SIM_TOKEN_TTL: %w", err)
	}
	fs.DurationVar(&o.cfg.TokenTTL, "token-ttl", ttl, "lifetime of a session token (env OPERATOR_SIM_TOKEN_TTL)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if len(keys) == 0 {
		_ = keys.Set(env("API_KEY", ""))
	}
	o.cfg.APIKeys = keys
	if _, _, err := net.SplitHostPort(o.listen); err != nil {
		return nil, fmt.Errorf("--listen %q: %w", o.listen, err)
	}
	return o, nil
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	o, err := parse(args, getenv, stderr)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	o.cfg.Logger = logger
	sim, err := operatorsim.New(o.cfg)
	if err != nil {
		return err
	}
	defer sim.Close()

	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", o.listen, err)
	}
	// Requests live in base: cancelling it at shutdown releases handlers that
	// a timeout fault holds, and latency waits (movements always finish).
	base, cancelBase := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelBase()
	srv := &http.Server{
		Handler:           sim.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return base },
	}
	fmt.Fprintf(stdout, "operator-sim: operator %q, ledger %s, %d API key(s)\n  wallet_url http://%s\n  lobby      http://%s/\n",
		o.cfg.Operator, o.cfg.DB, len(o.cfg.APIKeys), ln.Addr(), ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	cancelBase()
	if err := srv.Shutdown(shutdown); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}
