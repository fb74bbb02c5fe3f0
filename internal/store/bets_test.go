package store_test

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/internal/engine"
	"github.com/crashstudio/crashgame/internal/store"
)

// The contract of rounds, chains and bets, and of transactions (InTx).
var roundAndBetCases = []contractCase{
	{"InTxCommitsRollsBackAndJoins", testInTx},
	{"RoundLifecycle", testRoundLifecycle},
	{"BetMovesOnlyFromItsStatus", testMoveBet},
	{"OpenBetMovesFromEitherUnsettledStatus", testMoveOpenBet},
	{"OpenBetMovesBesideItsAcceptance", testOpenBetBesideItsAcceptance},
	{"UnsettledBetsOfEndedRounds", testUnsettledBets},
	{"BetReadsBackAsWritten", testBetAsWritten},
	{"ConcurrentSettlementsOneWins", testConcurrentSettle},
	{"CashoutRacesCrash", testCashoutRacesCrash},
	{"DecidedBetsMoveBesideABatch", testDecidedBetsBesideABatch},
	{"LossesLeaveTheAutosReached", testLossesLeaveTheAutosReached},
	{"BetsFilterAndOrder", testBetsFilter},
}

func testRound(id string, seq int64, status string) store.RoundRecord {
	at := store.MillisOf(t0)
	return store.RoundRecord{ID: id, GameID: "crash", Seq: seq, Status: status, BettingEndsAt: at, CreatedAt: at}
}

func testBet(id, roundID, status string, placed int64) *store.BetRecord {
	return &store.BetRecord{ID: id, RoundID: roundID, GameID: "crash", SessionHash: []byte("session-a"),
		Operator: "op-1", PlayerID: "p-1", Token: "tok", PlayerName: "Ma***", Currency: "BRL",
		Amount: 1000, Status: status, PlacedAt: store.Millis(placed)}
}

func mustInsertRound(t *testing.T, s *store.Store, r store.RoundRecord) {
	t.Helper()
	if err := s.InsertRound(t.Context(), r); err != nil {
		t.Fatalf("InsertRound(%s): %v", r.ID, err)
	}
}

func mustInsertBet(t *testing.T, s *store.Store, b *store.BetRecord) {
	t.Helper()
	if err := s.InsertBet(t.Context(), b); err != nil {
		t.Fatalf("InsertBet(%s): %v", b.ID, err)
	}
}

func betStatus(t *testing.T, s *store.Store, id string) store.BetRecord {
	t.Helper()
	recs, err := s.Bets(t.Context(), store.BetFilter{ID: id})
	if err != nil || len(recs) != 1 {
		t.Fatalf("Bets(%s): %d, %v", id, len(recs), err)
	}
	return recs[0]
}

// A transaction commits what fn wrote when fn returns nil, nothing when it
// fails, and a nested InTx is part of the outer one.
func testInTx(t *testing.T, s *store.Store, _ string) {
	ctx := t.Context()
	mustInsertRound(t, s, testRound("r1", 1, engine.RoundBetting))
	boom := errors.New("boom")
	err := s.InTx(ctx, func(ctx context.Context) error {
		if err := s.InsertBet(ctx, testBet("b-rolled-back", "r1", "pending", 1)); err != nil {
			return err
		}
		return s.InTx(ctx, func(ctx context.Context) error { // joins: its failure undoes the outer write
			if err := s.InsertBet(ctx, testBet("b-inner", "r1", "pending", 2)); err != nil {
				return err
			}
			return boom
		})
	})
	if !errors.Is(err, boom) {
		t.Fatalf("InTx = %v, want fn's own error", err)
	}
	if recs, err := s.Bets(ctx, store.BetFilter{}); err != nil || len(recs) != 0 {
		t.Fatalf("after a failed transaction: %d bets, %v; want none", len(recs), err)
	}
	err = s.InTx(ctx, func(ctx context.Context) error {
		if err := s.InsertBet(ctx, testBet("b-1", "r1", "pending", 1)); err != nil {
			return err
		}
		return s.InTx(ctx, func(ctx context.Context) error {
			return s.InsertBet(ctx, testBet("b-2", "r1", "pending", 2))
		})
	})
	if err != nil {
		t.Fatalf("InTx: %v", err)
	}
	if recs, err := s.Bets(ctx, store.BetFilter{}); err != nil || len(recs) != 2 {
		t.Fatalf("after a committed transaction: %d bets, %v; want 2", len(recs), err)
	}
}

