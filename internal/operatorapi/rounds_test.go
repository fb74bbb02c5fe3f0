package operatorapi_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/internal/chains"
	"github.com/crashstudio/crashgame/internal/engine"
	"github.com/crashstudio/crashgame/internal/store"
)

// round stores a round of game, ended (finished, with its outcome revealed)
// or still betting, on a chain whose salt is fixed.
func (e *env) round(t *testing.T, game, id string, seq int64, finished bool) {
	t.Helper()
	ctx := t.Context()
	chain := game + "-c1"
	if _, err := e.store.ChainByID(ctx, chain); err != nil {
		salt, source, at := strings.Repeat("5a", 32), chains.SaltFromGameDraw, store.MillisOf(e.now.Add(-2*time.Hour))
		if err := e.store.InsertChain(ctx, store.ChainRecord{ID: chain, GameID: game, Number: 1, FirstSeq: 1, Length: 1000,
			Terminal: strings.Repeat("7e", 32), RTPBasisPts: 9700, MaxMultiplier: 100000, FormulaVersion: 1, SealedSeed: []byte("x"),
			CreatedAt: at, SeedingEndsAt: at, Salt: &salt, SaltSource: &source, SaltFixedAt: &at}); err != nil {
			t.Fatal(err)
		}
	}
	open := store.MillisOf(e.now.Add(-time.Hour))
	r := store.RoundRecord{ID: id, GameID: game, Seq: seq, ChainID: chain, Position: seq, Status: engine.RoundBetting,
		BettingEndsAt: open + 5000, CreatedAt: open}
	if err := e.store.InsertRound(ctx, r); err != nil {
		t.Fatal(err)
	}
	if finished {
		if err := e.store.TakeOffRound(ctx, id, open+5000); err != nil {
			t.Fatal(err)
		}
		if err := e.store.FinishRound(ctx, id, open+9000, strings.Repeat("ab", 32), 311); err != nil {
			t.Fatal(err)
		}
	}
}

// bet stores a bet of operator op's player in round id, cashed out with
// its win delivered (or, parked, exhausted after 20 attempts).
func (e *env) bet(t *testing.T, op, player, round, id string, placed time.Time, parked bool) {
	t.Helper()
	payout := int64(2350)
	b := store.BetRecord{ID: id, RoundID: round, GameID: "crash", SessionHash: []byte("s-" + player), Operator: op, PlayerID: player,
		Token: "secret-token", Currency: "BRL", Amount: 1000, Status: "cashed_out", Multiplier: 235, Payout: &payout,
		OperatorTxID: "op-" + id, PlacedAt: store.MillisOf(placed), SettledAt: store.MillisOf(placed.Add(7 * time.Second))}
	if err := e.store.InsertBet(t.Context(), &b); err != nil {
		t.Fatal(err)
	}
	status := store.MovementDone
	if parked {
		status = store.MovementExhausted
	}
	m := store.MovementRecord{TransactionID: id + "-w", Kind: "win", Operator: op, GameID: "crash", Currency: "BRL", PlayerID: player,
		Token: "secret-token", RoundID: round, BetID: id, Amount: payout, WinType: "win", Status: status, Attempts: 1,
		NextAttemptAt: b.SettledAt, CreatedAt: b.SettledAt}
	if parked {
		m.Attempts, m.LastError = 20, "503: the wallet answered 503 Service Unavailable"
	} else {
		m.OperatorTxID, m.DoneAt = "op-"+id+"-w", b.SettledAt+80
	}
	if err := e.store.InsertMovement(t.Context(), &m); err != nil {
		t.Fatal(err)
	}
}

