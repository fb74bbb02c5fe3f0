package table

import (
	"context"
	"encoding/csv"
	"errors"
	"net/http"
	"time"

	"github.com/crashstudio/crashgame/gen/table"
	"github.com/crashstudio/crashgame/internal/backoffice"
	"github.com/crashstudio/crashgame/internal/movements"
)

// The back office's pages behind an operator's links (a round's support
// page, a CSV export) and the player's replay of a past round.

func (e errorResponse) VisitGetRoundReplayResponse(w http.ResponseWriter) error  { return e.visit(w) }
func (e errorResponse) VisitGetSupportRoundResponse(w http.ResponseWriter) error { return e.visit(w) }
func (e errorResponse) VisitGetTransactionsExportResponse(w http.ResponseWriter) error {
	return e.visit(w)
}

// GetRoundReplay answers the session player's replay of an ended round:
// the round and their own bets in it, without wallet calls.
func (a *api) GetRoundReplay(ctx context.Context, req table.GetRoundReplayRequestObject) (table.GetRoundReplayResponseObject, error) {
	sess, _, fail := a.session(ctx)
	if fail != nil {
		return *fail, nil
	}
	// As "My bets" lists them: every session of the player, or this demo
	// session's.
	mine := backoffice.BetQuery{Operator: sess.Operator, PlayerID: sess.PlayerID, GameID: sess.GameID}
	if sess.Demo || sess.PlayerID == "" {
		mine = backoffice.BetQuery{SessionHash: sess.Hash}
	}
	round, recs, err := a.s.backoffice.PlayerRound(ctx, sess.GameID, req.RoundId, mine)
	switch {
	case errors.Is(err, backoffice.ErrRoundNotFound):
		return a.fail(ctx, http.StatusNotFound, table.ErrorCodeUnknownRound), nil
	case errors.Is(err, backoffice.ErrRoundInProgress):
		return a.fail(ctx, http.StatusConflict, table.ErrorCodeRoundInProgress), nil
	case err != nil:
		return a.internal(ctx, "reading a round's replay failed", err), nil
	}
	bets := make([]backoffice.Bet, len(recs))
	for i := range recs {
		bets[i] = backoffice.Bet{StoredBet: recs[i], Movements: nil}
	}
	return table.GetRoundReplay200JSONResponse{Round: backoffice.PublishedRound(round), Bets: backoffice.PublishedBets(bets)}, nil
}

// GetSupportRound answers the data of a round's support page, for a valid
// link.
func (a *api) GetSupportRound(ctx context.Context, req table.GetSupportRoundRequestObject) (table.GetSupportRoundResponseObject, error) {
	round, bets, expires, err := a.s.backoffice.OpenRoundLink(ctx, req.Link, a.s.now())
	switch {
	case errors.Is(err, backoffice.ErrLinkNotFound), errors.Is(err, backoffice.ErrRoundNotFound), errors.Is(err, backoffice.ErrPlayerNotFound):
		return a.fail(ctx, http.StatusNotFound, table.ErrorCodeUnknownLink), nil
	case err != nil:
		return a.internal(ctx, "reading a support link failed", err), nil
	}
	return table.GetSupportRound200JSONResponse{ExpiresAt: expires.UnixMilli(), Round: backoffice.PublishedRound(round), Bets: backoffice.PublishedBets(bets)}, nil
}

// GetTransactionsExport streams the CSV of an export link.
func (a *api) GetTransactionsExport(ctx context.Context, req table.GetTransactionsExportRequestObject) (table.GetTransactionsExportResponseObject, error) {
	now := a.s.now()
	q, err := a.s.backoffice.OpenTransactionsLink(ctx, req.Link, now)
	switch {
	case errors.Is(err, backoffice.ErrLinkNotFound):
		return a.fail(ctx, http.StatusNotFound, table.ErrorCodeUnknownLink), nil
	case err != nil:
		return a.internal(ctx, "reading an export link failed", err), nil
	}
	// The first page before the status: a failure here is still a 500.
	page, next, err := backoffice.Transactions(ctx, a.s.movements, q, now)
	if err != nil {
		return a.internal(ctx, "reading an export failed", err), nil
	}
	return csvExport{s: a.s, ctx: ctx, q: q, now: now, page: page, next: next}, nil
}

// exportColumns are the CSV export's columns, in the documented order.
var exportColumns = []string{"transaction_id", "operator_transaction_id", "kind", "win_type", "status", "amount_cents", "currency",
	"player_id", "game_id", "round_id", "bet_id", "freebet_id", "reason", "attempts", "last_error", "created_at", "delivered_at",
	"redeliveries"}

// csvExport streams an export page after page, so that a day of any size
// takes a page's memory.
type csvExport struct {
	s    *Server
	ctx  context.Context
	q    backoffice.TransactionQuery
	now  time.Time
	page []backoffice.Transaction
	next string
}

func (c csvExport) VisitGetTransactionsExportResponse(w http.ResponseWriter) error {
	h := w.Header()
	h.Set("Content-Type", "text/csv; charset=utf-8")
	h.Set("Content-Disposition", `attachment; filename="transactions.csv"`)
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	cw := csv.NewWriter(w)
	if err := cw.Write(exportColumns); err != nil {
		return err
	}
	for {
		for _, t := range c.page {
			if err := cw.Write(exportRow(t)); err != nil {
				return err
			}
		}
		cw.Flush()
		if err := cw.Error(); err != nil || c.next == "" {
			return err
		}
		c.q.Cursor = c.next
		var err error
		if c.page, c.next, err = backoffice.Transactions(c.ctx, c.s.movements, c.q, c.now); err != nil {
			// The status is sent: cut the response short, so that the
			// download fails rather than ending like a complete file.
			c.s.log.ErrorContext(c.ctx, "table: an export failed midway", "operator", c.q.Operator, "err", err)
			panic(http.ErrAbortHandler)
		}
	}
}

func exportRow(t backoffice.Transaction) []string {
	freebet := ""
	if t.FreebetID != nil {
		freebet = *t.FreebetID
	}
	delivered := ""
	if t.Status == movements.StatusDone && !t.DoneAt.IsZero() {
		delivered = exportTime(t.DoneAt)
	}
	// Every text cell is neutralised against formulas (CSV injection): the
	// ids, the reason and the last error come from wallets and players. The
	// integers we write (amount, attempts, redeliveries) are not: a quote
	// would turn a number into text.
	text := backoffice.CSVText
	return []string{text(t.TransactionID), text(t.OperatorTxID), text(string(t.Kind)), text(string(t.WinType)), text(backoffice.TransactionStatus(t.Status)),
		backoffice.CSVInt(t.Amount), text(t.Currency), text(t.PlayerID), text(t.GameID), text(t.RoundID), text(t.BetID), text(freebet), text(t.Reason),
		backoffice.CSVInt(int64(t.Attempts)), text(t.LastError), text(exportTime(t.CreatedAt)), text(delivered), backoffice.CSVInt(int64(len(t.Redeliveries)))}
}

func exportTime(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000Z07:00")
}

func (e errorResponse) VisitGetSupportPageResponse(w http.ResponseWriter) error { return e.visit(w) }

// GetSupportPage is never reached: the page's own handler (Server.page)
// serves the route, HTML being no business of the strict server.
func (a *api) GetSupportPage(ctx context.Context, _ table.GetSupportPageRequestObject) (table.GetSupportPageResponseObject, error) {
	return a.fail(ctx, http.StatusNotFound, table.ErrorCodeUnknownLink), nil
}
