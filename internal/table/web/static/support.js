// The support page of one round (GET /support/rounds/{token}): what an
// operator's support agent sees through a signed, expiring link. It reads
// GET /support/rounds/{token}/data (no session: the token is the access) and
// shows the round (its phases in local time and UTC, and once ended its crash
// point, hash, chain, position and salt), its replay (replay.js), the bets
// with every wallet call of each (movements and re-deliveries), and verifies
// the round in the browser from the public chain document (fairness.js, as
// the table and the chains page do). Every visible string comes from the
// dictionary (i18n.js): ?lang=pt|en|es, else the browser's language, else
// English. Money is integer cents (money.js).

import * as i18n from './i18n.js';
import { t, setText } from './i18n.js';
import * as money from './money.js';
import * as fair from './fairness.js';
import { renderReplay } from './replay.js';
import { verdict } from './verdict.js';
import { el, code, fact } from './dom.js';
import { getJSON } from './http.js';

const $ = (id) => document.getElementById(id);
const isInt = (v) => Number.isSafeInteger(v);

// dataURL is the JSON of this page's link: its own path plus /data.
function dataURL() {
  const m = /^\/support\/rounds\/([^/]+)\/?$/.exec(location.pathname);
  return m ? '/support/rounds/' + m[1] + '/data' : null;
}

const dash = () => el('span', 'muted', '—');

// when is an instant in the browser's zone and in UTC, to the millisecond.
function when(ms) {
  if (!isInt(ms)) return dash();
  const box = el('span', 'when');
  const here = i18n.dateTime(ms, { millis: true });
  const utc = i18n.dateTime(ms, { utc: true, millis: true });
  const local = el('time', '', here);
  local.dateTime = new Date(ms).toISOString();
  box.append(local);
  if (utc !== here) box.append(el('span', 'utc', utc)); // a browser in UTC shows one line
  return box;
}

const pick = (map, key) => (Object.prototype.hasOwnProperty.call(map, key) ? t(map[key]) : String(key ?? ''));

const ROUND_STATUS = { betting: 'support.statusBetting', flying: 'support.statusFlying', finished: 'support.statusFinished', void: 'support.statusVoid' };
const PHASE = { betting: 'support.phaseBetting', flying: 'support.phaseFlying', crashed: 'support.phaseCrashed', void: 'support.phaseVoid' };
const KIND = { bet: 'support.kindBet', win: 'support.kindWin', rollback: 'support.kindRollback' };
const WIN_TYPE = { win: 'support.winTypeWin', freebet: 'support.winTypeFreebet', zero_win: 'support.winTypeZero' };
const MOVEMENT = { delivered: 'support.movementDelivered', pending: 'support.movementPending', exhausted: 'support.movementExhausted', refused: 'support.movementRefused' };

// table builds a table whose rows collapse into labelled blocks on a narrow
// screen (support.css); the explicit roles keep it a table for assistive
// technologies whatever its display.
function table(cls, captionText, heads) {
  const tb = el('table', 'stack ' + cls);
  tb.setAttribute('role', 'table');
  if (captionText) tb.append(el('caption', 'visually-hidden', captionText));
  const thead = el('thead');
  thead.setAttribute('role', 'rowgroup');
  const tr = el('tr');
  tr.setAttribute('role', 'row');
  for (const key of heads) {
    const th = el('th', '', t(key));
    th.scope = 'col';
    th.setAttribute('role', 'columnheader');
    tr.append(th);
  }
  thead.append(tr);
  tb.append(thead);
  return tb;
}

function row(heads, cells, cls) {
  const tr = el('tr', cls || '');
  tr.setAttribute('role', 'row');
  cells.forEach((c, i) => {
    const td = el('td');
    td.setAttribute('role', 'cell');
    td.dataset.label = t(heads[i]);
    if (c instanceof Node) td.append(c);
    else td.textContent = c;
    tr.append(td);
  });
  return tr;
}

function lines(...parts) {
  const box = el('span', 'lines');
  for (const p of parts) if (p) box.append(p instanceof Node ? p : el('span', '', p));
  return box;
}

// ---- the round ----

const ended = (r) => r.status === 'finished' || r.status === 'void';

