// Verifies rounds in the browser with the rules of the server (the chain
// document's "formula" shows their text), from the public chain documents
// only (GET /fairness/chains/{chain_id}):
//   r = the top 52 bits of HMAC-SHA256(key = the round hash's 32 bytes,
//       message = the chain salt's UTF-8 bytes, i.e. its 64 hex characters);
//   crash = min(max_multiplier, max(100, floor(rtp_bp * 2^52 / (100 * (2^52 - r)))))
// in exact integer arithmetic (BigInt), with the CHAIN's salt, rtp_bp and
// max_multiplier;
//   the chain: SHA-256 of the 32 bytes of position k's hash is position
//   k-1's hash, and SHA-256 of position 1's hash is the terminal hash;
//   the salt: lowercase hex of SHA-256(terminal's 32 bytes || v1 || v2 ...),
//   v1.. the 32 bytes of every published contribution, sorted ascending.
// Nothing here touches the page: results are plain objects the page words.

const TWO52 = 2n ** 52n;
const HEX64 = /^[0-9a-f]{64}$/;

// FORMULA_VERSION is the version of the rules above; a chain played with
// another version cannot be verified by this file.
export const FORMULA_VERSION = 1;

// CHECKPOINT_EVERY is the spacing of the published checkpoints.
export const CHECKPOINT_EVERY = 1000;

// available tells whether this browser can compute (WebCrypto needs a secure
// context: https, or http on localhost).
export function available() {
  return typeof crypto !== 'undefined' && !!crypto.subtle;
}

// isHex64 holds for 64 lowercase hex digits: a hash, a salt or a contribution.
export function isHex64(v) {
  return typeof v === 'string' && HEX64.test(v);
}

export function hexToBytes(hex) {
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) throw new Error('hash');
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

export function bytesToHex(bytes) {
  return Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, '0')).join('');
}

async function sha256(bytes) {
  return new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
}

async function drawBytes(hashBytes, salt) {
  const key = await crypto.subtle.importKey('raw', hashBytes, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(salt)));
  return BigInt('0x' + bytesToHex(mac.slice(0, 7)).slice(0, 13));
}

// draw returns r for a round hash (hex) and the published salt.
export async function draw(hashHex, salt) {
  return drawBytes(hexToBytes(hashHex), salt);
}

// crashFromDraw is the arithmetic half of the formula.
export function crashFromDraw(r, rtpBp, maxMultiplier) {
  let c = (BigInt(rtpBp) * TWO52) / (100n * (TWO52 - BigInt(r)));
  if (c < 100n) c = 100n;
  if (c > BigInt(maxMultiplier)) c = BigInt(maxMultiplier);
  return c;
}

// crashPoint recomputes a round's crash point in hundredths (a BigInt).
export async function crashPoint(hashHex, salt, rtpBp, maxMultiplier) {
  return crashFromDraw(await draw(hashHex, salt), rtpBp, maxMultiplier);
}

// previousHash returns SHA-256 of the hash's bytes: the hash one position
// lower in the chain.
export async function previousHash(hashHex) {
  return bytesToHex(await sha256(hexToBytes(hashHex)));
}

// walk applies SHA-256 steps times to the hash's bytes and returns the hex
// of the result (the hash steps positions lower in the chain).
export async function walk(hashHex, steps) {
  let b = hexToBytes(hashHex);
  for (let i = 0; i < steps; i++) b = await sha256(b);
  return bytesToHex(b);
}

function compareBytes(a, b) {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return 0;
}

// salt is the salt rule: the lowercase hex of SHA-256 over the terminal
// hash's 32 bytes followed by the 32 bytes of every contribution value,
// sorted ascending bytewise (duplicates kept).
export async function salt(terminalHex, contributionValuesHex) {
  const values = contributionValuesHex.map(hexToBytes).sort(compareBytes);
  const buf = new Uint8Array(32 * (values.length + 1));
  buf.set(hexToBytes(terminalHex), 0);
  values.forEach((v, i) => buf.set(v, 32 * (i + 1)));
  return bytesToHex(await sha256(buf));
}

const isInt = (v) => Number.isSafeInteger(v);

// BEACON_SCHEME is the only beacon scheme a chain names: drand's unchained
// rounds, BLS signatures on G1, hash-to-curve per RFC 9380.
export const BEACON_SCHEME = 'bls-unchained-g1-rfc9380';

