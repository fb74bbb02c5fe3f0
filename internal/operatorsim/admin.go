package operatorsim

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/crashstudio/crashgame/internal/signature"
	"github.com/crashstudio/crashgame/internal/store/ledger"
)

// The admin API: POST, JSON bodies, each signed like a wallet call (X-Signature
// = hex HMAC-SHA256 of the exact body with the shared secret) and carrying a
// "timestamp" in milliseconds within 5 minutes. No Bearer key. Answers are
// {"status":"ok", ...} or {"status":"error","error_code":...,"error_message":...}
// with 400 (bad request), 401 (INVALID_SIGNATURE), 404 (NOT_FOUND) or 500.
//
//	/admin/players/create  {player_id?, name?, currency?, balance?}  -> {player}
//	/admin/players/list    {}                                        -> {players}
//	/admin/players/get     {player_id}                               -> {player}
//	/admin/players/fund    {player_id, amount}  (negative withdraws)  -> {player}
//	/admin/players/block   {player_id, blocked}                      -> {player}
//	/admin/tokens/issue    {player_id, ttl_seconds?}                 -> {token, expires_at}
//	/admin/tokens/revoke   {token}                                   -> {}
//	/admin/tokens/expire   {token}                                   -> {}
//	/admin/freebets/grant  {player_id, id, amount, quantity?}        -> {player_id, freebets (open grants)}
//	/admin/faults/set      {faults: {"bet": Fault, "*": Fault, ...}} -> {faults}  (replaces the whole set; {} clears)
//	/admin/faults/list     {}                                        -> {faults}
//	/admin/ledger          {player_id?, limit?}                      -> {movements}
//	/admin/reconcile       {player_id?}                              -> {movements, players}

// Admin error codes (the admin API is ours, not the contract's).
const (
	adminBadRequest = "BAD_REQUEST"
	adminNotFound   = "NOT_FOUND"
)

// PlayerView is a player as the admin API shows it.
type PlayerView struct {
	PlayerID string `json:"player_id"`
	Name     string `json:"name"`
	Currency string `json:"currency"`
	Balance  int64  `json:"balance"`
	Blocked  bool   `json:"blocked"`
}

func playerView(p *ledger.PlayerRecord) PlayerView {
	return PlayerView{PlayerID: p.PlayerID, Name: p.Name, Currency: p.Currency, Balance: p.Balance, Blocked: p.Blocked}
}

// playerAnswer is the answer of the admin routes that show one player: p, or
// the error that kept it from being read or changed.
func playerAnswer(p *ledger.PlayerRecord, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	return map[string]any{"player": playerView(p)}, nil
}

// viewsAnswer is the answer of the admin routes that list records: each of
// records shown through view under key, or the error that kept them from
// being read.
func viewsAnswer[R, V any](key string, records []R, err error, view func(*R) V) (any, error) {
	if err != nil {
		return nil, err
	}
	return map[string]any{key: views(records, view)}, nil
}

// views shows each of records through view, in order; none gives an empty,
// non-nil list (JSON [], not null).
func views[R, V any](records []R, view func(*R) V) []V {
	out := make([]V, len(records))
	for i := range records {
		out[i] = view(&records[i])
	}
	return out
}

