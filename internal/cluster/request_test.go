package cluster

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/crashstudio/crashgame/internal/cluster/natstest"
)

func TestRequestRoundTrip(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	leader, _ := connect(t, srv, "leader")
	follower, reg := connect(t, srv, "follower")
	subject := ActionSubject("crash", ActionCashout, 1)

	stop, err := leader.Serve(subject, func(ctx context.Context, req []byte) ([]byte, error) {
		if _, ok := ctx.Deadline(); !ok {
			return nil, errors.New("the handler's context has no deadline")
		}
		return append([]byte("answer to "), req...), nil
	})
	if err != nil {
		t.Fatalf("Serve: %v", err)
	}
	defer stop()

	tests := []struct {
		name string
		req  string
		want string
	}{
		{"a request", `{"bet_id":"b1"}`, `answer to {"bet_id":"b1"}`},
		{"an empty request", "", "answer to "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := follower.Request(t.Context(), subject, []byte(tc.req))
			if err != nil {
				t.Fatalf("Request: %v", err)
			}
			if string(got) != tc.want {
				t.Errorf("answer = %q, want %q", got, tc.want)
			}
		})
	}
	if n := histogramCount(t, reg, "crashgame_cluster_forward_seconds", map[string]string{"kind": "cashout", "outcome": "ok"}); n != 2 {
		t.Errorf("forward_seconds{kind=cashout,outcome=ok} count = %d, want 2", n)
	}
}

func TestRequestErrors(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	leader, _ := connect(t, srv, "leader")
	follower, reg := connect(t, srv, "follower")

	serve := func(t *testing.T, subject string, h Handler) {
		t.Helper()
		stop, err := leader.Serve(subject, h)
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
		t.Cleanup(stop)
	}
	tests := []struct {
		name    string
		setup   func(t *testing.T, subject string)
		subject string // default: an ActionSubject of its own
		wantIs  error
		want    *HandlerError // when the handler's error must come back
	}{
		{
			name:   "nobody serves the subject",
			setup:  func(*testing.T, string) {},
			wantIs: ErrNoLeader,
		},
		{
			name: "the leader stopped serving",
			setup: func(t *testing.T, subject string) {
				stop, err := leader.Serve(subject, func(context.Context, []byte) ([]byte, error) { return nil, nil })
				if err != nil {
					t.Fatalf("Serve: %v", err)
				}
				stop()
			},
			wantIs: ErrNoLeader,
		},
		{
			name: "a refusal with a code",
			setup: func(t *testing.T, subject string) {
				serve(t, subject, func(context.Context, []byte) ([]byte, error) {
					return nil, &HandlerError{Code: "window_closed", Message: "betting is closed"}
				})
			},
			want: &HandlerError{Code: "window_closed", Message: "betting is closed"},
		},
		{
			name: "a wrapped refusal keeps its code",
			setup: func(t *testing.T, subject string) {
				serve(t, subject, func(context.Context, []byte) ([]byte, error) {
					return nil, fmt.Errorf("place bet: %w", &HandlerError{Code: "too_many_bets", Message: "five bets already"})
				})
			},
			want: &HandlerError{Code: "too_many_bets", Message: "five bets already"},
		},
		{
			name: "a plain error gives its message",
			setup: func(t *testing.T, subject string) {
				serve(t, subject, func(context.Context, []byte) ([]byte, error) { return nil, errors.New("no such round") })
			},
			want: &HandlerError{Message: "no such round"},
		},
		{
			name: "a panic is an internal error",
			setup: func(t *testing.T, subject string) {
				serve(t, subject, func(context.Context, []byte) ([]byte, error) { panic("bug") })
			},
			want: &HandlerError{Code: "internal", Message: "the leader failed to handle the request"},
		},
		{
			name:    "a wildcard is no request subject",
			setup:   func(*testing.T, string) {},
			subject: SubjectPrefix + ".crash.action.*",
			wantIs:  errSubject,
		},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			subject := tc.subject
			if subject == "" {
				subject = ActionSubject(fmt.Sprintf("game-%d", i), ActionAdmit, 1)
			}
			tc.setup(t, subject)
			got, err := follower.Request(t.Context(), subject, []byte("req"))
			if err == nil {
				t.Fatalf("Request = %q, want an error", got)
			}
			if tc.wantIs != nil && !errors.Is(err, tc.wantIs) {
				t.Fatalf("Request error = %v, want %v", err, tc.wantIs)
			}
			if tc.want == nil {
				return
			}
			var he *HandlerError
			if !errors.As(err, &he) {
				t.Fatalf("Request error = %v (%T), want a *HandlerError", err, err)
			}
			if *he != *tc.want {
				t.Errorf("HandlerError = %+v, want %+v", *he, *tc.want)
			}
			if errors.Is(err, ErrUnavailable) || errors.Is(err, ErrNoLeader) {
				t.Errorf("a handler's error %v is taken for a transport failure", err)
			}
		})
	}
	t.Cleanup(func() {
		// Both "no leader" cases and the four handler errors were counted by kind "admit".
		for outcome, want := range map[string]uint64{"no_leader": 2, "handler_error": 4} {
			got := histogramCount(t, reg, "crashgame_cluster_forward_seconds", map[string]string{"kind": "admit", "outcome": outcome})
			if got != want {
				t.Errorf("forward_seconds{kind=admit,outcome=%s} count = %d, want %d", outcome, got, want)
			}
		}
	})
}

