package operatorsim

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/uptrace/bun"
)

// errNotFound marks an admin request naming a player or token that does not exist.
var errNotFound = errors.New("not found")

// errInvalid marks an admin request that breaks a rule of the ledger.
var errInvalid = errors.New("invalid")

// seedNames are the names of seeded test players, in order.
var seedNames = []string{
	"Joana Silva", "Pedro Santos", "Ana Oliveira", "Lucas Souza", "Mariana Costa",
	"Rafael Pereira", "Beatriz Lima", "Gabriel Almeida", "Camila Ferreira", "Thiago Rodrigues",
}

// seed creates players player-0001 .. player-<n> with balance cents each,
// unless they exist (a file ledger keeps its balances across restarts).
func (l *ledger) seed(ctx context.Context, n int, balance int64, currency string) error {
	for i := 1; i <= n; i++ {
		name := seedNames[(i-1)%len(seedNames)]
		if i > len(seedNames) {
			name = fmt.Sprintf("%s %d", name, i)
		}
		p := &playerRow{
			PlayerID: fmt.Sprintf("player-%04d", i), Name: name, Currency: currency,
			Balance: balance, CreatedAt: l.now().UnixMilli(),
		}
		if _, err := l.db.NewInsert().Model(p).On("CONFLICT (player_id) DO NOTHING").Exec(ctx); err != nil {
			return fmt.Errorf("seed player %d: %w", i, err)
		}
	}
	return nil
}

