// Package reconcile compares an operator's ledger with the game's records and
// reports every difference: the one comparison used by `crashgame reconcile`,
// the integration suite and the load generator.
//
// What it owns:
//   - the input types of both sides: the game's bets and queued movements as
//     read from its store (Game, ReadGame), and the operator's movements and
//     players as operator-sim's signed POST /admin/reconcile reports them
//     (Ledger, ReadOperatorSim);
//   - Compare, every check between the two, and CheckLedger, the checks that
//     need only the operator's side;
//   - Report: each difference as one line of text, and the counts.
//
// What it must never do:
//   - move money, or write to either side: it only reads (the store's two
//     reconciliation reads, through GameReader, and /admin/reconcile on the
//     operator's side);
//   - hold an SQL statement or a bun model: the reads are the store's
//     (internal/store/reconcile.go);
//   - print or keep a session token, a secret, an API key or a signature: the
//     types have no field for a token, the store's reads never select the
//     token columns, and an error from ReadOperatorSim names the HTTP status and the
//     operator's error code, never the request or the secret.
//
// A difference names the game's transaction ids, bet ids and player ids, so
// that an operations engineer can find them in `crashgame movements` and in
// the operator's ledger.
package reconcile

import (
	"fmt"
	"sort"
	"strings"

	"github.com/crashstudio/crashgame/internal/movements"
	"github.com/crashstudio/crashgame/internal/round"
	"github.com/crashstudio/crashgame/internal/wallet"
)

// Bet is one of the game's real-money bets. ID is the transaction_id of its
// debit (/bet).
type Bet struct {
	ID           string
	RoundID      string
	Operator     string
	PlayerID     string
	Status       string // a round.State: pending, accepted, refused, cashed_out, lost, cancelled, void
	Amount       int64
	FreebetID    *string
	Payout       *int64 // set once cashed out
	OperatorTxID string // the operator's transaction id of the debit (ENV-19); empty when not known
}

// Movement is one of the game's queued settlements (/win or /rollback) with
// its delivery state.
type Movement struct {
	TransactionID string
	Kind          string // win or rollback
	Operator      string
	PlayerID      string
	RoundID       string
	BetID         string
	Amount        int64
	WinType       string // win, freebet or zero_win (kind win only)
	FreebetID     *string
	Status        string // pending, done, refused or exhausted
	Attempts      int
	OperatorTxID  string // the operator's transaction id of the success (ENV-19)
	LastError     string // diagnostic, never a secret
}

// Game is the game's side: its real-money bets (demo bets move no money) and
// its settlement movements.
type Game struct {
	Bets      []Bet
	Movements []Movement
}

// OpMovement is one row of the operator's ledger as operator-sim's
// /admin/reconcile shows it: what the game sent beside what the operator did.
type OpMovement struct {
	OperatorTransactionID string  `json:"operator_transaction_id"`
	PlayerID              string  `json:"player_id"`
	TransactionID         string  `json:"transaction_id"`
	Kind                  string  `json:"kind"` // bet, win or rollback
	Amount                int64   `json:"amount"`
	Delta                 int64   `json:"delta"` // what the balance moved
	BetID                 *string `json:"bet_id"`
	RoundID               string  `json:"round_id"`
	FreebetID             *string `json:"freebet_id"`
	Type                  string  `json:"type"` // a win's type
	// Settlement, on a debit: how it was closed (win, freebet, zero_win, lose,
	// rollback); nil while it is open.
	Settlement *string `json:"settlement"`
	// SettledBy, on a closed debit: the operator transaction id of the
	// movement that closed it.
	SettledBy *string `json:"settled_by"`
}

// OpPlayer is one player of the operator's ledger with the sum of its
// movements.
type OpPlayer struct {
	PlayerID string   `json:"player_id"`
	Balance  int64    `json:"balance"`
	Moved    int64    `json:"moved"` // the sum of every movement's delta
	OpenBets []string `json:"open_bets"`
}

// Ledger is the operator's side.
type Ledger struct {
	Movements []OpMovement `json:"movements"`
	Players   []OpPlayer   `json:"players"`
}

// Only returns the part of the ledger whose players keep accepts.
func (l Ledger) Only(keep func(playerID string) bool) Ledger {
	var out Ledger
	for _, m := range l.Movements {
		if keep(m.PlayerID) {
			out.Movements = append(out.Movements, m)
		}
	}
	for _, p := range l.Players {
		if keep(p.PlayerID) {
			out.Players = append(out.Players, p)
		}
	}
	return out
}

