package table

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	"golang.org/x/time/rate"

	"github.com/crashstudio/crashgame/gen/table"
	"github.com/crashstudio/crashgame/internal/engine"
	"github.com/crashstudio/crashgame/internal/server"
	"github.com/crashstudio/crashgame/internal/sessions"
)

// Close codes of the stream (api/table.v1.yaml, GET /api/v1/stream).
const (
	CloseTooSlow       websocket.StatusCode = 4000 // the send buffer filled
	CloseNoHello       websocket.StatusCode = 4001 // no hello within 5 s, or the first message was not one
	CloseSession       websocket.StatusCode = 4401 // unknown or expired session
	CloseInactive      websocket.StatusCode = 4408 // the session ended after its inactivity timeout
	CloseReplaced      websocket.StatusCode = 4409 // the session opened a newer stream
	CloseRateLimited   websocket.StatusCode = 4429 // too many messages
	maxClientMessage                        = 1024 // bytes; larger closes with 1009
	streamWriteWait                         = 5 * time.Second
	streamKeepAlive                         = 30 * time.Second
	clientMessageRate                       = 5 // messages per second a client may send
	clientMessageBurst                      = 20
)

// DefaultHeartbeat is the longest a stream goes without a message: the
// server sends a `ping` (its heartbeat; api/table-stream.asyncapi.yaml)
// when nothing else was written for half of it. A client that hears nothing
// for 2.5 heartbeats has lost its server, and reopens its stream (the page
// does, through the load balancer). A WebSocket ping
// frame would not do: a browser answers it but never shows it to the page.
const DefaultHeartbeat = 2 * time.Second

// stream is one open WebSocket of one session.
type stream struct {
	conn *websocket.Conn
	sock *corkedConn // conn's socket: the forward loop's messages leave in batches
	hash string
	out  chan []byte // messages besides the table's events and balances: pongs, errors
	// io is the context of reads and writes: never cancelled, since
	// coder/websocket drops a connection whose Read or Write context ends,
	// which would lose the close code. The close handshake ends the I/O.
	io        context.Context
	done      chan struct{} // closed by close
	closeOnce sync.Once
}

// close ends the stream with code, once; the handshake runs in the background.
func (st *stream) close(code websocket.StatusCode, reason string) {
	st.closeOnce.Do(func() {
		close(st.done)
		go func() { _ = st.conn.Close(code, reason) }()
	})
}

// send queues a message; a stream whose queue is full is too slow.
func (st *stream) send(msg []byte) {
	select {
	case st.out <- msg:
	default:
		st.close(CloseTooSlow, "too slow")
	}
}

func originOf(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Scheme == "" || u.Host == "" {
		return ""
	}
	return strings.ToLower(u.Scheme + "://" + u.Host)
}

// openStream checks the Origin and upgrades, then serves the stream.
func (s *Server) openStream(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if !s.origins[originOf(r.Header.Get("Origin"))] {
		s.writeError(w, ctx, http.StatusForbidden, table.ErrorCodeOriginNotAllowed, nil)
		return
	}
	if !strings.EqualFold(r.Header.Get("Upgrade"), "websocket") ||
		!strings.Contains(strings.ToLower(r.Header.Get("Connection")), "upgrade") {
		s.writeError(w, ctx, http.StatusBadRequest, table.ErrorCodeBadRequest, nil)
		return
	}
	if err := s.cfg.CutOff(); err != nil {
		// A stream opened here would be closed by the drain (Leave): the
		// page opens it again at once, through the balancer, elsewhere.
		s.log.DebugContext(ctx, "stream refused: this replica is cut off from the cluster", "request_id", server.RequestID(ctx), "err", err)
		s.writeError(w, ctx, http.StatusServiceUnavailable, table.ErrorCodeTableUnavailable, nil)
		return
	}
	// The Origin is checked above, against base_url and the configured extras.
	sock := &corkedConn{writes: &s.streamWrites}
	c, err := websocket.Accept(corkingWriter{ResponseWriter: w, conn: sock}, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		s.log.DebugContext(ctx, "stream upgrade failed", "request_id", server.RequestID(ctx), "err", err)
		return
	}
	c.SetReadLimit(maxClientMessage)
	// I/O must not use a context that is cancelled before the close handshake:
	// coder/websocket drops the connection when a Read or Write context ends.
	st := &stream{conn: c, sock: sock, out: make(chan []byte, 32), io: context.WithoutCancel(ctx), done: make(chan struct{})}
	// The stream runs on a goroutine of its own, and the handler returns:
	// net/http's goroutine for the connection then ends, and with it its
	// request, its 4 KiB read and write buffers and its stack, which a
	// handler that served the stream itself would hold for the stream's life.
	go func() {
		defer st.close(websocket.StatusNormalClosure, "")
		// Out of the handler, the server's recovery no longer covers it: a
		// panic ends this stream (1011), never the process.
		defer func() {
			if v := recover(); v != nil {
				s.log.Error("stream: panic", "request_id", server.RequestID(st.io), "panic", v, "stack", string(debug.Stack()))
				st.close(websocket.StatusInternalError, "")
			}
		}()
		s.serveStream(st)
	}()
}

