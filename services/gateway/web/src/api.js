// The gateway's HTTP API. Every call resolves (never throws) to
// {ok, status, data, error}: error is the gateway's own {code, message}
// (e.g. planner_unavailable with 503), or {code: "network"} when the
// gateway could not be reached at all.
export async function api(method, path, body, { blob = false } = {}) {
  const init = { method, headers: { Accept: blob ? 'image/png' : 'application/json' }, cache: 'no-store' };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
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
  if (resp.ok) return { ok: true, status: resp.status, data };
  const error = (data && data.error) || { code: `http_${resp.status}`, message: resp.statusText || 'the request failed' };
  return { ok: false, status: resp.status, data, error };
}

export const canOperate = who => who && (who.role === 'operator' || who.role === 'admin');
export const canReview = who => who && (who.role === 'reviewer' || who.role === 'admin');
