package reconcile

import (
	"strings"
	"testing"
)

func ptr[T any](v T) *T { return &v }

const player = "player-0001"

// fixture is a pair of sides that agree: one bet of each fate, seen by both.
//
//	b-won    1000 cashed out for 2500 (win)
//	b-lost    500 lost, open at the operator (zero_win off)
//	b-cancel  700 cancelled, rolled back
//	b-free    500 free round cashed out for 1010 (win typed freebet)
//	b-refused 300 refused by the operator: no debit, no movement
//	b-void    400 void before its debit reached the operator: a rollback that
//	              moved nothing (RB-13)
//
// The player started with 100000 and moved -1000 +2500 -500 -700 +700 +1010.
func fixture() (Game, Ledger, Options) {
	g := Game{
		Bets: []Bet{
			{ID: "b-won", RoundID: "r1", Operator: "dev", PlayerID: player, Status: "cashed_out", Amount: 1000, Payout: ptr[int64](2500), OperatorTxID: "op-1"},
			{ID: "b-lost", RoundID: "r1", Operator: "dev", PlayerID: player, Status: "lost", Amount: 500, OperatorTxID: "op-2"},
			{ID: "b-cancel", RoundID: "r2", Operator: "dev", PlayerID: player, Status: "cancelled", Amount: 700, OperatorTxID: "op-3"},
			{ID: "b-free", RoundID: "r2", Operator: "dev", PlayerID: player, Status: "cashed_out", Amount: 500, FreebetID: ptr("camp#1"), Payout: ptr[int64](1010), OperatorTxID: "op-4"},
			{ID: "b-refused", RoundID: "r3", Operator: "dev", PlayerID: player, Status: "refused", Amount: 300},
			{ID: "b-void", RoundID: "r3", Operator: "dev", PlayerID: player, Status: "void", Amount: 400},
		},
		Movements: []Movement{
			{TransactionID: "w-won", Kind: "win", Operator: "dev", PlayerID: player, RoundID: "r1", BetID: "b-won", Amount: 2500, WinType: "win", Status: "done", Attempts: 1, OperatorTxID: "op-5"},
			{TransactionID: "rb-cancel", Kind: "rollback", Operator: "dev", PlayerID: player, RoundID: "r2", BetID: "b-cancel", Amount: 700, Status: "done", Attempts: 2, OperatorTxID: "op-6"},
			{TransactionID: "w-free", Kind: "win", Operator: "dev", PlayerID: player, RoundID: "r2", BetID: "b-free", Amount: 1010, WinType: "freebet", FreebetID: ptr("camp#1"), Status: "done", Attempts: 1, OperatorTxID: "op-7"},
			{TransactionID: "rb-void", Kind: "rollback", Operator: "dev", PlayerID: player, RoundID: "r3", BetID: "b-void", Amount: 400, Status: "done", Attempts: 1, OperatorTxID: "op-8"},
		},
	}
	op := Ledger{
		Movements: []OpMovement{
			{OperatorTransactionID: "op-1", PlayerID: player, TransactionID: "b-won", Kind: "bet", Amount: 1000, Delta: -1000, RoundID: "r1", Settlement: ptr("win"), SettledBy: ptr("op-5")},
			{OperatorTransactionID: "op-2", PlayerID: player, TransactionID: "b-lost", Kind: "bet", Amount: 500, Delta: -500, RoundID: "r1"},
			{OperatorTransactionID: "op-3", PlayerID: player, TransactionID: "b-cancel", Kind: "bet", Amount: 700, Delta: -700, RoundID: "r2", Settlement: ptr("rollback"), SettledBy: ptr("op-6")},
			{OperatorTransactionID: "op-4", PlayerID: player, TransactionID: "b-free", Kind: "bet", Amount: 500, Delta: 0, RoundID: "r2", FreebetID: ptr("camp#1"), Settlement: ptr("freebet"), SettledBy: ptr("op-7")},
			{OperatorTransactionID: "op-5", PlayerID: player, TransactionID: "w-won", Kind: "win", Amount: 2500, Delta: 2500, BetID: ptr("b-won"), RoundID: "r1", Type: "win"},
			{OperatorTransactionID: "op-6", PlayerID: player, TransactionID: "rb-cancel", Kind: "rollback", Amount: 700, Delta: 700, BetID: ptr("b-cancel"), RoundID: "r2"},
			{OperatorTransactionID: "op-7", PlayerID: player, TransactionID: "w-free", Kind: "win", Amount: 1010, Delta: 1010, BetID: ptr("b-free"), RoundID: "r2", FreebetID: ptr("camp#1"), Type: "freebet"},
			{OperatorTransactionID: "op-8", PlayerID: player, TransactionID: "rb-void", Kind: "rollback", Amount: 400, Delta: 0, BetID: ptr("b-void"), RoundID: "r3"},
		},
		Players: []OpPlayer{{PlayerID: player, Balance: 102010, Moved: 2010, OpenBets: []string{"b-lost"}}},
	}
	return g, op, Options{InitialBalances: map[string]int64{player: 100000}}
}