function renderRound(r) {
  const dl = $('round-facts');
  dl.replaceChildren();
  fact(dl, 'support.roundId', code(String(r.round_id ?? '')));
  fact(dl, 'support.game', String(r.game_id ?? ''));
  if (isInt(r.seq)) fact(dl, 'support.seq', i18n.number(r.seq));
  fact(dl, 'support.status', el('span', 'status-badge ' + (ROUND_STATUS[r.status] ? r.status : ''), pick(ROUND_STATUS, r.status)));
  fact(dl, 'support.bettingEnds', when(r.betting_ends_at));
  const secret = () => el('span', 'muted', t('support.revealedAtEnd'));
  fact(dl, 'replay.crashPoint', isInt(r.crash_point) ? el('strong', '', money.multiplier(r.crash_point)) : secret());
  fact(dl, 'replay.hash', typeof r.hash === 'string' ? code(r.hash) : secret());
  fact(dl, 'fairness.chain', typeof r.chain_id === 'string' ? code(r.chain_id) : el('span', 'muted', t('support.noChain')));
  fact(dl, 'support.position', isInt(r.position) ? i18n.number(r.position) : dash());
  fact(dl, 'fairness.salt', typeof r.salt === 'string' ? code(r.salt) : secret());

  const ol = $('phases');
  ol.replaceChildren();
  for (const p of Array.isArray(r.phases) ? r.phases : []) {
    const li = el('li', 'phase-' + (PHASE[p && p.phase] ? p.phase : 'other'));
    li.append(el('strong', '', pick(PHASE, p && p.phase)), when(p && p.at));
    ol.append(li);
  }
}

// ---- the bets and their wallet calls ----

const BET_HEADS = ['support.bet', 'support.player', 'support.amount', 'support.autoCashout', 'support.betStatus', 'support.cashout', 'support.payout', 'support.placed', 'support.settled'];
const MOVE_HEADS = ['support.kind', 'support.transaction', 'support.operatorTransaction', 'support.amount', 'support.movementStatus', 'support.attempts', 'support.lastError', 'support.created', 'support.delivered', 'support.redeliveries'];

function renderBets(bets) {
  const box = $('bets');
  box.replaceChildren();
  const players = new Set(bets.map((b) => b.player_id)).size;
  setText($('bets-count'), bets.length ? 'support.betsCount' : 'support.betsNone', { count: i18n.number(bets.length), players: i18n.number(players) });
  if (!bets.length) return;
  const tb = table('bets', t('support.bets'), BET_HEADS);
  for (const b of bets) {
    const fmt = (cents) => (isInt(cents) ? money.format(cents, b.currency, i18n.language()) : '');
    const body = el('tbody', 'bet ' + (b.status || ''));
    body.setAttribute('role', 'rowgroup');
    const amount = lines(fmt(b.amount), b.freebet_id ? lines(t('support.freebet', { id: b.freebet_id })) : null);
    const status = lines(el('span', 'bet-status ' + (b.status || ''), t('status.' + b.status)),
      b.refusal ? el('span', 'bad', t('support.refusal', { reason: b.refusal })) : null);
    body.append(row(BET_HEADS, [
      code(String(b.bet_id ?? '')),
      String(b.player_id ?? ''),
      amount,
      isInt(b.auto_cashout) ? money.multiplier(b.auto_cashout) : dash(),
      status,
      isInt(b.multiplier) ? money.multiplier(b.multiplier) : dash(),
      isInt(b.payout) ? fmt(b.payout) : dash(),
      when(b.placed_at),
      when(b.settled_at),
    ], 'bet-row'));

    // The wallet calls, in a row of their own under the bet.
    const tr = el('tr', 'movements-row');
    tr.setAttribute('role', 'row');
    const td = el('td');
    td.setAttribute('role', 'cell');
    td.colSpan = BET_HEADS.length;
    const moves = Array.isArray(b.movements) ? b.movements : [];
    const title = el('p', 'movements-title', t('support.movementsOf', { bet: String(b.bet_id ?? '') }));
    td.append(title);
    if (!moves.length) {
      td.append(el('p', 'muted', t('support.movementsNone')));
    } else {
      const mt = table('movements', t('support.movementsOf', { bet: String(b.bet_id ?? '') }), MOVE_HEADS);
      const mb = el('tbody');
      mb.setAttribute('role', 'rowgroup');
      for (const m of moves) mb.append(movementRow(m, fmt));
      mt.append(mb);
      td.append(mt);
    }
    tr.append(td);
    body.append(tr);
    tb.append(body);
  }
  const scroll = el('div', 'table-box');
  scroll.append(tb);
  box.append(scroll);
}

