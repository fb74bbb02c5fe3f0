package ledger_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/crashstudio/crashgame/internal/store/ledger"
)

// debit is a wallet call in miniature, shaped like operatorsim's: a
// transaction_id already recorded answers "replay"; a balance below amount is
// refused without writing anything ("refused <balance>", a nil error, as a
// business refusal is); otherwise the movement is recorded and the balance
// moved ("ok <balance after>"). answer receives what the call answered.
func debit(s *ledger.Store, txID string, amount int64, answer *string) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		if _, err := s.MovementByTx(ctx, "p1", txID); err == nil {
			*answer = "replay"
			return nil
		} else if !errors.Is(err, ledger.ErrNotFound) {
			return err
		}
		p, err := s.Player(ctx, "p1")
		if err != nil {
			return err
		}
		if p.Balance < amount {
			*answer = fmt.Sprintf("refused %d", p.Balance)
			return nil
		}
		m := movement("p1", txID, ledger.KindBet, amount, -amount)
		m.BalanceAfter = p.Balance - amount
		if err := s.InsertMovement(ctx, m); err != nil {
			return err
		}
		if err := s.AddBalance(ctx, "p1", -amount); err != nil {
			return err
		}
		*answer = fmt.Sprintf("ok %d", m.BalanceAfter)
		return nil
	}
}

// blindDebit records the movement first and moves the balance after, so
// that an overdraft fails (ErrBalance) after a write: the call's savepoint
// must take its movement back.
func blindDebit(s *ledger.Store, txID string, amount int64) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		if err := s.InsertMovement(ctx, movement("p1", txID, ledger.KindBet, amount, -amount)); err != nil {
			return err
		}
		return s.AddBalance(ctx, "p1", -amount)
	}
}

// failCommit makes the shared transaction's COMMIT fail: with foreign keys
// deferred, a movement of a player that does not exist is accepted by its
// INSERT and refused by the commit.
func failCommit(s *ledger.Store) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		if err := s.ExecForTest(ctx, "PRAGMA defer_foreign_keys = ON"); err != nil {
			return err
		}
		return s.InsertMovement(ctx, movement("no-such-player", "orphan", ledger.KindWin, 1, 1))
	}
}

// txIDs lists the transaction_id of every movement stored, in order.
func txIDs(t *testing.T, s *ledger.Store) string {
	t.Helper()
	return movementTxIDs(t, s, "", 0)
}

// movementTxIDs lists, space separated, the transaction_id of the movements
// Movements(player, limit) returns.
func movementTxIDs(t *testing.T, s *ledger.Store, player string, limit int) string {
	t.Helper()
	ms, err := s.Movements(context.Background(), player, limit)
	if err != nil {
		t.Fatal(err)
	}
	ids := ""
	for i, m := range ms {
		if i > 0 {
			ids += " "
		}
		ids += m.TransactionID
	}
	return ids
}

