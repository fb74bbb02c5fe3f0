// The table page: opens the session from the launch URL, keeps it for a
// reload in the same tab, draws the round from the live stream and places,
// cancels and cashes out bets through the player API (api/table.v1.yaml).
// Every visible string comes from the dictionary (i18n.js); money is integer
// cents (money.js).

import * as i18n from './i18n.js';
import { t, setText } from './i18n.js';
import * as money from './money.js';
import { multiplierAt, draw } from './curve.js';
import { renderReplay } from './replay.js';
import { verdict } from './verdict.js';

const SESSION_KEY = 'crashgame.session';
const MAX_PANELS = 5;
// The server's heartbeat: never 2 s without a message on the stream (a `ping`
// fills a silence; api/table-stream.asyncapi.yaml). A stream that brings nothing at all for
// two and a half heartbeats has lost its server, even if it looks open (a
// paused or cut-off replica): the page drops it and opens another.
const HEARTBEAT_MS = 2000;
const SILENCE_MS = HEARTBEAT_MS * 2.5;

const $ = (id) => document.getElementById(id);

const state = {
  token: null, // the session id: the Bearer; kept in sessionStorage, never in a URL
  session: null,
  offset: 0, // server clock minus local clock, ms
  bestRtt: Infinity,
  latency: null,
  round: null,
  live: { round_id: '', items: [], count: 0, cashed_out: 0 }, // the round's board
  rounds: [],
  myBets: [], // the last read of the player's bets (GET /api/v1/bets)
  panels: [],
  fairness: null,
  ws: null,
  backoff: 1000,
  pingTimer: null,
  heard: 0, // when the stream last brought anything (Date.now())
  opened: false, // a stream was open before: the next one is a reconnection
  stopped: false,
};

// ---- API ----

class APIError extends Error {
  constructor(status, body) {
    super(body && body.error_code ? body.error_code : 'HTTP ' + status);
    this.status = status;
    this.body = body;
  }
}

async function api(method, path, body) {
  const headers = { Accept: 'application/json' };
  if (state.token) headers.Authorization = 'Bearer ' + state.token;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let res;
  try {
    res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), cache: 'no-store', credentials: 'omit' });
  } catch {
    throw new APIError(0, null);
  }
  let data = null;
  try { data = await res.json(); } catch { data = null; }
  if (!res.ok) {
    if (data && data.error_code === 'SESSION_INACTIVE') inactive(data.message);
    throw new APIError(res.status, data);
  }
  return data;
}

// message is the player's text for a failure: the server's, already in the
// session language, or the dictionary's.
function message(err) {
  if (err && err.body && err.body.message) return err.body.message;
  if (err && err.status === 0) return t('error.network');
  return t('error.SERVER_ERROR');
}

// retryNetwork runs call again when its answer never came (a network
// failure, status 0: the device's network changed, a balancer restarted),
// three more times, 0.5, 1 and 2 s apart. It is for the start's calls, which
// move no money: a ticket whose first exchange did reach the server is
// refused the second time, and the server says so.
async function retryNetwork(call) {
  for (let attempt = 0; ; attempt++) {
    try {
      return await call();
    } catch (err) {
      if (err.status !== 0 || attempt >= 3) throw err;
      await new Promise((resolve) => setTimeout(resolve, 500 * 2 ** attempt));
    }
  }
}

// ---- formatting ----

const cur = () => state.session.currency;
const fmt = (cents, currency) => money.format(cents, currency || cur(), i18n.language());
const serverNow = () => Date.now() + state.offset;

// ---- start ----

async function boot() {
  const params = new URLSearchParams(location.search);
  const sid = params.get('sid');
  const lang = params.get('lang');
  await i18n.load(lang || (navigator.language || '').slice(0, 2), 'en');
  i18n.apply();
  let sess;
  try {
    if (sid) {
      const body = { sid };
      if (lang) body.language = lang;
      if (params.get('operator')) body.operator = params.get('operator');
      if (params.get('game_id')) body.game_id = params.get('game_id');
      try {
        sess = await retryNetwork(() => api('POST', '/api/v1/sessions', body));
      } finally {
        // The sid is a single-use credential: out of the address bar, the
        // history and any later referrer, whatever the answer was.
        params.delete('sid');
        const q = params.toString();
        history.replaceState(null, '', location.pathname + (q ? '?' + q : '') + location.hash);
      }
    } else {
      state.token = sessionStorage.getItem(SESSION_KEY);
      if (!state.token) throw new APIError(401, { message: t('error.SESSION_EXPIRED') });
      sess = await retryNetwork(() => api('GET', '/api/v1/session'));
    }
  } catch (err) {
    if (err.status === 401) sessionStorage.removeItem(SESSION_KEY);
    fatal(message(err));
    return;
  }
  state.session = sess;
  state.token = sess.session;
  sessionStorage.setItem(SESSION_KEY, sess.session);
  await i18n.load(sess.language, 'en');
  i18n.apply();
  applyTheme(sess.theme);

  $('loading').hidden = true;
  $('app').hidden = false;
  $('demo-badge').hidden = !sess.demo;
  renderBalance();
  renderLimits();
  setupControls();
  wireControls();
  addPanel();
  addPanel();

  try {
    const r = await api('GET', '/api/v1/round');
    state.offset = r.server_time - Date.now();
    state.round = r;
  } catch (err) {
    notice(message(err));
  }
  refreshRounds();
  refreshMyBets();
  connect();
  setInterval(checkSilence, 500);
  requestAnimationFrame(frame);
}

