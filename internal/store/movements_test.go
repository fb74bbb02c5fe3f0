package store_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/internal/store"
)

// movementCases are the repository contract of the movements table (the
// wallet's outbox) and of reconciliation's reads; they run on every backend.
var movementCases = []contractCase{
	{"MovementInsertGetList", testMovementInsertGetList},
	{"MovementConcurrentInsertOneTransactionID", testMovementConcurrentInsertOneTxID},
	{"MovementSecondSettlementRefused", testMovementSecondSettlement},
	{"MovementBatchInsert", testMovementBatchInsert},
	{"MovementDebits", testMovementDebits},
	{"MovementClaimDueAndNext", testMovementClaimDue},
	{"MovementConcurrentClaimersNeverShare", testMovementConcurrentClaimers},
	{"MovementRecordFencedByLease", testMovementRecordFenced},
	{"MovementRecordIsAtomic", testMovementRecordAtomic},
	{"ReconcileReadsWithoutTokens", testReconcileReads},
}

const mvToken = "tok-movement-secret-0123456789"

// newMovement returns a pending /win of 2350 due at t0, its bet_id derived
// from its transaction_id.
func newMovement(txID string) store.MovementRecord {
	return store.MovementRecord{
		TransactionID: txID, Kind: "win", Operator: "op-1", GameID: "crash", Currency: "BRL", PlayerID: "player-1",
		Token: mvToken, RoundID: "round-1", BetID: "bet-" + txID, Amount: 2350, WinType: "win",
		Status: store.MovementPending, NextAttemptAt: store.MillisOf(t0), CreatedAt: store.MillisOf(t0),
	}
}

func insertMovement(t *testing.T, s *store.Store, recs ...store.MovementRecord) {
	t.Helper()
	for i := range recs {
		if err := s.InsertMovement(t.Context(), &recs[i]); err != nil {
			t.Fatalf("InsertMovement %s: %v", recs[i].TransactionID, err)
		}
	}
}

func getMovement(t *testing.T, s *store.Store, txID string) store.MovementRecord {
	t.Helper()
	rec, err := s.GetMovement(t.Context(), txID)
	if err != nil {
		t.Fatalf("GetMovement %s: %v", txID, err)
	}
	return rec
}

// insertDebit writes a bet (and its round) as the engine does: the debit a
// settlement movement is checked against.
func insertDebit(t *testing.T, s *store.Store, id string, amount int64, freebetID *string) {
	t.Helper()
	ctx := t.Context()
	if _, err := s.ExecForTest(ctx, `INSERT INTO rounds (id, game_id, seq, hash, crash_point, status, betting_ends_at, created_at)
		VALUES ('round-1', 'crash', 1, 'h', 200, 'finished', 1, 1) ON CONFLICT DO NOTHING`); err != nil {
		t.Fatalf("insert round: %v", err)
	}
	if _, err := s.ExecForTest(ctx, `INSERT INTO bets (id, round_id, game_id, session_hash, operator, player_id, token, currency, amount, freebet_id, status, payout, placed_at)
		VALUES (?, 'round-1', 'crash', ?, 'op-1', 'player-1', ?, 'BRL', ?, ?, 'cashed_out', 1500, ?)`,
		id, make([]byte, 32), mvToken, amount, freebetID, store.MillisOf(t0)); err != nil {
		t.Fatalf("insert bet: %v", err)
	}
}

