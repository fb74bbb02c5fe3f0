// The public chains page (GET /fairness/chains with Accept: text/html): lists
// the game's hash chains from the same address read as JSON, and verifies a
// chain's every ended round in the browser (fairness.js): the links down to
// the published terminal hash, the crash points, the checkpoints and the
// salt. No session, no account: public documents only. Every visible string
// comes from the dictionary (i18n.js): ?lang=pt|en|es, else the browser's
// language, else English.

import * as i18n from './i18n.js';
import { t, setText } from './i18n.js';
import * as money from './money.js';
import * as fair from './fairness.js';
import { beaconFailure, beaconLines } from './verdict.js';
import { el, code, fact } from './dom.js';
import { HTTPError, getJSON } from './http.js';

const BASE = '/fairness/chains';
const ROUND_PAGE = 1000;
const SHOW_FAILURES = 20;

const $ = (id) => document.getElementById(id);

function failureText(err) {
  return err && err.status === 0 ? t('error.network') : t('chains.loadFailed');
}

// listURL is the JSON listing for this page's query (lang is the page's own),
// from `before` when given.
function listURL(before) {
  const q = new URLSearchParams(location.search);
  q.delete('lang');
  if (before) q.set('before', before);
  const s = q.toString();
  return BASE + (s ? '?' + s : '');
}

const chainURL = (id) => BASE + '/' + encodeURIComponent(id);

const isInt = (v) => Number.isSafeInteger(v);
const when = (ms) => (isInt(ms) ? i18n.dateTime(ms) : t('limits.unknown'));

const STATUS = { seeding: 'chains.statusSeeding', active: 'chains.statusActive', retired: 'chains.statusRetired' };
const SOURCE = { operator: 'chains.sourceOperator', beacon: 'chains.sourceBeacon', game: 'chains.sourceGame' };
const VOID_RULE = {
  failover_betting: 'chains.ruleFailoverBetting', failover_flight: 'chains.ruleFailoverFlight',
  planned_stop: 'chains.rulePlannedStop', takeoff_failed: 'chains.ruleTakeoffFailed', unknown: 'chains.ruleUnknown',
};

// voidsSection shows the chain's void rounds with their revealed crash
// points, and the published tests of whether those voided before take-off,
// and those voided in flight, lean toward high crash points (figures as
// published; the verifiers recompute them).
function voidsSection(c) {
  const box = el('div', 'voids');
  box.append(el('h3', '', t('chains.voids')));
  const v = c.voids;
  if (!v || typeof v !== 'object' || !Array.isArray(v.rounds)) return box;
  box.append(el('p', '', t('chains.voidsIntro')));
  if (v.rounds.length === 0) {
    box.append(el('p', 'muted', t('chains.voidsNone')));
  } else {
    const list = el('ol', 'void-list');
    for (const r of v.rounds) {
      if (!r || typeof r !== 'object') continue;
      const rule = Object.prototype.hasOwnProperty.call(VOID_RULE, r.void_rule) ? t(VOID_RULE[r.void_rule]) : String(r.void_rule ?? t('limits.unknown'));
      list.append(el('li', '', t('chains.voidItem', {
        round: String(r.round_id ?? ''), crash: isInt(r.crash_point) ? money.multiplier(r.crash_point) : t('limits.unknown'),
        rule, time: when(r.voided_at),
      })));
    }
    box.append(list);
  }
  box.append(el('h4', '', t('chains.voidTest')));
  box.append(el('p', '', t('chains.voidTestIntro', { count: i18n.number(isInt(v.tested) ? v.tested : 0) })));
  const rows = el('ul', 'void-tests');
  for (const x of Array.isArray(v.tests) ? v.tests : []) {
    if (!x || typeof x !== 'object') continue;
    const share = Number(x.share);
    rows.append(el('li', '', t('chains.voidTestRow', {
      x: isInt(x.at_least) ? money.multiplier(x.at_least) : t('limits.unknown'),
      observed: i18n.number(isInt(x.observed) ? x.observed : 0), tested: i18n.number(isInt(v.tested) ? v.tested : 0),
      share: Number.isFinite(share) ? i18n.number(share * 100, 2) + ' %' : t('limits.unknown'),
      p: String(x.p_value ?? t('limits.unknown')),
    })));
  }
  box.append(rows);
  box.append(v.flagged === true ? el('p', 'warn', t('chains.voidFlagged')) : el('p', '', t('chains.voidNotFlagged')));
  const f = v.in_flight; // table.v1 1.5.0
  if (f && typeof f === 'object') {
    box.append(el('h4', '', t('chains.voidInFlight')));
    box.append(el('p', '', t('chains.voidInFlightIntro', {
      count: i18n.number(isInt(f.tested) ? f.tested : 0), p: String(f.p_value ?? t('limits.unknown')),
    })));
    box.append(f.flagged === true ? el('p', 'warn', t('chains.voidInFlightFlagged')) : el('p', '', t('chains.voidInFlightNotFlagged')));
  }
  return box;
}

