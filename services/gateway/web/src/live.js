// Live updates: the progress stream (GET /api/events) and a request's own
// story (POST /api/web/chat).
//
// The stream reconnects by itself with Last-Event-ID (kept in sessionStorage,
// so a reload resumes too). Ids are opaque strings ("<instance>-<n>"). When
// the gateway says events were missed (a `gap` event: restarted, evicted,
// executor events lost), the page shows it. A 401 means the page's session is
// gone (a gateway restart forgets sessions; a revoked token ends them): the
// page says how to sign in again and keeps trying, so signing in from another
// tab of this browser brings this one back.
import { sseParser, pump } from './sse.js';
import { applyProgress, setPlanned, touch } from './store.js';

const KEY = 'blendmq.lastEventId';
const listeners = { state: new Set(), gap: new Set(), end: new Set(), scene: new Set() };
export const onLive = (what, fn) => { listeners[what].add(fn); return () => listeners[what].delete(fn); };
const emit = (what, v) => listeners[what].forEach(f => f(v));

export const live = { state: 'connecting', lastId: null, since: null, error: null, reconnects: 0 };
function setState(state, extra = {}) {
  Object.assign(live, { state, error: null }, extra);
  emit('state', { ...live });
}

const sleep = ms => new Promise(r => setTimeout(r, ms));

function storedId() { try { return sessionStorage.getItem(KEY); } catch { return null; } }
function storeId(id) { try { sessionStorage.setItem(KEY, id); } catch { /* private mode */ } }

export async function startEvents() {
  live.lastId = storedId();
  let retry = 2000, failures = 0;
  for (;;) {
    const headers = { Accept: 'text/event-stream' };
    if (live.lastId) headers['Last-Event-ID'] = live.lastId;
    let resp = null;
    try {
      resp = await fetch('/api/events', { headers, cache: 'no-store' });
    } catch (e) {
      resp = null;
    }
    if (resp && resp.ok) {
      failures = 0;
      if (live.state !== 'live') setState('live', { since: Date.now(), reconnects: live.reconnects + (live.since ? 1 : 0) });
      const feed = sseParser({
        onId: id => { live.lastId = id; storeId(id); },
        onRetry: ms => { retry = Math.min(Math.max(ms, 500), 10000); },
        onEvent: (type, data) => {
          let body;
          try { body = JSON.parse(data); } catch { return; }
          if (type === 'progress') {
            if (body.event === 'scene') { emit('scene', body); return; }   // a scene command changed it (reset): no plan
            applyProgress(body);
            if ((body.event === 'plan' || body.event === 'script') && body.status && body.status !== 'started') emit('end', body);
          } else if (type === 'gap') emit('gap', body);
        },
      });
      try { await pump(resp, feed); } catch { /* the connection broke: reconnect */ }
      failures++;
      setState('reconnecting');
    } else if (resp && resp.status === 401) {
      failures++;
      let error = null;
      try { error = (await resp.json()).error; } catch { /* no body */ }
      setState('signed-out', { error });
      await sleep(5000);
      continue;
    } else if (resp && resp.status === 400 && live.lastId) {
      // an id this gateway cannot place (not one of its own, nor an older gateway's): start afresh
      live.lastId = null;
      try { sessionStorage.removeItem(KEY); } catch { /* private mode */ }
      continue;
    } else {
      failures++;
      let error = { code: 'network', message: 'the gateway is not reachable' };
      if (resp) try { error = (await resp.json()).error || error; } catch { error = { code: `http_${resp.status}`, message: resp.statusText }; }
      setState('reconnecting', { error });
    }
    await sleep(failures <= 1 ? 500 : Math.min(retry * (failures - 1), 10000));   // soon once, then back off
  }
}

// Start a chat whose story streams back. Resolves {plan_id} once the gateway
// took the request, or {error} when it refused it (the story goes on in the
// background, into the store).
export async function startChat(prompt, keepPartial) {
  let resp;
  try {
    resp = await fetch('/api/web/chat', {
      method: 'POST', cache: 'no-store',
      headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream' },
      body: JSON.stringify({ prompt, keep_partial: keepPartial }),
    });
  } catch (e) {
    return { error: { code: 'network', message: `the gateway is not reachable (${e.message})` } };
  }
  if (!resp.ok || !(resp.headers.get('Content-Type') || '').includes('text/event-stream')) {
    let error = { code: `http_${resp.status}`, message: resp.statusText || 'the request failed' };
    try { error = (await resp.json()).error || error; } catch { /* no body */ }
    return { error };
  }
  let resolveStart;
  const started = new Promise(r => { resolveStart = r; });
  let id = null, ended = false;
  const on = fn => id && touch(id, fn);
  const feed = sseParser({
    onEvent: (type, data) => {
      let b;
      try { b = JSON.parse(data); } catch { return; }
      switch (type) {
      case 'accepted':
        id = b.plan_id;
        touch(id, p => { p.cid = b.cid; p.prompt = prompt; p.kind = 'chat'; p.mine = true; if (p.state === 'seen') p.state = 'planning'; });
        resolveStart({ plan_id: id });
        break;
      case 'plan.note':
        on(p => p.notes.push(b.text));
        break;
      case 'chat.planned':
        on(p => {
          setPlanned(p, b.plan);
          Object.assign(p, { source: b.source, title: b.recipe || b.title, parts: b.parts, notUnderstood: b.not_understood });
          if (Array.isArray(b.notes)) p.notes.push(...b.notes.map(n => (typeof n === 'string' ? n : JSON.stringify(n))));
          if (p.state === 'planning') p.state = 'validating';
        });
        break;
      case 'validate.reply':
        on(p => { p.verdict = b; if (!b.accepted) p.state = 'rejected'; else if (p.state === 'validating') p.state = 'queued'; });
        break;
      case 'execute.accepted':
        on(p => { p.position = b.position; });
        break;
      case 'progress':
        applyProgress(b);
        break;
      case 'execute.result':
        ended = true;
        on(p => { p.result = b; p.state = b.status || p.state; if (b.rollback) p.rollback = b.rollback; });
        break;
      case 'error':
        ended = true;
        on(p => { p.error = b; p.state = b.code === 'cancelled' ? 'cancelled' : 'error'; });
        break;
      default:
        break;
      }
    },
  });
  pump(resp, feed).catch(() => {}).finally(() => {
    if (!id) resolveStart({ error: { code: 'network', message: 'the connection closed before the gateway took the request' } });
    else if (!ended) on(p => { p.storyCut = true; });
  });
  return started;
}
