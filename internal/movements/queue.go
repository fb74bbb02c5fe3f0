package movements

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/crashstudio/crashgame/internal/groupcommit"
	"github.com/crashstudio/crashgame/internal/wallet"
)

// Queue defaults.
const (
	DefaultQueueConcurrency = 32
	DefaultQueueBatch       = 256
	DefaultQueuePoll        = time.Second
	// DefaultQueueLease is how long a worker holds a movement it is sending.
	// Another worker (another process on the same PostgreSQL) takes it over
	// only once the lease has run out: after a crash, the movements that were
	// in flight wait that long. An attempt is cut at half the lease, so that
	// two attempts of one movement never overlap (ENV-11).
	DefaultQueueLease = time.Minute
	// DefaultBreakerWait is how long the movements of an operator whose
	// circuit breaker is open wait before they are looked at again. They
	// spend no attempt meanwhile.
	DefaultBreakerWait = time.Second
	// UnknownOperatorWait is how long the movements of an operator without a
	// Client wait (a configuration error: logged, no attempt spent).
	UnknownOperatorWait = time.Minute
	// maxWriteBatch bounds how many attempt results one transaction records.
	maxWriteBatch = 256
	// claimTimeout bounds one claim statement.
	claimTimeout = 10 * time.Second
	// dbRetryWait is the pause after a failed claim.
	dbRetryWait = time.Second
	// writeTimeout bounds the transaction that records attempt results; it
	// runs even while Run stops, so that no sent attempt goes unrecorded.
	writeTimeout = 30 * time.Second
)

// Queue delivers the queued movements (the outbox written by Enqueue) to the
// operators' wallets: the same transaction_id and body on every attempt, a
// new request_id and timestamp each time (the Client's Envelope), up to
// MaxAttempts attempts with Backoff between them, then parked as exhausted.
// It is safe for concurrent use; Run runs once at a time per Queue.
//
// Several Queues may share one PostgreSQL database (one per process): a
// movement is claimed with FOR UPDATE SKIP LOCKED and a lease, so it is never
// sent by two of them at once. On SQLite, run one Queue per database.
type Queue struct {
	st         QueueStore
	clients    func(operator string) (*wallet.Client, bool)
	now        func() time.Time
	logger     *slog.Logger
	conc       int
	batch      int
	poll       time.Duration
	lease      time.Duration
	breakWait  time.Duration
	onSettled  func(Movement, wallet.Result)
	metrics    QueueMetrics
	setup      []func(*Queue) error // run by NewQueue after the options
	instanceID string

	outbox  *Outbox // its Notify wakes Run
	running atomic.Bool

	mu     sync.Mutex
	paused map[string]time.Time // operator -> until (real time, like the breaker): breaker open or no Client
}

// QueueOption configures a Queue.
type QueueOption func(*Queue)

// WithQueueClock sets the clock of due times, leases and created/done times.
// Waiting is measured with real timers whatever it is.
func WithQueueClock(now func() time.Time) QueueOption { return func(q *Queue) { q.now = now } }

// WithQueueLogger sets the logger; the default is slog.Default().
func WithQueueLogger(l *slog.Logger) QueueOption { return func(q *Queue) { q.logger = l } }

// WithConcurrency sets how many attempts may be in flight at once (default 32).
func WithConcurrency(n int) QueueOption { return func(q *Queue) { q.conc = n } }

// WithBatchSize sets how many due movements one claim takes at most (default
// 256); a claim never takes more than the free attempt slots.
func WithBatchSize(n int) QueueOption { return func(q *Queue) { q.batch = n } }

// WithPollInterval sets the longest sleep while nothing is due (default 1 s).
// Notify wakes the worker sooner.
func WithPollInterval(d time.Duration) QueueOption { return func(q *Queue) { q.poll = d } }

// WithLease sets how long a worker holds a movement it sends (default 1 min).
func WithLease(d time.Duration) QueueOption { return func(q *Queue) { q.lease = d } }

// WithBreakerWait sets how long the movements of an operator whose breaker is
// open wait before they are tried again (default 1 s), without spending an
// attempt.
func WithBreakerWait(d time.Duration) QueueOption { return func(q *Queue) { q.breakWait = d } }

// QueueMetrics receives the queue's measurements. Implementations must be
// safe for concurrent use and quick. The depth by status is read with
// Queue.Depth.
type QueueMetrics interface {
	// Attempt is called once per attempt sent and recorded.
	Attempt(kind MovementKind, outcome wallet.Outcome)
	// Exhausted is called when a movement is parked after its last attempt.
	Exhausted(kind MovementKind)
	// Delivered is called when a movement is done, with the time from its
	// enqueue to the recorded success.
	Delivered(kind MovementKind, latency time.Duration)
}