function statusText(s) {
  return Object.prototype.hasOwnProperty.call(STATUS, s) ? t(STATUS[s]) : String(s);
}

function roundId(chain, seq) {
  return typeof chain.game_id === 'string' && isInt(seq) ? chain.game_id + '-' + seq : t('limits.unknown');
}

// ---- one chain ----

let cards = 0;

class Card {
  constructor(chain) {
    this.id = chain.chain_id;
    this.n = ++cards;
    this.running = false;
    this.stop = false;
    this.el = el('section', 'chain');
    this.el.setAttribute('aria-labelledby', 'chain-' + this.n);
    this.body = el('div');
    this.button = el('button', 'verify-button', t('chains.verify'));
    this.button.type = 'button';
    this.button.disabled = !fair.available() || typeof this.id !== 'string';
    this.button.addEventListener('click', () => this.verify());
    this.progress = el('progress');
    this.progress.setAttribute('aria-label', t('chains.progressLabel'));
    this.progress.hidden = true;
    this.progressText = el('p', 'progress-text');
    this.progressText.hidden = true;
    this.result = el('div', 'result');
    this.result.setAttribute('aria-live', 'polite');
    const tools = el('div', 'verify-chain');
    tools.append(this.button, this.progress, this.progressText, this.result);
    this.el.append(this.body, tools);
    this.render(chain);
  }