// zeroWinFixture is fixture with the operator taking zero_win: b-lost ends in
// a zero_win on both sides.
func zeroWinFixture() (Game, Ledger, Options) {
	g, op, opts := fixture()
	opts.ZeroWin = true
	g.Movements = append(g.Movements, Movement{TransactionID: "zw-lost", Kind: "win", Operator: "dev", PlayerID: player, RoundID: "r1",
		BetID: "b-lost", WinType: "zero_win", Status: "done", Attempts: 1, OperatorTxID: "op-9"})
	op.Movements[1].Settlement, op.Movements[1].SettledBy = ptr("zero_win"), ptr("op-9")
	op.Movements = append(op.Movements, OpMovement{OperatorTransactionID: "op-9", PlayerID: player, TransactionID: "zw-lost", Kind: "win",
		BetID: ptr("b-lost"), RoundID: "r1", Type: "zero_win"})
	op.Players[0].OpenBets = []string{}
	return g, op, opts
}

func TestCompareCleanPairHasZeroDifferences(t *testing.T) {
	g, op, opts := fixture()
	r := Compare(g, op, opts)
	if !r.OK() {
		t.Fatalf("a clean pair gave differences:\n%s", r)
	}
	if r.Debits != 4 || r.Wins != 2 || r.ZeroWins != 0 || r.Rollbacks != 2 || r.Open != 1 || r.Players != 1 || r.GameBets != 6 || r.GameMovements != 4 {
		t.Errorf("counts: %+v", r)
	}
	if got := r.String(); !strings.HasPrefix(got, "reconciliation: zero differences (4 debits, 2 wins, 0 zero_wins, 2 rollbacks, 1 open (lost), 1 players") {
		t.Errorf("String() = %q", got)
	}

	g, op, opts = zeroWinFixture()
	r = Compare(g, op, opts)
	if !r.OK() {
		t.Fatalf("a clean zero_win pair gave differences:\n%s", r)
	}
	if r.ZeroWins != 1 || r.Open != 0 {
		t.Errorf("zero_win counts: %+v", r)
	}
	if r := CheckLedger(op, opts); !r.OK() || r.Debits != 4 || r.GameBets != 0 {
		t.Errorf("CheckLedger on a clean ledger: %+v", r)
	}
	if r := Compare(Game{}, Ledger{}, Options{}); !r.OK() {
		t.Errorf("two empty sides: %v", r.Differences)
	}
}

