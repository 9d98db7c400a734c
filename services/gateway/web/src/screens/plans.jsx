// Plans: paste a plan (JSON), validate it and see every error, then run it.
import { useEffect, useState } from 'preact/hooks';
import { api, canOperate } from '../api.js';
import { getPlan, isEnded, setPlanned, touch, useStore } from '../store.js';
import { ErrorNote, PlanView, VerdictErrors, loadPlan } from '../ui.jsx';

const EXAMPLE = `[
  {"operation": "bpy.ops.mesh.primitive_uv_sphere_add", "name": "body", "params": {"radius": 1.0, "location": [0, 0, 1]}},
  {"operation": "object.material", "target": "body", "params": {"color": [1, 1, 1]}}
]`;
const DRAFT = 'blendmq.planDraft';

// JSON.parse's complaint, with the line and column of its position when it gives one.
function parseError(text, e) {
  const m = /position (\d+)/.exec(e.message);
  if (!m || /line \d+/.test(e.message)) return e.message;
  const before = text.slice(0, Number(m[1])).split('\n');
  return `${e.message} (line ${before.length}, column ${before[before.length - 1].length + 1})`;
}

export function PlansScreen({ who, arg, go }) {
  useStore();
  const [text, setText] = useState(() => { try { return sessionStorage.getItem(DRAFT) || EXAMPLE; } catch { return EXAMPLE; } });
  const [keep, setKeep] = useState(false);
  const [verdict, setVerdict] = useState(null);
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const current = arg || null;
  useEffect(() => { if (current && !getPlan(current)) loadPlan(current); }, [current]);
  const allowed = canOperate(who);

  function edit(v) {
    setText(v);
    setVerdict(null);
    try { sessionStorage.setItem(DRAFT, v); } catch { /* private mode */ }
  }
  function body() {
    let v;
    try { v = JSON.parse(text); } catch (e) {
      setError({ code: 'bad_json', message: `the plan is not valid JSON: ${parseError(text, e)}` });
      return null;
    }
    const plan = Array.isArray(v) ? v : v && v.plan;
    return { plan, keep_partial: keep };
  }
  async function validate() {
    const b = body();
    if (!b) return;
    setBusy(true); setError(null); setVerdict(null);
    const r = await api('POST', '/api/plans/validate', b);
    setBusy(false);
    if (r.ok) setVerdict(r.data); else setError(r.error);
  }
  async function run() {
    const b = body();
    if (!b) return;
    setBusy(true); setError(null); setVerdict(null);
    const r = await api('POST', '/api/plans', b);
    setBusy(false);
    if (r.status === 422 && r.data && r.data.verdict) { setVerdict(r.data.verdict); return; }
    if (!r.ok) { setError(r.error); return; }
    touch(r.data.plan_id, p => {
      p.kind = 'run'; p.mine = true; p.verdict = r.data.verdict;
      if (!p.planned.length) setPlanned(p, b.plan);
      if (!isEnded(p) && p.state === 'seen') p.state = 'queued';
    });
    go(`plans/${r.data.plan_id}`, false);
  }
  const plan = current && getPlan(current);
  return (
    <>
      <form class="card" onSubmit={e => { e.preventDefault(); validate(); }} aria-label="Plan">
        <label for="plan-json">Plan (JSON: an array of steps, each {'{'}"operation", "params", "name", "target"{'}'})</label>
        <textarea id="plan-json" class="mono" rows="12" spellcheck={false} value={text} onInput={e => edit(e.currentTarget.value)} />
        <div class="row">
          <label class="check"><input type="checkbox" checked={keep} onChange={e => setKeep(e.currentTarget.checked)} /> Keep
            what was built if a step fails</label>
          <button type="submit" class="secondary" disabled={busy || !allowed}>Validate</button>
          <button type="button" onClick={run} disabled={busy || !allowed}>Run</button>
        </div>
        {!allowed && <p class="muted">Validating and running plans needs the operator role; you are {who.name} ({who.role}).</p>}
      </form>
      <ErrorNote error={error} />
      {verdict && verdict.accepted && (
        <p class="note good" role="status">validated: {verdict.steps} steps accepted (plan hash <code>{(verdict.plan_hash || '').slice(0, 16)}</code>). Nothing ran yet.</p>
      )}
      {verdict && !verdict.accepted && (
        <div class="note error" role="alert">
          <p><strong>rejected: {(verdict.errors || []).length} problem(s); nothing was run</strong></p>
          <VerdictErrors errors={verdict.errors} />
        </div>
      )}
      {plan && <PlanView plan={plan} who={who} />}
    </>
  );
}
