//go:build integration

package browser

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/crashstudio/crashgame/integration/suite"
)

// The cluster's table: betting long enough for the page's clicks (the
// single-process test's bettingOpen wants 2.5 s left), crash points capped at
// 1.20x as the cluster suites do, so that a round flies at most 3 s.
const (
	clusterBettingMS = 5000
	clusterPauseMS   = 1000
	// interruptedTarget is the auto cash out of the bets the kills interrupt:
	// 1.10x, typed as "1.10". It is reached only 1.6 s into a flight, after
	// the kill lands, and most rounds' crash points are over it, so the
	// fail-over rule usually pays it at its target; a lower crash point has
	// it refunded.
	interruptedTarget = int64(110)
	// maxKills bounds the kills until one has dropped the page's own stream
	// (see the test's comment): two are always enough with two replicas.
	maxKills = 4
)

// streamProbe is installed in the page before its own scripts: it counts
// the documents loaded in the tab (a reload makes it 2) and the WebSockets
// the page opened and saw closed, without changing what they do.
const streamProbe = `(() => {
  try {
    const n = Number(sessionStorage.getItem('crashgame.test.loads') || '0') + 1;
    sessionStorage.setItem('crashgame.test.loads', String(n));
    window.__loads = n;
  } catch { window.__loads = -1; }
  window.__streams = { opened: 0, closed: 0, openedAt: 0, closedAt: 0 };
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      window.__streams.opened++;
      this.addEventListener('open', () => { window.__streams.openedAt = Date.now(); });
      this.addEventListener('close', () => { window.__streams.closed++; window.__streams.closedAt = Date.now(); });
    }
  };
})()`

type streamCount struct {
	Loads  int `json:"loads"`
	Opened int `json:"opened"`
	Closed int `json:"closed"`
	// OpenedAt and ClosedAt are when the page's last stream opened and when
	// one last closed (Unix ms, the browser's clock; 0: never).
	OpenedAt int64 `json:"openedAt"`
	ClosedAt int64 `json:"closedAt"`
}

func probeStreams(t *testing.T, tab context.Context) streamCount {
	t.Helper()
	s, err := chromedp.Run(tab, chromedp.Evaluate[streamCount](`(() => { const s = window.__streams || {}; return { loads: window.__loads || 0, opened: s.opened || 0, closed: s.closed || 0, openedAt: s.openedAt || 0, closedAt: s.closedAt || 0 }; })()`))
	if err != nil {
		t.Fatalf("read the page's stream counts: %v", err)
	}
	return s
}

// clusterBet is one bet of the page as the player API lists it.
type clusterBet struct {
	BetID       string `json:"bet_id"`
	RoundID     string `json:"round_id"`
	Amount      int64  `json:"amount"`
	Status      string `json:"status"`
	AutoCashout *int64 `json:"auto_cashout"`
	Multiplier  *int64 `json:"multiplier"`
	Payout      *int64 `json:"payout"`
}