function applyTheme(theme) {
  const name = String(theme || '').toLowerCase().replace(/[^a-z0-9-]/g, '').slice(0, 32);
  document.documentElement.dataset.theme = name || 'dark';
}

function fatal(text) {
  state.stopped = true;
  if (state.ws) state.ws.close();
  $('loading').hidden = true;
  $('app').hidden = true;
  $('fatal').hidden = false;
  $('fatal-message').textContent = text;
}

let noticeTimer = null;
function notice(text) {
  const el = $('notice');
  el.textContent = text;
  el.hidden = false;
  clearTimeout(noticeTimer);
  noticeTimer = setTimeout(() => { el.hidden = true; }, 6000);
}

// ---- balance and limits ----

function setBalance(cents) {
  state.session.balance = cents;
  renderBalance();
}

function renderBalance() {
  $('balance').textContent = fmt(state.session.balance);
}

function renderLimits() {
  const l = state.session.limits || {};
  const lo = l.min_bet !== undefined ? fmt(l.min_bet) : t('limits.unknown');
  const hi = l.max_bet !== undefined ? fmt(l.max_bet) : t('limits.unknown');
  setText($('limits-bets'), 'limits.range', { min: lo, max: hi });
  $('limits-maxwin').textContent = l.max_win !== undefined ? fmt(l.max_win) : t('limits.unknown');
}

// ---- the stream ----

function connect() {
  if (state.stopped) return;
  const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
  const ws = new WebSocket(`${proto}//${location.host}/api/v1/stream`);
  state.ws = ws;
  state.heard = Date.now(); // an opening that hangs counts as silence too
  ws.onopen = () => {
    // The session goes in the first message, never in the URL.
    ws.send(JSON.stringify({ type: 'hello', session: state.token }));
    state.heard = Date.now();
    state.backoff = 1000;
    $('connection').hidden = true;
    ping();
    clearInterval(state.pingTimer);
    state.pingTimer = setInterval(ping, 3000);
    // A reconnection: the server resends the round and this session's bets
    // in it after the hello; the lists are read again for what ended while
    // no stream was open (a bet whose answer was lost included).
    if (state.opened) { refreshRounds(); refreshMyBets(); }
    state.opened = true;
  };
  ws.onmessage = (m) => {
    if (state.ws === ws) state.heard = Date.now();
    let ev;
    try { ev = JSON.parse(m.data); } catch { return; }
    handle(ev);
  };
  ws.onclose = (ev) => {
    clearInterval(state.pingTimer);
    if (state.ws !== ws || state.stopped) return;
    if (ev.code === 4401) { sessionStorage.removeItem(SESSION_KEY); fatal(t('error.SESSION_EXPIRED')); return; }
    if (ev.code === 4408) { inactive(t('error.SESSION_INACTIVE')); return; }
    if (ev.code === 4409) { fatal(t('stream.replaced')); return; }
    // Reconnect and resynchronise (the server resends the state after hello).
    // A server going away on purpose (1001: a deploy, its players handed to
    // another replica through the load balancer) is left at once, spread over
    // 300 ms so that its thousands of pages do not arrive in one instant; any
    // other close backs off.
    reconnect(ev.code === 1001);
  };
}

// reconnect says "reconnecting" to the player and opens a new stream: at
// once, spread over 300 ms, when the server went away on purpose or fell
// silent (thousands of pages leave it together), else after a backoff.
function reconnect(soon) {
  $('connection').hidden = false;
  if (soon) {
    setTimeout(connect, Math.random() * 300);
    return;
  }
  setTimeout(connect, state.backoff);
  state.backoff = Math.min(state.backoff * 2, 10000);
}

// checkSilence drops a stream that brought nothing for SILENCE_MS, opening
// or open, and opens another through the load balancer. The dropped one's
// handlers are cleared first: its close, if it ever comes, changes nothing.
function checkSilence() {
  const ws = state.ws;
  if (!ws || state.stopped || ws.readyState > WebSocket.OPEN) return;
  if (Date.now() - state.heard <= SILENCE_MS) return;
  ws.onopen = ws.onmessage = ws.onclose = ws.onerror = null;
  clearInterval(state.pingTimer);
  state.ws = null;
  try { ws.close(); } catch { /* already closing */ }
  // A second silent stream in a row backs off like any failed connection.
  const soon = state.backoff === 1000;
  reconnect(soon);
  if (soon) state.backoff = 2000;
}

function ping() {
  if (state.ws && state.ws.readyState === WebSocket.OPEN) state.ws.send(JSON.stringify({ type: 'ping', t: Date.now() }));
}

