package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
)

// Headers of a request and of its answer.
const (
	// hdrBudget is the time, in milliseconds, the requester will still wait
	// when it sends the request. The leader measures it from the moment the
	// request reaches the handler's queue, so clocks need not agree.
	hdrBudget = "Crashgame-Budget-Ms"
	// hdrStatus is "error" on the answer of a handler that returned an error;
	// the body is then its message and hdrCode its code.
	hdrStatus = "Crashgame-Status"
	hdrCode   = "Crashgame-Error-Code"
)

// queueGroup is the one queue group of every Serve: each request reaches one
// server of the subject, even when two replicas serve it during a hand-over.
const queueGroup = "leader"

// Handler answers one request on the leader. ctx carries the requester's
// deadline (its remaining time when it sent the request, measured from the
// arrival). An error is answered to the requester as a *HandlerError: return
// a *HandlerError to choose its code, any other error gives its message with
// no code.
type Handler func(ctx context.Context, req []byte) ([]byte, error)

// HandlerError is the leader's handler's error as its requester receives it:
// the handler ran and answered with an error (a refusal, most often). It is
// not a transport failure: the outcome is what the handler said.
type HandlerError struct {
	// Code is the handler's machine-readable code, when it gave one.
	Code string
	// Message is the handler's error message.
	Message string
}

func (e *HandlerError) Error() string {
	if e.Code == "" {
		return "cluster: leader answered: " + e.Message
	}
	return "cluster: leader answered " + e.Code + ": " + e.Message
}

// Request sends req to whoever serves subject (a literal subject, usually an
// ActionSubject) and waits for the answer until ctx's deadline or, without
// one, the Bus's RequestTimeout. It never retries. It returns the answer, or:
//
//   - a *HandlerError: the handler ran and returned this error;
//   - ErrNoLeader: nobody serves subject now, nothing was executed;
//   - ErrUnavailable (wrapped with the cause: not connected, the time ran
//     out, the connection was lost while waiting, ctx cancelled): the
//     outcome is unknown.
//
// Its latency is observed in crashgame_cluster_forward_seconds, by the
// subject's action (see kindOf) and outcome.
func (b *Bus) Request(ctx context.Context, subject string, req []byte) ([]byte, error) {
	if err := checkSubject(subject, false); err != nil {
		return nil, fmt.Errorf("cluster: request: %w", err)
	}
	start := time.Now()
	answer, outcome, err := b.request(ctx, subject, req)
	b.m.forward.WithLabelValues(kindOf(subject), outcome).Observe(time.Since(start).Seconds())
	return answer, err
}

func (b *Bus) request(ctx context.Context, subject string, req []byte) ([]byte, string, error) {
	link := b.currentLink()
	if link.Err() != nil || !b.nc.IsConnected() {
		return nil, outcomeUnavailable, fmt.Errorf("cluster: request %s: %w: %w", subject, ErrUnavailable, errNotConnected)
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, b.timeout)
		defer cancel()
	}
	deadline, _ := ctx.Deadline()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	// A lost connection ends the wait at once: the answer, if any, would go
	// to an inbox the server forgot.
	defer context.AfterFunc(link, func() { cancel(context.Cause(link)) })()

	msg := nats.NewMsg(subject)
	msg.Data = req
	msg.Header.Set(hdrBudget, strconv.FormatInt(time.Until(deadline).Milliseconds(), 10))
	resp, err := b.nc.RequestMsgWithContext(ctx, msg)
	switch {
	case err == nil:
	case errors.Is(err, nats.ErrNoResponders):
		return nil, outcomeNoLeader, fmt.Errorf("cluster: request %s: %w", subject, ErrNoLeader)
	default:
		cause := err
		if ctx.Err() != nil {
			cause = context.Cause(ctx)
		}
		return nil, outcomeUnavailable, fmt.Errorf("cluster: request %s: %w: %w", subject, ErrUnavailable, cause)
	}
	if resp.Header.Get(hdrStatus) == "error" {
		return nil, outcomeHandlerError, &HandlerError{Code: resp.Header.Get(hdrCode), Message: string(resp.Data)}
	}
	return resp.Data, outcomeOK, nil
}