// WithQueueMetrics sets where the queue's measurements go; the default
// discards them. WithRegisterer (queue_prometheus.go) plugs Prometheus in.
func WithQueueMetrics(m QueueMetrics) QueueOption { return func(q *Queue) { q.metrics = m } }

type noQueueMetrics struct{}

func (noQueueMetrics) Attempt(MovementKind, wallet.Outcome)  {}
func (noQueueMetrics) Exhausted(MovementKind)                {}
func (noQueueMetrics) Delivered(MovementKind, time.Duration) {}

// WithOnSettled sets the hook called once for each movement the operator
// applied (status done), after that is recorded, with the success Result: the
// game hands Result.Balance (when Result.HasBalance) to the player's sessions
// (cmd/crashgame wires it to sessions.OnWalletBalance). It runs
// on the goroutine that records attempts (one per Run): it must be quick and
// must not block.
func WithOnSettled(f func(Movement, wallet.Result)) QueueOption {
	return func(q *Queue) { q.onSettled = f }
}

// Claim is a Queue's request for due movements: ClaimMovements leases up to
// Limit pending movements due at Now (next_attempt_at <= Now), earliest due
// first, to Worker until LeaseEnd, and leaves the operators SkipOperators
// alone.
type Claim struct {
	Worker        string // the claiming worker's id, stored in claimed_by
	Now           time.Time
	LeaseEnd      time.Time // stored in next_attempt_at while the worker holds it
	Limit         int
	SkipOperators []string
}

// AttemptChange is what one finished attempt writes on its movement, fenced by
// the claim of Worker: applied only while the movement is pending and
// claimed by Worker.
type AttemptChange struct {
	TransactionID string
	Worker        string
	Status        MovementStatus
	Attempts      int
	NextAttemptAt time.Time
	LastError     string
	LastRequestID *string   // nil: left as it is (no attempt was sent)
	DoneAt        time.Time // zero: left as it is
	OperatorTxID  *string   // a success's
	BalanceAfter  *int64    // a success's, when it answered one
}

// QueueStore is the movements table as the Queue uses it. The Queue decides (what an answer means, the back-off, when a
// movement is exhausted, which operators wait); the store claims, fences and
// writes atomically what it is told.
type QueueStore interface {
	// ClaimMovements leases up to c.Limit due pending movements to c.Worker;
	// two claims never take one movement.
	ClaimMovements(ctx context.Context, c Claim) ([]MovementRecord, error)
	// NextDueMovement is the earliest next_attempt_at of a pending movement
	// of an operator not skipped.
	NextDueMovement(ctx context.Context, skipOperators []string) (time.Time, bool, error)
	// RecordMovementAttempts writes finished attempts in one transaction,
	// each fenced by its claim, and reports which were applied.
	RecordMovementAttempts(ctx context.Context, changes []AttemptChange) ([]bool, error)
	// CountMovements counts the movements of each status.
	CountMovements(ctx context.Context, statuses ...string) (map[string]int64, error)
}

// NewQueue returns a Queue over st (a migrated database's) that delivers what outbox queued, woken by outbox.Notify.
// clients returns the Client of an operator; an operator without one keeps
// its movements pending (logged at ERROR) without spending attempts.
func NewQueue(st QueueStore, outbox *Outbox, clients func(operator string) (*wallet.Client, bool), opts ...QueueOption) (*Queue, error) {
	if st == nil || outbox == nil || clients == nil {
		return nil, errors.New("movements: new queue: store, outbox and clients are required")
	}
	q := &Queue{
		st:         st,
		outbox:     outbox,
		clients:    clients,
		now:        time.Now,
		logger:     slog.Default(),
		conc:       DefaultQueueConcurrency,
		batch:      DefaultQueueBatch,
		poll:       DefaultQueuePoll,
		lease:      DefaultQueueLease,
		breakWait:  DefaultBreakerWait,
		instanceID: "q-" + rand.Text()[:16],
		metrics:    noQueueMetrics{},
		paused:     make(map[string]time.Time),
	}
	for _, opt := range opts {
		opt(q)
	}
	switch {
	case q.now == nil || q.logger == nil || q.metrics == nil:
		return nil, errors.New("movements: new queue: nil clock, logger or metrics")
	case q.conc < 1 || q.batch < 1:
		return nil, fmt.Errorf("movements: new queue: concurrency %d and batch size %d must be positive", q.conc, q.batch)
	case q.poll <= 0 || q.lease <= 0 || q.breakWait <= 0:
		return nil, errors.New("movements: new queue: poll interval, lease and breaker wait must be positive")
	}
	q.logger = q.logger.With(slog.String("component", "wallet-queue"))
	for _, f := range q.setup {
		if err := f(q); err != nil {
			return nil, fmt.Errorf("movements: new queue: %w", err)
		}
	}
	return q, nil
}

