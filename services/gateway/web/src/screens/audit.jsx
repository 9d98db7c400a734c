// Audit: a filterable list of records, each request's story (request → plan → verdict → steps → outcome), export.
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.js';
import { ErrorNote, ms, short } from '../ui.jsx';

const SINCE = [['15m', 15 * 60e3, 'the last 15 minutes'], ['1h', 3600e3, 'the last hour'], ['24h', 86400e3, 'the last 24 hours'],
  ['7d', 7 * 86400e3, 'the last 7 days'], ['all', 0, 'all time']];
const KINDS = ['request', 'request.end', 'prompt', 'plan.proposed', 'verdict', 'plan.start', 'steps', 'plan.end', 'script.sandbox',
  'script.confirm', 'http.refused', 'auth.refused', 'service.restart', 'alert'];

function params(f, extra = {}) {
  const q = new URLSearchParams();
  for (const k of ['kind', 'cid', 'plan']) if (f[k] && f[k].trim()) q.set(k, f[k].trim());
  const since = SINCE.find(s => s[0] === f.since);
  if (since && since[1]) q.set('since', String(Date.now() - since[1]));
  for (const [k, v] of Object.entries(extra)) if (v != null) q.set(k, typeof v === 'string' ? v : JSON.stringify(v));
  return q.toString();
}

const stamp = ts => (ts ? new Date(ts).toLocaleString() : '');
const who = d => (d.identity ? `${d.identity.name} (${d.identity.role})` : d.on_behalf_of ? `${d.on_behalf_of.name} (${d.on_behalf_of.role})` : d.client || '');

// One line a person can read for a record; the full data is one click away.
export function summary(r) {
  const d = r.data || {};
  const e = d.event && typeof d.event === 'object' ? d.event : d;
  switch (r.kind) {
  case 'request': return `${d.request || 'request'}${d.prompt ? ` “${d.prompt}”` : ''}${d.plan_id ? ` plan ${d.plan_id}` : ''} from ${who(d) || '?'}`;
  case 'prompt': return `“${d.prompt}” (${d.backend || '?'} planner)`;
  case 'plan.proposed': return `${(d.plan || []).length} steps proposed${d.fallback_from ? ` (fallback from ${d.fallback_from})` : ''}`;
  case 'verdict': return d.accepted ? `accepted, plan hash ${short(d.plan_hash, 12)}` : `rejected: ${(d.errors || []).length} problem(s)`;
  case 'plan.start': return `${d.steps} steps start (plan ${d.plan_id})`;
  case 'step': return `step ${e.step ?? ''} ${e.operation || ''} ${e.status || ''} ${ms(e.duration_ms)}${e.error ? ` — ${e.error}` : ''}`;
  case 'steps': {
    const list = (d.steps || []).map(s => (s && s.event) || {});
    const failed = list.filter(s => s.status && s.status !== 'ok').length;
    return list.length ? `steps ${list[0].step}–${list[list.length - 1].step}${failed ? `, ${failed} not ok` : ''}` : 'no steps';
  }
  case 'plan.end': return `${d.status}${d.error ? `: ${d.error}` : ''} in ${ms(d.duration_ms)}${d.rollback ? `; ${d.rollback.status}` : ''}`;
  case 'request.end': return `${d.outcome} in ${ms(d.duration_ms)}`;
  default: {
    const text = JSON.stringify(d);
    return text.length > 160 ? `${text.slice(0, 160)}…` : text;
  }
  }
}

const PHASES = [
  ['Request', k => k === 'request' || k === 'prompt' || k.endsWith('.refused')],
  ['Plan', k => k.startsWith('plan.') && k !== 'plan.start' && k !== 'plan.end'],
  ['Verdict', k => k === 'verdict' || k.startsWith('script.verdict')],
  ['Steps', k => k === 'step' || k === 'steps' || k === 'plan.start'],
  ['Outcome', k => k === 'plan.end' || k === 'request.end' || k === 'rollback' || k.startsWith('cancel')],
  ['Other', () => true],
];

async function allPages(query, max = 100) {
  const out = [];
  let after = null;
  for (let i = 0; i < max; i++) {
    const r = await api('GET', `/api/audit?${query}&limit=500&order=asc${after ? `&after=${encodeURIComponent(JSON.stringify(after))}` : ''}`);
    if (!r.ok) return { error: r.error, records: out };
    out.push(...(r.data.records || []));
    after = r.data.next;
    if (!after) break;
  }
  return { records: out };
}

function Record({ r, base }) {
  return (
    <li>
      <span class="muted">+{Math.max(0, r.ts - base)} ms</span> <code>{r.kind}</code> <span class="muted">from {r.sender}</span>{' '}
      {summary(r)}
      <details><summary>Data of record {r.id}</summary><pre class="code">{JSON.stringify(r.data, null, 1)}</pre></details>
    </li>
  );
}

