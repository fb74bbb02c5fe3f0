// Player-facing text. Every string the page shows comes from the dictionary of
// the session language (static/i18n/{pt,en,es}.json); the server reads the
// same files for its error messages.

export const LANGUAGES = ['pt', 'en', 'es'];

let dict = {};
let current = 'en';

// load fetches the dictionary of lang (pt, en or es; anything else: fallback).
export async function load(lang, fallback) {
  const want = LANGUAGES.includes(lang) ? lang : (LANGUAGES.includes(fallback) ? fallback : 'en');
  const res = await fetch(`/static/i18n/${want}.json`, { cache: 'no-cache' });
  dict = await res.json();
  current = want;
  document.documentElement.lang = want;
  return want;
}

export function language() { return current; }

// pick returns the first of the candidates that is a language of the page
// (a browser tag such as "pt-BR" counts as "pt"), else fallback.
export function pick(candidates, fallback = 'en') {
  for (const c of candidates) {
    const l = String(c || '').slice(0, 2).toLowerCase();
    if (LANGUAGES.includes(l)) return l;
  }
  return fallback;
}

const LOCALES = { pt: 'pt-BR', en: 'en-GB', es: 'es-ES' };

// number writes a number with the language's grouping, with at most digits
// decimals (none by default).
export function number(n, digits = 0) {
  try {
    return new Intl.NumberFormat(LOCALES[current] || 'en-GB', { maximumFractionDigits: digits }).format(n);
  } catch {
    return String(n);
  }
}

// dateTime writes an instant (epoch milliseconds) in the page language, in
// the browser's time zone, with the zone named. Options: utc (in UTC instead)
// and millis (with the milliseconds).
export function dateTime(ms, { utc = false, millis = false } = {}) {
  const opts = { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit', timeZoneName: 'short' };
  if (utc) opts.timeZone = 'UTC';
  if (millis) opts.fractionalSecondDigits = 3;
  try {
    return new Intl.DateTimeFormat(LOCALES[current] || 'en-GB', opts).format(new Date(ms));
  } catch {
    return new Date(ms).toISOString();
  }
}

// t returns the text of key with {name} placeholders replaced.
export function t(key, vars) {
  let s = Object.prototype.hasOwnProperty.call(dict, key) ? dict[key] : key;
  if (vars) {
    for (const [k, v] of Object.entries(vars)) s = s.split(`{${k}}`).join(String(v));
  }
  return s;
}

// setText writes the text of key into node.
export function setText(node, key, vars) {
  if (node) node.textContent = t(key, vars);
}

// apply fills every [data-i18n] element and [data-i18n-attr] attribute under root.
export function apply(root = document) {
  for (const el of root.querySelectorAll('[data-i18n]')) el.textContent = t(el.dataset.i18n);
  for (const el of root.querySelectorAll('[data-i18n-attr]')) {
    for (const pair of el.dataset.i18nAttr.split(';')) {
      const [attr, key] = pair.split(':');
      if (attr && key) el.setAttribute(attr.trim(), t(key.trim()));
    }
  }
}