func listBets(t *testing.T, ctx context.Context, gameURL, session string) []clusterBet {
	t.Helper()
	var list struct {
		Items []clusterBet `json:"items"`
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		// Through the load balancer, which may answer 503 TABLE_UNAVAILABLE
		// for a moment while a replica dies: try again.
		err := getJSON(ctx, gameURL+"/api/v1/bets?limit=20", session, &list)
		if err == nil {
			return list.Items
		}
		if time.Now().After(deadline) {
			t.Fatalf("list the session's bets: %v", err)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// TestTableInChromiumOnCluster plays the table in headless Chromium through
// the load balancer of a cluster (suite.StartCluster: PostgreSQL, NATS, the
// replicas, HAProxy, operator-sim as the wallet). The leader replica is
// killed (SIGKILL) while the player's bet flies, and the page carries on
// without a reload: its stream reconnects through the balancer, it shows the
// next round, the interrupted bet is settled by the fail-over rule (RB-5,
// docs/failover.md: paid at its auto cash out target when the round's crash
// point reaches it, refunded otherwise), and the balance on the page is the
// operator's. A last round is then played to a cash out on the new leader.
//
// The page's stream goes to whichever replica the balancer picks, which the
// test cannot choose. So that a kill always has to drop the page's own
// stream at least once, the cluster has two replicas: when the first kill
// (of the leader) leaves the page's stream alone, that stream is on the
// other replica, which then leads; the killed replica is restarted and the
// leader is killed again in a later round, now with the page's stream on it.
func TestTableInChromiumOnCluster(t *testing.T) {
	chrome := requireChromium(t)
	began := time.Now()
	c := suite.StartCluster(t, suite.ClusterOptions{
		Replicas: 2,
		Options:  suite.Options{BettingMS: clusterBettingMS, PauseMS: clusterPauseMS},
	})
	lb := c.GameURL()
	lbURL, err := url.Parse(lb)
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	en, err := fetchDictionary(ctx, lb, "en")
	if err != nil {
		t.Fatal(err)
	}
	artifacts := filepath.Join(moduleRoot(t), "integration", "artifacts")
	if err := os.MkdirAll(artifacts, 0o755); err != nil {
		t.Fatal(err)
	}

	// The operator launches the player through the game's operator API, as
	// its lobby does; the launch URL is on the installation's base_url,
	// http://crashgame:8080, the load balancer's name on the cluster's
	// network.
	p := c.NewPlayer(t, "Bruna Cluster", 100_000)
	r := c.Operator(t, "/v1/launch", map[string]any{
		"game_id": "crash", "currency": "BRL", "language": "en",
		"token": p.Token, "player_id": p.ID, "player_name": "Bruna Cluster",
	})
	if r.Status != http.StatusOK {
		t.Fatalf("launch: %s", r)
	}
	var launched struct {
		URL string `json:"url"`
	}
	if err := json.Unmarshal(r.Body, &launched); err != nil {
		t.Fatal(err)
	}
	launchURL, err := url.Parse(launched.URL)
	if err != nil {
		t.Fatalf("launch URL %q: %v", launched.URL, err)
	}

	logs := &testLog{t: t}
	defer logs.close()
	// The browser opens the launch URL as it is and reaches the balancer
	// under the game's public name: Chromium resolves that host (and port)
	// to the balancer's published port on loopback. So the page's address,
	// the Origin of its stream (checked against base_url) and the Host of
	// every request are the ones a player's browser sends in production;
	// rewriting the URL to 127.0.0.1 would change the origin, and the game
	// would rightly refuse the stream.
	rule := fmt.Sprintf("MAP %s %s", launchURL.Host, lbURL.Host)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx, append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chrome), chromedp.NoSandbox, chromedp.WindowSize(1280, 800),
		chromedp.Flag("lang", "en-GB"), chromedp.Flag("host-resolver-rules", rule))...)
	defer cancelAlloc()
	browserCtx, cancelBrowser := chromedp.NewContext(allocCtx, chromedp.WithErrorf(logs.errorf))
	defer cancelBrowser()
	if err := chromedp.Do(browserCtx); err != nil {
		t.Fatalf("start %s: %v", chrome, err)
	}
	tab, closeTab := chromedp.NewContext(browserCtx)
	defer closeTab()
	watch := watchTab(tab)
	if _, err := chromedp.Call(tab, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: streamProbe}); err != nil {
		t.Fatalf("install the stream probe: %v", err)
	}
	do(t, tab, "open the launch URL on a mobile",
		chromedp.EmulateViewport(360, 740, chromedp.EmulateMobile, chromedp.EmulateScale(2)),
		chromedp.Navigate(launched.URL),
	)
	waitJS(t, tab, "the table to load through the load balancer", 30*time.Second, tableReadyJS)
	loc, err := chromedp.Run(tab, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(loc, "http://"+launchURL.Host+"/") || strings.Contains(loc, "sid=") {
		t.Errorf("the table's address is %q: want the game's public address %s, with no sid left in it", loc, launchURL.Host)
	}
	waitJS(t, tab, "the page's stream to open", 20*time.Second, `document.getElementById('latency-value').textContent !== ''`)
	session, err := chromedp.Run(tab, chromedp.Evaluate[string](`sessionStorage.getItem('crashgame.session') || ''`))
	if err != nil || session == "" {
		t.Fatalf("the table keeps no session in sessionStorage (%v)", err)
	}
	balance := cents(t, probePanel(t, tab).Balance)
	if sim := c.SimBalance(t, p.ID); balance != sim {
		t.Fatalf("the page shows a balance of %d cents, the operator %d", balance, sim)
	}
	t.Logf("table loaded through the load balancer at %s (%s); balance %d cents", loc, rule, balance)

	do(t, tab, "set up the first bet panel: 10.00, auto cash out at 1.10x",
		chromedp.Click(chromedp.CSS(panelSel+" .auto-on")),
		typeOver(panelSel+" .auto-input", "1.10"),
		typeOver(panelSel+" .amount-input", "10.00"),
	)

	// ---- kills: the leader dies while the page's bet flies ----
	dropped, interrupted := false, false
	refusals := 0
	for kill := 1; kill <= maxKills && !(dropped && interrupted); kill++ {
		waitJS(t, tab, "a betting phase with time left", roundWait, bettingOpen(2.5))
		before := probePanel(t, tab)
		do(t, tab, "click the bet button", chromedp.Click(chromedp.CSS(panelSel+" .action")))
		waitJS(t, tab, "the bet to be accepted", 10*time.Second, fmt.Sprintf(
			`(() => { const p = document.querySelector('%s'); const n = p.querySelector('.panel-note').textContent; return p.querySelector('.action').classList.contains('cancel') || (n !== '' && n !== %q); })()`,
			panelSel, before.Note))
		if s := probePanel(t, tab); !strings.Contains(s.Class, "cancel") {
			t.Logf("kill %d: the bet was not accepted (%q); trying the next round", kill, s.Note)
			if refusals++; refusals > 3 {
				t.Fatalf("%d bets refused in a row", refusals)
			}
			kill--
			continue
		}
		balance -= stake
		waitBalance(t, tab, "the balance to fall by the stake", balance)
		var bet clusterBet
		for _, b := range listBets(t, ctx, lb, session) {
			if b.Status == "accepted" {
				bet = b
			}
		}
		if bet.BetID == "" || bet.Amount != stake || bet.AutoCashout == nil || *bet.AutoCashout != interruptedTarget {
			t.Fatalf("kill %d: the player API lists no accepted bet of %d with auto cash out %d: %+v", kill, stake, interruptedTarget, bet)
		}
		leader, epoch := c.Leader(t)
		// In flight: the panel offers to cash out (or, when the round crashed
		// at once, already says how the bet ended).
		waitJS(t, tab, "the round to fly with the bet", 20*time.Second, `(() => { const p = document.querySelector('`+panelSel+`');
  return p.querySelector('.action').classList.contains('cashout') || p.querySelector('.panel-note').textContent !== ''; })()`)
		streams := probeStreams(t, tab)
		c.Kill(t, leader)
		killed := time.Now()
		t.Logf("kill %d: leader %s (epoch %d) killed while bet %s of round %s flies", kill, leader.Name, epoch, bet.BetID, bet.RoundID)
		if kill == 1 {
			shot(t, tab, artifacts, "table-cluster-leader-killed.png")
		}

		// The page carries on: the next round in betting, on the same
		// document, the panel free again for that round.
		waitJS(t, tab, "the next round in betting after the kill", 30*time.Second, bettingOpen(0))
		t.Logf("kill %d: the page shows the next round in betting %s after the kill", kill, time.Since(killed).Round(time.Millisecond))
		after := probeStreams(t, tab)
		if after.Loads != 1 {
			t.Fatalf("kill %d: the tab loaded %d documents: the page reloaded", kill, after.Loads)
		}
		if after.Closed > streams.Closed {
			dropped = true
			// The page reopens a stream closed under it after its backoff
			// (1 s, then doubling up to 10 s: app.js, reconnect); the next
			// round may show before that, when the round in flight had
			// crashed at once.
			for deadline := time.Now().Add(15 * time.Second); after.Opened <= streams.Opened && time.Now().Before(deadline); {
				time.Sleep(100 * time.Millisecond)
				after = probeStreams(t, tab)
			}
			if after.Opened <= streams.Opened {
				t.Fatalf("kill %d: the page's stream closed and the page opened no other within 15 s: %+v", kill, after)
			}
			t.Logf("kill %d: the page's stream was on %s: closed and reopened through the balancer (%d streams opened so far)", kill, leader.Name, after.Opened)
		} else {
			t.Logf("kill %d: the page's stream was on the surviving replica: it stayed open", kill)
		}
		var cur struct {
			RoundID string `json:"round_id"`
			Phase   string `json:"phase"`
		}
		if err := getJSON(ctx, lb+"/api/v1/round", session, &cur); err != nil {
			t.Fatalf("kill %d: the round after the kill: %v", kill, err)
		}
		if cur.RoundID == bet.RoundID {
			t.Fatalf("kill %d: the page shows a betting phase but the round is still %s", kill, bet.RoundID)
		}

		// The interrupted bet, settled as the rule says.
		round := roundRecord(t, c.DB(), bet.RoundID)
		want := expectedFate(round, bet)
		var got clusterBet
		deadline := time.Now().Add(30 * time.Second)
		for {
			for _, b := range listBets(t, ctx, lb, session) {
				if b.BetID == bet.BetID {
					got = b
				}
			}
			if got.Status != "accepted" && got.Status != "pending" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("kill %d: bet %s still %s 30 s after the kill", kill, bet.BetID, got.Status)
			}
			time.Sleep(300 * time.Millisecond)
		}
		if round.status == "void" {
			interrupted = true
		}
		if got.Status != want.status || (want.status == "cashed_out" && (got.Multiplier == nil || *got.Multiplier != interruptedTarget || got.Payout == nil || *got.Payout != want.payout)) {
			t.Errorf("kill %d: round %s (%s, crash point %d, flew: %t): bet %s ended %s (multiplier %v, payout %v), want %s paying %d (RB-5)",
				kill, bet.RoundID, round.status, round.crashPoint, round.flew, bet.BetID, got.Status, deref(got.Multiplier), deref(got.Payout), want.status, want.payout)
		}
		balance += want.payout
		t.Logf("kill %d: round %s ended %s (crash point %d); bet %s ended %s, payout %d (%s)", kill, bet.RoundID, round.status, round.crashPoint, bet.BetID, got.Status, want.payout, want.why)

		// My bets on the page says the same.
		do(t, tab, "show my bets", chromedp.Click(chromedp.ID("tab-mine")))
		short := "#" + bet.RoundID[strings.LastIndex(bet.RoundID, "-")+1:]
		waitJS(t, tab, "my bets to list the interrupted bet as "+want.status, 20*time.Second, fmt.Sprintf(
			`Array.from(document.querySelectorAll('#my-rows .row.%s')).some((r) => r.firstChild && r.firstChild.textContent === %q)`, want.status, short))
		if kill == 1 || dropped {
			shot(t, tab, artifacts, "table-cluster-after-failover.png")
		}
		do(t, tab, "show the live bets again", chromedp.Click(chromedp.ID("tab-live")))

		// The page's balance is the operator's.
		shown := waitBalanceWithin(t, tab, "the balance after the fail-over", balance, 30*time.Second)
		awaitSimBalance(t, c, p.ID, balance)
		t.Logf("kill %d: the page and the operator agree on %d cents (%s)", kill, balance, shown)

		// The killed replica comes back (as a follower) for the next kill.
		took := c.Restart(t, leader)
		t.Logf("kill %d: %s serving again %s later", kill, leader.Name, took.Round(time.Millisecond))
	}
	if !dropped {
		t.Errorf("no kill in %d dropped the page's stream: the reconnection through the balancer was not exercised", maxKills)
	}
	if !interrupted {
		t.Errorf("every round of the %d kills crashed before its kill: no bet was settled by the fail-over rule", maxKills)
	}

	// ---- a frozen replica: the page's stream falls silent, and the page
	// reconnects through the balancer on its own (docs/deploy.md, "Bounded
	// waits") ----
	// Each replica is frozen (docker pause) in turn for longer than the page's
	// silence limit (5 s, two and a half heartbeats): the one that holds the
	// page's stream makes the page drop it and open another, on the other
	// replica, without a reload. The page must be on a fresh stream within
	// silenceBound of the freeze.
	const frozenFor, silenceBound = 12 * time.Second, 10 * time.Second
	moved := false
	for _, rep := range c.Replicas {
		before := probeStreams(t, tab)
		froze := time.Now()
		c.Pause(t, rep)
		time.Sleep(frozenFor)
		c.Unpause(t, rep)
		ready, cancelReady := context.WithTimeout(context.Background(), time.Minute)
		c.AwaitReady(t, ready, rep)
		cancelReady()
		time.Sleep(3 * time.Second) // the balancer takes it back after two good checks (rise 2, 1 s apart while down)
		// Read after the replica answers again: the silent socket's close
		// event completes only then (its closing handshake reached a frozen
		// process).
		after := probeStreams(t, tab)
		if after.Loads != 1 {
			t.Fatalf("%s frozen: the tab loaded %d documents: the page reloaded", rep.Name, after.Loads)
		}
		if after.Opened == before.Opened {
			t.Logf("%s frozen for %s: the page's stream was on the other replica and stayed open", rep.Name, frozenFor)
			continue
		}
		// The page gave up its silent stream and opened another; the old
		// socket's close event comes only once the frozen replica answers
		// again (or its closing handshake times out), after the new one.
		moved = true
		back := time.UnixMilli(after.OpenedAt).Sub(froze)
		t.Logf("%s frozen: the page had a new stream open %s after the freeze (%d streams opened so far; the silent one's close completed %s after the freeze)",
			rep.Name, back.Round(time.Millisecond), after.Opened, time.UnixMilli(after.ClosedAt).Sub(froze).Round(time.Millisecond))
		if back > silenceBound || after.Closed <= before.Closed {
			t.Errorf("%s frozen: no new stream open within %s of the freeze, or the silent one never closed: %+v", rep.Name, silenceBound, after)
		}
	}
	if !moved {
		t.Error("freezing each replica in turn never silenced the page's stream: the reconnection after silence was not exercised")
	}
	waitJS(t, tab, "a betting phase after the freezes", roundWait, bettingOpen(2.5))
	// The page's balance is still the operator's, whichever replica its
	// stream reopened on.
	waitBalanceWithin(t, tab, "the balance after the freezes", balance, 10*time.Second)

	// ---- one more round, to a cash out, on the new leader ----
	leader, epoch := c.Leader(t)
	do(t, tab, "auto cash out at 1.01x for the last round", typeOver(panelSel+" .auto-input", "1.01"))
	won := playUntilCashout(t, tab, en, func() {})
	if won.start != balance {
		t.Errorf("the page showed %d cents before the last bets, want %d", won.start, balance)
	}
	balance = won.after
	awaitSimBalance(t, c, p.ID, balance)
	t.Logf("last round on leader %s (epoch %d): cashed out at %s; the page and the operator agree on %d cents", leader.Name, epoch, won.multiplier, balance)
	shot(t, tab, artifacts, "table-cluster-cashed-out.png")

	if s := probeStreams(t, tab); s.Loads != 1 {
		t.Errorf("the tab loaded %d documents: the page reloaded", s.Loads)
	}
	closeTab()
	for _, e := range watch.exceptions() {
		t.Errorf("the table threw: %s", e)
	}
	cancelBrowser()
	c.Settled(t, time.Minute)
	c.CheckOneLeaderPerRound(t)
	c.CheckWallet(t, nil)
	c.Reconcile(t)
	t.Logf("the cluster browser test took %s", time.Since(began).Round(time.Millisecond))
}