// Options are what the comparison cannot read from either side.
type Options struct {
	// ZeroWin: the operator takes zero_win, so each lost bet ends in one
	// zero_win (the operator's zero_win setting of the installation).
	ZeroWin bool
	// InitialBalances, per player, the balance before any movement. A player
	// listed here must hold its initial balance plus the sum of its
	// movements; the others' balances are not checked.
	InitialBalances map[string]int64
}

// Report is the outcome of a comparison.
type Report struct {
	// Differences, one line each, sorted. Empty: the two sides agree.
	Differences []string `json:"differences"`
	// Counts of the operator's ledger.
	Debits    int `json:"debits"`
	Wins      int `json:"wins"` // wins that are not zero_win (win, freebet, lose)
	ZeroWins  int `json:"zero_wins"`
	Rollbacks int `json:"rollbacks"`
	Open      int `json:"open"` // debits still open at the operator: lost bets when zero_win is off
	Players   int `json:"players"`
	// Counts of the game's records (0 from CheckLedger).
	GameBets      int `json:"game_bets"`
	GameMovements int `json:"game_movements"`
}

// OK reports whether no difference was found.
func (r Report) OK() bool { return len(r.Differences) == 0 }

// Counts is the counts as one line.
func (r Report) Counts() string {
	return fmt.Sprintf("%d debits, %d wins, %d zero_wins, %d rollbacks, %d open (lost), %d players; the game: %d bets, %d movements",
		r.Debits, r.Wins, r.ZeroWins, r.Rollbacks, r.Open, r.Players, r.GameBets, r.GameMovements)
}

// String is the report as text: one line when the sides agree, else a
// heading and one line per difference.
func (r Report) String() string {
	if r.OK() {
		return "reconciliation: zero differences (" + r.Counts() + ")\n"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "reconciliation: %d difference(s) (%s)\n", len(r.Differences), r.Counts())
	for _, d := range r.Differences {
		b.WriteString("  ")
		b.WriteString(d)
		b.WriteByte('\n')
	}
	return b.String()
}

const (
	opKindBet       = "bet"
	settledRollback = "rollback"
	winTypeZeroWin  = string(wallet.WinTypeZeroWin)
	winTypeWin      = string(wallet.WinTypeWin)
	winTypeFreebet  = string(wallet.WinTypeFreebet)
	kindWin         = string(movements.KindWin)
	kindRollback    = string(movements.KindRollback)
	movementDone    = string(movements.StatusDone)
	movementPending = string(movements.StatusPending)
	maxAttempts     = wallet.MaxAttempts
	keySeparator    = "\x00"
)

func key(playerID, id string) string { return playerID + keySeparator + id }

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// collector gathers differences.
type collector struct{ diffs []string }

func (c *collector) add(format string, args ...any) {
	c.diffs = append(c.diffs, fmt.Sprintf(format, args...))
}

// opIndex is the operator's ledger indexed.
type opIndex struct {
	byTx        map[string]OpMovement   // player + transaction_id
	settlements map[string][]OpMovement // player + bet_id: its wins and rollbacks
}

// CheckLedger makes the checks that need only the operator's ledger:
//   - no transaction_id twice for one player, no operator transaction id
//     twice (ENV-13, ENV-19);
//   - a debit moved its amount, nothing for a free bet; a win moved its
//     amount;
//   - each debit has at most one settlement (a win or a rollback), and a win
//     has its debit;
//   - a player of opts.InitialBalances holds it plus its movements.
func CheckLedger(op Ledger, opts Options) Report {
	var c collector
	r := Report{}
	checkLedger(op, opts, &c, &r)
	sort.Strings(c.diffs)
	r.Differences = c.diffs
	return r
}