// Round details: a support agent finds what happened to a player's bet in a
// round: the round's times and, once it ended, its crash point, hash, chain
// and salt; the bet; its debit and its win with the wallet's ids, attempts
// and last error. Never another operator's bets or players, never a round
// of a game the operator does not have, never a live round's outcome.
// Both backends.
func TestRoundDetails(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e *env) {
		e.round(t, "crash", "crash-1", 1, true)
		e.round(t, "crash", "crash-2", 2, false)
		e.round(t, "crash-other", "crash-other-1", 1, true)
		placed := e.now.Add(-time.Hour).Add(time.Second)
		e.bet(t, "acme", "p1", "crash-1", "b-1", placed, false)
		e.bet(t, "acme", "p2", "crash-1", "b-2", placed, true)
		e.bet(t, "strict", "s1", "crash-1", "b-3", placed, false)
		documented := documentedRefusals(t)
		details := func(fields string) reply {
			return e.post(t, "/v1/rounds/details", e.body(fields), acmeSecret)
		}

		r := details(`,"round_id":"crash-1","player_id":"p1"`)
		round, _ := r.Body["round"].(map[string]any)
		bets, _ := r.Body["bets"].([]any)
		if r.Status != 200 || round["crash_point"] != 311.0 || round["hash"] != strings.Repeat("ab", 32) || round["chain_id"] != "crash-c1" ||
			round["salt"] != strings.Repeat("5a", 32) || len(round["phases"].([]any)) != 3 || len(bets) != 1 {
			t.Fatalf("details: %d %s", r.Status, r.Raw)
		}
		bet := bets[0].(map[string]any)
		mvs := bet["movements"].([]any)
		if bet["bet_id"] != "b-1" || bet["multiplier"] != 235.0 || bet["payout"] != 2350.0 || len(mvs) != 2 ||
			mvs[0].(map[string]any)["kind"] != "bet" || mvs[0].(map[string]any)["operator_transaction_id"] != "op-b-1" ||
			mvs[1].(map[string]any)["kind"] != "win" || mvs[1].(map[string]any)["status"] != "delivered" ||
			mvs[1].(map[string]any)["operator_transaction_id"] != "op-b-1-w" {
			t.Fatalf("the bet: %s", r.Raw)
		}
		if strings.Contains(string(r.Raw), "secret-token") {
			t.Fatal("the answer shows a session token")
		}
		all := details(`,"round_id":"crash-1"`)
		var got []string
		for _, b := range all.Body["bets"].([]any) {
			got = append(got, b.(map[string]any)["bet_id"].(string))
		}
		if slices.Sort(got); !slices.Equal(got, []string{"b-1", "b-2"}) {
			t.Fatalf("the operator's bets: %v (never strict's b-3)", got)
		}
		parked := all.Body["bets"].([]any)[1].(map[string]any)["movements"].([]any)[1].(map[string]any)
		if parked["status"] != "exhausted" || parked["attempts"] != 20.0 || !strings.Contains(parked["last_error"].(string), "503") {
			t.Fatalf("the parked win: %v", parked)
		}

		live := details(`,"round_id":"crash-2"`)
		lr := live.Body["round"].(map[string]any)
		if live.Status != 200 || lr["status"] != "betting" || lr["hash"] != nil || lr["crash_point"] != nil || lr["salt"] != nil {
			t.Fatalf("a betting round shows its outcome: %s", live.Raw)
		}

		for _, tc := range []struct {
			name, fields, code string
		}{
			{"an unknown round", `,"round_id":"crash-9"`, "ROUND_NOT_FOUND"},
			{"a round of a game the operator does not have", `,"round_id":"crash-other-1"`, "ROUND_NOT_FOUND"},
			{"another operator's player", `,"round_id":"crash-1","player_id":"s1"`, "ROUND_NOT_FOUND"},
		} {
			r := details(tc.fields)
			wantError(t, r, 404, tc.code)
			if !documented["/v1/rounds/details 404"][tc.code+" "+masked(r.Body["error_message"])] {
				t.Errorf("%s answers %s, which no example shows", tc.name, r.Raw)
			}
		}
	})
}

// Bet history pages a player's bets by the time the game received them,
// neither skipping nor repeating one while bets keep coming, with each
// bet's movements; never another operator's bets of a player of the same
// id. Both backends.
func TestBetHistoryPages(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e *env) {
		e.round(t, "crash", "crash-1", 1, true)
		start := e.now.Add(-time.Hour)
		var want []string
		for i := range 5 {
			id := fmt.Sprintf("b-%d", 9-i)
			e.bet(t, "acme", "p1", "crash-1", id, start.Add(time.Duration(i/2)*time.Second), false)
			e.bet(t, "strict", "p1", "crash-1", "s"+id, start.Add(time.Duration(i/2)*time.Second), false)
		}
		want = []string{"b-8", "b-9", "b-6", "b-7", "b-5"}
		rng := fmt.Sprintf(`,"player_id":"p1","from":%d,"to":%d`, start.UnixMilli(), e.now.Add(time.Hour).UnixMilli())
		page := func(extra string) (out []string, next string) {
			r := e.post(t, "/v1/bets/history", e.body(rng+extra), acmeSecret)
			if r.Status != 200 {
				t.Fatalf("history: %d %s", r.Status, r.Raw)
			}
			for _, b := range r.Body["items"].([]any) {
				out = append(out, b.(map[string]any)["bet_id"].(string))
				if n := len(b.(map[string]any)["movements"].([]any)); n != 2 {
					t.Fatalf("bet with %d movements: %s", n, r.Raw)
				}
			}
			next, _ = r.Body["next_cursor"].(string)
			return out, next
		}
		got, next := page(`,"limit":2`)
		e.bet(t, "acme", "p1", "crash-1", "b-late", e.now.Add(-3*time.Second), false) // committed late
		want = append(want, "b-late")
		e.now = e.now.Add(11 * time.Second)
		for next != "" {
			var p []string
			p, next = page(`,"limit":2,"cursor":"` + next + `"`)
			got = append(got, p...)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("pages %v, want %v", got, want)
		}
		r := e.post(t, "/v1/bets/history", e.body(fmt.Sprintf(`,"player_id":"p1","from":%d,"to":%d`, start.UnixMilli(), start.Add(40*24*time.Hour).UnixMilli())), acmeSecret)
		wantError(t, r, 400, "INVALID_QUERY")
		if !documentedRefusals(t)["/v1/bets/history 400"]["INVALID_QUERY "+masked(r.Body["error_message"])] {
			t.Errorf("over 31 days answers %s, which no example shows", r.Raw)
		}
	})
}
