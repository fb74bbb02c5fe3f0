package replica

import (
	"context"
	crand "crypto/rand"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/crashstudio/crashgame/internal/cluster"
	"github.com/crashstudio/crashgame/internal/sessions"
)

// balancesSubject carries the balance changes each replica's sessions decide
// to every other replica.
const balancesSubject = cluster.SubjectPrefix + "._sessions.balances"

// Balances relays the balance changes the sessions of this replica decide
// (sessions.Options.Relay is Relay: a bet's answer, a cashout's or a
// cancel's expected balance, the wallet's answer to a delivered /win or
// /rollback) to every other replica, whose sessions take them (Run hands
// them to Heard), so that a page shows the same balance whichever replica
// its stream is open on (BAL-4).
type Balances struct {
	bus    *cluster.Bus
	origin string // this process: its own changes come back and are skipped
	logger *slog.Logger
}

// NewBalances returns the relay. Call Run.
func NewBalances(bus *cluster.Bus, logger *slog.Logger) *Balances {
	if logger == nil {
		logger = slog.Default()
	}
	return &Balances{bus: bus, origin: crand.Text(), logger: logger}
}

// Relay publishes a change decided here. It never blocks the caller: a lost
// change leaves the other replicas' figures as they were until the next one.
func (b *Balances) Relay(c sessions.Change) {
	data, err := json.Marshal(balanceMsgOf(b.origin, c))
	if err == nil {
		err = b.bus.Publish(balancesSubject, data)
	}
	if err != nil {
		b.logger.Warn("relaying a balance change failed", "err", err)
	}
}

// Run hands every change another replica relayed to heard (the sessions'
// Heard) until ctx ends.
func (b *Balances) Run(ctx context.Context, heard func(sessions.Change)) error {
	stop, err := b.bus.Subscribe(balancesSubject, func(data []byte, _ bool) { b.receive(data, heard) })
	if err != nil {
		return fmt.Errorf("replica: subscribe to balance changes: %w", err)
	}
	defer stop()
	<-ctx.Done()
	return nil
}

// receive hands one relayed change to heard, unless this process relayed it.
func (b *Balances) receive(data []byte, heard func(sessions.Change)) {
	var m balanceMsg
	err := json.Unmarshal(data, &m)
	if err == nil {
		err = m.check("balance change")
	}
	if err != nil {
		b.logger.Error("a relayed balance change could not be read", "err", err)
		return
	}
	if m.Origin == b.origin {
		return
	}
	heard(sessions.Change{Session: m.Session, Demo: m.Demo, Operator: m.Operator, PlayerID: m.PlayerID,
		Currency: m.Currency, Balance: m.Balance})
}

// balanceMsgOf is c as the process origin relays it.
func balanceMsgOf(origin string, c sessions.Change) balanceMsg {
	return balanceMsg{wire: v1(), Origin: origin, Session: c.Session, Demo: c.Demo,
		Operator: c.Operator, PlayerID: c.PlayerID, Currency: c.Currency, Balance: c.Balance}
}
