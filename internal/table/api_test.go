package table_test

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/gen/table"
	"github.com/crashstudio/crashgame/internal/engine"
	"github.com/crashstudio/crashgame/internal/logtest"
	"github.com/crashstudio/crashgame/internal/round"
	"github.com/crashstudio/crashgame/internal/store"
	"github.com/crashstudio/crashgame/internal/tickets"
	"github.com/crashstudio/crashgame/internal/wallet"
)

func TestCreateSessionRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	used := e.ticket(t, tickets.Session{Demo: true, Currency: "BRL"})
	if rec := e.call(t, "POST", "/api/v1/sessions", "", map[string]any{"sid": used}); rec.Code != http.StatusCreated {
		t.Fatalf("first use: %d %s", rec.Code, rec.Body)
	}
	cases := []struct {
		name    string
		body    any
		wallet  *wallet.Result
		status  int
		code    table.ErrorCode
		message string // a fragment in the expected language
	}{
		{"not json", `{"sid":`, nil, 400, table.ErrorCodeBadRequest, ""},
		{"sid too short", map[string]any{"sid": "short"}, nil, 400, table.ErrorCodeBadRequest, ""},
		// Rule TKT-5: the ticket opens one session; the second opening is refused (AMB-22 reading A).
		// Rule LANG-1: the message follows the requested language.
		{"ticket used", map[string]any{"sid": used, "language": "es"}, nil, 401, table.ErrorCodeTicketUsed, "ya se usó"},
		{"ticket unknown", map[string]any{"sid": "tk_" + strings.Repeat("A", 43), "language": "en"}, nil, 401, table.ErrorCodeTicketInvalid, "not valid"},
		// Rule LANG-2 LANG-4: an unknown language falls back to the default (pt here).
		{"legacy unknown operator", map[string]any{"sid": "tok-0123456789abcdef", "operator": "nobody", "language": "de"}, nil, 401, table.ErrorCodeTicketInvalid, "não é válido"},
		// Rule BAL-5 BAL-7 AUTH-18: a refusal of /balance, with no operator text.
		{"wallet refuses", map[string]any{"sid": "tok-0123456789abcdef", "operator": "acme", "language": "en"},
			&wallet.Result{Outcome: wallet.Refused, ErrorCode: "TOKEN_INVALID", ErrorMessage: "operator secret text"}, 401, table.ErrorCodeSessionRefused, "did not accept"},
		// Rule BAL-11 VER-6 (legacy: only /balance's currency, here not enabled).
		{"currency not enabled", map[string]any{"sid": "tok-0123456789abcdef", "operator": "acme"},
			&wallet.Result{Outcome: wallet.Success, PlayerID: "p-1", Balance: 1, HasBalance: true, Currency: "USD"}, 409, table.ErrorCodeSessionCurrencyMismatch, ""},
		{"wallet unavailable", map[string]any{"sid": "tok-0123456789abcdef", "operator": "acme"},
			&wallet.Result{Outcome: wallet.Temporary}, 503, table.ErrorCodeWalletUnavailable, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.wallet != nil {
				e.balance.set(*tc.wallet)
			}
			rec := e.call(t, "POST", "/api/v1/sessions", "", tc.body)
			got := decode[table.Error](t, rec)
			if rec.Code != tc.status || got.ErrorCode != tc.code || !strings.Contains(got.Message, tc.message) {
				t.Fatalf("got %d %+v, want %d %s containing %q", rec.Code, got, tc.status, tc.code, tc.message)
			}
			// Every 5xx of the game says when to ask again.
			if ra := rec.Header().Get("Retry-After"); tc.status >= 500 && ra != "1" {
				t.Fatalf("a %d answered with Retry-After %q, want 1", tc.status, ra)
			}
			if strings.Contains(rec.Body.String(), "operator secret text") {
				t.Fatal("the operator's message reached the browser")
			}
		})
	}
}

func TestSessionRequired(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	for _, bearer := range []string{"", "ps_" + strings.Repeat("x", 43), "garbage"} {
		for _, path := range []string{"/api/v1/session", "/api/v1/round", "/api/v1/bets", "/api/v1/rounds", "/api/v1/fairness"} {
			rec := e.call(t, "GET", path, bearer, nil)
			if got := decode[table.Error](t, rec); rec.Code != 401 || got.ErrorCode != table.ErrorCodeSessionExpired {
				t.Fatalf("GET %s with %q: %d %+v", path, bearer, rec.Code, got)
			}
		}
	}
}