func TestCompareDetectsEachDifference(t *testing.T) {
	cases := []struct {
		name    string
		zeroWin bool
		mutate  func(g *Game, op *Ledger, opts *Options)
		want    string // a substring of one difference
	}{
		// ---- one-to-one movements ----
		{"game win missing at the operator", false, func(g *Game, op *Ledger, _ *Options) {
			op.Movements = drop(op.Movements, "w-won")
			op.Movements[0].Settlement, op.Movements[0].SettledBy = nil, nil
		}, "game movement w-won (win 2500 of bet b-won) is done but not in the operator's ledger"},
		{"operator rollback missing in the game", false, func(g *Game, _ *Ledger, _ *Options) {
			g.Movements = dropGame(g.Movements, "rb-cancel")
		}, "operator rollback rb-cancel (700, bet b-cancel) has no movement in the game"},
		{"operator debit without a game bet", false, func(g *Game, _ *Ledger, _ *Options) {
			g.Bets = g.Bets[1:]
			g.Movements = dropGame(g.Movements, "w-won")
		}, "operator debit b-won (1000, player player-0001) has no bet in the game"},
		{"amount differs", false, func(_ *Game, op *Ledger, _ *Options) {
			op.Movements[4].Amount, op.Movements[4].Delta = 2400, 2400
		}, "movement w-won: the game has win 2500 of bet b-won round r1, the operator win 2400"},
		{"bet differs", false, func(_ *Game, op *Ledger, _ *Options) { op.Movements[5].BetID = ptr("b-lost") }, "movement rb-cancel: the game has rollback 700 of bet b-cancel round r2, the operator rollback 700 of bet b-lost"},
		{"round differs", false, func(_ *Game, op *Ledger, _ *Options) { op.Movements[4].RoundID = "r9" }, "the operator win 2500 of bet b-won round r9"},
		{"win type differs", false, func(_ *Game, op *Ledger, _ *Options) { op.Movements[6].Type = "win" }, "win w-free: the game has type freebet freebet \"camp#1\", the operator type win"},
		// WIN-17: a free round's win carries the debit's freebet_id.
		{"win freebet differs", false, func(_ *Game, op *Ledger, _ *Options) { op.Movements[6].FreebetID = nil }, "win w-free: the game has type freebet freebet \"camp#1\", the operator type freebet freebet \"\""},
		{"debit amount differs", false, func(g *Game, _ *Ledger, _ *Options) { g.Bets[1].Amount = 600 }, "debit b-lost: the game has 600 round r1"},
		{"debit freebet differs", false, func(g *Game, _ *Ledger, _ *Options) { g.Bets[1].FreebetID = ptr("x") }, "debit b-lost: the game has 500 round r1 freebet \"x\""},
		{"debit moved the wrong amount", false, func(_ *Game, op *Ledger, _ *Options) { op.Movements[1].Delta = -50 }, "debit b-lost (500, freebet \"\"): the operator moved -50"},
		{"free debit moved money", false, func(_ *Game, op *Ledger, _ *Options) { op.Movements[3].Delta = -500 }, "debit b-free (500, freebet \"camp#1\"): the operator moved -500"},
		{"win moved the wrong amount", false, func(_ *Game, op *Ledger, _ *Options) { op.Movements[4].Delta = 25 }, "win w-won (win 2500): the operator moved 25"},
		// RB-6: a rollback gives back what its debit took.
		{"rollback moved the wrong amount", false, func(_ *Game, op *Ledger, _ *Options) { op.Movements[5].Delta = 70 }, "rollback rb-cancel of bet b-cancel: the operator moved 70, want 700"},
		// RB-13: a rollback of a debit that never happened moves nothing.
		{"rollback without debit moved money", false, func(_ *Game, op *Ledger, _ *Options) { op.Movements[7].Delta = 400 }, "rollback rb-void of bet b-void: the operator moved 400, want 0"},

		// ---- ENV-19: the operator's transaction id kept by the game ----
		{"movement operator id not kept", false, func(g *Game, _ *Ledger, _ *Options) { g.Movements[0].OperatorTxID = "" }, "movement w-won: the game kept operator id \"\", the operator says \"op-5\" (ENV-19)"},
		{"debit operator id differs", false, func(g *Game, _ *Ledger, _ *Options) { g.Bets[0].OperatorTxID = "op-99" }, "debit b-won: the game kept operator id \"op-99\", the operator says \"op-1\" (ENV-19)"},

		// ---- ENV-13: no duplicates ----
		{"transaction id twice at the operator", false, func(_ *Game, op *Ledger, _ *Options) {
			m := op.Movements[5]
			m.OperatorTransactionID = "op-60"
			op.Movements = append(op.Movements, m)
		}, "operator ledger: transaction_id rb-cancel twice for player player-0001"},
		{"operator id twice", false, func(_ *Game, op *Ledger, _ *Options) { op.Movements[7].OperatorTransactionID = "op-6" }, "operator ledger: operator transaction id op-6 twice"},

		// ---- LIM-2: every movement done within 20 attempts ----
		{"movement exhausted", false, func(g *Game, _ *Ledger, _ *Options) {
			g.Movements[1].Status, g.Movements[1].Attempts, g.Movements[1].LastError = "exhausted", 20, "HTTP 503"
		}, "game movement rb-cancel (rollback of bet b-cancel): status exhausted after 20 attempts (last error \"HTTP 503\")"},
		{"movement pending", false, func(g *Game, _ *Ledger, _ *Options) { g.Movements[1].Status = "pending" }, "status pending after 2 attempts (last error \"\"); still in flight"},
		{"movement refused", false, func(g *Game, _ *Ledger, _ *Options) { g.Movements[1].Status = "refused" }, "game movement rb-cancel (rollback of bet b-cancel): status refused"},
		{"too many attempts", false, func(g *Game, _ *Ledger, _ *Options) { g.Movements[0].Attempts = 21 }, "game movement w-won: 21 attempts (LIM-2: at most 20)"},

		// ---- each confirmed debit ends in exactly one settlement matching the bet ----
		{"cashed out without win", false, func(g *Game, op *Ledger, _ *Options) {
			g.Movements = dropGame(g.Movements, "w-won")
			op.Movements = drop(op.Movements, "w-won")
			op.Movements[0].Settlement, op.Movements[0].SettledBy = nil, nil
		}, "bet b-won cashed out: want one win, the game has none"},
		{"payout differs from the win", false, func(g *Game, _ *Ledger, _ *Options) { g.Bets[0].Payout = ptr[int64](2600) }, "bet b-won cashed out for 2600: its win moves 2500"},
		{"free round won typed win on both sides", false, func(g *Game, op *Ledger, _ *Options) {
			g.Movements[2].WinType, op.Movements[6].Type, op.Movements[3].Settlement = "win", "win", ptr("win")
		}, "bet b-free (freebet \"camp#1\"): its win is typed win, want freebet"},
		// WIN-17 on the game's side.
		{"free round win without freebet_id on both sides", false, func(g *Game, op *Ledger, _ *Options) {
			g.Movements[2].FreebetID, op.Movements[6].FreebetID = nil, nil
		}, "bet b-free: its win carries freebet_id \"\", the debit \"camp#1\" (WIN-17)"},
		{"lost bet credited", false, func(g *Game, op *Ledger, _ *Options) {
			g.Movements = append(g.Movements, Movement{TransactionID: "w-lost", Kind: "win", PlayerID: player, RoundID: "r1", BetID: "b-lost", Amount: 10, WinType: "win", Status: "done", OperatorTxID: "op-9"})
			op.Movements = append(op.Movements, OpMovement{OperatorTransactionID: "op-9", PlayerID: player, TransactionID: "w-lost", Kind: "win", Amount: 10, Delta: 10, BetID: ptr("b-lost"), RoundID: "r1", Type: "win"})
			op.Movements[1].Settlement = ptr("win")
		}, "bet b-lost lost: want no settlement call without zero_win, the game has win/win w-lost"},
		{"lost bet closed at the operator", false, func(_ *Game, op *Ledger, _ *Options) { op.Movements[1].Settlement = ptr("lose") }, "bet b-lost lost, but the operator closed it as lose"},
		{"lost bet without zero_win", true, func(g *Game, op *Ledger, _ *Options) {
			g.Movements = dropGame(g.Movements, "zw-lost")
			op.Movements = drop(op.Movements, "zw-lost")
			op.Movements[1].Settlement, op.Movements[1].SettledBy = nil, nil
		}, "bet b-lost lost: want one zero_win, the game has none"},
		{"lost bet zero_win still open at the operator", true, func(_ *Game, op *Ledger, _ *Options) {
			op.Movements[1].Settlement, op.Movements[1].SettledBy = nil, nil
		}, "debit b-lost (lost in the game) is still open at the operator"},
		{"cancelled without rollback", false, func(g *Game, op *Ledger, _ *Options) {
			g.Movements = dropGame(g.Movements, "rb-cancel")
			op.Movements = drop(op.Movements, "rb-cancel")
			op.Movements[2].Settlement, op.Movements[2].SettledBy = nil, nil
		}, "bet b-cancel cancelled: want one rollback, the game has none"},
		{"refused but debited and never rolled back", false, func(_ *Game, op *Ledger, _ *Options) {
			op.Movements = append(op.Movements, OpMovement{OperatorTransactionID: "op-9", PlayerID: player, TransactionID: "b-refused", Kind: "bet", Amount: 300, Delta: -300, RoundID: "r3"})
		}, "bet b-refused refused: want one rollback, the game has none"},
		{"settled differently at the operator", false, func(_ *Game, op *Ledger, _ *Options) { op.Movements[2].Settlement = ptr("win") }, "debit b-cancel (cancelled in the game) was closed at the operator as win, want rollback"},
		{"settled by another movement at the operator", false, func(_ *Game, op *Ledger, _ *Options) { op.Movements[0].SettledBy = ptr("op-77") }, "debit b-won: closed at the operator by op-77, the game's win w-won by op-5"},
		{"two settlements at the operator", false, func(_ *Game, op *Ledger, _ *Options) {
			op.Movements = append(op.Movements, OpMovement{OperatorTransactionID: "op-9", PlayerID: player, TransactionID: "w-won-2", Kind: "win", Amount: 2500, Delta: 2500, BetID: ptr("b-won"), RoundID: "r1", Type: "win"})
		}, "bet b-won: 2 settlements at the operator (win/win w-won, win/win w-won-2)"},
		{"win without debit at the operator", false, func(g *Game, op *Ledger, _ *Options) {
			g.Bets = g.Bets[1:]
			op.Movements = drop(op.Movements, "b-won")
		}, "operator win w-won of bet b-won has no debit at the operator"},
		{"bet still accepted", false, func(g *Game, _ *Ledger, _ *Options) { g.Bets[1].Status = "accepted" }, "bet b-lost confirmed by the operator is still accepted in the game"},
		{"bet still pending with a confirmed debit", false, func(g *Game, _ *Ledger, _ *Options) { g.Bets[1].Status = "pending" }, "debit b-lost confirmed by the operator, but the game's bet is still pending"},
		{"bet pending without debit", false, func(g *Game, _ *Ledger, _ *Options) { g.Bets[4].Status = "pending" }, "game bet b-refused is still pending"},
		{"accepted bet never debited", false, func(g *Game, op *Ledger, _ *Options) {
			op.Movements = drop(op.Movements, "b-lost")
		}, "game bet b-lost is lost but the operator never confirmed its debit"},

		// ---- balances = initial + movements ----
		{"balance differs", false, func(_ *Game, op *Ledger, _ *Options) { op.Players[0].Balance = 102000 }, "player player-0001: balance 102000, but initial 100000 + movements 2010 = 102010"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g, op, opts := fixture()
			if tc.zeroWin {
				g, op, opts = zeroWinFixture()
			}
			tc.mutate(&g, &op, &opts)
			r := Compare(g, op, opts)
			if r.OK() {
				t.Fatalf("no difference found, want %q", tc.want)
			}
			for _, d := range r.Differences {
				if strings.Contains(d, tc.want) {
					return
				}
			}
			t.Fatalf("want a difference containing %q, got:\n  %s", tc.want, strings.Join(r.Differences, "\n  "))
		})
	}
}

