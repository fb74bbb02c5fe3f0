package cluster

import (
	"fmt"
	"log/slog"
	"strconv"
	"sync"

	"github.com/nats-io/nats.go"
)

// Headers of an event.
const (
	// hdrPublisher is the publishing Bus's identity: its replica name and a
	// random suffix drawn at Connect, so a restarted replica is a new
	// publisher.
	hdrPublisher = "Crashgame-Publisher"
	// hdrSeq is the publisher's sequence number on the subject: 1, 2, 3...
	// one per Publish, failed ones included.
	hdrSeq = "Crashgame-Seq"
	// hdrFor names whom an event is for (PublishFor): a subscriber that
	// holds nobody by that name skips it without reading it
	// (SubscribeFor).
	hdrFor = "Crashgame-For"
)

// EventHandler receives one event. gap is true when continuity with the
// events received before on the same subject is not proven: the event's
// publisher skipped numbers since its previous event (events were lost: a
// subscriber too slow, a connection lost on either side, a publication that
// failed), or this is the first event heard from that publisher on the
// subject (a new leader, a replica that restarted: what it published before
// is unknown). Several publishers may interleave on one subject (the
// leader's events, and the events of the cashouts other replicas commit):
// each one's numbering is followed on its own. The handler then
// resynchronises what it derives from the events (from PostgreSQL, the
// durable truth) before using this one. The first event a subscription
// receives on a subject never has gap set: take the initial state after
// Subscribe returns.
type EventHandler func(data []byte, gap bool)

// pubState is the sequence of one subject this Bus publishes on.
type pubState struct {
	mu  sync.Mutex
	seq uint64
}

// Publish sends data on subject (literal) to every subscriber, fire and
// forget: it returns once the message is handed to the connection, and an
// error wrapping ErrUnavailable when it could not be (not connected; nothing
// is buffered for later). Each call takes the subject's next sequence number,
// even one that fails, so that subscribers see the loss as a gap. Calls on one
// subject are sent in the order they take their numbers.
func (b *Bus) Publish(subject string, data []byte) error {
	return b.PublishFor(subject, "", data)
}

// PublishFor is Publish of an event that is for one addressee only, to (an
// opaque name without white space, e.g. a session's hash in hex; "" is
// Publish): every subscriber still receives it, and one that subscribed
// with SubscribeFor skips it, unread, unless it holds to. It takes the
// subject's sequence as any other, so a subscriber's gap detection sees the
// events it skips too.
func (b *Bus) PublishFor(subject, to string, data []byte) error {
	if err := checkSubject(subject, false); err != nil {
		return fmt.Errorf("cluster: publish: %w", err)
	}
	b.mu.Lock()
	st := b.pubs[subject]
	if st == nil {
		st = &pubState{}
		b.pubs[subject] = st
	}
	b.mu.Unlock()

	st.mu.Lock()
	defer st.mu.Unlock()
	st.seq++
	msg := nats.NewMsg(subject)
	msg.Data = data
	msg.Header.Set(hdrPublisher, b.publisher)
	msg.Header.Set(hdrSeq, strconv.FormatUint(st.seq, 10))
	if to != "" {
		msg.Header.Set(hdrFor, to)
	}
	if err := b.nc.PublishMsg(msg); err != nil {
		return fmt.Errorf("cluster: publish %s: %w: %w", subject, ErrUnavailable, err)
	}
	return nil
}

// Subscribe delivers the events published on subject (wildcards allowed) to
// h, one at a time, in the order each publisher published them, with gap
// set as EventHandler says; a message without this package's headers is
// dropped (logged). The subscription survives reconnections: events published
// meanwhile are lost, and the next one arrives with gap set. Each gap is
// counted in crashgame_cluster_events_gaps_total.
//
// stop unsubscribes; once it returns h is not running and is not called
// again. It must not be called from within h. It is safe to call more than
// once.
func (b *Bus) Subscribe(subject string, h EventHandler) (stop func(), err error) {
	return b.SubscribeFor(subject, nil, h)
}

