package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/crashstudio/crashgame/internal/config"
	"github.com/crashstudio/crashgame/internal/wallet"
)

// Rule AUTH-20: the client reads the operator's key and secret when it is
// built (at start-up); a key changed afterwards takes effect only with a new
// client, that is after a restart.
func TestKeyReadAtStartup(t *testing.T) {
	t.Parallel()
	var (
		mu   sync.Mutex
		seen []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"ok","balance":100,"currency":"BRL","player_id":"p1"}`))
	}))
	defer srv.Close()
	cfg, err := config.Parse([]byte(`
base_url: https://games.example.com
games: [{game_id: crash, name: Crash, studio: S, category: crash}]
operators:
  - operator: acme
    secret: acme-secret-0123456789abcdef
    api_key: key-before-rotation
    wallet_url: `+srv.URL+`
    games: [crash]
    currencies: {BRL: {}}
`), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	op, _ := cfg.Operator("acme")
	c, err := wallet.NewClient(walletSettings(op))
	if err != nil {
		t.Fatal(err)
	}
	op.APIKey = "key-after-rotation"
	if _, err := c.Balance(context.Background(), wallet.BalanceCall{Token: "tok-0123456789abcdef", Currency: "BRL"}); err != nil {
		t.Fatal(err)
	}
	c2, err := wallet.NewClient(walletSettings(op))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c2.Balance(context.Background(), wallet.BalanceCall{Token: "tok-0123456789abcdef", Currency: "BRL"}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2 || seen[0] != "Bearer key-before-rotation" || seen[1] != "Bearer key-after-rotation" {
		t.Fatalf("Authorization headers %q", seen)
	}
}