  render(c) {
    const h = el('h2', '', t('chains.heading', { id: this.id }));
    h.id = 'chain-' + this.n;
    const badge = el('span', 'status-badge ' + (Object.prototype.hasOwnProperty.call(STATUS, c.status) ? c.status : ''), statusText(c.status));
    const dl = el('dl', 'facts');
    fact(dl, 'chains.game', String(c.game_id ?? ''));
    fact(dl, 'chains.status', badge);
    fact(dl, 'fairness.terminal', code(c.terminal_hash));
    fact(dl, 'fairness.rtp', isInt(c.rtp_bp) ? t('fairness.rtpValue', { pct: (c.rtp_bp / 100).toFixed(2) }) : t('limits.unknown'));
    fact(dl, 'fairness.max', isInt(c.max_multiplier) ? money.multiplier(c.max_multiplier) : t('limits.unknown'));
    fact(dl, 'chains.length', isInt(c.length) ? t('chains.lengthValue', { count: i18n.number(c.length) }) : t('limits.unknown'));
    fact(dl, 'chains.formulaVersion', String(c.formula_version ?? t('limits.unknown')));
    fact(dl, 'chains.created', when(c.created_at));
    fact(dl, 'chains.seedingEnds', when(c.seeding_ends_at));
    if (c.contribution_rule === 'commit_reveal') fact(dl, 'chains.revealEnds', when(c.reveal_ends_at));

    // The salt, and how it was made.
    if (typeof c.salt === 'string') {
      fact(dl, 'fairness.salt', code(c.salt));
      fact(dl, 'chains.saltFixedAt', when(c.salt_fixed_at));
      const made = el('div');
      const contributions = Array.isArray(c.contributions) ? c.contributions : [];
      const operators = contributions.filter((x) => x && x.source === 'operator').length;
      const beacon = contributions.find((x) => x && x.source === 'beacon');
      if (c.salt_source === 'game_draw') made.append(el('p', 'warn', t('fairness.saltByGame')));
      else if (c.salt_source === 'legacy') made.append(el('p', 'warn', t('fairness.saltLegacy')));
      else if (c.salt_source === 'contributions') made.append(el('p', '', t('fairness.saltByContributions')));
      if (c.salt_source === 'contributions') made.append(el('p', '', t('chains.operatorCount', { count: operators })));
      if (beacon) made.append(el('p', '', t('fairness.saltBeacon', { label: typeof beacon.label === 'string' ? beacon.label : '' })));
      const withheld = contributions.filter((x) => x && x.source === 'operator' && x.withheld === true)
        .map((x) => (typeof x.operator === 'string' ? x.operator : ''));
      if (withheld.length) made.append(el('p', 'warn', t('chains.withheldBy', { names: withheld.join(', ') })));
      fact(dl, 'chains.saltMade', made);
    } else {
      fact(dl, 'fairness.salt', t('fairness.saltPending', { time: when(c.seeding_ends_at) }));
    }

    if (!(c.status === 'retired' && isInt(c.last_seq) && isInt(c.first_seq) && c.last_seq === c.first_seq - 1) && c.salt_source !== 'legacy') {
      this.beaconFact(dl, c);
    }
    fact(dl, 'chains.firstRound', roundId(c, c.first_seq));
    fact(dl, 'chains.lastRound', isInt(c.last_seq) ? roundId(c, c.last_seq) : t('chains.lastOpen'));
    if (c.status === 'retired' && isInt(c.retired_at)) fact(dl, 'chains.retiredAt', when(c.retired_at));
    fact(dl, 'chains.checkpoints', i18n.number(Array.isArray(c.checkpoints) ? c.checkpoints.length : 0));

    // The contributions.
    const ch = el('h3', '', t('chains.contributions'));
    const list = Array.isArray(c.contributions) ? c.contributions : [];
    let contributions;
    if (list.length === 0) {
      contributions = el('p', 'muted', t('chains.contributionsNone'));
    } else {
      contributions = el('ol', 'contribs');
      for (const x of list) {
        const li = el('li');
        const d = el('dl', 'facts');
        const src = x && x.source;
        fact(d, 'chains.source', Object.prototype.hasOwnProperty.call(SOURCE, src) ? t(SOURCE[src]) : String(src));
        if (src === 'operator' && typeof x.operator === 'string') fact(d, 'chains.operator', x.operator);
        if (src === 'beacon' && typeof x.label === 'string') fact(d, 'chains.label', x.label);
        if (x && typeof x.commitment === 'string') fact(d, 'chains.commitment', code(x.commitment));
        if (x && x.withheld === true) fact(d, 'chains.value', el('span', 'warn', t('chains.withheld')));
        else if (x && typeof x.value === 'string') fact(d, 'chains.value', code(x.value));
        fact(d, 'chains.received', when(x && x.received_at));
        li.append(d);
        contributions.append(li);
      }
    }

    const formula = el('details');
    formula.append(el('summary', '', t('fairness.formulaExact')));
    const pre = el('pre', 'formula', typeof c.formula === 'string' ? c.formula : '');
    pre.lang = 'en';
    formula.append(pre);

    this.body.replaceChildren(h, dl, ch, contributions, voidsSection(c), formula);
  }

  // beaconFact shows the chain's beacon as published (the verification
  // checks it): which round, or that the chain waits for it, names none, or
  // took a configured value.
  async beaconFact(dl, c) {
    const dd = fact(dl, 'chains.beacon', '');
    let b;
    try { b = await fair.checkBeacon(c); } catch { return; }
    for (const l of beaconLines(b)) {
      if (l.cls === 'bad' || l.cls === 'good') continue; // verdicts belong to the verification
      dd.append(el('p', l.cls, l.text));
    }
    if (b.state === 'fixed' || b.state === 'waiting') {
      const a = el('a', '', t('chains.beaconLink'));
      a.href = 'https://docs.drand.love/';
      a.rel = 'noopener noreferrer';
      const p = el('p');
      p.append(a);
      dd.append(p);
    }
  }

  showProgress(count, total) {
    this.progress.hidden = false;
    this.progressText.hidden = false;
    if (total) {
      this.progress.max = total;
      this.progress.value = Math.min(count, total);
      setText(this.progressText, 'chains.progressOf', { count: i18n.number(count), total: i18n.number(total) });
    } else {
      this.progress.removeAttribute('value');
      setText(this.progressText, 'chains.progress', { count: i18n.number(count) });
    }
  }