// testMovementInsertGetList: a movement comes back as written (token
// included) from GetMovement; ListMovements filters, orders, limits, and
// never reads the token.
func testMovementInsertGetList(t *testing.T, s *store.Store, _ string) {
	ctx := t.Context()
	fb, balance := "grant-1", int64(5000)
	a := newMovement("w-a")
	a.FreebetID, a.WinType = &fb, "freebet"
	b := newMovement("rb-b")
	b.Kind, b.WinType, b.Reason, b.Amount = "rollback", "", "cancelled_by_player", 1000
	b.CreatedAt = store.MillisOf(t0.Add(time.Second))
	c := newMovement("w-c")
	c.RoundID, c.PlayerID, c.Operator = "round-2", "player-2", "op-2"
	c.CreatedAt = store.MillisOf(t0.Add(-time.Second))
	insertMovement(t, s, a, b, c)

	if got := getMovement(t, s, "w-a"); !reflect.DeepEqual(got, a) {
		t.Fatalf("GetMovement\n got %+v\nwant %+v", got, a)
	}
	if _, err := s.GetMovement(ctx, "w-none"); !errors.Is(err, store.ErrMovementNotFound) {
		t.Fatalf("GetMovement(unknown): %v, want ErrMovementNotFound", err)
	}

	cases := []struct {
		f    store.MovementFilter
		want []string
	}{
		{store.MovementFilter{Limit: 10}, []string{"w-c", "w-a", "rb-b"}},
		{store.MovementFilter{Limit: 2}, []string{"w-c", "w-a"}},
		{store.MovementFilter{RoundID: "round-1", Limit: 10}, []string{"w-a", "rb-b"}},
		{store.MovementFilter{PlayerID: "player-2", Limit: 10}, []string{"w-c"}},
		{store.MovementFilter{Operator: "op-1", Status: store.MovementPending, Limit: 10}, []string{"w-a", "rb-b"}},
		{store.MovementFilter{Status: store.MovementDone, Limit: 10}, nil},
	}
	for _, tc := range cases {
		recs, err := s.ListMovements(ctx, tc.f)
		if err != nil {
			t.Fatalf("ListMovements(%+v): %v", tc.f, err)
		}
		var got []string
		for _, r := range recs {
			got = append(got, r.TransactionID)
			if r.Token != "" {
				t.Errorf("ListMovements listed the token of %s", r.TransactionID)
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("ListMovements(%+v) = %v, want %v", tc.f, got, tc.want)
		}
	}
	if _, err := s.ListMovements(ctx, store.MovementFilter{}); err == nil {
		t.Error("ListMovements without a limit: err = nil")
	}
	// The only way to a done movement: claim it and record its success.
	claimed, err := s.ClaimMovements(ctx, store.MovementClaim{Worker: "w1", Now: t0, LeaseEnd: t0.Add(time.Minute), Limit: 1})
	if err != nil || len(claimed) != 1 || claimed[0].TransactionID != "w-a" {
		t.Fatalf("claim: %+v, %v", claimed, err)
	}
	opTx, reqID := "op-77", "req-1"
	if applied, err := s.RecordMovementAttempts(ctx, []store.MovementAttempt{{TransactionID: "w-a", Worker: "w1",
		Status: store.MovementDone, Attempts: 1, NextAttemptAt: store.MillisOf(t0), LastRequestID: &reqID,
		DoneAt: store.MillisOf(t0.Add(time.Second)), OperatorTxID: &opTx, BalanceAfter: &balance}}); err != nil || !applied[0] {
		t.Fatalf("record: %v, %v", applied, err)
	}
	want := a
	want.Status, want.Attempts, want.LastRequestID, want.OperatorTxID, want.BalanceAfter = store.MovementDone, 1, reqID, opTx, &balance
	want.DoneAt = store.MillisOf(t0.Add(time.Second))
	if got := getMovement(t, s, "w-a"); !reflect.DeepEqual(got, want) {
		t.Fatalf("after a success\n got %+v\nwant %+v", got, want)
	}
	counts, err := s.CountMovements(ctx, store.MovementPending, store.MovementDone, store.MovementRefused)
	if err != nil {
		t.Fatal(err)
	}
	if wantCounts := map[string]int64{"pending": 2, "done": 1, "refused": 0}; !reflect.DeepEqual(counts, wantCounts) {
		t.Fatalf("CountMovements = %v, want %v", counts, wantCounts)
	}
}

// testMovementConcurrentInsertOneTxID: of concurrent inserts of one
// transaction_id (each with its own bet_id, each in its own transaction),
// exactly one is stored and every other is told ErrMovementExists.
//
// Rule ENV-13
func testMovementConcurrentInsertOneTxID(t *testing.T, s *store.Store, _ string) {
	const n = 16
	results := raceMovements(t, s, n, func(i int) store.MovementRecord {
		rec := newMovement("w-same")
		rec.BetID = fmt.Sprintf("bet-%d", i)
		return rec
	})
	wins, exists := 0, 0
	for i, err := range results {
		switch {
		case err == nil:
			wins++
		case errors.Is(err, store.ErrMovementExists):
			exists++
		default:
			t.Errorf("insert %d: %v", i, err)
		}
	}
	if wins != 1 || exists != n-1 {
		t.Fatalf("%d stored and %d told ErrMovementExists, want 1 and %d", wins, exists, n-1)
	}
	assertMovementCount(t, s, 1)
}

// testMovementSecondSettlementRefused: a debit ends in exactly one
// settlement (ENV-16: bet_id names the debit): a second movement for one
// bet_id, under another transaction_id, is refused with ErrMovementBetTaken,
// one after the other or at once.
func testMovementSecondSettlement(t *testing.T, s *store.Store, _ string) {
	insertMovement(t, s, newMovement("w-first"))
	second := newMovement("rb-second")
	second.Kind, second.WinType, second.BetID = "rollback", "", "bet-w-first"
	if err := s.InsertMovement(t.Context(), &second); !errors.Is(err, store.ErrMovementBetTaken) {
		t.Fatalf("second settlement of one bet: %v, want ErrMovementBetTaken", err)
	}

	const n = 16
	results := raceMovements(t, s, n, func(i int) store.MovementRecord {
		rec := newMovement(fmt.Sprintf("w-race-%d", i))
		rec.BetID = "bet-race"
		return rec
	})
	wins, taken := 0, 0
	for i, err := range results {
		switch {
		case err == nil:
			wins++
		case errors.Is(err, store.ErrMovementBetTaken):
			taken++
		default:
			t.Errorf("insert %d: %v", i, err)
		}
	}
	if wins != 1 || taken != n-1 {
		t.Fatalf("%d stored and %d told ErrMovementBetTaken, want 1 and %d", wins, taken, n-1)
	}
	assertMovementCount(t, s, 2)
}

// raceMovements inserts n movements at once, each in its own transaction
// (committed when its insert succeeds), and returns each insert's error.
func raceMovements(t *testing.T, s *store.Store, n int, rec func(i int) store.MovementRecord) []error {
	t.Helper()
	results := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			r := rec(i)
			<-start
			results[i] = s.InTx(context.Background(), func(ctx context.Context) error {
				return s.InsertMovement(ctx, &r)
			})
		})
	}
	close(start)
	wg.Wait()
	return results
}