function handle(ev) {
  switch (ev.type) {
    case 'balance':
      if (ev.currency === cur()) setBalance(ev.balance);
      break;
    case 'round.betting':
      if (state.live.round_id !== ev.round_id) state.live = { round_id: ev.round_id, items: [], count: 0, cashed_out: 0 };
      state.round = { round_id: ev.round_id, phase: 'betting', betting_ends_at: ev.betting_ends_at };
      hintOffset(ev.server_time);
      for (const p of state.panels) p.newRound(ev.round_id);
      renderLive();
      refreshMyBets();
      break;
    case 'round.flying':
      state.round = { ...(state.round || {}), round_id: ev.round_id, phase: 'flying', started_at: ev.started_at };
      hintOffset(ev.server_time);
      break;
    case 'round.crashed':
      state.round = { ...(state.round || {}), round_id: ev.round_id, phase: 'crashed', crash_point: ev.crash_point, crashed_at: ev.crashed_at, hash: ev.hash };
      if (!state.rounds.length || state.rounds[0].round_id !== ev.round_id) {
        state.rounds.unshift({ round_id: ev.round_id, status: 'finished', crash_point: ev.crash_point, hash: ev.hash, crashed_at: ev.crashed_at });
        state.rounds = state.rounds.slice(0, 30);
        renderStrip();
      }
      renderMyBets(); // the round's bets can be replayed now
      break;
    case 'bets':
      // Each board replaces the last; one of an older round comes too late.
      if (state.round && state.round.round_id !== ev.round_id) break;
      state.live = ev;
      renderLive();
      break;
    case 'bet':
      for (const p of state.panels) p.update(ev.bet);
      adoptBets([ev.bet]);
      refreshMyBetsSoon();
      refreshControlsSoon();
      break;
    case 'ping':
      if (state.ws) state.ws.send(JSON.stringify({ type: 'pong', t: ev.t }));
      break;
    case 'pong':
      pong(ev);
      break;
    case 'error':
      if (ev.error_code === 'SESSION_INACTIVE') { inactive(ev.message); break; }
      notice(ev.message);
      break;
  }
}

// hintOffset takes a server timestamp as an offset estimate until a pong
// brings a better one.
function hintOffset(serverTime) {
  if (serverTime && state.bestRtt === Infinity) state.offset = serverTime - Date.now();
}

function pong(ev) {
  const now = Date.now();
  const rtt = now - ev.t;
  if (rtt < 0) return;
  state.latency = rtt;
  // The estimate from the fastest exchange is the most accurate.
  if (ev.server_time && rtt <= state.bestRtt * 1.5) {
    state.bestRtt = Math.min(state.bestRtt, rtt);
    state.offset = ev.server_time - (ev.t + rtt / 2);
  }
  const el = $('latency');
  el.classList.remove('good', 'fair', 'poor');
  el.classList.add(rtt < 150 ? 'good' : rtt < 400 ? 'fair' : 'poor');
  setText($('latency-value'), 'latency.ms', { ms: rtt });
}

// ---- drawing ----

function frame() {
  if (state.stopped) return;
  const r = state.round;
  const canvas = $('curve');
  const mult = $('multiplier');
  const phase = $('phase');
  let m = 100;
  if (r && r.phase === 'flying' && r.started_at) {
    const elapsed = serverNow() - r.started_at;
    m = multiplierAt(elapsed);
    draw(canvas, elapsed, false);
    mult.className = 'multiplier flying';
    mult.textContent = money.multiplier(m);
    setText(phase, 'phase.flying');
  } else if (r && r.phase === 'crashed') {
    m = r.crash_point || 100;
    draw(canvas, r.started_at && r.crashed_at ? r.crashed_at - r.started_at : 0, true);
    mult.className = 'multiplier crashed';
    mult.textContent = money.multiplier(m);
    setText(phase, 'phase.crashed', { m: money.multiplier(m) });
  } else if (r) {
    const left = Math.max(0, (r.betting_ends_at || 0) - serverNow());
    draw(canvas, 0, false);
    mult.className = 'multiplier waiting';
    mult.textContent = (left / 1000).toFixed(1);
    setText(phase, 'phase.betting');
  }
  for (const p of state.panels) p.render(m);
  requestAnimationFrame(frame);
}

// ---- recent rounds, live bets, my bets ----

async function refreshRounds() {
  try {
    const list = await api('GET', '/api/v1/rounds?limit=30');
    state.rounds = list.items;
    renderStrip();
  } catch (err) {
    notice(message(err));
  }
}

function renderStrip() {
  const ol = $('strip');
  ol.replaceChildren();
  for (const r of state.rounds) {
    const li = document.createElement('li');
    const b = document.createElement('button');
    b.type = 'button';
    b.className = 'chip-round ' + (r.status === 'void' ? 'void' : r.crash_point < 200 ? 'low' : r.crash_point < 1000 ? 'mid' : 'high');
    b.textContent = money.multiplier(r.crash_point);
    b.title = t(r.status === 'void' ? 'rounds.verifyVoid' : 'rounds.verify');
    b.addEventListener('click', () => openFairness(r.round_id));
    li.append(b);
    ol.append(li);
  }
}

