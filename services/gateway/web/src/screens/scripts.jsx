// Scripts: submit a script (or an AI reply with fenced code); see the verdict, the sandbox run and the exact
// text that was checked; review a sandboxed script and, as a reviewer, apply exactly that text (its sha256) live.
import { useEffect, useMemo, useState } from 'preact/hooks';
import { api, canOperate, canReview } from '../api.js';
import { ErrorNote, NumberedText, short } from '../ui.jsx';

const STATUS_TEXT = {
  validated: 'valid (not run: validate only)', sandboxed: 'ran cleanly in the sandbox', rejected: 'rejected by the static checks',
  sandbox_failed: 'failed in the sandbox', applied: 'applied live', refused: 'refused', failed: 'failed live',
  cancelled: 'cancelled',
};

// the executor's message may already begin with the status ("cancelled: the script was stopped …; rolled back: …")
const outcome = (status, message) => (message && message.startsWith(`${status}:`) ? message.slice(status.length + 1).trim() : message);

function Verdict({ verdict }) {
  if (!verdict) return null;
  const errors = verdict.errors || [], warnings = verdict.warnings || [];
  return (
    <div class="verdict">
      <h4>Static checks: {verdict.is_valid ? 'valid' : `rejected, ${errors.length} error(s)`}</h4>
      {errors.length > 0 && (
        <table class="errors">
          <caption>Errors, by line and column of the validated text</caption>
          <thead><tr><th scope="col">Line</th><th scope="col">Column</th><th scope="col">Rule</th><th scope="col">Message</th></tr></thead>
          <tbody>{errors.map(e => <tr><td class="num">{e.line}</td><td class="num">{e.col}</td><td><code>{e.rule}</code></td><td>{e.message}</td></tr>)}</tbody>
        </table>
      )}
      {warnings.length > 0 && (
        <><h5>Warnings</h5><ul>{warnings.map(w => <li>line {w.line}: {w.message} <span class="code">[{w.rule}]</span></li>)}</ul></>
      )}
      {verdict.operator_list && verdict.operator_list.length > 0 && (
        <p>Operators it calls: {verdict.operator_list.map(o => <code class="tag">{o}</code>)}</p>
      )}
      <p>sha256 of the validated text: <code class="sha">{verdict.sha256}</code> ({verdict.source || 'plain'} source)</p>
      {verdict.text != null && <><h5>The exact text that was validated</h5><NumberedText text={verdict.text} label="The exact text that was validated" /></>}
    </div>
  );
}

function Diff({ diff }) {
  if (!diff) return null;
  const item = o => (typeof o === 'string' ? o : `${o.name}${o.type ? ` (${o.type})` : ''}${o.changes ? `: ${JSON.stringify(o.changes)}` : ''}`);
  return (
    <div class="diff">
      <h5>Scene diff</h5>
      <ul>
        <li>added: {(diff.added || []).length ? diff.added.map(item).join(', ') : 'nothing'}</li>
        <li>removed: {(diff.removed || []).length ? diff.removed.map(item).join(', ') : 'nothing'}</li>
        <li>changed: {(diff.changed || []).length ? diff.changed.map(item).join(', ') : 'nothing'}</li>
      </ul>
    </div>
  );
}

function Sandbox({ sandbox }) {
  if (!sandbox) return null;
  const png = sandbox.preview && (sandbox.preview.png_base64 || sandbox.preview.data);
  const src = useMemo(() => (png ? URL.createObjectURL(new Blob([Uint8Array.from(atob(png), c => c.charCodeAt(0))],
    { type: 'image/png' })) : null), [png]);
  return (
    <div class="sandbox">
      <h4>Sandbox run: {sandbox.ok ? 'clean' : sandbox.verdict}</h4>
      {sandbox.message && <p>{sandbox.message}</p>}
      {sandbox.error && <p class="bad">{sandbox.error.type}: {sandbox.error.message}{sandbox.error.line ? ` (line ${sandbox.error.line})` : ''}</p>}
      {sandbox.traceback && <><h5>Traceback</h5><pre class="code" tabIndex="0" aria-label="Traceback">{sandbox.traceback}</pre></>}
      <Diff diff={sandbox.diff} />
      {(sandbox.violations || []).length > 0 && (
        <><h5>What the sandbox caught</h5><ul>{sandbox.violations.map(v => <li><code>{v.check}</code>: {v.detail}</li>)}</ul></>
      )}
      {src ? <figure class="preview"><img src={src} alt="Preview render of the sandbox's scene after the script" /></figure>
        : <p class="muted">The sandbox made no preview image for this run.</p>}
      {sandbox.output && <><h5>Output</h5><pre class="code" tabIndex="0" aria-label="Output">{sandbox.output}</pre></>}
    </div>
  );
}