func assertMovementCount(t *testing.T, s *store.Store, want int) {
	t.Helper()
	var n int
	if err := s.QueryRowForTest(t.Context(), "SELECT COUNT(*) FROM movements").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != want {
		t.Fatalf("%d movements stored, want %d", n, want)
	}
}

// testMovementBatchInsert: a batch is one statement; a key taken (stored
// already, or twice in the batch) is reported as ErrMovementKeyTaken, and the
// transaction stays usable so that the caller rolls it back.
//
// Rule ENV-13
func testMovementBatchInsert(t *testing.T, s *store.Store, _ string) {
	ctx := t.Context()
	if err := s.InsertMovements(ctx, []store.MovementRecord{newMovement("w-1"), newMovement("w-2"), newMovement("w-3")}); err != nil {
		t.Fatalf("InsertMovements: %v", err)
	}
	assertMovementCount(t, s, 3)
	sameBet := newMovement("w-5")
	sameBet.BetID = "bet-w-4"
	for _, batch := range [][]store.MovementRecord{
		{newMovement("w-4"), newMovement("w-2")}, // a transaction_id stored
		{newMovement("w-4"), sameBet},            // one bet twice in the batch
	} {
		errRollBack := errors.New("roll back")
		err := s.InTx(ctx, func(ctx context.Context) error {
			if err := s.InsertMovements(ctx, batch); !errors.Is(err, store.ErrMovementKeyTaken) {
				t.Errorf("InsertMovements with a key taken: %v, want ErrMovementKeyTaken", err)
			}
			// The transaction is still usable after the refusal.
			if _, err := s.GetMovement(ctx, "w-1"); err != nil {
				t.Errorf("GetMovement in the transaction after a refusal: %v", err)
			}
			return errRollBack
		})
		if !errors.Is(err, errRollBack) {
			t.Fatalf("InTx: %v", err)
		}
	}
	assertMovementCount(t, s, 3)
}