func TestDemoPlay(t *testing.T) {
	t.Parallel()
	// Nine calls land in one betting window: 6 s, so that they do on a
	// loaded machine under -race.
	e := newEnv(t, envOptions{rate: 1000, burst: 1000, betting: 6 * time.Second})
	s := e.openDemo(t)

	sess := decode[table.Session](t, e.call(t, "GET", "/api/v1/session", s, nil))
	if !sess.Demo || sess.Balance != 1_000_000 || sess.Currency != "BRL" || sess.Language != "en" || sess.Session != s {
		t.Fatalf("session = %+v", sess)
	}
	// Refusals before any money moves; the table has published its chain
	// once its first round takes bets.
	e.waitPhase(t, engine.PhaseBetting, 1500*time.Millisecond)
	if f := decode[table.Chain](t, e.call(t, "GET", "/api/v1/fairness", s, nil)); f.Formula == "" || f.RtpBp != 9900 || f.Salt == nil || f.Status != table.ChainStatusActive {
		t.Fatalf("fairness = %+v", f)
	}

	for _, tc := range []struct {
		body   any
		status int
		code   table.ErrorCode
	}{
		{map[string]any{"amount": 50}, 422, table.ErrorCodeBetLimit},
		{map[string]any{"amount": 100001}, 422, table.ErrorCodeBetLimit},
		{map[string]any{"amount": 100, "auto_cashout": 100}, 400, table.ErrorCodeBadRequest},
		{map[string]any{"amount": 100, "auto_cashout": 151}, 422, table.ErrorCodeBetLimit},
		{map[string]any{"amount": 500, "freebet_id": "camp-7#1"}, 422, table.ErrorCodeFreebetUnavailable},
		{`{"amount":"ten"}`, 400, table.ErrorCodeBadRequest},
	} {
		rec := e.call(t, "POST", "/api/v1/bets", s, tc.body)
		if got := decode[table.Error](t, rec); rec.Code != tc.status || got.ErrorCode != tc.code {
			t.Fatalf("bet %v: %d %+v", tc.body, rec.Code, got)
		}
	}

	// Place, cancel, cancel again (200 again), then five bets and a refused sixth.
	v := e.waitPhase(t, engine.PhaseBetting, 5*time.Second)
	rec := e.call(t, "POST", "/api/v1/bets", s, map[string]any{"amount": 1000})
	if rec.Code != http.StatusCreated {
		t.Fatalf("bet: %d %s", rec.Code, rec.Body)
	}
	placed := decode[table.BetPlaced](t, rec)
	if placed.Balance != 999_000 || placed.RoundId != v.RoundID || placed.Status != "accepted" || placed.FreebetId != nil {
		t.Fatalf("placed = %+v", placed)
	}
	for range 2 {
		rec = e.call(t, "DELETE", "/api/v1/bets/"+placed.BetId, s, nil)
		if c := decode[table.BetCancelled](t, rec); rec.Code != 200 || c.Balance != 1_000_000 || c.Status != "cancelled" {
			t.Fatalf("cancel: %d %s", rec.Code, rec.Body)
		}
	}
	if rec := e.call(t, "DELETE", "/api/v1/bets/nope", s, nil); rec.Code != 404 {
		t.Fatalf("cancel unknown: %d", rec.Code)
	}

	var last table.BetPlaced
	for i := range round.MaxBetsPerPlayer {
		rec = e.call(t, "POST", "/api/v1/bets", s, map[string]any{"amount": 100 + i})
		if rec.Code != http.StatusCreated {
			t.Fatalf("bet %d: %d %s", i, rec.Code, rec.Body)
		}
		last = decode[table.BetPlaced](t, rec)
	}
	rec = e.call(t, "POST", "/api/v1/bets", s, map[string]any{"amount": 100})
	if got := decode[table.Error](t, rec); rec.Code != 409 || got.ErrorCode != table.ErrorCodeTooManyBets {
		t.Fatalf("sixth bet: %d %+v", rec.Code, got)
	}
	// Not flying yet: no cashout.
	rec = e.call(t, "POST", "/api/v1/bets/"+last.BetId+"/cashout", s, nil)
	if got := decode[table.Error](t, rec); rec.Code != 409 || got.ErrorCode != table.ErrorCodeCashoutNotAllowed {
		t.Fatalf("cashout while betting: %d %+v", rec.Code, got)
	}
	// The current round's hash is secret.
	rec = e.call(t, "GET", "/api/v1/rounds/"+v.RoundID, s, nil)
	if got := decode[table.Error](t, rec); rec.Code != 409 || got.ErrorCode != table.ErrorCodeRoundInProgress {
		t.Fatalf("round in progress: %d %+v", rec.Code, got)
	}
	balanceAfterBets := decode[table.Session](t, e.call(t, "GET", "/api/v1/session", s, nil)).Balance

	// Cash out right after take-off (a round may crash at 1.00x: then it is lost).
	e.waitPhase(t, engine.PhaseFlying, 0)
	rec = e.call(t, "POST", "/api/v1/bets/"+last.BetId+"/cashout", s, nil)
	switch rec.Code {
	case http.StatusOK:
		c := decode[table.Cashout](t, rec)
		if c.Multiplier < 100 || c.Payout != round.Payout(last.Amount, c.Multiplier, 10000000) || c.Balance != balanceAfterBets+c.Payout {
			t.Fatalf("cashout = %+v (balance before %d)", c, balanceAfterBets)
		}
		if got := decode[table.Session](t, e.call(t, "GET", "/api/v1/session", s, nil)).Balance; got != c.Balance {
			t.Fatalf("session balance %d, cashout said %d", got, c.Balance)
		}
		// Sent again (its answer lost, say): the same cashout, not a second
		// one, with the session's balance now.
		rec = e.call(t, "POST", "/api/v1/bets/"+last.BetId+"/cashout", s, nil)
		if got := decode[table.Cashout](t, rec); rec.Code != http.StatusOK || got.BetId != c.BetId || got.Multiplier != c.Multiplier || got.Payout != c.Payout || got.Balance != c.Balance {
			t.Fatalf("second cashout: %d %+v; want 200 with the first's %+v", rec.Code, got, c)
		}
	case http.StatusConflict:
		if got := decode[table.Error](t, rec); got.ErrorCode != table.ErrorCodeRoundCrashed {
			t.Fatalf("cashout: %+v", got)
		}
	default:
		t.Fatalf("cashout: %d %s", rec.Code, rec.Body)
	}
	rec = e.call(t, "POST", "/api/v1/bets/nope/cashout", s, nil)
	if rec.Code != 404 {
		t.Fatalf("cashout unknown: %d", rec.Code)
	}

	// After the crash: the round is listed and verifiable.
	e.waitPhase(t, engine.PhaseCrashed, 0)
	e.waitPhase(t, engine.PhaseBetting, 0)
	rounds := decode[table.RoundList](t, e.call(t, "GET", "/api/v1/rounds?limit=5", s, nil))
	if len(rounds.Items) == 0 || rounds.Items[0].RoundId != v.RoundID {
		t.Fatalf("rounds = %+v", rounds)
	}
	d := decode[table.RoundDetail](t, e.call(t, "GET", "/api/v1/rounds/"+v.RoundID, s, nil))
	if d.Hash != rounds.Items[0].Hash || d.Status != "finished" || d.ChainId == nil || d.Position == nil {
		t.Fatalf("round = %+v", d)
	}
	if rec := e.call(t, "GET", "/api/v1/rounds/nope", s, nil); rec.Code != 404 {
		t.Fatalf("unknown round: %d", rec.Code)
	}
	if rec := e.call(t, "GET", "/api/v1/rounds?limit=0", s, nil); rec.Code != 400 {
		t.Fatalf("limit 0: %d", rec.Code)
	}
	bets := decode[table.BetList](t, e.call(t, "GET", "/api/v1/bets?limit=100", s, nil))
	if len(bets.Items) != 6 {
		t.Fatalf("bets = %d, want 6", len(bets.Items))
	}
	if r := decode[table.Round](t, e.call(t, "GET", "/api/v1/round", s, nil)); r.Phase != "betting" {
		t.Fatalf("round = %+v", r)
	}
	// Cancelling a bet of a finished round: its betting window closed.
	rec = e.call(t, "DELETE", "/api/v1/bets/"+last.BetId, s, nil)
	if got := decode[table.Error](t, rec); rec.Code != 409 || got.ErrorCode != table.ErrorCodeBettingClosed {
		t.Fatalf("cancel of an old bet: %d %+v", rec.Code, got)
	}
}

