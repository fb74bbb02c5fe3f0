package replica

import (
	"encoding/json"
	"log/slog"

	"github.com/crashstudio/crashgame/internal/cluster"
	"github.com/crashstudio/crashgame/internal/engine"
)

// wireEvent is an engine.Event on the game's event subject, with the session
// it is for (none: every subscriber).
type wireEvent struct {
	Session   []byte           `json:"session,omitempty"`
	Type      string           `json:"type"`
	Round     engine.RoundView `json:"round"`
	Items     []engine.BetItem `json:"items,omitempty"`
	Count     int              `json:"count,omitempty"`
	CashedOut int              `json:"cashed_out,omitempty"`
	Bet       *engine.BetView  `json:"bet,omitempty"`
	Balance   int64            `json:"balance,omitempty"`
	Currency  string           `json:"currency,omitempty"`
}

func wireOf(session []byte, ev *engine.Event) wireEvent {
	return wireEvent{Session: session, Type: ev.Type, Round: ev.Round, Items: ev.Items, Count: ev.Count, CashedOut: ev.CashedOut,
		Bet: ev.Bet, Balance: ev.Balance, Currency: ev.Currency}
}

func (w wireEvent) event() *engine.Event {
	return &engine.Event{Type: w.Type, Round: w.Round, Items: w.Items, Count: w.Count, CashedOut: w.CashedOut,
		Bet: w.Bet, Balance: w.Balance, Currency: w.Currency}
}

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
	data, err := json.Marshal(wireOf(session, ev))
	if err == nil {
		err = p.bus.Publish(p.subject, data)
	}
	if err != nil {
		// The subscribers see the lost number as a gap; the durable truth is
		// in the database.
		p.logger.Warn("publishing an event of the table failed", "type", ev.Type, "err", err)
	}
}