// roundState is what the game's database holds of a round.
type roundState struct {
	status     string // finished or void
	crashPoint int64
	flew       bool
}

func roundRecord(t *testing.T, db *sql.DB, id string) roundState {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var r roundState
		var started sql.NullInt64 // milliseconds
		err := db.QueryRow(`SELECT status, crash_point, started_at FROM rounds WHERE id = $1`, id).Scan(&r.status, &r.crashPoint, &started)
		r.flew = started.Valid
		if err == nil && (r.status == "finished" || r.status == "void") {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("round %s is %q 30 s after the kill (err %v)", id, r.status, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// fate is how a bet must end and what it pays.
type fate struct {
	status string
	payout int64
	why    string
}

// expectedFate applies the fail-over rule (RB-5, docs/failover.md) to the
// page's bet of an interrupted (void) round: an auto cash out at or below
// the round's committed crash point is paid at its target, every other live
// bet is refunded. When the round crashed before the kill landed, the bet
// ended as any bet does (WIN-3).
func expectedFate(r roundState, b clusterBet) fate {
	target := *b.AutoCashout
	reached := r.flew && target <= r.crashPoint
	switch {
	case r.status == "void" && reached:
		return fate{"cashed_out", b.Amount * target / 100, "interrupted in flight, target reached: paid at its target"}
	case r.status == "void":
		return fate{"void", b.Amount, "interrupted, target not reached: refunded"}
	case reached:
		return fate{"cashed_out", b.Amount * target / 100, "the round crashed before the kill, after the target"}
	default:
		return fate{"lost", 0, "the round crashed before the kill and the target"}
	}
}

// awaitSimBalance waits until operator-sim holds want cents for the player
// (the fail-over's /win or /rollback goes through the wallet queue).
func awaitSimBalance(t *testing.T, c *suite.Cluster, playerID string, want int64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got := c.SimBalance(t, playerID)
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the operator holds %d cents for %s, the page shows %d", got, playerID, want)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func deref(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}
