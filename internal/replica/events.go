package replica

import (
	"encoding/json"
	"log/slog"

	"github.com/crashstudio/crashgame/internal/cluster"
	"github.com/crashstudio/crashgame/internal/engine"
)

// Publisher is the engine.Events of a game's table in a cluster: while the
// table leads, it publishes every event on the game's event subject, and
// every replica's Table (this one's too) delivers it to its subscribers.
type Publisher struct {
	bus     *cluster.Bus
	subject string
	logger  *slog.Logger
}

var _ engine.Events = (*Publisher)(nil)

// NewPublisher returns the Events to build gameID's engine.Table with.
func NewPublisher(bus *cluster.Bus, gameID string, logger *slog.Logger) *Publisher {
	if logger == nil {
		logger = slog.Default()
	}
	return &Publisher{bus: bus, subject: cluster.EventSubject(gameID), logger: logger.With("game_id", gameID)}
}

// Broadcast publishes an event for every subscriber.
func (p *Publisher) Broadcast(ev *engine.Event) { p.publish(nil, ev) }

// Send publishes an event for the subscribers of one session.
func (p *Publisher) Send(session []byte, ev *engine.Event) { p.publish(session, ev) }

func (p *Publisher) publish(session []byte, ev *engine.Event) {
	data, err := json.Marshal(eventMsgOf(session, ev))
	if err == nil {
		err = p.bus.Publish(p.subject, data)
	}
	if err != nil {
		// The subscribers see the lost number as a gap; the durable truth is
		// in the database.
		p.logger.Warn("publishing an event of the table failed", "type", ev.Type, "err", err)
	}
}
