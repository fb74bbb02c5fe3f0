package reconcile_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/internal/engine"
	"github.com/crashstudio/crashgame/internal/movements"
	"github.com/crashstudio/crashgame/internal/operatorsim"
	"github.com/crashstudio/crashgame/internal/reconcile"
	"github.com/crashstudio/crashgame/internal/signature"
	"github.com/crashstudio/crashgame/internal/store"
	"github.com/crashstudio/crashgame/internal/store/storetest"
	"github.com/crashstudio/crashgame/internal/wallet"
)

func TestReadGameReadsRealMoneyRecordsWithoutTokens(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, storetest.SQLite(t))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UnixMilli()
	round := store.RoundRecord{ID: "r1", GameID: "crash", Seq: 1, Hash: "h", CrashPoint: 200, Status: engine.RoundFinished, BettingEndsAt: store.Millis(now), CreatedAt: store.Millis(now)}
	insertRound(t, st, round)
	bet := func(id, operator, playerID string, demo bool, at int64) store.BetRecord {
		return store.BetRecord{ID: id, RoundID: "r1", GameID: "crash", SessionHash: bytes.Repeat([]byte{1}, 32), Operator: operator,
			PlayerID: playerID, Token: "secret-session-token", Currency: "BRL", Demo: demo, Amount: 1000,
			Status: engine.StatusCashedOut, Payout: ref[int64](1500), OperatorTxID: "op-" + id, PlacedAt: store.Millis(at)}
	}
	bets := []store.BetRecord{
		bet("b2", "dev", "load-1-a", false, now+1),
		bet("b1", "dev", "load-1-b", false, now),
		bet("b-demo", "dev", "load-1-c", true, now),
		bet("b-other", "acme", "load-1-d", false, now),
		bet("b-else", "dev", "player-x", false, now),
	}
	bets[0].FreebetID = ref("camp#1")
	for _, b := range bets {
		insertBet(t, st, b)
	}
	mv := func(tx, betID, operator, playerID string) store.MovementRecord {
		return store.MovementRecord{TransactionID: tx, Kind: string(movements.KindWin), Operator: operator, GameID: "crash", Currency: "BRL",
			PlayerID: playerID, Token: "secret-session-token", RoundID: "r1", BetID: betID, Amount: 1500, WinType: string(wallet.WinTypeWin),
			Status: string(movements.StatusDone), Attempts: 3, OperatorTxID: "op-" + tx, LastError: "HTTP 503", CreatedAt: store.Millis(now)}
	}
	moves := []store.MovementRecord{mv("w1", "b1", "dev", "load-1-b"), mv("w-other", "b-other", "acme", "load-1-d"), mv("w-else", "b-else", "dev", "player-x")}
	if err := st.InsertMovements(ctx, moves); err != nil {
		t.Fatal(err)
	}

	g, err := reconcile.ReadGame(ctx, st.Reconcile(), reconcile.Filter{Operator: "dev", PlayerPrefix: "load-1-"})
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Bets) != 2 || g.Bets[0].ID != "b1" || g.Bets[1].ID != "b2" {
		t.Fatalf("bets: %+v, want b1 then b2 (no demo bet, no other operator, no other prefix)", g.Bets)
	}
	wantBet := reconcile.Bet{ID: "b2", RoundID: "r1", Operator: "dev", PlayerID: "load-1-a", Status: "cashed_out", Amount: 1000,
		FreebetID: g.Bets[1].FreebetID, Payout: g.Bets[1].Payout, OperatorTxID: "op-b2"}
	if g.Bets[1] != wantBet || g.Bets[1].FreebetID == nil || *g.Bets[1].FreebetID != "camp#1" || *g.Bets[1].Payout != 1500 {
		t.Errorf("bet b2 read as %+v", g.Bets[1])
	}
	want := reconcile.Movement{TransactionID: "w1", Kind: "win", Operator: "dev", PlayerID: "load-1-b", RoundID: "r1", BetID: "b1",
		Amount: 1500, WinType: "win", Status: "done", Attempts: 3, OperatorTxID: "op-w1", LastError: "HTTP 503"}
	if len(g.Movements) != 1 || g.Movements[0] != want {
		t.Errorf("movements: %+v, want %+v", g.Movements, want)
	}
	if all, err := reconcile.ReadGame(ctx, st.Reconcile(), reconcile.Filter{}); err != nil || len(all.Bets) != 4 || len(all.Movements) != 3 {
		t.Errorf("everything: %d bets, %d movements, %v; want 4 and 3", len(all.Bets), len(all.Movements), err)
	}
	if one, err := reconcile.ReadGame(ctx, st.Reconcile(), reconcile.Filter{PlayerID: "player-x"}); err != nil || len(one.Bets) != 1 || len(one.Movements) != 1 {
		t.Errorf("one player: %+v, %v", one, err)
	}
	// No token reaches the comparison's input, nor anything printed from it.
	if raw, _ := json.Marshal(g); strings.Contains(string(raw), "secret-session-token") {
		t.Errorf("a session token was read: %s", raw)
	}
}

