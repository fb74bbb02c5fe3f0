package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/coder/websocket"

	"github.com/crashstudio/crashgame/internal/round"
	"github.com/crashstudio/crashgame/internal/signature"
)

// playersPerAddress is how many players share one source address unless
// --addresses says otherwise: few enough that no player waits for the
// table's per-address budgets (docs/config.md, address_limits).
const playersPerAddress = 5

// addressPlan spreads the players over source addresses: with addresses > 0
// (--addresses), player i is behind address i mod addresses, as a carrier's
// NAT puts many players behind few addresses; otherwise five a address.
type addressPlan struct{ players, addresses int }

// groups is how many addresses the players use.
func (a addressPlan) groups() int {
	if a.addresses > 0 {
		return min(a.addresses, a.players)
	}
	return (a.players + playersPerAddress - 1) / playersPerAddress
}

// of is the group (address) of player i.
func (a addressPlan) of(i int) int {
	if a.addresses > 0 {
		return i % a.groups()
	}
	return i / playersPerAddress
}

// size is how many players group g holds.
func (a addressPlan) size(g int) int {
	n := a.groups()
	if a.addresses > 0 {
		return a.players/n + btoi(g < a.players%n)
	}
	return min(playersPerAddress, a.players-g*playersPerAddress)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// startBalance is each player's balance at the operator, in cents.
const startBalance = 1_000_000_000

// freebetValue is the stake of a free round, in cents.
const freebetValue = 500

// group is the HTTP clients of the players of one source address.
type group struct {
	api    *http.Client // player API calls, kept-alive
	stream *http.Client // WebSocket handshakes
	// forwardedFor is the address the group's requests name in their
	// X-Forwarded-For (--forwarded); empty: none, they connect from it.
	forwardedFor string
}

// groupAddress is the address of the players of group i: 127.1.0.1 onwards,
// 250 a /24.
func groupAddress(i int) net.IP {
	return net.IPv4(127, 1, byte(i/250), byte(i%250+1))
}

// newGroup makes the clients of group i, of players players. Without
// forwarded they connect from its address; with it, from the machine's,
// naming its address in X-Forwarded-For. The player API gets 3 connections
// for every 5 players (at least 3), however many share the address.
func newGroup(i, players int, forwarded bool, gameAddr, connect string) *group {
	dialer := &net.Dialer{Timeout: 10 * time.Second}
	var fwd string
	if forwarded {
		fwd = groupAddress(i).String()
	} else {
		dialer.LocalAddr = &net.TCPAddr{IP: groupAddress(i)}
	}
	dial := connectTo(dialer, gameAddr, connect)
	api := &http.Transport{DialContext: dial, MaxIdleConnsPerHost: max(players, 1), MaxConnsPerHost: max(3, (3*players+4)/5), IdleConnTimeout: time.Minute}
	ws := &http.Transport{DialContext: dial, MaxIdleConns: -1, DisableKeepAlives: true}
	return &group{api: &http.Client{Transport: api, Timeout: 30 * time.Second}, stream: &http.Client{Transport: ws}, forwardedFor: fwd}
}

// connectTo is d's DialContext, sending the connections asked for the
// game's host:port (gameAddr, the --url's) to connect instead (--connect),
// when it is set; every other address is dialled as asked.
func connectTo(d *net.Dialer, gameAddr, connect string) func(ctx context.Context, network, address string) (net.Conn, error) {
	if connect == "" {
		return d.DialContext
	}
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		if address == gameAddr {
			address = connect
		}
		return d.DialContext(ctx, network, address)
	}
}

// hostPort is the host:port that url u's connections are dialled at.
func hostPort(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return ""
	}
	if p.Port() != "" {
		return p.Host
	}
	if p.Scheme == "https" {
		return net.JoinHostPort(p.Hostname(), "443")
	}
	return net.JoinHostPort(p.Hostname(), "80")
}

// header sets what every request of the group carries.
func (g *group) header(h http.Header) {
	if g.forwardedFor != "" {
		h.Set("X-Forwarded-For", g.forwardedFor)
	}
}

// player is one simulated player.
type player struct {
	n        int
	id       string
	session  string
	freebets []string // open free rounds (ids), one spent per round
	g        *group
	lg       *loadgen

	mu      sync.Mutex
	roundID string
	flying  string // the round whose cashouts are scheduled
	bets    []*liveBet
	timers  []*time.Timer
}

// liveBet is one of the player's bets in the current round.
type liveBet struct {
	id     string
	amount int64
	auto   int64 // 0: cashed out by hand at target
	target int64
	free   bool
}

