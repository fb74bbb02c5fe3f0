// http.js: how the public pages read their documents (the chains, a support
// link's round): a plain GET for JSON of this origin, with no session and no
// cookie.

// HTTPError is a document that could not be read: status is the HTTP status,
// 0 when no answer came (the network), -1 when a success was not JSON; body
// is the answer's JSON when it had one (the error's code).
export class HTTPError extends Error {
  constructor(status, body) {
    super('HTTP ' + status);
    this.status = status;
    this.body = body;
  }
}

// getJSON returns the JSON object at url, or throws an HTTPError.
export async function getJSON(url) {
  let res;
  try {
    res = await fetch(url, { headers: { Accept: 'application/json' }, cache: 'no-store', credentials: 'omit' });
  } catch {
    throw new HTTPError(0, null);
  }
  let data = null;
  try { data = await res.json(); } catch { data = null; }
  if (!res.ok || !data || typeof data !== 'object') throw new HTTPError(res.ok ? -1 : res.status, data);
  return data;
}
