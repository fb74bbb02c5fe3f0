//go:build integration

// Package browser drives the player's table in a headless Chromium against a
// real `crashgame dev` (the game and the reference operator in one process):
// launch from the operator's lobby, a bet that cashes out, the balance on the
// page and in the operator's ledger, and the page in Portuguese with no
// English or raw dictionary key left. Screenshots go to integration/artifacts/.
package browser

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

const (
	player     = "player-0001" // seeded by crashgame dev with 10 000.00 BRL; plays in en
	ptPlayer   = "player-0002" // plays in pt
	stake      = int64(1000)   // 10.00 BRL, typed into the amount field
	autoTarget = int64(101)    // auto cash out at 1.01x, typed as "1.01"
	maxRounds  = 6             // a round may crash at 1.00x: try again, up to this many
)

// roundWait bounds a wait for the next betting phase. Crash points are
// random: P(crash >= x) = 0.97/x and the multiplier takes ln(x)/0.00006 ms to
// reach x, so one round in eleven flies longer than 40 s and the longest
// (1000x, the cap of dev.yaml) about 115 s.
const roundWait = 130 * time.Second

// chromiumNames are the names a Chromium goes by on PATH.
var chromiumNames = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless-shell", "headless_shell"}

func findChromium() string {
	for _, name := range chromiumNames {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// testLog forwards chromedp's errors to the test log until the test ends.
type testLog struct {
	mu   sync.Mutex
	t    *testing.T
	done bool
	n    int
}

func (l *testLog) errorf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done || l.n >= 20 {
		return
	}
	l.n++
	l.t.Logf("chromedp: "+format, args...)
}

func (l *testLog) close() {
	l.mu.Lock()
	l.done = true
	l.mu.Unlock()
}

// requireChromium returns the Chromium to drive, or skips t when none is on
// PATH (fails it when CI is set).
func requireChromium(t *testing.T) string {
	t.Helper()
	chrome := findChromium()
	if chrome == "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("no Chromium on PATH (looked for %s) and CI is set: .ci/run installs Debian's chromium", strings.Join(chromiumNames, ", "))
		}
		t.Skipf("SKIPPED: the browser test needs Chromium and none is on PATH (looked for %s); install Debian's chromium (apt-get install chromium) to run it. With CI set this is a failure.", strings.Join(chromiumNames, ", "))
	}
	return chrome
}