// testMovementDebits: the debit of a bet is read as the engine stored it,
// alone or many in one statement; an unknown bet is absent, not an error.
//
// Rule RB-6 WIN-17: the store returns the debit's amount and freebet_id, the
// wallet compares.
func testMovementDebits(t *testing.T, s *store.Store, _ string) {
	ctx := t.Context()
	grant := "grant-1"
	insertDebit(t, s, "bet-plain", 1000, nil)
	insertDebit(t, s, "bet-free", 500, &grant)
	d, ok, err := s.Debit(ctx, "bet-free")
	if err != nil || !ok || d.ID != "bet-free" || d.Amount != 500 || d.FreebetID == nil || *d.FreebetID != grant {
		t.Fatalf("Debit(bet-free) = %+v, %v, %v", d, ok, err)
	}
	if d, ok, err := s.Debit(ctx, "bet-unknown"); err != nil || ok {
		t.Fatalf("Debit(unknown) = %+v, %v, %v; want absent", d, ok, err)
	}
	ds, err := s.Debits(ctx, []string{"bet-plain", "bet-free", "bet-unknown"})
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 2 || ds["bet-plain"].Amount != 1000 || ds["bet-plain"].FreebetID != nil || *ds["bet-free"].FreebetID != grant {
		t.Fatalf("Debits = %+v", ds)
	}
}

// testMovementClaimDue: a claim takes the due pending movements, earliest
// first, up to its limit, skipping paused operators; a claimed movement is
// due again only once its lease has run out; NextDueMovement follows.
func testMovementClaimDue(t *testing.T, s *store.Store, _ string) {
	ctx := t.Context()
	for i, due := range []time.Duration{2 * time.Second, 0, time.Second, time.Hour} {
		rec := newMovement(fmt.Sprintf("w-%d", i))
		rec.NextAttemptAt = store.MillisOf(t0.Add(due))
		insertMovement(t, s, rec)
	}
	paused := newMovement("w-paused")
	paused.Operator = "op-paused"
	insertMovement(t, s, paused)

	next, ok, err := s.NextDueMovement(ctx, []string{"op-paused"})
	if err != nil || !ok || !next.Equal(t0) {
		t.Fatalf("NextDueMovement = %v, %v, %v; want %v", next, ok, err, t0)
	}
	now := t0.Add(2 * time.Second)
	lease := now.Add(time.Minute)
	claim := func(worker string, at time.Time, limit int) []string {
		t.Helper()
		recs, err := s.ClaimMovements(ctx, store.MovementClaim{Worker: worker, Now: at, LeaseEnd: at.Add(time.Minute),
			Limit: limit, SkipOperators: []string{"op-paused"}})
		if err != nil {
			t.Fatalf("ClaimMovements: %v", err)
		}
		var ids []string
		for _, r := range recs {
			ids = append(ids, r.TransactionID)
			if r.ClaimedBy != worker || r.NextAttemptAt != store.MillisOf(at.Add(time.Minute)) || r.Token != mvToken {
				t.Errorf("claimed %+v", r)
			}
		}
		slices.Sort(ids) // RETURNING has no order
		return ids
	}
	if got := claim("w1", now, 2); !slices.Equal(got, []string{"w-1", "w-2"}) { // due at t0 and t0+1s
		t.Fatalf("first claim = %v, want w-1 and w-2 (earliest due first)", got)
	}
	if got := claim("w2", now, 10); !slices.Equal(got, []string{"w-0"}) {
		t.Fatalf("second claim = %v, want w-0 (the rest is claimed, not due or paused)", got)
	}
	if got := claim("w2", now, 10); len(got) != 0 {
		t.Fatalf("third claim = %v, want nothing", got)
	}
	if next, ok, err := s.NextDueMovement(ctx, []string{"op-paused"}); err != nil || !ok || !next.Equal(lease) {
		t.Fatalf("NextDueMovement = %v, %v, %v; want the lease end %v", next, ok, err, lease)
	}
	if next, ok, err := s.NextDueMovement(ctx, nil); err != nil || !ok || !next.Equal(t0) {
		t.Fatalf("NextDueMovement without a pause = %v, %v, %v; want %v", next, ok, err, t0)
	}
	// Once the lease ran out, the movements are due again, for anyone.
	if got := claim("w3", lease, 10); !slices.Equal(got, []string{"w-0", "w-1", "w-2"}) {
		t.Fatalf("claim after the lease = %v, want w-1, w-2 and w-0", got)
	}
	if _, err := s.ClaimMovements(ctx, store.MovementClaim{Worker: "w1", Now: now, LeaseEnd: lease}); err == nil {
		t.Fatal("a claim without a limit: err = nil")
	}
}

