package engine

import "testing"

// The bets kept where they were debited: a cashout uses a record only when
// it is accepted and its session's; the last two rounds are kept.
func TestDebitedBets(t *testing.T) {
	t.Parallel()
	alice, bob := []byte("session-alice"), []byte("session-bob")
	var d debitedBets
	d.put(BetRecord{ID: "b1", RoundID: "r1", SessionHash: alice, Status: StatusPending})
	d.put(BetRecord{ID: "b2", RoundID: "r1", SessionHash: alice, Status: StatusPending})
	d.decided("r1", "b1", StatusAccepted)
	d.decided("r1", "b2", StatusRefused)
	d.decided("r1", "unknown", StatusAccepted) // a bet debited elsewhere: nothing kept
	for _, tc := range []struct {
		name    string
		session []byte
		id      string
		want    bool
	}{
		{"accepted, its session", alice, "b1", true},
		{"accepted, another session", bob, "b1", false},
		{"refused", alice, "b2", false},
		{"never kept", alice, "unknown", false},
	} {
		if rec, ok := d.accepted(tc.session, tc.id); ok != tc.want || (ok && rec.ID != tc.id) {
			t.Errorf("%s: %+v, %v; want %v", tc.name, rec, ok, tc.want)
		}
	}
	// A bet still pending (its decision not back) is not used.
	d.put(BetRecord{ID: "b3", RoundID: "r2", SessionHash: alice, Status: StatusPending})
	if _, ok := d.accepted(alice, "b3"); ok {
		t.Error("a pending bet was used")
	}
	// A third round forgets the first.
	d.put(BetRecord{ID: "b4", RoundID: "r3", SessionHash: alice, Status: StatusAccepted})
	if _, ok := d.accepted(alice, "b1"); ok {
		t.Error("a bet of the round before last is still kept")
	}
	if _, ok := d.accepted(alice, "b4"); !ok {
		t.Error("the latest round's bet is not kept")
	}
	if len(d.rounds) != debitedRounds {
		t.Errorf("%d rounds kept, want %d", len(d.rounds), debitedRounds)
	}
}
