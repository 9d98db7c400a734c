// Pieces shared by the screens: errors, a plan's live view, tables.
import { useEffect, useId, useState } from 'preact/hooks';
import { api, canOperate } from './api.js';
import { endLine, isEnded, stepsDone, touch, setPlanned } from './store.js';
import { live } from './live.js';

const SERVICES = { planner: 'planner', validator: 'validator pool', executor: 'executor', blender: 'Blender', audit: 'audit service' };

export function errorTitle(e) {
  const code = (e && e.code) || 'error';
  if (code === 'network') return 'The gateway is not reachable';
  if (code === 'unauthorized') return 'Signed out';
  if (code === 'forbidden') return 'Not allowed for your role';
  const m = /^(.*)_unavailable$/.exec(code);
  if (m) return `The ${SERVICES[m[1]] || m[1].replace(/_/g, ' ')} is unavailable`;
  if (code === 'gateway_timeout' || code === 'timeout') return 'No answer in time';
  if (code === 'rejected') return 'Rejected by the validator';
  if (code === 'cancelled') return 'Cancelled';
  return 'Error';
}

// A gateway error ({code, message}), as said to a person; role="alert" so a screen reader hears it.
export function ErrorNote({ error, context }) {
  if (!error) return null;
  return (
    <div class="note error" role="alert">
      <strong>{errorTitle(error)}{context ? ` (${context})` : ''}:</strong> {error.message}{' '}
      <span class="code">[{error.code}]</span>
    </div>
  );
}

export const ms = v => (v == null || Number.isNaN(Number(v)) ? '' : `${Number(v).toFixed(1)} ms`);
export const time = t => (t ? new Date(t).toLocaleTimeString() : '');
export const short = (s, n = 12) => (s && s.length > n ? `${s.slice(0, n)}…` : s || '');

const STATE_TEXT = {
  seen: 'seen', planning: 'planning…', validating: 'validating…', accepted: 'accepted', queued: 'queued',
  executing: 'running', done: 'done', failed: 'failed', rejected: 'rejected', cancelled: 'cancelled',
  interrupted: 'interrupted', error: 'error', timeout: 'timed out',
};
export function StateBadge({ state }) {
  return <span class={`badge s-${state}`}>{STATE_TEXT[state] || state}</span>;
}