// beaconRound is the round a chain names (table.v1 1.3.0): the first round
// emitted strictly after the window's end (reveal_ends_at, or
// seeding_ends_at on a plain chain; Unix ms) plus one period. With t =
// windowEnd + period: 1 when t is before genesis, else
// floor((t - genesis) / period) + 2.
export function beaconRound(windowEnd, genesisS, periodS) {
  const t = windowEnd + periodS * 1000;
  if (t < genesisS * 1000) return 1;
  return Math.floor((t - genesisS * 1000) / (periodS * 1000)) + 2;
}

// beaconRoundTime is the Unix ms at which the network emits round.
export function beaconRoundTime(round, genesisS, periodS) {
  return (genesisS + (round - 1) * periodS) * 1000;
}

// checkBeacon reads and checks the chain's beacon round, without its BLS
// signature (the game checks it; drand's tools can, as docs/fairness.md
// says):
//   { state: 'none'|'configured'|'waiting'|'fixed', network, round,
//     roundTime, label (a configured value's), ok, errors: [what] }
// 'none': the chain names no beacon; 'configured': a beacon contribution
// without a beacon object, a fixed value from the installation's file (a
// chain from before); 'waiting': the round is named, the salt not fixed yet.
// what: 'data' (a field malformed), 'round' (not the round the rule names),
// 'time' (round_time is not the round's), 'randomness' (not SHA-256 of the
// signature), 'contribution' (the salt has not exactly one beacon value, or
// it is not the randomness), 'label' (the label does not name the round),
// 'early' (the salt was fixed before the round's time).
export async function checkBeacon(chain) {
  const list = Array.isArray(chain.contributions) ? chain.contributions : [];
  const fixed = chain.salt !== undefined && chain.salt !== null;
  const listed = fixed ? list.filter((c) => c && typeof c === 'object' && c.source === 'beacon') : [];
  const b = chain.beacon;
  const res = { state: 'none', network: '', round: 0, roundTime: 0, label: '', ok: true, errors: [] };
  if (b === undefined || b === null) {
    if (listed.length) {
      res.state = 'configured';
      res.label = typeof listed[0].label === 'string' ? listed[0].label : '';
    }
    return res;
  }
  const bad = (what) => { if (!res.errors.includes(what)) res.errors.push(what); res.ok = false; };
  res.state = fixed ? 'fixed' : 'waiting';
  if (typeof b !== 'object' || typeof b.network !== 'string' || !isInt(b.genesis_time) || !isInt(b.period_s) ||
      b.period_s < 1 || !isInt(b.round) || b.round < 1 || !isInt(b.round_time) || b.scheme !== BEACON_SCHEME ||
      !isHex64(b.chain_hash) || typeof b.public_key !== 'string' || !/^[0-9a-f]{192}$/.test(b.public_key)) {
    bad('data');
    return res;
  }
  res.network = b.network;
  res.round = b.round;
  res.roundTime = b.round_time;
  const windowEnd = chain.contribution_rule === 'commit_reveal' ? chain.reveal_ends_at : chain.seeding_ends_at;
  if (!isInt(windowEnd) || beaconRound(windowEnd, b.genesis_time, b.period_s) !== b.round) bad('round');
  if (beaconRoundTime(b.round, b.genesis_time, b.period_s) !== b.round_time) bad('time');
  if (!fixed && (b.signature === undefined || b.signature === null) && (b.randomness === undefined || b.randomness === null)) return res;
  if (typeof b.signature !== 'string' || !/^[0-9a-f]{96}$/.test(b.signature) || !isHex64(b.randomness)) {
    bad('data');
    return res;
  }
  const sig = new Uint8Array(48);
  for (let i = 0; i < 48; i++) sig[i] = parseInt(b.signature.slice(2 * i, 2 * i + 2), 16);
  if (bytesToHex(await sha256(sig)) !== b.randomness) bad('randomness');
  if (!fixed) return res;
  if (listed.length !== 1 || listed[0].value !== b.randomness) bad('contribution');
  if (listed.length === 1 && listed[0].label !== 'drand ' + b.network + ' round ' + b.round) bad('label');
  if (!isInt(chain.salt_fixed_at) || chain.salt_fixed_at < b.round_time) bad('early');
  return res;
}

