package table

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/crashstudio/crashgame/gen/table"
	"github.com/crashstudio/crashgame/internal/engine"
	"github.com/crashstudio/crashgame/internal/round"
	"github.com/crashstudio/crashgame/internal/server"
	"github.com/crashstudio/crashgame/internal/sessions"
)

// api implements the generated strict server.
type api struct{ s *Server }

var _ table.StrictServerInterface = (*api)(nil)

// errorResponse is a refusal of any operation: it satisfies every generated
// response interface, and the document (checked by the tests) says which
// statuses each route may answer.
type errorResponse struct {
	status     int
	body       table.Error
	retryAfter int
}

func (e errorResponse) visit(w http.ResponseWriter) error {
	if e.retryAfter == 0 && e.status >= http.StatusInternalServerError {
		e.retryAfter = failureRetryAfter
	}
	if e.retryAfter > 0 {
		w.Header().Set("Retry-After", fmt.Sprint(e.retryAfter))
	}
	writeJSON(w, e.status, e.body)
	return nil
}

func (e errorResponse) VisitCancelBetResponse(w http.ResponseWriter) error       { return e.visit(w) }
func (e errorResponse) VisitCashOutResponse(w http.ResponseWriter) error         { return e.visit(w) }
func (e errorResponse) VisitCreateSessionResponse(w http.ResponseWriter) error   { return e.visit(w) }
func (e errorResponse) VisitGetCurrentRoundResponse(w http.ResponseWriter) error { return e.visit(w) }
func (e errorResponse) VisitGetFairnessResponse(w http.ResponseWriter) error     { return e.visit(w) }
func (e errorResponse) VisitGetRoundResponse(w http.ResponseWriter) error        { return e.visit(w) }
func (e errorResponse) VisitGetSessionResponse(w http.ResponseWriter) error      { return e.visit(w) }
func (e errorResponse) VisitListBetsResponse(w http.ResponseWriter) error        { return e.visit(w) }
func (e errorResponse) VisitListRoundsResponse(w http.ResponseWriter) error      { return e.visit(w) }
func (e errorResponse) VisitOpenStreamResponse(w http.ResponseWriter) error      { return e.visit(w) }
func (e errorResponse) VisitPlaceBetResponse(w http.ResponseWriter) error        { return e.visit(w) }

// failureRetryAfter is the Retry-After, in seconds, of every 5xx the game
// answers: a fail-over ends within a few seconds, and a database restart
// within a few more; the client sends the action again after it.
const failureRetryAfter = 1

func (a *api) fail(ctx context.Context, status int, code table.ErrorCode) errorResponse {
	return errorResponse{status: status, body: a.s.errorBody(ctx, code, nil)}
}

// internal logs an unexpected failure and answers 500 SERVER_ERROR.
func (a *api) internal(ctx context.Context, what string, err error) errorResponse {
	a.s.log.ErrorContext(ctx, "table: "+what, "request_id", server.RequestID(ctx), "err", err)
	return a.fail(ctx, http.StatusInternalServerError, table.ErrorCodeServerError)
}

// answers maps each refusal of a player's action (engine.Refusals, by its
// stable code) to the player's code and its HTTP status. A test fails while
// a refusal of engine.Refusals has no answer here.
var answers = map[string]struct {
	status int
	code   table.ErrorCode
}{
	"BETTING_CLOSED":      {http.StatusConflict, table.ErrorCodeBettingClosed},
	"TOO_MANY_BETS":       {http.StatusConflict, table.ErrorCodeTooManyBets},
	"BET_LIMIT":           {http.StatusUnprocessableEntity, table.ErrorCodeBetLimit},
	"BAD_AUTO_CASHOUT":    {http.StatusUnprocessableEntity, table.ErrorCodeBetLimit},
	"ROUND_CRASHED":       {http.StatusConflict, table.ErrorCodeRoundCrashed},
	"UNKNOWN_BET":         {http.StatusNotFound, table.ErrorCodeUnknownBet},
	"CASHOUT_NOT_ALLOWED": {http.StatusConflict, table.ErrorCodeCashoutNotAllowed},
	"CANCEL_NOT_ALLOWED":  {http.StatusConflict, table.ErrorCodeCancelNotAllowed},
	"FREEBET_UNAVAILABLE": {http.StatusUnprocessableEntity, table.ErrorCodeFreebetUnavailable},
	"UNKNOWN_ROUND":       {http.StatusNotFound, table.ErrorCodeUnknownRound},
	"ROUND_IN_PROGRESS":   {http.StatusConflict, table.ErrorCodeRoundInProgress},
	"WALLET_UNAVAILABLE":  {http.StatusServiceUnavailable, table.ErrorCodeWalletUnavailable},
	"TABLE_UNAVAILABLE":   {http.StatusServiceUnavailable, table.ErrorCodeTableUnavailable},
	"TABLE_BUSY":          {http.StatusServiceUnavailable, table.ErrorCodeTableBusy},
	// This server's table is stopping (a deploy): the player asks again and
	// the load balancer sends it to another replica.
	"STOPPED": {http.StatusServiceUnavailable, table.ErrorCodeTableUnavailable},
}

