package backoffice

import (
	"github.com/crashstudio/crashgame/gen/game"
	"github.com/crashstudio/crashgame/internal/movements"
)

// The back office's values in their published shapes: one function per
// shape, for every route that shows them. The operator routes answer them
// (game.v1.yaml: BackOfficeRound, BackOfficeBet, BetMovement, Redelivery,
// RoundPhase), and so do the player API's replay and the round's support
// page (table.v1.yaml: ReplayRound, ReplayBet, ReplayMovement,
// ReplayRedelivery, ReplayPhase): each document declares the shapes itself,
// and gen/table is generated with gen/game's types for them
// (api/table.overlay.codegen.yaml). An empty or zero optional value is
// absent.

// PublishedRound is r as the documents show a round.
func PublishedRound(r Round) game.BackOfficeRound {
	out := game.BackOfficeRound{RoundId: r.ID, GameId: r.GameID, Seq: r.Seq, Status: r.Status,
		BettingEndsAt: r.BettingEndsAt.UnixMilli(), Phases: make([]game.RoundPhase, len(r.Phases))}
	for i, p := range r.Phases {
		out.Phases[i] = game.RoundPhase{Phase: p.Name, At: p.At.UnixMilli()}
	}
	if r.ChainID != "" {
		out.ChainId, out.Position = &r.ChainID, &r.Position
	}
	if r.Hash != "" {
		out.Hash, out.CrashPoint = &r.Hash, &r.CrashPoint
	}
	if r.Salt != "" {
		out.Salt = &r.Salt
	}
	return out
}

// PublishedBets are bets as the documents show them, each with its wallet
// calls.
func PublishedBets(bets []Bet) []game.BackOfficeBet {
	out := make([]game.BackOfficeBet, len(bets))
	for i, b := range bets {
		g := game.BackOfficeBet{BetId: b.ID, RoundId: b.RoundID, PlayerId: b.PlayerID, Currency: b.Currency, Amount: b.Amount,
			FreebetId: b.FreebetID, Status: b.Status, PlacedAt: b.PlacedAt.UnixMilli(), Payout: b.Payout,
			Movements: make([]game.BetMovement, len(b.Movements))}
		if b.AutoCashout != 0 {
			g.AutoCashout = &b.AutoCashout
		}
		if b.Multiplier != 0 {
			g.Multiplier = &b.Multiplier
		}
		if b.Refusal != "" {
			g.Refusal = &b.Refusal
		}
		if !b.SettledAt.IsZero() {
			at := b.SettledAt.UnixMilli()
			g.SettledAt = &at
		}
		for j, m := range b.Movements {
			g.Movements[j] = PublishedMovement(m)
		}
		out[i] = g
	}
	return out
}

// PublishedMovement is m as the documents show a bet's wallet call.
func PublishedMovement(m Movement) game.BetMovement {
	out := game.BetMovement{TransactionId: m.TransactionID, Kind: m.Kind, Amount: m.Amount, Status: m.Status,
		Attempts: PublishedAttempts(m.Attempts), CreatedAt: m.CreatedAt.UnixMilli(), Redeliveries: PublishedRedeliveries(m.Redeliveries)}
	if m.OperatorTxID != "" {
		out.OperatorTransactionId = &m.OperatorTxID
	}
	if m.LastError != "" {
		out.LastError = &m.LastError
	}
	if m.WinType != "" {
		out.WinType = &m.WinType
	}
	if m.Reason != "" {
		out.Reason = &m.Reason
	}
	if !m.DeliveredAt.IsZero() {
		at := m.DeliveredAt.UnixMilli()
		out.DeliveredAt = &at
	}
	return out
}

// PublishedRedeliveries are a movement's re-deliveries as the documents show
// them (never nil: the documents require the array).
func PublishedRedeliveries(rs []movements.Redelivery) []game.Redelivery {
	out := make([]game.Redelivery, len(rs))
	for i, r := range rs {
		out[i] = game.Redelivery{Number: r.Number, RequestedAt: r.RequestedAt.UnixMilli(), RequestedBy: r.RequestedBy,
			AttemptsBefore: PublishedAttempts(r.AttemptsBefore), LastErrorBefore: r.LastErrorBefore}
	}
	return out
}

// PublishedAttempts is a count of a movement's attempts as the documents
// show it, an int32: the queue makes at most wallet.MaxAttempts (20) per
// delivery, far below its limit.
func PublishedAttempts(n int) int32 {
	return int32(n) //nolint:gosec // G115: at most 20 per delivery, see above
}