// settingsError names what makes the chain's settings unusable for the
// formula: '' when they are fine.
export function settingsError(chain) {
  if (!chain || typeof chain !== 'object') return 'chain';
  if (!isHex64(chain.terminal_hash)) return 'terminal';
  if (!isInt(chain.rtp_bp) || chain.rtp_bp < 1 || chain.rtp_bp > 10000) return 'rtp';
  if (!isInt(chain.max_multiplier) || chain.max_multiplier < 101) return 'max';
  if (chain.formula_version !== undefined && chain.formula_version !== FORMULA_VERSION) return 'version';
  return '';
}

// checkSalt recomputes the chain's salt from its terminal hash and published
// contributions, and reads how it was made:
//   { fixed, published, computed, count, operators: [names], beacon: label|null,
//     game, made: 'contributions'|'game_draw'|'legacy'|null, stated, match, sourceOk, ok,
//     error: ''|'pending'|'format'|'none'|'terminal',
//     rule: 'plain'|'commit_reveal', withheld: [names], commitOk }
// On a commit_reveal chain (contribution_rule), commitOk holds when every
// operator's revealed value hashes (SHA-256 of its 32 bytes) to its
// commitment, every withheld one is its commitment itself, and no value is
// published before the salt is fixed.
// fixed is false while the chain is seeding (no salt yet): not a failure in
// itself (ok stays false; error 'pending'). A 'legacy' chain (salt_source
// "legacy", no contributions: recorded before salts were contributed) has
// nothing to recompute: match is null and ok true; the page says what that
// salt does not prove.
export async function checkSalt(chain) {
  const list = Array.isArray(chain.contributions) ? chain.contributions : [];
  const res = {
    fixed: false, published: chain.salt === undefined ? null : chain.salt, computed: null, count: list.length,
    operators: [], beacon: null, game: false, made: null, stated: chain.salt_source || null,
    match: false, sourceOk: false, ok: false, error: '',
    rule: chain.contribution_rule || 'plain', withheld: [], commitOk: true,
  };
  if (res.rule === 'commit_reveal') {
    for (const c of list) {
      if (!c || typeof c !== 'object' || c.source !== 'operator') continue;
      if (!isHex64(c.commitment)) { res.commitOk = false; continue; }
      if (chain.salt === undefined || chain.salt === null) {
        if (c.value !== undefined && c.value !== null) res.commitOk = false; // a value before every commitment was fixed
      } else if (c.withheld === true) {
        res.withheld.push(typeof c.operator === 'string' ? c.operator : '');
        if (c.value !== c.commitment) res.commitOk = false;
      } else if (c.withheld !== false || !isHex64(c.value) || bytesToHex(await sha256(hexToBytes(c.value))) !== c.commitment) {
        res.commitOk = false;
      }
    }
  } else if (res.rule !== 'plain') {
    res.commitOk = false;
  }
  let games = 0;
  let beacons = 0;
  let malformed = false;
  const values = [];
  for (const c of list) {
    if (!c || typeof c !== 'object' || !isHex64(c.value)) { malformed = true; continue; }
    values.push(c.value);
    if (c.source === 'operator') res.operators.push(typeof c.operator === 'string' ? c.operator : '');
    else if (c.source === 'beacon') { beacons++; res.beacon = typeof c.label === 'string' ? c.label : ''; }
    else if (c.source === 'game') games++;
    else malformed = true;
  }
  res.game = games > 0;
  if (chain.salt === undefined || chain.salt === null) {
    res.error = 'pending';
    return res;
  }
  res.fixed = true;
  if (!isHex64(chain.salt) || malformed) { res.error = 'format'; return res; }
  if (!isHex64(chain.terminal_hash)) { res.error = 'terminal'; return res; }
  if (list.length === 0 && res.stated === 'legacy') {
    // A chain recorded before salts were contributed: the server drew its
    // salt with the seed. Nothing to recompute (match stays null), and it
    // protects against the house no more than a game draw.
    res.made = 'legacy';
    res.match = null;
    res.sourceOk = true;
    res.ok = true;
    return res;
  }
  if (list.length === 0) { res.error = 'none'; return res; }
  res.made = res.operators.length > 0 ? 'contributions' : 'game_draw';
  // One value per operator; at most one beacon and one game value; the game
  // adds its own only when no operator contributed.
  const distinct = new Set(res.operators).size === res.operators.length && !res.operators.includes('');
  res.sourceOk = res.stated === res.made && distinct && games <= 1 && beacons <= 1 &&
    (res.made === 'contributions' ? games === 0 : games === 1);
  res.computed = await salt(chain.terminal_hash, values);
  res.match = res.computed === chain.salt;
  res.ok = res.match && res.sourceOk && res.commitOk;
  return res;
}