// refusal translates an engine refusal into the player's code (never a wallet
// code or an operator's message: AUTH-18); any other error is a failure. A
// refusal answered 5xx (the table or the wallet is unavailable, the table
// stops) is logged with its cause, which the player is not told: the
// on-call engineer reads there which path answered.
func (a *api) refusal(ctx context.Context, err error) errorResponse {
	if r, ok := engine.RefusalOf(err); ok {
		if ans, ok := answers[r.Code]; ok {
			if ans.status >= http.StatusInternalServerError {
				a.s.log.WarnContext(ctx, "table: action answered "+string(ans.code), "request_id", server.RequestID(ctx), "status", ans.status, "err", err)
			}
			return a.fail(ctx, ans.status, ans.code)
		}
	}
	var refused *engine.RefusedError
	if !errors.As(err, &refused) {
		return a.internal(ctx, "engine call failed", err)
	}
	if refused.Code == "INSUFFICIENT_FUNDS" {
		r := a.fail(ctx, http.StatusUnprocessableEntity, table.ErrorCodeInsufficientFunds)
		if refused.HasBalance && refused.Balance >= 0 {
			b := refused.Balance
			r.body.Balance = &b
		}
		return r
	}
	a.s.log.InfoContext(ctx, "bet refused by the wallet", "request_id", server.RequestID(ctx), "error_code", refused.Code)
	return a.fail(ctx, http.StatusUnprocessableEntity, table.ErrorCodeBetRefused)
}

// session returns the request's session and its game's table.
func (a *api) session(ctx context.Context) (sessions.Session, Game, *errorResponse) {
	sess, ok := sessionFrom(ctx)
	if !ok {
		r := a.fail(ctx, http.StatusUnauthorized, table.ErrorCodeSessionExpired)
		return sess, nil, &r
	}
	t, ok := a.s.tables(sess.GameID)
	if !ok {
		r := a.internal(ctx, "no running table for the session's game", fmt.Errorf("game %q", sess.GameID))
		return sess, nil, &r
	}
	return sess, t, nil
}

func millis(t time.Time) int64 { return t.UnixMilli() }

// CreateSession exchanges the launch URL's sid for a session.
func (a *api) CreateSession(ctx context.Context, req table.CreateSessionRequestObject) (table.CreateSessionResponseObject, error) {
	b := req.Body
	if b == nil {
		return a.fail(ctx, http.StatusBadRequest, table.ErrorCodeBadRequest), nil
	}
	open := sessions.OpenRequest{SID: b.Sid}
	if b.Language != nil {
		open.Language = *b.Language
		ctx = context.WithValue(ctx, languageKey{}, *b.Language)
	}
	if b.Operator != nil {
		open.Operator = *b.Operator
	}
	if b.GameId != nil {
		open.GameID = *b.GameId
	}
	if n := len(b.Sid); n < 16 || n > 512 || len(open.Operator) > 64 || len(open.GameID) > 64 ||
		(b.Operator != nil && open.Operator == "") || (b.GameId != nil && open.GameID == "") ||
		(b.Language != nil && len(open.Language) > 16) {
		return a.fail(ctx, http.StatusBadRequest, table.ErrorCodeBadRequest), nil
	}
	sess, err := a.s.sessions.Open(ctx, open)
	switch {
	case err == nil:
	case errors.Is(err, sessions.ErrTicketUsed):
		return a.fail(ctx, http.StatusUnauthorized, table.ErrorCodeTicketUsed), nil
	case errors.Is(err, sessions.ErrTicketExpired):
		return a.fail(ctx, http.StatusUnauthorized, table.ErrorCodeTicketExpired), nil
	case errors.Is(err, sessions.ErrTicketInvalid):
		return a.fail(ctx, http.StatusUnauthorized, table.ErrorCodeTicketInvalid), nil
	case errors.Is(err, sessions.ErrSessionRefused):
		return a.fail(ctx, http.StatusUnauthorized, table.ErrorCodeSessionRefused), nil
	case errors.Is(err, sessions.ErrCurrencyMismatch):
		return a.fail(ctx, http.StatusConflict, table.ErrorCodeSessionCurrencyMismatch), nil
	case errors.Is(err, sessions.ErrWalletUnavailable):
		return a.fail(ctx, http.StatusServiceUnavailable, table.ErrorCodeWalletUnavailable), nil
	default:
		return a.internal(ctx, "opening a session failed", err), nil
	}
	ctx = context.WithValue(ctx, sessionKey{}, sess)
	return table.CreateSession201JSONResponse(a.sessionBody(ctx, sess)), nil
}

