package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/crashstudio/crashgame/internal/sessions"
	"github.com/crashstudio/crashgame/internal/tickets"
)

// Sessions is the tables sessions and session_controls, and the sums of a
// session's bets, as package sessions declares its repository: it converts
// sessions' own types to this package's rows and back, and
// ErrSessionNotFound and ErrSessionControlsNotFound to sessions.ErrNotStored
// and sessions.ErrNoControls.
func (s *Store) Sessions() sessions.Repo { return sessionRepo{s} }

type sessionRepo struct{ s *Store }

func sessionRow(sess *sessions.Session) *SessionRecord {
	return &SessionRecord{
		IDHash: sess.Hash, Operator: sess.Operator, GameID: sess.GameID, Token: sess.Token, PlayerID: sess.PlayerID,
		PlayerName: sess.Name, Currency: sess.Currency, Language: sess.Language, Theme: sess.Theme,
		Demo: sess.Demo, Mobile: sess.Mobile, LobbyURL: sess.LobbyURL, DepositURL: sess.DepositURL,
		Balance: sess.Balance, CreatedAt: MillisOf(sess.CreatedAt), ExpiresAt: MillisOf(sess.ExpiresAt),
	}
}

func controlsRow(c *sessions.ControlsState) *SessionControlsRecord {
	return &SessionControlsRecord{
		IDHash: c.Hash, SessionClock: c.Controls.SessionClock,
		RealityCheckMinutes: c.Controls.RealityCheckMinutes, InactivityMinutes: c.Controls.InactivityMinutes,
		LastActionAt: MillisOf(c.LastAction), RealityCheckAckAt: MillisOf(c.RealityAck),
	}
}

func (r sessionRepo) InsertSession(ctx context.Context, sess sessions.Session, withControls bool) error {
	var c *SessionControlsRecord
	if withControls {
		c = controlsRow(&sessions.ControlsState{Hash: sess.Hash, Controls: sess.Controls, LastAction: sess.LastAction, RealityAck: sess.RealityAck})
	}
	return r.s.InsertSession(ctx, sessionRow(&sess), c)
}

func (r sessionRepo) SessionByHash(ctx context.Context, hash []byte) (sessions.Session, error) {
	rec, err := r.s.SessionByHash(ctx, hash)
	switch {
	case errors.Is(err, ErrSessionNotFound):
		return sessions.Session{}, fmt.Errorf("%w (%w)", sessions.ErrNotStored, err)
	case err != nil:
		return sessions.Session{}, err
	}
	return sessions.Session{
		Hash: rec.IDHash, Operator: rec.Operator, GameID: rec.GameID, Token: rec.Token, PlayerID: rec.PlayerID,
		Name: rec.PlayerName, Currency: rec.Currency, Language: rec.Language, Theme: rec.Theme,
		Demo: rec.Demo, Mobile: rec.Mobile, LobbyURL: rec.LobbyURL, DepositURL: rec.DepositURL,
		Balance: rec.Balance, CreatedAt: rec.CreatedAt.Time(), ExpiresAt: rec.ExpiresAt.Time(),
	}, nil
}

func (r sessionRepo) SessionControls(ctx context.Context, hash []byte) (sessions.ControlsState, error) {
	c, err := r.s.SessionControls(ctx, hash)
	switch {
	case errors.Is(err, ErrSessionControlsNotFound):
		return sessions.ControlsState{}, fmt.Errorf("%w (%w)", sessions.ErrNoControls, err)
	case err != nil:
		return sessions.ControlsState{}, err
	}
	return sessions.ControlsState{
		Hash: c.IDHash,
		Controls: tickets.Controls{SessionClock: c.SessionClock, RealityCheckMinutes: c.RealityCheckMinutes,
			InactivityMinutes: c.InactivityMinutes},
		LastAction: c.LastActionAt.Time(), RealityAck: c.RealityCheckAckAt.Time(),
	}, nil
}

func (r sessionRepo) WriteSessionStates(ctx context.Context, balances []sessions.BalanceChange, controls []sessions.ControlsState) error {
	bs := make([]SessionBalance, len(balances))
	for i, b := range balances {
		bs[i] = SessionBalance{IDHash: b.Hash, Balance: b.Balance, Operator: b.Operator, PlayerID: b.PlayerID,
			Currency: b.Currency, At: MillisOf(b.At)}
	}
	cs := make([]*SessionControlsRecord, len(controls))
	for i := range controls {
		cs[i] = controlsRow(&controls[i])
	}
	return r.s.WriteSessionStates(ctx, bs, cs)
}

func (r sessionRepo) SessionBetTotals(ctx context.Context, sessionHash []byte) ([]sessions.BetTotal, error) {
	totals, err := r.s.SessionBetTotals(ctx, sessionHash)
	if err != nil {
		return nil, err
	}
	out := make([]sessions.BetTotal, len(totals))
	for i, t := range totals {
		out[i] = sessions.BetTotal{Status: t.Status, Freebet: t.Freebet, Count: t.Count, Amount: t.Amount, Payout: t.Payout}
	}
	return out, nil
}

func (r sessionRepo) SessionHasBets(ctx context.Context, sessionHash []byte, statuses ...string) (bool, error) {
	return r.s.SessionHasBets(ctx, sessionHash, statuses...)
}

func (r sessionRepo) LaunchControls(ctx context.Context, operator, playerID string) (tickets.Controls, bool, error) {
	c, ok, err := r.s.LaunchControls(ctx, operator, playerID)
	if err != nil || !ok {
		return tickets.Controls{}, ok, err
	}
	return tickets.Controls{SessionClock: c.SessionClock, RealityCheckMinutes: c.RealityCheckMinutes,
		InactivityMinutes: c.InactivityMinutes}, true, nil
}