// seqOf is a round's number in its game: its seq, or read from its round id
// "<game_id>-<seq>"; null when neither says.
function seqOf(round, chain) {
  if (isInt(round.seq)) return round.seq;
  const id = round.round_id;
  const prefix = typeof chain.game_id === 'string' ? chain.game_id + '-' : null;
  if (prefix && typeof id === 'string' && id.startsWith(prefix) && /^[0-9]{1,15}$/.test(id.slice(prefix.length))) {
    return Number(id.slice(prefix.length));
  }
  return null;
}

// positionError tells whether a round's position fits the chain: '' when it
// does, else 'position' (not an integer in 1..length, or not seq - first_seq + 1)
// or 'afterLast' (after a retired chain's last round).
function positionError(round, chain) {
  const pos = round.position;
  if (!isInt(pos) || pos < 1 || (isInt(chain.length) && pos > chain.length)) return 'position';
  const seq = seqOf(round, chain);
  if (seq !== null && isInt(chain.first_seq) && pos !== seq - chain.first_seq + 1) return 'position';
  if (seq !== null && isInt(chain.last_seq) && seq > chain.last_seq) return 'afterLast';
  return '';
}

// checkpointsOf returns the chain's well-formed checkpoints by position.
function checkpointsOf(chain) {
  const out = new Map();
  for (const c of Array.isArray(chain.checkpoints) ? chain.checkpoints : []) {
    if (c && isInt(c.position) && c.position >= 1 && isHex64(c.hash) && !out.has(c.position)) out.set(c.position, c.hash);
  }
  return out;
}

// verifyRound verifies one ended round ({round_id, position, hash,
// crash_point, chain_id, ...}) against its chain document:
//   { ok, sameChain,
//     crash: { ok, r, computed, reported, error: ''|'noSalt'|'settings'|'format' },
//     walk:  { ok, steps, to: 'terminal'|'checkpoint', checkpoint (its position),
//              expected, got, error: ''|'position'|'afterLast'|'format'|'checkpoint' },
//     salt:  checkSalt's result, beacon: checkBeacon's result }
// r and computed are BigInts (null when not computed). Any mismatch is a
// failure (ok false); a salt drawn only by the game is not a mismatch
// (salt.made 'game_draw': the page says what it means).
export async function verifyRound(round, chain) {
  const out = {
    ok: false,
    sameChain: round.chain_id === undefined || round.chain_id === chain.chain_id,
    crash: { ok: false, r: null, computed: null, reported: round.crash_point, error: '' },
    walk: { ok: false, steps: 0, to: 'terminal', checkpoint: 0, expected: null, got: null, error: '' },
    salt: null,
  };
  const hashOk = isHex64(round.hash);

  // The crash point, with the chain's settings.
  const settings = settingsError(chain);
  if (!hashOk || !isInt(round.crash_point)) out.crash.error = 'format';
  else if (settings) out.crash.error = 'settings';
  else if (!isHex64(chain.salt)) out.crash.error = 'noSalt';
  else {
    out.crash.r = await draw(round.hash, chain.salt);
    out.crash.computed = crashFromDraw(out.crash.r, chain.rtp_bp, chain.max_multiplier);
    out.crash.ok = out.crash.computed === BigInt(round.crash_point);
  }

  // The walk down to the highest checkpoint below the round, or the terminal.
  const w = out.walk;
  w.error = positionError(round, chain);
  if (!w.error && (!hashOk || !isHex64(chain.terminal_hash))) w.error = 'format';
  if (!w.error) {
    const cps = checkpointsOf(chain);
    const pos = round.position;
    if (cps.has(pos) && cps.get(pos) !== round.hash) {
      // The chain publishes another hash for this very position.
      w.error = 'checkpoint';
      w.checkpoint = pos;
      w.to = 'checkpoint';
      w.expected = cps.get(pos);
      w.got = round.hash;
    } else {
      let below = 0;
      for (const p of cps.keys()) if (p < pos && p > below) below = p;
      w.to = below === 0 ? 'terminal' : 'checkpoint';
      w.checkpoint = below;
      w.expected = below === 0 ? chain.terminal_hash : cps.get(below);
      w.steps = pos - below;
      w.got = await walk(round.hash, w.steps);
      w.ok = w.got === w.expected;
    }
  }

  out.salt = await checkSalt(chain);
  out.beacon = await checkBeacon(chain);
  out.ok = out.sameChain && out.crash.ok && w.ok && out.salt.ok && (out.salt.made === 'legacy' || out.beacon.ok);
  return out;
}