// createPlayer inserts a player. An empty id gets a random one.
func (l *ledger) createPlayer(ctx context.Context, p *playerRow) error {
	if p.PlayerID == "" {
		id, err := randomString(9)
		if err != nil {
			return err
		}
		p.PlayerID = "player-" + id
	}
	if !isCurrency(p.Currency) {
		return fmt.Errorf("%w: currency %q is not three upper-case letters", errInvalid, p.Currency)
	}
	if p.Balance < 0 {
		return fmt.Errorf("%w: balance %d is negative", errInvalid, p.Balance)
	}
	p.CreatedAt = l.now().UnixMilli()
	res, err := l.db.NewInsert().Model(p).On("CONFLICT (player_id) DO NOTHING").Exec(ctx)
	if err != nil {
		return fmt.Errorf("create player: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return fmt.Errorf("%w: player %s already exists", errInvalid, p.PlayerID)
	}
	return nil
}

// fund adds amount cents (negative: withdraws, never below zero). Deposits are
// the operator's own business, not movements of the game: they are not rows
// of transactions and not part of the reconcile view.
func (l *ledger) fund(ctx context.Context, playerID string, amount int64) (*playerRow, error) {
	var p *playerRow
	err := l.inTx(ctx, func(tx bun.Tx) error {
		res, err := tx.NewUpdate().Model((*playerRow)(nil)).Set("balance = balance + ?", amount).
			Where("player_id = ?", playerID).Where("balance + ? >= 0", amount).Exec(ctx)
		if err != nil {
			return fmt.Errorf("fund player: %w", err)
		}
		if n, _ := res.RowsAffected(); n != 1 {
			if p, err = getPlayer(ctx, tx, playerID); err != nil {
				return err
			}
			if p == nil {
				return fmt.Errorf("%w: player", errNotFound)
			}
			return fmt.Errorf("%w: balance %d cannot go below zero", errInvalid, p.Balance)
		}
		p, err = getPlayer(ctx, tx, playerID)
		return err
	})
	return p, err
}

// setBlocked bars (or clears) a player from betting and entering.
func (l *ledger) setBlocked(ctx context.Context, playerID string, blocked bool) error {
	res, err := l.db.NewUpdate().Model((*playerRow)(nil)).Set("blocked = ?", blocked).
		Where("player_id = ?", playerID).Exec(ctx)
	if err != nil {
		return fmt.Errorf("block player: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return fmt.Errorf("%w: player", errNotFound)
	}
	return nil
}

// issueToken opens a session: a random token of 32 URL-safe characters (at
// least 16 and never the player id, as /v1/launch requires: GAME-23).
func (l *ledger) issueToken(ctx context.Context, playerID string, ttl time.Duration) (*sessionRow, error) {
	if ttl <= 0 {
		ttl = l.tokenTTL
	}
	token, err := randomString(24)
	if err != nil {
		return nil, err
	}
	now := l.now()
	s := &sessionRow{Token: token, PlayerID: playerID, CreatedAt: now.UnixMilli(), ExpiresAt: now.Add(ttl).UnixMilli()}
	err = l.inTx(ctx, func(tx bun.Tx) error {
		p, err := getPlayer(ctx, tx, playerID)
		if err != nil {
			return err
		}
		if p == nil {
			return fmt.Errorf("%w: player", errNotFound)
		}
		if _, err := tx.NewInsert().Model(s).Exec(ctx); err != nil {
			return fmt.Errorf("insert session: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// endToken revokes a token, or with expire set moves its expiry to now.
func (l *ledger) endToken(ctx context.Context, token string, expire bool) error {
	q := l.db.NewUpdate().Model((*sessionRow)(nil)).Where("token = ?", token)
	if expire {
		q = q.Set("expires_at = ?", l.now().UnixMilli())
	} else {
		q = q.Set("revoked = ?", true)
	}
	res, err := q.Exec(ctx)
	if err != nil {
		return fmt.Errorf("end session: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return fmt.Errorf("%w: token", errNotFound)
	}
	return nil
}

// grantFreebet records a grant. Repeating an id is a no-op, whatever the
// amount (the first one prevails, as on the game's side: FB-15, FB-17).
func (l *ledger) grantFreebet(ctx context.Context, g *grantRow) error {
	if g.GrantID == "" || g.Amount <= 0 {
		return fmt.Errorf("%w: a grant needs an id and a positive amount", errInvalid)
	}
	if g.Quantity == 0 {
		g.Quantity = 1
	}
	if g.Quantity < 1 || g.Quantity > 1000 {
		return fmt.Errorf("%w: quantity %d is outside 1..1000", errInvalid, g.Quantity)
	}
	g.CreatedAt = l.now().UnixMilli()
	return l.inTx(ctx, func(tx bun.Tx) error {
		p, err := getPlayer(ctx, tx, g.PlayerID)
		if err != nil {
			return err
		}
		if p == nil {
			return fmt.Errorf("%w: player", errNotFound)
		}
		if _, err := tx.NewInsert().Model(g).On("CONFLICT (player_id, grant_id) DO NOTHING").Exec(ctx); err != nil {
			return fmt.Errorf("insert grant: %w", err)
		}
		return nil
	})
}

func (l *ledger) players(ctx context.Context) ([]playerRow, error) {
	var ps []playerRow
	if err := l.db.NewSelect().Model(&ps).Order("player_id").Scan(ctx); err != nil {
		return nil, fmt.Errorf("list players: %w", err)
	}
	return ps, nil
}

func (l *ledger) player(ctx context.Context, playerID string) (*playerRow, error) {
	p, err := getPlayer(ctx, l.db, playerID)
	if err == nil && p == nil {
		err = fmt.Errorf("%w: player", errNotFound)
	}
	return p, err
}

// movements lists the ledger in order, of one player or of all (""); with
// limit above 0, only the last limit movements.
func (l *ledger) movements(ctx context.Context, playerID string, limit int) ([]movementRow, error) {
	var ms []movementRow
	q := l.db.NewSelect().Model(&ms).Order("id DESC")
	if playerID != "" {
		q = q.Where("player_id = ?", playerID)
	}
	if limit > 0 {
		q = q.Limit(int64(limit))
	}
	if err := q.Scan(ctx); err != nil {
		return nil, fmt.Errorf("list movements: %w", err)
	}
	slices.Reverse(ms)
	return ms, nil
}

// randomString returns n random bytes, base64url-encoded (4n/3 characters).
func randomString(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("random: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}