// Rule BET-8 BET-10 GEN-1: the calls of one shared transaction run in order,
// each deciding on what the ones before it wrote; a refusal writes nothing and
// fails no other call; an error rolls back its own call's writes only; a
// failed commit keeps nothing of any call.
func TestInSharedTx(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		calls      func(s *ledger.Store, answers []string) []func(ctx context.Context) error
		failCommit bool
		wantAns    []string // answers of the calls that answered
		wantErrs   []error  // each call's own error (nil: none)
		wantBal    int64
		wantTxIDs  string
	}{
		{
			name: "the second debit checks the balance after the first",
			calls: func(s *ledger.Store, a []string) []func(ctx context.Context) error {
				return []func(ctx context.Context) error{debit(s, "b1", 600, &a[0]), debit(s, "b2", 600, &a[1])}
			},
			wantAns:   []string{"ok 400", "refused 400"},
			wantErrs:  []error{nil, nil},
			wantBal:   400,
			wantTxIDs: "b1",
		},
		{
			name: "a refusal between successes",
			calls: func(s *ledger.Store, a []string) []func(ctx context.Context) error {
				return []func(ctx context.Context) error{
					debit(s, "b1", 300, &a[0]), debit(s, "b2", 5000, &a[1]), debit(s, "b3", 300, &a[2]),
				}
			},
			wantAns:   []string{"ok 700", "refused 700", "ok 400"},
			wantErrs:  []error{nil, nil, nil},
			wantBal:   400,
			wantTxIDs: "b1 b3",
		},
		{
			name: "an error after a write rolls back that call alone",
			calls: func(s *ledger.Store, a []string) []func(ctx context.Context) error {
				return []func(ctx context.Context) error{
					debit(s, "b1", 100, &a[0]), blindDebit(s, "b2", 5000), debit(s, "b3", 100, &a[2]),
				}
			},
			wantAns:   []string{"ok 900", "", "ok 800"},
			wantErrs:  []error{nil, ledger.ErrBalance, nil},
			wantBal:   800,
			wantTxIDs: "b1 b3",
		},
		{
			name: "a replay inside the transaction sees the first",
			calls: func(s *ledger.Store, a []string) []func(ctx context.Context) error {
				return []func(ctx context.Context) error{debit(s, "b1", 100, &a[0]), debit(s, "b1", 100, &a[1])}
			},
			wantAns:   []string{"ok 900", "replay"},
			wantErrs:  []error{nil, nil},
			wantBal:   900,
			wantTxIDs: "b1",
		},
		{
			name: "a failed commit keeps nothing",
			calls: func(s *ledger.Store, a []string) []func(ctx context.Context) error {
				return []func(ctx context.Context) error{debit(s, "b1", 100, &a[0]), debit(s, "b2", 100, &a[1]), failCommit(s)}
			},
			failCommit: true,
			wantBal:    1000,
			wantTxIDs:  "",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			eachKind(t, func(t *testing.T, s *ledger.Store) {
				addPlayer(t, s, "p1", 1000)
				answers := make([]string, 3)
				errs, err := s.InSharedTx(context.Background(), tt.calls(s, answers)...)
				switch {
				case tt.failCommit && err == nil:
					t.Fatal("the shared transaction committed, want its commit to fail")
				case !tt.failCommit && err != nil:
					t.Fatal(err)
				}
				for i, want := range tt.wantErrs {
					if !errors.Is(errs[i], want) {
						t.Errorf("call %d: error %v, want %v", i, errs[i], want)
					}
				}
				for i, want := range tt.wantAns {
					if answers[i] != want {
						t.Errorf("call %d answered %q, want %q", i, answers[i], want)
					}
				}
				if got := balanceOf(t, s, "p1"); got != tt.wantBal {
					t.Errorf("balance %d, want %d", got, tt.wantBal)
				}
				if got := txIDs(t, s); got != tt.wantTxIDs {
					t.Errorf("movements %q, want %q", got, tt.wantTxIDs)
				}
				// The ledger works on after the transaction, failed or not.
				var after string
				if err := s.InGroupTx(context.Background(), debit(s, "after", 1, &after)); err != nil || after != fmt.Sprintf("ok %d", tt.wantBal-1) {
					t.Fatalf("a debit after the transaction answered %q, %v", after, err)
				}
			})
		})
	}
}

