package operatorsim_test

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/internal/apitest"
	"github.com/crashstudio/crashgame/internal/operatorsim"
	"github.com/crashstudio/crashgame/internal/signature"
)

const (
	testSecret   = "operator-sim-test-secret"
	testOperator = "acme-bet"
	oldKey       = "acme_k3y0ld00_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
	newKey       = "acme_k3yn3w00_BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB"
)

// harness is one reference operator in memory, driven over HTTP with signed
// requests built by hand, every answer checked against api/wallet.v1.yaml.
type harness struct {
	t   testing.TB
	sim *operatorsim.Sim
	h   http.Handler
	doc *apitest.Validator
}

func newHarness(t testing.TB, mutate ...func(*operatorsim.Config)) *harness {
	t.Helper()
	cfg := operatorsim.Config{
		Operator: testOperator,
		Secret:   testSecret,
		APIKeys:  []string{oldKey, newKey},
		Logger:   slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	for _, m := range mutate {
		m(&cfg)
	}
	sim, err := operatorsim.New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	return &harness{t: t, sim: sim, h: sim.Handler(), doc: apitest.New(t, "wallet.v1.yaml")}
}

func nowMS() int64 { return time.Now().UnixMilli() }

var attempt atomic.Int64

// requestID names a new attempt, as the game does on every retry.
func requestID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "req-" + hex.EncodeToString(b[:])
}

// signedRequest builds a wallet call the way the game sends it: exact bytes,
// X-Signature over them, Authorization: Bearer <key>.
func signedRequest(route string, body []byte, key string) *http.Request {
	req := httptest.NewRequest(http.MethodPost, route, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("X-Signature", signature.Sign([]byte(testSecret), body))
	return req
}

// answer is a decoded wallet answer.
type answer struct {
	Code int
	Raw  []byte
	Body map[string]any
}

func (a answer) str(k string) string {
	s, _ := a.Body[k].(string)
	return s
}

func (a answer) num(k string) int64 {
	f, ok := a.Body[k].(float64)
	if !ok {
		return -1
	}
	return int64(f)
}

// serve sends req and checks the answer against the document.
func (h *harness) serve(req *http.Request) answer {
	h.t.Helper()
	rec := httptest.NewRecorder()
	h.h.ServeHTTP(rec, req)
	h.doc.Recorded(h.t, req, rec)
	a := answer{Code: rec.Code, Raw: rec.Body.Bytes()}
	if err := json.Unmarshal(a.Raw, &a.Body); err != nil {
		h.t.Fatalf("%s answered %d with a body that is not JSON: %q", req.URL.Path, rec.Code, a.Raw)
	}
	return a
}

// call marshals body, signs it and sends it to route.
func (h *harness) call(route string, body map[string]any) answer {
	h.t.Helper()
	raw, err := json.Marshal(body)
	if err != nil {
		h.t.Fatal(err)
	}
	return h.serve(signedRequest(route, raw, newKey))
}

// envelope returns a fresh envelope: new request_id and timestamp.
func envelope(fields map[string]any) map[string]any {
	m := map[string]any{
		"operator":   testOperator,
		"timestamp":  nowMS(),
		"request_id": requestID(),
		"currency":   "BRL",
		"game_id":    "crash",
	}
	for k, v := range fields {
		m[k] = v
	}
	return m
}

// again is the same movement as a new attempt: same content, new request_id
// and timestamp.
func again(body map[string]any) map[string]any {
	m := make(map[string]any, len(body))
	for k, v := range body {
		m[k] = v
	}
	m["request_id"] = requestID()
	m["timestamp"] = nowMS() + attempt.Add(1)
	return m
}

func (h *harness) balanceReq(token string) map[string]any {
	return envelope(map[string]any{"token": token})
}

func betReq(player, token, tx string, amount int64, freebetID any) map[string]any {
	return envelope(map[string]any{
		"player_id": player, "token": token, "amount": amount,
		"transaction_id": tx, "round_id": "round-1", "freebet_id": freebetID,
	})
}

func winReq(player, token, tx, betID string, amount int64, typ string, freebetID any) map[string]any {
	return envelope(map[string]any{
		"player_id": player, "token": token, "amount": amount, "transaction_id": tx,
		"bet_id": betID, "round_id": "round-1", "type": typ, "freebet_id": freebetID,
	})
}

func rollbackReq(player, token, tx, betID string, amount int64, reason string) map[string]any {
	return envelope(map[string]any{
		"player_id": player, "token": token, "amount": amount, "transaction_id": tx,
		"bet_id": betID, "round_id": "round-1", "reason": reason,
	})
}

// admin calls the signed admin API and returns the decoded answer.
func (h *harness) admin(path string, body map[string]any) answer {
	h.t.Helper()
	if body == nil {
		body = map[string]any{}
	}
	body["timestamp"] = nowMS()
	raw, err := json.Marshal(body)
	if err != nil {
		h.t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(raw))
	req.Header.Set("X-Signature", signature.Sign([]byte(testSecret), raw))
	rec := httptest.NewRecorder()
	h.h.ServeHTTP(rec, req)
	a := answer{Code: rec.Code, Raw: rec.Body.Bytes()}
	if err := json.Unmarshal(a.Raw, &a.Body); err != nil {
		h.t.Fatalf("%s answered %d with a body that is not JSON: %q", path, rec.Code, a.Raw)
	}
	return a
}

func (h *harness) mustAdmin(path string, body map[string]any) answer {
	h.t.Helper()
	a := h.admin(path, body)
	if a.Code != http.StatusOK || a.str("status") != "ok" {
		h.t.Fatalf("%s: %d %s", path, a.Code, a.Raw)
	}
	return a
}

// player creates a player with balance cents in currency and returns a fresh
// session token for it.
func (h *harness) player(id string, balance int64, currency string) string {
	h.t.Helper()
	h.mustAdmin("/admin/players/create", map[string]any{"player_id": id, "name": "Player " + id, "currency": currency, "balance": balance})
	return h.token(id)
}

func (h *harness) token(id string) string {
	h.t.Helper()
	a := h.mustAdmin("/admin/tokens/issue", map[string]any{"player_id": id})
	return a.str("token")
}

func (h *harness) balanceOf(id string) int64 {
	h.t.Helper()
	a := h.mustAdmin("/admin/players/get", map[string]any{"player_id": id})
	p, _ := a.Body["player"].(map[string]any)
	f, _ := p["balance"].(float64)
	return int64(f)
}

func (h *harness) setFaults(faults map[string]any) {
	h.t.Helper()
	h.mustAdmin("/admin/faults/set", map[string]any{"faults": faults})
}

// wantOK fails unless a is a 200 success with the given balance.
func wantOK(t *testing.T, a answer, balance int64) {
	t.Helper()
	if a.Code != http.StatusOK || a.str("status") != "ok" {
		t.Fatalf("want 200 status ok, got %d %s", a.Code, a.Raw)
	}
	if got := a.num("balance"); got != balance {
		t.Fatalf("balance %d, want %d (%s)", got, balance, a.Raw)
	}
}

// wantRefusal fails unless a is an error body with code and HTTP status.
func wantRefusal(t *testing.T, a answer, status int, code string) {
	t.Helper()
	if a.Code != status || a.str("status") != "error" || a.str("error_code") != code {
		t.Fatalf("want %d status error %s, got %d %s", status, code, a.Code, a.Raw)
	}
}

// httptestDo sends an unsigned request and returns the recorder.
func httptestDo(h *harness, method, path, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	rec := httptest.NewRecorder()
	h.h.ServeHTTP(rec, req)
	return rec
}

func nowTime() time.Time { return time.Now() }
