package reconcile

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/crashstudio/crashgame/internal/signature"
)

// Filter selects the game's records to compare. Empty fields select
// everything. Demo bets are never read: they move no money.
type Filter struct {
	Operator     string // only this operator's bets and movements
	PlayerID     string // only this player's
	PlayerPrefix string // only players whose id starts with it
}

// GameReader is what ReadGame reads the game's side through, as this
// package's own types; neither read returns a session token or a session
// hash. (*store.Store).Reconcile implements it.
type GameReader interface {
	// ReconcileBets returns the real-money bets f selects, by placed_at, id.
	ReconcileBets(ctx context.Context, f Filter) ([]Bet, error)
	// ReconcileMovements returns the movements f selects, by created_at,
	// transaction_id.
	ReconcileMovements(ctx context.Context, f Filter) ([]Movement, error)
}

// ReadGame reads the game's side through r: every real-money bet and every
// settlement movement that f selects. It only reads.
func ReadGame(ctx context.Context, r GameReader, f Filter) (Game, error) {
	bets, err := r.ReconcileBets(ctx, f)
	if err != nil {
		return Game{}, fmt.Errorf("reconcile: read the game's bets: %w", err)
	}
	moves, err := r.ReconcileMovements(ctx, f)
	if err != nil {
		return Game{}, fmt.Errorf("reconcile: read the game's movements: %w", err)
	}
	return Game{Bets: bets, Movements: moves}, nil
}

// maxAnswer bounds operator-sim's answer (about 400 bytes a movement).
const maxAnswer = 1 << 30

// ReadOperatorSim reads the whole ledger of the reference operator at baseURL
// (its address, e.g. http://127.0.0.1:8081) through its admin API: a POST
// /admin/reconcile whose body {"timestamp": <ms>} is signed with secret
// (X-Signature = hex HMAC-SHA256 of the exact body). An error names the HTTP
// status and the answer's error code, never the secret or the signature.
func ReadOperatorSim(ctx context.Context, hc *http.Client, baseURL, secret string) (Ledger, error) {
	if hc == nil {
		hc = &http.Client{Timeout: time.Minute}
	}
	if secret == "" {
		return Ledger{}, errors.New("reconcile: operator-sim's secret is empty")
	}
	body, err := json.Marshal(map[string]int64{"timestamp": time.Now().UnixMilli()})
	if err != nil {
		return Ledger{}, err
	}
	url := strings.TrimRight(baseURL, "/") + "/admin/reconcile"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return Ledger{}, fmt.Errorf("reconcile: operator-sim address %q: %w", baseURL, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Signature", signature.Sign([]byte(secret), body))
	resp, err := hc.Do(req)
	if err != nil {
		return Ledger{}, fmt.Errorf("reconcile: operator-sim /admin/reconcile: %w", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil {
		return Ledger{}, fmt.Errorf("reconcile: operator-sim /admin/reconcile: read the answer: %w", err)
	}
	if len(raw) > maxAnswer {
		return Ledger{}, fmt.Errorf("reconcile: operator-sim /admin/reconcile: the answer exceeds %d bytes", maxAnswer)
	}
	var ans struct {
		Ledger
		Status    string `json:"status"`
		ErrorCode string `json:"error_code"`
	}
	jsonErr := json.Unmarshal(raw, &ans)
	if resp.StatusCode != http.StatusOK || ans.Status != "ok" {
		code := ans.ErrorCode
		if jsonErr != nil || code == "" {
			code = "no error_code"
		}
		hint := ""
		if resp.StatusCode == http.StatusUnauthorized {
			hint = " (wrong secret, or the clocks differ by more than 5 minutes)"
		}
		return Ledger{}, fmt.Errorf("reconcile: operator-sim /admin/reconcile answered %d %s%s", resp.StatusCode, code, hint)
	}
	if jsonErr != nil {
		return Ledger{}, fmt.Errorf("reconcile: operator-sim /admin/reconcile: the answer is not the expected JSON: %w", jsonErr)
	}
	return ans.Ledger, nil
}
