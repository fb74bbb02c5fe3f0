package engine_test

import (
	"bytes"
	"context"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/integration/pgtest"
	"github.com/crashstudio/crashgame/internal/chains"
	"github.com/crashstudio/crashgame/internal/engine"
	"github.com/crashstudio/crashgame/internal/fairness"
	"github.com/crashstudio/crashgame/internal/movements"
	"github.com/crashstudio/crashgame/internal/store"
	"github.com/crashstudio/crashgame/internal/wallet"
)

// orphan is a bet as an interrupted table left it, and what recovery must
// make of it.
type orphan struct {
	bet  store.BetRecord // ID, RoundID, Status, Amount, AutoCashout, FreebetID, Demo; Operator defaults to acme
	want settledAs
}

// settledAs is a bet after recovery, and the movement recovery queued for it
// (nil: none).
type settledAs struct {
	status     string
	multiplier int64
	payout     *int64
	move       *wantMove
}

type wantMove struct {
	kind    movements.MovementKind
	amount  int64
	winType wallet.WinType
	freebet string // "" for freebet_id null
	reason  string
}

func cents(v int64) *int64 { return &v }

func win(amount int64) *wantMove {
	return &wantMove{kind: movements.KindWin, amount: amount, winType: wallet.WinTypeWin}
}

func rollback(amount int64, reason string) *wantMove {
	return &wantMove{kind: movements.KindRollback, amount: amount, reason: reason}
}

var demoPlayer = engine.Player{Session: []byte("demo-session-0000000000000000000"), Operator: "acme", Currency: "BRL", Name: "Guest", Demo: true}

// The rollback reasons an operator reads (docs/failover.md).
const (
	reasonBetting = "round interrupted before take-off"
	reasonFlight  = "round interrupted in flight"
	reasonPending = "debit outcome unknown when the round was interrupted"
	reasonOld     = "debit outcome unknown after its round"
)