// GetSession answers the session from the game's state; it calls no wallet.
func (a *api) GetSession(ctx context.Context, _ table.GetSessionRequestObject) (table.GetSessionResponseObject, error) {
	sess, ok := sessionFrom(ctx)
	if !ok {
		return a.fail(ctx, http.StatusUnauthorized, table.ErrorCodeSessionExpired), nil
	}
	return table.GetSession200JSONResponse(a.sessionBody(ctx, sess)), nil
}

func (a *api) sessionBody(ctx context.Context, sess sessions.Session) table.Session {
	out := table.Session{
		Session: sess.ID, GameId: sess.GameID, Currency: sess.Currency, Language: table.Language(sess.Language),
		Balance: max(sess.Balance, 0), PlayerName: sess.Name, Demo: sess.Demo, Freebets: []table.Freebet{},
	}
	if sess.Theme != "" {
		theme := sess.Theme
		out.Theme = &theme
	}
	if l, ok := a.s.limits[Currency{Operator: sess.Operator, Code: sess.Currency}]; ok {
		out.Limits = table.Limits{MinBet: l.MinBet, MaxBet: l.MaxBet, MaxWin: l.MaxWin}
	}
	grants, err := a.s.sessions.OpenFreebets(ctx, sess)
	if err != nil {
		a.s.log.ErrorContext(ctx, "listing open freebets failed", "request_id", server.RequestID(ctx), "err", err)
	}
	for _, g := range grants {
		out.Freebets = append(out.Freebets, table.Freebet{Id: g.ID, Amount: g.Amount})
	}
	a.controls(ctx, sess, &out)
	return out
}

// GetCurrentRound answers the round snapshot.
func (a *api) GetCurrentRound(ctx context.Context, _ table.GetCurrentRoundRequestObject) (table.GetCurrentRoundResponseObject, error) {
	_, t, fail := a.session(ctx)
	if fail != nil {
		return *fail, nil
	}
	v, m := t.Round()
	if v.RoundID == "" {
		// The table has never played a round (its first leader is starting).
		return a.fail(ctx, http.StatusServiceUnavailable, table.ErrorCodeTableUnavailable), nil
	}
	return table.GetCurrentRound200JSONResponse(roundOf(v, m, a.s.now())), nil
}

func roundOf(v engine.RoundView, m int64, now time.Time) table.Round {
	r := table.Round{RoundId: v.RoundID, Phase: table.Phase(v.Phase), BettingEndsAt: millis(v.BettingEndsAt),
		ServerTime: millis(now), Multiplier: max(m, 100)}
	if !v.StartedAt.IsZero() {
		s := millis(v.StartedAt)
		r.StartedAt = &s
	}
	if v.Phase == engine.PhaseCrashed && v.Hash != "" {
		c, cp, h := millis(v.CrashedAt), v.CrashPoint, v.Hash
		r.CrashedAt, r.CrashPoint, r.Hash = &c, &cp, &h
	}
	return r
}