// Serve answers the requests on subject (wildcards allowed) with h until stop
// is called, in the queue group shared by every Serve: one server per request.
// Handlers run concurrently, at most Options.MaxConcurrentHandlers at once. A
// request whose requester's time has already run out when its turn comes is
// neither handled nor answered. Serve returns once the server knows the
// subscription when connected (requests sent after it find it); when not
// connected, it is made at the reconnection.
//
// stop unsubscribes at once: handlers already running finish and answer, a
// request not yet handled is dropped (its requester reports an unknown
// outcome; nothing was done), and it returns once every handler has
// finished and, when connected, once the server has taken the subscription
// back (a request sent after it finds no leader). It is safe to call more
// than once; Close calls it for every Serve still running.
func (b *Bus) Serve(subject string, h Handler) (stop func(), err error) {
	if err := checkSubject(subject, true); err != nil {
		return nil, fmt.Errorf("cluster: serve: %w", err)
	}
	s := &service{bus: b, subject: subject, h: h, slots: make(chan struct{}, b.maxHandlers)}
	sub, err := b.nc.QueueSubscribe(subject, queueGroup, s.receive)
	if err != nil {
		return nil, fmt.Errorf("cluster: serve %s: %w", subject, err)
	}
	s.sub = sub
	b.mu.Lock()
	b.services[s] = struct{}{}
	b.mu.Unlock()
	if b.nc.IsConnected() {
		if err := b.nc.FlushTimeout(b.timeout); err != nil {
			b.log.Warn("serve: the server did not confirm the subscription; it is made at the reconnection",
				slog.String("subject", subject), slog.String("error", err.Error()))
		}
	}
	return s.stop, nil
}

// service is one Serve.
type service struct {
	bus     *Bus
	subject string
	h       Handler
	sub     *nats.Subscription
	slots   chan struct{} // one per running handler

	mu       sync.Mutex
	stopped  bool
	running  sync.WaitGroup
	stopOnce sync.Once
}

// receive runs in the subscription's goroutine, one request at a time: it
// waits for a free slot and starts the handler.
func (s *service) receive(m *nats.Msg) {
	arrived := time.Now()
	if m.Reply == "" {
		s.bus.log.Warn("serve: a message without a reply subject ignored", slog.String("subject", m.Subject))
		return
	}
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return
	}
	s.running.Add(1)
	s.mu.Unlock()
	s.slots <- struct{}{}
	go func() {
		defer s.running.Done()
		defer func() { <-s.slots }()
		s.handle(m, arrived)
	}()
}

// handle runs the handler on one request and answers it.
func (s *service) handle(m *nats.Msg, arrived time.Time) {
	budget := s.bus.timeout
	if v := m.Header.Get(hdrBudget); v != "" {
		if ms, err := strconv.ParseInt(v, 10, 64); err == nil {
			budget = time.Duration(ms) * time.Millisecond
		}
	}
	ctx, cancel := context.WithDeadline(context.Background(), arrived.Add(budget))
	defer cancel()
	if ctx.Err() != nil {
		s.bus.log.Warn("serve: a request whose requester stopped waiting was not handled",
			slog.String("subject", m.Subject))
		return
	}
	answer, err := s.call(ctx, m.Data)
	resp := nats.NewMsg(m.Reply)
	if err != nil {
		var he *HandlerError
		if !errors.As(err, &he) {
			he = &HandlerError{Message: err.Error()}
		}
		resp.Header.Set(hdrStatus, "error")
		if he.Code != "" {
			resp.Header.Set(hdrCode, he.Code)
		}
		resp.Data = []byte(he.Message)
	} else {
		resp.Data = answer
	}
	if err := m.RespondMsg(resp); err != nil {
		s.bus.log.Warn("serve: the answer could not be sent; the requester reports an unknown outcome",
			slog.String("subject", m.Subject), slog.String("error", err.Error()))
	}
}

// call runs the handler; a panic becomes a HandlerError with the code
// "internal" and is logged with its stack.
func (s *service) call(ctx context.Context, req []byte) (answer []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			s.bus.log.Error("serve: the handler panicked", slog.String("subject", s.subject),
				slog.Any("panic", p), slog.String("stack", string(debug.Stack())))
			answer, err = nil, &HandlerError{Code: "internal", Message: "the leader failed to handle the request"}
		}
	}()
	return s.h(ctx, req)
}

// stop stops serving: the subscription goes at once (requests already
// handled are answered; one still queued in this process is dropped, so its
// requester reports an unknown outcome and nothing was done). It is never
// drained: a subscription still draining when the connection comes back is
// sent to the server again and never taken back, a member of the queue group
// that answers nothing. While disconnected, unsubscribing only forgets it
// here, so the reconnection does not bring it back.
func (s *service) stop() {
	s.stopOnce.Do(func() {
		if err := s.sub.Unsubscribe(); err != nil && !errors.Is(err, nats.ErrConnectionClosed) && !errors.Is(err, nats.ErrBadSubscription) {
			s.bus.log.Warn("serve: unsubscribing failed", slog.String("subject", s.subject),
				slog.String("error", err.Error()))
		}
		// Once the server has the UNSUB, a request finds no responder here
		// (ErrNoLeader at once) rather than a message dropped on arrival.
		if s.bus.nc.IsConnected() {
			if err := s.bus.nc.FlushTimeout(s.bus.timeout); err != nil {
				s.bus.log.Warn("serve: the server did not confirm the end of the subscription", slog.String("subject", s.subject),
					slog.String("error", err.Error()))
			}
		}
		s.mu.Lock()
		s.stopped = true
		s.mu.Unlock()
		s.running.Wait()
		s.bus.mu.Lock()
		delete(s.bus.services, s)
		s.bus.mu.Unlock()
	})
}