  // verify reads the chain document again (fresh checkpoints and salt), then
  // every page of its ended rounds, verifying each page as it comes.
  async verify() {
    if (this.running) { this.stop = true; return; }
    this.running = true;
    this.stop = false;
    setText(this.button, 'chains.stop');
    this.result.replaceChildren();
    this.result.setAttribute('aria-busy', 'true');
    const lines = [];
    try {
      await this.check(lines);
    } catch {
      lines.push(el('p', 'bad', t('fairness.noCrypto')));
    }
    this.progress.hidden = true;
    this.progressText.hidden = true;
    this.result.replaceChildren(...lines);
    this.result.removeAttribute('aria-busy');
    setText(this.button, 'chains.verify');
    this.running = false;
  }

  async check(lines) {
    let chain;
    try {
      chain = await getJSON(chainURL(this.id));
    } catch (err) {
      lines.push(el('p', 'bad', failureText(err)));
      return;
    }
    this.render(chain);
    let v;
    let read = { complete: false, error: null };
    for (let attempt = 0; attempt < 2; attempt++) {
      v = new fair.ChainVerifier(chain, SHOW_FAILURES);
      await v.start();
      read = await this.readRounds(chain, v, attempt === 0);
      if (!read.restart) break;
      // Rounds are listed although the document read had no salt yet: the
      // salt was fixed in between. Read the document again and start over.
      try {
        chain = await getJSON(chainURL(this.id));
      } catch (err) {
        lines.push(el('p', 'bad', failureText(err)));
        return;
      }
      this.render(chain);
    }
    const s = v.finish(read.complete);
    const vars = { count: i18n.number(s.rounds), verified: i18n.number(s.verified), failures: i18n.number(s.failures) };
    if (this.stop) {
      lines.push(el('p', s.failures ? 'bad' : 'warn', t('chains.resultStopped', vars)));
    } else if (!read.complete) {
      if (read.error) lines.push(el('p', 'bad', failureText(read.error)));
      lines.push(el('p', 'bad', t('chains.resultError', vars)));
    } else if (!s.ok) {
      lines.push(el('p', 'bad', t('chains.resultFailed', vars)));
    } else if (s.rounds > 0) {
      lines.push(el('p', 'good', t('chains.resultOk', vars)));
    } else if (s.neverPlayed) {
      lines.push(el('p', 'good', t('chains.resultNeverPlayed')));
    } else if (s.salt && s.salt.error === 'pending') {
      lines.push(el('p', 'good', t('chains.resultSeeding')));
    } else {
      lines.push(el('p', 'good', t('chains.resultNone')));
    }
    if (s.first.length) {
      const ul = el('ul', 'failures');
      for (const f of s.first) ul.append(el('li', 'bad', describe(f)));
      lines.push(ul);
      if (s.failures > s.first.length) lines.push(el('p', 'bad', t('chains.more', { count: i18n.number(s.failures - s.first.length) })));
    }
    if (s.beacon && !s.neverPlayed && !(s.salt && s.salt.made === 'legacy')) {
      for (const l of beaconLines(s.beacon)) {
        if (l.cls === 'bad') continue; // listed with the failures above
        lines.push(el('p', l.cls, l.text));
      }
    }
    if (s.salt && s.salt.fixed && !s.salt.error) {
      if (s.salt.match === true) lines.push(el('p', 'good', t('fairness.saltOk', { count: i18n.number(s.salt.count) })));
      if (s.salt.made === 'game_draw') lines.push(el('p', 'warn', t('fairness.saltByGame')));
      else if (s.salt.made === 'legacy') lines.push(el('p', 'warn', t('fairness.saltLegacy')));
      else if (s.salt.made === 'contributions') lines.push(el('p', '', t('fairness.saltByContributions')));
    }
  }