// The fail-over rule, for a round that a table left betting or flying (at
// boot, or when another replica takes the table over). Every scenario also
// holds a finished round with a bet left pending (rolled back) and a lost
// bet (left alone).
//
// Rule RB-5 RB-1 RB-6 RB-12: orphan bets (their /bet outcome unknown, or in
// play in a round that never ended) are rolled back with the debit's amount
// and no freebet_id, and a freebet returns to its queue.
// Rule WIN-1 WIN-3 WIN-4 WIN-16 WIN-17 LIM-14: an auto-cashout at or below the
// committed crash point of a round that flew is paid at exactly its target,
// capped at max_win, by a /win that inherits the debit's freebet_id; in a
// round that crashed too, where a bet left accepted is otherwise lost.
func TestRecoverInterruptedRound(t *testing.T) {
	t.Parallel()
	scenarios := []struct {
		name   string
		status string // of the interrupted round
		bets   []orphan
	}{
		{
			name:   "interrupted in betting: the round never flew, every bet is refunded",
			status: engine.RoundBetting,
			bets: []orphan{
				{store.BetRecord{ID: "b_auto", Status: engine.StatusAccepted, Amount: 1000, AutoCashout: 150},
					settledAs{status: engine.StatusVoid, move: rollback(1000, reasonBetting)}},
				{store.BetRecord{ID: "b_hold", Status: engine.StatusAccepted, Amount: 700},
					settledAs{status: engine.StatusVoid, move: rollback(700, reasonBetting)}},
				{store.BetRecord{ID: "b_pending", Status: engine.StatusPending, Amount: 200, AutoCashout: 150},
					settledAs{status: engine.StatusVoid, move: rollback(200, reasonPending)}},
				{store.BetRecord{ID: "b_free", Status: engine.StatusAccepted, Amount: 300, AutoCashout: 150, FreebetID: strp("g-betting")},
					settledAs{status: engine.StatusVoid, move: rollback(300, reasonBetting)}},
				{store.BetRecord{ID: "b_demo", Status: engine.StatusAccepted, Amount: 1000, AutoCashout: 150, Demo: true},
					settledAs{status: engine.StatusVoid}},
				{store.BetRecord{ID: "b_cancelled", Status: engine.StatusCancelled, Amount: 500},
					settledAs{status: engine.StatusCancelled}},
			},
		},
		{
			name:   "interrupted in flight at crash point 10.00x",
			status: engine.RoundFlying,
			bets: []orphan{
				{store.BetRecord{ID: "b_below", Status: engine.StatusAccepted, Amount: 1000, AutoCashout: 150},
					settledAs{status: engine.StatusCashedOut, multiplier: 150, payout: cents(1500), move: win(1500)}},
				{store.BetRecord{ID: "b_equal", Status: engine.StatusAccepted, Amount: 333, AutoCashout: 1000},
					settledAs{status: engine.StatusCashedOut, multiplier: 1000, payout: cents(3330), move: win(3330)}},
				{store.BetRecord{ID: "b_above", Status: engine.StatusAccepted, Amount: 1000, AutoCashout: 1001},
					settledAs{status: engine.StatusVoid, move: rollback(1000, reasonFlight)}},
				{store.BetRecord{ID: "b_hold", Status: engine.StatusAccepted, Amount: 700},
					settledAs{status: engine.StatusVoid, move: rollback(700, reasonFlight)}},
				// 100000 x 6.00 = 600000, over acme's max_win in BRL.
				{store.BetRecord{ID: "b_capped", Status: engine.StatusAccepted, Amount: 100000, AutoCashout: 600},
					settledAs{status: engine.StatusCashedOut, multiplier: 600, payout: cents(500000), move: win(500000)}},
				{store.BetRecord{ID: "b_free_win", Status: engine.StatusAccepted, Amount: 500, AutoCashout: 200, FreebetID: strp("g-win")},
					settledAs{status: engine.StatusCashedOut, multiplier: 200, payout: cents(1000),
						move: &wantMove{kind: movements.KindWin, amount: 1000, winType: wallet.WinTypeFreebet, freebet: "g-win"}}},
				{store.BetRecord{ID: "b_free_above", Status: engine.StatusAccepted, Amount: 300, AutoCashout: 1500, FreebetID: strp("g-above")},
					settledAs{status: engine.StatusVoid, move: rollback(300, reasonFlight)}},
				{store.BetRecord{ID: "b_demo_below", Status: engine.StatusAccepted, Amount: 1000, AutoCashout: 150, Demo: true},
					settledAs{status: engine.StatusCashedOut, multiplier: 150, payout: cents(1500)}},
				{store.BetRecord{ID: "b_demo_hold", Status: engine.StatusAccepted, Amount: 1000, Demo: true},
					settledAs{status: engine.StatusVoid}},
				// Its /bet outcome is unknown: rolled back, its target notwithstanding.
				{store.BetRecord{ID: "b_pending", Status: engine.StatusPending, Amount: 200, AutoCashout: 150},
					settledAs{status: engine.StatusVoid, move: rollback(200, reasonPending)}},
				// Cashed out before the interruption: its win was queued then.
				{store.BetRecord{ID: "b_cashed", Status: engine.StatusCashedOut, Amount: 100, Multiplier: 120, Payout: cents(120)},
					settledAs{status: engine.StatusCashedOut, multiplier: 120, payout: cents(120)}},
				// Rule WIN-8: refunded, so never lost: no zero_win even where it is on.
				{store.BetRecord{ID: "b_zero", Operator: "zero", Status: engine.StatusAccepted, Amount: 500},
					settledAs{status: engine.StatusVoid, move: rollback(500, reasonFlight)}},
			},
		},
	}
	stores := []struct {
		name string
		dsn  func(t *testing.T) string
	}{
		{"sqlite", func(*testing.T) string { return "" }},
		{"postgres", func(t *testing.T) string { return pgtest.Start(t) }},
	}
	for _, sc := range scenarios {
		for _, st := range stores {
			t.Run(sc.name+"/"+st.name, func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				fb := &fakeFreebets{open: map[string]int64{}}
				h := newHarnessOn(t, st.dsn(t), nil, fb)
				now := store.MillisOf(h.clock.Now())
				rounds := []store.RoundRecord{
					{ID: "crash-1", GameID: "crash", Seq: 1, Hash: "h1", CrashPoint: 200,
						Status: engine.RoundFinished, BettingEndsAt: now, StartedAt: now, CrashedAt: now, CreatedAt: now},
					{ID: "crash-2", GameID: "crash", Seq: 2, Hash: "h2", CrashPoint: 1000,
						Status: sc.status, BettingEndsAt: now, CreatedAt: now},
				}
				if sc.status == engine.RoundFlying {
					rounds[1].StartedAt = now
				}
				for _, r := range rounds {
					if err := h.st.InsertRound(ctx, r); err != nil {
						t.Fatal(err)
					}
				}
				bets := append([]orphan{
					{store.BetRecord{ID: "b_old_pending", RoundID: "crash-1", Status: engine.StatusPending, Amount: 100},
						settledAs{status: engine.StatusVoid, move: rollback(100, reasonOld)}},
					{store.BetRecord{ID: "b_old_lost", RoundID: "crash-1", Status: engine.StatusLost, Amount: 100, Payout: cents(0)},
						settledAs{status: engine.StatusLost, payout: cents(0)}},
					// Left accepted after the crash of crash-1 at 2.00x (the
					// leader's term ended before its losses, or before an
					// auto-cashout was committed): a target the round reached
					// is paid at it; every other bet is lost.
					{store.BetRecord{ID: "b_old_auto", RoundID: "crash-1", Status: engine.StatusAccepted, Amount: 1000, AutoCashout: 150},
						settledAs{status: engine.StatusCashedOut, multiplier: 150, payout: cents(1500), move: win(1500)}},
					{store.BetRecord{ID: "b_old_auto_equal", RoundID: "crash-1", Status: engine.StatusAccepted, Amount: 1000, AutoCashout: 200},
						settledAs{status: engine.StatusCashedOut, multiplier: 200, payout: cents(2000), move: win(2000)}},
					{store.BetRecord{ID: "b_old_auto_above", RoundID: "crash-1", Status: engine.StatusAccepted, Amount: 1000, AutoCashout: 201},
						settledAs{status: engine.StatusLost, payout: cents(0)}},
					{store.BetRecord{ID: "b_old_hold", RoundID: "crash-1", Status: engine.StatusAccepted, Amount: 1000},
						settledAs{status: engine.StatusLost, payout: cents(0)}},
				}, sc.bets...)
				var wantRecovery engine.Recovery
				var wantReturned []string
				wantSettled := map[string]string{} // bet id: the status announced to its session
				for _, o := range bets {
					b := o.bet
					if b.RoundID == "" {
						b.RoundID = "crash-2"
					}
					if b.Operator == "" {
						b.Operator = "acme"
					}
					p := playerOf(b.Operator, "alice")
					if b.Demo {
						p = demoPlayer
					}
					b.GameID, b.SessionHash, b.PlayerID, b.Token, b.Currency, b.PlacedAt = "crash", p.Session, p.PlayerID, p.Token, "BRL", now
					if err := h.st.InsertBet(ctx, &b); err != nil {
						t.Fatal(err)
					}
					if o.want.status != b.Status {
						wantSettled[b.ID] = o.want.status
					}
					switch {
					case o.want.status == b.Status:
					case o.want.status == engine.StatusCashedOut:
						wantRecovery.CashedOut++
					case o.want.status == engine.StatusLost:
						wantRecovery.Lost++
					default:
						wantRecovery.RolledBack++
						if b.FreebetID != nil {
							wantReturned = append(wantReturned, *b.FreebetID)
						}
					}
				}
				wantRecovery.Rounds = 1

				got, err := h.table.Recover(ctx)
				settled := got.Settled
				got.Settled = nil
				if err != nil || !reflect.DeepEqual(got, wantRecovery) {
					t.Fatalf("Recover = %+v, %v; want %+v", got, err, wantRecovery)
				}
				// Every bet moved is returned as its player now sees it, for
				// its session's streams once the transaction committed.
				for _, sb := range settled {
					rec := h.bet(sb.Bet.BetID)
					var payout int64
					if rec.Payout != nil {
						payout = *rec.Payout
					}
					if want, ok := wantSettled[sb.Bet.BetID]; !ok || sb.Bet.Status != want || !bytes.Equal(sb.Session, rec.SessionHash) ||
						sb.Bet.Multiplier != rec.Multiplier || sb.Bet.Payout != payout {
						t.Errorf("settled %+v (session %x); want status %q of bet %+v", sb.Bet, sb.Session, want, rec)
					}
					delete(wantSettled, sb.Bet.BetID)
				}
				if len(wantSettled) != 0 {
					t.Errorf("settled but not returned: %v", wantSettled)
				}
				moves := map[string]movements.MovementRecord{}
				for _, m := range h.movements() {
					if _, dup := moves[m.BetID]; dup {
						t.Fatalf("two movements for bet %s", m.BetID)
					}
					moves[m.BetID] = m
				}
				for _, o := range bets {
					rec := h.bet(o.bet.ID)
					if rec.Status != o.want.status || rec.Multiplier != o.want.multiplier || !samePayout(rec.Payout, o.want.payout) {
						t.Errorf("%s: %s x%d payout %v; want %s x%d payout %v", o.bet.ID, rec.Status, rec.Multiplier, showCents(rec.Payout),
							o.want.status, o.want.multiplier, showCents(o.want.payout))
					}
					m, moved := moves[o.bet.ID]
					delete(moves, o.bet.ID)
					switch w := o.want.move; {
					case w == nil && moved:
						t.Errorf("%s: unexpected movement %+v", o.bet.ID, m)
					case w == nil:
					case !moved:
						t.Errorf("%s: no movement, want %+v", o.bet.ID, *w)
					case m.Kind != w.kind || m.Amount != w.amount || m.WinType != w.winType || m.Reason != w.reason ||
						freebetOf(m.FreebetID) != w.freebet ||
						m.RoundID != rec.RoundID || m.PlayerID != rec.PlayerID || m.Operator != rec.Operator:
						t.Errorf("%s: movement %+v, want %+v", o.bet.ID, m, *w)
					}
				}
				if len(moves) != 0 {
					t.Errorf("movements for no expected bet: %+v", moves)
				}
				for id, want := range map[string]string{"crash-1": engine.RoundFinished, "crash-2": engine.RoundVoid} {
					if r, err := h.st.Round(ctx, "crash", id); err != nil || r.Status != want {
						t.Errorf("round %s: %s %v, want %s", id, r.Status, err, want)
					}
				}
				// The void round records when and by which rule it was
				// settled, and no crash: it never crashed.
				wantRule := map[string]string{engine.RoundBetting: engine.VoidFailoverBetting, engine.RoundFlying: engine.VoidFailoverFlight}[sc.status]
				if r, err := h.st.Round(ctx, "crash", "crash-2"); err != nil || r.VoidRule != wantRule ||
					r.VoidedAt != store.MillisOf(h.clock.Now()) || r.CrashedAt != 0 {
					t.Errorf("void round: rule %q voided at %d crashed at %d, %v; want %q at %d, no crash",
						r.VoidRule, r.VoidedAt, r.CrashedAt, err, wantRule, store.MillisOf(h.clock.Now()))
				}
				if returned := fb.returnedSnapshot(); !slices.Equal(sorted(returned), sorted(wantReturned)) {
					t.Errorf("grants returned %v, want %v", returned, wantReturned)
				}

				// Once settled, nothing is settled twice.
				movements := len(h.movements())
				again, err := h.table.Recover(ctx)
				if err != nil || !reflect.DeepEqual(again, engine.Recovery{}) {
					t.Fatalf("second Recover = %+v, %v; want nothing", again, err)
				}
				if n := len(h.movements()); n != movements {
					t.Fatalf("%d movements after the second Recover, %d before", n, movements)
				}
				if n := len(fb.returnedSnapshot()); n != len(wantReturned) {
					t.Fatalf("%d grants returned after the second Recover, want %d", n, len(wantReturned))
				}
			})
		}
	}
}

