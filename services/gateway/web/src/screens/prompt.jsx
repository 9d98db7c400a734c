// Prompt: say what to build; watch the plan's steps live; cancel.
import { useEffect, useState } from 'preact/hooks';
import { canOperate } from '../api.js';
import { startChat } from '../live.js';
import { endLine, getPlan, recentPlans, useStore } from '../store.js';
import { ErrorNote, PlanView, ResultPicture, StateBadge, loadPlan } from '../ui.jsx';

export function PromptScreen({ who, arg, go }) {
  useStore();
  const [text, setText] = useState('');
  const [keep, setKeep] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(null);
  const current = arg || null;
  useEffect(() => { if (current && !getPlan(current)) loadPlan(current).then(e => e && setError(e)); }, [current]);
  const allowed = canOperate(who);

  async function submit(e) {
    e.preventDefault();
    const prompt = text.trim();
    if (!prompt) { setError({ code: 'bad_request', message: 'say what to build first, for example "build a snowman"' }); return; }
    setBusy(true);
    setError(null);
    const r = await startChat(prompt, keep);
    setBusy(false);
    if (r.error) { setError(r.error); if (current) go('prompt', false); }    // the refusal alone, not an older plan under it
    else go(`prompt/${r.plan_id}`, false);
  }
  function onKey(e) {                      // Enter builds, Shift+Enter is a new line
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) submit(e);
  }
  const plan = current && getPlan(current);
  const others = recentPlans(12).filter(p => p && p.id !== current);
  return (
    <>
      <form class="card" onSubmit={submit} aria-label="Prompt">
        <label for="prompt">What should Blender build?</label>
        <textarea id="prompt" rows="2" value={text} onInput={e => setText(e.currentTarget.value)} onKeyDown={onKey}
          placeholder="build a snowman" aria-describedby="prompt-help" disabled={!allowed} />
        <p id="prompt-help" class="muted">Enter builds, Shift+Enter starts a new line. Offline recipes know everyday
          objects, with size, colour and position words (“a big red chair at 3 0 0”).</p>
        <div class="row">
          <label class="check"><input type="checkbox" checked={keep} onChange={e => setKeep(e.currentTarget.checked)}
            disabled={!allowed} /> Keep what was built if a step fails</label>
          <button type="submit" disabled={busy || !allowed}>Build</button>
        </div>
        {!allowed && <p class="muted">Building needs the operator role; you are {who.name} ({who.role}).</p>}
      </form>
      <ErrorNote error={error} />
      {plan && <PlanView plan={plan} who={who} />}
      {plan && <ResultPicture plan={plan} />}
      {others.length > 0 && (
        <section class="card" aria-labelledby="activity">
          <h3 id="activity">Recent plans on this gateway</h3>
          <p class="muted">Plans from every client (this page, the CLI, AI assistants), as their progress arrives.</p>
          <ul class="activity">
            {others.map(p => (
              <li>
                <a href={`#/prompt/${p.id}`}>{p.kind === 'script' ? 'Script' : 'Plan'} {p.id}</a> <StateBadge state={p.state} />{' '}
                <span class="muted">{p.prompt ? `“${p.prompt}” ` : ''}{endLine(p) || ''}</span>
              </li>
            ))}
          </ul>
        </section>
      )}
    </>
  );
}
