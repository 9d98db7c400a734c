// The gateway's HTTP API. Every call resolves (never throws) to
// {ok, status, data, error}: error is the gateway's own {code, message}
// (e.g. planner_unavailable with 503), or {code: "network"} when the
// gateway could not be reached at all.
//
// Every call that changes something is JSON (Content-Type: application/json, {} when there is no
// body) and carries the session's anti-CSRF nonce, which only this origin can read (GET /api/whoami):
// a page of another origin can make the browser send the cookie, but not these.
let csrf = '';
export async function api(method, path, body, { blob = false, retried = false } = {}) {
  const init = { method, headers: { Accept: blob ? 'image/png' : 'application/json' }, cache: 'no-store' };
  if (method !== 'GET' && method !== 'HEAD') {
    init.headers['Content-Type'] = 'application/json';
    init.body = body === undefined ? '{}' : typeof body === 'string' ? body : JSON.stringify(body);
    if (csrf) init.headers['X-Blendmq-Csrf'] = csrf;
  }
  let resp;
  try {
    resp = await fetch(path, init);
  } catch (e) {
    return { ok: false, status: 0, error: { code: 'network', message: `the gateway is not reachable (${e.message})` } };
  }
  let data = null;
  const type = resp.headers.get('Content-Type') || '';
  try {
    if (type.includes('application/json')) data = await resp.json();
    else if (blob && resp.ok) data = await resp.blob();
  } catch (e) {
    return { ok: false, status: resp.status, error: { code: 'bad_response', message: `unreadable answer: ${e.message}` } };
  }
  if (resp.ok && path === '/api/whoami' && data && data.csrf) csrf = data.csrf;
  if (resp.status === 403 && data && data.error && data.error.code === 'csrf' && !retried) {
    const me = await api('GET', '/api/whoami');          // a nonce of a newer session: fetch it, try once more
    if (me.ok) return api(method, path, body, { blob, retried: true });
  }
  if (resp.ok) return { ok: true, status: resp.status, data };
  const error = (data && data.error) || { code: `http_${resp.status}`, message: resp.statusText || 'the request failed' };
  return { ok: false, status: resp.status, data, error };
}

// operator+reviewer: the page's own key (a person who both builds and confirms)
export const canOperate = who => who && ['operator', 'operator+reviewer', 'admin'].includes(who.role);
export const canReview = who => who && ['reviewer', 'operator+reviewer', 'admin'].includes(who.role);
