// Money is an integer count of cents of the session currency. Nothing here
// uses floating point on an amount: formatting and parsing work on BigInt and
// strings.

// Minor units per currency (ISO 4217 exponents); two for any other.
const EXPONENTS = { BHD: 3, BIF: 0, CLP: 0, DJF: 0, GNF: 0, IQD: 3, ISK: 0, JOD: 3, JPY: 0, KMF: 0, KRW: 0, KWD: 3,
  LYD: 3, OMR: 3, PYG: 0, RWF: 0, TND: 3, UGX: 0, UYI: 0, VND: 0, VUV: 0, XAF: 0, XOF: 0, XPF: 0 };

export function exponent(currency) {
  return Object.prototype.hasOwnProperty.call(EXPONENTS, currency) ? EXPONENTS[currency] : 2;
}

const LOCALES = { pt: 'pt-BR', en: 'en-GB', es: 'es-ES' };

// format writes cents in the currency's units for the language, e.g. 123456
// BRL in pt: "R$ 1.234,56".
export function format(cents, currency, lang) {
  const d = exponent(currency);
  let v = BigInt(cents);
  const neg = v < 0n;
  if (neg) v = -v;
  const unit = 10n ** BigInt(d);
  const whole = v / unit;
  const frac = (v % unit).toString().padStart(d, '0');
  const locale = LOCALES[lang] || 'en-GB';
  let parts;
  try {
    parts = new Intl.NumberFormat(locale, { style: 'currency', currency, minimumFractionDigits: d, maximumFractionDigits: d }).formatToParts(1);
  } catch {
    parts = [{ type: 'integer', value: '1' }, { type: 'decimal', value: '.' }, { type: 'fraction', value: '0' }, { type: 'literal', value: ' ' }, { type: 'currency', value: currency }];
  }
  const grouped = new Intl.NumberFormat(locale, { maximumFractionDigits: 0 }).format(whole);
  let out = '';
  let intDone = false;
  for (const p of parts) {
    if (p.type === 'integer' || p.type === 'group') {
      if (!intDone) { out += grouped; intDone = true; }
    } else if (p.type === 'fraction') {
      out += frac;
    } else if (p.type === 'decimal') {
      if (d > 0) out += p.value;
    } else {
      out += p.value;
    }
  }
  return (neg ? '-' : '') + out;
}

// plain writes cents without the currency symbol, with a dot: "12.50".
export function plain(cents, currency) {
  const d = exponent(currency);
  const v = BigInt(cents);
  if (d === 0) return v.toString();
  const unit = 10n ** BigInt(d);
  return `${v / unit}.${(v % unit).toString().padStart(d, '0')}`;
}

// parse reads an amount typed by the player ("12", "12.5", "12,50") into
// cents; null when it is not an amount of this currency.
export function parse(text, currency) {
  const d = exponent(currency);
  const s = String(text).trim().replace(',', '.');
  const m = /^(\d{1,15})(?:\.(\d*))?$/.exec(s);
  if (!m) return null;
  const frac = m[2] || '';
  if (frac.length > d) return null;
  return BigInt(m[1]) * 10n ** BigInt(d) + BigInt((frac + '0'.repeat(d)).slice(0, d) || '0');
}

// payout is floor(stake * multiplier / 100), capped at maxWin (when known).
export function payout(stake, multiplier, maxWin) {
  let p = (BigInt(stake) * BigInt(multiplier)) / 100n;
  if (maxWin !== undefined && maxWin !== null && p > BigInt(maxWin)) p = BigInt(maxWin);
  return p;
}

// multiplier writes hundredths as "2.31x".
export function multiplier(m) {
  const v = BigInt(m);
  return `${v / 100n}.${(v % 100n).toString().padStart(2, '0')}x`;
}

// parseMultiplier reads "2", "2.5" or "2.50" into hundredths; null otherwise.
export function parseMultiplier(text) {
  const m = /^(\d{1,7})(?:[.,](\d{0,2}))?$/.exec(String(text).trim());
  if (!m) return null;
  return Number(m[1]) * 100 + Number(((m[2] || '') + '00').slice(0, 2));
}