function cell(text, cls) {
  const s = document.createElement('span');
  s.textContent = text;
  if (cls) s.className = cls;
  return s;
}

function renderLive() {
  const rows = $('live-rows');
  rows.replaceChildren();
  const items = state.live.items;
  for (const it of items) {
    const row = document.createElement('div');
    row.className = 'row' + (it.multiplier ? ' won' : '');
    row.append(cell(it.name), cell(fmt(it.amount, it.currency)),
      cell(it.multiplier ? money.multiplier(it.multiplier) : ''), cell(it.payout !== undefined ? fmt(it.payout, it.currency) : ''));
    rows.append(row);
  }
  $('live-empty').hidden = items.length > 0;
  const counts = $('live-counts');
  counts.hidden = state.live.count === 0;
  setText(counts, 'bets.counts', { count: state.live.count, cashed: state.live.cashed_out });
}

let myTimer = null;
function refreshMyBetsSoon() {
  clearTimeout(myTimer);
  myTimer = setTimeout(refreshMyBets, 300);
}

async function refreshMyBets() {
  let list;
  try {
    list = await api('GET', '/api/v1/bets?limit=20');
  } catch {
    return;
  }
  state.myBets = list.items;
  adoptBets(list.items);
  renderMyBets();
}

// adoptBets gives a panel whose bet went unanswered (the connection or the
// load balancer failed: the bet may have been placed) the bet it placed: a
// live bet of the current round that no panel holds. The player sees it
// and can cash it out; a bet that was not placed never shows up, and the
// panel offers a bet again.
function adoptBets(bets) {
  const r = state.round;
  if (!r) return;
  for (const b of bets) {
    if (b.round_id !== r.round_id || (b.status !== 'accepted' && b.status !== 'pending')) continue;
    if (state.panels.some((p) => p.bet && p.bet.bet_id === b.bet_id)) continue;
    const p = state.panels.find((x) => x.unsure === r.round_id && !x.bet && !x.busy);
    if (!p) return;
    p.unsure = null;
    p.bet = b;
    p.note = '';
  }
}

const shortRound = (roundId) => String(roundId).replace(/^.*-/, '#');

// roundEnded tells whether a round has ended, as far as the stream says: any
// round but the one in play, and that one once crashed.
function roundEnded(roundId) {
  const r = state.round;
  return !(r && r.round_id === roundId && r.phase !== 'crashed');
}

function renderMyBets() {
  const rows = $('my-rows');
  rows.replaceChildren();
  for (const b of state.myBets) {
    const row = document.createElement('div');
    row.className = 'row ' + b.status;
    const paid = b.payout !== undefined ? fmt(b.payout) + (b.multiplier ? ' · ' + money.multiplier(b.multiplier) : '') : '';
    const amount = fmt(b.amount) + (b.freebet_id ? ' ' + t('bets.free') : '');
    row.append(cell(shortRound(b.round_id)), cell(amount), cell(t('status.' + b.status)), cell(paid));
    if (roundEnded(b.round_id)) {
      // The replay of the round (last-game recall).
      const btn = document.createElement('button');
      btn.type = 'button';
      btn.className = 'replay-open';
      btn.textContent = '▶';
      const label = t('replay.open', { round: shortRound(b.round_id) });
      btn.title = label;
      btn.setAttribute('aria-label', label);
      btn.addEventListener('click', () => openReplay(b.round_id));
      row.append(btn);
    }
    rows.append(row);
  }
  $('my-empty').hidden = state.myBets.length > 0;
}

async function refreshFreebets() {
  try {
    const s = await api('GET', '/api/v1/session');
    state.session.freebets = s.freebets;
    for (const p of state.panels) p.renderFreebets();
  } catch {
    // the list stays as it was
  }
}

// freebetValues groups the open grants by value: [{amount, count, id}], the
// id being the oldest grant of that value.
function freebetValues() {
  const byValue = new Map();
  for (const g of state.session.freebets || []) {
    const v = byValue.get(g.amount);
    if (v) v.count++;
    else byValue.set(g.amount, { amount: g.amount, count: 1, id: g.id });
  }
  return Array.from(byValue.values()).sort((a, b) => a.amount - b.amount);
}

// ---- bet panels ----

class Panel {
  constructor() {
    const frag = $('panel-template').content.cloneNode(true);
    this.el = frag.querySelector('.panel');
    i18n.apply(this.el);
    const l = state.session.limits || {};
    this.min = l.min_bet !== undefined ? BigInt(l.min_bet) : 1n;
    this.max = l.max_bet !== undefined ? BigInt(l.max_bet) : null;
    this.amount = this.min;
    this.bet = null;
    this.busy = false;
    this.note = '';
    this.unsure = null; // the round of a bet sent here whose answer was lost
    this.q = (sel) => this.el.querySelector(sel);
    this.q('.amount-input').value = money.plain(this.amount, cur());
    this.q('.amount-input').addEventListener('change', () => this.readAmount());
    this.q('.step.down').addEventListener('click', () => this.setAmount(this.amount - this.min));
    this.q('.step.up').addEventListener('click', () => this.setAmount(this.amount + this.min));
    for (const chip of this.el.querySelectorAll('.chip')) chip.addEventListener('click', () => this.chip(chip.dataset.chip));
    this.q('.freebet-select').addEventListener('change', () => this.chooseFreebet());
    this.el.addEventListener('submit', (e) => { e.preventDefault(); this.act(); });
    this.renderFreebets();
  }

