package main

import (
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
)

// natsBenchCommand measures what a NATS server carries in the cluster's
// pattern (docs/capacity.md, "NATS"): one publisher's messages, each
// delivered to every subscriber, as a table's events go to every replica.
// Its figure, messages in and out a second, is what `capacity predict
// --nats-messages` judges the model's NATS traffic against.
const natsBenchCommand = "nats-bench"

// natsBenchResult is one measurement.
type natsBenchResult struct {
	Messages    int           // published
	Subscribers int           // each received every message
	Received    int64         // in all
	Took        time.Duration // from the first publish to the last delivery
}

// inOutPerSecond is the messages a second in and out of the server: each
// published message is in once and out once per subscriber.
func (r natsBenchResult) inOutPerSecond() float64 {
	return float64(int64(r.Messages)+r.Received) / r.Took.Seconds()
}

// natsBench publishes n messages of size bytes on one connection to subs
// subscribers, each on its own connection, and waits until every
// subscriber has every message (or ctx ends: an error, with what arrived).
// The publisher waits for the server's acknowledgement of its buffered
// messages every 1,000 (a flush), so that it does not outrun the
// subscribers by more than that and make them slow consumers.
func natsBench(ctx context.Context, url string, subs, n, size int) (natsBenchResult, error) {
	subject := "crashgame.bench." + rand.Text()
	res := natsBenchResult{Messages: n, Subscribers: subs}
	var received atomic.Int64
	var done sync.WaitGroup
	for i := range subs {
		nc, err := nats.Connect(url, nats.Name(fmt.Sprintf("loadgen-bench-sub-%d", i)))
		if err != nil {
			return res, fmt.Errorf("nats-bench: subscriber %d: %w", i, err)
		}
		defer nc.Close()
		var got atomic.Int64
		all := make(chan struct{})
		if _, err := nc.Subscribe(subject, func(*nats.Msg) {
			received.Add(1)
			if got.Add(1) == int64(n) {
				close(all)
			}
		}); err != nil {
			return res, fmt.Errorf("nats-bench: subscribe: %w", err)
		}
		if err := nc.Flush(); err != nil {
			return res, fmt.Errorf("nats-bench: subscribe: %w", err)
		}
		done.Add(1)
		go func() {
			defer done.Done()
			select {
			case <-all:
			case <-ctx.Done():
			}
		}()
	}
	pub, err := nats.Connect(url, nats.Name("loadgen-bench-pub"))
	if err != nil {
		return res, fmt.Errorf("nats-bench: publisher: %w", err)
	}
	defer pub.Close()
	data := make([]byte, size)
	start := time.Now()
	for i := range n {
		if err := pub.Publish(subject, data); err != nil {
			return res, fmt.Errorf("nats-bench: publish: %w", err)
		}
		if (i+1)%1000 == 0 {
			if err := pub.FlushWithContext(ctx); err != nil {
				return res, fmt.Errorf("nats-bench: flush: %w", err)
			}
		}
	}
	if err := pub.FlushWithContext(ctx); err != nil {
		return res, fmt.Errorf("nats-bench: flush: %w", err)
	}
	done.Wait()
	res.Took, res.Received = time.Since(start), received.Load()
	if want := int64(n) * int64(subs); res.Received != want {
		return res, fmt.Errorf("nats-bench: %d of %d deliveries arrived: %w", res.Received, want, errors.Join(ctx.Err(), errors.New("incomplete")))
	}
	return res, nil
}

// natsBenchMain runs `loadgen nats-bench`.
func natsBenchMain(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	fs := flag.NewFlagSet("loadgen "+natsBenchCommand, flag.ContinueOnError)
	fs.SetOutput(stderr)
	url := fs.String("nats", "nats://127.0.0.1:4222", "the NATS server")
	subs := fs.Int("subscribers", 3, "subscribers, each on its own connection (the replicas)")
	n := fs.Int("messages", 200000, "messages to publish")
	size := fs.Int("size", 1000, "bytes a message (a bet's event is about 1,100)")
	wait := fs.Duration("timeout", 2*time.Minute, "give up after")
	if err := fs.Parse(args); err != nil {
		return 2, err
	}
	if *subs < 1 || *n < 1 || *size < 0 {
		return 2, errors.New("nats-bench: --subscribers and --messages must be positive")
	}
	ctx, cancel := context.WithTimeout(ctx, *wait)
	defer cancel()
	r, err := natsBench(ctx, *url, *subs, *n, *size)
	if err != nil {
		return 2, err
	}
	fmt.Fprintf(stdout, "nats-bench: %d messages of %d bytes to %d subscribers in %s: %.0f published a second, %.0f messages in and out a second (capacity predict --nats-messages)\n",
		r.Messages, *size, r.Subscribers, r.Took.Round(time.Millisecond), float64(r.Messages)/r.Took.Seconds(), r.inOutPerSecond())
	return 0, nil
}
