package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/crashstudio/crashgame/internal/freebets"
)

// Freebets is the freebet tables as package freebets declares its
// repository: it converts freebets' own types to the rows of
// FreebetSourceRecord and FreebetGrantRecord and back, and this package's
// refusals to freebets' (ErrFreebetGrantNotFound is freebets.ErrGrantNotFound,
// ErrFreebetGrantNotOpen freebets.ErrGrantNotOpen, ErrFreebetGrantNotSpent
// freebets.ErrGrantNotSpent).
func (s *Store) Freebets() freebets.Repo { return freebetRepo{s} }

type freebetRepo struct{ s *Store }

func (r freebetRepo) InTx(ctx context.Context, fn func(ctx context.Context) error) error {
	return r.s.InTx(ctx, fn)
}

func (r freebetRepo) KnownSources(ctx context.Context, operator, playerID string, ids []string) ([]string, error) {
	return r.s.KnownFreebetSources(ctx, operator, playerID, ids)
}

func (r freebetRepo) InsertSources(ctx context.Context, sources []freebets.Source) ([]string, error) {
	recs := make([]FreebetSourceRecord, len(sources))
	for i, src := range sources {
		recs[i] = FreebetSourceRecord{Operator: src.Owner.Operator, PlayerID: src.Owner.PlayerID, SourceID: src.ID,
			Currency: src.Owner.Currency, Amount: src.Amount, Quantity: src.Quantity, ReceivedAt: MillisOf(src.ReceivedAt)}
	}
	return r.s.InsertFreebetSources(ctx, recs)
}

func (r freebetRepo) InsertGrants(ctx context.Context, grants []freebets.OwnedGrant) (int, error) {
	recs := make([]FreebetGrantRecord, len(grants))
	for i, g := range grants {
		recs[i] = FreebetGrantRecord{Operator: g.Owner.Operator, PlayerID: g.Owner.PlayerID, GrantID: g.ID,
			SourceID: g.SourceID, Currency: g.Currency, Amount: g.Amount, State: string(g.State), CreatedAt: MillisOf(g.Created)}
	}
	return r.s.InsertFreebetGrants(ctx, recs)
}

func (r freebetRepo) OpenGrants(ctx context.Context, owner freebets.Owner) ([]freebets.Grant, error) {
	recs, err := r.s.OpenFreebetGrants(ctx, ownerOf(owner))
	if err != nil {
		return nil, err
	}
	out := make([]freebets.Grant, len(recs))
	for i := range recs {
		out[i] = grantOf(&recs[i])
	}
	return out, nil
}

func (r freebetRepo) Grant(ctx context.Context, owner freebets.Owner, id string) (freebets.Grant, error) {
	return grantOrRefusal(r.s.FreebetGrant(ctx, ownerOf(owner), id))
}

func (r freebetRepo) SpendGrant(ctx context.Context, owner freebets.Owner, id string, at time.Time) (freebets.Grant, error) {
	return grantOrRefusal(r.s.SpendFreebetGrant(ctx, ownerOf(owner), id, MillisOf(at)))
}

func (r freebetRepo) OldestOpenGrant(ctx context.Context, owner freebets.Owner, amount int64) (int64, error) {
	seq, err := r.s.OldestOpenFreebetGrant(ctx, ownerOf(owner), amount)
	return seq, freebetRefusal(err)
}

func (r freebetRepo) SpendGrantBySeq(ctx context.Context, seq int64, at time.Time) (freebets.Grant, error) {
	return grantOrRefusal(r.s.SpendFreebetGrantBySeq(ctx, seq, MillisOf(at)))
}

func (r freebetRepo) ReturnGrant(ctx context.Context, owner freebets.Owner, id string) error {
	return freebetRefusal(r.s.ReturnFreebetGrant(ctx, ownerOf(owner), id))
}

func ownerOf(o freebets.Owner) FreebetOwner {
	return FreebetOwner{Operator: o.Operator, PlayerID: o.PlayerID, Currency: o.Currency}
}

func grantOf(r *FreebetGrantRecord) freebets.Grant {
	return freebets.Grant{ID: r.GrantID, SourceID: r.SourceID, Amount: r.Amount, Currency: r.Currency,
		State: freebets.State(r.State), Seq: r.Seq, Created: r.CreatedAt.Time(), Spent: r.SpentAt.Time()}
}

func grantOrRefusal(rec *FreebetGrantRecord, err error) (freebets.Grant, error) {
	if err != nil {
		return freebets.Grant{}, freebetRefusal(err)
	}
	return grantOf(rec), nil
}

// freebetRefusal is err with freebets' name for a refusal of this package.
func freebetRefusal(err error) error {
	switch {
	case errors.Is(err, ErrFreebetGrantNotFound):
		return fmt.Errorf("%w (%w)", freebets.ErrGrantNotFound, err)
	case errors.Is(err, ErrFreebetGrantNotOpen):
		return fmt.Errorf("%w (%w)", freebets.ErrGrantNotOpen, err)
	case errors.Is(err, ErrFreebetGrantNotSpent):
		return fmt.Errorf("%w (%w)", freebets.ErrGrantNotSpent, err)
	}
	return err
}