function Result({ result }) {
  if (!result) return null;
  const good = result.status === 'sandboxed' || result.status === 'validated' || result.status === 'applied';
  return (
    <section class="card" aria-labelledby="result-h">
      <h3 id="result-h">Script <code>{short(result.script_id, 16)}</code>: {STATUS_TEXT[result.status] || result.status}</h3>
      {result.message && <p class={`note ${good ? 'good' : 'error'}`} role={good ? 'status' : 'alert'}>{result.message}</p>}
      {result.status === 'sandboxed' && (
        <p><a href={`#/scripts/${result.script_id}`}>Review script {short(result.script_id, 16)} and apply it to the live scene</a></p>
      )}
      <Verdict verdict={result.verdict} />
      <Sandbox sandbox={result.sandbox} />
    </section>
  );
}

// What AI assistants (MCP confirm_script) asked a person to approve: only a person applies a script.
function Asked({ reload }) {
  const [asked, setAsked] = useState([]);
  useEffect(() => { api('GET', '/api/confirmations').then(r => r.ok && setAsked(r.data.pending || [])); }, [reload]);
  if (!asked.length) return null;
  return (
    <section class="card" aria-labelledby="asked-h">
      <h3 id="asked-h">An AI assistant asks you to apply</h3>
      <ul>{asked.map(a => (
        <li><a href={`#/scripts/${a.script_id}`}>Review {short(a.script_id, 12)}</a> (sha256 <code>{short(a.sha256, 16)}</code>),
          asked by {a.requested_by ? `${a.requested_by.name} (${a.requested_by.role})` : 'an MCP client'} through {a.mcp_client}</li>
      ))}</ul>
    </section>
  );
}

