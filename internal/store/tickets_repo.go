package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/crashstudio/crashgame/internal/tickets"
)

// Tickets is the tickets table as package tickets declares its repository:
// it converts tickets' own types to the rows of TicketRecord and back, and
// this package's refusals to tickets' (ErrTicketNotFound is
// tickets.ErrUnknown, ErrTicketUsed tickets.ErrUsed, ErrTicketExpired
// tickets.ErrExpired).
func (s *Store) Tickets() tickets.Repository { return ticketRepo{s} }

type ticketRepo struct{ s *Store }

func (r ticketRepo) Insert(ctx context.Context, t tickets.Stored) error {
	sess := t.Session
	return r.s.InsertTicket(ctx, &TicketRecord{
		Hash: t.Hash, Operator: sess.Operator, GameID: sess.GameID, Token: sess.Token, PlayerID: sess.PlayerID,
		Currency: sess.Currency, Language: sess.Language, PlayerName: sess.PlayerName, Theme: sess.Theme,
		Demo: sess.Demo, Mobile: sess.Mobile, LobbyURL: sess.LobbyURL, DepositURL: sess.DepositURL,
		Controls: TicketControls{SessionClock: sess.Controls.SessionClock,
			RealityCheckMinutes: sess.Controls.RealityCheckMinutes, InactivityMinutes: sess.Controls.InactivityMinutes},
		CreatedAt: MillisOf(t.CreatedAt), ExpiresAt: MillisOf(t.ExpiresAt),
	})
}

func (r ticketRepo) Redeem(ctx context.Context, hash []byte, now time.Time) (tickets.Session, error) {
	rec, err := r.s.RedeemTicket(ctx, hash, now)
	switch {
	case errors.Is(err, ErrTicketNotFound):
		return tickets.Session{}, fmt.Errorf("%w (%w)", tickets.ErrUnknown, err)
	case errors.Is(err, ErrTicketUsed):
		return tickets.Session{}, fmt.Errorf("%w (%w)", tickets.ErrUsed, err)
	case errors.Is(err, ErrTicketExpired):
		return tickets.Session{}, fmt.Errorf("%w (%w)", tickets.ErrExpired, err)
	case err != nil:
		return tickets.Session{}, err
	}
	return tickets.Session{
		Operator: rec.Operator, GameID: rec.GameID, Token: rec.Token, PlayerID: rec.PlayerID,
		Currency: rec.Currency, Language: rec.Language, PlayerName: rec.PlayerName, Theme: rec.Theme,
		Demo: rec.Demo, Mobile: rec.Mobile, LobbyURL: rec.LobbyURL, DepositURL: rec.DepositURL,
		Controls: tickets.Controls{SessionClock: rec.Controls.SessionClock,
			RealityCheckMinutes: rec.Controls.RealityCheckMinutes, InactivityMinutes: rec.Controls.InactivityMinutes},
	}, nil
}
