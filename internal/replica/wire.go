package replica

import (
	"fmt"
	"time"

	"github.com/crashstudio/crashgame/internal/engine"
)

// The messages that cross NATS between replicas. Each is this package's own
// type with JSON tags, never an engine value encoded as it happens to be, so
// that a change of the engine cannot change the wire unseen. Each top-level
// message carries the wire version (V); a receiver takes only the versions
// it knows and refuses the others by name, so two versions of the game in
// one cluster (a rolling deploy that changes the wire) fail loudly, as a
// temporary error, instead of misreading each other. Change a message in a
// way an older replica cannot read: bump wireVersion.
//
// No message carries the operator's wallet token: a forwarded action names
// its session by the SHA-256 of its id, and the leader reads the session,
// its token included, from the database (Players).
const wireVersion = 1

// wire is the header of every message.
type wire struct {
	V int `json:"v"`
}

func (w wire) check(what string) error {
	if w.V != wireVersion {
		return fmt.Errorf("replica: %s message of wire version %d, this replica reads %d", what, w.V, wireVersion)
	}
	return nil
}

func v1() wire { return wire{V: wireVersion} }

// ---- actions (request/reply on the game's action subjects) ----

// betMsg is a bet sent to the table's leader.
type betMsg struct {
	wire
	Session     []byte `json:"session"`                // SHA-256 of the session id
	Amount      int64  `json:"amount"`                 // cents
	AutoCashout int64  `json:"auto_cashout,omitempty"` // hundredths; 0: none
	FreebetID   string `json:"freebet_id,omitempty"`
}

// actionMsg is a cashout or a cancel sent to the table's leader.
type actionMsg struct {
	wire
	Session []byte `json:"session"` // SHA-256 of the session id
	BetID   string `json:"bet_id"`
}

// forwarded is a forwarded action's message: its header and its session.
type forwarded interface {
	head() (wire, []byte)
}

func (m *betMsg) head() (wire, []byte)    { return m.wire, m.Session }
func (m *actionMsg) head() (wire, []byte) { return m.wire, m.Session }

// betMsgOf is req of the player p as it crosses; the receive time does not
// cross (the leader admits a forwarded bet at its own).
func betMsgOf(p engine.Player, req engine.BetRequest) betMsg {
	return betMsg{wire: v1(), Session: p.Session, Amount: req.Amount, AutoCashout: req.AutoCashout, FreebetID: req.FreebetID}
}

func (m betMsg) request(receivedAt time.Time) engine.BetRequest {
	return engine.BetRequest{Amount: m.Amount, AutoCashout: m.AutoCashout, FreebetID: m.FreebetID, ReceivedAt: receivedAt}
}

// betWire is a bet as an answer or an event shows it.
type betWire struct {
	BetID       string    `json:"bet_id"`
	RoundID     string    `json:"round_id"`
	Amount      int64     `json:"amount"`
	AutoCashout int64     `json:"auto_cashout,omitempty"`
	FreebetID   *string   `json:"freebet_id,omitempty"`
	Status      string    `json:"status"`
	Multiplier  int64     `json:"multiplier,omitempty"`
	Payout      int64     `json:"payout,omitempty"`
	PlacedAt    time.Time `json:"placed_at"`
}

func betWireOf(b engine.BetView) betWire {
	return betWire{BetID: b.BetID, RoundID: b.RoundID, Amount: b.Amount, AutoCashout: b.AutoCashout, FreebetID: b.FreebetID,
		Status: b.Status, Multiplier: b.Multiplier, Payout: b.Payout, PlacedAt: b.PlacedAt}
}

func (b betWire) view() engine.BetView {
	return engine.BetView{BetID: b.BetID, RoundID: b.RoundID, Amount: b.Amount, AutoCashout: b.AutoCashout, FreebetID: b.FreebetID,
		Status: b.Status, Multiplier: b.Multiplier, Payout: b.Payout, PlacedAt: b.PlacedAt}
}

// betAnswer is the leader's answer to a bet or a cancel: the bet and the
// balance shown after it.
type betAnswer struct {
	wire
	Bet     betWire `json:"bet"`
	Balance int64   `json:"balance"`
}

// cashoutAnswer is the leader's answer to a cashout.
type cashoutAnswer struct {
	wire
	BetID      string `json:"bet_id"`
	Multiplier int64  `json:"multiplier"`
	Payout     int64  `json:"payout"`
	Balance    int64  `json:"balance"`
}

