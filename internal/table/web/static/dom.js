// dom.js: the small DOM helpers the public pages share (the chains, the
// support page, the replay). It builds elements from text only: nothing it
// makes is parsed as HTML, so no text of a document can become markup.
import { t } from './i18n.js';

// el is a new element with a class and a text, both optional.
export function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = text;
  return e;
}

// code is text shown as code (a hash, an id).
export function code(text) {
  return el('code', '', text);
}

// fact adds a term (the translation of labelKey) and its value, text or a
// node, to a description list, and returns the value's element.
export function fact(dl, labelKey, value) {
  dl.append(el('dt', '', t(labelKey)));
  const dd = el('dd');
  if (value instanceof Node) dd.append(value);
  else dd.textContent = value;
  dl.append(dd);
  return dd;
}