func TestTableInChromium(t *testing.T) {
	chrome := requireChromium(t)
	began := time.Now()
	bin := buildCrashgame(t)
	t.Logf("built crashgame in %s", time.Since(began).Round(time.Millisecond))
	srv := startDev(t, bin)
	t.Logf("crashgame dev: game %s, operator lobby %s", srv.GameURL, srv.LobbyURL)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	en, err := fetchDictionary(ctx, srv.GameURL, "en")
	if err != nil {
		t.Fatal(err)
	}
	pt, err := fetchDictionary(ctx, srv.GameURL, "pt")
	if err != nil {
		t.Fatal(err)
	}
	if miss := missingKeys(en, pt); len(miss) > 0 {
		t.Errorf("the pt dictionary lacks %d keys of en: %s", len(miss), strings.Join(miss, ", "))
	}

	artifacts := filepath.Join(moduleRoot(t), "integration", "artifacts")
	if err := os.MkdirAll(artifacts, 0o755); err != nil {
		t.Fatal(err)
	}

	logs := &testLog{t: t}
	defer logs.close()
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx, append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chrome), chromedp.NoSandbox, chromedp.WindowSize(1280, 800),
		chromedp.Flag("lang", "en-GB"))...)
	defer cancelAlloc()
	browserCtx, cancelBrowser := chromedp.NewContext(allocCtx, chromedp.WithErrorf(logs.errorf))
	defer cancelBrowser()
	if err := chromedp.Do(browserCtx); err != nil { // starts the browser
		t.Fatalf("start %s: %v", chrome, err)
	}

	// ---- en on a mobile, launched from the operator's lobby ----
	enTab, closeEnTab := chromedp.NewContext(browserCtx)
	defer closeEnTab()
	enWatch := watchTab(enTab)
	do(t, enTab, "open the operator's lobby",
		chromedp.EmulateViewport(360, 740, chromedp.EmulateMobile, chromedp.EmulateScale(2)),
		chromedp.Navigate(srv.LobbyURL+"/"),
		chromedp.WaitVisible(chromedp.CSS(playButton(player))),
		chromedp.Click(chromedp.CSS(playButton(player))),
	)
	waitJS(t, enTab, "the table to load after Play", 20*time.Second, tableReadyJS)
	loc, err := chromedp.Run(enTab, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(loc, srv.GameURL+"/") || !strings.Contains(loc, "lang=en") || strings.Contains(loc, "sid=") {
		t.Errorf("the table's address is %q: want the game's, with lang=en and no sid left in it", loc)
	}
	first := probePanel(t, enTab)
	if first.Lang != "en" {
		t.Errorf("the page's language is %q, want en (lang=en in the launch URL)", first.Lang)
	}
	t.Logf("en table loaded through the lobby at %s; balance shown %q", loc, first.Balance)
	do(t, enTab, "set up the first bet panel: 10.00, auto cash out at 1.01x",
		chromedp.Click(chromedp.CSS(panelSel+" .auto-on")),
		typeOver(panelSel+" .auto-input", "1.01"),
		typeOver(panelSel+" .amount-input", "10.00"),
	)
	if got, err := chromedp.Run(enTab, chromedp.Evaluate[string](`document.querySelector('`+panelSel+` .amount-input').value + ' ' + document.querySelector('`+panelSel+` .auto-input').value`)); err != nil || got != "10.00 1.01" {
		t.Fatalf("the panel's fields hold %q (%v), want the amount 10.00 and the target 1.01", got, err)
	}

	// ---- pt on a desktop: a second launch, with lang=pt, for another player ----
	ptURL, err := srv.launch(ctx, ptPlayer, "BRL", "pt")
	if err != nil {
		t.Fatalf("launch in pt: %v", err)
	}
	if !strings.Contains(ptURL, "lang=pt") {
		t.Errorf("the pt launch URL %q has no lang=pt", ptURL)
	}
	ptTab, closePtTab := chromedp.NewContext(browserCtx)
	defer closePtTab()
	ptWatch := watchTab(ptTab)
	do(t, ptTab, "open the pt launch URL", chromedp.EmulateViewport(1280, 800), chromedp.Navigate(ptURL))
	waitJS(t, ptTab, "the pt table to load", 20*time.Second,
		tableReadyJS+` && document.documentElement.lang === 'pt' && document.getElementById('latency-value').textContent !== ''`)
	check := newUntranslated(en, pt)
	checkShown(t, ptTab, check, "pt table")
	do(t, ptTab, "open the help", chromedp.Click(chromedp.ID("open-help")))
	waitJS(t, ptTab, "the help dialog", 5*time.Second, `document.getElementById('help').open`)
	checkShown(t, ptTab, check, "pt help dialog")
	do(t, ptTab, "close the help and set up a pt bet: auto cash out at 1.01x",
		chromedp.Click(chromedp.CSS("#help .dialog-close button")),
		chromedp.Click(chromedp.CSS(panelSel+" .auto-on")),
		typeOver(panelSel+" .auto-input", "1.01"),
	)

	// ---- the bets: en until one cashes out, pt once in the same round ----
	ptPlaced := false
	placePt := func(minLeft float64) {
		if ptPlaced {
			return
		}
		if ok, _ := chromedp.Run(ptTab, chromedp.Evaluate[bool](bettingOpen(minLeft))); !ok {
			return
		}
		do(t, ptTab, "place the pt bet", chromedp.Click(chromedp.CSS(panelSel+" .action")))
		waitJS(t, ptTab, "the pt bet to be accepted", 5*time.Second, `(() => { const p = document.querySelector('`+panelSel+`'); return p.querySelector('.action').classList.contains('cancel') || p.querySelector('.panel-note').textContent !== ''; })()`)
		checkShown(t, ptTab, check, "pt bet accepted")
		ptPlaced = true
	}
	won := playUntilCashout(t, enTab, en, func() { placePt(0.5) })
	checkShown(t, enTab, newUntranslated(en, en), "en table (raw keys only)")
	shot(t, enTab, artifacts, "table-en-mobile-cashed-out.png")
	if !ptPlaced {
		waitJS(t, ptTab, "a pt betting phase", roundWait, bettingOpen(1.5))
		placePt(1.5)
	}

	// ---- what the page showed is what the game and the operator booked ----
	session, err := chromedp.Run(enTab, chromedp.Evaluate[string](`sessionStorage.getItem('crashgame.session') || ''`))
	if err != nil || session == "" {
		t.Fatalf("the table keeps no session in sessionStorage (%v)", err)
	}
	betID := findCashedOutBet(t, ctx, srv, session, won)
	checkLedger(t, ctx, srv, betID, won)
	checkSupportPage(t, ctx, browserCtx, srv, artifacts, betID, newUntranslated(en, en))

	// ---- the pt table after its bet ----
	waitJS(t, ptTab, "the pt bet's outcome", 25*time.Second, `document.querySelector('`+panelSel+` .panel-note').textContent !== ''`)
	checkShown(t, ptTab, check, "pt bet settled")
	// My bets lists the bets of this session (not the player's earlier ones).
	do(t, ptTab, "show my bets", chromedp.Click(chromedp.ID("tab-mine")))
	waitJS(t, ptTab, "my bets to list the settled pt bet", 10*time.Second,
		`document.querySelectorAll('#my-rows .row').length > 0 && !document.querySelector('#my-rows .row.accepted, #my-rows .row.pending')`)
	checkShown(t, ptTab, check, "pt my bets")
	shot(t, ptTab, artifacts, "table-pt-desktop.png")

	// The fairness dialog verifies the last finished round in the browser.
	waitJS(t, ptTab, "a finished round in the strip", roundWait, `document.querySelectorAll('#strip li').length > 0`)
	do(t, ptTab, "open the fairness dialog", chromedp.Click(chromedp.ID("open-fairness")))
	waitJS(t, ptTab, "the fairness dialog to verify the last round", 10*time.Second,
		`document.getElementById('fairness').open && document.querySelectorAll('#f-result p').length >= 3`)
	checkShown(t, ptTab, check, "pt fairness dialog")
	verdict, _ := chromedp.Run(ptTab, chromedp.Evaluate[string](`Array.from(document.querySelectorAll('#f-result p.good, #f-result p.bad')).map((p) => p.className + ': ' + p.textContent).join(' | ')`))
	if !strings.Contains(verdict, "good") || strings.Contains(verdict, "bad") {
		t.Errorf("the fairness dialog did not verify the last round in the browser: %q", verdict)
	}
	do(t, ptTab, "close the fairness dialog", chromedp.Click(chromedp.CSS("#fairness .dialog-close button")))
	do(t, ptTab, "switch to the mobile size", chromedp.EmulateViewport(360, 740, chromedp.EmulateMobile, chromedp.EmulateScale(2)))
	checkShown(t, ptTab, check, "pt mobile")
	shot(t, ptTab, artifacts, "table-pt-mobile.png")

	// ---- stop: SIGTERM in a betting phase (the round is voided at once) ----
	ptSession, _ := chromedp.Run(ptTab, chromedp.Evaluate[string](`sessionStorage.getItem('crashgame.session') || ''`))
	closeEnTab()
	closePtTab()
	for _, e := range enWatch.exceptions() {
		t.Errorf("the en table threw: %s", e)
	}
	for _, e := range ptWatch.exceptions() {
		t.Errorf("the pt table threw: %s", e)
	}
	cancelBrowser()
	waitBettingPhase(t, ctx, srv, ptSession)
	srv.stop(t)
	t.Logf("the browser test took %s", time.Since(began).Round(time.Millisecond))
}