// walletRefusal is an *engine.RefusedError, the wallet's refusal of a bet,
// as the message of a refusal coded walletRefused.
type walletRefusal struct {
	wire
	Code       string `json:"code"` // the wallet's error_code
	Balance    int64  `json:"balance,omitempty"`
	HasBalance bool   `json:"has_balance,omitempty"`
}

// ---- events (the game's event subject) ----

// eventMsg is an engine.Event on the game's event subject, with the session
// it is for (none: every subscriber).
type eventMsg struct {
	wire
	Session   []byte     `json:"session,omitempty"`
	Type      string     `json:"type"`
	Round     roundWire  `json:"round"`
	Items     []itemWire `json:"items,omitempty"`
	Count     int        `json:"count,omitempty"`
	CashedOut int        `json:"cashed_out,omitempty"`
	Bet       *betWire   `json:"bet,omitempty"`
}

// roundWire is an engine.RoundView as it crosses.
type roundWire struct {
	RoundID       string    `json:"round_id"`
	Seq           int64     `json:"seq"`
	Phase         string    `json:"phase"`
	BettingEndsAt time.Time `json:"betting_ends_at"`
	StartedAt     time.Time `json:"started_at"`
	CrashedAt     time.Time `json:"crashed_at"`
	CrashPoint    int64     `json:"crash_point,omitempty"`
	Hash          string    `json:"hash,omitempty"`
}

// itemWire is a row of the round's board (engine.BetItem).
type itemWire struct {
	BetID      string `json:"bet_id"`
	Name       string `json:"name"` // masked
	Currency   string `json:"currency"`
	Amount     int64  `json:"amount"`
	Multiplier int64  `json:"multiplier,omitempty"`
	Payout     int64  `json:"payout,omitempty"`
}

func eventMsgOf(session []byte, ev *engine.Event) eventMsg {
	r := ev.Round
	m := eventMsg{wire: v1(), Session: session, Type: ev.Type, Count: ev.Count, CashedOut: ev.CashedOut,
		Round: roundWire{RoundID: r.RoundID, Seq: r.Seq, Phase: r.Phase, BettingEndsAt: r.BettingEndsAt,
			StartedAt: r.StartedAt, CrashedAt: r.CrashedAt, CrashPoint: r.CrashPoint, Hash: r.Hash}}
	if ev.Items != nil {
		m.Items = make([]itemWire, len(ev.Items))
		for i, it := range ev.Items {
			m.Items[i] = itemWire{BetID: it.BetID, Name: it.Name, Currency: it.Currency, Amount: it.Amount,
				Multiplier: it.Multiplier, Payout: it.Payout}
		}
	}
	if ev.Bet != nil {
		b := betWireOf(*ev.Bet)
		m.Bet = &b
	}
	return m
}

func (m eventMsg) event() *engine.Event {
	r := m.Round
	ev := &engine.Event{Type: m.Type, Count: m.Count, CashedOut: m.CashedOut,
		Round: engine.RoundView{RoundID: r.RoundID, Seq: r.Seq, Phase: r.Phase, BettingEndsAt: r.BettingEndsAt,
			StartedAt: r.StartedAt, CrashedAt: r.CrashedAt, CrashPoint: r.CrashPoint, Hash: r.Hash}}
	if m.Items != nil {
		ev.Items = make([]engine.BetItem, len(m.Items))
		for i, it := range m.Items {
			ev.Items[i] = engine.BetItem{BetID: it.BetID, Name: it.Name, Currency: it.Currency, Amount: it.Amount,
				Multiplier: it.Multiplier, Payout: it.Payout}
		}
	}
	if m.Bet != nil {
		b := m.Bet.view()
		ev.Bet = &b
	}
	return ev
}

// ---- balance changes (balancesSubject) ----

// balanceMsg is a sessions.Change as it crosses: the session (by hash) or
// the player it is for, and the balance; never a token.
type balanceMsg struct {
	wire
	Origin   string `json:"origin"` // the relaying process
	Session  []byte `json:"session,omitempty"`
	Demo     bool   `json:"demo,omitempty"`
	Operator string `json:"operator,omitempty"`
	PlayerID string `json:"player_id,omitempty"`
	Currency string `json:"currency,omitempty"`
	Balance  int64  `json:"balance"`
}
