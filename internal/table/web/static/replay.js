// The replay of one round: its flight drawn from take-off (phase "flying")
// to the crash (phase "crashed"), or to the interruption of a void round
// (phase "void"), with the crash point, each bet's cash out at its multiplier
// and payout, the bets lost at the crash and the auto cash out targets. The
// curve is the server's (curve.js: multiplierAt, timeToReach), never another
// formula. A static final view by default; "Play" replays the flight in real
// time. An SVG redrawn at the container's width: it fits from 360 px up.
//
//   const view = renderReplay(container, { round, bets }, { mine: true });
//   ... view.destroy();   // stops the animation and the resize observer
//
// round and bets have the shapes of GET /support/rounds/{token}/data and GET
// /api/v1/rounds/{round_id}/replay. Every visible string comes from the
// dictionary (i18n.js); amounts are integer cents (money.js).

import * as i18n from './i18n.js';
import { t } from './i18n.js';
import * as money from './money.js';
import { multiplierAt, timeToReach } from './curve.js';
import { el } from './dom.js';

const NS = 'http://www.w3.org/2000/svg';
const LABELS_UP_TO = 4; // cash outs labelled on the chart; beyond, numbers only
const NUMBERS_UP_TO = 12; // cash outs numbered on the chart; beyond, dots only
const TARGET_LINES_UP_TO = 4; // distinct auto cash out targets drawn as lines

const isInt = (v) => Number.isSafeInteger(v);

function svg(parent, tag, attrs, cls) {
  const e = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
  if (cls) e.setAttribute('class', cls);
  if (parent) parent.append(e);
  return e;
}

// phaseAt is when the round's first phase called name began, or null.
function phaseAt(round, name) {
  for (const p of Array.isArray(round.phases) ? round.phases : []) {
    if (p && p.phase === name && isInt(p.at)) return p.at;
  }
  return null;
}

// seconds writes a duration in ms as seconds for the page language.
export function seconds(ms) {
  return t('replay.seconds', { s: i18n.number(ms / 1000, ms < 10000 ? 2 : 1) });
}

// flightOf reads the round's flight:
//   { kind: 'live' | 'betting' (void before take-off) | 'flight',
//     void, duration (ms from take-off to the crash or the interruption),
//     crash (hundredths or null), reached (the multiplier at the end of the
//     flight: the crash point, or where a void round was interrupted) }
export function flightOf(round) {
  const isVoid = round.status === 'void';
  const ended = round.status === 'finished' || isVoid;
  const crash = isInt(round.crash_point) ? round.crash_point : null;
  const out = { kind: 'flight', void: isVoid, duration: 0, crash, reached: crash === null ? 100 : crash };
  if (!ended || crash === null) { out.kind = 'live'; return out; }
  const start = phaseAt(round, 'flying');
  const end = phaseAt(round, isVoid ? 'void' : 'crashed');
  if (start === null) {
    if (isVoid) { out.kind = 'betting'; return out; }
    out.duration = timeToReach(crash);
    return out;
  }
  if (end !== null && end >= start) out.duration = end - start;
  else out.duration = timeToReach(crash);
  if (isVoid) out.reached = Math.min(multiplierAt(out.duration), crash);
  return out;
}

// valueAt is the curve's multiplier ms after take-off, capped at the crash.
function valueAt(f, ms) {
  const m = multiplierAt(ms);
  return f.crash !== null && m > f.crash ? f.crash : m;
}

