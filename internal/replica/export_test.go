package replica

import (
	"context"
	"encoding/json"

	"github.com/crashstudio/crashgame/internal/engine"
	"github.com/crashstudio/crashgame/internal/sessions"
)

// Receive is receive, for the benchmarks of package replica_test: one event
// of the leader, as its bus subscription hands it over.
func (t *Table) Receive(ctx context.Context, data []byte) { t.receive(ctx, data, false) }

// Holds is holds, for the benchmarks: whether an event addressed to (as
// Addressee names a session) is read here, or skipped unread.
func (t *Table) Holds(to string) bool { return t.holds(to) }

// Addressee is how the leader's Publisher names session's events.
func Addressee(session []byte) string { return addressee(session) }

// EventMessage is ev for session as the leader's Publisher sends it.
func EventMessage(session []byte, ev *engine.Event) []byte {
	data, err := json.Marshal(eventMsgOf(session, ev))
	if err != nil {
		panic(err)
	}
	return data
}

// Receive is receive, for the benchmarks of package replica_test: one
// change another replica relayed.
func (b *Balances) Receive(data []byte, heard func(sessions.Change)) { b.receive(data, heard) }

// BalanceMessage is c as another replica's Balances relays it.
func BalanceMessage(c sessions.Change) []byte {
	data, err := json.Marshal(balanceMsgOf("another replica", c))
	if err != nil {
		panic(err)
	}
	return data
}
