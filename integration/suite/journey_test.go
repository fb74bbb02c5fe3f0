//go:build integration

package suite

import (
	"net/http"
	"testing"
	"time"
)

// TestOperatorJourney: what an operator and its players do on a normal day,
// through the real programs: the catalogue with and without currency, launch
// and its refusals, the table session, bets, cashouts, losses, a
// cancellation, a demo session, the legacy launch, and a ticket used twice.
func TestOperatorJourney(t *testing.T) {
	laneSingle.join(t)
	e := Start(t, Options{})

	t.Run("catalogue", func(t *testing.T) {
		r := e.Operator(t, "/v1/games", nil)
		if r.Status != http.StatusOK {
			t.Fatalf("/v1/games: %s", r)
		}
		var cat struct {
			Currencies []string         `json:"currencies"`
			Games      []map[string]any `json:"games"`
		}
		decode(t, r.Body, &cat)
		if len(cat.Games) != 1 || cat.Games[0]["game_id"] != gameID {
			t.Fatalf("catalogue games: %s", r.Body)
		}
		if len(cat.Currencies) != 2 || cat.Currencies[0] != "BRL" || cat.Currencies[1] != "USD" {
			t.Errorf("currencies %v, want [BRL USD] (sorted, GEN-8)", cat.Currencies)
		}
		for _, k := range []string{"min_bet", "max_bet", "max_win", "currency"} {
			if _, ok := cat.Games[0][k]; ok {
				t.Errorf("without currency the entry carries %s (LIM-8): %s", k, r.Body)
			}
		}

		r = e.Operator(t, "/v1/games", map[string]any{"currency": "BRL"})
		cat.Games = nil
		decode(t, r.Body, &cat)
		g := cat.Games[0]
		if g["currency"] != "BRL" || g["min_bet"] != 100.0 || g["max_bet"] != 100000.0 || g["max_win"] != 10000000.0 {
			t.Errorf("BRL entry: %s", r.Body)
		}
		r = e.Operator(t, "/v1/games", map[string]any{"currency": "USD"})
		cat.Games = nil
		decode(t, r.Body, &cat)
		if _, ok := cat.Games[0]["max_win"]; ok || cat.Games[0]["min_bet"] != 10.0 {
			t.Errorf("USD entry: max_win is unknown and must be omitted (LIM-11), min_bet 10: %s", r.Body)
		}
	})

	t.Run("launch refusals", func(t *testing.T) {
		for _, c := range []struct {
			name   string
			fields map[string]any
			status int
			code   string
		}{
			{"no game", map[string]any{"token": "tok-0123456789abcdef", "player_id": "p1"}, 400, "MISSING_GAME_ID"},
			{"unknown game", map[string]any{"game_id": "nope", "token": "tok-0123456789abcdef", "player_id": "p1"}, 404, "GAME_NOT_FOUND"},
			{"no token", map[string]any{"game_id": gameID, "player_id": "p1"}, 400, "MISSING_TOKEN"},
			{"short token", map[string]any{"game_id": gameID, "token": "short", "player_id": "p1"}, 400, "INVALID_TOKEN"},
			{"no player", map[string]any{"game_id": gameID, "token": "tok-0123456789abcdef"}, 400, "MISSING_PLAYER_ID"},
		} {
			r := e.OperatorInvalid(t, "/v1/launch", c.fields)
			if r.Status != c.status || r.ErrorCode() != c.code {
				t.Errorf("%s: %s, want %d %s", c.name, r, c.status, c.code)
			}
		}
		// A wrong signature: the same 401 whatever the cause (AUTH-9).
		r := e.do(t, e.gameDoc, http.MethodPost, "/v1/games", []byte(`{"operator":"acme","timestamp":1}`), map[string]string{"X-Signature": "00"}, true)
		if r.Status != http.StatusUnauthorized || r.ErrorCode() != "INVALID_SIGNATURE" {
			t.Errorf("bad signature: %s", r)
		}
	})

	t.Run("table session", func(t *testing.T) {
		alice := e.NewPlayer(t, "Alice Example", 100_000)
		sid := e.Launch(t, map[string]any{"token": alice.Token, "player_id": alice.ID, "player_name": "Alice Example", "language": "pt"})
		s := e.MustOpen(t, sid)
		if s.Balance != 100_000 || s.Currency != "BRL" || s.Language != "pt" || s.Demo || s.GameID != gameID {
			t.Errorf("session: balance %d %s %s demo=%t game %s", s.Balance, s.Currency, s.Language, s.Demo, s.GameID)
		}
		if s.Name == "Alice Example" || s.Name == "" {
			t.Errorf("player_name %q is not masked", s.Name)
		}
		// The ticket is single use (TKT-5, AMB-22 reading A).
		if again, r := e.OpenSession(t, map[string]any{"sid": sid}); again != nil || r.Status != http.StatusUnauthorized || r.ErrorCode() != "TICKET_USED" {
			t.Errorf("second use of the ticket: %s, want 401 TICKET_USED", r)
		}
		if r := s.Call(t, http.MethodGet, "/api/v1/session", nil); r.Status != http.StatusOK {
			t.Errorf("resume: %s", r)
		}
		if r := s.Call(t, http.MethodGet, "/api/v1/fairness", nil); r.Status != http.StatusOK {
			t.Errorf("fairness: %s", r)
		}

		st := s.OpenStream(t)
		st.Await(t, 0, 5*time.Second, "the hello's balance event", func(ev Event) bool { return ev.Type == "balance" })
		st.Await(t, 0, 5*time.Second, "the hello's board", func(ev Event) bool { return ev.Type == "bets" })

		// Refusals of the table itself, each sent in an open window.
		if _, r := s.PlaceBetInWindow(t, 900*time.Millisecond, 50, 0, ""); r.Status != http.StatusUnprocessableEntity || r.ErrorCode() != "BET_LIMIT" {
			t.Errorf("bet under min_bet: %s, want 422 BET_LIMIT", r)
		}
		if _, r := s.PlaceBetInWindow(t, 900*time.Millisecond, 500, 0, "no-such-grant"); r.Status != http.StatusUnprocessableEntity || r.ErrorCode() != "FREEBET_UNAVAILABLE" {
			t.Errorf("unknown freebet: %s, want 422 FREEBET_UNAVAILABLE", r)
		}

		fates := playRounds(t, s, 1000)
		t.Logf("outcomes: %d cashed out, %d lost, %d cancelled", len(fates["cashed_out"]), len(fates["lost"]), len(fates["cancelled"]))

		// The debits' balances reach the stream.
		st.Await(t, 1, 10*time.Second, "a balance event after a debit", func(ev Event) bool { return ev.Type == "balance" && ev.Balance < 100_000 })
		st.Await(t, 0, 10*time.Second, "a bet event of the player's own bet", func(ev Event) bool { return ev.Type == "bet" && ev.Bet != nil })

		// Five bets per player per round, the sixth refused, whichever of the
		// player's sessions places them: a second launch of the same player (a
		// second tab) shares the five (LIM-5, AMB-25).
		tab2 := e.MustOpen(t, e.Launch(t, map[string]any{"token": alice.Token, "player_id": alice.ID, "language": "pt"}))
		s.AwaitBetting(t, 1200*time.Millisecond)
		for i := 0; i < 5; i++ {
			from := s
			if i%2 == 1 {
				from = tab2
			}
			if _, r := from.PlaceBet(t, 100, 101, ""); r.Status != http.StatusCreated {
				t.Fatalf("bet %d of 5: %s", i+1, r)
			}
		}
		for _, from := range []*Session{s, tab2} {
			if _, r := from.PlaceBet(t, 100, 101, ""); r.Status != http.StatusConflict || r.ErrorCode() != "TOO_MANY_BETS" {
				t.Errorf("sixth bet: %s, want 409 TOO_MANY_BETS", r)
			}
		}
	})

	t.Run("demo", func(t *testing.T) {
		// Only /balance and /bet answer a player's action; earlier bets' wins
		// may still be travelling through the queue meanwhile.
		synchronous := func() int {
			n := 0
			for _, x := range e.Exchanges(t) {
				if x.Route == "/balance" || x.Route == "/bet" {
					n++
				}
			}
			return n
		}
		// The TLS front logs an exchange once it has relayed the answer, so
		// the last /bet of the subtest before may reach its log after that
		// bet was answered: count once the count has stopped moving.
		before := synchronous()
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
			time.Sleep(200 * time.Millisecond)
			n := synchronous()
			if n == before {
				break
			}
			before = n
		}
		sid := e.Launch(t, map[string]any{"demo": true, "language": "xx"})
		s := e.MustOpen(t, sid)
		if !s.Demo || s.Balance <= 0 || s.Language != "en" {
			t.Errorf("demo session: demo=%t balance %d language %s (an unknown language falls back to the default, en)", s.Demo, s.Balance, s.Language)
		}
		b := s.MustBet(t, 1000, 101, "")
		s.AwaitRoundOver(t, b.RoundID)
		s.AwaitBetSettled(t, b.BetID)
		if after := synchronous(); after != before {
			t.Errorf("a demo session made %d wallet calls, want none", after-before)
		}
	})

	t.Run("legacy launch", func(t *testing.T) {
		bob := e.NewPlayer(t, "Bob Legacy", 50_000)
		// The operator builds the URL with its own token in sid (VER-4, VER-5).
		s, r := e.OpenSession(t, map[string]any{"sid": bob.Token, "operator": operatorID, "game_id": gameID, "language": "es"})
		if s == nil {
			t.Fatalf("legacy session: %s", r)
		}
		if s.Currency != "BRL" || s.Balance != 50_000 || s.Language != "es" {
			t.Errorf("legacy session: %s %d %s (currency from /balance, VER-6)", s.Currency, s.Balance, s.Language)
		}
		b := s.MustBet(t, 2000, 101, "")
		s.AwaitRoundOver(t, b.RoundID)
		s.AwaitBetSettled(t, b.BetID)
		// A made-up token does not open a session (BAL-7).
		if s, r := e.OpenSession(t, map[string]any{"sid": "invented-token-0123456789", "operator": operatorID, "game_id": gameID}); s != nil || r.Status != http.StatusUnauthorized {
			t.Errorf("invented legacy token: %s, want 401", r)
		}
	})

	e.CheckWallet(t, nil)
	e.Reconcile(t)
}