// PlaceBet places a bet on the current round.
func (a *api) PlaceBet(ctx context.Context, req table.PlaceBetRequestObject) (table.PlaceBetResponseObject, error) {
	at := receivedAt(ctx, a.s.now)
	sess, t, fail := a.session(ctx)
	if fail != nil {
		return *fail, nil
	}
	if sess.RealityCheckDue(a.s.sessions.Now()) {
		// Bets wait for the player's Continue; cashouts and cancellations never do.
		return a.fail(ctx, http.StatusConflict, table.ErrorCodeRealityCheckDue), nil
	}
	b := req.Body
	if b == nil || b.Amount < 1 || (b.AutoCashout != nil && *b.AutoCashout < 101) ||
		(b.FreebetId != nil && (len(*b.FreebetId) < 1 || len(*b.FreebetId) > 200)) {
		return a.fail(ctx, http.StatusBadRequest, table.ErrorCodeBadRequest), nil
	}
	br := engine.BetRequest{Amount: b.Amount, ReceivedAt: at}
	if b.AutoCashout != nil {
		br.AutoCashout = *b.AutoCashout
	}
	if b.FreebetId != nil {
		if sess.Demo {
			return a.fail(ctx, http.StatusUnprocessableEntity, table.ErrorCodeFreebetUnavailable), nil
		}
		br.FreebetID = *b.FreebetId
		// The amount must be the grant's value. A grant no longer open is left
		// to the engine, which substitutes one of equal value or refuses.
		grants, err := a.s.sessions.OpenFreebets(ctx, sess)
		if err != nil {
			return a.internal(ctx, "listing open freebets failed", err), nil
		}
		for _, g := range grants {
			if g.ID == br.FreebetID && g.Amount != b.Amount {
				return a.fail(ctx, http.StatusUnprocessableEntity, table.ErrorCodeFreebetUnavailable), nil
			}
		}
	}
	res, err := t.PlaceBet(ctx, sess.Player(), br)
	if err != nil {
		return a.refusal(ctx, err), nil
	}
	v := res.Bet
	return table.PlaceBet201JSONResponse{
		BetId: v.BetID, RoundId: v.RoundID, Amount: v.Amount, AutoCashout: autoOf(v.AutoCashout),
		FreebetId: v.FreebetID, Status: table.BetStatus(v.Status), Balance: max(res.Balance, 0),
	}, nil
}

func autoOf(a int64) *int64 {
	if a == 0 {
		return nil
	}
	return &a
}

// CashOut cashes a bet out at the multiplier of the moment the request was
// received (stamped before authentication, rate limiting or body reading).
func (a *api) CashOut(ctx context.Context, req table.CashOutRequestObject) (table.CashOutResponseObject, error) {
	at := receivedAt(ctx, a.s.now)
	sess, t, fail := a.session(ctx)
	if fail != nil {
		return *fail, nil
	}
	res, err := t.Cashout(ctx, sess.Player(), req.BetId, at)
	if errors.Is(err, round.ErrUnknownBet) {
		// Not in the current round: a bet of an earlier round is not live.
		// Past the action budget, the database is not asked why.
		if wait, over := overBudget(ctx); over {
			return errorResponse{status: http.StatusTooManyRequests, retryAfter: retryAfter(wait),
				body: a.s.errorBody(ctx, table.ErrorCodeRateLimited, nil)}, nil
		}
		rec, fail := a.findBet(ctx, sess, req.BetId)
		switch {
		case fail != nil:
			return *fail, nil
		case rec.Status == engine.StatusLost:
			return a.fail(ctx, http.StatusConflict, table.ErrorCodeRoundCrashed), nil
		case rec.Status == engine.StatusCashedOut:
			return cashedOut(sess, rec), nil
		default:
			return a.fail(ctx, http.StatusConflict, table.ErrorCodeCashoutNotAllowed), nil
		}
	}
	if errors.Is(err, round.ErrCashoutNotAllowed) {
		// Cashed out already (this cashout sent again after its answer was
		// lost, or its auto-cashout first): that cashout is the answer.
		rec, fail := a.findBet(ctx, sess, req.BetId)
		switch {
		case fail != nil:
			return *fail, nil
		case rec.Status == engine.StatusCashedOut:
			return cashedOut(sess, rec), nil
		}
	}
	if err != nil {
		return a.refusal(ctx, err), nil
	}
	// For real money the balance expected once the win, which leaves through
	// the queue, is delivered; the balance event of the delivered /win brings
	// the operator's own figure.
	return table.CashOut200JSONResponse{BetId: res.BetID, Multiplier: res.Multiplier, Payout: res.Payout, Balance: max(res.Balance, 0)}, nil
}

// cashedOut answers a cashout of rec, a bet cashed out already, with that
// cashout: its multiplier and payout, and the session's balance as read for
// this request.
func cashedOut(sess sessions.Session, rec *engine.BetRecord) table.CashOut200JSONResponse {
	var payout int64
	if rec.Payout != nil {
		payout = *rec.Payout
	}
	return table.CashOut200JSONResponse{BetId: rec.ID, Multiplier: rec.Multiplier, Payout: payout, Balance: max(sess.Balance, 0)}
}