// Movement is one ledger row as the admin API shows it: what the game sent
// (transaction_id, kind, amount, bet_id, round_id, freebet_id) beside what the
// operator did (operator_transaction_id, delta, balance_after, settlement).
type Movement struct {
	OperatorTransactionID string  `json:"operator_transaction_id"`
	PlayerID              string  `json:"player_id"`
	TransactionID         string  `json:"transaction_id"`
	Kind                  string  `json:"kind"`
	Amount                int64   `json:"amount"`
	Delta                 int64   `json:"delta"`
	BalanceAfter          int64   `json:"balance_after"`
	Currency              string  `json:"currency"`
	BetID                 *string `json:"bet_id"`
	RoundID               string  `json:"round_id"`
	FreebetID             *string `json:"freebet_id"`
	Type                  string  `json:"type,omitempty"`
	Reason                string  `json:"reason,omitempty"`
	// Settlement, on a bet: how it was closed (win, freebet, zero_win, lose,
	// rollback), or absent while it is open.
	Settlement *string `json:"settlement,omitempty"`
	// SettledBy is the operator transaction id of the closing movement.
	SettledBy *string   `json:"settled_by,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

func movementView(m *ledger.MovementRecord) Movement {
	v := Movement{
		OperatorTransactionID: operatorTxID(m.ID), PlayerID: m.PlayerID, TransactionID: m.TransactionID,
		Kind: m.Kind, Amount: m.Amount, Delta: m.Delta, BalanceAfter: m.BalanceAfter, Currency: m.Currency,
		BetID: m.BetID, RoundID: m.RoundID, FreebetID: m.FreebetID, Type: m.WinType, Reason: m.Reason,
		Settlement: m.Settlement, CreatedAt: time.UnixMilli(m.CreatedAt).UTC(),
	}
	if m.SettledBy != nil {
		by := operatorTxID(*m.SettledBy)
		v.SettledBy = &by
	}
	return v
}

// ReconcilePlayer sums one player's movements.
type ReconcilePlayer struct {
	PlayerID string `json:"player_id"`
	Balance  int64  `json:"balance"`
	// Moved is the sum of every movement's delta (deposits through the admin
	// API are not movements).
	Moved    int64 `json:"moved"`
	Bets     int   `json:"bets"`
	Wins     int   `json:"wins"`
	Rollback int   `json:"rollbacks"`
	// OpenBets lists the game transaction_ids of debits not yet closed by a
	// win or a rollback.
	OpenBets []string `json:"open_bets"`
}

// adminHandler answers the verified body of one admin call: the fields of
// its "status":"ok" answer, or an error (errNotFound, errInvalid or ours).
type adminHandler func(ctx context.Context, body []byte) (any, error)

// decoded is the adminHandler that decodes the body strictly into a Req
// (decodeAdmin) and hands it to h: a body that does not decode is refused
// 400 before h runs.
func decoded[Req any](h func(ctx context.Context, req Req) (any, error)) adminHandler {
	return func(ctx context.Context, body []byte) (any, error) {
		var req Req
		if err := decodeAdmin(body, &req); err != nil {
			return nil, err
		}
		return h(ctx, req)
	}
}

// adminRoutes serves /admin/.
func (s *Sim) adminRoutes() http.Handler {
	mux := http.NewServeMux()
	handle := func(path string, h adminHandler) {
		mux.Handle("POST "+path, s.adminAuth(h))
	}
	s.playerRoutes(handle)
	s.tokenRoutes(handle)
	s.freebetAndFaultRoutes(handle)
	s.ledgerRoutes(handle)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeAdminError(w, http.StatusNotFound, adminNotFound, "no such admin route: "+r.Method+" "+r.URL.Path)
	})
	return mux
}

// playerRoutes registers /admin/players/: create, list, get, fund and block.
func (s *Sim) playerRoutes(handle func(path string, h adminHandler)) {
	l := s.ledger
	handle("/admin/players/create", decoded(func(ctx context.Context, req struct {
		PlayerID string `json:"player_id"`
		Name     string `json:"name"`
		Currency string `json:"currency"`
		Balance  int64  `json:"balance"`
	}) (any, error) {
		if req.Currency == "" {
			req.Currency = s.cfg.Currency
		}
		p := &ledger.PlayerRecord{PlayerID: req.PlayerID, Name: req.Name, Currency: req.Currency, Balance: req.Balance}
		if err := l.createPlayer(ctx, p); err != nil {
			return nil, err
		}
		return map[string]any{"player": playerView(p)}, nil
	}))
	handle("/admin/players/list", decoded(func(ctx context.Context, _ struct{}) (any, error) {
		ps, err := l.players(ctx)
		return viewsAnswer("players", ps, err, playerView)
	}))
	handle("/admin/players/get", decoded(func(ctx context.Context, req struct {
		PlayerID string `json:"player_id"`
	}) (any, error) {
		return playerAnswer(l.player(ctx, req.PlayerID))
	}))
	handle("/admin/players/fund", decoded(func(ctx context.Context, req struct {
		PlayerID string `json:"player_id"`
		Amount   int64  `json:"amount"`
	}) (any, error) {
		return playerAnswer(l.fund(ctx, req.PlayerID, req.Amount))
	}))
	handle("/admin/players/block", decoded(func(ctx context.Context, req struct {
		PlayerID string `json:"player_id"`
		Blocked  bool   `json:"blocked"`
	}) (any, error) {
		if err := l.setBlocked(ctx, req.PlayerID, req.Blocked); err != nil {
			return nil, err
		}
		return playerAnswer(l.player(ctx, req.PlayerID))
	}))
}

// tokenRoutes registers /admin/tokens/: issue, revoke and expire.
func (s *Sim) tokenRoutes(handle func(path string, h adminHandler)) {
	l := s.ledger
	handle("/admin/tokens/issue", decoded(func(ctx context.Context, req struct {
		PlayerID   string `json:"player_id"`
		TTLSeconds int64  `json:"ttl_seconds"`
	}) (any, error) {
		if req.TTLSeconds < 0 {
			return nil, fmt.Errorf("%w: ttl_seconds is negative", errInvalid)
		}
		sess, err := l.issueToken(ctx, req.PlayerID, time.Duration(req.TTLSeconds)*time.Second)
		if err != nil {
			return nil, err
		}
		return map[string]any{"token": sess.Token, "player_id": sess.PlayerID,
			"expires_at": time.UnixMilli(sess.ExpiresAt).UTC()}, nil
	}))
	for path, expire := range map[string]bool{"/admin/tokens/revoke": false, "/admin/tokens/expire": true} {
		handle(path, decoded(func(ctx context.Context, req struct {
			Token string `json:"token"`
		}) (any, error) {
			return map[string]any{}, l.endToken(ctx, req.Token, expire)
		}))
	}
}

// freebetAndFaultRoutes registers /admin/freebets/grant, /admin/faults/set and
// /admin/faults/list.
func (s *Sim) freebetAndFaultRoutes(handle func(path string, h adminHandler)) {
	l := s.ledger
	handle("/admin/freebets/grant", decoded(func(ctx context.Context, req struct {
		PlayerID string `json:"player_id"`
		ID       string `json:"id"`
		Amount   int64  `json:"amount"`
		Quantity int    `json:"quantity"`
	}) (any, error) {
		g := &ledger.GrantRecord{PlayerID: req.PlayerID, GrantID: req.ID, Amount: req.Amount, Quantity: req.Quantity}
		if err := l.grantFreebet(ctx, g); err != nil {
			return nil, err
		}
		grants, err := l.openGrants(ctx, req.PlayerID)
		if err != nil {
			return nil, err
		}
		return map[string]any{"player_id": req.PlayerID, "freebets": grants}, nil
	}))
	handle("/admin/faults/set", decoded(func(ctx context.Context, req struct {
		Faults map[string]Fault `json:"faults"`
	}) (any, error) {
		if err := s.faults.replace(req.Faults); err != nil {
			return nil, fmt.Errorf("%w: %w", errInvalid, err)
		}
		s.logger.InfoContext(ctx, "operator-sim: faults set", "routes", len(req.Faults))
		return map[string]any{"faults": s.faults.snapshot()}, nil
	}))
	handle("/admin/faults/list", decoded(func(context.Context, struct{}) (any, error) {
		return map[string]any{"faults": s.faults.snapshot()}, nil
	}))
}

// ledgerRoutes registers /admin/ledger and /admin/reconcile, which read the
// movements.
func (s *Sim) ledgerRoutes(handle func(path string, h adminHandler)) {
	l := s.ledger
	handle("/admin/ledger", decoded(func(ctx context.Context, req struct {
		PlayerID string `json:"player_id"`
		Limit    int    `json:"limit"`
	}) (any, error) {
		ms, err := l.movements(ctx, req.PlayerID, req.Limit)
		return viewsAnswer("movements", ms, err, movementView)
	}))
	handle("/admin/reconcile", decoded(func(ctx context.Context, req struct {
		PlayerID string `json:"player_id"`
	}) (any, error) {
		return s.reconcile(ctx, req.PlayerID)
	}))
}

// reconcile lists every movement (the suites compare it with the game's
// records) and sums them per player.
func (s *Sim) reconcile(ctx context.Context, playerID string) (any, error) {
	ms, err := s.ledger.movements(ctx, playerID, 0)
	if err != nil {
		return nil, err
	}
	sums := map[string]*ReconcilePlayer{}
	var order []string
	for i := range ms {
		m := &ms[i]
		rp, ok := sums[m.PlayerID]
		if !ok {
			p, err := s.ledger.player(ctx, m.PlayerID)
			if err != nil {
				return nil, err
			}
			rp = &ReconcilePlayer{PlayerID: m.PlayerID, Balance: p.Balance, OpenBets: []string{}}
			sums[m.PlayerID] = rp
			order = append(order, m.PlayerID)
		}
		rp.Moved += m.Delta
		switch m.Kind {
		case kindBet:
			rp.Bets++
			if m.Settlement == nil {
				rp.OpenBets = append(rp.OpenBets, m.TransactionID)
			}
		case kindWin:
			rp.Wins++
		case kindRollback:
			rp.Rollback++
		}
	}
	players := make([]*ReconcilePlayer, 0, len(order))
	for _, id := range order {
		players = append(players, sums[id])
	}
	return map[string]any{"movements": views(ms, movementView), "players": players}, nil
}

// adminAuth reads and verifies a signed admin body, runs h and writes its
// answer.
func (s *Sim) adminAuth(h adminHandler) http.Handler {
	secret := []byte(s.cfg.Secret)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := readBody(w, r)
		if !ok {
			return
		}
		if err := signature.VerifyRequest(secret, body, r.Header.Get(SignatureHeader), s.cfg.Now()); err != nil {
			s.logger.WarnContext(r.Context(), "operator-sim: admin call refused", "route", r.URL.Path, "reason", err.Error())
			writeAdminError(w, http.StatusUnauthorized, codeInvalidSignature, "")
			return
		}
		res, err := h(r.Context(), body)
		switch {
		case errors.Is(err, errNotFound):
			writeAdminError(w, http.StatusNotFound, adminNotFound, err.Error())
		case errors.Is(err, errInvalid):
			writeAdminError(w, http.StatusBadRequest, adminBadRequest, err.Error())
		case err != nil:
			s.logger.ErrorContext(r.Context(), "operator-sim: admin call failed", "route", r.URL.Path, "err", err)
			writeAdminError(w, http.StatusInternalServerError, codeInternalError, "operator-sim failed")
		default:
			writeAdminOK(w, res)
		}
	})
}

// decodeAdmin decodes a body strictly: unknown fields are typos. timestamp is
// the signature window's and always allowed.
func decodeAdmin(body []byte, v any) error {
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(body, &probe); err != nil {
		return fmt.Errorf("%w: body is not a JSON object: %w", errInvalid, err)
	}
	delete(probe, "timestamp")
	rest, _ := json.Marshal(probe)
	dec := json.NewDecoder(bytes.NewReader(rest))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: %w", errInvalid, err)
	}
	return nil
}

func writeAdminOK(w http.ResponseWriter, res any) {
	out := map[string]any{}
	if m, ok := res.(map[string]any); ok {
		for k, v := range m {
			out[k] = v
		}
	}
	out["status"] = "ok"
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_ = json.NewEncoder(w).Encode(out)
}

func writeAdminError(w http.ResponseWriter, status int, code, msg string) {
	out := map[string]string{"status": "error", "error_code": code}
	if msg != "" {
		out["error_message"] = msg
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(out)
}