func checkLedger(op Ledger, opts Options, c *collector, r *Report) opIndex {
	ix := opIndex{byTx: map[string]OpMovement{}, settlements: map[string][]OpMovement{}}
	opIDs := map[string]bool{}
	for _, m := range op.Movements {
		k := key(m.PlayerID, m.TransactionID)
		if _, dup := ix.byTx[k]; dup {
			c.add("operator ledger: transaction_id %s twice for player %s (ENV-13)", m.TransactionID, m.PlayerID)
		}
		ix.byTx[k] = m
		if m.OperatorTransactionID != "" {
			if opIDs[m.OperatorTransactionID] {
				c.add("operator ledger: operator transaction id %s twice", m.OperatorTransactionID)
			}
			opIDs[m.OperatorTransactionID] = true
		}
		switch m.Kind {
		case opKindBet:
			r.Debits++
			want := -m.Amount
			if m.FreebetID != nil {
				want = 0
			}
			if m.Delta != want {
				c.add("debit %s (%d, freebet %q): the operator moved %d", m.TransactionID, m.Amount, deref(m.FreebetID), m.Delta)
			}
			if m.Settlement == nil {
				r.Open++
			}
		case kindWin:
			if m.Type == winTypeZeroWin {
				r.ZeroWins++
			} else {
				r.Wins++
			}
			if m.Delta != m.Amount {
				c.add("win %s (%s %d): the operator moved %d", m.TransactionID, m.Type, m.Amount, m.Delta)
			}
		case kindRollback:
			r.Rollbacks++
		default:
			c.add("operator ledger: movement %s of unknown kind %q", m.TransactionID, m.Kind)
		}
		if m.Kind != opKindBet && m.BetID != nil {
			bk := key(m.PlayerID, *m.BetID)
			ix.settlements[bk] = append(ix.settlements[bk], m)
		}
	}
	for bk, ss := range ix.settlements {
		debit, debited := ix.byTx[bk]
		betID := deref(ss[0].BetID)
		if debited && debit.Kind != opKindBet {
			c.add("operator ledger: bet_id %s names a %s, not a debit", betID, debit.Kind)
			continue
		}
		if len(ss) > 1 {
			c.add("bet %s: %d settlements at the operator (%s); a debit ends in exactly one", betID, len(ss), describeOp(ss))
		}
		for _, s := range ss {
			if s.Kind == kindWin && !debited {
				c.add("operator win %s of bet %s has no debit at the operator", s.TransactionID, betID)
			}
		}
	}
	r.Players = len(op.Players)
	for _, p := range op.Players {
		initial, ok := opts.InitialBalances[p.PlayerID]
		if ok && p.Balance != initial+p.Moved {
			c.add("player %s: balance %d, but initial %d + movements %d = %d", p.PlayerID, p.Balance, initial, p.Moved, initial+p.Moved)
		}
	}
	return ix
}

func describeOp(ms []OpMovement) string {
	parts := make([]string, len(ms))
	for i, m := range ms {
		parts[i] = m.Kind + " " + m.TransactionID
		if m.Type != "" {
			parts[i] = m.Kind + "/" + m.Type + " " + m.TransactionID
		}
	}
	return strings.Join(parts, ", ")
}

func describeGame(ms []Movement) string {
	if len(ms) == 0 {
		return "none"
	}
	parts := make([]string, len(ms))
	for i, m := range ms {
		parts[i] = m.Kind
		if m.WinType != "" {
			parts[i] += "/" + m.WinType
		}
		parts[i] += " " + m.TransactionID
	}
	return strings.Join(parts, ", ")
}

// Compare checks the game's records against the operator's ledger and
// returns every difference. Beside CheckLedger's checks:
//   - every game movement has its operator movement and the other way round,
//     with the same player, kind, amount, bet, round, and for a win the same
//     type and freebet; each game bet's confirmed debit matches it (player,
//     amount, round, freebet);
//   - the game kept the operator's own transaction id of each success
//     (ENV-19);
//   - every game movement is done, after at most 20 attempts (LIM-2);
//   - a rollback moved back what its debit moved (nothing when there was no
//     debit: RB-13);
//   - each debit the operator confirmed ends in exactly one settlement that
//     matches the bet's fate: cashed out, one win of the payout typed win (or
//     freebet on a free round, with its freebet_id: WIN-17); lost, nothing (or
//     one zero_win when opts.ZeroWin) and the debit still open at the
//     operator without zero_win; cancelled, void or refused, one rollback;
//     and the operator closed it the same way;
//   - no bet the game holds as accepted, cashed out, lost or cancelled lacks
//     its debit, and no bet is left pending.
func Compare(game Game, op Ledger, opts Options) Report {
	var c collector
	r := Report{GameBets: len(game.Bets), GameMovements: len(game.Movements)}
	ix := checkLedger(op, opts, &c, &r)
	gx := checkGameMovements(game, ix, &c)
	checkOperatorMovements(ix, gx, opts, &c)
	checkUnconfirmedBets(game.Bets, ix, &c)
	sort.Strings(c.diffs)
	r.Differences = c.diffs
	return r
}