func TestServeRunsHandlersConcurrently(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	leader, _ := connect(t, srv, "leader")
	follower, _ := connect(t, srv, "follower", func(o *Options) { o.RequestTimeout = eventually })
	const n = 8
	var arrived atomic.Int32
	all := make(chan struct{})
	// Each handler waits until all n run at once: handled one at a time,
	// none would ever answer.
	stop, err := leader.Serve(ActionSubject("crash", ActionAdmit, 1), func(ctx context.Context, req []byte) ([]byte, error) {
		if arrived.Add(1) == n {
			close(all)
		}
		select {
		case <-all:
			return req, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	if err != nil {
		t.Fatalf("Serve: %v", err)
	}
	defer stop()
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			req := fmt.Sprintf("bet %d", i)
			got, err := follower.Request(t.Context(), ActionSubject("crash", ActionAdmit, 1), []byte(req))
			if err != nil || string(got) != req {
				t.Errorf("Request(%s) = %q, %v", req, got, err)
			}
		})
	}
	wg.Wait()
}

// executions counts how many times a handler ran for each request.
type executions struct {
	mu sync.Mutex
	n  map[string]int
}

func (e *executions) add(req string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.n == nil {
		e.n = map[string]int{}
	}
	e.n[req]++
}

func (e *executions) of(req string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.n[req]
}

// requestUntilAnswered sends req until it is answered: right after a
// reconnection the leader's subscription may not be known yet.
func requestUntilAnswered(t *testing.T, b *Bus, subject, req string) {
	t.Helper()
	waitFor(t, "an answer to "+req, func() bool {
		_, err := b.Request(t.Context(), subject, []byte(req))
		if err != nil && !errors.Is(err, ErrNoLeader) && !errors.Is(err, ErrUnavailable) {
			t.Fatalf("Request(%s): %v", req, err)
		}
		return err == nil
	})
}