// niceStep is the smallest of 1, 2, 2.5, 5 times a power of ten at least raw.
function niceStep(raw) {
  if (!(raw > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(raw));
  for (const k of [1, 2, 2.5, 5, 10]) if (k * p >= raw) return k * p;
  return 10 * p;
}

// renderReplay draws data ({round, bets}) into container. Options: mine (the
// player's own bets: "Your bet 1"; else the player's id), currency (for bets
// that name none). Returns { play, stop, destroy }.
export function renderReplay(container, data, opts = {}) {
  const round = data.round || {};
  const bets = Array.isArray(data.bets) ? data.bets : [];
  const f = flightOf(round);
  const fmt = (cents, currency) => money.format(cents, currency || opts.currency || 'EUR', i18n.language());
  const who = (b, n) => (opts.mine ? t('replay.yourBet', { n }) : String(b.player_id ?? ''));

  const fig = el('figure', 'replay');
  const chart = el('div', 'replay-chart');
  const caption = el('figcaption', 'replay-caption');
  const tools = el('div', 'replay-tools');
  const play = el('button', 'replay-play', t('replay.play'));
  play.type = 'button';
  tools.append(play);
  const legend = el('ol', 'replay-legend');
  legend.setAttribute('aria-label', t('replay.legendTitle'));
  fig.append(chart, tools, caption, legend);
  container.replaceChildren(fig);

  // The caption.
  let summary;
  if (f.kind === 'live') summary = el('p', '', t('replay.live'));
  else if (f.kind === 'betting') summary = el('p', 'warn', t('replay.betting', { m: money.multiplier(f.crash) }));
  else if (f.void) summary = el('p', 'warn', t('replay.void', { m: money.multiplier(f.reached), crash: money.multiplier(f.crash), s: seconds(f.duration) }));
  else summary = el('p', '', t('replay.summary', { m: money.multiplier(f.crash), s: seconds(f.duration) }));
  caption.append(summary);
  if (f.void) {
    const rule = el('details', 'replay-rule');
    rule.append(el('summary', '', t('replay.voidRule')), el('p', '', t('help.interrupted')));
    caption.append(rule);
  }

  // The bets: the legend, and the marks on the curve.
  const marks = []; // the cash outs: { n (legend number), m, ms (when priced), label }
  const lost = [];
  const targets = new Set();
  bets.forEach((b, i) => {
    const n = i + 1;
    const name = who(b, n);
    const amount = fmt(b.amount, b.currency) + (b.freebet_id ? ' ' + t('bets.free') : '');
    let text;
    let kind = 'other';
    if (b.status === 'cashed_out' && isInt(b.multiplier)) {
      kind = 'won';
      const payout = isInt(b.payout) ? fmt(b.payout, b.currency) : t('limits.unknown');
      text = t('replay.legendCashout', { who: name, amount, m: money.multiplier(b.multiplier), payout });
      if (f.kind === 'flight') {
        marks.push({ n, m: b.multiplier, ms: timeToReach(b.multiplier), label: t('replay.markCashout', { who: name, m: money.multiplier(b.multiplier), payout }) });
      }
    } else if (b.status === 'lost') {
      kind = 'lost';
      text = t('replay.legendLost', { who: name, amount, m: money.multiplier(f.reached) });
      if (f.kind === 'flight') lost.push({ n, name });
    } else {
      text = t('replay.legendOther', { who: name, amount, status: t('status.' + b.status) });
    }
    if (isInt(b.auto_cashout)) {
      text += ' ' + t('replay.legendAuto', { m: money.multiplier(b.auto_cashout) });
      if (b.status !== 'refused' && b.status !== 'cancelled') targets.add(b.auto_cashout);
    }
    const li = el('li', 'replay-bet ' + kind);
    li.append(el('span', 'replay-key ' + kind), el('span', '', text));
    if (!opts.mine && b.bet_id) li.append(el('code', 'replay-bet-id', b.bet_id));
    legend.append(li);
  });
  if (bets.length === 0) {
    legend.hidden = true;
    caption.append(el('p', 'muted', t(opts.mine ? 'replay.noBetsMine' : 'replay.noBets')));
  }

  if (f.kind !== 'flight') {
    chart.hidden = true;
    tools.hidden = true;
    return { play() {}, stop() {}, destroy() {} };
  }

  // ---- the chart ----

  const maxMark = marks.reduce((a, k) => Math.max(a, k.m), 100);
  const top0 = Math.max(f.reached, maxMark);
  const shownTargets = [...targets].filter((m) => m <= Math.max(top0 * 1.6, 200)).sort((a, b) => a - b);
  const lines = shownTargets.length <= TARGET_LINES_UP_TO ? shownTargets : [];
  const yTopValue = Math.max(top0, ...lines);
  const yMax = Math.max(150, 100 + (yTopValue - 100) * 1.15);
  // A void round's dashed continuation runs to the highest cash out paid by
  // the interruption rule above the multiplier the flight reached.
  const dashTo = f.void && maxMark > f.reached ? timeToReach(maxMark) : f.duration;
  const xMax = Math.max(1000, f.duration, dashTo) * 1.04;

  let nodes = null; // the parts redrawn while playing
  let elapsed = null; // null: the final view
  let raf = 0;
  let t0 = 0;
  let width = 0;

  const svgEl = document.createElementNS(NS, 'svg');
  svgEl.setAttribute('role', 'img');
  svgEl.setAttribute('aria-label', t('replay.figure', { round: String(round.round_id ?? '') }) + '. ' + summary.textContent);
  chart.append(svgEl);

  function build() {
    const W = Math.max(280, Math.floor(chart.clientWidth || 320));
    const H = Math.round(Math.min(360, Math.max(200, W * 0.56)));
    width = chart.clientWidth;
    svgEl.replaceChildren();
    svgEl.setAttribute('viewBox', `0 0 ${W} ${H}`);
    svgEl.setAttribute('width', W);
    svgEl.setAttribute('height', H);

    const yStep = niceStep((yMax - 100) / 4);
    const yTicks = [100]; // then the multiples of the step
    for (let k = Math.ceil((100 + yStep / 2) / yStep); k * yStep <= yMax; k++) yTicks.push(Math.round(k * yStep));
    const yLabels = yTicks.map((v) => money.multiplier(v));
    const left = 12 + 7 * Math.max(...yLabels.map((s) => s.length));
    const right = 12;
    const topPad = 22;
    const bottom = 26;
    const x = (ms) => left + (ms / xMax) * (W - left - right);
    const y = (m) => H - bottom - ((m - 100) / (yMax - 100)) * (H - topPad - bottom);

    // Grid, axes and ticks.
    const grid = svg(svgEl, 'g', {}, 'replay-grid');
    yTicks.forEach((v, i) => {
      svg(grid, 'line', { x1: left, x2: W - right, y1: y(v), y2: y(v) });
      const lab = svg(svgEl, 'text', { x: left - 6, y: y(v), 'text-anchor': 'end', 'dominant-baseline': 'middle' }, 'replay-tick');
      lab.textContent = yLabels[i];
    });
    const xStep = Math.max(500, niceStep(xMax / 5));
    for (let ms = 0; ms <= xMax; ms += xStep) {
      const lab = svg(svgEl, 'text', { x: x(ms), y: H - 8, 'text-anchor': ms === 0 ? 'start' : 'middle' }, 'replay-tick');
      lab.textContent = seconds(ms);
    }
    svg(svgEl, 'path', { d: `M${left} ${topPad / 2}V${H - bottom}H${W - right}` }, 'replay-axis');

    // The auto cash out targets (their labels are placed last, where room is left).
    const targetLabels = [];
    for (const m of lines) {
      svg(svgEl, 'line', { x1: left, x2: W - right, y1: y(m), y2: y(m) }, 'replay-target');
      const lab = svg(svgEl, 'text', { x: left + 4, y: y(m) - 5 }, 'replay-target-label');
      lab.textContent = t('replay.autoLine', { m: money.multiplier(m) });
      targetLabels.push(lab);
    }

    // The curve: the area under it, the flight, a void round's continuation.
    const area = svg(svgEl, 'path', {}, 'replay-area');
    const curve = svg(svgEl, 'path', {}, 'replay-curve');
    let dashed = null;
    if (dashTo > f.duration) {
      const pts = [];
      const n = 60;
      for (let i = 0; i <= n; i++) {
        const ms = f.duration + ((dashTo - f.duration) * i) / n;
        pts.push(`${x(ms).toFixed(1)} ${y(multiplierAt(ms)).toFixed(1)}`);
      }
      dashed = svg(svgEl, 'path', { d: 'M' + pts.join('L') }, 'replay-dashed');
    }

    // Every label is kept inside the plot and off the marks and the labels
    // already placed.
    const taken = [];
    const plot = { x0: left + 2, x1: W - right, y0: 2, y1: H - bottom };
    const boxOf = (node) => {
      let b = null;
      try { b = node.getBBox(); } catch { b = null; }
      if (b && b.width > 0) return { x: b.x, y: b.y, width: b.width, height: b.height };
      const width = node.textContent.length * 6.5;
      return { x: Number(node.getAttribute('x')), y: Number(node.getAttribute('y')) - 12, width, height: 15 };
    };
    const free = (b) => b.x >= plot.x0 - 0.5 && b.x + b.width <= plot.x1 + 0.5 && b.y >= plot.y0 && b.y + b.height <= plot.y1 &&
      !taken.some((o) => b.x < o.x + o.width + 3 && o.x < b.x + b.width + 3 && b.y < o.y + o.height && o.y < b.y + b.height);
    // settle tries the label at each of the candidate x (left edges) and a
    // few vertical offsets; an optional label with no room is removed.
    const settle = (node, xs, optional) => {
      const y0 = Number(node.getAttribute('y'));
      const width = boxOf(node).width;
      for (const dy of [0, -14, 14, -28, 28, -42, 42]) {
        for (const lx of xs) {
          const cx = Math.max(plot.x0, Math.min(lx, plot.x1 - width));
          node.setAttribute('x', cx.toFixed(1));
          node.setAttribute('y', (y0 + dy).toFixed(1));
          const b = boxOf(node);
          if (free(b)) { taken.push(b); return; }
        }
      }
      if (optional) { node.remove(); return; }
      const cx = Math.max(plot.x0, Math.min(xs[0], plot.x1 - width));
      node.setAttribute('x', cx.toFixed(1));
      node.setAttribute('y', y0.toFixed(1));
      taken.push(boxOf(node));
    };
    const widthOf = (node) => boxOf(node).width;
    for (const m of lines) taken.push({ x: left, y: y(m) - 1, width: W - right - left, height: 2 });

    // The end of the flight: the crash, or the interruption.
    const end = svg(svgEl, 'g', {}, f.void ? 'replay-end void' : 'replay-end');
    const ex = x(f.duration);
    const ey = y(f.reached);
    svg(end, 'circle', { cx: ex, cy: ey, r: 6 });
    taken.push({ x: ex - 8, y: ey - 8, width: 16, height: 16 });

    // The cash outs, numbered as in the legend where they do not overlap;
    // dots only when they are many.
    const numbered = marks.length <= NUMBERS_UP_TO;
    const spots = [];
    const markNodes = marks.map((k) => {
      const g = svg(svgEl, 'g', {}, 'replay-mark won');
      const mx = x(Math.min(k.ms, xMax));
      const my = y(k.m);
      const spot = { x: mx - 9, y: my - 9, width: 18, height: 18 };
      if (numbered && !spots.some((o) => spot.x < o.x + o.width && o.x < spot.x + spot.width && spot.y < o.y + o.height && o.y < spot.y + spot.height)) {
        svg(g, 'circle', { cx: mx, cy: my, r: 8 });
        const num = svg(g, 'text', { x: mx, y: my, 'text-anchor': 'middle', 'dominant-baseline': 'central' }, 'replay-mark-num');
        num.textContent = String(k.n);
        spots.push(spot);
        taken.push(spot);
      } else {
        svg(g, 'circle', { cx: mx, cy: my, r: 4 });
      }
      return { g, ms: k.ms, mx, my, k };
    });

    const endLab = svg(end, 'text', { x: ex, y: ey - 12 }, 'replay-end-label');
    endLab.textContent = f.void ? t('replay.interruptedAt', { m: money.multiplier(f.reached) }) : t('phase.crashed', { m: money.multiplier(f.crash) });
    const ew = widthOf(endLab);
    settle(endLab, [ex - ew / 2, ex - ew - 10, ex + 10], false);

    // The bets lost at the crash: a cross on it, their label beside it.
    let lostNode = null;
    if (lost.length) {
      lostNode = svg(svgEl, 'g', {}, 'replay-mark lost');
      svg(lostNode, 'path', { d: `M${ex - 5} ${ey - 5}L${ex + 5} ${ey + 5}M${ex - 5} ${ey + 5}L${ex + 5} ${ey - 5}` });
      const lab = svg(lostNode, 'text', { x: ex, y: ey + 4 }, 'replay-label lost');
      lab.textContent = lost.length === 1 ? t('replay.lostOne', { who: lost[0].name }) : t('replay.lostCount', { count: lost.length });
      const lw = widthOf(lab);
      settle(lab, [ex - lw - 12, ex + 12, ex - lw / 2], false);
    }

    // The cash outs' labels when they are few: beside their mark.
    if (marks.length <= LABELS_UP_TO) {
      for (const m of [...markNodes].sort((a, b) => a.my - b.my)) {
        const lab = svg(m.g, 'text', { x: m.mx, y: m.my + 4 }, 'replay-label');
        lab.textContent = m.k.label;
        const lw = widthOf(lab);
        settle(lab, [m.mx + 12, m.mx - 12 - lw, m.mx - lw / 2], false);
      }
    }
    for (const lab of targetLabels) settle(lab, [left + 4, W - right - widthOf(lab)], true);

    // The multiplier while playing, large, in the middle of the plot.
    const now = svg(svgEl, 'text', { x: (left + W - right) / 2, y: topPad + (H - topPad - bottom) * 0.4, 'text-anchor': 'middle' }, 'replay-now');
    nodes = { x, y, area, curve, dashed, end, lostNode, markNodes, now, baseY: y(100) };
  }

  // update draws the flight up to ms after take-off (null: all of it).
  function update(ms) {
    if (!nodes) return;
    const { x, y, area, curve, dashed, end, lostNode, markNodes, now, baseY } = nodes;
    const upTo = ms === null ? f.duration : Math.min(ms, f.duration);
    const n = Math.max(2, Math.min(240, Math.ceil(upTo / 40)));
    const pts = [];
    for (let i = 0; i <= n; i++) {
      const at = (upTo * i) / n;
      pts.push(`${x(at).toFixed(1)} ${y(valueAt(f, at)).toFixed(1)}`);
    }
    const d = 'M' + pts.join('L');
    curve.setAttribute('d', d);
    curve.setAttribute('class', ms === null && !f.void ? 'replay-curve crashed' : 'replay-curve');
    area.setAttribute('d', `${d}L${x(upTo).toFixed(1)} ${baseY}L${x(0)} ${baseY}Z`);
    const show = (node, on) => { if (node) node.setAttribute('visibility', on ? 'visible' : 'hidden'); };
    const done = ms === null;
    show(dashed, done);
    show(end, done);
    show(lostNode, done);
    for (const k of markNodes) show(k.g, done || k.ms <= ms);
    show(now, !done);
    if (!done) now.textContent = money.multiplier(valueAt(f, upTo));
  }

  function frame(nowTs) {
    elapsed = nowTs - t0;
    if (elapsed >= f.duration) { stop(); return; }
    update(elapsed);
    raf = requestAnimationFrame(frame);
  }

  function start() {
    cancelAnimationFrame(raf);
    t0 = performance.now();
    elapsed = 0;
    play.textContent = t('replay.stop');
    play.setAttribute('aria-pressed', 'true');
    update(0);
    raf = requestAnimationFrame(frame);
  }

  function stop() {
    cancelAnimationFrame(raf);
    raf = 0;
    elapsed = null;
    play.textContent = t('replay.play');
    play.setAttribute('aria-pressed', 'false');
    update(null);
  }

  play.setAttribute('aria-pressed', 'false');
  play.addEventListener('click', () => (raf ? stop() : start()));

  build();
  update(null);
  let observer = null;
  if (typeof ResizeObserver === 'function') {
    observer = new ResizeObserver(() => {
      if (chart.clientWidth === width || chart.clientWidth === 0) return;
      build();
      update(elapsed);
    });
    observer.observe(chart);
  }

  return {
    play: start,
    stop,
    destroy() {
      cancelAnimationFrame(raf);
      raf = 0;
      if (observer) observer.disconnect();
    },
  };
}