// playRounds plays rounds with one player until every outcome was seen: in
// each betting phase a bet with auto-cashout at 1.01x, one without (lost
// unless cashed out by hand), one cashed out by hand once flying, and one
// cancelled while betting. It returns the bets by fate.
func playRounds(t *testing.T, s *Session, stake int64) (fates map[string][]Bet) {
	t.Helper()
	fates = map[string][]Bet{}
	for round := 0; round < 12; round++ {
		s.AwaitBetting(t, 900*time.Millisecond)
		auto, r := s.PlaceBet(t, stake, 101, "")
		if r.Status != http.StatusCreated {
			t.Fatalf("auto bet: %s", r)
		}
		hold, _ := s.PlaceBet(t, stake+1, 0, "")
		manual, _ := s.PlaceBet(t, stake+2, 0, "")
		cancel, r := s.PlaceBet(t, stake+3, 0, "")
		if r.Status != http.StatusCreated {
			t.Fatalf("bet to cancel: %s", r)
		}
		r = s.Call(t, http.MethodDelete, "/api/v1/bets/"+cancel.BetID, nil)
		if r.Status != http.StatusOK {
			t.Errorf("cancel in the betting phase: %s", r)
		}
		var c Bet
		decode(t, r.Body, &c)
		if c.Status != "cancelled" {
			t.Errorf("cancelled bet answered %s", r)
		}
		// Cancelling again answers 200 again.
		if r := s.Call(t, http.MethodDelete, "/api/v1/bets/"+cancel.BetID, nil); r.Status != http.StatusOK {
			t.Errorf("second cancel: %s", r)
		}
		s.AwaitPhase(t, auto.RoundID, "flying")
		r = s.Call(t, http.MethodPost, "/api/v1/bets/"+manual.BetID+"/cashout", nil)
		switch {
		case r.Status == http.StatusOK:
			var co Bet
			decode(t, r.Body, &co)
			if co.Payout != manual.Amount*co.Multiplier/100 {
				t.Errorf("cashout at %d of %d paid %d, want floor(stake*multiplier/100)", co.Multiplier, manual.Amount, co.Payout)
			}
		case r.Status == http.StatusConflict && (r.ErrorCode() == "ROUND_CRASHED" || r.ErrorCode() == "CASHOUT_NOT_ALLOWED"):
			// the round crashed first (or had already crashed): lost
		default:
			t.Errorf("manual cashout: %s", r)
		}
		// The held bet can no longer be cancelled: the round flies.
		if r := s.Call(t, http.MethodDelete, "/api/v1/bets/"+hold.BetID, nil); r.Status != http.StatusConflict {
			t.Errorf("cancel while flying: %s, want 409", r)
		}
		s.AwaitRoundOver(t, auto.RoundID)
		for _, id := range []string{auto.BetID, hold.BetID, manual.BetID, cancel.BetID} {
			b := s.AwaitBetSettled(t, id)
			fates[b.Status] = append(fates[b.Status], b)
			if b.Status == "cashed_out" && b.BetID == auto.BetID && (b.Multiplier != 101 || b.Payout != stake*101/100) {
				t.Errorf("auto-cashout at 1.01x paid %d at %d, want %d at 101", b.Payout, b.Multiplier, stake*101/100)
			}
		}
		if len(fates["cashed_out"]) >= 2 && len(fates["lost"]) >= 1 && len(fates["cancelled"]) >= 1 {
			return fates
		}
	}
	t.Fatalf("12 rounds without every outcome: %d cashed out, %d lost, %d cancelled",
		len(fates["cashed_out"]), len(fates["lost"]), len(fates["cancelled"]))
	return nil
}
