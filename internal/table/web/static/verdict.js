// The wording of one round's verification, shared by the table's fairness
// and replay dialogs (app.js) and the support page (support.js): from an
// ended round ({round_id, seq?, hash, crash_point, chain_id, position}) and
// its chain's public document (GET /fairness/chains/{chain_id}), the lines
// to show, each { text, cls } with cls '' | 'good' | 'warn' | 'bad'. The
// lines come together once everything is computed.

import * as i18n from './i18n.js';
import { t } from './i18n.js';
import * as money from './money.js';
import * as fair from './fairness.js';

// verdict verifies round; loadChain(chainId) returns the chain document or
// throws an error whose status is 0 for a network failure.
export async function verdict(round, loadChain) {
  const lines = [];
  const add = (text, cls = '') => lines.push({ text, cls });
  add(t('fairness.hash', { hash: round.hash }));
  if (!round.chain_id) {
    add(t('fairness.noChain'), 'warn');
    return lines;
  }
  add(t('fairness.position', { chain: round.chain_id, position: round.position }));
  let chain;
  try {
    chain = await loadChain(round.chain_id);
  } catch (err) {
    add(err && err.status === 0 ? t('error.network') : t('fairness.chainUnavailable', { chain: round.chain_id }), 'bad');
    return lines;
  }
  if (!fair.available()) {
    add(t('fairness.noCrypto'), 'bad');
    return lines;
  }
  let res;
  try {
    res = await fair.verifyRound(round, chain);
  } catch {
    add(t('fairness.noCrypto'), 'bad');
    return lines;
  }
  if (!res.sameChain) add(t('fairness.otherChain'), 'bad');

  // The crash point.
  const c = res.crash;
  if (c.error === 'noSalt') add(t('fairness.noSalt'), 'bad');
  else if (c.error === 'settings') add(t('fairness.badSettings'), 'bad');
  else if (c.error) add(t('fairness.badData'), 'bad');
  else {
    add(t('fairness.r', { r: c.r.toString() }));
    const vars = { computed: money.multiplier(c.computed), reported: money.multiplier(round.crash_point) };
    if (c.ok) add(t('fairness.match', vars), 'good');
    else add(t('fairness.mismatch', vars), 'bad');
  }

  // The walk down the chain.
  const w = res.walk;
  if (w.error === 'position' || w.error === 'afterLast') add(t('fairness.walkPosition', { position: round.position }), 'bad');
  else if (w.error === 'checkpoint') add(t('fairness.walkCheckpointDiffers', { position: w.checkpoint }), 'bad');
  else if (w.error) add(t('fairness.badData'), 'bad');
  else if (w.to === 'terminal') {
    if (w.ok) add(t('fairness.walkTerminal', { steps: w.steps }), 'good');
    else add(t('fairness.walkBrokenTerminal', { steps: w.steps }), 'bad');
  } else if (w.ok) {
    add(t('fairness.walkCheckpoint', { steps: w.steps, position: w.checkpoint }), 'good');
  } else {
    add(t('fairness.walkBrokenCheckpoint', { steps: w.steps, position: w.checkpoint }), 'bad');
  }

  // The salt.
  const s = res.salt;
  if (s.error === 'pending') {
    // No salt: the crash line above already failed.
  } else if (s.error) {
    add(t('fairness.saltData'), 'bad');
  } else if (s.made === 'legacy') {
    add(t('fairness.saltLegacy'), 'warn');
  } else {
    if (s.match) add(t('fairness.saltOk', { count: s.count }), 'good');
    else add(t('fairness.saltMismatch', { count: s.count, computed: s.computed }), 'bad');
    if (!s.sourceOk) add(t('fairness.saltSourceWrong'), 'bad');
    if (s.made === 'contributions') {
      add(t('fairness.saltByContributions'), 'good');
      add(t('fairness.saltOperators', { count: s.operators.length, names: s.operators.join(', ') }));
    } else {
      add(t('fairness.saltByGame'), 'warn');
    }
    if (s.beacon !== null) add(t('fairness.saltBeacon', { label: s.beacon }));
  }
  if (s.made !== 'legacy' && res.beacon) for (const l of beaconLines(res.beacon)) add(l.text, l.cls);
  if (res.ok) add(t('fairness.allOk'), 'good');
  else add(t('fairness.failed'), 'bad');
  return lines;
}

const BEACON_FAIL = {
  data: 'chains.failBeaconData', round: 'chains.failBeaconRound', time: 'chains.failBeaconTime',
  randomness: 'chains.failBeaconRandomness', contribution: 'chains.failBeaconContribution',
  label: 'chains.failBeaconLabel', early: 'chains.failBeaconEarly',
};

// beaconFailure words one of fairness.checkBeacon's errors.
export function beaconFailure(what) {
  return Object.prototype.hasOwnProperty.call(BEACON_FAIL, what) ? t(BEACON_FAIL[what]) : String(what);
}

// beaconLines words fairness.checkBeacon's result: which beacon and round,
// or that the chain waits for it, names none, or took a configured value;
// its failures; and that the BLS signature is not checked here.
export function beaconLines(b) {
  const lines = [];
  const add = (text, cls = '') => lines.push({ text, cls });
  const vars = { network: b.network, round: String(b.round), time: b.roundTime ? i18n.dateTime(b.roundTime) : '' };
  if (b.state === 'none') add(t('chains.beaconNone'), 'warn');
  else if (b.state === 'configured') add(t('chains.beaconConfigured', { label: b.label }), 'warn');
  else if (b.errors.includes('data')) add(beaconFailure('data'), 'bad');
  else {
    add(t(b.state === 'waiting' ? 'chains.beaconWaiting' : 'chains.beaconNamed', vars));
    for (const what of b.errors) add(beaconFailure(what), 'bad');
    if (b.state === 'fixed' && b.ok) add(t('chains.beaconChecked'), 'good');
    add(t('chains.beaconBls'));
  }
  return lines;
}