// ChainVerifier verifies every ended round of one chain, fed page by page in
// position order (GET /fairness/chains/{id}/rounds): each round's crash
// point, each link (SHA-256 of position k's hash is position k-1's hash, of
// position 1's the terminal's; a missing position is a gap and a failure),
// the checkpoints against the listed rounds, the settings and the salt.
//
//   const v = new ChainVerifier(chain); await v.start();
//   for each page: await v.add(page.items);
//   const summary = v.finish();
//
// A failure is { kind, ...details }, kinds:
//   settings {what}; noSalt; salt {computed, published, count}; saltSource;
//   saltData {count} (salt or contributions malformed, or none published);
//   commitment; beacon {what} (checkBeacon's errors); checkpointBad {position};
//   format {round}; position {round, position, seq}; afterLast {round, seq};
//   order {round, position}; gap {round, from, to};
//   link {round, position, below, got, expected}; crash {round, position, computed, reported};
//   checkpoint {position, hash, listed}; checkpointMissing {position};
//   tail {from, to} (positions a retired chain served that are not listed);
//   paging {from} (added by the reader of the pages, through fail()).
// The first `keep` failures are kept; `failures` counts them all.
export class ChainVerifier {
  constructor(chain, keep = 50) {
    this.chain = chain;
    this.keep = keep;
    this.kept = [];
    this.failures = 0;
    this.rounds = 0;
    this.failedRounds = 0;
    this.lastPosition = 0;
    this.lastHash = isHex64(chain.terminal_hash) ? chain.terminal_hash : null;
    this.checkpoints = checkpointsOf(chain);
    this.checkpointsSeen = new Set();
    this.canCrash = false;
    this.saltResult = null;
    this.beaconResult = null;
    this.noSaltFailed = false;
    this.neverPlayed = false;
  }

  fail(f) {
    this.failures++;
    if (this.kept.length < this.keep) this.kept.push(f);
  }

  // start checks the chain document itself: settings, salt, checkpoints' form.
  async start() {
    const c = this.chain;
    const what = settingsError(c);
    if (what) this.fail({ kind: 'settings', what });
    this.saltResult = await checkSalt(c);
    const s = this.saltResult;
    // A chain retired during its seeding window, before its first round
    // (last_seq = first_seq - 1), was never played: it needs no salt.
    this.neverPlayed = c.status === 'retired' && isInt(c.last_seq) && isInt(c.first_seq) && c.last_seq === c.first_seq - 1;
    if (!s.commitOk) this.fail({ kind: 'commitment' });
    this.beaconResult = await checkBeacon(c);
    if (!this.neverPlayed && s.made !== 'legacy') {
      for (const what of this.beaconResult.errors) this.fail({ kind: 'beacon', what });
    }
    if (s.error === 'pending') {
      if (c.status !== 'seeding' && !this.neverPlayed) this.fail({ kind: 'noSalt' });
    } else if (s.error) {
      this.fail({ kind: 'saltData', count: s.count });
    } else {
      if (s.match === false) this.fail({ kind: 'salt', computed: s.computed, published: s.published, count: s.count });
      if (!s.sourceOk) this.fail({ kind: 'saltSource' });
    }
    for (const cp of Array.isArray(c.checkpoints) ? c.checkpoints : []) {
      const ok = cp && isInt(cp.position) && cp.position >= 1 && cp.position % CHECKPOINT_EVERY === 0 &&
        isHex64(cp.hash) && (!isInt(c.length) || cp.position <= c.length) &&
        (!isInt(c.first_seq) || cp.seq === c.first_seq + cp.position - 1);
      if (!ok) this.fail({ kind: 'checkpointBad', position: cp && isInt(cp.position) ? cp.position : 0 });
    }
    this.canCrash = !what && isHex64(c.salt);
  }