// SubscribeFor is Subscribe of a subscriber that holds only some of the
// addressees of PublishFor: an event for an addressee that holds(to) says
// is not here is skipped before h (h never sees it, and nothing decodes
// it); an event for nobody in particular (Publish) is always handed over.
// A gap found at a skipped event is not lost: the next event handed to h
// carries it (gap means events this subscriber would have been handed may
// have been lost). holds runs on the subscription's goroutine, one event at
// a time, and must be quick; nil holds everyone (Subscribe).
func (b *Bus) SubscribeFor(subject string, holds func(to string) bool, h EventHandler) (stop func(), err error) {
	if err := checkSubject(subject, true); err != nil {
		return nil, fmt.Errorf("cluster: subscribe: %w", err)
	}
	s := &subscriber{bus: b, h: h, holds: holds, last: make(map[position]uint64), heard: make(map[string]bool)}
	sub, err := b.nc.Subscribe(subject, s.receive)
	if err != nil {
		return nil, fmt.Errorf("cluster: subscribe %s: %w", subject, err)
	}
	if b.nc.IsConnected() {
		if err := b.nc.FlushTimeout(b.timeout); err != nil {
			b.log.Warn("subscribe: the server did not confirm the subscription; it is made at the reconnection",
				slog.String("subject", subject), slog.String("error", err.Error()))
		}
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			_ = sub.Unsubscribe() // fails only when the connection is closed: no more deliveries either
			s.mu.Lock()
			s.stopped = true
			s.mu.Unlock()
		})
	}, nil
}

// position names one publisher's numbering on one subject.
type position struct {
	subject, publisher string
}

// subscriber is one Subscribe.
type subscriber struct {
	bus   *Bus
	h     EventHandler
	holds func(to string) bool // nil: everyone
	// last is the sequence of the last event delivered from each publisher
	// on each subject (one entry per process that ever published there: a
	// replica's restart adds one), and heard the subjects on which an event
	// was delivered. Both are touched only by receive, which the
	// subscription runs one message at a time.
	last  map[position]uint64
	heard map[string]bool
	// owed is a gap found at an event skipped since the last one handed
	// over (holds said no), owed to the next one. Touched only by receive.
	owed bool

	mu      sync.Mutex // held while h runs
	stopped bool
}

func (s *subscriber) receive(m *nats.Msg) {
	pub := m.Header.Get(hdrPublisher)
	seq, err := strconv.ParseUint(m.Header.Get(hdrSeq), 10, 64)
	if pub == "" || err != nil || seq == 0 {
		s.bus.log.Warn("subscribe: a message without a publisher or a sequence dropped", slog.String("subject", m.Subject))
		return
	}
	key := position{subject: m.Subject, publisher: pub}
	prev, seen := s.last[key]
	gap := ""
	switch {
	case !seen && s.heard[m.Subject]:
		gap = gapPublisher
	case !seen:
		s.heard[m.Subject] = true
	case seq <= prev:
		// Core NATS neither repeats nor reorders one connection's messages;
		// if it ever did, delivering it again could show an event twice.
		s.bus.log.Warn("subscribe: an event already delivered dropped", slog.String("subject", m.Subject),
			slog.Uint64("seq", seq), slog.Uint64("last", prev))
		return
	case seq != prev+1:
		gap = gapSequence
	}
	s.last[key] = seq
	if gap != "" {
		s.bus.m.gaps.WithLabelValues(gap).Inc()
	}
	if s.holds != nil {
		if to := m.Header.Get(hdrFor); to != "" && !s.holds(to) {
			s.owed = s.owed || gap != ""
			return
		}
	}
	gapped := gap != "" || s.owed
	s.owed = false

	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return
	}
	s.h(m.Data, gapped)
}