// attempt is one finished attempt, waiting to be recorded.
type attempt struct {
	rec *MovementRecord
	res wallet.Result
	err error
	at  time.Time // queue clock when the attempt ended
}

// Notify makes the queue look for due movements now instead of at its next
// poll, as the Outbox's Notify does after a commit. It never blocks.
func (q *Queue) Notify() { q.outbox.Notify() }

// Run delivers due movements until ctx ends. It claims due movements in
// batches by the (status, next_attempt_at) index, never the whole table, so it
// starts sending at once whatever the backlog. When ctx ends it stops
// claiming, lets the attempts in flight finish (each is bounded by half the
// lease), records them, and returns nil.
func (q *Queue) Run(ctx context.Context) error {
	if !q.running.CompareAndSwap(false, true) {
		return errors.New("movements: queue: Run is already running")
	}
	defer q.running.Store(false)
	q.logger.InfoContext(ctx, "wallet queue started", slog.Int("concurrency", q.conc), slog.String("instance", q.instanceID))

	// Finished attempts are recorded many per transaction; a failed
	// transaction records none of its batch (see record).
	recorder := groupcommit.New(ctx, q.record, groupcommit.Options{
		MaxBatch: maxWriteBatch, QueueLen: q.conc, OnFailure: groupcommit.FailBatch, Logger: q.logger,
	})

	slots := make(chan struct{}, q.conc) // a token per attempt in flight
	freed := make(chan struct{}, 1)
	var wg sync.WaitGroup
	sendCtx := context.WithoutCancel(ctx) // attempts in flight finish after ctx ends

	for ctx.Err() == nil {
		free := q.conc - len(slots)
		if free == 0 {
			select {
			case <-ctx.Done():
			case <-freed:
			}
			continue
		}
		// The claim is not cut by ctx: a statement cancelled client-side may
		// still commit server-side, leaving movements claimed and unsent until
		// their lease runs out. What it claimed is sent even if ctx has ended.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), claimTimeout)
		recs, err := q.claim(cctx, min(free, q.batch))
		cancel()
		if err != nil {
			if ctx.Err() == nil {
				q.logger.ErrorContext(ctx, "wallet queue: claim due movements", slog.String("error", err.Error()))
				sleep(ctx, dbRetryWait, nil)
			}
			continue
		}
		for i := range recs {
			slots <- struct{}{}
			wg.Add(1)
			go func(rec *MovementRecord) {
				defer wg.Done()
				// Nobody waits for the answer: record logs a failure, and the
				// movement is sent again once its lease ran out.
				_ = recorder.Submit(sendCtx, q.send(sendCtx, rec))
				<-slots
				select {
				case freed <- struct{}{}:
				default:
				}
			}(&recs[i])
		}
		if len(recs) == min(free, q.batch) {
			continue // more may be due: claim again as soon as slots allow
		}
		q.idle(ctx)
	}

	wg.Wait()
	recorder.Close() // records every attempt that finished
	q.logger.Info("wallet queue stopped", slog.String("instance", q.instanceID))
	return nil
}

// idle waits for a Notify, for the next due movement, or for the poll
// interval, whichever comes first.
func (q *Queue) idle(ctx context.Context) {
	wait := q.poll
	if next, ok, err := q.nextDue(ctx); err == nil && ok {
		if d := next.Sub(q.now()); d < wait {
			wait = max(d, time.Millisecond)
		}
	}
	if until, ok := q.earliestPauseEnd(); ok {
		if d := time.Until(until); d < wait {
			wait = max(d, time.Millisecond)
		}
	}
	sleep(ctx, wait, q.outbox.wake)
}

// sleep waits for d, ctx's end, or a value on wake.
func sleep(ctx context.Context, d time.Duration, wake <-chan struct{}) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	case <-wake:
	}
}