// testMovementConcurrentClaimers: workers claiming at once, from several
// connections (processes, on PostgreSQL), never claim one movement twice, and
// together claim every due movement.
//
// Rule ENV-11: two attempts of one movement never overlap.
func testMovementConcurrentClaimers(t *testing.T, s *store.Store, dsn string) {
	const n, workers, batch = 300, 6, 7
	recs := make([]store.MovementRecord, n)
	for i := range recs {
		recs[i] = newMovement(fmt.Sprintf("w-%04d", i))
	}
	if err := s.InsertMovements(t.Context(), recs); err != nil {
		t.Fatal(err)
	}
	stores := []*store.Store{s, openMigrated(t, dsn)}
	claimed := make([][]string, workers)
	errs := make([]error, workers)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			st := stores[w%len(stores)]
			<-start
			for {
				got, err := st.ClaimMovements(context.Background(), store.MovementClaim{Worker: fmt.Sprint("worker-", w),
					Now: t0, LeaseEnd: t0.Add(time.Minute), Limit: batch})
				if err != nil {
					errs[w] = err
					return
				}
				if len(got) == 0 {
					return
				}
				for _, r := range got {
					claimed[w] = append(claimed[w], r.TransactionID)
				}
			}
		})
	}
	close(start)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("claim: %v", err)
	}
	by := map[string]int{}
	for w, ids := range claimed {
		for _, id := range ids {
			if prev, ok := by[id]; ok {
				t.Errorf("%s claimed by worker %d and worker %d", id, prev, w)
			}
			by[id] = w
		}
	}
	if len(by) != n {
		t.Fatalf("%d movements claimed, want all %d", len(by), n)
	}
	for id, w := range by {
		if got := getMovement(t, s, id); got.ClaimedBy != fmt.Sprint("worker-", w) {
			t.Fatalf("%s is held by %q, claimed by worker-%d", id, got.ClaimedBy, w)
		}
	}
}

// testMovementRecordFenced: a worker whose lease ran out and was taken over
// records its attempt in vain: the new holder's state is left as it is, and
// the new holder's own record applies.
//
// Rule ENV-11: the attempt already sent is not recorded over the new
// holder's, which sends the same transaction_id again.
func testMovementRecordFenced(t *testing.T, s *store.Store, _ string) {
	ctx := t.Context()
	insertMovement(t, s, newMovement("w-lease"))
	claimAt := func(worker string, at time.Time) {
		t.Helper()
		got, err := s.ClaimMovements(ctx, store.MovementClaim{Worker: worker, Now: at, LeaseEnd: at.Add(time.Minute), Limit: 10})
		if err != nil || len(got) != 1 {
			t.Fatalf("%s claim: %+v, %v", worker, got, err)
		}
	}
	claimAt("old", t0)
	claimAt("new", t0.Add(time.Minute)) // the old lease ran out
	taken := getMovement(t, s, "w-lease")

	reqID, opTx := "req-old", "op-old"
	applied, err := s.RecordMovementAttempts(ctx, []store.MovementAttempt{{TransactionID: "w-lease", Worker: "old",
		Status: store.MovementDone, Attempts: 1, NextAttemptAt: store.MillisOf(t0), LastRequestID: &reqID,
		DoneAt: store.MillisOf(t0), OperatorTxID: &opTx}})
	if err != nil || len(applied) != 1 || applied[0] {
		t.Fatalf("the old holder's record: applied %v, %v; want not applied", applied, err)
	}
	if got := getMovement(t, s, "w-lease"); !reflect.DeepEqual(got, taken) {
		t.Fatalf("the old holder overwrote the new one's state\n got %+v\nwant %+v", got, taken)
	}

	// The new holder's temporary failure applies: pending, released, due at
	// its back-off.
	reqID = "req-new"
	retry := store.MillisOf(t0.Add(time.Minute + 4*time.Second))
	applied, err = s.RecordMovementAttempts(ctx, []store.MovementAttempt{{TransactionID: "w-lease", Worker: "new",
		Status: store.MovementPending, Attempts: 1, NextAttemptAt: retry, LastError: "temporary (HTTP 503)", LastRequestID: &reqID}})
	if err != nil || !applied[0] {
		t.Fatalf("the new holder's record: applied %v, %v", applied, err)
	}
	want := taken
	want.ClaimedBy, want.Attempts, want.NextAttemptAt, want.LastError, want.LastRequestID = "", 1, retry, "temporary (HTTP 503)", "req-new"
	if got := getMovement(t, s, "w-lease"); !reflect.DeepEqual(got, want) {
		t.Fatalf("after the new holder's record\n got %+v\nwant %+v", got, want)
	}
	// Released: no record applies until the next claim.
	if applied, err := s.RecordMovementAttempts(ctx, []store.MovementAttempt{{TransactionID: "w-lease", Worker: "new",
		Status: store.MovementDone, Attempts: 2, NextAttemptAt: retry}}); err != nil || applied[0] {
		t.Fatalf("a record without a claim: applied %v, %v; want not applied", applied, err)
	}
}

