package ledger_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/crashstudio/crashgame/internal/store/ledger"
)

// kinds of ledger the tests run on: in memory (the default of operator-sim and
// of its tests) and a file (WAL, as in a container).
var kinds = []struct {
	name string
	path func(t *testing.T) string
}{
	{"memory", func(*testing.T) string { return ledger.MemoryDB }},
	{"file", func(t *testing.T) string { return filepath.Join(t.TempDir(), "sub", "ledger.db") }},
}

// eachKind runs fn on a fresh, migrated ledger of each kind.
func eachKind(t *testing.T, fn func(t *testing.T, s *ledger.Store)) {
	t.Helper()
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			s, err := ledger.Open(context.Background(), k.path(t))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Close() })
			fn(t, s)
		})
	}
}

func addPlayer(t *testing.T, s *ledger.Store, id string, balance int64) {
	t.Helper()
	p := &ledger.PlayerRecord{PlayerID: id, Name: "Test", Currency: "BRL", Balance: balance, CreatedAt: 1}
	if err := s.InsertPlayer(context.Background(), p); err != nil {
		t.Fatal(err)
	}
}

func balanceOf(t *testing.T, s *ledger.Store, id string) int64 {
	t.Helper()
	p, err := s.Player(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return p.Balance
}

func movement(playerID, txID, kind string, amount, delta int64) *ledger.MovementRecord {
	return &ledger.MovementRecord{
		PlayerID: playerID, TransactionID: txID, Kind: kind, Amount: amount, Delta: delta,
		Currency: "BRL", RequestHash: []byte{1}, ResponseStatus: 200, ResponseBody: []byte("{}"), CreatedAt: 1,
	}
}

// race runs fn(i) for i in 0..n-1 at once and returns their errors.
func race(n int, fn func(i int) error) []error {
	errs := make([]error, n)
	var start, done sync.WaitGroup
	start.Add(1)
	for i := 0; i < n; i++ {
		done.Add(1)
		go func() {
			defer done.Done()
			start.Wait()
			errs[i] = fn(i)
		}()
	}
	start.Done()
	done.Wait()
	return errs
}

// count returns how many errors are nil and how many are target; any other
// error fails the test.
func count(t *testing.T, errs []error, target error) (ok, refused int) {
	t.Helper()
	for i, err := range errs {
		switch {
		case err == nil:
			ok++
		case errors.Is(err, target):
			refused++
		default:
			t.Fatalf("call %d: %v", i, err)
		}
	}
	return ok, refused
}

// Rule BET-10 GEN-1: the debit's balance check is the UPDATE's WHERE, so
// concurrent debits that together exceed the balance never overdraw it: of 20
// debits of the whole balance exactly one applies, the balance moves once.
func TestAddBalanceConcurrentDebitsApplyOnce(t *testing.T) {
	t.Parallel()
	eachKind(t, func(t *testing.T, s *ledger.Store) {
		addPlayer(t, s, "p1", 1000)
		errs := race(20, func(int) error { return s.AddBalance(context.Background(), "p1", -1000) })
		if ok, refused := count(t, errs, ledger.ErrBalance); ok != 1 || refused != 19 {
			t.Fatalf("%d debits applied and %d refused, want 1 and 19", ok, refused)
		}
		if got := balanceOf(t, s, "p1"); got != 0 {
			t.Fatalf("balance %d, want 0", got)
		}
	})
}

// Rule BET-10 GEN-1: many small concurrent debits stop exactly at zero.
func TestAddBalanceConcurrentDebitsNeverOverdraw(t *testing.T) {
	t.Parallel()
	eachKind(t, func(t *testing.T, s *ledger.Store) {
		addPlayer(t, s, "p1", 10_000)
		errs := race(50, func(int) error { return s.AddBalance(context.Background(), "p1", -300) })
		if ok, refused := count(t, errs, ledger.ErrBalance); ok != 33 || refused != 17 {
			t.Fatalf("%d debits applied and %d refused, want 33 and 17", ok, refused)
		}
		if got := balanceOf(t, s, "p1"); got != 100 {
			t.Fatalf("balance %d, want 100", got)
		}
	})
}

// Rule ENV-12 BET-8: a movement is recorded once per (player_id,
// transaction_id). Concurrent movements under one transaction_id, each
// inserting then moving the balance in one transaction: exactly one is
// inserted, the others are ErrDuplicate and move nothing, the balance moves
// once.
func TestInsertMovementConcurrentSameTransactionIDAppliesOnce(t *testing.T) {
	t.Parallel()
	eachKind(t, func(t *testing.T, s *ledger.Store) {
		addPlayer(t, s, "p1", 100_000)
		ids := make([]int64, 20)
		errs := race(len(ids), func(i int) error {
			return s.InTx(context.Background(), func(ctx context.Context) error {
				m := movement("p1", "tx-same", ledger.KindBet, 1000, -1000)
				if err := s.InsertMovement(ctx, m); err != nil {
					return err
				}
				ids[i] = m.ID
				return s.AddBalance(ctx, "p1", m.Delta)
			})
		})
		if ok, refused := count(t, errs, ledger.ErrDuplicate); ok != 1 || refused != 19 {
			t.Fatalf("%d movements inserted and %d refused, want 1 and 19", ok, refused)
		}
		if got := balanceOf(t, s, "p1"); got != 99_000 {
			t.Fatalf("balance %d, want one debit (99000)", got)
		}
		ms, err := s.Movements(context.Background(), "p1", 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(ms) != 1 {
			t.Fatalf("%d movements, want 1", len(ms))
		}
		for i, err := range errs {
			if err == nil && ids[i] != ms[0].ID {
				t.Fatalf("winner got id %d, stored id %d", ids[i], ms[0].ID)
			}
		}
	})
}

// Rule ENV-12: the same transaction_id is free for another player.
func TestInsertMovementKeyIsPerPlayer(t *testing.T) {
	t.Parallel()
	eachKind(t, func(t *testing.T, s *ledger.Store) {
		ctx := context.Background()
		addPlayer(t, s, "p1", 0)
		addPlayer(t, s, "p2", 0)
		for _, p := range []string{"p1", "p2"} {
			if err := s.InsertMovement(ctx, movement(p, "tx-1", ledger.KindWin, 5, 5)); err != nil {
				t.Fatalf("%s: %v", p, err)
			}
		}
		m, err := s.MovementByTx(ctx, "p2", "tx-1")
		if err != nil || m.PlayerID != "p2" || m.Delta != 5 {
			t.Fatalf("MovementByTx = %+v, %v", m, err)
		}
	})
}

// Rule RB-10: a debit is settled once, so a rollback can never return more
// than was taken (nor a win be paid on a debit already undone). Of 20
// concurrent settlements of one debit exactly one applies, and the debit
// names it.
func TestSettleConcurrentAppliesOnce(t *testing.T) {
	t.Parallel()
	eachKind(t, func(t *testing.T, s *ledger.Store) {
		ctx := context.Background()
		addPlayer(t, s, "p1", 0)
		debit := movement("p1", "bet-1", ledger.KindBet, 0, 0)
		if err := s.InsertMovement(ctx, debit); err != nil {
			t.Fatal(err)
		}
		errs := race(20, func(i int) error {
			return s.Settle(context.Background(), debit.ID, ledger.SettlementRollback, int64(1000+i))
		})
		if ok, refused := count(t, errs, ledger.ErrSettled); ok != 1 || refused != 19 {
			t.Fatalf("%d settlements applied and %d refused, want 1 and 19", ok, refused)
		}
		got, err := s.MovementByTx(ctx, "p1", "bet-1")
		if err != nil {
			t.Fatal(err)
		}
		winner := int64(-1)
		for i, err := range errs {
			if err == nil {
				winner = int64(1000 + i)
			}
		}
		if got.Settlement == nil || *got.Settlement != ledger.SettlementRollback || got.SettledBy == nil || *got.SettledBy != winner {
			t.Fatalf("debit settlement %v by %v, want rollback by %d", got.Settlement, got.SettledBy, winner)
		}
	})
}

func TestSettleUnknownMovement(t *testing.T) {
	t.Parallel()
	eachKind(t, func(t *testing.T, s *ledger.Store) {
		if err := s.Settle(context.Background(), 42, "win", 43); !errors.Is(err, ledger.ErrSettled) {
			t.Fatalf("Settle of no movement = %v, want ErrSettled", err)
		}
	})
}

// A transaction travels in the context: fn's error rolls back every write
// made with fn's context and comes back unchanged; a nested InTx joins.
func TestInTxRollsBackAndNests(t *testing.T) {
	t.Parallel()
	eachKind(t, func(t *testing.T, s *ledger.Store) {
		ctx := context.Background()
		addPlayer(t, s, "p1", 100)
		boom := errors.New("boom")
		err := s.InTx(ctx, func(ctx context.Context) error {
			if err := s.AddBalance(ctx, "p1", 50); err != nil {
				return err
			}
			return s.InTx(ctx, func(ctx context.Context) error {
				if err := s.InsertMovement(ctx, movement("p1", "tx-1", ledger.KindWin, 50, 50)); err != nil {
					return err
				}
				return boom
			})
		})
		if err != boom {
			t.Fatalf("InTx = %v, want fn's error unchanged", err)
		}
		if got := balanceOf(t, s, "p1"); got != 100 {
			t.Fatalf("balance %d after a rolled back transaction, want 100", got)
		}
		if _, err := s.MovementByTx(ctx, "p1", "tx-1"); !errors.Is(err, ledger.ErrNotFound) {
			t.Fatalf("movement of a rolled back transaction: %v, want ErrNotFound", err)
		}
	})
}

// Each read and conditional write reports which condition failed.
func TestSentinels(t *testing.T) {
	t.Parallel()
	eachKind(t, func(t *testing.T, s *ledger.Store) {
		ctx := context.Background()
		addPlayer(t, s, "p1", 100)
		tests := []struct {
			name string
			err  error
			want error
		}{
			{"unknown player", func() error { _, err := s.Player(ctx, "nobody"); return err }(), ledger.ErrNotFound},
			{"unknown session", func() error { _, err := s.Session(ctx, "no-such-token"); return err }(), ledger.ErrNotFound},
			{"unknown movement", func() error { _, err := s.MovementByTx(ctx, "p1", "nope"); return err }(), ledger.ErrNotFound},
			{"balance of nobody", s.AddBalance(ctx, "nobody", 5), ledger.ErrBalance},
			{"below zero", s.AddBalance(ctx, "p1", -101), ledger.ErrBalance},
			{"block nobody", s.SetBlocked(ctx, "nobody", true), ledger.ErrNotFound},
			{"revoke nothing", s.RevokeSession(ctx, "no-such-token"), ledger.ErrNotFound},
			{"expire nothing", s.ExpireSession(ctx, "no-such-token", 5), ledger.ErrNotFound},
			{"player twice", s.InsertPlayer(ctx, &ledger.PlayerRecord{PlayerID: "p1", Currency: "EUR", Balance: 7}), ledger.ErrDuplicate},
		}
		for _, tt := range tests {
			if !errors.Is(tt.err, tt.want) {
				t.Errorf("%s: %v, want %v", tt.name, tt.err, tt.want)
			}
		}
		if got := balanceOf(t, s, "p1"); got != 100 {
			t.Fatalf("balance %d after refused writes, want 100", got)
		}
	})
}

func TestSessions(t *testing.T) {
	t.Parallel()
	eachKind(t, func(t *testing.T, s *ledger.Store) {
		ctx := context.Background()
		addPlayer(t, s, "p1", 0)
		const token = "tok-0123456789abcdef"
		if err := s.InsertSession(ctx, &ledger.SessionRecord{Token: token, PlayerID: "p1", CreatedAt: 1, ExpiresAt: 100}); err != nil {
			t.Fatal(err)
		}
		if err := s.ExpireSession(ctx, token, 50); err != nil {
			t.Fatal(err)
		}
		if err := s.RevokeSession(ctx, token); err != nil {
			t.Fatal(err)
		}
		got, err := s.Session(ctx, token)
		if err != nil {
			t.Fatal(err)
		}
		if got.PlayerID != "p1" || got.ExpiresAt != 50 || !got.Revoked {
			t.Fatalf("session %+v", got)
		}
	})
}

// Rule FB-15: repeating a grant's id keeps the first grant. FB-18: a
// player's grants come back in the order they were made, and the freebet
// bets that spend them are the bets not settled by a rollback.
func TestGrantsAndFreebetBets(t *testing.T) {
	t.Parallel()
	eachKind(t, func(t *testing.T, s *ledger.Store) {
		ctx := context.Background()
		addPlayer(t, s, "p1", 0)
		for _, g := range []ledger.GrantRecord{
			{PlayerID: "p1", GrantID: "g-b", Amount: 100, Quantity: 1, CreatedAt: 1},
			{PlayerID: "p1", GrantID: "g-a", Amount: 200, Quantity: 3, CreatedAt: 2},
			{PlayerID: "p1", GrantID: "g-b", Amount: 999, Quantity: 5, CreatedAt: 3},
		} {
			if err := s.InsertGrant(ctx, &g); err != nil {
				t.Fatal(err)
			}
		}
		gs, err := s.Grants(ctx, "p1")
		if err != nil {
			t.Fatal(err)
		}
		if len(gs) != 2 || gs[0].GrantID != "g-b" || gs[0].Amount != 100 || gs[0].Quantity != 1 || gs[1].GrantID != "g-a" {
			t.Fatalf("grants %+v", gs)
		}

		fb := func(id string) *string { return &id }
		open := movement("p1", "bet-open", ledger.KindBet, 100, 0)
		open.FreebetID = fb("g-a#1")
		won := movement("p1", "bet-won", ledger.KindBet, 100, 0)
		won.FreebetID = fb("g-a#2")
		undone := movement("p1", "bet-undone", ledger.KindBet, 100, 0)
		undone.FreebetID = fb("g-b")
		cash := movement("p1", "bet-cash", ledger.KindBet, 100, 0)
		for _, m := range []*ledger.MovementRecord{open, won, undone, cash} {
			if err := s.InsertMovement(ctx, m); err != nil {
				t.Fatal(err)
			}
		}
		rb := movement("p1", "rb-1", ledger.KindRollback, 100, 0)
		rb.BetID = fb("bet-undone")
		if err := s.InsertMovement(ctx, rb); err != nil {
			t.Fatal(err)
		}
		if err := s.Settle(ctx, won.ID, "freebet", 99); err != nil {
			t.Fatal(err)
		}
		if err := s.Settle(ctx, undone.ID, ledger.SettlementRollback, rb.ID); err != nil {
			t.Fatal(err)
		}
		ids, err := s.FreebetBetIDs(ctx, "p1")
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(ids) != "[g-a#1 g-a#2]" {
			t.Fatalf("freebet bets %v, want [g-a#1 g-a#2]", ids)
		}
		for betID, want := range map[string]bool{"bet-undone": true, "bet-open": false} {
			got, err := s.HasRollbackOf(ctx, "p1", betID)
			if err != nil || got != want {
				t.Fatalf("HasRollbackOf(%s) = %v, %v, want %v", betID, got, err, want)
			}
		}
	})
}

// Movements come back oldest first, the last limit of them with a limit, of
// one player or of all.
func TestMovementsOrderAndLimit(t *testing.T) {
	t.Parallel()
	eachKind(t, func(t *testing.T, s *ledger.Store) {
		ctx := context.Background()
		addPlayer(t, s, "p1", 0)
		addPlayer(t, s, "p2", 0)
		for i := 1; i <= 5; i++ {
			p := "p1"
			if i%2 == 0 {
				p = "p2"
			}
			if err := s.InsertMovement(ctx, movement(p, fmt.Sprintf("tx-%d", i), ledger.KindWin, 1, 1)); err != nil {
				t.Fatal(err)
			}
		}
		tests := []struct {
			player string
			limit  int
			want   string
		}{
			{"", 0, "tx-1 tx-2 tx-3 tx-4 tx-5"},
			{"", 2, "tx-4 tx-5"},
			{"p1", 0, "tx-1 tx-3 tx-5"},
			{"p2", 1, "tx-4"},
		}
		for _, tt := range tests {
			if got := movementTxIDs(t, s, tt.player, tt.limit); got != tt.want {
				t.Errorf("Movements(%q, %d) = %s, want %s", tt.player, tt.limit, got, tt.want)
			}
		}
	})
}

// A file ledger keeps its rows across a reopen, and reopening applies no
// migration twice.
func TestOpenFileReopens(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "sub", "ledger.db")
	s, err := ledger.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	addPlayer(t, s, "p1", 123)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = ledger.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	if got := balanceOf(t, s, "p1"); got != 123 {
		t.Fatalf("balance %d after reopen, want 123", got)
	}
}