// serveStream waits for the hello, then forwards events until the end.
func (s *Server) serveStream(st *stream) {
	msgs := make(chan clientMessage, 4)
	go s.readStream(st, msgs)
	hello, ok := s.awaitHello(st, msgs)
	if !ok {
		return
	}
	sess, t, ok := s.streamSession(st, hello.Session)
	if !ok {
		return
	}
	st.hash = string(sess.Hash)
	if !s.register(st) {
		st.close(websocket.StatusGoingAway, "shutting down")
		return
	}
	defer s.unregister(st)

	sub := t.Subscribe(sess.Hash, s.cfg.StreamBuffer)
	defer sub.Close()
	// The session's balance changes, from its sessions service; watched
	// before resync writes the balance, so that none is missed between.
	shown := s.sessions.Watch(sess.Hash)
	defer shown.Stop()
	s.resync(st, sess, sub)
	s.forward(st, sess, hello.Session, sub, shown, msgs)
}

// awaitHello waits for the client's hello, the first message, for at most
// HelloTimeout; otherwise it closes the stream with 4001 (false).
func (s *Server) awaitHello(st *stream, msgs <-chan clientMessage) (table.HelloMessage, bool) {
	timer := time.NewTimer(s.cfg.HelloTimeout)
	defer timer.Stop()
	var first clientMessage
	select {
	case first = <-msgs:
	case <-timer.C:
		st.close(CloseNoHello, "no hello")
		return table.HelloMessage{}, false
	case <-st.done:
		return table.HelloMessage{}, false
	}
	var hello table.HelloMessage
	if first.binary || json.Unmarshal(first.data, &hello) != nil || hello.Type != "hello" {
		st.close(CloseNoHello, "hello expected first")
		return table.HelloMessage{}, false
	}
	return hello, true
}

// streamSession reads the hello's session and its game's table; a session
// that ended closes the stream with its code, after an error event (false).
func (s *Server) streamSession(st *stream, id string) (sessions.Session, Game, bool) {
	sess, err := s.sessions.Get(st.io, id)
	if errors.Is(err, sessions.ErrSessionInactive) {
		s.closeInactive(st, sess)
		return sessions.Session{}, nil, false
	}
	if err != nil {
		if !errors.Is(err, sessions.ErrSessionExpired) {
			// The session may well be valid (its database did not answer):
			// the page reconnects after a back-off and keeps it, as an API
			// call answered SERVER_ERROR does; 4401 would end it for good.
			s.log.Error("stream: reading a session failed", "err", err)
			s.writeNow(st, errorEvent(s.msgs.text(s.defLang, table.ErrorCodeServerError), table.ErrorCodeServerError))
			st.close(websocket.StatusInternalError, "the session could not be read")
			return sessions.Session{}, nil, false
		}
		s.writeNow(st, errorEvent(s.msgs.text(s.defLang, table.ErrorCodeSessionExpired), table.ErrorCodeSessionExpired))
		st.close(CloseSession, "session expired")
		return sessions.Session{}, nil, false
	}
	t, ok := s.tables(sess.GameID)
	if !ok {
		s.log.Error("stream: no running table for the session's game", "game_id", sess.GameID)
		st.close(websocket.StatusInternalError, "")
		return sessions.Session{}, nil, false
	}
	return sess, t, true
}