func TestRealMoneyBalances(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{rate: 1000, burst: 1000})
	s := e.openReal(t)
	sess := decode[table.Session](t, e.call(t, "GET", "/api/v1/session", s, nil))
	// Rule GAME-26 BAL-9: the name is masked, the player id never shows.
	if sess.Demo || sess.Balance != 10000 || sess.PlayerName != "Ma***a" || strings.Contains(e.call(t, "GET", "/api/v1/session", s, nil).Body.String(), "p-1") {
		t.Fatalf("session = %+v", sess)
	}

	// A refusal for lack of funds carries the wallet's balance.
	e.waitPhase(t, engine.PhaseBetting, 1500*time.Millisecond)
	e.bets.set(wallet.Result{Outcome: wallet.Refused, ErrorCode: "INSUFFICIENT_FUNDS", Balance: 50, HasBalance: true})
	rec := e.call(t, "POST", "/api/v1/bets", s, map[string]any{"amount": 1000})
	if got := decode[table.Error](t, rec); rec.Code != 422 || got.ErrorCode != table.ErrorCodeInsufficientFunds || got.Balance == nil || *got.Balance != 50 {
		t.Fatalf("insufficient funds: %d %s", rec.Code, rec.Body)
	}
	// Another final refusal: a player-facing code, never the wallet's.
	e.bets.set(wallet.Result{Outcome: wallet.Refused, ErrorCode: "PLAYER_BLOCKED"})
	rec = e.call(t, "POST", "/api/v1/bets", s, map[string]any{"amount": 1000})
	if got := decode[table.Error](t, rec); rec.Code != 422 || got.ErrorCode != table.ErrorCodeBetRefused {
		t.Fatalf("blocked: %d %s", rec.Code, rec.Body)
	}

	// Rule BAL-4: the balance follows the /bet answer, then the expected win.
	for attempt := 0; ; attempt++ {
		e.waitPhase(t, engine.PhaseBetting, 1500*time.Millisecond)
		e.bets.set(wallet.Result{Outcome: wallet.Success, Balance: 9000, HasBalance: true})
		rec = e.call(t, "POST", "/api/v1/bets", s, map[string]any{"amount": 1000})
		if rec.Code != http.StatusCreated {
			t.Fatalf("bet: %d %s", rec.Code, rec.Body)
		}
		placed := decode[table.BetPlaced](t, rec)
		if placed.Balance != 9000 {
			t.Fatalf("placed = %+v", placed)
		}
		e.waitPhase(t, engine.PhaseFlying, 0)
		rec = e.call(t, "POST", "/api/v1/bets/"+placed.BetId+"/cashout", s, nil)
		if rec.Code == http.StatusConflict && attempt < 5 {
			continue // crashed at 1.00x: try the next round
		}
		if rec.Code != http.StatusOK {
			t.Fatalf("cashout: %d %s", rec.Code, rec.Body)
		}
		c := decode[table.Cashout](t, rec)
		if c.Balance != 9000+c.Payout {
			t.Fatalf("cashout balance %d, want %d", c.Balance, 9000+c.Payout)
		}
		// The movement queue hands the operator's figure to the sessions.
		e.sessions.OnWalletBalance("acme", "p-1", "BRL", 12345)
		if got := decode[table.Session](t, e.call(t, "GET", "/api/v1/session", s, nil)).Balance; got != 12345 {
			t.Fatalf("balance after the hook = %d", got)
		}
		break
	}
}