// testMovementRecordAtomic: the attempts of one record are written in one
// transaction: when one of them fails, none is.
func testMovementRecordAtomic(t *testing.T, s *store.Store, _ string) {
	ctx := t.Context()
	insertMovement(t, s, newMovement("w-a"), newMovement("w-b"))
	if _, err := s.ClaimMovements(ctx, store.MovementClaim{Worker: "w1", Now: t0, LeaseEnd: t0.Add(time.Minute), Limit: 10}); err != nil {
		t.Fatal(err)
	}
	before := getMovement(t, s, "w-a")
	_, err := s.RecordMovementAttempts(ctx, []store.MovementAttempt{
		{TransactionID: "w-a", Worker: "w1", Status: store.MovementDone, Attempts: 1, NextAttemptAt: store.MillisOf(t0)},
		{TransactionID: "w-b", Worker: "w1", Status: "lost", Attempts: 1, NextAttemptAt: store.MillisOf(t0)}, // refused by the CHECK
	})
	if err == nil {
		t.Fatal("a record with an invalid status: err = nil")
	}
	if got := getMovement(t, s, "w-a"); !reflect.DeepEqual(got, before) {
		t.Fatalf("w-a was recorded although its batch failed: %+v", got)
	}
}

// testReconcileReads: reconciliation reads real-money bets and movements by
// operator, player and player prefix, and never a token or a session hash.
func testReconcileReads(t *testing.T, s *store.Store, _ string) {
	ctx := t.Context()
	insertDebit(t, s, "bet-w-a", 1000, nil)
	if _, err := s.ExecForTest(ctx, `INSERT INTO bets (id, round_id, game_id, session_hash, operator, player_id, token, currency, demo, amount, status, placed_at)
		VALUES ('bet-demo', 'round-1', 'crash', ?, 'op-1', 'player-1', ?, 'BRL', ?, 100, 'lost', ?)`,
		make([]byte, 32), mvToken, true, store.MillisOf(t0)); err != nil {
		t.Fatal(err)
	}
	other := newMovement("w-b")
	other.PlayerID = "other-2"
	insertMovement(t, s, newMovement("w-a"), other)

	bets, err := s.ReconcileBets(ctx, store.ReconcileFilter{Operator: "op-1", PlayerPrefix: "player-"})
	if err != nil {
		t.Fatal(err)
	}
	payout := int64(1500)
	wantBet := store.ReconcileBetRecord{ID: "bet-w-a", RoundID: "round-1", Operator: "op-1", PlayerID: "player-1",
		Status: "cashed_out", Amount: 1000, Payout: &payout}
	if len(bets) != 1 || !reflect.DeepEqual(bets[0], wantBet) {
		t.Fatalf("ReconcileBets = %+v, want only %+v (no demo bet)", bets, wantBet)
	}
	moves, err := s.ReconcileMovements(ctx, store.ReconcileFilter{PlayerPrefix: "player-"})
	if err != nil {
		t.Fatal(err)
	}
	if len(moves) != 1 || moves[0].TransactionID != "w-a" || moves[0].Amount != 2350 || moves[0].Status != store.MovementPending {
		t.Fatalf("ReconcileMovements = %+v", moves)
	}
	if moves[0].Token != "" {
		t.Fatal("ReconcileMovements read the token")
	}
	if all, err := s.ReconcileMovements(ctx, store.ReconcileFilter{}); err != nil || len(all) != 2 {
		t.Fatalf("every movement: %d, %v", len(all), err)
	}
	if one, err := s.ReconcileMovements(ctx, store.ReconcileFilter{PlayerID: "other-2", Operator: "op-1"}); err != nil ||
		len(one) != 1 || one[0].TransactionID != "w-b" {
		t.Fatalf("one player's movements: %+v, %v", one, err)
	}
}