// panelSel is the first bet panel.
const panelSel = "#panels > .panel:first-child"

// tableReadyJS holds once the table shows a balance and a round.
const tableReadyJS = `(() => {
  const app = document.getElementById('app');
  return !!app && !app.hidden && document.getElementById('balance').textContent.trim() !== '' &&
    document.getElementById('phase').textContent.trim() !== '' && document.querySelector('` + panelSel + ` .action') !== null;
})()`

// bettingOpen holds in a betting phase with at least minLeft seconds left on
// the page's countdown, the first panel ready to bet.
func bettingOpen(minLeft float64) string {
	return fmt.Sprintf(`(() => {
  const m = document.getElementById('multiplier');
  const b = document.querySelector('%s .action');
  return m.classList.contains('waiting') && parseFloat(m.textContent) >= %g && b.classList.contains('bet') && !b.disabled;
})()`, panelSel, minLeft)
}

func playButton(playerID string) string {
	return fmt.Sprintf(`tr:has(input[name="player_id"][value=%q]) button[type="submit"]`, playerID)
}

// panelState is what the first panel and the header show.
type panelState struct {
	Lang    string `json:"lang"`
	Balance string `json:"balance"`
	Button  string `json:"button"`
	Class   string `json:"cls"`
	Note    string `json:"note"`
	Phase   string `json:"phase"`
}