func TestRateLimited(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{rate: 0.5, burst: 2})
	s := e.openDemo(t)
	codes := map[int]int{}
	for range 4 {
		rec := e.call(t, "GET", "/api/v1/round", s, nil)
		codes[rec.Code]++
		if rec.Code == http.StatusTooManyRequests && rec.Header().Get("Retry-After") == "" {
			t.Fatal("429 without Retry-After")
		}
	}
	if codes[http.StatusTooManyRequests] == 0 {
		t.Fatalf("no 429 in %v", codes)
	}
}

// My bets is the player's history in the game: a second launch of the same
// player lists the bets of the first session too.
func TestPlayerBetsAcrossSessions(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{rate: 1000, burst: 1000})
	first := e.openReal(t)
	e.waitPhase(t, engine.PhaseBetting, 1500*time.Millisecond)
	rec := e.call(t, "POST", "/api/v1/bets", first, map[string]any{"amount": 1000})
	if rec.Code != http.StatusCreated {
		t.Fatalf("bet: %d %s", rec.Code, rec.Body)
	}
	placed := decode[table.BetPlaced](t, rec)
	second := e.openReal(t)
	list := decode[table.BetList](t, e.call(t, "GET", "/api/v1/bets", second, nil))
	if len(list.Items) != 1 || list.Items[0].BetId != placed.BetId {
		t.Fatalf("the second session lists %+v, want the first session's bet %s", list.Items, placed.BetId)
	}
	// A demo session has no player: it lists only its own bets.
	demo := e.openDemo(t)
	if list := decode[table.BetList](t, e.call(t, "GET", "/api/v1/bets", demo, nil)); len(list.Items) != 0 {
		t.Fatalf("the demo session lists %+v", list.Items)
	}
}