// gameIndex is the game's records indexed.
type gameIndex struct {
	bets        map[string]Bet        // player + bet id
	byTx        map[string]Movement   // player + transaction_id
	settlements map[string][]Movement // player + bet_id: its wins and rollbacks
}

// checkGameMovements indexes the game's records and checks each game movement:
// its delivery state, and that the operator has the same movement.
func checkGameMovements(game Game, ix opIndex, c *collector) gameIndex {
	gx := gameIndex{bets: map[string]Bet{}, byTx: map[string]Movement{}, settlements: map[string][]Movement{}}
	for _, b := range game.Bets {
		gx.bets[key(b.PlayerID, b.ID)] = b
	}
	for _, m := range game.Movements {
		k := key(m.PlayerID, m.TransactionID)
		gx.byTx[k] = m
		bk := key(m.PlayerID, m.BetID)
		gx.settlements[bk] = append(gx.settlements[bk], m)

		if m.Status != movementDone {
			hint := ""
			if m.Status == movementPending {
				hint = "; still in flight: run again once it is delivered"
			}
			c.add("game movement %s (%s of bet %s): status %s after %d attempts (last error %q)%s",
				m.TransactionID, m.Kind, m.BetID, m.Status, m.Attempts, m.LastError, hint)
		}
		if m.Attempts > maxAttempts {
			c.add("game movement %s: %d attempts (LIM-2: at most %d)", m.TransactionID, m.Attempts, maxAttempts)
		}
		s, ok := ix.byTx[k]
		if !ok {
			if m.Status == movementDone {
				c.add("game movement %s (%s %d of bet %s) is done but not in the operator's ledger", m.TransactionID, m.Kind, m.Amount, m.BetID)
			}
			continue
		}
		checkMovement(m, s, ix, c)
	}
	return gx
}

// checkMovement checks a game movement against the operator's movement s of
// the same transaction id: the same kind, amount, bet, round and win type, the
// operator's id kept, and a rollback that gave back what its debit moved.
func checkMovement(m Movement, s OpMovement, ix opIndex, c *collector) {
	if s.Kind != m.Kind || s.Amount != m.Amount || deref(s.BetID) != m.BetID || s.RoundID != m.RoundID {
		c.add("movement %s: the game has %s %d of bet %s round %s, the operator %s %d of bet %s round %s",
			m.TransactionID, m.Kind, m.Amount, m.BetID, m.RoundID, s.Kind, s.Amount, deref(s.BetID), s.RoundID)
	}
	if m.Kind == kindWin && (s.Type != m.WinType || deref(s.FreebetID) != deref(m.FreebetID)) {
		c.add("win %s: the game has type %s freebet %q, the operator type %s freebet %q",
			m.TransactionID, m.WinType, deref(m.FreebetID), s.Type, deref(s.FreebetID))
	}
	if m.Status == movementDone && m.OperatorTxID != s.OperatorTransactionID {
		c.add("movement %s: the game kept operator id %q, the operator says %q (ENV-19)", m.TransactionID, m.OperatorTxID, s.OperatorTransactionID)
	}
	if m.Kind == kindRollback {
		want := int64(0) // nothing was debited: nothing to give back (RB-13)
		if d, ok := ix.byTx[key(m.PlayerID, m.BetID)]; ok && d.Kind == opKindBet {
			want = -d.Delta
		}
		if s.Delta != want {
			c.add("rollback %s of bet %s: the operator moved %d, want %d", m.TransactionID, m.BetID, s.Delta, want)
		}
	}
}

// checkOperatorMovements checks each of the operator's movements against the
// game: a win or rollback has its game movement, and a debit its game bet,
// which it matches and whose settlement matches its fate.
func checkOperatorMovements(ix opIndex, gx gameIndex, opts Options, c *collector) {
	for k, s := range ix.byTx {
		switch s.Kind {
		case kindWin, kindRollback:
			if _, ok := gx.byTx[k]; !ok {
				c.add("operator %s %s (%d, bet %s) has no movement in the game", s.Kind, s.TransactionID, s.Amount, deref(s.BetID))
			}
		case opKindBet:
			b, ok := gx.bets[k]
			if !ok {
				c.add("operator debit %s (%d, player %s) has no bet in the game", s.TransactionID, s.Amount, s.PlayerID)
				continue
			}
			if b.Amount != s.Amount || b.RoundID != s.RoundID || deref(b.FreebetID) != deref(s.FreebetID) {
				c.add("debit %s: the game has %d round %s freebet %q, the operator %d round %s freebet %q",
					b.ID, b.Amount, b.RoundID, deref(b.FreebetID), s.Amount, s.RoundID, deref(s.FreebetID))
			}
			if b.OperatorTxID != "" && b.OperatorTxID != s.OperatorTransactionID {
				c.add("debit %s: the game kept operator id %q, the operator says %q (ENV-19)", b.ID, b.OperatorTxID, s.OperatorTransactionID)
			}
			checkSettlement(b, s, gx.settlements[k], opts, c)
		}
	}
}