// forward writes the table's events, the session's balance changes, the
// heartbeat and the answers to the client's messages until the stream ends:
// a write fails, the subscription ends, the session goes idle, or the client
// leaves.
func (s *Server) forward(st *stream, sess sessions.Session, id string, sub *engine.Subscription, shown *sessions.Watch, msgs <-chan clientMessage) {
	keepAlive := time.NewTicker(streamKeepAlive)
	defer keepAlive.Stop()
	// The heartbeat fills silences only: a tick every half heartbeat finds
	// whether the loop wrote since the last one (quiet is false) and, the
	// second time it finds nothing written, writes a `ping`. So no stream
	// goes a whole heartbeat without a message, and a stream that gets the
	// table's events gets no ping besides them.
	heartbeat := time.NewTicker(s.cfg.Heartbeat / 2)
	defer heartbeat.Stop()
	quiet := false
	var board boardPacer
	defer board.stop()
	// The inactivity timeout closes the stream. The player's actions reach the
	// session through the API, so the deadline is read again when it passes.
	var (
		idle    <-chan time.Time
		recheck func() bool
	)
	if at := sess.IdleAt(); !at.IsZero() {
		idleTimer := time.NewTimer(at.Sub(s.sessions.Now()))
		defer idleTimer.Stop()
		idle = idleTimer.C
		recheck = func() bool { return s.recheckIdle(st, id, idleTimer) }
	}
	// What is due now leaves in one write: the loop corks the socket when it
	// takes something and flushes once nothing more is waiting (or corkLimit
	// is held), before it blocks.
	defer s.flush(st)
	for {
		if len(sub.C) == 0 && len(shown.C) == 0 && len(st.out) == 0 && len(msgs) == 0 && !s.flush(st) {
			return
		}
		select {
		case <-idle:
			if !recheck() {
				return
			}
		case ev, ok := <-sub.C:
			if !ok {
				if sub.Dropped() {
					st.close(CloseTooSlow, "too slow")
				} else {
					st.close(websocket.StatusGoingAway, "")
				}
				return
			}
			if ev.Type == engine.EventBets {
				// Each board replaces the last: held until this stream's
				// turn, then only the latest is written.
				if !board.take(ev, s.boardEvery()) {
					continue
				}
			} else if strings.HasPrefix(ev.Type, "round.") {
				board.newRound(ev.Round.RoundID)
			}
			// Encoded once for every stream that receives the same event.
			if msg := ev.Encoded(s.event); msg != nil {
				if !s.writeBatched(st, msg) {
					return
				}
				quiet = false
			}
		case <-board.due():
			if ev := board.release(); ev != nil {
				if !s.writeBatched(st, ev.Encoded(s.event)) {
					return
				}
				quiet = false
			}
		case b := <-shown.C:
			if !s.writeBatched(st, marshal(table.BalanceEvent{Type: "balance", Balance: b.Balance, Currency: b.Currency})) {
				return
			}
			quiet = false
		case msg := <-st.out:
			if !s.writeBatched(st, msg) {
				return
			}
			quiet = false
		case m := <-msgs:
			s.clientMessage(st, sess, m)
		case <-heartbeat.C:
			if !quiet {
				quiet = true // something was written in the last half heartbeat
				continue
			}
			// Written in this batch, not queued behind st.out: a stream
			// too slow for its heartbeat is too slow (flush closes it
			// with 4000).
			if !s.writeBatched(st, marshal(table.PingMessage{Type: "ping", T: s.now().UnixMilli()})) {
				return
			}
			quiet = false
		case <-keepAlive.C:
			go func() {
				ctx, cancel := context.WithTimeout(st.io, streamWriteWait)
				defer cancel()
				if err := st.conn.Ping(ctx); err != nil {
					st.close(websocket.StatusGoingAway, "no pong")
				}
			}()
		case <-st.done:
			return
		}
	}
}

// boardPacer holds the round's board for one stream between its turns: a
// board that comes sooner than every after the last one written waits, and
// a newer board replaces it, so the stream writes the latest board at most
// once per interval whatever the table's rate.
type boardPacer struct {
	written time.Time     // when the last board was written
	held    *engine.Event // the latest board not written yet
	timer   *time.Timer
	c       <-chan time.Time // the held board's turn; nil while none is held
}