// A bet sent to a server whose table has stopped (a replica being deployed)
// is answered 503 TABLE_UNAVAILABLE, a temporary refusal of the document that
// tells the page to ask again, never a 500 SERVER_ERROR. The server logs
// the answer with its cause (the player is not told it), and never the
// session's token.
func TestBetOnAStoppedTableIsTableUnavailable(t *testing.T) {
	t.Parallel()
	var logs logtest.Buffer
	e := newEnv(t, envOptions{rate: 1000, burst: 1000, logger: slog.New(slog.NewTextHandler(&logs, nil))})
	s := e.openReal(t)
	e.table.Stop() // finishes the round in play, then hands the table over
	<-e.table.Done()
	rec := e.call(t, "POST", "/api/v1/bets", s, map[string]any{"amount": 1000})
	if got := decode[table.Error](t, rec); rec.Code != http.StatusServiceUnavailable || got.ErrorCode != table.ErrorCodeTableUnavailable {
		t.Fatalf("bet on a stopped table: %d %s", rec.Code, rec.Body)
	}
	if ra := rec.Header().Get("Retry-After"); ra != "1" {
		t.Fatalf("a 503 with Retry-After %q, want 1", ra)
	}
	line := logs.String()
	if !strings.Contains(line, "action answered TABLE_UNAVAILABLE") || !strings.Contains(line, "table stopped") {
		t.Fatalf("the server's log does not say why the bet was answered TABLE_UNAVAILABLE:\n%s", line)
	}
	if strings.Contains(line, s) {
		t.Fatalf("the server's log holds the session's token:\n%s", line)
	}
}

// A void round is listed with its status and its hash, like a finished one,
// so that SHA-256 of each listed hash is the next older one's all along the
// list: a break the page's verifier finds is a failure, never a void round
// left out.
func TestRoundListShowsVoidRounds(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	s := e.openDemo(t)
	ctx := context.Background()
	hash := strings.Repeat("ab", 32)
	rec := store.RoundRecord{ID: "crash-900000", GameID: "crash", Seq: 900000, Status: engine.RoundBetting, BettingEndsAt: 1_000, CreatedAt: 1_000}
	if err := e.st.InsertRound(ctx, rec); err != nil {
		t.Fatal(err)
	}
	if err := e.st.VoidRound(ctx, rec.ID, hash, 130, 1_500, engine.VoidFailoverBetting); err != nil {
		t.Fatal(err)
	}
	rounds := decode[table.RoundList](t, e.call(t, "GET", "/api/v1/rounds?limit=5", s, nil))
	if len(rounds.Items) == 0 {
		t.Fatal("no round listed")
	}
	got := rounds.Items[0]
	// A void round never crashed: it has no crashed_at, but when and by
	// which rule it was voided.
	if got.RoundId != rec.ID || got.Status != table.RoundStatusVoid || got.Hash != hash || got.CrashPoint != 130 ||
		got.StartedAt != 1_000 || got.CrashedAt != nil || got.VoidedAt == nil || *got.VoidedAt != 1_500 ||
		got.VoidRule == nil || *got.VoidRule != table.VoidRuleFailoverBetting {
		t.Fatalf("the void round listed as %+v", got)
	}
}