// checkUnconfirmedBets: no game bet without a debit at the operator is held as
// accepted, cashed out, lost or cancelled, or left pending.
func checkUnconfirmedBets(bets []Bet, ix opIndex, c *collector) {
	for _, b := range bets {
		if _, ok := ix.byTx[key(b.PlayerID, b.ID)]; ok {
			continue
		}
		switch round.State(b.Status) {
		case round.Accepted, round.CashedOut, round.Lost, round.Cancelled:
			c.add("game bet %s is %s but the operator never confirmed its debit", b.ID, b.Status)
		case round.Pending:
			c.add("game bet %s is still pending: its debit's outcome is unknown (in flight, or an orphan for the next boot)", b.ID)
		}
	}
}

// checkSettlement: a debit the operator confirmed ends in exactly one
// settlement that matches the bet's fate, on both sides.
func checkSettlement(b Bet, debit OpMovement, ms []Movement, opts Options, c *collector) {
	var want string // how the operator must have closed the debit; "" open
	switch round.State(b.Status) {
	case round.CashedOut:
		wantType := winTypeWin
		if b.FreebetID != nil {
			wantType = winTypeFreebet
		}
		want = wantType
		if len(ms) != 1 || ms[0].Kind != kindWin {
			c.add("bet %s cashed out: want one win, the game has %s", b.ID, describeGame(ms))
			break
		}
		if b.Payout == nil || ms[0].Amount != *b.Payout {
			payout := "no payout"
			if b.Payout != nil {
				payout = fmt.Sprint(*b.Payout)
			}
			c.add("bet %s cashed out for %s: its win moves %d", b.ID, payout, ms[0].Amount)
		}
		if ms[0].WinType != wantType {
			c.add("bet %s (freebet %q): its win is typed %s, want %s", b.ID, deref(b.FreebetID), ms[0].WinType, wantType)
		}
		if deref(ms[0].FreebetID) != deref(b.FreebetID) {
			c.add("bet %s: its win carries freebet_id %q, the debit %q (WIN-17)", b.ID, deref(ms[0].FreebetID), deref(b.FreebetID))
		}
	case round.Lost:
		if opts.ZeroWin {
			want = winTypeZeroWin
			if len(ms) != 1 || ms[0].Kind != kindWin || ms[0].WinType != winTypeZeroWin {
				c.add("bet %s lost: want one zero_win, the game has %s", b.ID, describeGame(ms))
			}
		} else if len(ms) != 0 {
			c.add("bet %s lost: want no settlement call without zero_win, the game has %s", b.ID, describeGame(ms))
		}
	case round.Cancelled, round.Voided, round.Refused:
		want = settledRollback
		if len(ms) != 1 || ms[0].Kind != kindRollback {
			c.add("bet %s %s: want one rollback, the game has %s", b.ID, b.Status, describeGame(ms))
		}
	case round.Pending:
		c.add("debit %s confirmed by the operator, but the game's bet is still pending", b.ID)
		return
	default:
		c.add("bet %s confirmed by the operator is still %s in the game", b.ID, b.Status)
		return
	}
	got := deref(debit.Settlement)
	switch {
	case want == "" && debit.Settlement != nil:
		c.add("bet %s lost, but the operator closed it as %s", b.ID, got)
	case want != "" && debit.Settlement == nil:
		c.add("debit %s (%s in the game) is still open at the operator", b.ID, b.Status)
	case want != "" && got != want:
		c.add("debit %s (%s in the game) was closed at the operator as %s, want %s", b.ID, b.Status, got, want)
	}
	if debit.Settlement != nil && len(ms) == 1 && ms[0].Status == movementDone && ms[0].OperatorTxID != "" &&
		deref(debit.SettledBy) != "" && deref(debit.SettledBy) != ms[0].OperatorTxID {
		c.add("debit %s: closed at the operator by %s, the game's %s %s by %s", b.ID, deref(debit.SettledBy), ms[0].Kind, ms[0].TransactionID, ms[0].OperatorTxID)
	}
}