  clamp(v) {
    if (v < this.min) v = this.min;
    if (this.max !== null && v > this.max) v = this.max;
    return v;
  }

  setAmount(v) {
    this.amount = this.clamp(v);
    this.q('.amount-input').value = money.plain(this.amount, cur());
  }

  readAmount() {
    const v = money.parse(this.q('.amount-input').value, cur());
    this.setAmount(v === null ? this.amount : v);
  }

  chip(kind) {
    if (kind === 'min') this.setAmount(this.min);
    if (kind === 'max') this.setAmount(this.max !== null ? this.max : this.amount * 10n);
    if (kind === 'half') this.setAmount(this.amount / 2n);
    if (kind === 'double') this.setAmount(this.amount * 2n);
  }

  renderFreebets() {
    const values = freebetValues();
    const label = this.q('.freebet');
    label.hidden = values.length === 0 || state.session.demo;
    const sel = this.q('.freebet-select');
    const chosen = sel.value;
    sel.replaceChildren();
    const none = document.createElement('option');
    none.value = '';
    none.textContent = t('panel.freebetNone');
    sel.append(none);
    for (const v of values) {
      const o = document.createElement('option');
      o.value = String(v.amount);
      o.textContent = t('panel.freebetOption', { value: fmt(v.amount), count: v.count });
      sel.append(o);
    }
    sel.value = values.some((v) => String(v.amount) === chosen) ? chosen : '';
    this.chooseFreebet();
  }

  chooseFreebet() {
    const v = this.q('.freebet-select').value;
    const locked = v !== '';
    for (const el of this.el.querySelectorAll('.amount button, .chips button')) el.disabled = locked;
    this.q('.amount-input').disabled = locked;
    if (locked) this.q('.amount-input').value = money.plain(BigInt(v), cur());
    else this.q('.amount-input').value = money.plain(this.amount, cur());
  }

  newRound(roundId) {
    if (this.bet && this.bet.round_id !== roundId && !this.busy) {
      this.bet = null;
    }
  }

  update(bet) {
    if (!this.bet || this.bet.bet_id !== bet.bet_id) return;
    this.bet = bet;
    if (bet.status === 'cashed_out') this.note = t('panel.won', { m: money.multiplier(bet.multiplier), amount: fmt(bet.payout) });
    else if (bet.status === 'lost') this.note = t('panel.lost');
    else if (bet.status === 'cancelled') { this.note = t('panel.cancelled'); this.bet = null; }
    else if (bet.status === 'refused' || bet.status === 'void') { this.note = t('status.' + bet.status); this.bet = null; }
  }

  async act() {
    if (this.busy) return;
    const r = state.round;
    if (!r) return;
    const b = this.bet;
    this.busy = true;
    try {
      if (!b && r.phase === 'betting') await this.place();
      else if (b && b.status === 'accepted' && r.phase === 'betting' && b.round_id === r.round_id) await this.cancel();
      else if (b && b.status === 'accepted' && r.phase === 'flying' && b.round_id === r.round_id) await this.cashout();
    } catch (err) {
      this.note = message(err);
      const code = err.body && err.body.error_code;
      // No answer, or the load balancer's (502, 503, 504: a replica failed
      // while holding the request): the action may have been carried out.
      // The stream's `bet` messages and My bets tell; a bet placed is
      // adopted by this panel (adoptBets).
      if (err.status === 0 || err.status === 502 || err.status === 503 || err.status === 504) {
        if (!b) this.unsure = r.round_id;
        refreshMyBets();
      }
      if (code === 'INSUFFICIENT_FUNDS' && err.body.balance !== undefined) setBalance(err.body.balance);
      if (code === 'INSUFFICIENT_FUNDS') offerDeposit();
      if (code === 'REALITY_CHECK_DUE') showRealityCheck();
    } finally {
      this.busy = false;
    }
  }

  async place() {
    const body = {};
    const fb = this.q('.freebet-select').value;
    if (fb !== '') {
      const v = freebetValues().find((x) => String(x.amount) === fb);
      if (!v) return;
      body.amount = v.amount;
      body.freebet_id = v.id;
    } else {
      this.readAmount();
      body.amount = Number(this.amount);
    }
    if (this.q('.auto-on').checked) {
      const target = money.parseMultiplier(this.q('.auto-input').value);
      if (target === null || target < 101) { this.note = t('panel.autoInvalid'); return; }
      body.auto_cashout = target;
    }
    this.note = '';
    const placed = await api('POST', '/api/v1/bets', body);
    this.bet = { bet_id: placed.bet_id, round_id: placed.round_id, amount: placed.amount, auto_cashout: placed.auto_cashout, freebet_id: placed.freebet_id, status: placed.status };
    setBalance(placed.balance);
    if (placed.freebet_id) refreshFreebets();
    refreshMyBetsSoon();
  }