// take says whether ev, a board, is to be written now; if not, it is held
// (replacing any held one) until its turn, at least every after the last.
func (b *boardPacer) take(ev *engine.Event, every time.Duration) bool {
	if b.held != nil {
		b.held = ev // its turn is already set
		return false
	}
	wait := every - time.Since(b.written)
	if wait <= 0 {
		b.written = time.Now()
		return true
	}
	b.held = ev
	if b.timer == nil {
		b.timer = time.NewTimer(wait)
	} else {
		b.timer.Reset(wait)
	}
	b.c = b.timer.C
	return false
}

// due is ready when the held board's turn comes.
func (b *boardPacer) due() <-chan time.Time { return b.c }

// release returns the held board at its turn and marks it written.
func (b *boardPacer) release() *engine.Event {
	ev := b.held
	b.held, b.c = nil, nil
	if ev != nil {
		b.written = time.Now()
	}
	return ev
}

// newRound drops a held board of another round than roundID: the client
// starts the new round's board empty.
func (b *boardPacer) newRound(roundID string) {
	if b.held != nil && b.held.Round.RoundID != roundID {
		b.held, b.c = nil, nil
		b.timer.Stop()
	}
}

func (b *boardPacer) stop() {
	if b.timer != nil {
		b.timer.Stop()
	}
}

// recheckIdle reads the session again once its idle deadline passed: an
// inactive session's stream closes with 4408 and an expired one's with 4401
// (false), an active one's timer is set to its new deadline (true). A read
// that failed (the database did not answer) says nothing of the session:
// the stream stays and the read is tried again liveBetRecheck later.
func (s *Server) recheckIdle(st *stream, id string, timer *time.Timer) bool {
	cur, err := s.sessions.Get(st.io, id)
	switch {
	case errors.Is(err, sessions.ErrSessionInactive):
		s.closeInactive(st, cur)
		return false
	case errors.Is(err, sessions.ErrSessionExpired):
		s.writeNow(st, errorEvent(s.msgs.text(s.defLang, table.ErrorCodeSessionExpired), table.ErrorCodeSessionExpired))
		st.close(CloseSession, "session expired")
		return false
	case err != nil:
		s.log.Warn("stream: reading a session again at its idle deadline failed; trying again", "err", err, "retry", liveBetRecheck.String())
		timer.Reset(liveBetRecheck)
		return true
	}
	wait := cur.IdleAt().Sub(s.sessions.Now())
	if wait <= 0 {
		wait = liveBetRecheck // held alive by a bet in play
	}
	timer.Reset(wait)
	return true
}

// closeInactive tells the player their session ended after inactivity, in
// their language, and closes the stream with 4408.
func (s *Server) closeInactive(st *stream, sess sessions.Session) {
	lang := sess.Language
	if lang == "" {
		lang = s.defLang
	}
	s.writeNow(st, errorEvent(s.msgs.text(lang, table.ErrorCodeSessionInactive), table.ErrorCodeSessionInactive))
	st.close(CloseInactive, "session inactive")
}

// liveBetRecheck is how soon the stream of an idle session held alive by a bet
// in play looks at it again.
const liveBetRecheck = 5 * time.Second

// resync sends what a new or reconnecting client starts from: its balance, the
// current phase and the round's board (queued first by Subscribe), and its
// own bets in the round.
func (s *Server) resync(st *stream, sess sessions.Session, sub *engine.Subscription) {
	bal := s.sessions.Balance(sess.Hash).Balance
	s.writeBatched(st, marshal(table.BalanceEvent{Type: "balance", Balance: max(bal, 0), Currency: sess.Currency}))
	var roundID string
	for range 2 {
		select {
		case ev, ok := <-sub.C:
			if !ok {
				return
			}
			if strings.HasPrefix(ev.Type, "round.") {
				roundID = ev.Round.RoundID
			}
			s.writeBatched(st, ev.Encoded(s.event))
		default:
		}
	}
	if roundID == "" {
		return
	}
	own, err := s.records.Bets(st.io, engine.BetFilter{SessionHash: sess.Hash, RoundIDs: []string{roundID}})
	if err != nil {
		s.log.Warn("stream: reading the session's bets failed", "err", err)
		return
	}
	for _, r := range own {
		s.writeBatched(st, marshal(table.BetEvent{Type: "bet", Bet: betOf(engine.ViewOf(r))}))
	}
}