  // add verifies the next rounds (ascending by position).
  async add(items) {
    const c = this.chain;
    // The hashing of a page runs at once; the comparisons follow in order.
    const computed = await Promise.all(items.map(async (it) => {
      if (!it || !isHex64(it.hash)) return null;
      const b = hexToBytes(it.hash);
      const [prev, r] = await Promise.all([sha256(b), this.canCrash ? drawBytes(b, c.salt) : Promise.resolve(null)]);
      return { prev: bytesToHex(prev), r };
    }));
    for (let i = 0; i < items.length; i++) {
      const it = items[i];
      const before = this.failures;
      this.rounds++;
      const round = it && typeof it.round_id === 'string' ? it.round_id : '#' + this.rounds;
      const good = it && typeof it === 'object' && typeof it.round_id === 'string' && isInt(it.position) &&
        isHex64(it.hash) && isInt(it.crash_point) && (it.status === 'finished' || it.status === 'void');
      if (!good) {
        this.fail({ kind: 'format', round });
        this.failedRounds++;
        continue;
      }
      const pos = it.position;
      const perr = positionError(it, c);
      if (perr === 'position') this.fail({ kind: 'position', round, position: pos, seq: seqOf(it, c) });
      if (perr === 'afterLast') this.fail({ kind: 'afterLast', round, seq: seqOf(it, c) });
      if (this.canCrash) {
        const got = crashFromDraw(computed[i].r, c.rtp_bp, c.max_multiplier);
        if (got !== BigInt(it.crash_point)) this.fail({ kind: 'crash', round, position: pos, computed: got, reported: it.crash_point });
      }
      if (pos <= this.lastPosition) {
        // Out of order or listed twice: no link to check from here.
        this.fail({ kind: 'order', round, position: pos });
      } else {
        if (pos > this.lastPosition + 1) this.fail({ kind: 'gap', round, from: this.lastPosition + 1, to: pos - 1 });
        if (this.lastHash !== null) {
          const steps = pos - this.lastPosition;
          const got = steps === 1 ? computed[i].prev : await walk(it.hash, steps);
          if (got !== this.lastHash) this.fail({ kind: 'link', round, position: pos, below: this.lastPosition, got, expected: this.lastHash });
        }
        this.lastPosition = pos;
        this.lastHash = it.hash;
      }
      if (this.checkpoints.has(pos)) {
        this.checkpointsSeen.add(pos);
        if (this.checkpoints.get(pos) !== it.hash) this.fail({ kind: 'checkpoint', position: pos, hash: this.checkpoints.get(pos), listed: it.hash });
      }
      if (!this.canCrash && this.saltResult && this.saltResult.error === 'pending' && !this.noSaltFailed && c.status === 'seeding') {
        // A round played on a chain that publishes no salt.
        this.noSaltFailed = true;
        this.fail({ kind: 'noSalt' });
      }
      // A round whose crash point could not be computed is not verified.
      if (this.failures > before || !this.canCrash) this.failedRounds++;
    }
  }

  // finish ends the check: the checkpoints with no listed round are failures
  // (the chain document is read before the rounds). complete is false when the
  // rounds were not all read (stopped, or a page failed): the missing
  // checkpoints are then not counted.
  finish(complete = true) {
    const c = this.chain;
    if (complete && c.status === 'retired' && isInt(c.last_seq) && isInt(c.first_seq)) {
      // Every round a retired chain served has ended: none may be missing at
      // the end either.
      const served = c.last_seq - c.first_seq + 1;
      if (served > this.lastPosition) this.fail({ kind: 'tail', from: this.lastPosition + 1, to: served });
    }
    if (complete) {
      for (const p of [...this.checkpoints.keys()].sort((a, b) => a - b)) {
        if (!this.checkpointsSeen.has(p)) this.fail({ kind: 'checkpointMissing', position: p });
      }
    }
    return {
      ok: this.failures === 0,
      rounds: this.rounds,
      verified: this.rounds - this.failedRounds,
      failures: this.failures,
      first: this.kept,
      salt: this.saltResult,
      beacon: this.beaconResult,
      neverPlayed: this.neverPlayed,
      lastPosition: this.lastPosition,
    };
  }
}