// A table's term of leadership starts by settling the round the previous
// leader left in flight (under the term's fence), then opens the next round
// of the same hash chain; the settled round reveals its hash and crash point,
// computed from the sealed chain (nothing of them was stored before), which
// players verify against the next.
func TestNewTermSettlesThenOpensTheNextRoundOfTheChain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHarness(t, "")
	// The chain the previous leader published, and its first round, left in
	// flight with one bet in play.
	seed, err := fairness.NewSeed()
	if err != nil {
		t.Fatal(err)
	}
	chain := fairness.NewChain(seed, 1000)
	now := store.MillisOf(h.clock.Now())
	sealed, err := engine.FixedSealer().Seal(seed[:], "crash-c1")
	if err != nil {
		t.Fatal(err)
	}
	salt, source := strings.Repeat("5a", 32), chains.SaltFromGameDraw
	if err := h.st.InsertChain(ctx, store.ChainRecord{ID: "crash-c1", GameID: "crash", Number: 1, FirstSeq: 1, Length: 1000,
		Terminal: fairness.FormatHash(chain.Terminal()), RTPBasisPts: testGame.RTPBasisPoints, MaxMultiplier: testGame.MaxMultiplier,
		FormulaVersion: fairness.FormulaVersion, SealedSeed: sealed, CreatedAt: now, SeedingEndsAt: now,
		Salt: &salt, SaltSource: &source, SaltFixedAt: &now}); err != nil {
		t.Fatal(err)
	}
	hash1, err := chain.Hash(1)
	if err != nil {
		t.Fatal(err)
	}
	cp := fairness.CrashPoint(hash1, salt, testGame.RTPBasisPoints, testGame.MaxMultiplier)
	// The round as the leader stored it: its chain and position, no outcome.
	interrupted := store.RoundRecord{ID: "crash-1", GameID: "crash", Seq: 1, ChainID: "crash-c1", Position: 1,
		Status: engine.RoundFlying, BettingEndsAt: now, StartedAt: now, CreatedAt: now}
	if err := h.st.InsertRound(ctx, interrupted); err != nil {
		t.Fatal(err)
	}
	bet := store.BetRecord{ID: "b_held", RoundID: "crash-1", GameID: "crash", SessionHash: alice.Session, Operator: "acme", PlayerID: "alice",
		Token: alice.Token, Currency: "BRL", Amount: 400, Status: engine.StatusAccepted, PlacedAt: now}
	if err := h.st.InsertBet(ctx, &bet); err != nil {
		t.Fatal(err)
	}

	h.run()
	v := h.waitPhase(engine.PhaseBetting)
	if v.Seq != 2 || v.RoundID != "crash-2" {
		t.Fatalf("next round %s (seq %d), want crash-2", v.RoundID, v.Seq)
	}
	ended, err := h.table.EndedRound(ctx, "crash-1")
	if err != nil || ended.Status != engine.RoundVoid || ended.Hash != fairness.FormatHash(hash1) || ended.CrashPoint != cp {
		t.Fatalf("settled round %+v, %v", ended, err)
	}
	// Rule RB-5: its bet in play, without an auto-cashout, is refunded.
	if mv := h.movements(); h.bet("b_held").Status != engine.StatusVoid || len(mv) != 1 || mv[0].BetID != "b_held" ||
		mv[0].Kind != movements.KindRollback || mv[0].Amount != 400 || mv[0].Reason != reasonFlight {
		t.Fatalf("bet %s, movements %+v", h.bet("b_held").Status, mv)
	}
	next, err := h.st.Round(ctx, "crash", "crash-2")
	if err != nil {
		t.Fatal(err)
	}
	// The next round of the same chain, its outcome not stored before its end.
	if next.ChainID != "crash-c1" || next.Position != 2 || next.Hash != "" || next.CrashPoint != 0 {
		t.Fatalf("round 2 is %+v; want position 2 of crash-c1, no hash nor crash point stored", next)
	}
	hash2, _ := chain.Hash(2)
	if cp2, err := h.table.CrashPointForTest(ctx, "crash-2"); err != nil || cp2 != fairness.CrashPoint(hash2, salt, testGame.RTPBasisPoints, testGame.MaxMultiplier) {
		t.Fatalf("round 2 is not drawn from position 2 of the chain: %d, %v", cp2, err)
	}
}