// clientMessage handles what the client sent after its hello.
func (s *Server) clientMessage(st *stream, sess sessions.Session, m clientMessage) {
	if m.binary {
		st.close(websocket.StatusUnsupportedData, "text frames only")
		return
	}
	var head struct {
		Type string `json:"type"`
		T    *int64 `json:"t"`
	}
	if json.Unmarshal(m.data, &head) != nil {
		st.send(errorEvent(s.msgs.text(sess.Language, table.ErrorCodeBadRequest), table.ErrorCodeBadRequest))
		return
	}
	switch head.Type {
	case "ping":
		if head.T == nil || *head.T < 0 {
			st.send(errorEvent(s.msgs.text(sess.Language, table.ErrorCodeBadRequest), table.ErrorCodeBadRequest))
			return
		}
		now := s.now().UnixMilli()
		st.send(marshal(table.PongMessage{Type: "pong", T: *head.T, ServerTime: &now}))
	case "pong", "hello":
	default:
		st.send(errorEvent(s.msgs.text(sess.Language, table.ErrorCodeBadRequest), table.ErrorCodeBadRequest))
	}
}

type clientMessage struct {
	binary bool
	data   []byte
}

// readStream reads the client's messages, rate-limited, until the connection
// ends; it ends the stream when reading fails.
func (s *Server) readStream(st *stream, out chan<- clientMessage) {
	lim := rate.NewLimiter(clientMessageRate, clientMessageBurst)
	for {
		typ, data, err := st.conn.Read(st.io)
		if err != nil {
			// Closed by either side, too big (1009, sent by the library), or gone.
			st.close(websocket.StatusNormalClosure, "")
			return
		}
		if !lim.Allow() {
			s.writeNow(st, errorEvent(s.msgs.text(s.defLang, table.ErrorCodeRateLimited), table.ErrorCodeRateLimited))
			st.close(CloseRateLimited, "too many messages")
			return
		}
		select {
		case out <- clientMessage{binary: typ == websocket.MessageBinary, data: data}:
		case <-st.done:
			return
		}
	}
}

// writeBatched writes one message in the stream's current batch: the socket
// is corked, and the message leaves with the others due at the same moment
// when the forward loop flushes. Only the goroutine that serves the stream
// (resync, then forward) batches, since only it flushes.
func (s *Server) writeBatched(st *stream, msg []byte) bool {
	st.sock.cork()
	// No deadline: the library only copies the frame into the held batch,
	// and flush bounds the network write. A context with one would cost a
	// timer per message.
	return s.write(st.io, st, msg)
}

// flush writes the stream's batch in one write; a write that does not finish
// in time ends the stream as too slow.
func (s *Server) flush(st *stream) bool {
	if _, err := st.sock.flush(streamWriteWait); err != nil {
		st.close(CloseTooSlow, "too slow")
		return false
	}
	return true
}

// writeNow writes one message at once, unless the forward loop holds the
// socket corked (then with its batch); a write that does not finish in time
// ends the stream as too slow.
func (s *Server) writeNow(st *stream, msg []byte) bool {
	ctx, cancel := context.WithTimeout(st.io, streamWriteWait)
	defer cancel()
	return s.write(ctx, st, msg)
}

// write writes msg with ctx's deadline, and flushes a batch that reached
// corkLimit; a write that fails ends the stream as too slow.
func (s *Server) write(ctx context.Context, st *stream, msg []byte) bool {
	if msg == nil {
		return true
	}
	select {
	case <-st.done:
		return false
	default:
	}
	if err := st.conn.Write(ctx, websocket.MessageText, msg); err != nil {
		st.close(CloseTooSlow, "too slow")
		return false
	}
	s.streamMessages.Add(1)
	if st.sock.heldBytes() >= corkLimit {
		return s.flush(st)
	}
	return true
}