  async cancel() {
    const res = await api('DELETE', '/api/v1/bets/' + encodeURIComponent(this.bet.bet_id));
    const fb = this.bet.freebet_id;
    this.bet = null;
    this.note = t('panel.cancelled');
    setBalance(res.balance);
    if (fb) refreshFreebets();
    refreshMyBetsSoon();
  }

  async cashout() {
    const res = await api('POST', '/api/v1/bets/' + encodeURIComponent(this.bet.bet_id) + '/cashout');
    this.bet = { ...this.bet, status: 'cashed_out', multiplier: res.multiplier, payout: res.payout };
    this.note = t('panel.won', { m: money.multiplier(res.multiplier), amount: fmt(res.payout) });
    setBalance(res.balance);
    refreshMyBetsSoon();
  }

  render(m) {
    const btn = this.q('.action');
    const r = state.round;
    const b = this.bet;
    let key = 'panel.wait';
    let vars;
    let cls = 'action';
    let enabled = false;
    if (this.busy) {
      key = 'panel.sending';
    } else if (r && b && b.round_id === r.round_id && b.status === 'accepted' && r.phase === 'betting') {
      key = 'panel.cancel'; cls += ' cancel'; enabled = true;
    } else if (r && b && b.round_id === r.round_id && b.status === 'accepted' && r.phase === 'flying') {
      const max = state.session.limits ? state.session.limits.max_win : undefined;
      key = 'panel.cashout'; cls += ' cashout'; enabled = true;
      vars = { amount: fmt(money.payout(b.amount, m, max)) };
    } else if (r && b && b.round_id === r.round_id && b.status === 'pending') {
      key = 'panel.sending';
    } else if (r && r.phase === 'betting' && (!b || b.round_id !== r.round_id)) {
      const fb = this.q('.freebet-select').value;
      key = fb !== '' ? 'panel.betFree' : 'panel.bet';
      vars = { amount: fmt(fb !== '' ? BigInt(fb) : this.amount) };
      cls += ' bet'; enabled = true;
    }
    const text = t(key, vars);
    if (btn.textContent !== text) btn.textContent = text;
    if (btn.className !== cls) btn.className = cls;
    btn.disabled = !enabled;
    const note = this.q('.panel-note');
    if (note.textContent !== this.note) note.textContent = this.note;
  }
}

function addPanel() {
  if (state.panels.length >= MAX_PANELS) return;
  const p = new Panel();
  state.panels.push(p);
  $('panels').append(p.el);
  renderPanelTools();
}

function removePanel() {
  if (state.panels.length <= 1) return;
  const p = state.panels[state.panels.length - 1];
  if (p.bet) { notice(t('panel.removeBusy')); return; }
  state.panels.pop();
  p.el.remove();
  renderPanelTools();
}

function renderPanelTools() {
  $('add-panel').disabled = state.panels.length >= MAX_PANELS;
  $('remove-panel').disabled = state.panels.length <= 1;
}

// ---- dialogs ----

function wireControls() {
  $('add-panel').addEventListener('click', addPanel);
  $('remove-panel').addEventListener('click', removePanel);
  $('open-help').addEventListener('click', openHelp);
  $('reality-continue').addEventListener('click', continueSession);
  $('open-fairness').addEventListener('click', () => openFairness(state.rounds.length ? state.rounds[0].round_id : ''));
  $('f-check').addEventListener('click', verify);
  $('replay-verify').addEventListener('click', () => { if (replay.roundId) verifyInto($('replay-result'), replay.roundId); });
  $('replay').addEventListener('close', closeReplay);
  $('latency').addEventListener('click', () => notice(t('latency.notice')));
  const tabs = [['tab-live', 'live-bets'], ['tab-mine', 'my-bets']];
  for (const [tab, panel] of tabs) {
    $(tab).addEventListener('click', () => {
      for (const [t2, p2] of tabs) {
        $(t2).setAttribute('aria-selected', String(t2 === tab));
        $(p2).hidden = p2 !== panel;
      }
    });
  }
}

// openHelp states the game's figures: RTP and maximum multiplier from the
// fairness inputs, the maximum win per bet from the session's limits.
async function openHelp() {
  $('help').showModal();
  const l = state.session.limits || {};
  setText($('help-maxwin-value'), 'help.maxWinValue', { amount: l.max_win !== undefined ? fmt(l.max_win) : t('limits.unknown') });
  if (!state.fairness) {
    try {
      state.fairness = await api('GET', '/api/v1/fairness');
    } catch {
      return;
    }
  }
  setText($('help-rtp'), 'help.rtp', { pct: (state.fairness.rtp_bp / 100).toFixed(2) });
  setText($('help-max'), 'help.maxMultiplier', { m: money.multiplier(state.fairness.max_multiplier) });
}