// apiCall sends one JSON request and decodes the answer. The duration runs
// from the moment a connection was obtained (the client's own queue is not
// the server's latency) to the end of the answer.
func (p *player) apiCall(ctx context.Context, method, path string, body, out any) (status int, code string, d time.Duration, err error) {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return 0, "", 0, err
		}
		rd = bytes.NewReader(raw)
	}
	var start time.Time
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotConn: func(httptrace.GotConnInfo) { start = time.Now() }})
	req, err := http.NewRequestWithContext(ctx, method, p.lg.o.url+path, rd)
	if err != nil {
		return 0, "", 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	p.g.header(req.Header)
	if p.session != "" {
		req.Header.Set("Authorization", "Bearer "+p.session)
	}
	resp, err := p.g.api.Do(req)
	if err != nil {
		return 0, "", 0, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	d = time.Since(start)
	if err != nil {
		return resp.StatusCode, "", d, err
	}
	if resp.StatusCode >= 300 {
		var e struct {
			Code string `json:"error_code"`
		}
		_ = json.Unmarshal(raw, &e)
		return resp.StatusCode, e.Code, d, nil
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return resp.StatusCode, "", d, fmt.Errorf("%s %s: answer %q: %w", method, path, raw, err)
		}
	}
	return resp.StatusCode, "", d, nil
}

// signedPost posts body, with a timestamp and signed with the operator's
// secret, to base+path (operator-sim's admin API, or the game's /v1/launch).
func signedPost(ctx context.Context, hc *http.Client, base, path, secret string, body map[string]any, out any) error {
	body["timestamp"] = time.Now().UnixMilli()
	raw, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+path, bytes.NewReader(raw))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Signature", signature.Sign([]byte(secret), raw))
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	ans, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("POST %s: %d %s", path, resp.StatusCode, ans)
	}
	if out != nil {
		return json.Unmarshal(ans, out)
	}
	return nil
}

// setup makes the player at the operator, launches the game for it and opens
// its session; granted free rounds come back in the session's freebets.
func (p *player) setup(ctx context.Context, admin *http.Client, grant bool) error {
	o := p.lg.o
	if err := signedPost(ctx, admin, o.operatorURL, "/admin/players/create", o.secret, map[string]any{
		"player_id": p.id, "name": fmt.Sprintf("Load Player %d", p.n), "currency": o.currency, "balance": startBalance,
	}, nil); err != nil {
		return err
	}
	if grant {
		if err := signedPost(ctx, admin, o.operatorURL, "/admin/freebets/grant", o.secret, map[string]any{
			"player_id": p.id, "id": "fb-" + p.id, "amount": freebetValue, "quantity": o.rounds,
		}, nil); err != nil {
			return err
		}
	}
	var tok struct {
		Token string `json:"token"`
	}
	if err := signedPost(ctx, admin, o.operatorURL, "/admin/tokens/issue", o.secret, map[string]any{"player_id": p.id}, &tok); err != nil {
		return err
	}
	t0 := time.Now()
	var launched struct {
		URL string `json:"url"`
	}
	if err := signedPost(ctx, admin, o.url, "/v1/launch", o.secret, map[string]any{
		"operator": o.operator, "game_id": o.gameID, "token": tok.Token, "player_id": p.id,
		"currency": o.currency, "language": "en", "player_name": fmt.Sprintf("Load Player %d", p.n),
	}, &launched); err != nil {
		return err
	}
	p.lg.rec.add(kindLaunch, time.Since(t0), "200")
	u, err := url.Parse(launched.URL)
	if err != nil {
		return fmt.Errorf("launch url %q: %w", launched.URL, err)
	}
	var sess struct {
		Session  string `json:"session"`
		Freebets []struct {
			ID     string `json:"id"`
			Amount int64  `json:"amount"`
		} `json:"freebets"`
	}
	status, code, d, err := p.apiCall(ctx, http.MethodPost, "/api/v1/sessions", map[string]any{"sid": u.Query().Get("sid")}, &sess)
	if err != nil {
		return err
	}
	p.lg.rec.add(kindSession, d, fmt.Sprint(status))
	if status == http.StatusNotFound && code == "" {
		return fmt.Errorf("POST /api/v1/sessions: 404: %s serves no player API (is the table wired into crashgame serve?)", o.url)
	}
	if status != http.StatusCreated {
		return fmt.Errorf("POST /api/v1/sessions: %d %s", status, code)
	}
	p.session = sess.Session
	for _, f := range sess.Freebets {
		p.freebets = append(p.freebets, f.ID)
	}
	return nil
}

// streamEvent is what the player reads of a stream message.
type streamEvent struct {
	Type          string `json:"type"`
	RoundID       string `json:"round_id"`
	BettingEndsAt int64  `json:"betting_ends_at"`
	StartedAt     int64  `json:"started_at"`
	Bet           *struct {
		BetID  string `json:"bet_id"`
		Status string `json:"status"`
		Payout *int64 `json:"payout"`
	} `json:"bet"`
}

var betsPrefix = []byte(`{"type":"bets"`)