// claim takes up to n due pending movements for this Queue: it sets their
// lease (claimed_by, next_attempt_at = now + lease) in one statement and
// returns them. Operators paused (breaker open, no Client) are skipped. Two
// Queues on one database never claim one movement (QueueStore).
func (q *Queue) claim(ctx context.Context, n int) ([]MovementRecord, error) {
	now := q.now()
	recs, err := q.st.ClaimMovements(ctx, Claim{
		Worker: q.instanceID, Now: now, LeaseEnd: now.Add(q.lease), Limit: n,
		SkipOperators: q.pausedOperators(time.Now()),
	})
	if err != nil {
		return nil, fmt.Errorf("claim: %w", err)
	}
	return recs, nil
}

// nextDue returns the earliest next_attempt_at of a pending movement whose
// operator is not paused (the pause's end is waited for separately, so that
// a paused operator's due movements never make the worker spin).
func (q *Queue) nextDue(ctx context.Context) (time.Time, bool, error) {
	return q.st.NextDueMovement(ctx, q.pausedOperators(time.Now()))
}

func (q *Queue) pause(operator string, until time.Time) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if until.After(q.paused[operator]) {
		q.paused[operator] = until
	}
}

// pausedOperators returns the operators paused at now, forgetting the others.
func (q *Queue) pausedOperators(now time.Time) []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	var ops []string
	for op, until := range q.paused {
		if now.Before(until) {
			ops = append(ops, op)
		} else {
			delete(q.paused, op)
		}
	}
	return ops
}

func (q *Queue) earliestPauseEnd() (time.Time, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	var first time.Time
	for _, until := range q.paused {
		if first.IsZero() || until.Before(first) {
			first = until
		}
	}
	return first, !first.IsZero()
}

// send makes one attempt of rec. It never returns before the attempt ended,
// and the attempt never outlives half the lease.
func (q *Queue) send(ctx context.Context, rec *MovementRecord) attempt {
	a := attempt{rec: rec}
	c, ok := q.clients(rec.Operator)
	if !ok || c == nil {
		a.err = errNoClient
		a.at = q.now()
		return a
	}
	if c.BreakerOpen() {
		a.res = wallet.Result{Reason: wallet.ReasonBreakerOpen}
		a.err = wallet.ErrBreakerOpen
		a.at = q.now()
		return a
	}
	ctx, cancel := context.WithTimeout(ctx, q.lease/2)
	defer cancel()
	m := rec.Movement()
	switch m.Kind {
	case KindWin:
		a.res, a.err = c.Win(ctx, m.winCall())
	default:
		a.res, a.err = c.Rollback(ctx, m.rollbackCall())
	}
	a.at = q.now()
	return a
}

var errNoClient = errors.New("no wallet client for this operator")

// update is the row change one attempt makes.
type update struct {
	a        *attempt
	status   MovementStatus
	attempts int
	next     time.Time
	lastErr  string
	spent    bool // an attempt was sent (counts against MaxAttempts)
}

// decide turns an attempt into its row change.
func (q *Queue) decide(a *attempt) update {
	rec := a.rec
	u := update{a: a, status: StatusPending, attempts: rec.Attempts, next: a.at}
	switch {
	case errors.Is(a.err, errNoClient):
		u.next = a.at.Add(UnknownOperatorWait)
		u.lastErr = "no wallet client configured for this operator"
		q.pause(rec.Operator, time.Now().Add(UnknownOperatorWait))
		return u
	case errors.Is(a.err, wallet.ErrBreakerOpen):
		// Not sent: waits without spending an attempt. next stays now, so it
		// keeps its place; the operator is paused instead.
		u.lastErr = wallet.ReasonBreakerOpen
		q.pause(rec.Operator, time.Now().Add(q.breakWait))
		return u
	}
	u.spent = true
	u.attempts = rec.Attempts + 1
	u.lastErr = describe(a.res)
	switch a.res.Outcome {
	case wallet.Success:
		u.status = StatusDone
		u.lastErr = ""
	case wallet.Refused:
		u.status = StatusRefused
	default:
		if u.attempts >= wallet.MaxAttempts {
			u.status = StatusExhausted
		} else {
			u.next = a.at.Add(wallet.Backoff(u.attempts))
		}
	}
	return u
}

// describe is the diagnostic of an attempt: reason, error code, HTTP status.
// Never the operator's message, never a secret.
func describe(r wallet.Result) string {
	s := r.Reason
	if r.ErrorCode != "" {
		s += " " + r.ErrorCode
	}
	if r.HTTPStatus != 0 {
		s += fmt.Sprintf(" (HTTP %d)", r.HTTPStatus)
	}
	return s
}