const panelStateJS = `(() => {
  const p = document.querySelector('` + panelSel + `');
  return { lang: document.documentElement.lang, balance: document.getElementById('balance').textContent,
    button: p.querySelector('.action').textContent, cls: p.querySelector('.action').className,
    note: p.querySelector('.panel-note').textContent, phase: document.getElementById('phase').textContent };
})()`

func probePanel(t *testing.T, tab context.Context) panelState {
	t.Helper()
	s, err := chromedp.Run(tab, chromedp.Evaluate[panelState](panelStateJS))
	if err != nil {
		t.Fatalf("read the table: %v", err)
	}
	return s
}

// cashout is a bet the page showed as cashed out.
type cashout struct {
	multiplier     string // as shown, "1.01x"
	payout         int64  // cents, as shown in the panel
	before, after  int64  // the balance shown before the bet and after the win
	start          int64  // the balance shown before the first bet (a round may have crashed at 1.00x first)
	balanceShownAt string
}

// playUntilCashout bets in the first panel round after round until the bet
// cashes out (a round may crash at 1.00x, before any auto cash out), and checks
// the balance the page shows at each step. alsoThisRound runs once the bet is
// accepted, still in the betting phase.
func playUntilCashout(t *testing.T, tab context.Context, en map[string]string, alsoThisRound func()) cashout {
	t.Helper()
	wonRe := templateRegexp(en["panel.won"]) // "Cashed out at {m}: {amount}"
	lost := en["panel.lost"]
	start := int64(-1)
	for round := 1; round <= maxRounds; round++ {
		waitJS(t, tab, "a betting phase with time left", roundWait, bettingOpen(2.5))
		before := probePanel(t, tab)
		b0 := cents(t, before.Balance)
		if start < 0 {
			start = b0
		}
		do(t, tab, "click the bet button", chromedp.Click(chromedp.CSS(panelSel+" .action")))
		// Accepted (the button turns into Cancel) or refused (a new note; the
		// last round's "crashed" note stays until the next frame).
		waitJS(t, tab, "the bet to be accepted", 5*time.Second, fmt.Sprintf(
			`(() => { const p = document.querySelector('%s'); const n = p.querySelector('.panel-note').textContent; return p.querySelector('.action').classList.contains('cancel') || (n !== '' && n !== %q); })()`,
			panelSel, before.Note))
		if s := probePanel(t, tab); !strings.Contains(s.Class, "cancel") {
			t.Logf("round %d: the bet was not accepted (%q); trying the next round", round, s.Note)
			continue
		}
		alsoThisRound()
		waitBalance(t, tab, "the balance to fall by the stake", b0-stake)
		// The round's board (the stream's bets events) lists the bet and counts it.
		waitJS(t, tab, "the round's board to list the bet", 5*time.Second,
			`document.querySelectorAll('#live-rows .row').length > 0 && !document.getElementById('live-counts').hidden && document.getElementById('live-counts').textContent !== ''`)

		waitJS(t, tab, "the bet's outcome", 25*time.Second, `document.querySelector('`+panelSel+` .panel-note').textContent !== ''`)
		s := probePanel(t, tab)
		if s.Note == lost {
			t.Logf("round %d: crashed before 1.01x (%q); betting again", round, s.Phase)
			continue
		}
		m := wonRe.FindStringSubmatch(s.Note)
		if m == nil {
			t.Fatalf("round %d: the panel says %q: neither a cash out nor a loss", round, s.Note)
		}
		c := cashout{multiplier: m[1], payout: cents(t, m[2]), before: b0, start: start}
		if c.multiplier != "1.01x" {
			t.Errorf("auto cash out at 1.01x paid at %s", c.multiplier)
		}
		if want := stake * autoTarget / 100; c.payout != want {
			t.Errorf("the panel shows a payout of %d cents for %d at 1.01x, want %d", c.payout, stake, want)
		}
		c.after = b0 - stake + c.payout
		c.balanceShownAt = waitBalance(t, tab, "the balance to rise by the payout", c.after)
		t.Logf("round %d: cashed out at %s, payout %q; balance shown %q -> %q (%+d cents)",
			round, c.multiplier, m[2], before.Balance, c.balanceShownAt, c.after-b0)
		return c
	}
	t.Fatalf("no bet cashed out at 1.01x in %d rounds", maxRounds)
	return cashout{}
}