// CancelBet withdraws a bet while its round is betting. Cancels of one bet
// are one cancel: while its round lasts, every repeat answers the first one's
// body (the engine shares it); after the round, a cancelled bet answers 200
// with the session's balance then.
func (a *api) CancelBet(ctx context.Context, req table.CancelBetRequestObject) (table.CancelBetResponseObject, error) {
	sess, t, fail := a.session(ctx)
	if fail != nil {
		return *fail, nil
	}
	res, err := t.Cancel(ctx, sess.Player(), req.BetId)
	if errors.Is(err, round.ErrUnknownBet) || errors.Is(err, round.ErrCancelNotAllowed) {
		rec, fail := a.findBet(ctx, sess, req.BetId)
		switch {
		case fail != nil:
			return *fail, nil
		case rec.Status == engine.StatusCancelled:
			// Cancelled in an earlier round: cancelling again answers 200 again.
			return table.CancelBet200JSONResponse{BetId: rec.ID, Status: table.BetStatus(engine.StatusCancelled),
				Balance: max(a.s.sessions.Balance(sess.Hash).Balance, 0)}, nil
		}
		cur, _ := t.Round()
		if cur.RoundID != rec.RoundID || cur.Phase != engine.PhaseBetting {
			return a.fail(ctx, http.StatusConflict, table.ErrorCodeBettingClosed), nil
		}
		return a.fail(ctx, http.StatusConflict, table.ErrorCodeCancelNotAllowed), nil
	}
	if err != nil {
		return a.refusal(ctx, err), nil
	}
	return table.CancelBet200JSONResponse{BetId: res.Bet.BetID, Status: table.BetStatus(res.Bet.Status), Balance: max(res.Balance, 0)}, nil
}

// findBet reads one bet of the session, to say why an action on it was
// refused; the answer when it cannot: 404 UNKNOWN_BET when the session has no
// bet with that id, 500 when the read failed.
func (a *api) findBet(ctx context.Context, sess sessions.Session, id string) (*engine.BetRecord, *errorResponse) {
	recs, err := a.s.records.Bets(ctx, engine.BetFilter{ID: id, SessionHash: sess.Hash})
	var r errorResponse
	switch {
	case err != nil:
		r = a.internal(ctx, "reading a bet failed", err)
	case len(recs) == 0:
		r = a.fail(ctx, http.StatusNotFound, table.ErrorCodeUnknownBet)
	default:
		return &recs[0], nil
	}
	return nil, &r
}

func limitOf(p *table.Limit) (int, bool) {
	if p == nil {
		return 20, true
	}
	return int(*p), *p >= 1 && *p <= 100
}

// listing reads what every list route starts from: the request's session and
// the page size of its limit parameter. When fail is not nil it is the answer.
func (a *api) listing(ctx context.Context, limit *table.Limit) (sess sessions.Session, n int, fail *errorResponse) {
	sess, ok := sessionFrom(ctx)
	if !ok {
		r := a.fail(ctx, http.StatusUnauthorized, table.ErrorCodeSessionExpired)
		return sess, 0, &r
	}
	n, ok = limitOf(limit)
	if !ok {
		r := a.fail(ctx, http.StatusBadRequest, table.ErrorCodeBadRequest)
		return sess, 0, &r
	}
	return sess, n, nil
}

// ListBets lists the player's bets in this game, from every session of the
// player (a relaunch keeps the history), most recent first; a demo session has
// no player, so it lists its own.
func (a *api) ListBets(ctx context.Context, req table.ListBetsRequestObject) (table.ListBetsResponseObject, error) {
	sess, n, fail := a.listing(ctx, req.Params.Limit)
	if fail != nil {
		return *fail, nil
	}
	var recs []engine.BetRecord
	var err error
	if sess.Demo || sess.PlayerID == "" {
		recs, err = a.s.records.Bets(ctx, engine.BetFilter{SessionHash: sess.Hash, NewestFirst: true, Limit: n})
	} else {
		// Every session of the player in this game.
		recs, err = a.s.records.Bets(ctx, engine.BetFilter{Operator: sess.Operator, PlayerID: sess.PlayerID,
			GameID: sess.GameID, NewestFirst: true, Limit: n})
	}
	if err != nil {
		return a.internal(ctx, "listing bets failed", err), nil
	}
	out := table.ListBets200JSONResponse{Items: make([]table.Bet, 0, len(recs))}
	for _, r := range recs {
		out.Items = append(out.Items, betOf(engine.ViewOf(r)))
	}
	return out, nil
}

