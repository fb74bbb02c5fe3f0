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

func (lg *loadgen) reconcile(ctx context.Context, admin *http.Client, drained bool, drainedBy string, drainErr error) reconciliation {
	o := lg.o
	r := reconciliation{Against: "operator ledger + the answers the players got", Drained: drained, DrainedBy: drainedBy}
	broken := func(format string, args ...any) { r.Broken = append(r.Broken, fmt.Sprintf(format, args...)) }
	if !drained {
		if drainErr != nil {
			broken("the movement queue was not seen drained (%s) within %s; last error: %v", drainedBy, o.drainWait, drainErr)
		} else {
			broken("the movement queue still held pending movements (%s) after %s", drainedBy, o.drainWait)
		}
	}
	all, err := reconcile.ReadOperatorSim(ctx, admin, o.operatorURL, o.secret)
	if err != nil {
		broken("%v", err)
		return r
	}
	ledger := all.Only(func(player string) bool { return strings.HasPrefix(player, o.playerPrefx) })
	opts := reconcile.Options{ZeroWin: o.zeroWin, InitialBalances: map[string]int64{}}
	for _, p := range ledger.Players {
		opts.InitialBalances[p.PlayerID] = startBalance
	}

	// The operator's ledger against the game's records when its database is
	// known (the comparison of `crashgame reconcile`), else against itself.
	var rep reconcile.Report
	withGame := false
	if o.gameDB != "" {
		game, err := readGame(ctx, o.gameDB, o.playerPrefx)
		if err != nil {
			broken("reading the game's database: %v", err)
		} else {
			withGame = true
			r.Against = "operator ledger + the answers the players got + the game's database"
			rep = reconcile.Compare(game, ledger, opts)
		}
	}
	if !withGame {
		rep = reconcile.CheckLedger(ledger, opts)
	}
	r.Debits, r.Wins, r.ZeroWins, r.Rollbacks, r.GameBets = rep.Debits, rep.Wins, rep.ZeroWins, rep.Rollbacks, rep.GameBets
	r.Broken = append(r.Broken, rep.Differences...)

	// What the players were told, against the operator's ledger.
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
			broken("bet %s: accepted by the game, no debit at the operator", id)
		}
	}
	for id, payout := range lg.paidIDs {
		ws := wins[id]
		if len(ws) != 1 {
			broken("bet %s: the game paid a cashout of %d; the operator has %d wins", id, payout, len(ws))
		} else if ws[0].Amount != payout {
			broken("bet %s: the game paid %d, the operator credited %d", id, payout, ws[0].Amount)
		}
	}
	if withGame {
		r.Lost = rep.Open // Compare found each open debit to be a lost bet, or said otherwise
		return r
	}
	// Without the game's database, an open debit is a loss when the player
	// never saw it paid.
	for id, d := range debits {
		if d.Settlement != nil {
			continue
		}
		if _, paid := lg.paidIDs[id]; paid || lg.autoIDs[id] {
			broken("debit %s: paid to the player, open at the operator", id)
		} else {
			r.Lost++
		}
	}
	return r
}

// readGame reads the bets and movements of the load's players from the
// game's database.
func readGame(ctx context.Context, dsn, prefix string) (reconcile.Game, error) {
	st, err := openStore(ctx, dsn)
	if err != nil {
		return reconcile.Game{}, err
	}
	defer st.Close()
	return reconcile.ReadGame(ctx, st, reconcile.Filter{PlayerPrefix: prefix})
}