function Story({ cid }) {
  const [records, setRecords] = useState(null);
  const [error, setError] = useState(null);
  useEffect(() => { setRecords(null); allPages(`cid=${encodeURIComponent(cid)}`, 20).then(r => { setRecords(r.records); setError(r.error || null); }); }, [cid]);
  const base = records && records.length ? Math.min(...records.map(r => r.ts)) : 0;
  const groups = PHASES.map(([name]) => [name, []]);
  // the executor records steps in batches ("steps": {plan_id, steps: [{event, step}]}): one row each
  const rows = (records || []).flatMap(r => (r.kind === 'steps'
    ? ((r.data && r.data.steps) || []).map(s => ({ ...r, kind: 'step', data: { plan_id: r.data.plan_id, ...s } }))
    : [r]));
  for (const r of rows) groups[PHASES.findIndex(([, test]) => test(r.kind))][1].push(r);
  const end = (records || []).find(r => r.kind === 'request.end' || r.kind === 'plan.end');
  return (
    <section class="card story" aria-labelledby="story-h">
      <h3 id="story-h">Story of <code>{cid}</code></h3>
      <p><a href="#/audit">Back to the audit list</a></p>
      <ErrorNote error={error} />
      {records && !records.length && <p>No records with this correlation id.</p>}
      {records && records.length > 0 && <p>{records.length} records from {stamp(base)}{end ? `; outcome: ${summary(end)}` : ''}.</p>}
      {groups.filter(([, list]) => list.length).map(([name, list]) => (
        <section aria-label={name}>
          <h4>{name}</h4>
          {name === 'Steps' ? (
            <table>
              <caption>Steps, as the executor recorded them</caption>
              <thead><tr><th scope="col">When</th><th scope="col">Step</th><th scope="col">Operation</th><th scope="col">Object</th><th scope="col">Status</th><th scope="col">Duration</th></tr></thead>
              <tbody>{list.map(r => {
                const e = (r.data && r.data.event) || r.data || {};
                return <tr><td class="num">+{r.ts - base} ms</td><td class="num">{r.kind === 'plan.start' ? 'start' : e.step}</td>
                  <td><code>{e.operation || ''}</code></td><td>{e.object || ''}</td><td>{e.status || `${r.data.steps} steps`}{e.error ? `: ${e.error}` : ''}</td>
                  <td class="num">{ms(e.duration_ms)}</td></tr>;
              })}</tbody>
            </table>
          ) : <ol class="records">{list.map(r => <Record r={r} base={base} />)}</ol>}
        </section>
      ))}
    </section>
  );
}

let kept = { kind: '', cid: '', plan: '', since: '1h', limit: '100' };     // the filter outlives a visit to a story

function List() {
  const [f, setF] = useState(kept);
  const [shown, setShown] = useState(kept);
  const [page, setPage] = useState({ records: [], next: null, error: null, loading: true });
  const [exported, setExported] = useState(null);
  async function load(filter, after) {
    setPage(p => ({ ...p, loading: true }));
    const r = await api('GET', `/api/audit?${params(filter, { limit: filter.limit, order: 'desc', after })}`);
    if (r.ok) setPage(p => ({ records: after ? [...p.records, ...r.data.records] : r.data.records, next: r.data.next || null, error: null, loading: false }));
    else setPage(p => ({ ...p, error: r.error, loading: false }));
  }
  useEffect(() => { load(shown); }, [shown]);
  const field = k => e => setF({ ...f, [k]: e.currentTarget.value });
  async function exportAll() {
    setExported({ busy: true });
    const r = await allPages(params(shown));
    if (r.error) { setExported({ error: r.error }); return; }
    const blob = new Blob(r.records.map(x => `${JSON.stringify(x)}\n`), { type: 'application/x-ndjson' });
    const a = document.createElement('a');
    a.href = URL.createObjectURL(blob);
    a.download = `blendmq-audit-${new Date().toISOString().replace(/[:.]/g, '-')}.jsonl`;
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 10000);
    setExported({ count: r.records.length });
  }
  return (
    <>
      <form class="card filters" onSubmit={e => { e.preventDefault(); kept = { ...f }; setShown(kept); }} aria-label="Audit filter">
        <div class="fields">
          <div><label for="f-kind">Kind</label><input id="f-kind" list="audit-kinds" value={f.kind} onInput={field('kind')} placeholder="any" />
            <datalist id="audit-kinds">{KINDS.map(k => <option value={k} />)}</datalist></div>
          <div><label for="f-cid">Correlation id</label><input id="f-cid" value={f.cid} onInput={field('cid')} placeholder="any" /></div>
          <div><label for="f-plan">Plan id</label><input id="f-plan" value={f.plan} onInput={field('plan')} placeholder="any" /></div>
          <div><label for="f-since">Since</label><select id="f-since" value={f.since} onChange={field('since')}>
            {SINCE.map(([v, , text]) => <option value={v}>{text}</option>)}</select></div>
          <div><label for="f-limit">Rows per page</label><select id="f-limit" value={f.limit} onChange={field('limit')}>
            {['50', '100', '200', '500'].map(v => <option value={v}>{v}</option>)}</select></div>
        </div>
        <div class="row">
          <button type="submit">Show records</button>
          <button type="button" class="secondary" onClick={exportAll} disabled={exported && exported.busy}>Export as JSON lines</button>
          {exported && exported.count != null && <span role="status">Exported {exported.count} records.</span>}
        </div>
        <ErrorNote error={exported && exported.error} context="export" />
      </form>
      <ErrorNote error={page.error} />
      <table class="audit" aria-busy={page.loading ? 'true' : 'false'}>
        <caption>Audit records, newest first ({page.records.length}{page.next ? '+' : ''})</caption>
        <thead><tr><th scope="col">Time</th><th scope="col">Kind</th><th scope="col">From</th><th scope="col">Story</th><th scope="col">What</th></tr></thead>
        <tbody>
          {page.records.map(r => (
            <tr>
              <td>{stamp(r.ts)}</td><td><code>{r.kind}</code></td><td>{r.sender}</td>
              <td><a href={`#/audit/${r.cid}`}>Story {short(r.cid, 8)}</a></td>
              <td>{summary(r)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {page.next && <p><button type="button" class="secondary" onClick={() => load(shown, page.next)} disabled={page.loading}>Load more records</button></p>}
    </>
  );
}

export function AuditScreen({ arg }) {
  return arg ? <Story cid={arg} /> : <List />;
}
