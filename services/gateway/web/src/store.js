// What the page knows of plans: one record per plan id, filled from the
// request's own story (POST /api/web/chat: planner notes, plan, verdict,
// result) and from the live progress stream (/api/events: steps, rollback,
// the end), whichever comes first. Components re-render on changes (useStore).
import { useEffect, useState } from 'preact/hooks';

const plans = new Map();
const order = [];                        // plan ids, newest first
const subscribers = new Set();
let scheduled = false;
const KEPT = 200;

function changed() {
  if (scheduled) return;
  scheduled = true;
  queueMicrotask(() => { scheduled = false; subscribers.forEach(f => f()); });
}

export function subscribe(fn) { subscribers.add(fn); return () => subscribers.delete(fn); }

// Re-render the calling component whenever the store changes.
export function useStore() {
  const [, setTick] = useState(0);
  useEffect(() => subscribe(() => setTick(t => t + 1)), []);
}

export const getPlan = id => plans.get(id);
export const recentPlans = n => order.slice(0, n).map(id => plans.get(id));

const ENDED = new Set(['done', 'failed', 'cancelled', 'interrupted', 'rejected', 'error', 'timeout']);
export const isEnded = p => ENDED.has(p.state);

// Change the record of plan `id` (made when new) with fn(record).
export function touch(id, fn) {
  let p = plans.get(id);
  if (!p) {
    p = { id, state: 'seen', planned: [], steps: [], notes: [], total: 0, seenAt: Date.now() };
    plans.set(id, p);
    order.unshift(id);
    if (order.length > KEPT) plans.delete(order.pop());
  }
  fn(p);
  p.rev = (p.rev || 0) + 1;
  changed();
  return p;
}

// A plan's steps as given ({operation, name, target, params}).
export function setPlanned(p, plan) {
  if (!Array.isArray(plan)) return;
  p.planned = plan.map(s => ({ operation: s.operation, object: s.name || s.target || '' }));
  p.total = p.total || plan.length;
}

// A progress event (executor → gateway → SSE or the story).
export function applyProgress(ev) {
  if (!ev || !ev.plan_id || ev.event === 'scene') return;     // a scene command's change: not a plan
  touch(ev.plan_id, p => {
    if (ev.cid) p.cid = ev.cid;
    if (ev.total) p.total = ev.total;
    if (ev.event === 'step' && ev.step > 0) {
      const planned = p.planned[ev.step - 1] || {};
      p.steps[ev.step - 1] = {
        step: ev.step, operation: ev.operation || planned.operation, object: ev.object || planned.object || '',
        status: ev.status, duration_ms: ev.duration_ms, error: ev.error,
      };
      if (!isEnded(p)) p.state = 'executing';
    } else if (ev.event === 'rollback') {
      p.rollback = ev.rollback;
    } else if (ev.event === 'plan' || ev.event === 'script') {
      if (ev.event === 'script') p.kind = p.kind || 'script';
      if (ev.status === 'started') { if (!isEnded(p)) p.state = 'executing'; }
      else if (ev.status) {
        p.state = ev.status;
        p.end = ev;
        if (ev.rollback) p.rollback = ev.rollback;
      }
    }
  });
}

// The end of a plan in the CLI's words: "done: 14/14 steps in 61.0 ms".
export function endLine(p) {
  const r = p.result || p.end;
  if (!r || !r.status || r.status === 'started') return null;
  const done = r.steps_done ?? r.step ?? p.steps.filter(s => s && s.status === 'ok').length;
  const total = r.steps_total ?? r.total ?? p.total;
  return `${r.status}: ${done}/${total} steps in ${Number(r.duration_ms || 0).toFixed(1)} ms${r.error ? ` — ${r.error}` : ''}`;
}

export const stepsDone = p => p.steps.filter(s => s && s.status === 'ok').length;
