package cluster

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/crashstudio/crashgame/internal/cluster/natstest"
	"github.com/crashstudio/crashgame/internal/logtest"
)

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

func TestConnectRefusesBadOptions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		o    Options
		want string
	}{
		{"no URL", Options{Name: "r1"}, "no NATS URL"},
		{"no name", Options{URLs: []string{"nats://127.0.0.1:4222"}}, "replica name"},
		{"a name with a space", Options{URLs: []string{"nats://127.0.0.1:4222"}, Name: "r 1"}, "replica name"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.o.Logger = discardLogger()
			b, err := Connect(t.Context(), tc.o)
			if err == nil {
				_ = b.Close()
				t.Fatal("Connect succeeded")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Connect: %v, want it to mention %q", err, tc.want)
			}
		})
	}
}

func TestConnectGivesUpWhenItsContextEnds(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	srv.Shutdown() // nothing listens on its port now
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	b, err := Connect(ctx, Options{URLs: []string{srv.URL()}, Name: "r1", Logger: discardLogger()})
	if err == nil {
		_ = b.Close()
		t.Fatal("Connect succeeded with nothing listening")
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Connect: %v, want the context's error", err)
	}
}

func TestConnectWaitsForTheServer(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	srv.Shutdown()
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(t.Context(), eventually)
		defer cancel()
		b, err := Connect(ctx, Options{URLs: []string{srv.URL()}, Name: "r1", Logger: discardLogger()})
		if err == nil {
			if !b.Connected() {
				err = errors.New("Connect returned a bus that is not connected")
			}
			_ = b.Close()
		}
		done <- err
	}()
	srv.Restart()
	if err := <-done; err != nil {
		t.Fatalf("Connect: %v", err)
	}
}

// Credentials in a NATS URL never reach the log: connected, disconnected,
// reconnected and closed are logged with the server's host only.
func TestConnectionEventsAreLoggedWithoutCredentials(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	var logs logtest.Buffer
	host := strings.TrimPrefix(srv.URL(), "nats://")
	b, err := Connect(t.Context(), Options{
		URLs:   []string{"nats://s3cr3t-token@" + host},
		Name:   "r1",
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	srv.Shutdown()
	waitFor(t, "the outage to be seen", func() bool { return !b.Connected() })
	srv.Restart()
	waitConnected(t, b)
	if err := b.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	out := logs.String()
	for _, want := range []string{"connected to NATS", "disconnected from NATS", "reconnected to NATS", "NATS connection closed", host} {
		if !strings.Contains(out, want) {
			t.Errorf("the log lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "s3cr3t") {
		t.Errorf("the log shows the URL's token:\n%s", out)
	}
}

func TestRedactedURLs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		urls []string
		want string
	}{
		{[]string{"nats://nats-1:4222"}, "[nats-1:4222]"},
		{[]string{"nats://user:pass@nats-1:4222", "tls://tok@nats-2:4222"}, "[nats-1:4222 nats-2:4222]"},
		{[]string{"nats://a:4222, nats://b:4222"}, "[a:4222 b:4222]"},
		{[]string{"nats-3:4222"}, "[nats-3:4222]"},
		{[]string{"nats://us er:p%zz@x"}, "[(unparsable URL)]"},
	}
	for _, tc := range tests {
		if got := redactedURLs(tc.urls); got != tc.want {
			t.Errorf("redactedURLs(%q) = %q, want %q", tc.urls, got, tc.want)
		}
	}
}

func TestReconnectDelayIsBounded(t *testing.T) {
	t.Parallel()
	for attempts := 1; attempts <= 100; attempts++ {
		d := reconnectDelay(attempts)
		if d < reconnectWaitMin || d > reconnectWaitMax+reconnectWaitMax/10 {
			t.Fatalf("reconnectDelay(%d) = %s, want within [%s, %s]", attempts, d, reconnectWaitMin, reconnectWaitMax*11/10)
		}
		if attempts > 10 && d < reconnectWaitMax {
			t.Fatalf("reconnectDelay(%d) = %s, want the maximum %s by then", attempts, d, reconnectWaitMax)
		}
	}
}
