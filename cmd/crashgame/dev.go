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
	"strconv"
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

// devPort is crashgame dev's default --port: the game on 8080, the reference
// operator on 8081, /metrics on 8082.
const devPort = 8080

// devSockets are crashgame dev's three sockets, open before anything is
// printed, so that a port that is taken fails first, naming its flag.
type devSockets struct {
	game, wallet, metrics net.Listener
}

func (s devSockets) close() {
	for _, ln := range []net.Listener{s.game, s.wallet, s.metrics} {
		if ln != nil {
			_ = ln.Close()
		}
	}
}

// listenDev opens the sockets of dev's addresses, each named by its flag.
func listenDev(game, wallet, metrics string) (devSockets, error) {
	var s devSockets
	for _, l := range []struct {
		flag, addr string
		ln         *net.Listener
	}{{"--listen", game, &s.game}, {"--wallet-listen", wallet, &s.wallet}, {"--metrics-listen", metrics, &s.metrics}} {
		ln, err := net.Listen("tcp", l.addr)
		if err != nil {
			s.close()
			return devSockets{}, fmt.Errorf("dev: %s %s: %w (is another crashgame dev running? give this one another --port, e.g. make run PORT=9080)", l.flag, l.addr, err)
		}
		*l.ln = ln
	}
	return s, nil
}

// dev runs the installation of dev.yaml with the reference operator in the same
// process: one command, nothing to configure. --port BASE sets every address
// and the data folder at once, so that two run side by side with one flag
// each; --listen, --wallet-listen, --metrics-listen and --data override one.
func dev(ctx context.Context, args []string, logger *slog.Logger, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("dev", flag.ContinueOnError)
	fs.SetOutput(stderr)
	port := fs.Int("port", devPort, "base port: the game on it, the reference operator on the next, /metrics on the one after; "+
		"other than 8080, the databases are under data/PORT/ too")
	listen := fs.String("listen", "", "address of the game (default 127.0.0.1:PORT)")
	walletListen := fs.String("wallet-listen", "", "address of the reference operator, lobby and wallet (default 127.0.0.1:PORT+1)")
	metricsListen := fs.String("metrics-listen", "", "address of /metrics, never served on --listen (default 127.0.0.1:PORT+2)")
	data := fs.String("data", "", "folder of the SQLite databases (default data, or data/PORT for another --port)")
	players := fs.Int("players", 5, "funded test players of the reference operator")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *port < 1 || *port > 65533 {
		return fmt.Errorf("dev: --port %d: want 1 to 65533 (it takes the two ports after it too)", *port)
	}
	def := func(v *string, s string) {
		if *v == "" {
			*v = s
		}
	}
	def(listen, net.JoinHostPort("127.0.0.1", strconv.Itoa(*port)))
	def(walletListen, net.JoinHostPort("127.0.0.1", strconv.Itoa(*port+1)))
	def(metricsListen, net.JoinHostPort("127.0.0.1", strconv.Itoa(*port+2)))
	if *port == devPort {
		def(data, "data")
	}
	def(data, filepath.Join("data", strconv.Itoa(*port)))
	for _, a := range []struct{ flag, addr string }{{"--listen", *listen}, {"--wallet-listen", *walletListen}, {"--metrics-listen", *metricsListen}} {
		if _, _, err := net.SplitHostPort(a.addr); err != nil {
			return fmt.Errorf("dev: %s %q: %w", a.flag, a.addr, err)
		}
	}
	sockets, err := listenDev(*listen, *walletListen, *metricsListen)
	if err != nil {
		return err
	}
	defer sockets.close()
	// The addresses as opened: a port 0 is the one the system chose.
	*listen, *walletListen, *metricsListen = sockets.game.Addr().String(), sockets.wallet.Addr().String(), sockets.metrics.Addr().String()
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
	ln := sockets.wallet
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

	banner := func() {
		fmt.Fprintf(stdout, `crashgame dev
  play       %[3]s/   (the reference operator's lobby: pick a player, Play;
             every player has a freebet campaign "welcome": 3 free rounds of 5.00)
  health     %[2]s/healthz
  metrics    http://%[4]s/metrics   (its own address, never on %[2]s)
  reference  %[2]s/docs/   (the API reference; the documents as written: %[2]s/openapi/)
  operator   "dev", secret %[1]q (public, laptop only)
  catalogue  body='{"operator":"dev","timestamp":'$(date +%%s000)',"currency":"BRL"}'; \
             curl -s -X POST %[2]s/v1/games -H "Content-Type: application/json" -H "X-Signature: $(printf %%s "$body" | openssl dgst -sha256 -hmac %[1]s | cut -d' ' -f2)" -d "$body"
  data       %[5]s   (a second crashgame dev needs another: --port covers it)
  stop       Ctrl-C: at once, or after the flying round's crash when it holds bets
             (at most 30 s; a second Ctrl-C stops at once, the next start settles them)
`, devSecret, cfg.BaseURL, "http://"+*walletListen, cfg.MetricsListen, *data)
	}
	return withStore(ctx, cfg, func(st *store.Store) error {
		return serve(ctx, cfg, st, logger, stdout, serveOptions{listener: sockets.game, metrics: sockets.metrics, banner: banner})
	})
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
