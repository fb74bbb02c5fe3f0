package replica

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/crashstudio/crashgame/internal/cluster"
	"github.com/crashstudio/crashgame/internal/wallet"
)

// balancesSubject carries the wallet's answers to delivered movements from
// the replica whose queue delivered them to every replica.
const balancesSubject = cluster.SubjectPrefix + "._wallet.balances"

// Balances relays what the movement queue of any replica learns of a
// player's balance (the answer to a delivered /win or /rollback) to every
// replica, so that each updates the sessions it keeps and their streams
// (BAL-4): the queue's WithOnSettled is Settled, and Run hands each answer to
// apply.
type Balances struct {
	bus    *cluster.Bus
	apply  func(wallet.Movement, wallet.Result)
	logger *slog.Logger
}

// NewBalances returns the relay; apply is the player API's WalletSettled.
func NewBalances(bus *cluster.Bus, apply func(wallet.Movement, wallet.Result), logger *slog.Logger) *Balances {
	if logger == nil {
		logger = slog.Default()
	}
	return &Balances{bus: bus, apply: apply, logger: logger}
}

// Settled publishes the answer to a delivered movement, when it carries a
// balance. It never blocks the queue: a lost answer leaves the sessions'
// figures as they were until the next one.
func (b *Balances) Settled(m wallet.Movement, r wallet.Result) {
	if !r.HasBalance {
		return
	}
	data, err := json.Marshal(settledMsg{wire: v1(), Operator: m.Operator, PlayerID: m.PlayerID, Currency: m.Currency, Balance: r.Balance})
	if err == nil {
		err = b.bus.Publish(balancesSubject, data)
	}
	if err != nil {
		b.logger.Warn("relaying a wallet balance failed", "transaction_id", m.TransactionID, "err", err)
	}
}

// Run hands every relayed answer to apply until ctx ends.
func (b *Balances) Run(ctx context.Context) error {
	stop, err := b.bus.Subscribe(balancesSubject, func(data []byte, _ bool) {
		var s settledMsg
		err := json.Unmarshal(data, &s)
		if err == nil {
			err = s.check("wallet balance")
		}
		if err != nil {
			b.logger.Error("a relayed wallet balance could not be read", "err", err)
			return
		}
		b.apply(wallet.Movement{Operator: s.Operator, PlayerID: s.PlayerID, Currency: s.Currency},
			wallet.Result{Outcome: wallet.Success, Balance: s.Balance, HasBalance: true})
	})
	if err != nil {
		return fmt.Errorf("replica: subscribe to wallet balances: %w", err)
	}
	defer stop()
	<-ctx.Done()
	return nil
}
