package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/crashstudio/crashgame/internal/reconcile"
)

// reconciliation is the money check after the run: internal/reconcile's
// comparison of the operator's ledger with the game's records (every debit the
// operator confirmed ends in exactly one win, loss or rollback, every win the
// game paid reached the operator once with its amount, every balance is its
// movements), and the answers the players got against the operator's ledger.
type reconciliation struct {
	Against   string   `json:"against"` // "operator+client" or "operator+client+game database"
	Drained   bool     `json:"queue_drained"`
	DrainedBy string   `json:"queue_drained_by"` // how the drain was checked
	Debits    int      `json:"debits"`
	Wins      int      `json:"wins"`
	ZeroWins  int      `json:"zero_wins"`
	Rollbacks int      `json:"rollbacks"`
	Lost      int      `json:"lost_open_at_operator"`
	GameBets  int      `json:"game_bets"`
	Broken    []string `json:"broken"`
}

// reconcile checks the money after the run: the operator's ledger of the
// load's players against the game's records (against itself when the game's
// database is not known) and against the answers the players got. drained,
// drainedBy and drainErr are how the movement queue's drain went.
func (lg *loadgen) reconcile(ctx context.Context, admin *http.Client, drained bool, drainedBy string, drainErr error) reconciliation {
	o := lg.o
	r := reconciliation{Against: "operator ledger + the answers the players got", Drained: drained, DrainedBy: drainedBy}
	if !drained {
		if drainErr != nil {
			r.broken("the movement queue was not seen drained (%s) within %s; last error: %v", drainedBy, o.drainWait, drainErr)
		} else {
			r.broken("the movement queue still held pending movements (%s) after %s", drainedBy, o.drainWait)
		}
	}
	all, err := reconcile.ReadOperatorSim(ctx, admin, o.operatorURL, o.secret)
	if err != nil {
		r.broken("%v", err)
		return r
	}
	ledger := all.Only(func(player string) bool { return strings.HasPrefix(player, o.playerPrefx) })
	opts := reconcile.Options{ZeroWin: o.zeroWin, InitialBalances: map[string]int64{}}
	for _, p := range ledger.Players {
		opts.InitialBalances[p.PlayerID] = startBalance
	}
	rep, withGame := lg.compare(ctx, ledger, opts, &r)
	r.Debits, r.Wins, r.ZeroWins, r.Rollbacks, r.GameBets = rep.Debits, rep.Wins, rep.ZeroWins, rep.Rollbacks, rep.GameBets
	r.Broken = append(r.Broken, rep.Differences...)
	lg.checkAnswers(ledger, withGame, &r)
	if withGame {
		r.Lost = rep.Open // Compare found each open debit to be a lost bet, or said otherwise
	}
	return r
}

// broken records one thing the reconciliation found broken.
func (r *reconciliation) broken(format string, args ...any) {
	r.Broken = append(r.Broken, fmt.Sprintf(format, args...))
}

// compare compares the operator's ledger with the game's records when its
// database is known (the comparison of `crashgame reconcile`), else checks it
// against itself; withGame says which it did.
func (lg *loadgen) compare(ctx context.Context, ledger reconcile.Ledger, opts reconcile.Options, r *reconciliation) (rep reconcile.Report, withGame bool) {
	if lg.o.gameDB != "" {
		game, err := readGame(ctx, lg.o.gameDB, lg.o.playerPrefx)
		if err != nil {
			r.broken("reading the game's database: %v", err)
		} else {
			r.Against = "operator ledger + the answers the players got + the game's database"
			return reconcile.Compare(game, ledger, opts), true
		}
	}
	return reconcile.CheckLedger(ledger, opts), false
}

// checkAnswers checks what the players were told against the operator's
// ledger: each accepted bet has its debit, each paid cashout its one win of
// the payout. Without the game's records (withGame false), it also counts the
// lost bets (countLost).
func (lg *loadgen) checkAnswers(ledger reconcile.Ledger, withGame bool, r *reconciliation) {
	debits := map[string]reconcile.OpMovement{}
	wins := map[string][]reconcile.OpMovement{}
	for _, m := range ledger.Movements {
		switch {
		case m.Kind == "bet":
			debits[m.TransactionID] = m
		case m.Kind == "win" && m.BetID != nil:
			wins[*m.BetID] = append(wins[*m.BetID], m)
		}
	}
	lg.betsMu.Lock()
	defer lg.betsMu.Unlock()
	for id := range lg.acceptedIDs {
		if _, ok := debits[id]; !ok {
			r.broken("bet %s: accepted by the game, no debit at the operator", id)
		}
	}
	for id, payout := range lg.paidIDs {
		ws := wins[id]
		if len(ws) != 1 {
			r.broken("bet %s: the game paid a cashout of %d; the operator has %d wins", id, payout, len(ws))
		} else if ws[0].Amount != payout {
			r.broken("bet %s: the game paid %d, the operator credited %d", id, payout, ws[0].Amount)
		}
	}
	if !withGame {
		lg.countLost(debits, r)
	}
}

// countLost counts the lost bets into r when the game's records are not
// read: an open debit is a loss when the player never saw it paid, and
// broken when it did. betsMu is held.
func (lg *loadgen) countLost(debits map[string]reconcile.OpMovement, r *reconciliation) {
	for id, d := range debits {
		if d.Settlement != nil {
			continue
		}
		if _, paid := lg.paidIDs[id]; paid || lg.autoIDs[id] {
			r.broken("debit %s: paid to the player, open at the operator", id)
		} else {
			r.Lost++
		}
	}
}

// readGame reads the bets and movements of the load's players from the
// game's database.
func readGame(ctx context.Context, dsn, prefix string) (reconcile.Game, error) {
	st, err := openStore(ctx, dsn)
	if err != nil {
		return reconcile.Game{}, err
	}
	defer st.Close()
	return reconcile.ReadGame(ctx, st.Reconcile(), reconcile.Filter{PlayerPrefix: prefix})
}