// record writes the changes of a batch of finished attempts in one
// transaction (the group commit of Run), then reports each; it runs the hooks,
// logs and metrics of an attempt only once it is recorded. A change is fenced
// by the claim: a row whose lease this Queue lost is left alone.
func (q *Queue) record(ctx context.Context, batch []attempt) error {
	ups := make([]update, len(batch))
	for i := range batch {
		ups[i] = q.decide(&batch[i])
	}
	changes := make([]AttemptChange, len(ups))
	for i := range ups {
		changes[i] = q.change(&ups[i])
	}
	wctx, cancel := context.WithTimeout(ctx, writeTimeout)
	defer cancel()
	applied, err := q.st.RecordMovementAttempts(wctx, changes)
	if err != nil {
		// Nothing recorded: the leases run out and the movements are sent
		// again with the same transaction_id, which the operator answers
		// idempotently (ENV-12).
		q.logger.ErrorContext(ctx, "wallet queue: record attempt results", slog.Int("movements", len(ups)),
			slog.String("error", err.Error()))
		return fmt.Errorf("record %d attempt results: %w", len(ups), err)
	}
	for i := range ups {
		if !applied[i] {
			q.logger.WarnContext(ctx, "wallet queue: lease lost before the attempt was recorded; another worker owns the movement",
				slog.String("transaction_id", ups[i].a.rec.TransactionID))
			continue
		}
		q.report(ctx, &ups[i])
	}
	return nil
}

// change is the row change of u, fenced by this Queue's claim: what every
// attempt writes, the request id of an attempt sent, the end of a movement
// that reached a final status, and the operator's id and balance of a
// success.
func (q *Queue) change(u *update) AttemptChange {
	a, rec := u.a, u.a.rec
	c := AttemptChange{
		TransactionID: rec.TransactionID, Worker: q.instanceID,
		Status: u.status, Attempts: u.attempts, NextAttemptAt: u.next, LastError: u.lastErr,
	}
	if u.spent {
		c.LastRequestID = &a.res.RequestID
	}
	if u.status != StatusPending {
		c.DoneAt = a.at
	}
	if u.status == StatusDone {
		c.OperatorTxID = &a.res.OperatorTxID
		if a.res.HasBalance {
			c.BalanceAfter = &a.res.Balance
		}
	}
	return c
}

// report logs, counts and hooks one recorded attempt.
func (q *Queue) report(ctx context.Context, u *update) {
	a, rec := u.a, u.a.rec
	attrs := []slog.Attr{
		slog.String("transaction_id", rec.TransactionID),
		slog.String("kind", string(rec.Kind)),
		slog.String("operator", rec.Operator),
		slog.String("round_id", rec.RoundID),
		slog.String("bet_id", rec.BetID),
		slog.Int("attempts", u.attempts),
	}
	if u.spent {
		attrs = append(attrs, slog.String("request_id", a.res.RequestID), slog.String("reason", a.res.Reason))
		if a.res.ErrorCode != "" {
			attrs = append(attrs, slog.String("error_code", a.res.ErrorCode))
		}
		if a.res.HTTPStatus != 0 {
			attrs = append(attrs, slog.Int("http_status", a.res.HTTPStatus))
		}
		q.metrics.Attempt(rec.Kind, a.res.Outcome)
	}
	switch {
	case errors.Is(a.err, errNoClient):
		q.logger.LogAttrs(ctx, slog.LevelError, "wallet queue: no wallet client for the movement's operator; it waits without spending attempts", attrs...)
	case !u.spent:
		q.logger.LogAttrs(ctx, slog.LevelDebug, "wallet queue: breaker open; the movement waits without spending an attempt", attrs...)
	case u.status == StatusDone:
		q.logger.LogAttrs(ctx, slog.LevelDebug, "wallet queue: movement delivered", attrs...)
		q.metrics.Delivered(rec.Kind, a.at.Sub(rec.CreatedAt))
		if q.onSettled != nil {
			q.onSettled(rec.Movement(), a.res)
		}
	case u.status == StatusRefused:
		q.logger.LogAttrs(ctx, slog.LevelWarn, "wallet queue: movement refused by the operator; parked for reconciliation", attrs...)
	case u.status == StatusExhausted:
		q.logger.LogAttrs(ctx, slog.LevelError, "wallet queue: movement exhausted its attempts; parked for reconciliation", attrs...)
		q.metrics.Exhausted(rec.Kind)
	default:
		attrs = append(attrs, slog.Time("next_attempt_at", u.next.UTC()))
		q.logger.LogAttrs(ctx, slog.LevelInfo, "wallet queue: attempt failed; will retry", attrs...)
	}
}