// Why a stream ended, as the report counts it: a close code ("1001"), or one
// of these.
const (
	causeSilent = "silent" // nothing heard for --silence: the server is gone
	causeLost   = "lost"   // the connection ended without a close frame
)

// play holds the player's stream until ctx ends, betting on the rounds it is
// told to. The first opening's error goes to opened (a player whose first
// stream cannot be opened stops there). A stream that ends during the run
// is counted as dropped and reopened, as the page does: through the same
// address (the load balancer), at once but spread over 300 ms when the
// server went away on purpose (1001) or fell silent, else after a backoff
// of 1 s doubling up to 10 s; the new stream's hello resynchronises.
func (p *player) play(ctx context.Context, opened chan<- error) {
	backoff := time.Second
	var droppedAt time.Time // when the stream being replaced dropped
	for first := true; ; first = false {
		conn, status, err := p.dial(ctx)
		if first {
			opened <- err
			if err != nil {
				return
			}
		} else if err != nil {
			if ctx.Err() != nil {
				return
			}
			p.lg.reopenFailed(status, err)
			if !sleep(ctx, backoff) {
				return
			}
			backoff = min(backoff*2, 10*time.Second)
			continue
		} else {
			p.lg.reopened()
			p.lg.rec.add(kindReconnect, time.Since(droppedAt), "reopened")
		}
		cause, heard := p.read(ctx, conn)
		conn.CloseNow()
		if ctx.Err() != nil {
			return
		}
		p.lg.dropped(cause)
		droppedAt = time.Now()
		if heard {
			backoff = time.Second
		}
		wait := backoff
		if cause == "1001" || cause == causeSilent {
			wait = rand.N(300 * time.Millisecond)
		} else {
			backoff = min(backoff*2, 10*time.Second)
		}
		if !sleep(ctx, wait) {
			return
		}
	}
}

// sleep waits d, or less when ctx ends first (false then).
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// dial opens a stream and sends its hello. status is the handshake's HTTP
// status when one came back (0 otherwise).
func (p *player) dial(ctx context.Context) (conn *websocket.Conn, status int, err error) {
	o := p.lg.o
	wsURL := "ws" + strings.TrimPrefix(o.url, "http") + "/api/v1/stream"
	hdr := http.Header{"Origin": []string{o.url}}
	p.g.header(hdr)
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, resp, err := websocket.Dial(dctx, wsURL, &websocket.DialOptions{HTTPClient: p.g.stream, HTTPHeader: hdr})
	if resp != nil {
		status = resp.StatusCode
	}
	if err != nil {
		return nil, status, err
	}
	conn.SetReadLimit(1 << 22)
	hello, _ := json.Marshal(map[string]string{"type": "hello", "session": p.session})
	if err := conn.Write(ctx, websocket.MessageText, hello); err != nil {
		conn.CloseNow()
		return nil, status, err
	}
	return conn, status, nil
}

// failureCause names why a stream could not be opened, for the report: the
// handshake's HTTP status when the server answered with one, else how the
// connection failed.
func failureCause(status int, err error) string {
	var op *net.OpError
	switch {
	case status != 0 && status != http.StatusSwitchingProtocols:
		return fmt.Sprint(status)
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded):
		return "timeout"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "refused"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return "reset"
	case errors.Is(err, syscall.EADDRNOTAVAIL), errors.Is(err, syscall.EADDRINUSE):
		return "no local port"
	case errors.Is(err, syscall.EMFILE), errors.Is(err, syscall.ENFILE):
		return "no file descriptor"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "eof"
	case errors.As(err, &op):
		return "other: " + op.Op + " " + op.Err.Error()
	default:
		return "other: " + err.Error()
	}
}

// read handles the stream's messages until it ends, and says why it ended
// and whether it brought anything. A stream that brings nothing for
// --silence (the server's heartbeat leaves no 2 s without a message) is given up.
func (p *player) read(ctx context.Context, conn *websocket.Conn) (cause string, heard bool) {
	head := make([]byte, len(betsPrefix))
	for {
		rctx, cancel := ctx, context.CancelFunc(func() {})
		if s := p.lg.o.silence; s > 0 {
			rctx, cancel = context.WithTimeout(ctx, s)
		}
		typ, r, err := conn.Reader(rctx)
		if err != nil {
			silent := rctx.Err() != nil && ctx.Err() == nil
			cancel()
			switch code := websocket.CloseStatus(err); {
			case silent:
				return causeSilent, heard
			case code >= 0:
				return fmt.Sprint(int(code)), heard
			default:
				return causeLost, heard
			}
		}
		heard = true
		if typ != websocket.MessageText {
			cancel()
			continue
		}
		n, _ := io.ReadFull(r, head)
		if bytes.Equal(head[:n], betsPrefix) {
			// Others' bets: the bulk of the stream; read, not decoded.
			_, _ = io.Copy(io.Discard, r)
			cancel()
			p.lg.bytesIn.Add(int64(n))
			continue
		}
		rest, err := io.ReadAll(r)
		cancel()
		if err != nil {
			continue
		}
		msg := append(head[:n:n], rest...)
		var ev streamEvent
		if json.Unmarshal(msg, &ev) != nil {
			continue
		}
		p.event(ctx, ev)
	}
}