// betOf is a bet as its player sees it.
func betOf(v engine.BetView) table.Bet {
	b := table.Bet{BetId: v.BetID, RoundId: v.RoundID, Amount: v.Amount, AutoCashout: autoOf(v.AutoCashout),
		FreebetId: v.FreebetID, Status: table.BetStatus(v.Status), PlacedAt: millis(v.PlacedAt)}
	switch v.Status {
	case engine.StatusCashedOut:
		m, p := max(v.Multiplier, 100), max(v.Payout, 0)
		b.Multiplier, b.Payout = &m, &p
	case engine.StatusLost:
		zero := int64(0)
		b.Payout = &zero
	}
	return b
}

// ListRounds lists the table's recent finished rounds.
func (a *api) ListRounds(ctx context.Context, req table.ListRoundsRequestObject) (table.ListRoundsResponseObject, error) {
	sess, n, fail := a.listing(ctx, req.Params.Limit)
	if fail != nil {
		return *fail, nil
	}
	recs, err := a.s.records.RecentRounds(ctx, sess.GameID, n)
	if err != nil {
		return a.internal(ctx, "listing rounds failed", err), nil
	}
	out := table.ListRounds200JSONResponse{Items: make([]table.RoundSummary, 0, len(recs))}
	for _, r := range recs {
		end := endOf(r)
		chain, pos := chainOf(r)
		out.Items = append(out.Items, table.RoundSummary{RoundId: r.ID, Status: table.RoundStatus(r.Status), CrashPoint: r.CrashPoint,
			Hash: r.Hash, ChainId: chain, Position: pos, StartedAt: startOf(r),
			CrashedAt: end.crashedAt, VoidedAt: end.voidedAt, VoidRule: end.rule})
	}
	return out, nil
}

// GetRound answers one finished round with the inputs to verify it.
func (a *api) GetRound(ctx context.Context, req table.GetRoundRequestObject) (table.GetRoundResponseObject, error) {
	_, t, fail := a.session(ctx)
	if fail != nil {
		return *fail, nil
	}
	r, err := t.EndedRound(ctx, req.RoundId)
	if err != nil {
		return a.refusal(ctx, err), nil
	}
	end := endOf(r)
	chain, pos := chainOf(r)
	return table.GetRound200JSONResponse{RoundId: r.ID, Status: table.RoundStatus(r.Status), CrashPoint: r.CrashPoint, Hash: r.Hash,
		ChainId: chain, Position: pos, StartedAt: startOf(r),
		CrashedAt: end.crashedAt, VoidedAt: end.voidedAt, VoidRule: end.rule}, nil
}

// chainOf is a round's chain and position as the API shows them: absent for
// a round played before chains were kept (migration 0007).
func chainOf(r engine.RoundRecord) (*string, *int64) {
	if r.ChainID == "" {
		return nil, nil
	}
	id, pos := r.ChainID, r.Position
	return &id, &pos
}

// startOf is an ended round's take-off as the API shows it: a round voided
// before take-off shows its betting's end.
func startOf(r engine.RoundRecord) int64 {
	if r.StartedAt.IsZero() {
		return r.BettingEndsAt.UnixMilli() // voided before take-off
	}
	return r.StartedAt.UnixMilli()
}

// roundEnd is how an ended round ended, as the API shows it: a finished
// round's crash, or a void round's voiding and the rule that settled it (a
// void round never crashed: no crashed_at).
type roundEnd struct {
	crashedAt, voidedAt *int64
	rule                *table.VoidRule
}

func endOf(r engine.RoundRecord) roundEnd {
	if r.Status != engine.RoundVoid {
		c := r.CrashedAt.UnixMilli()
		return roundEnd{crashedAt: &c}
	}
	var e roundEnd
	if !r.VoidedAt.IsZero() { // zero: voided before migration 0012 recorded when
		v := r.VoidedAt.UnixMilli()
		e.voidedAt = &v
	}
	if r.VoidRule != "" {
		rule := r.VoidRule
		e.rule = &rule
	}
	return e
}

// OpenStream is never reached: withStream upgrades the connection itself.
func (a *api) OpenStream(ctx context.Context, _ table.OpenStreamRequestObject) (table.OpenStreamResponseObject, error) {
	return a.fail(ctx, http.StatusBadRequest, table.ErrorCodeBadRequest), nil
}
