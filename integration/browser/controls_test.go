//go:build integration

package browser

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestResponsibleGamblingInChromium launches a player with little money, the
// session clock, a one-minute reality check, a lobby and a deposit address:
// a bet refused for lack of funds offers Deposit (pointing at deposit_url, in
// the top window); after a minute the reality check pauses the table with the
// elapsed time and the net result, the server refuses bets until Continue,
// and Continue resumes. The minute is shared with the Deposit check.
func TestResponsibleGamblingInChromium(t *testing.T) {
	chrome := findChromium()
	if chrome == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("no Chromium on PATH and CI is set")
		}
		t.Skip("SKIPPED: the browser test needs Chromium (apt-get install chromium)")
	}
	srv := startDev(t, buildCrashgame(t))
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	const poor = "player-rg-poor" // 0.50 BRL: below the minimum bet of 1.00
	var created map[string]any
	if err := signedPost(ctx, srv.LobbyURL+"/admin/players/create", map[string]any{"player_id": poor, "name": "Rita Gomes", "balance": 50}, &created); err != nil {
		t.Fatal(err)
	}
	var tok struct {
		Token string `json:"token"`
	}
	if err := signedPost(ctx, srv.LobbyURL+"/admin/tokens/issue", map[string]any{"player_id": poor}, &tok); err != nil {
		t.Fatal(err)
	}
	lobby, deposit := srv.LobbyURL+"/", srv.LobbyURL+"/?deposit=1"
	var l struct {
		URL string `json:"url"`
	}
	if err := signedPost(ctx, srv.GameURL+"/v1/launch", map[string]any{
		"operator": devOperator, "game_id": devGameID, "token": tok.Token, "player_id": poor, "currency": "BRL", "language": "en",
		"lobby_url": lobby, "deposit_url": deposit,
		"responsible_gambling": map[string]any{"session_clock": true, "reality_check_minutes": 1, "inactivity_timeout_minutes": 30},
	}, &l); err != nil {
		t.Fatal(err)
	}

	logs := &testLog{t: t}
	defer logs.close()
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx, append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chrome), chromedp.NoSandbox, chromedp.WindowSize(1280, 800))...)
	defer cancelAlloc()
	tab, closeTab := chromedp.NewContext(allocCtx, chromedp.WithErrorf(logs.errorf))
	defer closeTab()
	watch := watchTab(tab)
	opened := time.Now()
	do(t, tab, "open the launch URL", chromedp.Navigate(l.URL), chromedp.WaitVisible(chromedp.CSS(panelSel+" .action")))

	// The session clock and the net result are always on screen; Lobby points at lobby_url.
	waitJS(t, tab, "the session clock", 10*time.Second, `(() => {
  const bar = document.getElementById('rg-bar');
  return !bar.hidden && /^\d+:\d\d$/.test(document.getElementById('rg-clock').textContent) && document.getElementById('rg-net').textContent.includes('0.00');
})()`)
	if href, err := chromedp.Run(tab, chromedp.Evaluate[string](`(() => { const a = document.getElementById('lobby'); return a.hidden ? '' : a.href + ' ' + a.target; })()`)); err != nil || href != lobby+" _top" {
		t.Fatalf("Lobby button: %q, %v", href, err)
	}

	// Deposit: a bet the wallet refuses for lack of funds.
	waitJS(t, tab, "a betting phase", roundWait, bettingOpen(1.5))
	do(t, tab, "bet 1.00 with 0.50", typeOver(panelSel+" .amount-input", "1.00"), chromedp.Click(chromedp.CSS(panelSel+" .action")))
	waitJS(t, tab, "the Deposit button", 10*time.Second, `!document.getElementById('deposit').hidden`)
	if href, err := chromedp.Run(tab, chromedp.Evaluate[string](`(() => { const a = document.getElementById('deposit'); return a.href + ' ' + a.target; })()`)); err != nil || href != deposit+" _top" {
		t.Fatalf("Deposit button: %q, %v", href, err)
	}

	// The reality check, a minute after the opening.
	waitJS(t, tab, "the reality check dialog", time.Minute+20*time.Second-time.Since(opened), `document.getElementById('reality').open`)
	text, err := chromedp.Run(tab, chromedp.Evaluate[string](`document.getElementById('reality-text').textContent`))
	if err != nil || !strings.Contains(text, "1:0") || !strings.Contains(text, "0.00") || strings.Contains(text, "{") {
		t.Fatalf("reality check text %q (%v): want the elapsed time (1:0x) and the net result", text, err)
	}
	if href, err := chromedp.Run(tab, chromedp.Evaluate[string](`document.getElementById('reality-leave').href`)); err != nil || href != lobby {
		t.Fatalf("Leave: %q, %v", href, err)
	}
	// The server refuses bets until Continue.
	placeBet := `fetch('/api/v1/bets', {method: 'POST', headers: {'Content-Type': 'application/json', Authorization: 'Bearer ' + sessionStorage.getItem('crashgame.session')}, body: '{"amount":100}'}).then(r => r.json()).then(b => b.error_code || b.status)`
	if code, err := chromedp.Run(tab, chromedp.Evaluate[string](placeBet, chromedp.EvalAwaitPromise)); err != nil || code != "REALITY_CHECK_DUE" {
		t.Fatalf("a bet during the reality check answered %q, %v", code, err)
	}
	do(t, tab, "Continue", chromedp.Click(chromedp.CSS("#reality-continue")))
	waitJS(t, tab, "the dialog to close", 5*time.Second, `!document.getElementById('reality').open`)
	if code, err := chromedp.Run(tab, chromedp.Evaluate[string](placeBet, chromedp.EvalAwaitPromise)); err != nil || code == "REALITY_CHECK_DUE" {
		t.Fatalf("a bet after Continue answered %q, %v", code, err)
	}
	if ex := watch.exceptions(); len(ex) > 0 {
		t.Fatalf("JavaScript exceptions: %v", ex)
	}
}
