//go:build integration

package suite

import (
	"context"
	"net/http"
	"sort"
	"testing"
	"time"
)

// TestFreebets: a campaign granted at the operator reaches the game on
// /balance, becomes three free rounds camp-7#1..#3 (FB rule 1), each bet goes
// to the operator with its freebet_id and no debit, each win is credited as
// type freebet with the complete payout (WIN-7), a fourth free bet is
// refused, and re-entering (the operator resends the grant every time,
// FB-18) creates nothing new (FB-15, FB-16).
func TestFreebets(t *testing.T) {
	laneSingle.join(t)
	e := Start(t, Options{})
	p := e.NewPlayer(t, "Free Rounds", 100_000)
	e.Admin(t, "/admin/freebets/grant", map[string]any{"player_id": p.ID, "id": "camp-7", "quantity": 3, "amount": 500}, nil)

	s := e.EnterAs(t, p)
	ids := freebetIDs(s.Freebets)
	if len(ids) != 3 || ids[0] != "camp-7#1" || ids[1] != "camp-7#2" || ids[2] != "camp-7#3" {
		t.Fatalf("session freebets %v, want camp-7#1..#3", s.Freebets)
	}
	for _, f := range s.Freebets {
		if f.Amount != 500 {
			t.Errorf("freebet %s worth %d, want 500", f.ID, f.Amount)
		}
	}

	var played []Bet
	for i, id := range ids {
		b := s.MustBet(t, 500, 101, id)
		// No debit: the balance never drops below the initial one (earlier
		// free rounds' wins may already be credited).
		if deref(b.FreebetID) != id || b.Balance < 100_000 {
			t.Errorf("free bet %d: freebet_id %q balance %d, want %s and no debit", i+1, deref(b.FreebetID), b.Balance, id)
		}
		played = append(played, b)
		if i == 0 {
			// Re-entry after the first free round: the operator lists camp-7
			// again (quantity 3); only #2 and #3 are open, nothing new appears.
			again := e.EnterAs(t, Player{ID: p.ID, Token: e.IssueToken(t, p.ID)})
			if got := freebetIDs(again.Freebets); len(got) != 2 || got[0] != "camp-7#2" || got[1] != "camp-7#3" {
				t.Errorf("after one free round, re-entry shows %v, want [camp-7#2 camp-7#3]", got)
			}
		}
		s.AwaitRoundOver(t, b.RoundID)
	}
	// A fourth free bet: nothing open of that value (FREEBET_UNAVAILABLE).
	s.AwaitBetting(t, 900*time.Millisecond)
	if _, r := s.PlaceBet(t, 500, 101, "camp-7#1"); r.Status != http.StatusUnprocessableEntity || r.ErrorCode() != "FREEBET_UNAVAILABLE" {
		t.Errorf("fourth free bet: %s, want 422 FREEBET_UNAVAILABLE", r)
	}
	e.Settled(t, time.Minute)

	// The operator's side: three freebet debits that moved nothing; each win
	// typed freebet with the full payout (stake included).
	var ledger struct {
		Movements []simMovement `json:"movements"`
	}
	e.Admin(t, "/admin/ledger", map[string]any{"player_id": p.ID}, &ledger)
	debits := map[string]simMovement{}
	wins := map[string]simMovement{}
	for _, m := range ledger.Movements {
		switch m.Kind {
		case "bet":
			debits[m.TransactionID] = m
		case "win":
			wins[deref(m.BetID)] = m
		}
	}
	if len(debits) != 3 {
		t.Errorf("the operator saw %d debits, want 3 free ones", len(debits))
	}
	for i, b := range played {
		d, ok := debits[b.BetID]
		if !ok {
			t.Errorf("free bet %s never reached the operator", b.BetID)
			continue
		}
		if deref(d.FreebetID) != ids[i] || d.Delta != 0 || d.Amount != 500 {
			t.Errorf("debit %s: freebet_id %q delta %d amount %d, want %s, 0, 500", b.BetID, deref(d.FreebetID), d.Delta, d.Amount, ids[i])
		}
		settled := s.BetByID(t, b.BetID)
		w, won := wins[b.BetID]
		switch settled.Status {
		case "cashed_out":
			if !won || w.Type != "freebet" || w.Amount != settled.Payout || w.Delta != settled.Payout || deref(w.FreebetID) != ids[i] || settled.Payout != 505 {
				t.Errorf("free round %s won %d: operator win %+v, want type freebet, amount and delta 505, freebet_id %s", ids[i], settled.Payout, w, ids[i])
			}
		case "lost":
			if won {
				t.Errorf("free round %s lost but the operator credited %d", ids[i], w.Amount)
			}
		default:
			t.Errorf("free round %s ended %s", ids[i], settled.Status)
		}
	}
	if bal := e.SimBalance(t, p.ID); bal < 100_000 {
		t.Errorf("free rounds cost the player money: balance %d < 100000", bal)
	}

	// Re-entry after the campaign: no free round appears, no grant is created.
	last := e.EnterAs(t, Player{ID: p.ID, Token: e.IssueToken(t, p.ID)})
	if len(last.Freebets) != 0 {
		t.Errorf("after the campaign, re-entry shows %v", last.Freebets)
	}
	var grants int
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.DB().QueryRowContext(ctx, `SELECT count(*) FROM freebet_grants WHERE player_id = $1`, p.ID).Scan(&grants); err != nil {
		t.Fatalf("count grants: %v", err)
	}
	if grants != 3 {
		t.Errorf("the game holds %d grants for the player, want 3", grants)
	}

	e.CheckWallet(t, nil)
	e.Reconcile(t)
}

func freebetIDs(fs []Freebet) []string {
	ids := make([]string, 0, len(fs))
	for _, f := range fs {
		ids = append(ids, f.ID)
	}
	sort.Strings(ids)
	return ids
}