// Rule BET-10 GEN-1: concurrent debits of one player through the group
// committer that together exceed the balance: exactly the ones the balance
// covers succeed, each answers the balance after its own debit, the others
// are refused, and no movement records a negative balance.
func TestInGroupTxConcurrentDebitsNeverOverdraw(t *testing.T) {
	t.Parallel()
	tests := []struct {
		balance, amount int64
		calls           int
		wantOK          int
	}{
		{balance: 1000, amount: 1000, calls: 20, wantOK: 1},
		{balance: 10_000, amount: 300, calls: 64, wantOK: 33},
		{balance: 100_000, amount: 7, calls: 256, wantOK: 256},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("balance=%d/amount=%d/calls=%d", tt.balance, tt.amount, tt.calls), func(t *testing.T) {
			t.Parallel()
			eachKind(t, func(t *testing.T, s *ledger.Store) {
				addPlayer(t, s, "p1", tt.balance)
				answers := make([]string, tt.calls)
				errs := race(tt.calls, func(i int) error {
					return s.InGroupTx(context.Background(), debit(s, fmt.Sprintf("b%d", i), tt.amount, &answers[i]))
				})
				if ok, _ := count(t, errs, nil); ok != tt.calls {
					t.Fatalf("%d calls of %d answered without error", ok, tt.calls)
				}
				okBalances := map[string]bool{}
				refused := 0
				wantLeft := tt.balance - int64(tt.wantOK)*tt.amount
				for i, a := range answers {
					switch {
					case a == fmt.Sprintf("refused %d", wantLeft):
						refused++
					case okBalances[a]:
						t.Fatalf("call %d answered %q, as another did", i, a)
					default:
						okBalances[a] = true
					}
				}
				for k := 1; k <= tt.wantOK; k++ {
					if want := fmt.Sprintf("ok %d", tt.balance-int64(k)*tt.amount); !okBalances[want] {
						t.Fatalf("no call answered %q; answers %v", want, answers)
					}
				}
				if len(okBalances) != tt.wantOK || refused != tt.calls-tt.wantOK {
					t.Fatalf("%d debits and %d refusals, want %d and %d", len(okBalances), refused, tt.wantOK, tt.calls-tt.wantOK)
				}
				if got := balanceOf(t, s, "p1"); got != wantLeft {
					t.Fatalf("balance %d, want %d", got, wantLeft)
				}
				ms, err := s.Movements(context.Background(), "p1", 0)
				if err != nil {
					t.Fatal(err)
				}
				for _, m := range ms {
					if m.BalanceAfter < 0 {
						t.Fatalf("movement %s left balance %d", m.TransactionID, m.BalanceAfter)
					}
				}
			})
		})
	}
}

// A failed commit through the group committer: whichever calls shared the
// poisoned transaction fail with it, and every call is answered exactly as
// stored (nil: its movement is there; an error: it is not). No call answers
// success without being durable.
func TestInGroupTxFailedCommitAnswersNoSuccess(t *testing.T) {
	t.Parallel()
	eachKind(t, func(t *testing.T, s *ledger.Store) {
		addPlayer(t, s, "p1", 1_000_000)
		const calls, poisoned = 64, 20
		answers := make([]string, calls)
		errs := race(calls, func(i int) error {
			if i == poisoned {
				return s.InGroupTx(context.Background(), failCommit(s))
			}
			return s.InGroupTx(context.Background(), debit(s, fmt.Sprintf("b%d", i), 10, &answers[i]))
		})
		if errs[poisoned] == nil {
			t.Fatal("the poisoned call committed")
		}
		stored := 0
		for i, err := range errs {
			if i == poisoned {
				continue
			}
			_, rerr := s.MovementByTx(context.Background(), "p1", fmt.Sprintf("b%d", i))
			switch {
			case err == nil && rerr != nil:
				t.Errorf("call %d answered success, its movement: %v", i, rerr)
			case err != nil && !errors.Is(rerr, ledger.ErrNotFound):
				t.Errorf("call %d failed (%v) and its movement is stored", i, err)
			case err == nil:
				stored++
			}
		}
		t.Logf("%d other calls shared the failed commit", calls-1-stored)
		if got := balanceOf(t, s, "p1"); got != 1_000_000-int64(stored)*10 {
			t.Fatalf("balance %d, want %d after %d debits", got, 1_000_000-int64(stored)*10, stored)
		}
	})
}

// After Close, InGroupTx refuses (ErrClosed) and runs nothing.
func TestInGroupTxAfterClose(t *testing.T) {
	t.Parallel()
	s, err := ledger.Open(context.Background(), ledger.MemoryDB)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	ran := false
	err = s.InGroupTx(context.Background(), func(context.Context) error { ran = true; return nil })
	if !errors.Is(err, ledger.ErrClosed) || ran {
		t.Fatalf("InGroupTx after Close = %v (ran %v), want ErrClosed", err, ran)
	}
}