// A request the requester saw fail because NATS went away is never executed
// later, after NATS is back: nothing is buffered for a reconnection.
func TestRequestFailingWithNATSIsNeverExecutedLater(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	leader, _ := connect(t, srv, "leader")
	// A requester that would wait a minute: its failure below comes from the
	// lost connection, not from its time running out.
	follower, reg := connect(t, srv, "follower", func(o *Options) { o.RequestTimeout = time.Minute })
	subject := ActionSubject("crash", ActionAdmit, 1)

	var runs executions
	started := make(chan struct{})
	release := make(chan struct{})
	stop, err := leader.Serve(subject, func(_ context.Context, req []byte) ([]byte, error) {
		runs.add(string(req))
		if string(req) == "in flight" {
			close(started)
			<-release
		}
		return []byte("placed"), nil
	})
	if err != nil {
		t.Fatalf("Serve: %v", err)
	}
	defer stop()

	// 1. A request in flight (its handler runs) when the server shuts down.
	inflight := make(chan error, 1)
	go func() {
		_, err := follower.Request(t.Context(), subject, []byte("in flight"))
		inflight <- err
	}()
	<-started
	srv.Shutdown()
	err = <-inflight
	if !errors.Is(err, ErrUnavailable) || !errors.Is(err, errConnectionLost) {
		t.Fatalf("in-flight request: %v, want ErrUnavailable (connection lost)", err)
	}
	close(release) // its answer has nowhere to go

	// 2. A request sent while NATS is down.
	waitFor(t, "the follower to see the outage", func() bool { return !follower.Connected() })
	if _, err := follower.Request(t.Context(), subject, []byte("during the outage")); !errors.Is(err, ErrUnavailable) || !errors.Is(err, errNotConnected) {
		t.Fatalf("request during the outage: %v, want ErrUnavailable (not connected)", err)
	}

	// 3. NATS is back: a new request is answered, and the two above never
	// ran again. Anything buffered would have been sent at the reconnection,
	// before this request.
	srv.Restart()
	waitConnected(t, leader, follower)
	requestUntilAnswered(t, follower, subject, "after the outage")
	if n := runs.of("in flight"); n != 1 {
		t.Errorf("the in-flight request ran %d times, want 1 (before the outage only)", n)
	}
	if n := runs.of("during the outage"); n != 0 {
		t.Errorf("the request sent during the outage ran %d times, want 0", n)
	}
	if n := histogramCount(t, reg, "crashgame_cluster_forward_seconds", map[string]string{"kind": "admit", "outcome": "unavailable"}); n < 2 {
		t.Errorf("forward_seconds{kind=admit,outcome=unavailable} count = %d, want at least 2", n)
	}
}

func TestBusReconnectsAfterRestart(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	leader, leaderReg := connect(t, srv, "leader")
	follower, _ := connect(t, srv, "follower")
	subject := ActionSubject("crash", ActionCancel, 1)
	stop, err := leader.Serve(subject, func(_ context.Context, req []byte) ([]byte, error) { return req, nil })
	if err != nil {
		t.Fatalf("Serve: %v", err)
	}
	defer stop()
	if !leader.Connected() {
		t.Fatal("Connected() = false after Connect")
	}
	if n := counterValue(t, leaderReg, "crashgame_cluster_nats_reconnects_total", nil); n != 0 {
		t.Fatalf("reconnects_total = %v before any outage, want 0", n)
	}

	for round := 1; round <= 2; round++ {
		srv.Shutdown()
		waitFor(t, "the leader to see the outage", func() bool { return !leader.Connected() })
		srv.Restart()
		waitConnected(t, leader, follower)
		requestUntilAnswered(t, follower, subject, fmt.Sprintf("cancel after restart %d", round))
		waitFor(t, "the reconnection to be counted", func() bool {
			return counterValue(t, leaderReg, "crashgame_cluster_nats_reconnects_total", nil) == float64(round)
		})
	}
}

func TestRequestCancelledByItsCaller(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	leader, _ := connect(t, srv, "leader")
	follower, _ := connect(t, srv, "follower")
	subject := ActionSubject("crash", ActionAdmit, 1)
	started := make(chan struct{})
	release := make(chan struct{})
	stop, err := leader.Serve(subject, func(context.Context, []byte) ([]byte, error) {
		close(started)
		<-release
		return nil, nil
	})
	if err != nil {
		t.Fatalf("Serve: %v", err)
	}
	defer stop()
	defer close(release)

	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		<-started
		cancel()
	}()
	_, err = follower.Request(ctx, subject, []byte("bet"))
	if !errors.Is(err, ErrUnavailable) || !errors.Is(err, context.Canceled) {
		t.Fatalf("Request: %v, want ErrUnavailable (cancelled): the handler may have run", err)
	}
}

