// Status: every service, the validator pool, executors and their Blender link, queues, refreshed every 2 s.
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.js';
import { live, onLive } from '../live.js';
import { ErrorNote, short, time } from '../ui.jsx';

const EVERY_MS = 2000;
const age = v => (v == null ? '' : v < 1000 ? `${v} ms ago` : `${(v / 1000).toFixed(1)} s ago`);

function Alive({ ok }) {
  return <span class={`badge ${ok ? 's-done' : 's-failed'}`}>{ok ? 'live' : 'down'}</span>;
}

export function StatusScreen() {
  const [st, setSt] = useState({ data: null, error: null, at: 0 });
  const [conn, setConn] = useState({ ...live });
  useEffect(() => {
    let alive = true, timer = null;
    async function poll() {
      const r = await api('GET', '/api/web/status');
      if (!alive) return;
      setSt(s => (r.ok ? { data: r.data, error: null, at: Date.now() } : { ...s, error: r.error }));
      timer = setTimeout(poll, EVERY_MS);
    }
    poll();
    const off = onLive('state', setConn);
    return () => { alive = false; clearTimeout(timer); off(); };
  }, []);
  const d = st.data;
  const services = (d && d.services) || [];
  const pool = services.find(s => s.name === 'validator');
  const executors = services.filter(s => s.name === 'executor' || /^executor|^blender/.test(s.name || ''));
  const others = services.filter(s => s !== pool && !executors.includes(s));
  return (
    <>
      <ErrorNote error={st.error} context="status" />
      {d && (
        <section class="card" aria-labelledby="summary-h">
          <h3 id="summary-h">Summary</h3>
          <ul class="summary">
            <li>gateway: {d.state}</li>
            <li>requests in flight: {d.requests ?? 0}</li>
            {pool && <li>validators: {pool.workers} ({pool.busy} busy), queue {pool.queued}</li>}
            <li>executors: {executors.length}, {executors.filter(e => /connected/.test(e.state || '') && !/dis/.test(e.state || '')).length} with Blender connected</li>
            <li>audit records waiting: {d.audit_pending ?? 0}</li>
          </ul>
          <p class="muted" role="status">Updated at {time(st.at)}, every {EVERY_MS / 1000} s.</p>
        </section>
      )}
      {d && (
        <section class="card" aria-labelledby="services-h">
          <h3 id="services-h">Services</h3>
          <table>
            <caption>Each service as the gateway hears its heartbeats</caption>
            <thead><tr><th scope="col">Service</th><th scope="col">Live</th><th scope="col">State</th><th scope="col">Last heard</th><th scope="col">Restarts seen</th><th scope="col">Instance</th></tr></thead>
            <tbody>
              <tr><td>gateway</td><td><Alive ok /></td><td>{d.state}</td><td>now</td><td /><td /></tr>
              {pool && <tr><td>validator pool</td><td><Alive ok={pool.alive && pool.workers > 0} /></td>
                <td>{pool.workers} worker(s), {pool.busy} busy</td><td /><td /><td /></tr>}
              {[...others, ...executors].map(s => (
                <tr><td>{s.name}</td><td><Alive ok={s.alive} /></td><td>{s.state || ''}</td><td>{age(s.last_heard_ms)}</td>
                  <td class="num">{s.restarts_seen ?? ''}</td><td><code>{short(s.instance || '', 16)}</code></td></tr>
              ))}
            </tbody>
          </table>
        </section>
      )}
      {executors.length > 0 && (
        <section class="card" aria-labelledby="exec-h">
          <h3 id="exec-h">Executors and their Blender</h3>
          <table>
            <caption>The Blender link is what each executor reports</caption>
            <thead><tr><th scope="col">Executor</th><th scope="col">Live</th><th scope="col">Blender link</th><th scope="col">Endpoint</th></tr></thead>
            <tbody>{executors.map(s => <tr><td>{s.target || s.name}</td><td><Alive ok={s.alive} /></td><td>{s.state || 'unknown'}</td><td><code>{s.endpoint || ''}</code></td></tr>)}</tbody>
          </table>
        </section>
      )}
      {pool && (
        <section class="card" aria-labelledby="pool-h">
          <h3 id="pool-h">Validator pool</h3>
          <dl class="facts">
            <dt>Workers</dt><dd>{pool.workers}</dd><dt>Busy</dt><dd>{pool.busy}</dd><dt>Queued</dt><dd>{pool.queued}</dd>
            <dt>Verdicts</dt><dd>{pool.verdicts}</dd><dt>Requeued</dt><dd>{pool.requeued}</dd><dt>Failed</dt><dd>{pool.failed}</dd>
          </dl>
          {(pool.pool || []).length > 0 && (
            <table>
              <caption>Workers</caption>
              <thead><tr><th scope="col">Process</th><th scope="col">Busy</th><th scope="col">Holding a request for</th></tr></thead>
              <tbody>{pool.pool.map(w => <tr><td class="num">{w.pid}</td><td>{w.busy ? 'busy' : 'idle'}</td><td>{w.busy ? `${w.held_ms} ms` : ''}</td></tr>)}</tbody>
            </table>
          )}
        </section>
      )}
      <section class="card" aria-labelledby="page-h">
        <h3 id="page-h">This page's live updates</h3>
        <dl class="facts">
          <dt>Stream</dt><dd>{conn.state}</dd>
          <dt>Last event id</dt><dd><code>{live.lastId || 'none yet'}</code></dd>
          <dt>Connected since</dt><dd>{time(conn.since)}</dd>
          <dt>Reconnections</dt><dd>{conn.reconnects}</dd>
        </dl>
      </section>
    </>
  );
}
