// Scene: a preview render after each plan (the executor's render_preview) and the objects, a page at a time.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../api.js';
import { onLive } from '../live.js';
import { ErrorNote, time } from '../ui.jsx';

const PAGE = 20;
const vec = v => (Array.isArray(v) ? v.map(x => Number(x).toFixed(2)).join(', ') : '');

export function SceneScreen() {
  const [preview, setPreview] = useState({ url: null, at: 0, after: null, error: null, busy: false });
  const [objects, setObjects] = useState({ list: [], count: 0, error: null, loading: true });
  const [page, setPage] = useState(0);
  const state = useRef({ busy: false, again: false, url: null, alive: true });
  const pageRef = useRef(0);

  async function render(after) {
    const s = state.current;
    if (s.busy) { s.again = after || true; return; }      // one render at a time; the newest wish wins
    s.busy = true;
    setPreview(p => ({ ...p, busy: true }));
    const r = await api('GET', '/api/web/preview.png?width=640&height=480', undefined, { blob: true });
    s.busy = false;
    if (!s.alive) return;
    if (r.ok) {
      if (s.url) URL.revokeObjectURL(s.url);
      s.url = URL.createObjectURL(r.data);
      setPreview({ url: s.url, at: Date.now(), after: after || null, error: null, busy: false });
    } else setPreview(p => ({ ...p, error: r.error, busy: false }));
    if (s.again) { const a = s.again; s.again = false; render(typeof a === 'string' ? a : null); }
  }
  async function list(p) {
    setObjects(o => ({ ...o, loading: true }));
    const r = await api('GET', `/api/scene?limit=${PAGE}&offset=${p * PAGE}`);
    if (!state.current.alive) return;
    if (r.ok) setObjects({ list: r.data.objects || [], count: r.data.count || 0, error: null, loading: false });
    else setObjects(o => ({ ...o, error: r.error, loading: false }));
  }
  useEffect(() => {
    state.current.alive = true;
    render();
    const off = onLive('end', ev => { render(ev.plan_id); list(pageRef.current); });
    const offScene = onLive('scene', () => { render(); list(pageRef.current); });     // `blendmq scene reset`, …
    return () => { state.current.alive = false; off(); offScene(); if (state.current.url) URL.revokeObjectURL(state.current.url); };
  }, []);
  useEffect(() => { pageRef.current = page; list(page); }, [page]);

  const pages = Math.max(1, Math.ceil(objects.count / PAGE));
  const first = objects.count ? page * PAGE + 1 : 0, last = Math.min(objects.count, (page + 1) * PAGE);
  return (
    <>
      <section class="card" aria-labelledby="preview-h">
        <h3 id="preview-h">Preview</h3>
        <ErrorNote error={preview.error} context="preview" />
        {preview.url ? (
          <figure class="preview">
            <img src={preview.url} width="640" height="480"
              alt={`Preview render of the live scene${preview.after ? ` after plan ${preview.after}` : ''}`} />
            <figcaption>Rendered at {time(preview.at)}{preview.after ? `, after plan ${preview.after}` : ''} (Workbench, 640×480).
              A new one is made after each plan ends.</figcaption>
          </figure>
        ) : !preview.error && <p class="muted">Rendering…</p>}
        <p><button type="button" class="secondary" onClick={() => render()} disabled={preview.busy}>
          {preview.busy ? 'Rendering…' : 'Render again'}</button></p>
      </section>
      <section class="card" aria-labelledby="objects-h">
        <h3 id="objects-h">Objects</h3>
        <ErrorNote error={objects.error} context="objects" />
        <table class="objects" aria-busy={objects.loading ? 'true' : 'false'}>
          <caption>Objects in the live scene {objects.count ? `${first}–${last} of ${objects.count}` : '(none)'}</caption>
          <thead><tr><th scope="col">Name</th><th scope="col">Type</th><th scope="col">Location</th><th scope="col">Dimensions</th><th scope="col">Materials</th></tr></thead>
          <tbody>
            {objects.list.map(o => (
              <tr><td>{o.name}</td><td>{o.type}</td><td class="num">{vec(o.location)}</td><td class="num">{vec(o.dimensions)}</td>
                <td>{(o.materials || []).map(m => (typeof m === 'string' ? m : m.name)).join(', ')}</td></tr>
            ))}
          </tbody>
        </table>
        <nav class="pager" aria-label="Pages of objects">
          <button type="button" class="secondary" onClick={() => setPage(page - 1)} disabled={page === 0}>Previous page</button>
          <span>Page {page + 1} of {pages}</span>
          <button type="button" class="secondary" onClick={() => setPage(page + 1)} disabled={page + 1 >= pages}>Next page</button>
          <button type="button" class="secondary" onClick={() => list(page)}>Refresh</button>
        </nav>
      </section>
    </>
  );
}