func testRoundLifecycle(t *testing.T, s *store.Store, _ string) {
	ctx := t.Context()
	if seq, err := s.LastRoundSeq(ctx, "crash"); err != nil || seq != 0 {
		t.Fatalf("LastRoundSeq of no rounds = %d, %v", seq, err)
	}
	for i, id := range []string{"r1", "r2", "r3", "r4"} {
		mustInsertRound(t, s, testRound(id, int64(i+1), engine.RoundBetting))
	}
	if err := s.InsertRound(ctx, testRound("r1", 9, engine.RoundBetting)); err == nil {
		t.Fatal("a second round with one id was stored")
	}
	if seq, err := s.LastRoundSeq(ctx, "crash"); err != nil || seq != 4 {
		t.Fatalf("LastRoundSeq = %d, %v; want 4", seq, err)
	}
	for _, id := range []string{"r1", "r2", "r3"} {
		if err := s.TakeOffRound(ctx, id, 10); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{"r1", "r3"} {
		if err := s.FinishRound(ctx, id, 20, "h-"+id, 250); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.UnfinishedRounds(ctx, "crash")
	if err != nil || !slices.Equal(got, []string{"r2", "r4"}) {
		t.Fatalf("UnfinishedRounds = %v, %v; want [r2 r4]", got, err)
	}
	for _, id := range got {
		if err := s.VoidRound(ctx, id, "h-"+id, 170, 30, engine.VoidFailoverFlight); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := s.UnfinishedRounds(ctx, "crash"); err != nil || len(got) != 0 {
		t.Fatalf("UnfinishedRounds after voiding = %v, %v", got, err)
	}
	r2, err := s.Round(ctx, "crash", "r2")
	if err != nil || r2.Status != engine.RoundVoid || r2.StartedAt != 10 || r2.CrashedAt != 0 || r2.Hash != "h-r2" || r2.CrashPoint != 170 ||
		r2.VoidedAt != 30 || r2.VoidRule != engine.VoidFailoverFlight {
		t.Fatalf("Round(r2) = %+v, %v", r2, err)
	}
	if _, err := s.Round(ctx, "other-game", "r2"); !errors.Is(err, engine.ErrRoundNotFound) {
		t.Fatalf("a round of another game = %v, want ErrRoundNotFound", err)
	}
	// Every ended round is listed, newest first, void ones too: their hashes
	// keep the chain continuous.
	recent, err := s.RecentRounds(ctx, "crash", 2)
	if err != nil || len(recent) != 2 || recent[0].ID != "r4" || recent[0].Status != engine.RoundVoid ||
		recent[1].ID != "r3" || recent[1].CrashedAt != 20 || recent[1].Hash != "h-r3" {
		t.Fatalf("RecentRounds(2) = %+v, %v; want r4 (void), r3", recent, err)
	}
	if recent, err := s.RecentRounds(ctx, "crash", 10); err != nil || len(recent) != 4 || recent[2].ID != "r2" || recent[2].Status != engine.RoundVoid || recent[3].ID != "r1" {
		t.Fatalf("RecentRounds(10) = %+v, %v; want r4, r3, r2 (void), r1", recent, err)
	}
}

// A move applies only from the status it names, and writes what it carries.
func testMoveBet(t *testing.T, s *store.Store, _ string) {
	ctx := t.Context()
	mustInsertRound(t, s, testRound("r1", 1, engine.RoundFlying))
	mustInsertBet(t, s, testBet("b1", "r1", "pending", 1))
	if ok, err := s.MoveBet(ctx, "b1", "accepted", "cashed_out", store.BetChange{}); err != nil || ok {
		t.Fatalf("move from a status the bet is not in = %v, %v; want false", ok, err)
	}
	if ok, err := s.MoveBet(ctx, "b1", "pending", "accepted", store.BetChange{OperatorTxID: "op-tx-1"}); err != nil || !ok {
		t.Fatalf("accept = %v, %v", ok, err)
	}
	payout := int64(2500)
	if ok, err := s.MoveBet(ctx, "b1", "accepted", "cashed_out", store.BetChange{SettledAt: 99, Multiplier: 250, Payout: &payout}); err != nil || !ok {
		t.Fatalf("cashout = %v, %v", ok, err)
	}
	got := betStatus(t, s, "b1")
	if got.Status != "cashed_out" || got.OperatorTxID != "op-tx-1" || got.Multiplier != 250 || got.Payout == nil || *got.Payout != 2500 || got.SettledAt != 99 {
		t.Fatalf("bet after its moves = %+v", got)
	}
	if ok, err := s.MoveBet(ctx, "missing", "pending", "accepted", store.BetChange{}); err != nil || ok {
		t.Fatalf("move of an unknown bet = %v, %v; want false", ok, err)
	}
	// A refusal writes its code and when; what it does not carry stays empty.
	mustInsertBet(t, s, testBet("b2", "r1", "pending", 2))
	if ok, err := s.MoveBet(ctx, "b2", "pending", "refused", store.BetChange{SettledAt: 7, Refusal: "INSUFFICIENT_FUNDS"}); err != nil || !ok {
		t.Fatalf("refuse = %v, %v", ok, err)
	}
	got = betStatus(t, s, "b2")
	if got.Status != "refused" || got.Refusal != "INSUFFICIENT_FUNDS" || got.SettledAt != 7 || got.OperatorTxID != "" || got.Multiplier != 0 || got.Payout != nil {
		t.Fatalf("bet after its refusal = %+v", got)
	}
}

// An open bet moves from pending or from accepted, and a settled one never.
func testMoveOpenBet(t *testing.T, s *store.Store, _ string) {
	ctx := t.Context()
	mustInsertRound(t, s, testRound("r1", 1, engine.RoundFlying))
	for _, status := range []string{"pending", "accepted", "cashed_out", "lost", "void", "refused", "cancelled"} {
		id := "b-" + status
		mustInsertBet(t, s, testBet(id, "r1", status, 1))
		ok, err := s.MoveOpenBet(ctx, id, "void", store.BetChange{SettledAt: 42})
		open := status == "pending" || status == "accepted"
		if err != nil || ok != open {
			t.Fatalf("MoveOpenBet of a bet %s = %v, %v; want %v", status, ok, err, open)
		}
		if got := betStatus(t, s, id); open && (got.Status != "void" || got.SettledAt != 42) || !open && got.Status != status {
			t.Fatalf("a bet %s after MoveOpenBet = %+v", status, got)
		}
	}
	if ok, err := s.MoveOpenBet(ctx, "missing", "void", store.BetChange{}); err != nil || ok {
		t.Fatalf("MoveOpenBet of an unknown bet = %v, %v; want false", ok, err)
	}
}

// The bets left unsettled in ended rounds are those accepted, and those
// pending since before the bound; a bet of a round still in play, or
// settled, is not one. The RoundEnded filter selects the same rounds.
func testUnsettledBets(t *testing.T, s *store.Store, _ string) {
	ctx := t.Context()
	mustInsertRound(t, s, testRound("r1", 1, engine.RoundFinished))
	mustInsertRound(t, s, testRound("r2", 2, engine.RoundVoid))
	mustInsertRound(t, s, testRound("r3", 3, engine.RoundFlying))
	for _, b := range []*store.BetRecord{
		testBet("finished-accepted", "r1", "accepted", 10),
		testBet("finished-lost", "r1", "lost", 10),
		testBet("void-accepted", "r2", "accepted", 10),
		testBet("void-pending-old", "r2", "pending", 10),
		testBet("void-pending-new", "r2", "pending", 100),
		testBet("void-void", "r2", "void", 10),
		testBet("flying-accepted", "r3", "accepted", 10),
		testBet("flying-pending", "r3", "pending", 10),
	} {
		mustInsertBet(t, s, b)
	}
	if n, err := s.UnsettledBets(ctx, "crash", 50); err != nil || n != 3 {
		t.Fatalf("UnsettledBets = %d, %v; want 3 (finished-accepted, void-accepted, void-pending-old)", n, err)
	}
	if n, err := s.UnsettledBets(ctx, "other", 50); err != nil || n != 0 {
		t.Fatalf("UnsettledBets of another game = %d, %v; want 0", n, err)
	}
	got, err := s.Bets(ctx, store.BetFilter{GameID: "crash", Statuses: []string{"accepted"}, RoundEnded: true})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, b := range got {
		ids = append(ids, b.ID)
	}
	slices.Sort(ids)
	if want := []string{"finished-accepted", "void-accepted"}; !slices.Equal(ids, want) {
		t.Fatalf("accepted bets of ended rounds = %v; want %v", ids, want)
	}
}

// A void's move of an open bet (MoveOpenBet, in the void's transaction)
// while another replica's transaction is committing the bet's acceptance
// (pending -> accepted) moves the bet once the acceptance committed: on
// PostgreSQL it waits for that row and judges it as it was left, accepted,
// so the bet is never left accepted in a void round.
func testOpenBetBesideItsAcceptance(t *testing.T, s *store.Store, _ string) {
	mustInsertRound(t, s, testRound("r1", 1, engine.RoundBetting))
	mustInsertBet(t, s, testBet("b1", "r1", "pending", 1))
	var (
		holding   = make(chan struct{})
		release   = make(chan struct{})
		accepted  bool
		acceptErr error
		receiver  sync.WaitGroup
	)
	receiver.Go(func() {
		acceptErr = s.InTx(context.Background(), func(ctx context.Context) error {
			var err error
			accepted, err = s.MoveBet(ctx, "b1", "pending", "accepted", store.BetChange{OperatorTxID: "op-b1"})
			close(holding)
			<-release
			return err
		})
	})
	<-holding
	var (
		voided  bool
		voidErr error
		leader  sync.WaitGroup
	)
	leader.Go(func() {
		voidErr = s.InTx(context.Background(), func(ctx context.Context) error {
			var err error
			voided, err = s.MoveOpenBet(ctx, "b1", "void", store.BetChange{SettledAt: 9})
			return err
		})
	})
	waitForALockWaiter(t, s)
	close(release)
	receiver.Wait()
	leader.Wait()
	if acceptErr != nil || voidErr != nil || !accepted || !voided {
		t.Fatalf("acceptance %v, %v; void %v, %v; want both to move the bet, the acceptance first", accepted, acceptErr, voided, voidErr)
	}
	if got := betStatus(t, s, "b1"); got.Status != "void" || got.OperatorTxID != "op-b1" || got.SettledAt != 9 {
		t.Fatalf("the bet after its acceptance and its void = %+v; want void, with the acceptance's operator transaction id", got)
	}
}

// A bet reads back exactly as it was inserted: every field set, and every
// optional one left out (stored NULL, read back as its zero value).
func testBetAsWritten(t *testing.T, s *store.Store, _ string) {
	mustInsertRound(t, s, testRound("r1", 1, engine.RoundFlying))
	freebet, payout := "fb-1", int64(0)
	full := &store.BetRecord{ID: "b-full", RoundID: "r1", GameID: "crash", SessionHash: []byte{0, 1, 2, 0xff},
		Operator: "op-1", PlayerID: "p-1", Token: "tok-1", PlayerName: "Ma***", Currency: "BRL", Demo: true,
		Amount: 1234, AutoCashout: 250, FreebetID: &freebet, Status: "lost", Multiplier: 130, Payout: &payout,
		Refusal: "", OperatorTxID: "op-tx-9", PlacedAt: 1_700_000_000_123, SettledAt: 1_700_000_009_999}
	bare := testBet("b-bare", "r1", "pending", 5)
	for _, want := range []*store.BetRecord{full, bare} {
		mustInsertBet(t, s, want)
		got := betStatus(t, s, want.ID)
		if !reflect.DeepEqual(got, *want) {
			t.Errorf("bet read back = %+v\nwant %+v", got, *want)
		}
	}
	// The same id twice is refused: a bet's intent is stored once.
	if err := s.InsertBet(t.Context(), testBet("b-bare", "r1", "pending", 6)); err == nil {
		t.Error("a second bet with the same id was stored")
	}
}

// Money race: many settlements of one accepted bet at once (two cashouts, a
// cancel, a void): exactly one is applied, so a debit is settled once.
func testConcurrentSettle(t *testing.T, s *store.Store, _ string) {
	mustInsertRound(t, s, testRound("r1", 1, engine.RoundFlying))
	mustInsertBet(t, s, testBet("b1", "r1", "accepted", 1))
	targets := []string{"cashed_out", "cancelled", "void"}
	const n = 30
	var (
		wins atomic.Int32
		won  atomic.Value
		wg   sync.WaitGroup
	)
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			to := targets[i%len(targets)]
			ok, err := s.MoveBet(context.Background(), "b1", "accepted", to, store.BetChange{SettledAt: store.Millis(i + 1)})
			if err != nil {
				t.Errorf("MoveBet: %v", err)
			}
			if ok {
				wins.Add(1)
				won.Store(to)
			}
		})
	}
	close(start)
	wg.Wait()
	if wins.Load() != 1 {
		t.Fatalf("%d settlements applied, want exactly 1", wins.Load())
	}
	if got := betStatus(t, s, "b1"); got.Status != won.Load().(string) {
		t.Fatalf("bet is %s, the one applied was %s", got.Status, won.Load())
	}
}

