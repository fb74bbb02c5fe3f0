package replica

import (
	"fmt"
	"time"

	"github.com/crashstudio/crashgame/internal/engine"
	"github.com/crashstudio/crashgame/internal/wallet"
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

// admitMsg asks the table's leader for a bet's place in the round (the
// leader's engine.Table.Admit).
type admitMsg struct {
	wire
	Session     []byte `json:"session"`                // SHA-256 of the session id
	Amount      int64  `json:"amount"`                 // cents
	AutoCashout int64  `json:"auto_cashout,omitempty"` // hundredths; 0: none
	FreebetID   string `json:"freebet_id,omitempty"`
}

// admitMsgOf is req of the player p as it crosses; the receive time does
// not cross (the leader admits a forwarded bet at its own).
func admitMsgOf(p engine.Player, req engine.BetRequest) admitMsg {
	return admitMsg{wire: v1(), Session: p.Session, Amount: req.Amount, AutoCashout: req.AutoCashout, FreebetID: req.FreebetID}
}

func (m admitMsg) request(receivedAt time.Time) engine.BetRequest {
	return engine.BetRequest{Amount: m.Amount, AutoCashout: m.AutoCashout, FreebetID: m.FreebetID, ReceivedAt: receivedAt, Forwarded: true}
}

// admission is an engine.Admission as it crosses: the leader's answer to an
// admitMsg, and the bet a decideMsg is about.
type admission struct {
	BetID    string    `json:"bet_id"`
	RoundID  string    `json:"round_id"`
	PlacedAt time.Time `json:"placed_at"`
	Deadline time.Time `json:"deadline"` // no /bet attempt starts at or after it
	Epoch    int64     `json:"epoch"`    // the admitting term
}

func admissionOf(a engine.Admission) admission {
	return admission{BetID: a.BetID, RoundID: a.RoundID, PlacedAt: a.PlacedAt, Deadline: a.Deadline, Epoch: a.Epoch}
}

func (a admission) engine() engine.Admission {
	return engine.Admission{BetID: a.BetID, RoundID: a.RoundID, PlacedAt: a.PlacedAt, Deadline: a.Deadline, Epoch: a.Epoch}
}

// admitAnswer is the leader's answer to an admitMsg.
type admitAnswer struct {
	wire
	Admission admission `json:"admission"`
}

// The outcomes of a /bet as a decideMsg names them (wallet.Outcome).
const (
	outcomeUnknown = "unknown" // no decision came before the deadline
	outcomeSuccess = "success"
	outcomeRefused = "refused"
)

// decideMsg is the outcome of an admitted bet's money path at the replica
// that received it (engine.DebitOutcome), for the leader to decide
// (engine.Table.Decide). It carries the wallet's answer, never its token.
type decideMsg struct {
	wire
	Session      []byte    `json:"session"` // SHA-256 of the session id
	Admission    admission `json:"admission"`
	Amount       int64     `json:"amount"` // the stake the intent committed (a freebet's: its grant's value)
	FreebetID    *string   `json:"freebet_id,omitempty"`
	Outcome      string    `json:"outcome"`              // outcomeSuccess, outcomeRefused or outcomeUnknown
	ErrorCode    string    `json:"error_code,omitempty"` // the wallet's error_code of a refusal
	Balance      int64     `json:"balance,omitempty"`
	HasBalance   bool      `json:"has_balance,omitempty"`
	OperatorTxID string    `json:"operator_transaction_id,omitempty"`
	// Reason and HTTPStatus say why an outcome is unknown (the wallet
	// client's Reason, the last answer's status), for the leader's log.
	Reason     string `json:"reason,omitempty"`
	HTTPStatus int    `json:"http_status,omitempty"`
}

func decideMsgOf(session []byte, a engine.Admission, o engine.DebitOutcome) decideMsg {
	m := decideMsg{wire: v1(), Session: session, Admission: admissionOf(a), Amount: o.Amount, FreebetID: o.FreebetID,
		Outcome: outcomeUnknown, ErrorCode: o.Result.ErrorCode, Balance: o.Result.Balance, HasBalance: o.Result.HasBalance,
		OperatorTxID: o.Result.OperatorTxID, Reason: o.Result.Reason, HTTPStatus: o.Result.HTTPStatus}
	switch o.Result.Outcome {
	case wallet.Success:
		m.Outcome = outcomeSuccess
	case wallet.Refused:
		m.Outcome = outcomeRefused
	}
	return m
}

// outcome is the debit outcome m names; an outcome it does not know reads as
// unknown, which rolls the bet back.
func (m decideMsg) outcome() engine.DebitOutcome {
	res := wallet.Result{Outcome: wallet.Temporary, ErrorCode: m.ErrorCode, Balance: m.Balance, HasBalance: m.HasBalance,
		OperatorTxID: m.OperatorTxID, Route: wallet.RouteBet, Reason: m.Reason, HTTPStatus: m.HTTPStatus}
	switch m.Outcome {
	case outcomeSuccess:
		res.Outcome = wallet.Success
	case outcomeRefused:
		res.Outcome = wallet.Refused
	}
	return engine.DebitOutcome{Amount: m.Amount, FreebetID: m.FreebetID, Result: res}
}

// actionMsg is a cashout, a cancel or a release (an admitted bet whose intent
// did not commit) sent to the table's leader.
type actionMsg struct {
	wire
	Session []byte `json:"session"` // SHA-256 of the session id
	BetID   string `json:"bet_id"`
}

// forwarded is a forwarded action's message: its header and its session.
type forwarded interface {
	head() (wire, []byte)
}

func (m *admitMsg) head() (wire, []byte)  { return m.wire, m.Session }
func (m *decideMsg) head() (wire, []byte) { return m.wire, m.Session }
func (m *actionMsg) head() (wire, []byte) { return m.wire, m.Session }

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

// betAnswer is the leader's answer to a decided bet or a cancel: the bet and the
// balance shown after it.
type betAnswer struct {
	wire
	Bet     betWire `json:"bet"`
	Balance int64   `json:"balance"`
}

// cashoutAnswer is the leader's answer to a cashout.
// cashedMsg is a cashout this replica priced and committed, for the
// leader's round (engine.CashoutNote). It carries no session: the leader
// knows the bet.
type cashedMsg struct {
	wire
	RoundID    string    `json:"round_id"`
	BetID      string    `json:"bet_id"`
	Multiplier int64     `json:"multiplier"`
	Payout     int64     `json:"payout"`
	SettledAt  time.Time `json:"settled_at"`
}

func cashedMsgOf(n engine.CashoutNote) cashedMsg {
	return cashedMsg{wire: v1(), RoundID: n.RoundID, BetID: n.BetID, Multiplier: n.Multiplier, Payout: n.Payout, SettledAt: n.SettledAt}
}

func (m cashedMsg) note() engine.CashoutNote {
	return engine.CashoutNote{RoundID: m.RoundID, BetID: m.BetID, Multiplier: m.Multiplier, Payout: m.Payout, SettledAt: m.SettledAt}
}

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
	// ClockInStep: the publisher's clock was known to be within PriceBound
	// of the database's when it sent the event. Absent (false) from a
	// publisher that does not say, which no replica prices after.
	ClockInStep bool `json:"clock_in_step,omitempty"`
	// Epoch is the fencing epoch of the term the publisher led when it sent
	// the event; absent (0) from one that did not lead (a cashout committed
	// where it was received).
	Epoch int64 `json:"epoch,omitempty"`
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
