package main

import (
	"context"
	_ "embed"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"path/filepath"

	"github.com/crashstudio/crashgame/internal/config"
)

//go:embed dev.yaml
var devConfig []byte

// devSecret is the dev operator's public secret, as in dev.yaml.
const devSecret = "dev-secret-not-for-production"

// dev runs the installation of dev.yaml: one command, nothing to configure.
func dev(ctx context.Context, args []string, logger *slog.Logger, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("dev", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:8080", "address to listen on")
	data := fs.String("data", "data", "folder of the SQLite database")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if _, _, err := net.SplitHostPort(*listen); err != nil {
		return fmt.Errorf("dev: --listen %q: %w", *listen, err)
	}
	env := map[string]string{
		"DEV_LISTEN":   *listen,
		"DEV_BASE_URL": "http://" + *listen,
		"DEV_DATABASE": "sqlite://" + filepath.ToSlash(filepath.Join(*data, "dev.db")),
	}
	cfg, err := config.Parse(devConfig, func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		return fmt.Errorf("dev: the embedded dev.yaml is invalid: %w", err)
	}
	fmt.Fprintf(stdout, `crashgame dev: operator "dev", secret %q (public, laptop only)
  health     %[2]s/healthz
  documents  %[2]s/openapi/
  catalogue  body='{"operator":"dev","timestamp":'$(date +%%s000)',"currency":"BRL"}'; \
             curl -s -X POST %[2]s/v1/games -H "X-Signature: $(printf %%s "$body" | openssl dgst -sha256 -hmac %[1]s | cut -d' ' -f2)" -d "$body"
`, devSecret, cfg.BaseURL)
	return serve(ctx, cfg, logger, stdout)
}