// Money race: a cashout and the crash settle the same accepted bets at once;
// each bet ends either cashed out or lost, never both, and the crash reports
// exactly the bets it settled.
func testCashoutRacesCrash(t *testing.T, s *store.Store, _ string) {
	ctx := t.Context()
	mustInsertRound(t, s, testRound("r1", 1, engine.RoundFlying))
	const n = 40
	for i := range n {
		mustInsertBet(t, s, testBet("b"+string(rune('A'+i)), "r1", "accepted", int64(i)))
	}
	var (
		cashed sync.Map
		lost   []string
		wg     sync.WaitGroup
	)
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			id := "b" + string(rune('A'+i))
			payout := int64(1500)
			ok, err := s.MoveBet(context.Background(), id, "accepted", "cashed_out", store.BetChange{SettledAt: 5, Multiplier: 150, Payout: &payout})
			if err != nil {
				t.Errorf("cashout %s: %v", id, err)
			}
			if ok {
				cashed.Store(id, true)
			}
		})
	}
	wg.Go(func() {
		<-start
		var err error
		lost, err = s.MoveRoundBets(context.Background(), "r1", "accepted", "lost", 0, 6, 0)
		if err != nil {
			t.Errorf("MoveRoundBets: %v", err)
		}
	})
	close(start)
	wg.Wait()
	recs, err := s.Bets(ctx, store.BetFilter{RoundIDs: []string{"r1"}})
	if err != nil || len(recs) != n {
		t.Fatalf("Bets: %d, %v", len(recs), err)
	}
	for _, r := range recs {
		_, wasCashed := cashed.Load(r.ID)
		wasLost := slices.Contains(lost, r.ID)
		switch {
		case wasCashed == wasLost:
			t.Errorf("%s: cashed out %v, lost %v; want exactly one", r.ID, wasCashed, wasLost)
		case wasCashed && (r.Status != "cashed_out" || *r.Payout != 1500):
			t.Errorf("%s cashed out but stored %s payout %v", r.ID, r.Status, *r.Payout)
		case wasLost && (r.Status != "lost" || *r.Payout != 0 || r.SettledAt != 6):
			t.Errorf("%s lost but stored %s payout %v at %d", r.ID, r.Status, *r.Payout, r.SettledAt)
		}
	}
}