func (p *player) event(ctx context.Context, ev streamEvent) {
	switch ev.Type {
	case "round.betting":
		if !p.lg.admitRound(ev.RoundID) {
			return
		}
		p.mu.Lock()
		again := p.roundID == ev.RoundID // a reopened stream's resync
		if !again {
			p.roundID, p.bets = ev.RoundID, nil
		}
		p.mu.Unlock()
		if !again {
			go p.placeBets(ctx, ev.RoundID, time.UnixMilli(ev.BettingEndsAt))
		}
	case "round.flying":
		p.lg.roundFlying(ev.RoundID)
		p.scheduleCashouts(ctx, ev.RoundID, time.UnixMilli(ev.StartedAt))
	case "round.crashed":
		p.mu.Lock()
		for _, t := range p.timers {
			t.Stop()
		}
		p.timers = nil
		p.mu.Unlock()
		p.lg.roundCrashed(ev.RoundID)
	case "bet":
		if ev.Bet != nil && ev.Bet.Status == "cashed_out" {
			p.lg.autoSeen(ev.Bet.BetID)
		}
	}
}

// placeBets places the player's bets of the round at a random moment of the
// first --spread of the betting phase, one after the other.
func (p *player) placeBets(ctx context.Context, roundID string, endsAt time.Time) {
	o := p.lg.o
	spread := min(o.betSpread, time.Until(endsAt)-300*time.Millisecond)
	if spread > 0 {
		time.Sleep(rand.N(spread))
	}
	for k := range o.betsPer {
		b := &liveBet{amount: 100 + 100*rand.Int64N(10)}
		req := map[string]any{"amount": b.amount}
		if k == 0 && len(p.freebets) > 0 {
			b.amount, b.free = freebetValue, true
			req["amount"], req["freebet_id"] = freebetValue, p.freebets[0]
		}
		if rand.Float64() < o.autoRatio {
			b.auto = 110 + rand.Int64N(190)
			req["auto_cashout"] = b.auto
		} else {
			b.target = 105 + rand.Int64N(195)
		}
		var ans struct {
			BetID string `json:"bet_id"`
		}
		sent := time.Now()
		status, code, d, err := p.apiCall(ctx, http.MethodPost, "/api/v1/bets", req, &ans)
		if err != nil {
			if ctx.Err() == nil {
				p.lg.rec.add(kindBet, 0, "error")
			}
			continue
		}
		p.lg.rec.add(kindBet, d, outcome(status, code))
		p.lg.judgeLateness(time.Now().Add(-d), endsAt, status, code)
		if status != http.StatusCreated {
			continue
		}
		b.id = ans.BetID
		if b.free {
			p.freebets = p.freebets[1:]
		}
		p.lg.accepted(roundID, b, sent)
		p.mu.Lock()
		if p.roundID == roundID {
			p.bets = append(p.bets, b)
		}
		p.mu.Unlock()
	}
}

// scheduleCashouts arms a timer per manual bet at the moment its target is
// reached after the take-off.
func (p *player) scheduleCashouts(ctx context.Context, roundID string, startedAt time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.roundID != roundID || p.flying == roundID {
		return // not played, or scheduled already (a reopened stream's resync)
	}
	p.flying = roundID
	for _, b := range p.bets {
		if b.auto != 0 {
			continue
		}
		at := startedAt.Add(round.TimeToReach(b.target))
		p.timers = append(p.timers, time.AfterFunc(time.Until(at), func() { p.cashout(ctx, b) }))
	}
}

func (p *player) cashout(ctx context.Context, b *liveBet) {
	var ans struct {
		Payout int64 `json:"payout"`
	}
	status, code, d, err := p.apiCall(ctx, http.MethodPost, "/api/v1/bets/"+b.id+"/cashout", nil, &ans)
	if err != nil {
		if ctx.Err() == nil && !errors.Is(err, context.Canceled) {
			p.lg.rec.add(kindCashout, 0, "error")
		}
		return
	}
	p.lg.rec.add(kindCashout, d, outcome(status, code))
	if status == http.StatusOK {
		p.lg.paid(b.id, ans.Payout)
	}
}

// outcome names an answer of the player API in the load report: its HTTP
// status, and its error code when it has one ("409 ROUND_CRASHED").
func outcome(status int, code string) string {
	if code == "" {
		return fmt.Sprint(status)
	}
	return fmt.Sprint(status) + " " + code
}