function Pending({ reload }) {
  const [scripts, setScripts] = useState(null);
  const [error, setError] = useState(null);
  const [all, setAll] = useState(false);
  async function load() {
    const r = await api('GET', '/api/scripts');
    if (r.ok) { setScripts(r.data.scripts || []); setError(null); } else setError(r.error);
  }
  useEffect(() => { load(); }, [reload]);
  const shown = (scripts || []).filter(s => all || (s.ok && !s.applied));
  return (
    <section class="card" aria-labelledby="pending-h">
      <h3 id="pending-h">{all ? 'Scripts the sandbox has seen' : 'Scripts waiting for a reviewer'}</h3>
      <ErrorNote error={error} />
      <div class="row">
        <label class="check"><input type="checkbox" checked={all} onChange={e => setAll(e.currentTarget.checked)} /> Show all, applied and failed too</label>
        <button type="button" class="secondary" onClick={load}>Refresh list</button>
      </div>
      {scripts && !shown.length && <p class="muted">None.</p>}
      {shown.length > 0 && (
        <table>
          <caption>Newest first</caption>
          <thead><tr><th scope="col">Script</th><th scope="col">sha256</th><th scope="col">Lines</th><th scope="col">Sandbox</th><th scope="col">Live</th></tr></thead>
          <tbody>
            {shown.map(s => (
              <tr>
                <td><a href={`#/scripts/${s.script_id}`}>Review {short(s.script_id, 12)}</a></td>
                <td><code>{short(s.sha256, 16)}</code></td>
                <td class="num">{s.lines}</td>
                <td>{s.ok ? 'clean' : s.verdict}</td>
                <td>{s.applied ? 'applied' : s.ok ? 'waiting' : 'cannot be applied'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function Review({ id, who }) {
  const [entry, setEntry] = useState(null);
  const [error, setError] = useState(null);
  const [applied, setApplied] = useState(null);
  const [busy, setBusy] = useState(false);
  const [cancelling, setCancelling] = useState(false);
  const [cancelError, setCancelError] = useState(null);
  async function load() {
    const r = await api('GET', `/api/scripts/${encodeURIComponent(id)}`);
    if (r.ok) { setEntry(r.data); setError(null); } else setError(r.error);
  }
  useEffect(() => { setEntry(null); setApplied(null); setCancelError(null); load(); }, [id]);
  async function apply() {
    setBusy(true); setApplied(null); setCancelError(null);
    const r = await api('POST', `/api/scripts/${encodeURIComponent(id)}/confirm`, { sha256: entry.sha256 });
    setBusy(false); setCancelling(false);
    setApplied(r);
    load();
  }
  // a live script is named by its script id (issue 29): the executor interrupts it in Blender and rolls the scene
  // back; the apply's own answer (above) then says cancelled and how it was rolled back
  async function cancel() {
    setCancelling(true);
    const r = await api('POST', `/api/plans/${encodeURIComponent(id)}/cancel`, {});
    if (!r.ok) { setCancelling(false); setCancelError(r.error); } else setCancelError(null);
  }
  const reviewer = canReview(who);
  return (
    <section class="card" aria-labelledby="review-h">
      <h3 id="review-h">Review script <code>{short(id, 16)}</code></h3>
      <p><a href="#/scripts">Back to the list of scripts</a></p>
      <ErrorNote error={error} />
      {entry && (
        <>
          <dl class="facts">
            <dt>sha256</dt><dd><code class="sha">{entry.sha256}</code></dd>
            <dt>Sandbox</dt><dd>{entry.ok ? 'ran cleanly' : entry.verdict}</dd>
            <dt>Live</dt><dd>{entry.applied && applied && applied.data && applied.data.status === 'cancelled'
              ? 'cancelled while it ran, and rolled back (one confirmation, one live run: sandbox it again to apply it again)'
              : entry.applied ? 'applied' : 'not applied'}</dd>
            <dt>Lines</dt><dd>{entry.lines}</dd>
          </dl>
          <h4>The exact text that would run</h4>
          <NumberedText text={entry.script} label={`Script ${id}, the exact text that would run`} />
          <div class="apply">
            <button type="button" onClick={apply} disabled={busy || !reviewer || !entry.ok || entry.applied}
              aria-describedby="apply-help">{busy ? 'Applying…' : 'Apply to live'}</button>
            {busy && (
              <button type="button" class="secondary" onClick={cancel} disabled={cancelling}>
                {cancelling ? 'Cancelling…' : 'Cancel this script'}</button>
            )}
            {busy && <p class="muted" role="status">{cancelling
              ? 'Cancelling: the script is interrupted in Blender and what it did is rolled back.'
              : 'Running live in Blender…'}</p>}
            <p id="apply-help" class="muted">
              {reviewer
                ? <>Applies exactly the text above, sha256 <code>{short(entry.sha256, 16)}</code>, to the live scene. The executor
                  refuses it if the text or the live scene changed since the sandbox run.</>
                : <>Applying needs the reviewer role (a person); you are {who.name} ({who.role}). A reviewer can apply it here,
                  or with <code>blendmq script apply {id} --confirm --sha256 {entry.sha256}</code>.</>}
            </p>
          </div>
        </>
      )}
      {applied && applied.data && applied.data.status && (
        <p class={`note ${applied.data.status === 'applied' ? 'good' : 'error'}`} role={applied.data.status === 'applied' ? 'status' : 'alert'}>
          <strong>{STATUS_TEXT[applied.data.status] || applied.data.status}</strong>
          {applied.data.message ? `: ${outcome(applied.data.status, applied.data.message)}` : ''}
        </p>
      )}
      {applied && !applied.ok && !(applied.data && applied.data.status) && <ErrorNote error={applied.error} context="apply" />}
      <ErrorNote error={cancelError} context="cancel" />
    </section>
  );
}

export function ScriptsScreen({ who, arg }) {
  const [text, setText] = useState('');
  const [validateOnly, setValidateOnly] = useState(false);
  const [result, setResult] = useState(null);
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const [reload, setReload] = useState(0);
  if (arg) return <Review id={arg} who={who} />;
  const allowed = canOperate(who);
  async function submit(e) {
    e.preventDefault();
    setBusy(true); setError(null); setResult(null);
    const r = await api('POST', '/api/scripts', { script: text, validate_only: validateOnly });
    setBusy(false);
    if (r.data && r.data.status) setResult(r.data); else setError(r.error);
    setReload(n => n + 1);
  }
  return (
    <>
      <form class="card" onSubmit={submit} aria-label="Script">
        <label for="script-text">Script, or an AI reply with the script in fenced code blocks</label>
        <textarea id="script-text" class="mono" rows="10" spellcheck={false} value={text} onInput={e => setText(e.currentTarget.value)}
          placeholder={'import bpy\nbpy.ops.mesh.primitive_cube_add(size=2, location=(0, 0, 1))'} disabled={!allowed} />
        <div class="row">
          <label class="check"><input type="checkbox" checked={validateOnly} onChange={e => setValidateOnly(e.currentTarget.checked)}
            disabled={!allowed} /> Validate only (no sandbox run)</label>
          <button type="submit" disabled={busy || !allowed || !text.trim()}>{busy ? 'Checking…' : 'Check script'}</button>
        </div>
        <p class="muted">Nothing runs live from here: a script is checked, run in a sandboxed Blender on a copy of the scene,
          and applied only when a reviewer confirms its exact text.</p>
        {!allowed && <p class="muted">Submitting scripts needs the operator role; you are {who.name} ({who.role}).</p>}
      </form>
      <ErrorNote error={error} />
      <Result result={result} />
      <Asked reload={reload} />
      <Pending reload={reload} />
    </>
  );
}
