package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/internal/engine"
	"github.com/crashstudio/crashgame/internal/movements"
	"github.com/crashstudio/crashgame/internal/operatorsim"
	"github.com/crashstudio/crashgame/internal/reconcile"
	"github.com/crashstudio/crashgame/internal/signature"
	"github.com/crashstudio/crashgame/internal/store"
	"github.com/crashstudio/crashgame/internal/wallet"
)

const (
	recSecret = "reconcile-cmd-secret-0123456789"
	recKey    = "reconcile_cmd_key"
	recPlayer = "player-0001"
)

// recSim is an operator-sim on httptest, driven the way the game drives it.
type recSim struct {
	t     *testing.T
	url   string
	token string
}

func (s *recSim) post(path string, body map[string]any, bearer bool) map[string]any {
	s.t.Helper()
	raw, err := json.Marshal(body)
	if err != nil {
		s.t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, s.url+path, bytes.NewReader(raw))
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Signature", signature.Sign([]byte(recSecret), raw))
	if bearer {
		req.Header.Set("Authorization", "Bearer "+recKey)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	ans, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(ans, &out); err != nil || resp.StatusCode != http.StatusOK || out["status"] != "ok" {
		s.t.Fatalf("POST %s: %d %s", path, resp.StatusCode, ans)
	}
	return out
}

// wallet sends one wallet call with the envelope.
func (s *recSim) wallet(route string, fields map[string]any) {
	s.t.Helper()
	body := map[string]any{"operator": "dev", "timestamp": time.Now().UnixMilli(), "request_id": fmt.Sprintf("req-%d", time.Now().UnixNano()),
		"currency": "BRL", "game_id": "crash", "player_id": recPlayer, "token": s.token}
	for k, v := range fields {
		body[k] = v
	}
	s.post(route, body, true)
}

func (s *recSim) bet(tx, round string, amount int64) {
	s.wallet("/bet", map[string]any{"amount": amount, "transaction_id": tx, "round_id": round, "freebet_id": nil})
}

func newRecSim(t *testing.T) *recSim {
	sim, err := operatorsim.New(operatorsim.Config{Operator: "dev", Secret: recSecret, APIKeys: []string{recKey},
		SeedPlayers: 1, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	srv := httptest.NewServer(sim.Handler())
	t.Cleanup(srv.Close)
	s := &recSim{t: t, url: srv.URL}
	ans := s.post("/admin/tokens/issue", map[string]any{"timestamp": time.Now().UnixMilli(), "player_id": recPlayer}, false)
	s.token, _ = ans["token"].(string)
	return s
}

// runReconcile runs the command and returns its output and error.
func runReconcile(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), append([]string{"reconcile"}, args...), &stdout, &stderr)
	return stdout.String(), stderr.String(), err
}

func TestReconcileCommand(t *testing.T) {
	sim := newRecSim(t)
	// The money that moved: b-won 1000 won 2500; b-lost 500 lost (open:
	// zero_win is off); b-cancel 700 cancelled and rolled back.
	sim.bet("b-won", "r1", 1000)
	sim.wallet("/win", map[string]any{"amount": 2500, "transaction_id": "w-won", "bet_id": "b-won", "round_id": "r1", "type": "win", "freebet_id": nil})
	sim.bet("b-lost", "r1", 500)
	sim.bet("b-cancel", "r2", 700)
	sim.wallet("/rollback", map[string]any{"amount": 700, "transaction_id": "rb-cancel", "bet_id": "b-cancel", "round_id": "r2", "reason": "cancelled by the player"})

	// The game's records of the same money, with the operator's own ids.
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "crashgame.yaml")
	t.Setenv("REC_SECRET", recSecret)
	t.Setenv("REC_API_KEY", recKey)
	writeFile(t, cfgPath, fmt.Sprintf(`
base_url: http://127.0.0.1:8080
fairness: {seed_key: abababababababababababababababababababababababababababababababab, seeding_window_ms: 0}
database: sqlite://%s/game.db
games:
  - {game_id: crash, name: Crash, studio: S, category: crash}
operators:
  - operator: dev
    secret: ${REC_SECRET}
    api_key: ${REC_API_KEY}
    wallet_url: %s
    games: [crash]
    currencies: {BRL: {min_bet: 100, max_bet: 100000}}
  - operator: showroom
    games: [crash]
`, filepath.ToSlash(dir), sim.url))
	ctx := context.Background()
	ledger, err := reconcile.ReadOperatorSim(ctx, nil, sim.url, recSecret)
	if err != nil {
		t.Fatal(err)
	}
	opID := map[string]string{}
	for _, m := range ledger.Movements {
		opID[m.TransactionID] = m.OperatorTransactionID
	}
	st, err := store.Open(ctx, "sqlite://"+filepath.Join(dir, "game.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UnixMilli()
	var rounds []store.RoundRecord
	for i, id := range []string{"r1", "r2"} {
		rounds = append(rounds, store.RoundRecord{ID: id, GameID: "crash", Seq: int64(i + 1), Hash: "h", CrashPoint: 300, Status: engine.RoundFinished, BettingEndsAt: store.Millis(now), CreatedAt: store.Millis(now)})
	}
	payout := int64(2500)
	bet := func(id, round string, amount int64, status string) store.BetRecord {
		return store.BetRecord{ID: id, RoundID: round, GameID: "crash", SessionHash: bytes.Repeat([]byte{7}, 32), Operator: "dev",
			PlayerID: recPlayer, Token: sim.token, Currency: "BRL", Amount: amount, Status: status, OperatorTxID: opID[id], PlacedAt: store.Millis(now)}
	}
	bets := []store.BetRecord{bet("b-won", "r1", 1000, engine.StatusCashedOut), bet("b-lost", "r1", 500, engine.StatusLost),
		bet("b-cancel", "r2", 700, engine.StatusCancelled)}
	bets[0].Payout, bets[0].Multiplier = &payout, 250
	// A demo bet moves no money and is not compared.
	demo := bet("b-demo", "r2", 100, engine.StatusCashedOut)
	demo.Demo, demo.Operator, demo.OperatorTxID = true, "showroom", ""
	bets = append(bets, demo)
	mv := func(tx string, kind movements.MovementKind, betID, round string, amount int64, typ wallet.WinType) store.MovementRecord {
		return store.MovementRecord{TransactionID: tx, Kind: string(kind), Operator: "dev", GameID: "crash", Currency: "BRL", PlayerID: recPlayer,
			Token: sim.token, RoundID: round, BetID: betID, Amount: amount, WinType: string(typ), Status: string(movements.StatusDone), Attempts: 1,
			OperatorTxID: opID[tx], CreatedAt: store.Millis(now)}
	}
	moves := []store.MovementRecord{mv("w-won", movements.KindWin, "b-won", "r1", 2500, wallet.WinTypeWin),
		mv("rb-cancel", movements.KindRollback, "b-cancel", "r2", 700, "")}
	for _, r := range rounds {
		recInsertRound(t, st, r)
	}
	for _, b := range bets {
		recInsertBet(t, st, b)
	}
	if err := st.InsertMovements(ctx, moves); err != nil {
		t.Fatal(err)
	}

	// The two sides agree: zero differences, exit 0; the secret comes from
	// the environment.
	t.Setenv("OPERATOR_SIM_SECRET", recSecret)
	out, stderr, err := runReconcile(t, "--config", cfgPath, "--operator-sim", sim.url, "--initial-balance", fmt.Sprint(operatorsim.DefaultSeedBalance))
	if err != nil {
		t.Fatalf("reconcile: %v\nstdout: %s\nstderr: %s", err, out, stderr)
	}
	want := "reconciliation: zero differences (3 debits, 1 wins, 0 zero_wins, 1 rollbacks, 1 open (lost), 1 players; the game: 3 bets, 2 movements)\n"
	if out != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", out, want)
	}
	// Without --secret nor the environment, the operator's secret of the
	// installation file signs the admin call.
	t.Setenv("OPERATOR_SIM_SECRET", "")
	if out, _, err := runReconcile(t, "--config", cfgPath, "--operator-sim", sim.url, "--json"); err != nil ||
		!strings.Contains(out, `"differences": []`) || !strings.Contains(out, `"debits": 3`) {
		t.Errorf("--json with the file's secret: %v\n%s", err, out)
	}
	if out, _, err := runReconcile(t, "--config", cfgPath, "--operator-sim", sim.url, "--player", "player-0002"); err != nil ||
		!strings.Contains(out, "zero differences (0 debits") {
		t.Errorf("--player of another player: %v\n%s", err, out)
	}

	// A mismatch: the game paid 2600 but the operator credited 2500, the
	// game lost the operator's id of the rollback, and a debit reached the
	// operator that the game never recorded; a wrong initial balance too.
	if _, err := st.ExecForTest(ctx, "UPDATE bets SET payout = 2600 WHERE id = 'b-won'"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.ExecForTest(ctx, "UPDATE movements SET operator_tx_id = '' WHERE transaction_id = 'rb-cancel'"); err != nil {
		t.Fatal(err)
	}
	sim.bet("b-stray", "r2", 300)
	out, _, err = runReconcile(t, "--config", cfgPath, "--operator-sim", sim.url, "--secret", recSecret, "--initial-balance", "999")
	var coded interface{ ExitCode() int }
	if !errors.As(err, &coded) || coded.ExitCode() != 1 {
		t.Fatalf("a mismatch: err %v, want one with exit code 1\n%s", err, out)
	}
	for _, line := range []string{
		"reconciliation: 4 difference(s) (4 debits,",
		"  bet b-won cashed out for 2600: its win moves 2500\n",
		"  movement rb-cancel: the game kept operator id \"\", the operator says \"" + opID["rb-cancel"] + "\" (ENV-19)\n",
		"  operator debit b-stray (300, player player-0001) has no bet in the game\n",
		"  player player-0001: balance 1000700, but initial 999 + movements 700 = 1699\n",
	} {
		if !strings.Contains(out, line) {
			t.Errorf("stdout lacks %q:\n%s", line, out)
		}
	}
	if strings.Contains(out, recSecret) || strings.Contains(out, sim.token) {
		t.Errorf("the report shows a secret or a token:\n%s", out)
	}

	// A wrong secret: the comparison cannot be made (exit 2), and the secret
	// is not echoed.
	_, _, err = runReconcile(t, "--config", cfgPath, "--operator-sim", sim.url, "--secret", "wrong-secret-777777")
	if err == nil || errors.As(err, &coded) || !strings.Contains(err.Error(), "401") || strings.Contains(err.Error(), "777777") {
		t.Errorf("wrong secret: %v", err)
	}
}

func recInsertRound(t *testing.T, st *store.Store, r store.RoundRecord) {
	t.Helper()
	if err := st.InsertRound(t.Context(), r); err != nil {
		t.Fatal(err)
	}
}

func recInsertBet(t *testing.T, st *store.Store, b store.BetRecord) {
	t.Helper()
	if err := st.InsertBet(t.Context(), &b); err != nil {
		t.Fatal(err)
	}
}

func TestReconcileCommandRefusesBadUsage(t *testing.T) {
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "crashgame.yaml")
	writeFile(t, cfgPath, fmt.Sprintf(`
base_url: http://127.0.0.1:8080
fairness: {seed_key: abababababababababababababababababababababababababababababababab, seeding_window_ms: 0}
database: sqlite://%s/game.db
games:
  - {game_id: crash, name: Crash, studio: S, category: crash}
operators:
  - operator: showroom
    games: [crash]
`, filepath.ToSlash(dir)))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--operator-sim", "http://127.0.0.1:1"}, "--config FILE is required"},
		{[]string{"--config", cfgPath}, "--operator-sim URL is required"},
		{[]string{"--config", cfgPath, "--operator-sim", "127.0.0.1:8081"}, "not an http:// or https:// address"},
		{[]string{"--config", cfgPath, "--operator-sim", "http://127.0.0.1:1"}, "no operator of the installation file has a wallet_url"},
		{[]string{"--config", cfgPath, "--operator-sim", "http://127.0.0.1:1", "--operator", "showroom"}, `operator "showroom" has no wallet_url`},
		{[]string{"--config", cfgPath, "--operator-sim", "http://127.0.0.1:1", "--operator", "nobody"}, `no operator "nobody"`},
	} {
		_, _, err := runReconcile(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
	}
}

// The README's "By hand" section serves docs/examples/crashgame.yaml: it must
// stay valid, with operator-sim on loopback as the one wallet.
func TestByHandExampleIsValid(t *testing.T) {
	t.Setenv("OPERATOR_SECRET", "by-hand-secret-not-for-production")
	t.Setenv("OPERATOR_API_KEY", "by_hand_key")
	t.Setenv("CRASHGAME_SEED_KEY", strings.Repeat("5e", 32))
	cfg, err := loadConfig(filepath.Join("..", "..", "docs", "examples", "crashgame.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	op, err := walletOperator(cfg, "")
	if err != nil || op.ID != "dev" || op.WalletURL != "http://127.0.0.1:8081" {
		t.Fatalf("the example's wallet operator: %+v, %v", op, err)
	}
}