// A verdict's errors as the CLI prints them: step (1-based; "plan" for the whole plan), field, reason.
export function VerdictErrors({ errors, caption = 'Problems the validator found' }) {
  if (!errors || !errors.length) return null;
  return (
    <table class="errors">
      <caption>{caption}</caption>
      <thead><tr><th scope="col">Step</th><th scope="col">Field</th><th scope="col">Reason</th></tr></thead>
      <tbody>
        {errors.map(e => (
          <tr>
            <td>{e.step >= 0 ? e.step + 1 : 'plan'}</td>
            <td><code>{e.field || ''}</code></td>
            <td>{e.reason || e.message || ''}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function StepsTable({ plan }) {
  const n = Math.max(plan.total || 0, plan.planned.length, plan.steps.length);
  if (!n) return null;
  const rows = [];
  for (let i = 0; i < n; i++) {
    const s = plan.steps[i], p = plan.planned[i] || {};
    rows.push(
      <tr class={s ? `st-${s.status}` : 'st-waiting'}>
        <td class="num">{i + 1}</td>
        <td><code>{(s && s.operation) || p.operation || '…'}</code></td>
        <td>{(s && s.object) || p.object || ''}</td>
        <td>{s ? s.status : 'waiting'}{s && s.error ? `: ${s.error}` : ''}</td>
        <td class="num">{s ? ms(s.duration_ms) : ''}</td>
      </tr>,
    );
  }
  return (
    <table class="steps">
      <caption>Steps of plan {plan.id}</caption>
      <thead><tr><th scope="col">#</th><th scope="col">Operation</th><th scope="col">Object</th><th scope="col">Status</th><th scope="col">Duration</th></tr></thead>
      <tbody>{rows}</tbody>
    </table>
  );
}

export function StepProgress({ plan }) {
  const id = useId();
  const total = plan.total || plan.planned.length;
  const done = stepsDone(plan);
  return (
    <div class="progress">
      <label for={id}>Steps done</label>
      <progress id={id} max={total || 1} value={done}>{done}/{total}</progress>
      <span class="count">{done}/{total}</span>
    </div>
  );
}

const names = list => (list && list.length ? ` (${list.join(', ')})` : '');

// What was rolled back, in the CLI's words ("rolled back: removed 2 object(s), restored 1"), then the names.
export function Rollback({ rollback }) {
  if (!rollback) return null;
  const removed = rollback.removed || [], restored = rollback.restored || [];
  return (
    <p class="rollback">
      <strong>{rollback.status || 'rolled back'}:</strong> removed {removed.length} object(s){names(removed)}, restored{' '}
      {restored.length}{names(restored)}
    </p>
  );
}

// Fill the store from GET /api/plans/{id} (a reload, or a story that was cut).
export async function loadPlan(id) {
  const r = await api('GET', `/api/plans/${encodeURIComponent(id)}`);
  if (!r.ok) return r.error;
  const rec = r.data;
  touch(id, p => {
    Object.assign(p, { cid: rec.cid, kind: rec.kind, prompt: rec.prompt || p.prompt, source: rec.source, parts: rec.parts,
      notUnderstood: rec.not_understood, position: rec.position });
    if (rec.plan) setPlanned(p, rec.plan);
    if (rec.verdict) p.verdict = rec.verdict;
    for (const s of rec.steps || []) if (s.step > 0) p.steps[s.step - 1] = { ...s };
    if (rec.rollback) p.rollback = rec.rollback.rollback || rec.rollback;
    if (rec.result) p.result = rec.result;
    if (rec.error) p.error = rec.error;
    if (Array.isArray(rec.notes) && !p.notes.length) p.notes.push(...rec.notes.map(String));
    if (!isEnded(p) || rec.result || rec.error) p.state = rec.state;
  });
  return null;
}

// One understood part in the CLI's words: "chair ×1 (red, 2×) in a row left of table" (issue 29).
const RELATION_WORDS = { next_to: 'next to', in_front_of: 'in front of', left_of: 'left of', right_of: 'right of' };
export function understood(p) {
  const colour = p.colour, size = typeof p.size === 'number' ? `${Number(p.size.toPrecision(3))}×` : null;
  let text = `${p.recipe || '?'} ×${p.count ?? 1}`;
  if (colour || size) text += ` (${[colour, size].filter(Boolean).join(', ')})`;
  if (p.arrangement) text += ` in a ${p.arrangement}`;
  const rel = p.relation;
  if (rel && rel.type && rel.to) {
    text += ` ${RELATION_WORDS[rel.type] || rel.type} ${rel.to}`;
    if (rel.and) text += ` and ${rel.and}`;
    else if (rel.type === 'between') text += 's';
  }
  return text;
}

// The result's picture on the Prompt screen: a preview render of the live scene once the plan ended.
export function ResultPicture({ plan }) {
  const [pic, setPic] = useState({ id: null, url: null, error: null });
  const ended = isEnded(plan);
  useEffect(() => {
    if (!ended || pic.id === plan.id) return undefined;
    let gone = false;
    api('GET', '/api/web/preview.png?width=640&height=480', undefined, { blob: true }).then(r => {
      if (gone) return;
      setPic(old => {
        if (old.url) URL.revokeObjectURL(old.url);
        return r.ok ? { id: plan.id, url: URL.createObjectURL(r.data), error: null } : { id: plan.id, url: null, error: r.error };
      });
    });
    return () => { gone = true; };
  }, [plan.id, ended]);
  if (!ended) return null;
  return (
    <section class="card" aria-labelledby={`pic-${plan.id}`}>
      <h3 id={`pic-${plan.id}`}>The result</h3>
      <ErrorNote error={pic.error} context="preview" />
      {pic.url ? (
        <figure class="preview result-picture">
          <img src={pic.url} width="640" height="480" alt={`Preview render of the live scene after plan ${plan.id}`} />
          <figcaption>The live scene after plan {plan.id} (Workbench, 640×480).</figcaption>
        </figure>
      ) : !pic.error && <p class="muted">Rendering…</p>}
    </section>
  );
}

// A plan as it happens: planner notes, verdict, progress, steps, the end or the failure and its rollback.
export function PlanView({ plan, who }) {
  const [cancelError, setCancelError] = useState(null);
  const [cancelling, setCancelling] = useState(false);
  const ended = isEnded(plan);
  useEffect(() => {            // the live stream is down or the story was cut: ask now and then
    if (ended) return undefined;
    const t = setInterval(() => { if (live.state !== 'live' || plan.storyCut) loadPlan(plan.id); }, 3000);
    return () => clearInterval(t);
  }, [plan.id, ended]);
  const line = endLine(plan);
  const r = plan.result || plan.end || {};
  const failed = plan.steps.find(s => s && s.status === 'failed');
  const verdict = plan.verdict;
  async function cancel() {
    setCancelling(true);
    const res = await api('POST', `/api/plans/${encodeURIComponent(plan.id)}/cancel`, {});
    setCancelling(false);
    setCancelError(res.ok ? null : res.error);
  }
  return (
    <section class="plan card" aria-labelledby={`plan-${plan.id}`}>
      <h3 id={`plan-${plan.id}`}>Plan <code>{plan.id}</code> <StateBadge state={plan.state} /></h3>
      {plan.prompt && <p>Prompt: “{plan.prompt}”</p>}
      {plan.title && <p>plan {plan.id}: {plan.title}, {plan.planned.length} steps ({plan.source || '?'} planner)</p>}
      {plan.parts && plan.parts.length > 0 && (
        <p>understood: {plan.parts.map(understood).join(', ')}
          {plan.notUnderstood && plan.notUnderstood.length > 0 && `; not understood: ${plan.notUnderstood.map(s => `'${s}'`).join(', ')}`}</p>
      )}
      {(plan.notes.length > 0 || plan.state === 'planning') && (
        <div class="notes">
          <h4>Planner notes</h4>
          <ol aria-live="polite">{plan.notes.map(n => <li>{n}</li>)}</ol>
          {plan.state === 'planning' && !plan.notes.length && <p class="muted">The planner is working…</p>}
        </div>
      )}
      {verdict && verdict.accepted && <p>validated: {verdict.steps ?? plan.planned.length} steps accepted</p>}
      {verdict && !verdict.accepted && (
        <div class="note error" role="alert">
          <p><strong>rejected: {(verdict.errors || []).length} problem(s); nothing was run</strong></p>
          <VerdictErrors errors={verdict.errors} />
        </div>
      )}
      {plan.state === 'queued' && plan.position > 1 && <p>Queued: position {plan.position} at the executor.</p>}
      {(plan.total > 0 || plan.planned.length > 0) && !(verdict && !verdict.accepted) && <StepProgress plan={plan} />}
      {!ended && canOperate(who) && (
        <p><button type="button" class="secondary" onClick={cancel} disabled={cancelling}>Cancel this plan</button></p>
      )}
      <ErrorNote error={cancelError} context="cancel" />
      {!(verdict && !verdict.accepted) && <StepsTable plan={plan} />}
      {(failed || r.status === 'failed') && (
        <div class="note error failure" role="alert">
          <p><strong>Step {failed ? failed.step : r.failed_step} failed</strong>
            {failed && failed.operation ? <> (<code>{failed.operation}</code>)</> : null}: {(failed && failed.error) || r.error}</p>
          {plan.rollback ? <Rollback rollback={plan.rollback} />
            : ended && <p>Nothing was rolled back: what was built stays (keep partial).</p>}
        </div>
      )}
      {!failed && r.status !== 'failed' && plan.rollback && <Rollback rollback={plan.rollback} />}
      {line && <p class={`end-line ${r.status === 'done' ? 'good' : 'bad'}`} role="status"><samp>{line}</samp></p>}
      <ErrorNote error={plan.error} />
      {plan.storyCut && !ended && (
        <p class="note warn">The connection to this request was cut (did the gateway restart?). Its steps still show
          here if the executor goes on; its story is in the audit (cid <code>{plan.cid}</code>).</p>
      )}
    </section>
  );
}

// Lines of a text, numbered (so "line 3, column 7" can be found), in a labelled scrollable region.
export function NumberedText({ text, label }) {
  const lines = (text || '').replace(/\n$/, '').split('\n');
  const width = String(lines.length).length;
  return (
    <pre class="code" tabIndex="0" aria-label={label}>
      {lines.map((l, i) => <>{<span class="ln" aria-hidden="true">{String(i + 1).padStart(width)} </span>}{l}{'\n'}</>)}
    </pre>
  );
}
