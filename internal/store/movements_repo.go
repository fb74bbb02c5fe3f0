package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/crashstudio/crashgame/internal/movements"
	"github.com/crashstudio/crashgame/internal/wallet"
)

// Movements is the movements table (with its re-deliveries and the debits of
// the bets table) as package movements declares its repository: it converts
// movements' own types to the rows of MovementRecord and back, and this
// package's refusals to movements' (ErrMovementExists and ErrMovementKeyTaken
// are movements.ErrDuplicateMovement, ErrMovementBetTaken
// movements.ErrDebitSettled, ErrMovementNotFound and ErrNotRedeliverable
// movements' own).
func (s *Store) Movements() movements.Repository { return movementRepo{s} }

type movementRepo struct{ s *Store }

// MovementOf converts a stored movement to package movements' record.
func MovementOf(r *MovementRecord) movements.MovementRecord {
	return movements.MovementRecord{
		TransactionID: r.TransactionID, Kind: movements.MovementKind(r.Kind), Operator: r.Operator, GameID: r.GameID,
		Currency: r.Currency, PlayerID: r.PlayerID, Token: r.Token, RoundID: r.RoundID, BetID: r.BetID,
		Amount: r.Amount, WinType: wallet.WinType(r.WinType), FreebetID: r.FreebetID, Reason: r.Reason,
		Status: movements.MovementStatus(r.Status), Attempts: r.Attempts, NextAttemptAt: r.NextAttemptAt.Time(),
		ClaimedBy: r.ClaimedBy, LastError: r.LastError, LastRequestID: r.LastRequestID, OperatorTxID: r.OperatorTxID,
		BalanceAfter: r.BalanceAfter, CreatedAt: r.CreatedAt.Time(), DoneAt: r.DoneAt.Time(),
	}
}

// movementsOf converts stored movements.
func movementsOf(recs []MovementRecord) []movements.MovementRecord {
	out := make([]movements.MovementRecord, len(recs))
	for i := range recs {
		out[i] = MovementOf(&recs[i])
	}
	return out
}

func debitOf(d DebitRecord) movements.Debit {
	return movements.Debit{BetID: d.ID, Amount: d.Amount, FreebetID: d.FreebetID}
}

func (r movementRepo) Debit(ctx context.Context, betID string) (movements.Debit, bool, error) {
	d, ok, err := r.s.Debit(ctx, betID)
	return debitOf(d), ok, err
}

func (r movementRepo) Debits(ctx context.Context, betIDs []string) (map[string]movements.Debit, error) {
	ds, err := r.s.Debits(ctx, betIDs)
	if err != nil {
		return nil, err
	}
	out := make(map[string]movements.Debit, len(ds))
	for id, d := range ds {
		out[id] = debitOf(d)
	}
	return out, nil
}

// newMovementRow is m as a new pending movement, created and due at now.
func newMovementRow(m *movements.Movement, now Millis) MovementRecord {
	return MovementRecord{
		TransactionID: m.TransactionID, Kind: string(m.Kind), Operator: m.Operator, GameID: m.GameID,
		Currency: m.Currency, PlayerID: m.PlayerID, Token: m.Token, RoundID: m.RoundID, BetID: m.BetID,
		Amount: m.Amount, WinType: string(m.WinType), FreebetID: m.FreebetID, Reason: m.Reason,
		Status: MovementPending, NextAttemptAt: now, CreatedAt: now,
	}
}

func (r movementRepo) InsertMovement(ctx context.Context, m movements.Movement, now time.Time) error {
	row := newMovementRow(&m, MillisOf(now))
	err := r.s.InsertMovement(ctx, &row)
	switch {
	case errors.Is(err, ErrMovementExists):
		return fmt.Errorf("%w (%w)", movements.ErrDuplicateMovement, err)
	case errors.Is(err, ErrMovementBetTaken):
		return fmt.Errorf("%w (%w)", movements.ErrDebitSettled, err)
	}
	return err
}

func (r movementRepo) InsertMovements(ctx context.Context, ms []movements.Movement, now time.Time) error {
	at := MillisOf(now)
	rows := make([]MovementRecord, len(ms))
	for i := range ms {
		rows[i] = newMovementRow(&ms[i], at)
	}
	err := r.s.InsertMovements(ctx, rows)
	if errors.Is(err, ErrMovementKeyTaken) {
		return fmt.Errorf("%w (%w)", movements.ErrDuplicateMovement, err)
	}
	return err
}

func (r movementRepo) ListMovements(ctx context.Context, f movements.MovementFilter) ([]movements.MovementRecord, error) {
	recs, err := r.s.ListMovements(ctx, MovementFilter{RoundID: f.RoundID, PlayerID: f.PlayerID, Operator: f.Operator, Status: f.Status, BetIDs: f.BetIDs, Limit: f.Limit})
	if err != nil {
		return nil, err
	}
	return movementsOf(recs), nil
}

func (r movementRepo) ClaimMovements(ctx context.Context, c movements.Claim) ([]movements.MovementRecord, error) {
	recs, err := r.s.ClaimMovements(ctx, MovementClaim{Worker: c.Worker, Now: c.Now, LeaseEnd: c.LeaseEnd, Limit: c.Limit, SkipOperators: c.SkipOperators})
	if err != nil {
		return nil, err
	}
	return movementsOf(recs), nil
}

func (r movementRepo) NextDueMovement(ctx context.Context, skipOperators []string) (time.Time, bool, error) {
	return r.s.NextDueMovement(ctx, skipOperators)
}

func (r movementRepo) RecordMovementAttempts(ctx context.Context, changes []movements.AttemptChange) ([]bool, error) {
	rows := make([]MovementAttempt, len(changes))
	for i, c := range changes {
		rows[i] = MovementAttempt{
			TransactionID: c.TransactionID, Worker: c.Worker, Status: string(c.Status), Attempts: c.Attempts,
			NextAttemptAt: MillisOf(c.NextAttemptAt), LastError: c.LastError, LastRequestID: c.LastRequestID,
			DoneAt: MillisOf(c.DoneAt), OperatorTxID: c.OperatorTxID, BalanceAfter: c.BalanceAfter,
		}
	}
	return r.s.RecordMovementAttempts(ctx, rows)
}

func (r movementRepo) CountMovements(ctx context.Context, statuses ...string) (map[string]int64, error) {
	return r.s.CountMovements(ctx, statuses...)
}

func (r movementRepo) RedeliverMovement(ctx context.Context, transactionID, operator, by string, at time.Time) (movements.MovementRecord, bool, error) {
	rec, redelivered, err := r.s.RedeliverMovement(ctx, transactionID, operator, by, MillisOf(at))
	switch {
	case errors.Is(err, ErrMovementNotFound):
		return movements.MovementRecord{}, false, fmt.Errorf("%w (%w)", movements.ErrMovementNotFound, err)
	case errors.Is(err, ErrNotRedeliverable):
		return movements.MovementRecord{}, false, fmt.Errorf("%w (%w)", movements.ErrNotRedeliverable, err)
	case err != nil:
		return movements.MovementRecord{}, false, err
	}
	return MovementOf(&rec), redelivered, nil
}
