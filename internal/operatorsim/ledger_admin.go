package operatorsim

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/crashstudio/crashgame/internal/store/ledger"
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
func (l *teller) seed(ctx context.Context, n int, balance int64, currency string) error {
	for i := 1; i <= n; i++ {
		name := seedNames[(i-1)%len(seedNames)]
		if i > len(seedNames) {
			name = fmt.Sprintf("%s %d", name, i)
		}
		p := &ledger.PlayerRecord{
			PlayerID: fmt.Sprintf("player-%04d", i), Name: name, Currency: currency,
			Balance: balance, CreatedAt: l.now().UnixMilli(),
		}
		if err := l.store.InsertPlayer(ctx, p); err != nil && !errors.Is(err, ledger.ErrDuplicate) {
			return fmt.Errorf("seed player %d: %w", i, err)
		}
	}
	return nil
}

// createPlayer inserts a player. An empty id gets a random one.
func (l *teller) createPlayer(ctx context.Context, p *ledger.PlayerRecord) error {
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
	err := l.store.InsertPlayer(ctx, p)
	if errors.Is(err, ledger.ErrDuplicate) {
		return fmt.Errorf("%w: player %s already exists", errInvalid, p.PlayerID)
	}
	if err != nil {
		return fmt.Errorf("create player: %w", err)
	}
	return nil
}

// fund adds amount cents (negative: withdraws, never below zero). Deposits are
// the operator's own business, not movements of the game: they are not rows
// of transactions and not part of the reconcile view.
func (l *teller) fund(ctx context.Context, playerID string, amount int64) (*ledger.PlayerRecord, error) {
	var p *ledger.PlayerRecord
	err := l.store.InTx(ctx, func(ctx context.Context) error {
		err := l.store.AddBalance(ctx, playerID, amount)
		if err != nil && !errors.Is(err, ledger.ErrBalance) {
			return fmt.Errorf("fund player: %w", err)
		}
		if err != nil { // no such player, or the balance would go below zero
			if p, err = l.getPlayer(ctx, playerID); err != nil {
				return err
			}
			if p == nil {
				return fmt.Errorf("%w: player", errNotFound)
			}
			return fmt.Errorf("%w: balance %d cannot go below zero", errInvalid, p.Balance)
		}
		p, err = l.getPlayer(ctx, playerID)
		return err
	})
	return p, err
}

// setBlocked bars (or clears) a player from betting and entering.
func (l *teller) setBlocked(ctx context.Context, playerID string, blocked bool) error {
	err := l.store.SetBlocked(ctx, playerID, blocked)
	if errors.Is(err, ledger.ErrNotFound) {
		return fmt.Errorf("%w: player", errNotFound)
	}
	if err != nil {
		return fmt.Errorf("block player: %w", err)
	}
	return nil
}

// issueToken opens a session: a random token of 32 URL-safe characters (at
// least 16 and never the player id, as /v1/launch requires: GAME-23).
func (l *teller) issueToken(ctx context.Context, playerID string, ttl time.Duration) (*ledger.SessionRecord, error) {
	if ttl <= 0 {
		ttl = l.tokenTTL
	}
	token, err := randomString(24)
	if err != nil {
		return nil, err
	}
	now := l.now()
	s := &ledger.SessionRecord{Token: token, PlayerID: playerID, CreatedAt: now.UnixMilli(), ExpiresAt: now.Add(ttl).UnixMilli()}
	err = l.store.InTx(ctx, func(ctx context.Context) error {
		p, err := l.getPlayer(ctx, playerID)
		if err != nil {
			return err
		}
		if p == nil {
			return fmt.Errorf("%w: player", errNotFound)
		}
		return l.store.InsertSession(ctx, s)
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// endToken revokes a token, or with expire set moves its expiry to now.
func (l *teller) endToken(ctx context.Context, token string, expire bool) error {
	var err error
	if expire {
		err = l.store.ExpireSession(ctx, token, l.now().UnixMilli())
	} else {
		err = l.store.RevokeSession(ctx, token)
	}
	if errors.Is(err, ledger.ErrNotFound) {
		return fmt.Errorf("%w: token", errNotFound)
	}
	if err != nil {
		return fmt.Errorf("end session: %w", err)
	}
	return nil
}

// grantFreebet records a grant. Repeating an id is a no-op, whatever the
// amount (the first one prevails, as on the game's side: FB-15, FB-17).
func (l *teller) grantFreebet(ctx context.Context, g *ledger.GrantRecord) error {
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
	return l.store.InTx(ctx, func(ctx context.Context) error {
		p, err := l.getPlayer(ctx, g.PlayerID)
		if err != nil {
			return err
		}
		if p == nil {
			return fmt.Errorf("%w: player", errNotFound)
		}
		return l.store.InsertGrant(ctx, g)
	})
}

func (l *teller) players(ctx context.Context) ([]ledger.PlayerRecord, error) {
	return l.store.Players(ctx)
}

func (l *teller) player(ctx context.Context, playerID string) (*ledger.PlayerRecord, error) {
	p, err := l.getPlayer(ctx, playerID)
	if err == nil && p == nil {
		err = fmt.Errorf("%w: player", errNotFound)
	}
	return p, err
}

// movements lists the ledger in order, of one player or of all (""); with
// limit above 0, only the last limit movements.
func (l *teller) movements(ctx context.Context, playerID string, limit int) ([]ledger.MovementRecord, error) {
	return l.store.Movements(ctx, playerID, limit)
}

// randomString returns n random bytes, base64url-encoded (4n/3 characters).
func randomString(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("random: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}