func TestCheckLedgerAlone(t *testing.T) {
	_, op, opts := fixture()
	op.Players[0].Balance++
	op.Movements = append(op.Movements, OpMovement{OperatorTransactionID: "op-9", PlayerID: player, TransactionID: "rb-won", Kind: "rollback", Amount: 1000, Delta: 1000, BetID: ptr("b-won"), RoundID: "r1"})
	r := CheckLedger(op, opts)
	want := []string{
		"bet b-won: 2 settlements at the operator (win/win w-won, rollback rb-won); a debit ends in exactly one",
		"player player-0001: balance 102011, but initial 100000 + movements 2010 = 102010",
	}
	if strings.Join(r.Differences, "\n") != strings.Join(want, "\n") {
		t.Errorf("differences:\n%s\nwant:\n%s", strings.Join(r.Differences, "\n"), strings.Join(want, "\n"))
	}
}

func TestLedgerOnly(t *testing.T) {
	_, op, _ := fixture()
	op.Movements = append(op.Movements, OpMovement{PlayerID: "other", TransactionID: "x", Kind: "bet"})
	op.Players = append(op.Players, OpPlayer{PlayerID: "other"})
	got := op.Only(func(id string) bool { return id == player })
	if len(got.Movements) != 8 || len(got.Players) != 1 {
		t.Errorf("Only kept %d movements and %d players, want 8 and 1", len(got.Movements), len(got.Players))
	}
}

func TestReportStringListsDifferences(t *testing.T) {
	r := Report{Differences: []string{"a", "b"}, Debits: 1}
	want := "reconciliation: 2 difference(s) (1 debits, 0 wins, 0 zero_wins, 0 rollbacks, 0 open (lost), 0 players; the game: 0 bets, 0 movements)\n  a\n  b\n"
	if r.String() != want {
		t.Errorf("String() = %q, want %q", r.String(), want)
	}
}

func drop(ms []OpMovement, tx string) []OpMovement {
	var out []OpMovement
	for _, m := range ms {
		if m.TransactionID != tx {
			out = append(out, m)
		}
	}
	return out
}

func dropGame(ms []Movement, tx string) []Movement {
	var out []Movement
	for _, m := range ms {
		if m.TransactionID != tx {
			out = append(out, m)
		}
	}
	return out
}