// Rule LIM-14: the crash's losses never take a bet whose auto-cashout
// target the round reached (at or below its crash point, keepAutosTo): it
// stays accepted, to be paid at its target; every other accepted bet of the
// round is lost, and nothing else moves.
func testLossesLeaveTheAutosReached(t *testing.T, s *store.Store, _ string) {
	ctx := t.Context()
	mustInsertRound(t, s, testRound("r1", 1, engine.RoundFlying))
	mustInsertRound(t, s, testRound("r2", 2, engine.RoundFlying))
	bets := []struct {
		id, round, status string
		auto              int64
		want              string
	}{
		{"no-target", "r1", "accepted", 0, "lost"},
		{"below", "r1", "accepted", 150, "accepted"},
		{"at", "r1", "accepted", 200, "accepted"},
		{"above", "r1", "accepted", 201, "lost"},
		{"cashed", "r1", "cashed_out", 0, "cashed_out"},
		{"pending", "r1", "pending", 0, "pending"},
		{"other-round", "r2", "accepted", 0, "accepted"},
	}
	for i, b := range bets {
		rec := testBet(b.id, b.round, b.status, int64(i))
		rec.AutoCashout = b.auto
		mustInsertBet(t, s, rec)
	}
	lost, err := s.MoveRoundBets(ctx, "r1", "accepted", "lost", 0, 9, 200)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(lost)
	if want := []string{"above", "no-target"}; !slices.Equal(lost, want) {
		t.Fatalf("lost %v, want %v", lost, want)
	}
	for _, b := range bets {
		if got := betStatus(t, s, b.id); got.Status != b.want {
			t.Errorf("%s is %s, want %s", b.id, got.Status, b.want)
		}
	}
}

