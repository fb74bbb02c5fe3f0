package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/internal/operatorsim"
	"github.com/crashstudio/crashgame/internal/secret"
	"github.com/crashstudio/crashgame/internal/store"
	"github.com/crashstudio/crashgame/internal/wallet"
)

// TestFloorBet: the floor does a bet's irreducible work and nothing less. A
// bet the wallet takes is debited at the operator, committed as one row and
// answered 201; a bet the wallet refuses is answered with the wallet's code
// and commits nothing; a body that is no bet is refused before the wallet.
func TestFloorBet(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	op, token := floorOperator(t)

	st, err := store.Open(ctx, "sqlite://"+filepath.Join(t.TempDir(), "floor.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	client, err := wallet.NewClient(wallet.Settings{Operator: "load", URL: op.URL, Secret: secret.Secret(floorSecret), APIKey: secret.Secret(loadAPIKey)},
		wallet.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	f := &floor{store: st, wallet: client, operator: "load", gameID: "crash", currency: "BRL"}

	bet := func(body string) (int, map[string]any) {
		w := httptest.NewRecorder()
		f.bet(w, httptest.NewRequest(http.MethodPost, "/bet", bytes.NewBufferString(body)))
		var out map[string]any
		_ = json.Unmarshal(w.Body.Bytes(), &out)
		return w.Code, out
	}
	good := `{"player_id":"player-0001","token":"` + token + `","amount":100}`

	// Taken: debited (150 - 100), one row committed under the transaction id.
	code, out := bet(good)
	if code != http.StatusCreated || out["balance"] != float64(50) {
		t.Fatalf("first bet = %d %v; want 201 with balance 50", code, out)
	}
	hash := sha256.Sum256([]byte(out["transaction_id"].(string)))
	if rec, err := st.RedeemTicket(ctx, hash[:], time.Now()); err != nil || rec.PlayerID != "player-0001" {
		t.Fatalf("the floor's row of the taken bet = %+v, %v; want it committed", rec, err)
	}

	// Refused by the wallet (50 left): its code, and nothing committed.
	if code, out := bet(good); code != http.StatusConflict || out["error_code"] != wallet.CodeInsufficientFunds {
		t.Fatalf("second bet = %d %v; want 409 INSUFFICIENT_FUNDS", code, out)
	}

	// Not a bet: refused before the wallet.
	for _, body := range []string{`{`, `{"player_id":"player-0001","token":"x","amount":0}`} {
		if code, _ := bet(body); code != http.StatusBadRequest {
			t.Fatalf("bet %s = %d; want 400", body, code)
		}
	}
}

// TestRawFloorBet: the raw floor does the same work as the floor with none
// of the game's code, and the operator takes its /bet as the game's: a bet
// the wallet takes (its signature verified) is debited, committed as one row
// and answered 201; a bet the wallet refuses is answered with the wallet's
// code and commits nothing; a body that is no bet is refused before the
// wallet; a wrong secret is refused by the operator, never taken.
func TestRawFloorBet(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	op, token := floorOperator(t)
	db, rows, err := openRawFloor(ctx, filepath.Join(t.TempDir(), "floor-raw.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	floorOf := func(secret string) *rawFloor {
		return &rawFloor{hc: op.Client(), walletURL: op.URL, operator: "load", apiKey: loadAPIKey, gameID: "crash",
			currency: "BRL", secret: []byte(secret), rows: rows}
	}
	bet := func(f *rawFloor, body string) (int, map[string]any) {
		w := httptest.NewRecorder()
		f.bet(w, httptest.NewRequest(http.MethodPost, "/bet", bytes.NewBufferString(body)))
		var out map[string]any
		_ = json.Unmarshal(w.Body.Bytes(), &out)
		return w.Code, out
	}
	committed := func() int {
		var n int
		if err := db.QueryRowContext(ctx, `SELECT count(*) FROM floor_bets`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	good := `{"player_id":"player-0001","token":"` + token + `","amount":100}`
	f := floorOf(floorSecret)

	// A wrong secret: the operator refuses the signature, nothing is debited.
	if code, out := bet(floorOf("not-the-secret-0123456789"), good); code != http.StatusConflict || out["error_code"] != "INVALID_SIGNATURE" {
		t.Fatalf("bet signed with another secret = %d %v; want 409 INVALID_SIGNATURE", code, out)
	}

	// Taken: debited (150 - 100), one row committed under the transaction id.
	code, out := bet(f, good)
	if code != http.StatusCreated || out["balance"] != float64(50) {
		t.Fatalf("first bet = %d %v; want 201 with balance 50", code, out)
	}
	var player string
	if err := db.QueryRowContext(ctx, `SELECT player_id FROM floor_bets WHERE id = ?`, out["transaction_id"]).Scan(&player); err != nil || player != "player-0001" {
		t.Fatalf("the raw floor's row of the taken bet = %q, %v; want it committed", player, err)
	}

	// Refused by the wallet (50 left): its code, and nothing committed.
	if code, out := bet(f, good); code != http.StatusConflict || out["error_code"] != wallet.CodeInsufficientFunds {
		t.Fatalf("second bet = %d %v; want 409 INSUFFICIENT_FUNDS", code, out)
	}
	// Not a bet: refused before the wallet.
	for _, body := range []string{`{`, `{"player_id":"player-0001","token":"x","amount":0}`} {
		if code, _ := bet(f, body); code != http.StatusBadRequest {
			t.Fatalf("bet %s = %d; want 400", body, code)
		}
	}
	if n := committed(); n != 1 {
		t.Fatalf("%d rows committed; want the one taken bet's", n)
	}
}

// floorSecret is the HMAC secret of the floors' operator in the tests.
const floorSecret = "floor-test-secret-0123456789"

// floorOperator starts operator-sim with one player holding 150 cents and
// issues it a token: the operator of the floors' tests.
func floorOperator(t *testing.T) (*httptest.Server, string) {
	t.Helper()
	sim, err := operatorsim.New(operatorsim.Config{Operator: "load", Secret: floorSecret, APIKeys: []string{loadAPIKey},
		Currency: "BRL", SeedPlayers: 1, SeedBalance: 150, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	op := httptest.NewServer(sim.Handler())
	t.Cleanup(op.Close)
	var tok struct {
		Token string `json:"token"`
	}
	if err := signedPost(t.Context(), op.Client(), op.URL, "/admin/tokens/issue", floorSecret, map[string]any{"player_id": "player-0001"}, &tok); err != nil {
		t.Fatal(err)
	}
	return op, tok.Token
}
