package replica

import (
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"sync/atomic"

	"github.com/crashstudio/crashgame/internal/cluster"
	"github.com/crashstudio/crashgame/internal/engine"
)

// Publisher is the engine.Events of a game's table in a cluster: while the
// table leads, it publishes every event on the game's event subject, and
// every replica's Table (this one's too) delivers it to its subscribers.
// Each event says whether the publisher's clock was known to be within
// PriceBound of the database's when it was sent: the replicas that price
// cashouts on the leader's timeline do so only while the leader's clock,
// which keeps the crash, is in step too.
type Publisher struct {
	bus        *cluster.Bus
	subject    string
	logger     *slog.Logger
	priceClock func() error
	epoch      atomic.Pointer[func() int64] // the term led now (Follow); nil: none
}

var _ engine.Events = (*Publisher)(nil)

// NewPublisher returns the Events to build gameID's engine.Table with.
// priceClock says why this replica's clock is not known to be within
// PriceBound of the database's (Health.PriceClock), or nil; a nil
// priceClock is always within (one clock, tests).
func NewPublisher(bus *cluster.Bus, gameID string, logger *slog.Logger, priceClock func() error) *Publisher {
	if logger == nil {
		logger = slog.Default()
	}
	if priceClock == nil {
		priceClock = func() error { return nil }
	}
	return &Publisher{bus: bus, subject: cluster.EventSubject(gameID), logger: logger.With("game_id", gameID), priceClock: priceClock}
}

// Follow makes every event carry the epoch of the term that lead leads when
// it is sent (0 while it leads none), so that the replicas drop a former
// leader's events once the new leader's came: call it with the table's
// leadership once the table is built.
func (p *Publisher) Follow(lead interface{ Epoch() int64 }) {
	f := lead.Epoch
	p.epoch.Store(&f)
}

// Broadcast publishes an event for every subscriber.
func (p *Publisher) Broadcast(ev *engine.Event) { p.publish(nil, ev) }

// Send publishes an event for the subscribers of one session.
func (p *Publisher) Send(session []byte, ev *engine.Event) { p.publish(session, ev) }

func (p *Publisher) publish(session []byte, ev *engine.Event) {
	m := eventMsgOf(session, ev)
	m.ClockInStep = p.priceClock() == nil
	if f := p.epoch.Load(); f != nil {
		m.Epoch = (*f)()
	}
	data, err := json.Marshal(m)
	if err == nil {
		// A session's event is named for it: the replicas that hold no
		// stream of that session skip it unread (Table.holds).
		err = p.bus.PublishFor(p.subject, addressee(session), data)
	}
	if err != nil {
		// The subscribers see the lost number as a gap; the durable truth is
		// in the database.
		p.logger.Warn("publishing an event of the table failed", "type", ev.Type, "err", err)
	}
}

// addressee names session's events on the bus (cluster.Bus.PublishFor):
// its hash in hex; "" (everyone) for none.
func addressee(session []byte) string { return hex.EncodeToString(session) }

// holds reports whether an event published for the session named to
// (addressee) has a subscriber on this replica's table. A name that does
// not read as a hash is handed over all the same, and receive judges the
// event.
func (t *Table) holds(to string) bool {
	var buf [64]byte
	if len(to)%2 != 0 || len(to) > 2*len(buf) {
		return true
	}
	for i := 0; i < len(to); i += 2 {
		hi, ok1 := unhex(to[i])
		lo, ok2 := unhex(to[i+1])
		if !ok1 || !ok2 {
			return true
		}
		buf[i/2] = hi<<4 | lo
	}
	return t.local.Holds(buf[:len(to)/2])
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}