// register makes st the session's only stream, replacing an older one.
func (s *Server) register(st *stream) bool {
	s.streamMu.Lock()
	defer s.streamMu.Unlock()
	if s.closing {
		return false
	}
	if old := s.streams[st.hash]; old != nil {
		old.close(CloseReplaced, "replaced")
	}
	s.streams[st.hash] = st
	s.open.Store(int64(len(s.streams)))
	return true
}

func (s *Server) unregister(st *stream) {
	s.streamMu.Lock()
	defer s.streamMu.Unlock()
	if s.streams[st.hash] == st {
		delete(s.streams, st.hash)
	}
	s.open.Store(int64(len(s.streams)))
}

// boardEvery is how often one stream gets the round's board at most: the
// process writes at most BoardFrames board frames a second to all its
// streams, so the more streams, the rarer each one's board.
func (s *Server) boardEvery() time.Duration {
	return time.Duration(s.open.Load()) * time.Second / time.Duration(s.cfg.BoardFrames)
}

// Close closes every stream with 1001 (the server is shutting down) and
// refuses new ones. Call it before http.Server.Shutdown, which does not
// close upgraded connections.
func (s *Server) Close() {
	s.streamMu.Lock()
	s.closing = true
	all := make([]*stream, 0, len(s.streams))
	for _, st := range s.streams {
		all = append(all, st)
	}
	s.streamMu.Unlock()
	for _, st := range all {
		st.close(websocket.StatusGoingAway, "shutting down")
	}
}

// Leave closes every open stream with 1001, as Close does: the players of a
// replica cut off from the cluster (replica.Health) reconnect through the
// load balancer, which its failing /readyz has turned to another replica;
// their pages reopen at once. New streams are refused meanwhile
// (Config.CutOff), and accepted again once the replica is back. It returns
// how many streams it closed.
func (s *Server) Leave() int {
	s.streamMu.Lock()
	all := make([]*stream, 0, len(s.streams))
	for _, st := range s.streams {
		all = append(all, st)
	}
	s.streamMu.Unlock()
	for _, st := range all {
		st.close(websocket.StatusGoingAway, "cut off from the cluster")
	}
	return len(all)
}

// event translates an engine event into the document's StreamEvent. Shared
// events carry the server time of their encoding.
func (s *Server) event(ev *engine.Event) []byte {
	now := s.now().UnixMilli()
	v := ev.Round
	switch ev.Type {
	case engine.EventRoundBetting:
		return marshal(table.RoundBettingEvent{Type: "round.betting", RoundId: v.RoundID, BettingEndsAt: millis(v.BettingEndsAt), ServerTime: now})
	case engine.EventRoundFlying:
		return marshal(table.RoundFlyingEvent{Type: "round.flying", RoundId: v.RoundID, StartedAt: millis(v.StartedAt), ServerTime: now})
	case engine.EventRoundCrashed:
		if v.Hash == "" {
			return nil // a voided round reveals nothing here
		}
		return marshal(table.RoundCrashedEvent{Type: "round.crashed", RoundId: v.RoundID, CrashPoint: max(v.CrashPoint, 100),
			Hash: v.Hash, CrashedAt: millis(v.CrashedAt), ServerTime: &now})
	case engine.EventBets:
		out := table.BetsEvent{Type: "bets", RoundId: v.RoundID, Count: int32Of(ev.Count), CashedOut: int32Of(ev.CashedOut),
			Items: make([]table.BetsItem, 0, len(ev.Items))}
		for _, it := range ev.Items {
			out.Items = append(out.Items, betsItemOf(it))
		}
		return marshal(out)
	case engine.EventBet:
		if ev.Bet == nil {
			return nil
		}
		return marshal(table.BetEvent{Type: "bet", Bet: betOf(*ev.Bet)})
	}
	return nil
}

func betsItemOf(it engine.BetItem) table.BetsItem {
	name := it.Name
	if name == "" {
		name = "***"
	}
	out := table.BetsItem{BetId: it.BetID, Name: name, Currency: it.Currency, Amount: it.Amount}
	if it.Multiplier != 0 {
		m, p := max(it.Multiplier, 100), max(it.Payout, 0)
		out.Multiplier, out.Payout = &m, &p
	}
	return out
}

func errorEvent(message string, code table.ErrorCode) []byte {
	return marshal(table.ErrorEvent{Type: "error", ErrorCode: code, Message: message})
}

func marshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}