func strp(s string) *string { return &s }

func samePayout(a, b *int64) bool { return a == nil && b == nil || a != nil && b != nil && *a == *b }

func showCents(p *int64) string {
	if p == nil {
		return "none"
	}
	return strconv.FormatInt(*p, 10)
}

// freebetOf is a freebet_id as the tests name it: "" for null.
func freebetOf(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func sorted(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }

func (f *fakeFreebets) returnedSnapshot() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.returned)
}

// A bet whose answer a player lost in a fail-over is shown to the player once
// the next leader settled it: the table that takes over sends a `bet` event
// with the bet's settled state to the bet's session (refunded: void; or paid
// at its auto-cashout), after the transaction that settled it committed, so a
// page that stayed connected (or reconnected before the settlement) shows it
// without reading My bets again.
func TestFailOverAnnouncesTheSettledBets(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "")
	h.run()
	v := h.roundCrashingAbove(300)
	bob := playerOf("acme", "bob")
	a := mustBet(t, h, alice, engine.BetRequest{Amount: 100, AutoCashout: 150})
	b := mustBet(t, h, bob, engine.BetRequest{Amount: 200})
	h.fly()
	next := h.replica("replica-b")
	subA, subB := next.table.Subscribe(alice.Session, 64), next.table.Subscribe(bob.Session, 64)
	t.Cleanup(func() { subA.Close(); subB.Close() })
	old := h.lease()
	if err := h.st.ReleaseLease(context.Background(), testGame.ID, old.Holder, old.Epoch); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		sub              *engine.Subscription
		betID, status    string
		multiplier, paid int64
	}{
		{subA, a.Bet.BetID, engine.StatusCashedOut, 150, 150},
		{subB, b.Bet.BetID, engine.StatusVoid, 0, 0},
	} {
		deadline := time.After(10 * time.Second)
		for found := false; !found; {
			select {
			case ev := <-tt.sub.C:
				if ev.Type != engine.EventBet || ev.Bet == nil || ev.Bet.BetID != tt.betID {
					continue
				}
				found = true
				if ev.Bet.Status != tt.status || ev.Bet.Multiplier != tt.multiplier || ev.Bet.Payout != tt.paid || ev.Bet.RoundID != v.RoundID {
					t.Errorf("bet %s announced as %+v; want %s x%d paying %d", tt.betID, *ev.Bet, tt.status, tt.multiplier, tt.paid)
				}
				if got := h.bet(tt.betID).Status; got != tt.status {
					t.Errorf("bet %s announced before its settlement was stored: stored %s", tt.betID, got)
				}
			case <-deadline:
				t.Fatalf("no bet event for bet %s (%s) after the fail-over", tt.betID, tt.status)
			}
		}
	}
}