// ---- responsible gambling (api/table.v1.yaml "Responsible gambling") ----

// webURL returns an absolute http(s) address, or null: nothing else is ever
// navigated to, whatever the server sent.
function webURL(raw) {
  if (typeof raw !== 'string' || raw === '') return null;
  try {
    const u = new URL(raw);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.href : null;
  } catch {
    return null;
  }
}

// link points an <a target="_top"> at url, or hides it.
function link(el, url) {
  if (url) { el.href = url; el.hidden = false; } else { el.removeAttribute('href'); el.hidden = true; }
}

const rg = { timer: null, due: false, offset: 0, refresh: null };

function setupControls() {
  const s = state.session;
  link($('lobby'), webURL(s.lobby_url));
  link($('reality-leave'), webURL(s.lobby_url));
  const c = s.responsible_gambling;
  if (!c) return;
  rg.offset = c.server_time - Date.now();
  $('rg-bar').hidden = !c.session_clock;
  clearInterval(rg.timer);
  rg.timer = setInterval(tickControls, 1000);
  tickControls();
}

const rgNow = () => Date.now() + rg.offset;

// duration is h:mm:ss (or m:ss) of a number of milliseconds.
function duration(ms) {
  const s = Math.max(0, Math.floor(ms / 1000));
  const h = Math.floor(s / 3600);
  const mm = String(Math.floor((s % 3600) / 60));
  const ss = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${mm.padStart(2, '0')}:${ss}` : `${mm}:${ss}`;
}

// signed formats a net result in cents with its sign.
function signed(cents) {
  return (cents < 0 ? '−' : cents > 0 ? '+' : '') + fmt(Math.abs(cents));
}

function tickControls() {
  const c = state.session && state.session.responsible_gambling;
  if (!c || state.stopped) return;
  if (c.session_clock) {
    $('rg-clock').textContent = duration(rgNow() - c.session_started_at);
    $('rg-net').textContent = c.net !== undefined ? signed(c.net) : '';
  }
  if (c.reality_check_at && rgNow() >= c.reality_check_at && !rg.due) showRealityCheck();
}

function applyControls(sess) {
  state.session.responsible_gambling = sess.responsible_gambling;
  if (sess.responsible_gambling) rg.offset = sess.responsible_gambling.server_time - Date.now();
  tickControls();
}

// refreshControlsSoon reads the session again (a read: it does not count as
// an action) for the net position after a bet changed.
function refreshControlsSoon() {
  const c = state.session && state.session.responsible_gambling;
  if (!c || c.net === undefined) return;
  clearTimeout(rg.refresh);
  rg.refresh = setTimeout(async () => {
    try { applyControls(await api('GET', '/api/v1/session')); } catch { /* the figures stay */ }
  }, 400);
}

// showRealityCheck pauses the table with the elapsed time and the net result,
// read fresh from the server; bets are refused by the server until Continue.
async function showRealityCheck() {
  rg.due = true;
  try { applyControls(await api('GET', '/api/v1/session')); } catch { /* show what is known */ }
  const c = state.session.responsible_gambling || {};
  setText($('reality-text'), 'rg.checkText', {
    time: duration(rgNow() - (c.session_started_at || rgNow())),
    staked: fmt(c.staked || 0), won: fmt(c.won || 0), net: signed(c.net || 0),
  });
  const d = $('reality');
  if (!d.open && !state.stopped) d.showModal();
}

async function continueSession() {
  try {
    applyControls(await api('POST', '/api/v1/session/reality-check'));
    rg.due = false;
    $('reality').close();
  } catch (err) {
    notice(message(err));
  }
}

// offerDeposit shows the Deposit button after a refusal for lack of funds.
function offerDeposit() {
  link($('deposit'), webURL(state.session.deposit_url));
}

// inactive ends the table: the session ended after its inactivity timeout.
function inactive(text) {
  if (state.stopped && !$('fatal').hidden) return;
  sessionStorage.removeItem(SESSION_KEY);
  clearInterval(rg.timer);
  const d = $('reality');
  if (d.open) d.close();
  fatal(text || t('error.SESSION_INACTIVE'));
  $('fatal-title').hidden = false;
  link($('fatal-lobby'), state.session ? webURL(state.session.lobby_url) : null);
}

// publicJSON reads a public fairness document (GET /fairness/...): a plain
// request, no session, the same origin.
async function publicJSON(path) {
  let res;
  try {
    res = await fetch(path, { headers: { Accept: 'application/json' }, cache: 'no-store', credentials: 'omit' });
  } catch {
    throw new APIError(0, null);
  }
  let data = null;
  try { data = await res.json(); } catch { data = null; }
  if (!res.ok || !data) throw new APIError(res.status, data);
  return data;
}

// chainsURL is the public chains page of this game, in the session language.
function chainsURL() {
  const s = state.session || {};
  if (!s.game_id) return '/fairness/chains';
  const q = new URLSearchParams({ game_id: s.game_id });
  q.set('lang', i18n.language());
  return '/fairness/chains?' + q.toString();
}

// openFairness shows the chain in play (GET /api/v1/fairness: the same Chain
// document as the public route) and verifies roundId when given.
async function openFairness(roundId) {
  $('f-round').value = roundId || '';
  $('f-result').replaceChildren();
  $('f-chains').href = chainsURL();
  $('fairness').showModal();
  try {
    // Read again at each opening: the chain in play moves on (its salt is
    // fixed after seeding; a new chain follows an exhausted one).
    state.fairness = await api('GET', '/api/v1/fairness');
  } catch (err) {
    if (!state.fairness) {
      $('f-result').replaceChildren(line(message(err), 'bad'));
      return;
    }
  }
  if (roundId) verify();
  const f = state.fairness;
  $('f-chain').textContent = f.chain_id || '';
  $('f-terminal').textContent = f.terminal_hash;
  const note = $('f-salt-note');
  note.className = 'note';
  if (f.salt) {
    $('f-salt').textContent = f.salt;
    if (f.salt_source === 'game_draw') { setText(note, 'fairness.saltByGame'); note.className = 'note warn'; }
    else if (f.salt_source === 'legacy') { setText(note, 'fairness.saltLegacy'); note.className = 'note warn'; }
    else if (f.salt_source === 'contributions') setText(note, 'fairness.saltByContributions');
    else note.textContent = '';
  } else {
    $('f-salt').textContent = '';
    setText(note, 'fairness.saltPending', { time: f.seeding_ends_at ? i18n.dateTime(f.seeding_ends_at) : t('limits.unknown') });
  }
  setText($('f-rtp'), 'fairness.rtpValue', { pct: (f.rtp_bp / 100).toFixed(2) });
  $('f-max').textContent = money.multiplier(f.max_multiplier);
  $('f-formula').textContent = f.formula; // the server's text, verbatim
}

function line(text, cls) {
  const p = document.createElement('p');
  p.textContent = text;
  if (cls) p.className = cls;
  return p;
}

const verifying = new Map(); // the latest run per result box

// verifyInto checks a round from public data into out: its hash and crash
// point (GET /api/v1/rounds/{id}), then its chain's public document (GET
// /fairness/chains/{chain_id}): the crash point from the chain's salt and
// settings, the walk down to the chain's published terminal hash or nearest
// checkpoint, and the salt from the published contributions (verdict.js).
// The lines are shown together once everything is computed.
async function verifyInto(out, id) {
  const run = (verifying.get(out) || 0) + 1;
  verifying.set(out, run);
  out.replaceChildren();
  if (!id) return;
  const show = (lines) => { if (verifying.get(out) === run) out.replaceChildren(...lines.map((l) => line(l.text, l.cls))); };
  let d;
  try {
    d = await api('GET', '/api/v1/rounds/' + encodeURIComponent(id));
  } catch (err) {
    show([{ text: message(err), cls: 'bad' }]);
    return;
  }
  show(await verdict(d, (chainId) => publicJSON('/fairness/chains/' + encodeURIComponent(chainId))));
}

// verify checks the round named in the fairness dialog.
function verify() {
  return verifyInto($('f-result'), $('f-round').value.trim());
}

// ---- the replay of a round (last-game recall) ----

const replay = { roundId: '', view: null, run: 0 };

function closeReplay() {
  replay.run++;
  if (replay.view) replay.view.destroy();
  replay.view = null;
}

// openReplay shows the replay of an ended round with the player's bets in it
// (GET /api/v1/rounds/{round_id}/replay), its crash point and hash, and
// verifies it on demand as the fairness dialog does.
async function openReplay(roundId) {
  closeReplay();
  const run = replay.run;
  replay.roundId = roundId;
  const d = $('replay');
  const status = $('replay-status');
  setText($('replay-title'), 'replay.title', { round: shortRound(roundId) });
  setText(status, 'replay.load');
  status.className = '';
  status.hidden = false;
  $('replay-view').replaceChildren();
  $('replay-facts').hidden = true;
  $('replay-tools').hidden = true;
  $('replay-result').replaceChildren();
  verifying.set($('replay-result'), (verifying.get($('replay-result')) || 0) + 1);
  if (!d.open) d.showModal();
  let data;
  try {
    data = await api('GET', '/api/v1/rounds/' + encodeURIComponent(roundId) + '/replay');
  } catch (err) {
    if (run !== replay.run) return;
    status.textContent = message(err);
    status.className = 'bad';
    return;
  }
  if (run !== replay.run || !d.open) return;
  const round = data && data.round ? data.round : {};
  status.hidden = true;
  replay.view = renderReplay($('replay-view'), { round, bets: Array.isArray(data.bets) ? data.bets : [] }, { mine: true, currency: cur() });
  $('replay-crash').textContent = Number.isSafeInteger(round.crash_point) ? money.multiplier(round.crash_point) : '';
  $('replay-hash').textContent = typeof round.hash === 'string' ? round.hash : '';
  $('replay-facts').hidden = !Number.isSafeInteger(round.crash_point);
  $('replay-tools').hidden = typeof round.hash !== 'string';
}

boot();
