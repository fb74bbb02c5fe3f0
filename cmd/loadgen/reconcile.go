package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"github.com/crashstudio/crashgame/internal/engine"
	"github.com/crashstudio/crashgame/internal/store"
	"github.com/crashstudio/crashgame/internal/wallet"
)

// reconciliation is the money check after the run: every debit the operator
// confirmed ends in exactly one win, loss or rollback, every win the game paid
// reached the operator once with its amount, and every balance is its
// movements.
type reconciliation struct {
	Against   string   `json:"against"` // "operator+client" or "operator+client+game database"
	Drained   bool     `json:"queue_drained"`
	Debits    int      `json:"debits"`
	Wins      int      `json:"wins"`
	Rollbacks int      `json:"rollbacks"`
	Lost      int      `json:"lost_open_at_operator"`
	GameBets  int      `json:"game_bets"`
	Broken    []string `json:"broken"`
}

// opMovement is a row of operator-sim's /admin/reconcile.
type opMovement struct {
	PlayerID      string  `json:"player_id"`
	TransactionID string  `json:"transaction_id"`
	Kind          string  `json:"kind"`
	Amount        int64   `json:"amount"`
	Delta         int64   `json:"delta"`
	BetID         *string `json:"bet_id"`
	Type          string  `json:"type"`
	Settlement    *string `json:"settlement"`
}

type opPlayer struct {
	PlayerID string   `json:"player_id"`
	Balance  int64    `json:"balance"`
	Moved    int64    `json:"moved"`
	OpenBets []string `json:"open_bets"`
}

func (lg *loadgen) reconcile(ctx context.Context, admin *http.Client, drained bool) reconciliation {
	o := lg.o
	r := reconciliation{Against: "operator ledger + the answers the players got", Drained: drained}
	broken := func(format string, args ...any) { r.Broken = append(r.Broken, fmt.Sprintf(format, args...)) }
	if !drained {
		broken("the movement queue still held pending movements after %s", o.drainWait)
	}
	var rec struct {
		Movements []opMovement `json:"movements"`
		Players   []opPlayer   `json:"players"`
	}
	if err := signedPost(ctx, admin, o.operatorURL, "/admin/reconcile", o.secret, map[string]any{}, &rec); err != nil {
		broken("operator-sim /admin/reconcile: %v", err)
		return r
	}
	mine := func(player string) bool { return strings.HasPrefix(player, o.playerPrefx) }
	debits := map[string]opMovement{}
	wins := map[string][]opMovement{}
	rollbacks := map[string][]opMovement{}
	for _, m := range rec.Movements {
		if !mine(m.PlayerID) {
			continue
		}
		switch m.Kind {
		case "bet":
			debits[m.TransactionID] = m
		case "win":
			if m.BetID != nil {
				wins[*m.BetID] = append(wins[*m.BetID], m)
			}
			r.Wins++
		case "rollback":
			if m.BetID != nil {
				rollbacks[*m.BetID] = append(rollbacks[*m.BetID], m)
			}
			r.Rollbacks++
		}
	}
	r.Debits = len(debits)
	for _, p := range rec.Players {
		if mine(p.PlayerID) && p.Balance != startBalance+p.Moved {
			broken("player %s: balance %d is not the start %d plus its movements %d", p.PlayerID, p.Balance, int64(startBalance), p.Moved)
		}
	}
	for id, ws := range wins {
		if len(ws) > 1 {
			broken("bet %s: %d wins at the operator", id, len(ws))
		}
		if len(rollbacks[id]) > 0 {
			broken("bet %s: both a win and a rollback at the operator", id)
		}
		if _, ok := debits[id]; !ok {
			broken("bet %s: a win without its debit at the operator", id)
		}
	}
	for id, rs := range rollbacks {
		if len(rs) > 1 {
			broken("bet %s: %d rollbacks at the operator", id, len(rs))
		}
	}

	// What the players were told.
	lg.betsMu.Lock()
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
	lg.betsMu.Unlock()

	// The game's own records, when its database is known.
	game := map[string]engine.BetRecord{}
	if o.gameDB != "" {
		bets, movements, err := readGame(ctx, o.gameDB, o.playerPrefx)
		if err != nil {
			broken("reading the game's database: %v", err)
		} else {
			r.Against = "operator ledger + the answers the players got + the game's database"
			r.GameBets = len(bets)
			for _, b := range bets {
				game[b.ID] = b
			}
			for _, m := range movements {
				if m.Status != wallet.StatusDone {
					broken("movement %s (%s of bet %s) is %s after the run", m.TransactionID, m.Kind, m.BetID, m.Status)
				}
			}
			for _, b := range bets {
				_, debited := debits[b.ID]
				switch b.Status {
				case engine.StatusCashedOut:
					if len(wins[b.ID]) != 1 || (b.Payout != nil && wins[b.ID][0].Amount != *b.Payout) {
						broken("bet %s: cashed out for %v in the game, %d wins at the operator", b.ID, b.Payout, len(wins[b.ID]))
					}
				case engine.StatusLost:
					if len(wins[b.ID])+len(rollbacks[b.ID]) > 0 {
						s := debits[b.ID].Settlement
						if s == nil || (*s != "zero_win" && *s != "lose") {
							broken("bet %s: lost in the game, credited at the operator", b.ID)
						}
					}
				case engine.StatusVoid, engine.StatusCancelled:
					if debited && len(rollbacks[b.ID]) != 1 {
						broken("bet %s: %s in the game, %d rollbacks at the operator", b.ID, b.Status, len(rollbacks[b.ID]))
					}
				case engine.StatusRefused:
					if debited && len(rollbacks[b.ID]) != 1 {
						broken("bet %s: refused in the game but debited at the operator", b.ID)
					}
				default:
					broken("bet %s: still %s after the game stopped", b.ID, b.Status)
				}
			}
		}
	}

	// Every confirmed debit ends in exactly one settlement.
	for id, d := range debits {
		settled := len(wins[id]) + len(rollbacks[id])
		if d.Settlement != nil && (*d.Settlement == "zero_win" || *d.Settlement == "lose") {
			settled++
		}
		switch {
		case settled > 1:
			broken("debit %s: %d settlements", id, settled)
		case settled == 1:
		case len(game) > 0:
			if b, ok := game[id]; !ok || b.Status != engine.StatusLost {
				broken("debit %s: open at the operator, and the game does not hold it lost", id)
			} else {
				r.Lost++
			}
		default:
			// Without the game's database, an open debit is a loss when the
			// player never saw it paid.
			lg.betsMu.Lock()
			_, paid := lg.paidIDs[id]
			auto := lg.autoIDs[id]
			lg.betsMu.Unlock()
			if paid || auto {
				broken("debit %s: paid to the player, open at the operator", id)
			} else {
				r.Lost++
			}
		}
	}
	return r
}

// readGame reads the bets and movements of the load's players from the
// game's database.
func readGame(ctx context.Context, dsn, prefix string) ([]engine.BetRecord, []wallet.MovementRecord, error) {
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
	st, err := store.Open(ctx, dsn)
	slog.SetDefault(prev)
	if err != nil {
		return nil, nil, err
	}
	defer st.Close()
	var bets []engine.BetRecord
	if err := st.DB().NewSelect().Model(&bets).Where("player_id LIKE ?", prefix+"%").Scan(ctx); err != nil {
		return nil, nil, err
	}
	var ms []wallet.MovementRecord
	if err := st.DB().NewSelect().Model(&ms).Where("player_id LIKE ?", prefix+"%").Scan(ctx); err != nil {
		return nil, nil, err
	}
	return bets, ms, nil
}