// A request whose requester has stopped waiting when its turn comes is not
// handled (and not answered).
func TestServeSkipsARequestWhoseRequesterGaveUp(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		budget  string
		arrived time.Duration // before now
		runs    int
	}{
		{"time left", "60000", time.Second, 1},
		{"time ran out while queued", "1000", 2 * time.Second, 0},
		{"nothing left when sent", "0", 0, 0},
		{"no budget: the bus's timeout", "", time.Second, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var runs atomic.Int32
			s := &service{
				bus: &Bus{timeout: 2 * time.Minute, log: discardLogger()},
				h: func(context.Context, []byte) ([]byte, error) {
					runs.Add(1)
					return nil, nil
				},
			}
			m := nats.NewMsg("crashgame.table.crash.action.bet")
			m.Reply = "_INBOX.test"
			if tc.budget != "" {
				m.Header.Set(hdrBudget, tc.budget)
			}
			s.handle(m, time.Now().Add(-tc.arrived)) // the answer fails: no connection
			if got := int(runs.Load()); got != tc.runs {
				t.Errorf("handler ran %d times, want %d", got, tc.runs)
			}
		})
	}
}

func TestCloseAnswersTheRequestsItReceived(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	leader, _ := connect(t, srv, "leader")
	follower, _ := connect(t, srv, "follower", func(o *Options) { o.RequestTimeout = eventually })
	subject := ActionSubject("crash", ActionCashout, 1)
	started := make(chan struct{})
	release := make(chan struct{})
	if _, err := leader.Serve(subject, func(context.Context, []byte) ([]byte, error) {
		close(started)
		<-release
		return []byte("cashed out"), nil
	}); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	answer := make(chan error, 1)
	go func() {
		got, err := follower.Request(t.Context(), subject, []byte("cashout"))
		if err == nil && string(got) != "cashed out" {
			err = fmt.Errorf("answer %q", got)
		}
		answer <- err
	}()
	<-started
	closed := make(chan error, 1)
	go func() { closed <- leader.Close() }()
	close(release)
	if err := <-answer; err != nil {
		t.Errorf("the request the leader received before Close: %v, want its answer", err)
	}
	if err := <-closed; err != nil {
		t.Errorf("Close: %v", err)
	}
	if leader.Connected() {
		t.Error("Connected() = true after Close")
	}
	if _, err := leader.Request(t.Context(), subject, nil); !errors.Is(err, ErrUnavailable) {
		t.Errorf("Request after Close: %v, want ErrUnavailable", err)
	}
	if _, err := follower.Request(t.Context(), subject, nil); !errors.Is(err, ErrNoLeader) {
		t.Errorf("Request to a closed leader: %v, want ErrNoLeader", err)
	}
}

// A leader that stops serving while NATS is down (it lost the table because
// it was cut off) leaves nothing behind once NATS is back: every request goes
// to the new leader. A subscription still draining at the reconnection used
// to be sent to the server again and never taken back, so the queue group
// kept a member that answered nothing and half the requests timed out.
func TestServingStoppedDuringAnOutageStaysStopped(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	old, _ := connect(t, srv, "old-leader")
	next, _ := connect(t, srv, "new-leader")
	follower, _ := connect(t, srv, "follower", func(o *Options) { o.RequestTimeout = 500 * time.Millisecond })
	subject := ActionSubject("crash", ActionAdmit, 1)
	stopOld, err := old.Serve(subject, func(context.Context, []byte) ([]byte, error) { return []byte("old"), nil })
	if err != nil {
		t.Fatalf("Serve: %v", err)
	}
	requestUntilAnswered(t, follower, subject, "before the outage")

	srv.Shutdown()
	waitFor(t, "the old leader to see the outage", func() bool { return !old.Connected() })
	stopped := make(chan struct{})
	go func() { stopOld(); close(stopped) }()
	srv.Restart()
	waitConnected(t, old, next, follower)
	waitFor(t, "the old leader to stop serving", func() bool {
		select {
		case <-stopped:
			return true
		default:
			return false
		}
	})
	stopNext, err := next.Serve(subject, func(context.Context, []byte) ([]byte, error) { return []byte("new"), nil })
	if err != nil {
		t.Fatalf("Serve: %v", err)
	}
	defer stopNext()
	for i := range 20 {
		answer, err := follower.Request(t.Context(), subject, []byte("after the outage"))
		if err != nil || string(answer) != "new" {
			t.Fatalf("request %d after the outage: %q, %v; want the new leader's answer", i, answer, err)
		}
	}
}