// testDecidedBetsBesideABatch: a leader's take-off moves the bets it
// accepted that are still pending (MoveDecidedBets) while a receiving
// replica's group commit holds one of them and then moves another: neither
// waits for the other for ever (on PostgreSQL a statement that moved them
// all at once deadlocked with such a batch), every bet moves exactly once,
// with the operator transaction id of whoever moved it, and a bet the round
// did not accept stays pending.
func testDecidedBetsBesideABatch(t *testing.T, s *store.Store, _ string) {
	ctx := t.Context()
	mustInsertRound(t, s, testRound("r1", 1, engine.RoundBetting))
	decided := map[string]string{}
	for i := range 10 {
		id := "b" + string(rune('A'+i))
		mustInsertBet(t, s, testBet(id, "r1", "pending", int64(i)))
		decided[id] = "lead-" + id
	}
	mustInsertBet(t, s, testBet("bundecided", "r1", "pending", 20))
	mustInsertBet(t, s, testBet("bmoved", "r1", "accepted", 21))
	decided["bmoved"] = "lead-bmoved"
	mustInsertRound(t, s, testRound("r2", 2, engine.RoundBetting))
	mustInsertBet(t, s, testBet("bother", "r2", "pending", 22))
	decided["bother"] = "lead-bother"

	err := s.InTx(ctx, func(ctx context.Context) error {
		_, err := s.MoveDecidedBets(ctx, "r1", "pending", "accepted", decided)
		if err == nil {
			t.Error("MoveDecidedBets inside a transaction succeeded; want an error")
		}
		return errors.New("roll back")
	})
	if err == nil {
		t.Fatal("InTx returned nil")
	}
	for id := range decided {
		if id != "bmoved" {
			if got := betStatus(t, s, id); got.Status != "pending" {
				t.Fatalf("%s after the refused call: %s", id, got.Status)
			}
		}
	}

	var (
		batchMoved = map[string]bool{}
		holding    = make(chan struct{})
		waited     = make(chan struct{})
		wg         sync.WaitGroup
		batchErr   error
	)
	wg.Go(func() {
		batchErr = s.InTx(context.Background(), func(ctx context.Context) error {
			for _, id := range []string{"bB", "bA"} {
				ok, err := s.MoveBet(ctx, id, "pending", "accepted", store.BetChange{OperatorTxID: "recv-" + id})
				if err != nil {
					return err
				}
				batchMoved[id] = ok
				if id == "bB" {
					close(holding)
					<-waited
				}
			}
			return nil
		})
	})
	<-holding
	var (
		moved   int
		moveErr error
		leader  sync.WaitGroup
	)
	leader.Go(func() {
		moved, moveErr = s.MoveDecidedBets(context.Background(), "r1", "pending", "accepted", decided)
	})
	waitForALockWaiter(t, s)
	close(waited)
	leader.Wait()
	wg.Wait()
	if batchErr != nil || moveErr != nil {
		t.Fatalf("the batch: %v; MoveDecidedBets: %v", batchErr, moveErr)
	}
	byBatch := 0
	for id := range decided {
		if id == "bmoved" || id == "bother" {
			continue
		}
		got := betStatus(t, s, id)
		want := "lead-" + id
		if batchMoved[id] {
			want = "recv-" + id
			byBatch++
		}
		if got.Status != "accepted" || got.OperatorTxID != want {
			t.Errorf("%s = %s with %q; want accepted with %q", id, got.Status, got.OperatorTxID, want)
		}
	}
	if moved+byBatch != 10 {
		t.Errorf("MoveDecidedBets moved %d and the batch %d; want 10 in all, each once", moved, byBatch)
	}
	if got := betStatus(t, s, "bundecided"); got.Status != "pending" {
		t.Errorf("a bet the round did not accept = %s; want pending", got.Status)
	}
	if got := betStatus(t, s, "bother"); got.Status != "pending" {
		t.Errorf("a bet of another round = %s; want pending", got.Status)
	}
	if got := betStatus(t, s, "bmoved"); got.OperatorTxID != "" {
		t.Errorf("a bet accepted before = %+v; want it left as it was", got)
	}
}

