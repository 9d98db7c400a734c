// The page for people: prompt, scene, plans, scripts, audit, status (issue 15).
// Preact renders it; every screen talks to the gateway's HTTP API only.
import { render } from 'preact';
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { api } from './api.js';
import { live, onLive, startEvents } from './live.js';
import { ErrorNote } from './ui.jsx';
import { PromptScreen } from './screens/prompt.jsx';
import { SceneScreen } from './screens/scene.jsx';
import { PlansScreen } from './screens/plans.jsx';
import { ScriptsScreen } from './screens/scripts.jsx';
import { AuditScreen } from './screens/audit.jsx';
import { StatusScreen } from './screens/status.jsx';

const SCREENS = [
  ['prompt', 'Prompt', PromptScreen, 'Say what to build and watch it happen.'],
  ['scene', 'Scene', SceneScreen, 'What the live scene looks like and holds.'],
  ['plans', 'Plans', PlansScreen, 'Validate a plan written as JSON, then run it.'],
  ['scripts', 'Scripts', ScriptsScreen, 'Check a Blender Python script in the sandbox; reviewers apply it live.'],
  ['audit', 'Audit', AuditScreen, 'Everything that happened, by request.'],
  ['status', 'Status', StatusScreen, 'Services, validators, executors and their Blender.'],
];

function route() {
  const [screen, ...rest] = location.hash.replace(/^#\/?/, '').split('/');
  const found = SCREENS.find(s => s[0] === screen) || SCREENS[0];
  return { screen: found[0], arg: rest.length ? decodeURIComponent(rest.join('/')) : null };
}
const go = (path, focus = true) => { pendingFocus = focus; location.hash = `#/${path}`; };
let pendingFocus = false;

const CONN_TEXT = { connecting: 'connecting…', live: 'live', reconnecting: 'reconnecting…', 'signed-out': 'signed out' };

function Notices({ notices, dismiss }) {
  return (
    <div class="notices" aria-live="polite">
      {notices.map(n => (
        <div class={`note ${n.kind}`} key={n.id}>
          <span>{n.text}</span>{' '}
          <button type="button" class="link" onClick={() => dismiss(n.id)}>Dismiss<span class="sr-only"> this notice</span></button>
        </div>
      ))}
    </div>
  );
}

let noticeId = 0;
function gapText(g) {
  const missed = g.missed != null ? `${g.missed} event(s) missed` : 'some events may be missing';
  const why = g.message ? ` The gateway says: ${g.message}.` : '';
  return `Live updates had a gap (${g.reason || 'gap'}; ${missed}).${why} Plans shown here may lack steps from that time; the audit has them.`;
}

function App() {
  const [r, setR] = useState(route());
  const [who, setWho] = useState(null);
  const [whoError, setWhoError] = useState(null);
  const [conn, setConn] = useState({ ...live });
  const [notices, setNotices] = useState([]);
  const heading = useRef(null);
  useEffect(() => {
    const onHash = () => setR(route());
    addEventListener('hashchange', onHash);
    api('GET', '/api/whoami').then(x => (x.ok ? setWho(x.data) : setWhoError(x.error)));
    const offState = onLive('state', s => {
      setConn(s);
      if (s.state === 'live' && !who) api('GET', '/api/whoami').then(x => { if (x.ok) { setWho(x.data); setWhoError(null); } });
    });
    const offGap = onLive('gap', g => setNotices(n => [...n.slice(-4), { id: ++noticeId, kind: 'warn', text: gapText(g) }]));
    startEvents();
    return () => { removeEventListener('hashchange', onHash); offState(); offGap(); };
  }, []);
  useLayoutEffect(() => {                  // before the paint: the new screen is announced from its heading
    if (pendingFocus && heading.current) heading.current.focus();
    pendingFocus = true;
  }, [r.screen, r.arg]);
  const [name, title, Screen, about] = SCREENS.find(s => s[0] === r.screen);
  const dismiss = id => setNotices(n => n.filter(x => x.id !== id));
  const tab = n => {                       // a screen's tab puts the focus on its heading, also when it is open already
    pendingFocus = true;
    if (n === name && !r.arg && heading.current) heading.current.focus();
  };
  const skip = e => { e.preventDefault(); heading.current && heading.current.focus(); };
  return (
    <>
      <a class="skip" href="#main" onClick={skip}>Skip to the screen</a>
      <header class="top">
        <h1 class="brand">blendmq</h1>
        <p class="who">{who ? <>Signed in as <strong>{who.name}</strong> ({who.role})</> : 'Signing in…'}</p>
        <p class={`conn c-${conn.state}`} role="status">Live updates: {CONN_TEXT[conn.state] || conn.state}</p>
      </header>
      <nav class="tabs" aria-label="Screens">
        <ul>
          {SCREENS.map(([n, t]) => (
            <li><a href={`#/${n}`} aria-current={n === name ? 'page' : undefined} onClick={() => tab(n)}>{t}</a></li>
          ))}
        </ul>
      </nav>
      <main id="main" class="main">
        {conn.state === 'signed-out' && (
          <div class="note error" role="alert">
            <strong>Your session has ended.</strong> The gateway forgot it (it restarted) or its token was revoked
            {conn.error ? ` (${conn.error.message})` : ''}. Open the address <code>blendmq web</code> prints to sign in again;
            this page reconnects by itself once you have.
          </div>
        )}
        <Notices notices={notices} dismiss={dismiss} />
        <ErrorNote error={whoError} context="signing in" />
        <h2 ref={heading} tabIndex="-1">{title}</h2>
        <p class="muted about">{about}</p>
        {who ? <Screen who={who} arg={r.arg} go={go} key={name} /> : !whoError && <p class="muted">Signing in…</p>}
      </main>
    </>
  );
}

const root = document.getElementById('app');
root.textContent = '';
render(<App />, root);