function movementRow(m, fmt) {
  const kind = lines(el('strong', '', pick(KIND, m.kind)),
    m.win_type && m.win_type !== 'win' ? pick(WIN_TYPE, m.win_type) : null,
    m.reason ? t('support.reason', { reason: m.reason }) : null);
  const state = el('span', 'movement-status ' + (MOVEMENT[m.status] ? m.status : ''), pick(MOVEMENT, m.status));
  const redeliveries = Array.isArray(m.redeliveries) ? m.redeliveries : [];
  let re;
  if (!redeliveries.length) {
    re = el('span', 'muted', t('support.redeliveriesNone'));
  } else {
    re = el('ul', 'redeliveries');
    for (const r of redeliveries) {
      re.append(el('li', '', t('support.redelivery', {
        number: isInt(r.number) ? r.number : '?',
        by: String(r.requested_by ?? ''),
        time: isInt(r.requested_at) ? i18n.dateTime(r.requested_at, { millis: true }) : '—',
        attempts: isInt(r.attempts_before) ? r.attempts_before : '—',
        error: r.last_error_before ? r.last_error_before : '—',
      })));
    }
  }
  return row(MOVE_HEADS, [
    kind,
    code(String(m.transaction_id ?? '')),
    m.operator_transaction_id ? code(m.operator_transaction_id) : dash(),
    isInt(m.amount) ? fmt(m.amount) : dash(),
    state,
    isInt(m.attempts) ? i18n.number(m.attempts) : dash(),
    m.last_error ? el('span', 'bad', m.last_error) : dash(),
    when(m.created_at),
    when(m.delivered_at),
    re,
  ], 'movement ' + (m.status || ''));
}

// ---- the verification ----

let verifying = false;

async function verify(round) {
  if (verifying) return;
  const out = $('verify-result');
  if (!ended(round) || typeof round.hash !== 'string') {
    out.replaceChildren(el('p', 'warn', t('error.ROUND_IN_PROGRESS')));
    return;
  }
  verifying = true;
  $('verify').disabled = true;
  out.setAttribute('aria-busy', 'true');
  out.replaceChildren(el('p', 'muted', t('support.verifying')));
  const found = await verdict(round, (id) => getJSON('/fairness/chains/' + encodeURIComponent(id)));
  out.replaceChildren(...found.map((l) => el('p', l.cls, l.text)));
  out.removeAttribute('aria-busy');
  $('verify').disabled = false;
  verifying = false;
}

// ---- start ----

function renderExpiry(at) {
  const p = $('expires');
  if (!isInt(at)) { p.hidden = true; return; }
  const over = at <= Date.now();
  setText(p, over ? 'support.expired' : 'support.expires', { time: i18n.dateTime(at) });
  p.className = over ? 'warn' : 'muted';
  p.hidden = false;
  const left = at - Date.now();
  if (!over && left < 2 ** 31 - 1) setTimeout(() => renderExpiry(at), left + 50);
}

function fail(text) {
  const s = $('status');
  s.textContent = text;
  s.className = 'bad fail';
  s.hidden = false;
  $('content').hidden = true;
}

async function boot() {
  const params = new URLSearchParams(location.search);
  const browser = navigator.languages && navigator.languages.length ? navigator.languages : [navigator.language];
  await i18n.load(i18n.pick([params.get('lang'), ...browser], 'en'), 'en');
  i18n.apply();

  const url = dataURL();
  if (!url) { fail(t('support.unknownLink')); return; }
  let data;
  try {
    data = await getJSON(url);
  } catch (err) {
    if (err.status === 404 || err.status === 410 || err.status === 403) fail(t('support.unknownLink'));
    else if (err.status === 0) fail(t('error.network'));
    else fail(t('support.loadFailed'));
    return;
  }
  const round = data.round && typeof data.round === 'object' ? data.round : null;
  if (!round) { fail(t('support.loadFailed')); return; }
  const bets = Array.isArray(data.bets) ? data.bets : [];

  document.title = t('support.pageTitle', { round: String(round.round_id ?? '') });
  setText($('heading'), 'support.heading', { round: String(round.round_id ?? '') });
  renderExpiry(data.expires_at);
  renderRound(round);
  renderBets(bets);
  $('status').hidden = true;
  $('content').hidden = false;
  // Drawn once shown: the chart takes the width of its container.
  renderReplay($('replay'), { round, bets }, { mine: false });

  const q = new URLSearchParams();
  if (round.game_id) q.set('game_id', round.game_id);
  q.set('lang', i18n.language());
  $('chains-link').href = '/fairness/chains?' + q.toString();
  if (!fair.available()) {
    setText($('crypto'), 'fairness.noCrypto');
    $('crypto').hidden = false;
    $('verify').disabled = true;
  } else if (!ended(round)) {
    $('verify').disabled = true;
    setText($('verify-result'), 'error.ROUND_IN_PROGRESS');
  }
  $('verify').addEventListener('click', () => verify(round));
}

boot();