  // readRounds feeds the verifier every page of the chain's ended rounds,
  // following next_from. restart: rounds listed on a chain read without a salt.
  async readRounds(chain, v, mayRestart) {
    const total = chain.status === 'retired' && isInt(chain.last_seq) && isInt(chain.first_seq) ? chain.last_seq - chain.first_seq + 1 : 0;
    let from = 1;
    this.showProgress(0, total);
    for (;;) {
      if (this.stop) return { complete: false };
      let page;
      try {
        page = await getJSON(chainURL(this.id) + '/rounds?from=' + from + '&limit=' + ROUND_PAGE);
      } catch (err) {
        return { complete: false, error: err };
      }
      const items = Array.isArray(page.items) ? page.items : null;
      if (!items) return { complete: false, error: new HTTPError(-1) };
      if (mayRestart && items.length > 0 && typeof chain.salt !== 'string') return { restart: true };
      await v.add(items);
      this.showProgress(v.rounds, total);
      const next = page.next_from;
      if (next === undefined || next === null) return { complete: true };
      if (!isInt(next) || next <= from || items.length === 0) {
        v.fail({ kind: 'paging', from });
        return { complete: false };
      }
      from = next;
    }
  }
}

// describe words one failure of fair.ChainVerifier.
function describe(f) {
  const mult = (m) => { try { return money.multiplier(m); } catch { return String(m); } };
  switch (f.kind) {
    case 'settings': return t('chains.failSettings');
    case 'noSalt': return t('chains.failNoSalt');
    case 'salt': return t('chains.failSalt', { count: f.count, computed: f.computed });
    case 'saltSource': return t('chains.failSaltSource');
    case 'saltData': return t('chains.failSaltData');
    case 'commitment': return t('chains.failCommitment');
    case 'beacon': return beaconFailure(f.what);
    case 'checkpointBad': return t('chains.failCheckpointBad', { position: f.position });
    case 'format': return t('chains.failFormat', { round: f.round });
    case 'position': return t('chains.failPosition', { round: f.round, position: f.position });
    case 'afterLast': return t('chains.failAfterLast', { round: f.round });
    case 'order': return t('chains.failOrder', { round: f.round, position: f.position });
    case 'gap':
      return f.from === f.to ? t('chains.failGapOne', { round: f.round, position: f.from })
        : t('chains.failGap', { round: f.round, from: f.from, to: f.to });
    case 'tail':
      return f.from === f.to ? t('chains.failTailOne', { position: f.from }) : t('chains.failTail', { from: f.from, to: f.to });
    case 'link':
      return f.below === 0 ? t('chains.failLinkTerminal', { round: f.round, position: f.position })
        : t('chains.failLink', { round: f.round, position: f.position, below: f.below });
    case 'crash': return t('chains.failCrash', { round: f.round, position: f.position, computed: mult(f.computed), reported: mult(f.reported) });
    case 'checkpoint': return t('chains.failCheckpoint', { position: f.position });
    case 'checkpointMissing': return t('chains.failCheckpointMissing', { position: f.position });
    case 'paging': return t('chains.failPaging', { from: f.from });
    default: return String(f.kind);
  }
}

// ---- the list ----

let nextBefore = null;

async function loadChains(before) {
  const status = $('status');
  const older = $('older');
  older.disabled = true;
  let page;
  try {
    page = await getJSON(listURL(before));
  } catch (err) {
    status.textContent = failureText(err);
    status.hidden = false;
    status.className = 'bad';
    older.disabled = false;
    return;
  }
  const items = Array.isArray(page.items) ? page.items : [];
  const list = $('chains');
  for (const c of items) {
    if (c && typeof c === 'object') list.append(new Card(c).el);
  }
  if (list.childElementCount === 0) {
    setText(status, 'chains.empty');
    status.className = '';
    status.hidden = false;
  } else {
    status.hidden = true;
  }
  nextBefore = typeof page.next_before === 'string' && page.next_before !== '' ? page.next_before : null;
  older.hidden = nextBefore === null;
  older.disabled = false;
}

async function boot() {
  const params = new URLSearchParams(location.search);
  const browser = navigator.languages && navigator.languages.length ? navigator.languages : [navigator.language];
  await i18n.load(i18n.pick([params.get('lang'), ...browser], 'en'), 'en');
  i18n.apply();
  const game = params.get('game_id');
  if (game) {
    setText($('game'), 'chains.forGame', { game });
    $('game').hidden = false;
  }
  if (!fair.available()) {
    setText($('crypto'), 'fairness.noCrypto');
    $('crypto').hidden = false;
  }
  $('older').addEventListener('click', () => { if (nextBefore) loadChains(nextBefore); });
  await loadChains(null);
}

boot();
