package main

import (
	"context"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"time"

	"github.com/crashstudio/crashgame/internal/config"
	"github.com/crashstudio/crashgame/internal/operatorsim"
	"github.com/crashstudio/crashgame/internal/signature"
	"github.com/crashstudio/crashgame/internal/store"
)

//go:embed dev.yaml
var devConfig []byte

// The dev operator's public credentials, as in dev.yaml.
const (
	devSecret = "dev-secret-not-for-production" //nolint:gosec // G101: public, printed by crashgame dev; laptop only
	devAPIKey = "dev_key_not_for_production"    //nolint:gosec // G101: public, printed by crashgame dev; laptop only
)

// dev runs the installation of dev.yaml with the reference operator in the same
// process: one command, nothing to configure.
func dev(ctx context.Context, args []string, logger *slog.Logger, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("dev", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:8080", "address of the game")
	walletListen := fs.String("wallet-listen", "127.0.0.1:8081", "address of the reference operator (lobby and wallet)")
	metricsListen := fs.String("metrics-listen", config.DefaultMetricsListen, "address of /metrics (never served on --listen)")
	data := fs.String("data", "data", "folder of the SQLite databases")
	players := fs.Int("players", 5, "funded test players of the reference operator")
	if err := fs.Parse(args); err != nil {
		return err
	}
	for _, a := range []string{*listen, *walletListen, *metricsListen} {
		if _, _, err := net.SplitHostPort(a); err != nil {
			return fmt.Errorf("dev: address %q: %w", a, err)
		}
	}
	env := map[string]string{
		"DEV_LISTEN":         *listen,
		"DEV_METRICS_LISTEN": *metricsListen,
		"DEV_BASE_URL":       "http://" + *listen,
		"DEV_DATABASE":       "sqlite://" + filepath.ToSlash(filepath.Join(*data, "dev.db")),
		"DEV_WALLET_URL":     "http://" + *walletListen,
	}
	cfg, err := config.Parse(devConfig, func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		return fmt.Errorf("dev: the embedded dev.yaml is invalid: %w", err)
	}

	sim, err := operatorsim.New(operatorsim.Config{
		DB:          filepath.Join(*data, "operator-sim.db"),
		Operator:    "dev",
		Secret:      devSecret,
		APIKeys:     []string{devAPIKey},
		GameURL:     cfg.BaseURL,
		GameID:      "crash",
		Currency:    "BRL",
		SeedPlayers: *players,
		Logger:      logger.With("component", "operator-sim"),
	})
	if err != nil {
		return fmt.Errorf("dev: reference operator: %w", err)
	}
	defer sim.Close()
	ln, err := net.Listen("tcp", *walletListen)
	if err != nil {
		return fmt.Errorf("dev: reference operator: listen on %s: %w", *walletListen, err)
	}
	simSrv := &http.Server{Handler: sim.Handler(), ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := simSrv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("reference operator stopped", "err", err)
		}
	}()
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = simSrv.Shutdown(sctx)
	}()

	grantWelcome(sim.Handler(), *players, logger)

	fmt.Fprintf(stdout, `crashgame dev
  play       %[3]s/   (the reference operator's lobby: pick a player, Play;
             every player has a freebet campaign "welcome": 3 free rounds of 5.00)
  health     %[2]s/healthz
  metrics    http://%[4]s/metrics   (its own address, never on %[2]s)
  documents  %[2]s/openapi/
  operator   "dev", secret %[1]q (public, laptop only)
  catalogue  body='{"operator":"dev","timestamp":'$(date +%%s000)',"currency":"BRL"}'; \
             curl -s -X POST %[2]s/v1/games -H "Content-Type: application/json" -H "X-Signature: $(printf %%s "$body" | openssl dgst -sha256 -hmac %[1]s | cut -d' ' -f2)" -d "$body"
`, devSecret, cfg.BaseURL, "http://"+*walletListen, cfg.MetricsListen)
	return withStore(ctx, cfg, func(st *store.Store) error { return serve(ctx, cfg, st, logger, stdout) })
}

// grantWelcome gives every seeded player the freebet campaign "welcome": three
// free rounds of 500 cents, listed by /balance on the next entry. On a ledger
// that already has it the operator refuses the repeat, which is fine.
func grantWelcome(sim http.Handler, players int, logger *slog.Logger) {
	for i := 1; i <= players; i++ {
		body := fmt.Sprintf(`{"player_id":"player-%04d","id":"welcome","amount":500,"quantity":3,"timestamp":%d}`, i, time.Now().UnixMilli())
		req := httptest.NewRequest(http.MethodPost, "/admin/freebets/grant", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Signature", signature.Sign([]byte(devSecret), []byte(body)))
		rec := httptest.NewRecorder()
		sim.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			logger.Debug("welcome freebets not granted", "player", i, "status", rec.Code)
		}
	}
}
