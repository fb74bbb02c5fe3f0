package engine

import "sync"

// DemoBank holds the balances of demo sessions: play money that the game keeps
// in memory and that never reaches a wallet. A restart resets them.
type DemoBank struct {
	mu       sync.Mutex
	balances map[string]int64
}

// NewDemoBank returns an empty bank.
func NewDemoBank() *DemoBank { return &DemoBank{balances: map[string]int64{}} }

// Open gives a session its starting balance, once.
func (d *DemoBank) Open(session []byte, balance int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.balances[string(session)]; !ok {
		d.balances[string(session)] = balance
	}
}

// Follow takes the balance a demo session has at the table's leader, in a
// cluster where another process keeps it (the change relayed to sessions.Heard);
// a session this bank does not hold is left out.
func (d *DemoBank) Follow(session []byte, balance int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.balances[string(session)]; ok {
		d.balances[string(session)] = balance
	}
}

// Balance returns a session's balance.
func (d *DemoBank) Balance(session []byte) (int64, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	b, ok := d.balances[string(session)]
	return b, ok
}

// Debit takes amount, or refuses with INSUFFICIENT_FUNDS and the balance.
func (d *DemoBank) Debit(session []byte, amount int64) (int64, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	b, ok := d.balances[string(session)]
	if !ok {
		return 0, &RefusedError{Code: "TOKEN_INVALID"}
	}
	if b < amount {
		return b, &RefusedError{Code: "INSUFFICIENT_FUNDS", Balance: b, HasBalance: true}
	}
	d.balances[string(session)] = b - amount
	return b - amount, nil
}

// Credit adds amount and returns the new balance.
func (d *DemoBank) Credit(session []byte, amount int64) int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.balances[string(session)] += amount
	return d.balances[string(session)]
}