// waitForALockWaiter returns once a PostgreSQL session waits for a row lock
// (MoveDecidedBets, waiting for the batch's), or at once on SQLite, whose one
// connection the batch holds.
func waitForALockWaiter(t *testing.T, s *store.Store) {
	t.Helper()
	if s.Dialect() != store.DialectPostgres {
		return
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		n, err := s.ExecForTest(context.Background(), `SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock'`)
		if err != nil {
			t.Fatalf("pg_stat_activity: %v", err)
		}
		if n > 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("MoveDecidedBets never waited for the batch's row")
}

func testBetsFilter(t *testing.T, s *store.Store, _ string) {
	ctx := t.Context()
	mustInsertRound(t, s, testRound("r1", 1, engine.RoundFinished))
	mustInsertRound(t, s, testRound("r2", 2, engine.RoundBetting))
	bets := []*store.BetRecord{
		testBet("b1", "r1", "lost", 1), testBet("b2", "r1", "cashed_out", 2), testBet("b3", "r2", "pending", 3),
		testBet("b4", "r2", "accepted", 4), testBet("b5", "r2", "accepted", 4),
	}
	bets[3].SessionHash, bets[3].PlayerID = []byte("session-b"), "p-2"
	free := "camp#1"
	bets[4].FreebetID = &free
	for _, b := range bets {
		mustInsertBet(t, s, b)
	}
	ids := func(recs []store.BetRecord) []string {
		out := []string{}
		for _, r := range recs {
			out = append(out, r.ID)
		}
		return out
	}
	cases := []struct {
		name string
		f    store.BetFilter
		want []string
	}{
		{"all, oldest first, ties by id", store.BetFilter{}, []string{"b1", "b2", "b3", "b4", "b5"}},
		{"newest first with a limit", store.BetFilter{NewestFirst: true, Limit: 2}, []string{"b5", "b4"}},
		{"one id of one session", store.BetFilter{ID: "b4", SessionHash: []byte("session-b")}, []string{"b4"}},
		{"an id of another session", store.BetFilter{ID: "b4", SessionHash: []byte("session-a")}, []string{}},
		{"a session", store.BetFilter{SessionHash: []byte("session-a")}, []string{"b1", "b2", "b3", "b5"}},
		{"a player of an operator in a game", store.BetFilter{Operator: "op-1", PlayerID: "p-2", GameID: "crash"}, []string{"b4"}},
		{"statuses", store.BetFilter{Statuses: []string{"accepted", "cashed_out", "lost"}, RoundIDs: []string{"r2"}}, []string{"b4", "b5"}},
		{"rounds", store.BetFilter{RoundIDs: []string{"r1", "r2"}, Statuses: []string{"pending"}}, []string{"b3"}},
		{"not of a round, placed before", store.BetFilter{ExceptRound: "r1", PlacedBefore: 4}, []string{"b3"}},
	}
	for _, c := range cases {
		got, err := s.Bets(ctx, c.f)
		if err != nil || !slices.Equal(ids(got), c.want) {
			t.Errorf("%s: %v, %v; want %v", c.name, ids(got), err, c.want)
		}
	}
	if got := betStatus(t, s, "b5"); got.FreebetID == nil || *got.FreebetID != free || got.PlayerName != "Ma***" || got.Token != "tok" {
		t.Fatalf("a bet read back = %+v", got)
	}
}