// waitBalance waits until the header shows want cents and returns the text.
func waitBalance(t *testing.T, tab context.Context, what string, want int64) string {
	t.Helper()
	return waitBalanceWithin(t, tab, what, want, 10*time.Second)
}

// waitBalanceWithin is waitBalance with its own guard.
func waitBalanceWithin(t *testing.T, tab context.Context, what string, want int64, within time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(within)
	var last string
	for time.Now().Before(deadline) {
		s, err := chromedp.Run(tab, chromedp.Evaluate[string](`document.getElementById('balance').textContent`))
		if err == nil {
			last = s
			if c, ok := parseCents(s); ok && c == want {
				return s
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("waiting for %s: the page shows %q, want %d cents", what, last, want)
	return ""
}

// findCashedOutBet finds the bet in the player API's list of the session's
// bets, as the page itself lists them.
func findCashedOutBet(t *testing.T, ctx context.Context, srv *devServer, session string, c cashout) string {
	t.Helper()
	var list struct {
		Items []struct {
			BetID      string `json:"bet_id"`
			RoundID    string `json:"round_id"`
			Amount     int64  `json:"amount"`
			Status     string `json:"status"`
			Multiplier *int64 `json:"multiplier"`
			Payout     *int64 `json:"payout"`
		} `json:"items"`
	}
	if err := getJSON(ctx, srv.GameURL+"/api/v1/bets?limit=20", session, &list); err != nil {
		t.Fatalf("list the session's bets: %v", err)
	}
	for _, b := range list.Items {
		if b.Status == "cashed_out" && b.Amount == stake && b.Payout != nil && *b.Payout == c.payout && b.Multiplier != nil && *b.Multiplier == autoTarget {
			return b.BetID
		}
	}
	t.Fatalf("GET /api/v1/bets lists no cashed-out bet of %d paying %d at 1.01x: %+v", stake, c.payout, list.Items)
	return ""
}

// checkLedger asserts that the operator booked the bet and the win of betID
// with the amounts the page showed, and that its balance is the page's.
func checkLedger(t *testing.T, ctx context.Context, srv *devServer, betID string, c cashout) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	var ms []movement
	var err error
	for {
		ms, err = srv.ledger(ctx, player)
		var bet, win *movement
		for i := range ms {
			m := &ms[i]
			// The debit's transaction_id is the game's bet id; the credit
			// names it in bet_id (api/wallet.v1.yaml).
			switch {
			case m.Kind == "bet" && m.TransactionID == betID:
				bet = m
			case m.Kind == "win" && m.BetID != nil && *m.BetID == betID:
				win = m
			}
		}
		if err == nil && bet != nil && win != nil {
			if bet.Amount != stake || bet.Delta != -stake || bet.FreebetID != nil {
				t.Errorf("the operator's bet movement of %s: amount %d, delta %d, freebet %v; want %d, %d, none", betID, bet.Amount, bet.Delta, bet.FreebetID, stake, -stake)
			}
			if bet.Settlement == nil || *bet.Settlement != "win" {
				t.Errorf("the operator's bet %s is not settled by a win: settlement %v", betID, bet.Settlement)
			}
			if win.Amount != c.payout || win.Delta != c.payout {
				t.Errorf("the operator's win movement of %s: amount %d, delta %d; the page showed a payout of %d", betID, win.Amount, win.Delta, c.payout)
			}
			if win.RoundID != bet.RoundID {
				t.Errorf("the win of %s is booked on round %s, its bet on %s", betID, win.RoundID, bet.RoundID)
			}
			t.Logf("operator ledger: bet %s -%d (op tx %s), win %s +%d (op tx %s), balance after %d", betID, stake, bet.OperatorTransactionID,
				win.TransactionID, win.Amount, win.OperatorTransactionID, win.BalanceAfter)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the operator's ledger has no bet and win of %s after 15 s (err %v): %+v", betID, err, ms)
		}
		time.Sleep(200 * time.Millisecond)
	}
	for {
		bal, err := srv.operatorBalance(ctx, player)
		if err == nil && bal == c.after {
			t.Logf("operator balance of %s: %d cents, as the page shows (%s)", player, bal, c.balanceShownAt)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the operator's balance of %s is %d (err %v); the page shows %d", player, bal, err, c.after)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// waitBettingPhase waits, through the player API, for a betting phase with
// at least 2 s left, so that a SIGTERM then stops the table at once (a round
// in flight would play on until its crash).
func waitBettingPhase(t *testing.T, ctx context.Context, srv *devServer, session string) {
	t.Helper()
	if session == "" {
		t.Fatal("no session to read the round with")
	}
	deadline := time.Now().Add(roundWait)
	for time.Now().Before(deadline) {
		var r struct {
			Phase         string `json:"phase"`
			BettingEndsAt int64  `json:"betting_ends_at"`
			ServerTime    int64  `json:"server_time"`
		}
		if err := getJSON(ctx, srv.GameURL+"/api/v1/round", session, &r); err == nil && r.Phase == "betting" && r.BettingEndsAt-r.ServerTime > 2000 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("no betting phase within %s", roundWait)
}

// checkShown fails the test for every English dictionary string or raw key
// the page shows.
func checkShown(t *testing.T, tab context.Context, u *untranslated, stage string) {
	t.Helper()
	items, err := chromedp.Run(tab, chromedp.Evaluate[[]shown](shownTextJS))
	if err != nil {
		t.Fatalf("%s: list the page's text: %v", stage, err)
	}
	if len(items) < 10 {
		t.Fatalf("%s: the page shows only %d pieces of text: %+v", stage, len(items), items)
	}
	for _, b := range u.find(items) {
		t.Errorf("%s: untranslated: %s", stage, b)
	}
	t.Logf("%s: %d pieces of text checked", stage, len(items))
}

// typeOver types text into an input in place of what it holds, as a player
// who selects the field's text and types over it. (Clearing the field first
// would not do: the page restores a valid amount on change.)
func typeOver(sel, text string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(
		chromedp.Focus(chromedp.CSS(sel)),
		chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.querySelector(%q).select()`, sel)),
		chromedp.SendKeys(chromedp.CSS(sel), text),
	)
}

func do(t *testing.T, tab context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	sctx, cancel := context.WithTimeout(tab, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(sctx, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// waitJS polls a JavaScript predicate until it is true. Errors while a page
// navigates count as false.
func waitJS(t *testing.T, tab context.Context, what string, timeout time.Duration, predicate string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var lastErr error
	reloads := 0
	for time.Now().Before(deadline) {
		// A script the host's network change aborted stops the page for
		// good: reload it, as a player would, at most twice, and say so.
		// Any other failure of the page still fails the wait.
		if w := watchOf(tab); w != nil && reloads < 2 {
			if u, lost := w.lostScript(); lost {
				reloads++
				t.Logf("Chromium aborted %s (%s: the host's network changed, the other suites' containers); reloading the page", u, netNetworkChanged)
				if _, err := chromedp.Run(tab, chromedp.Reload()); err != nil {
					t.Logf("reload: %v", err)
				}
				continue
			}
		}
		ok, err := chromedp.Run(tab, chromedp.Evaluate[bool](predicate))
		if err == nil && ok {
			return
		}
		lastErr = err
		if tab.Err() != nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	st, _ := chromedp.Run(tab, chromedp.Evaluate[string](`document.location.href + ' (' + document.readyState + ') :: ' + document.body.innerText.slice(0, 600)`))
	record := "no record of the tab's requests (watchTab was not called)"
	if w := watchOf(tab); w != nil {
		record = w.String()
	}
	t.Fatalf("waiting %s for %s (last error %v); the page: %s\nthe tab's %s", timeout, what, lastErr, st, record)
}

func shot(t *testing.T, tab context.Context, dir, name string) {
	t.Helper()
	png, err := chromedp.Run(tab, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}

// templateRegexp matches a dictionary string, capturing its placeholders.
func templateRegexp(s string) *regexp.Regexp {
	parts := placeholder.Split(s, -1)
	for i := range parts {
		parts[i] = regexp.QuoteMeta(parts[i])
	}
	return regexp.MustCompile(`^` + strings.Join(parts, `(.+?)`) + `$`)
}

// parseCents reads an amount of a two-decimal currency as the page writes it
// in any of its languages ("R$10,000.00", "R$ 10.000,00").
func parseCents(s string) (int64, bool) {
	var digits strings.Builder
	for _, r := range s {
		if r >= '0' && r <= '9' {
			digits.WriteRune(r)
		}
	}
	if digits.Len() < 3 {
		return 0, false
	}
	n, err := strconv.ParseInt(digits.String(), 10, 64)
	if err != nil {
		return 0, false
	}
	if strings.Contains(s, "-") {
		n = -n
	}
	return n, true
}

func cents(t *testing.T, s string) int64 {
	t.Helper()
	n, ok := parseCents(s)
	if !ok {
		t.Fatalf("%q is not an amount", s)
	}
	return n
}

// checkSupportPage opens, at 360 px, the support page an operator's staff
// get for the round of betID and its player (POST /v1/rounds/support-link):
// it shows the round, replays it with the player's cashout at 1.01x on the
// curve, and verifies the round's fairness in the browser.
func checkSupportPage(t *testing.T, ctx, browserCtx context.Context, srv *devServer, artifacts, betID string, check *untranslated) {
	t.Helper()
	ms, err := srv.ledger(ctx, player)
	if err != nil {
		t.Fatal(err)
	}
	roundID := ""
	for _, m := range ms {
		if m.Kind == "bet" && m.TransactionID == betID {
			roundID = m.RoundID
		}
	}
	var link struct {
		URL string `json:"url"`
	}
	if err := signedPost(ctx, srv.GameURL+"/v1/rounds/support-link", map[string]any{"operator": devOperator, "round_id": roundID, "player_id": player}, &link); err != nil {
		t.Fatalf("support link of %s: %v", roundID, err)
	}
	// The bet cashed out in flight: the page replays the round once it ended.
	for deadline := time.Now().Add(roundWait); ; {
		var data struct {
			Round struct {
				Status string `json:"status"`
			} `json:"round"`
		}
		if err := getJSON(ctx, link.URL+"/data", "", &data); err == nil && (data.Round.Status == "finished" || data.Round.Status == "void") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("round %s did not end within %s", roundID, roundWait)
		}
		time.Sleep(200 * time.Millisecond)
	}
	tab, closeTab := chromedp.NewContext(browserCtx)
	defer closeTab()
	watch := watchTab(tab)
	do(t, tab, "open the support page on a mobile",
		chromedp.EmulateViewport(360, 740, chromedp.EmulateMobile, chromedp.EmulateScale(2)),
		chromedp.Navigate(link.URL+"?lang=en"),
	)
	// Twice under the full suite's load (CI, 27 November) this page loaded its
	// scripts and then made no request for 20 s, with no answer of the game
	// pending. The wait is long enough to see whether the page starts late or
	// never; a slow start is logged with the tab's record of requests.
	opened := time.Now()
	waitJS(t, tab, "the support page to show the round and its replay", 60*time.Second,
		`!document.getElementById('content').hidden && document.querySelector('#replay svg') !== null && document.querySelectorAll('.replay-legend li').length > 0`)
	if took := time.Since(opened); took > 10*time.Second {
		t.Logf("the support page took %s to show the round; the tab's %s", took.Round(time.Millisecond), watch)
	}
	shownCashout, _ := chromedp.Run(tab, chromedp.Evaluate[string](`document.querySelector('.replay-legend').textContent`))
	if !strings.Contains(shownCashout, "1.01") {
		t.Errorf("the replay does not mark the player's cashout at 1.01x: %q", shownCashout)
	}
	crash, _ := chromedp.Run(tab, chromedp.Evaluate[string](`document.getElementById('round-facts').textContent`))
	if !strings.Contains(crash, "x") {
		t.Errorf("the support page shows no crash point: %q", crash)
	}
	do(t, tab, "verify the round", chromedp.Click(chromedp.ID("verify")))
	waitJS(t, tab, "the support page to verify the round", 20*time.Second,
		`document.querySelectorAll('#verify-result .good').length >= 3`)
	verdict, _ := chromedp.Run(tab, chromedp.Evaluate[string](`Array.from(document.querySelectorAll('#verify-result .good, #verify-result .bad')).map((p) => p.className + ': ' + p.textContent).join(' | ')`))
	if strings.Contains(verdict, "bad") {
		t.Errorf("the support page did not verify the round: %q", verdict)
	}
	wide, _ := chromedp.Run(tab, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > document.documentElement.clientWidth`))
	if wide {
		t.Error("the support page scrolls sideways at 360 px")
	}
	checkShown(t, tab, check, "support page")
	shot(t, tab, artifacts, "support-en-mobile.png")
	for _, e := range watch.exceptions() {
		t.Errorf("the support page threw: %s", e)
	}
	t.Logf("support page of %s: %s", roundID, verdict)
}
