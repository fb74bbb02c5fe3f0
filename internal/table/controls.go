package table

import (
	"context"
	"net/http"

	"github.com/crashstudio/crashgame/gen/table"
	"github.com/crashstudio/crashgame/internal/server"
	"github.com/crashstudio/crashgame/internal/sessions"
)

// The responsible gambling controls of a session (tickets.Controls), as the
// player API carries and enforces them; package sessions keeps their state.

// playerActions is the strict middleware that tells package sessions of every
// player action, before the handler runs: it resets the inactivity clock.
// Reads, polling and the stream are not actions. A refused action is still one
// (the player is there).
var playerActions = map[string]bool{
	"PlaceBet": true, "CashOut": true, "CancelBet": true, "AcknowledgeRealityCheck": true,
}

func (s *Server) actions(f table.StrictHandlerFunc, operationID string) table.StrictHandlerFunc {
	if !playerActions[operationID] {
		return f
	}
	return func(ctx context.Context, w http.ResponseWriter, r *http.Request, request any) (any, error) {
		if sess, ok := sessionFrom(ctx); ok {
			s.sessions.Acted(sess.Hash)
		}
		return f(ctx, w, r, request)
	}
}

func (e errorResponse) VisitAcknowledgeRealityCheckResponse(w http.ResponseWriter) error {
	return e.visit(w)
}

// AcknowledgeRealityCheck is the player's Continue on a reality check.
func (a *api) AcknowledgeRealityCheck(ctx context.Context, _ table.AcknowledgeRealityCheckRequestObject) (table.AcknowledgeRealityCheckResponseObject, error) {
	sess, ok := sessionFrom(ctx)
	if !ok {
		return a.fail(ctx, http.StatusUnauthorized, table.ErrorCodeSessionExpired), nil
	}
	now, err := a.s.sessions.AcknowledgeRealityCheck(sess.Hash)
	if err != nil {
		return a.fail(ctx, http.StatusUnauthorized, table.ErrorCodeSessionExpired), nil
	}
	now.ID, now.Balance = sess.ID, sess.Balance // the id is not stored; the balance as Get read it
	return table.AcknowledgeRealityCheck200JSONResponse(a.sessionBody(ctx, now)), nil
}

// controls adds the session's lobby and deposit addresses and its responsible
// gambling state to a session answer. The net position is read from the
// session's bets only when a control shows it.
func (a *api) controls(ctx context.Context, sess sessions.Session, out *table.Session) {
	if sess.LobbyURL != "" {
		u := sess.LobbyURL
		out.LobbyUrl = &u
	}
	if sess.DepositURL != "" {
		u := sess.DepositURL
		out.DepositUrl = &u
	}
	c := sess.Controls
	if !c.SessionClock && c.RealityCheckMinutes == 0 && c.InactivityMinutes == 0 {
		return
	}
	now := a.s.sessions.Now()
	rg := &table.ResponsibleGamblingState{
		SessionStartedAt: millis(sess.CreatedAt), ServerTime: millis(now), SessionClock: c.SessionClock,
	}
	if c.SessionClock || c.RealityCheckMinutes > 0 {
		n, err := a.s.sessions.NetPosition(ctx, sess)
		if err != nil {
			a.s.log.ErrorContext(ctx, "reading the net position failed", "request_id", server.RequestID(ctx), "err", err)
		} else {
			staked, won, net := n.Staked, n.Won, n.Net()
			rg.Staked, rg.Won, rg.Net = &staked, &won, &net
		}
	}
	if c.RealityCheckMinutes > 0 {
		m, at, due := int32Of(c.RealityCheckMinutes), millis(sess.RealityCheckAt()), sess.RealityCheckDue(now)
		rg.RealityCheckMinutes, rg.RealityCheckAt, rg.RealityCheckDue = &m, &at, &due
	}
	if c.InactivityMinutes > 0 {
		m, at := int32Of(c.InactivityMinutes), millis(sess.IdleAt())
		rg.InactivityTimeoutMinutes, rg.InactiveAt = &m, &at
	}
	out.ResponsibleGambling = rg
}
