package table_test

import (
	"encoding/csv"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	documents "github.com/crashstudio/crashgame/api"
	"github.com/crashstudio/crashgame/gen/table"
	"github.com/crashstudio/crashgame/internal/backoffice"
	"github.com/crashstudio/crashgame/internal/engine"
	"github.com/crashstudio/crashgame/internal/store"
)

// A played round's support page: its data, behind the operator's link and
// without a session, is what the back office answers (the round, the
// operator's bets and their wallet calls); an unknown token is UNKNOWN_LINK;
// the page's HTML is served at the link. The CSV export behind its link
// holds every transaction of the range, in the documented columns, across
// pages. The player's own replay of that round shows their bets only,
// without wallet calls, and refuses a round still in play.
func TestSupportLinksAndReplay(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{rate: 1000, burst: 1000, betting: 600 * time.Millisecond})
	s := e.openDemo(t)
	v := e.waitPhase(t, engine.PhaseBetting, 300*time.Millisecond)
	if r := e.call(t, "POST", "/api/v1/bets", s, map[string]any{"amount": 500, "auto_cashout": 101}); r.Code != 201 {
		t.Fatalf("bet: %d %s", r.Code, r.Body)
	}
	if r := e.call(t, "GET", "/api/v1/rounds/"+v.RoundID+"/replay", s, nil); r.Code != 409 {
		t.Fatalf("a replay of the round in play: %d %s", r.Code, r.Body)
	}
	e.waitPhase(t, engine.PhaseCrashed, 0)
	e.waitPhase(t, engine.PhaseBetting, 0)
	replay := decode[table.RoundReplay](t, e.call(t, "GET", "/api/v1/rounds/"+v.RoundID+"/replay", s, nil))
	if replay.Round.RoundId != v.RoundID || replay.Round.CrashPoint == nil || replay.Round.Hash == nil || len(replay.Bets) != 1 ||
		replay.Bets[0].Amount != 500 || len(replay.Bets[0].Movements) != 0 {
		t.Fatalf("the player's replay: %+v", replay)
	}
	if r := e.call(t, "GET", "/api/v1/rounds/nope/replay", s, nil); r.Code != 404 {
		t.Fatalf("an unknown round's replay: %d", r.Code)
	}

	// The operator's support: a real-money bet of acme's player p1 with its
	// win, in a round of the table, and a link to the round's page.
	ctx := t.Context()
	payout := int64(1200)
	now := time.Now()
	bet := store.BetRecord{ID: "b-support", RoundID: v.RoundID, GameID: "crash", SessionHash: []byte("s"), Operator: "acme", PlayerID: "p1",
		Token: "secret-token", Currency: "BRL", Amount: 1000, Status: "cashed_out", Multiplier: 120, Payout: &payout,
		OperatorTxID: "acme-1", PlacedAt: store.MillisOf(now.Add(-time.Minute)), SettledAt: store.MillisOf(now.Add(-time.Minute))}
	if err := e.st.InsertBet(ctx, &bet); err != nil {
		t.Fatal(err)
	}
	for i := range 1203 { // more than one page of the export
		m := store.MovementRecord{TransactionID: fmt.Sprintf("tx-%04d", i), Kind: "win", Operator: "acme", GameID: "crash", Currency: "BRL",
			PlayerID: "p1", Token: "secret-token", RoundID: v.RoundID, BetID: fmt.Sprintf("b-%04d", i), Amount: 1200, WinType: "win",
			Status: store.MovementDone, Attempts: 1, OperatorTxID: fmt.Sprintf("acme-w-%d", i),
			NextAttemptAt: store.MillisOf(now.Add(-time.Minute)), CreatedAt: store.Millis(now.Add(-time.Minute).UnixMilli() + int64(i)),
			DoneAt: store.MillisOf(now)}
		if i == 0 {
			m.BetID = "b-support"
		}
		if err := e.st.InsertMovement(ctx, &m); err != nil {
			t.Fatal(err)
		}
	}
	token, expires, err := e.bo.RoundLink(ctx, "acme", v.RoundID, "p1", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	data := decode[table.SupportRound](t, e.call(t, "GET", "/support/rounds/"+token+"/data", "", nil))
	if data.ExpiresAt != expires.UnixMilli() || data.Round.RoundId != v.RoundID || len(data.Bets) != 1 || data.Bets[0].BetId != "b-support" ||
		len(data.Bets[0].Movements) != 2 || data.Bets[0].Movements[1].TransactionId != "tx-0000" || data.Bets[0].Movements[1].Status != "delivered" {
		t.Fatalf("the support page's data: %+v", data)
	}
	if strings.Contains(e.call(t, "GET", "/support/rounds/"+token+"/data", "", nil).Body.String(), "secret-token") {
		t.Fatal("the support page shows a session token")
	}
	if r := e.call(t, "GET", "/support/rounds/"+strings.Repeat("x", 43)+"/data", "", nil); r.Code != 404 || decode[table.Error](t, r).ErrorCode != table.ErrorCodeUnknownLink {
		t.Fatalf("an unknown link: %d %s", r.Code, r.Body)
	}
	page := httptest.NewRecorder() // HTML, which the document's validator does not read
	e.handler.ServeHTTP(page, httptest.NewRequest("GET", "/support/rounds/"+token, nil))
	if page.Code != 200 || !strings.HasPrefix(page.Header().Get("Content-Type"), "text/html") || page.Header().Get("Referrer-Policy") != "no-referrer" ||
		!strings.Contains(page.Body.String(), "/static/support.js") {
		t.Fatalf("the page: %d %v", page.Code, page.Header())
	}

	exportToken, _, err := e.bo.TransactionsLink(ctx, backoffice.TransactionQuery{Operator: "acme", From: now.Add(-time.Hour), To: now.Add(time.Hour)}, now.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	r := e.call(t, "GET", "/exports/transactions/"+exportToken, "", nil)
	if r.Code != 200 || !strings.HasPrefix(r.Header().Get("Content-Type"), "text/csv") {
		t.Fatalf("export: %d %v", r.Code, r.Header())
	}
	rows, err := csv.NewReader(r.Body).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	header := "transaction_id,operator_transaction_id,kind,win_type,status,amount_cents,currency,player_id,game_id,round_id,bet_id,freebet_id,reason,attempts,last_error,created_at,delivered_at,redeliveries"
	if strings.Join(rows[0], ",") != header || len(rows) != 1+1203 {
		t.Fatalf("export: %d rows, header %v", len(rows), rows[0])
	}
	for i, row := range rows[1:] {
		if row[0] != fmt.Sprintf("tx-%04d", i) || row[4] != "delivered" || row[5] != "1200" || row[1] != fmt.Sprintf("acme-w-%d", i) {
			t.Fatalf("row %d: %v", i, row)
		}
	}
	if r := e.call(t, "GET", "/exports/transactions/"+token, "", nil); r.Code != 404 {
		t.Fatalf("a round's link used as an export: %d", r.Code)
	}
}

// sharedShapes are the schemas of table.v1.yaml generated as gen/game's
// types (api/table.overlay.codegen.yaml), each with the game.v1.yaml schema
// whose type it takes.
var sharedShapes = map[string]string{
	"ReplayRound":      "BackOfficeRound",
	"ReplayPhase":      "RoundPhase",
	"ReplayBet":        "BackOfficeBet",
	"ReplayMovement":   "BetMovement",
	"ReplayRedelivery": "Redelivery",
}

// The replay and the support page answer with gen/game's types: that is
// right only while both documents give each shared shape the same fields,
// with the same types, formats, open sets and required ones (descriptions,
// examples and bounds may differ). A field added to one document alone
// fails here: add it to the other too, or take the shape out of the overlay
// and give it its own mapping.
func TestSharedShapesAreTheSameInBothDocuments(t *testing.T) {
	t.Parallel()
	load := func(name string) openapi3.Schemas {
		raw, err := documents.Documents.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := openapi3.NewLoader().LoadFromData(raw)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return doc.Components.Schemas
	}
	player, operator := load("table.v1.yaml"), load("game.v1.yaml")

	for mine, theirs := range sharedShapes {
		p, o := player[mine], operator[theirs]
		if p == nil || o == nil {
			t.Errorf("%s (table.v1.yaml) or %s (game.v1.yaml) is not a schema", mine, theirs)
			continue
		}
		if want, got := describe(t, o.Value, nil), describe(t, p.Value, sharedShapes); !slices.Equal(got, want) {
			t.Errorf("table.v1.yaml's %s is generated as game.%s, but the shapes differ:\n table.v1.yaml: %v\n game.v1.yaml:  %v", mine, theirs, got, want)
		}
	}
}

// describe lists what makes a schema's Go type: its required fields, and
// each property's type, format, open set of values and, for an array of a
// component, that component (renamed by shared, from table.v1.yaml's names
// to game.v1.yaml's).
func describe(t *testing.T, s *openapi3.Schema, shared map[string]string) []string {
	t.Helper()
	required := slices.Sorted(slices.Values(s.Required))
	out := []string{"required " + strings.Join(required, ",")}
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range s.Properties {
			if !yield(k) {
				return
			}
		}
	}) {
		p := s.Properties[name].Value
		line := fmt.Sprintf("%s: %v %s %v", name, p.Type.Slice(), p.Format, p.Extensions["x-extensible-enum"])
		if p.Items != nil {
			ref := p.Items.Ref[strings.LastIndex(p.Items.Ref, "/")+1:]
			if r, ok := shared[ref]; ok {
				ref = r
			}
			line += " of " + ref
		}
		out = append(out, line)
	}
	return out
}