func insertRound(t *testing.T, st *store.Store, r store.RoundRecord) {
	t.Helper()
	if err := st.InsertRound(t.Context(), r); err != nil {
		t.Fatal(err)
	}
}

func insertBet(t *testing.T, st *store.Store, b store.BetRecord) {
	t.Helper()
	if err := st.InsertBet(t.Context(), &b); err != nil {
		t.Fatal(err)
	}
}

const simSecret = "reconcile-test-secret-0123456789"

func TestReadOperatorSim(t *testing.T) {
	sim, err := operatorsim.New(operatorsim.Config{Operator: "dev", Secret: simSecret, APIKeys: []string{"test-key"},
		SeedPlayers: 2, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	srv := httptest.NewServer(sim.Handler())
	defer srv.Close()
	ctx := context.Background()

	// One debit of 250 through the wallet route, as the game sends it.
	var tok struct {
		Token string `json:"token"`
	}
	post(t, srv.URL+"/admin/tokens/issue", map[string]any{"timestamp": time.Now().UnixMilli(), "player_id": "player-0001"}, "", &tok)
	post(t, srv.URL+"/bet", map[string]any{"operator": "dev", "timestamp": time.Now().UnixMilli(), "request_id": "req-1",
		"currency": "BRL", "game_id": "crash", "player_id": "player-0001", "token": tok.Token, "amount": 250,
		"transaction_id": "bet-1", "round_id": "round-1", "freebet_id": nil}, "test-key", nil)

	l, err := reconcile.ReadOperatorSim(ctx, srv.Client(), srv.URL+"/", simSecret)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Movements) != 1 || len(l.Players) != 1 {
		t.Fatalf("ledger: %+v, want one movement of one player", l)
	}
	m := l.Movements[0]
	if m.Kind != "bet" || m.TransactionID != "bet-1" || m.Amount != 250 || m.Delta != -250 || m.RoundID != "round-1" ||
		m.OperatorTransactionID == "" || m.Settlement != nil || m.FreebetID != nil {
		t.Errorf("movement: %+v", m)
	}
	if p := l.Players[0]; p.PlayerID != "player-0001" || p.Balance != operatorsim.DefaultSeedBalance-250 || p.Moved != -250 ||
		len(p.OpenBets) != 1 || p.OpenBets[0] != "bet-1" {
		t.Errorf("player: %+v", p)
	}

	// A wrong secret: the error says 401, never the secret it used.
	_, err = reconcile.ReadOperatorSim(ctx, srv.Client(), srv.URL, "not-the-secret-4242")
	if err == nil || !strings.Contains(err.Error(), "401 INVALID_SIGNATURE") || strings.Contains(err.Error(), "4242") {
		t.Errorf("wrong secret: %v", err)
	}
	if _, err := reconcile.ReadOperatorSim(ctx, srv.Client(), srv.URL, ""); err == nil {
		t.Error("an empty secret was used")
	}
	// Not operator-sim: no admin route there.
	other := httptest.NewServer(http.NotFoundHandler())
	defer other.Close()
	if _, err := reconcile.ReadOperatorSim(ctx, other.Client(), other.URL, simSecret); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("not operator-sim: %v", err)
	}
}

// post sends a signed POST (with a Bearer key when key is set) and decodes
// an answer that must be 200.
func post(t *testing.T, url string, body map[string]any, key string, out any) {
	t.Helper()
	raw, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Signature", signature.Sign([]byte(simSecret), raw))
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	ans, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: %d %s", url, resp.StatusCode, ans)
	}
	if out != nil {
		if err := json.Unmarshal(ans, out); err != nil {
			t.Fatal(err)
		}
	}
}

// ref returns a pointer to v.
func ref[T any](v T) *T { return &v }
