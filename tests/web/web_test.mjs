// The web page, end to end: real headless Chromium (Debian's /usr/bin/chromium
// driven by playwright-core) against a real stack (run_web_test.sh starts it).
//   node web_test.mjs TEST --bin DIR --run-dir DIR --url URL --modules NODE_MODULES
// TEST is one of:
//   prompt     sign in with the `web` token; a prompt runs to `done: N/N steps in T ms`, with the
//              planner's notes and every step; the Scene screen shows a preview and the new objects
//   rollback   Plans: a plan with an error is refused with its step/field/reason; a plan that
//              fails in Blender shows the failed step, the reason and what was rolled back
//   review     Scripts: an operator submits a fenced reply (verdict, warnings, exact text, sandbox
//              diff) and cannot apply it (the button is off and the API answers 403); a reviewer
//              applies exactly that sha256 and the object appears in the live scene
//   load       every screen loads with no console error and no failed request, passes axe-core with
//              no serious or critical violation, and is kept as a screenshot; first-contentful-paint;
//              the audit story of a request and the export
//   crosssite  (issue 24, label attack) a page on another loopback port, opened in the browser of a person
//              signed in to the page, posts the confirm of an agent's script (fetch no-cors with a Blob, a JSON
//              fetch, a form): nothing is confirmed and the audit has no confirmation; the session cookie is
//              __Host- and Secure (Chromium keeps it on http://127.0.0.1); the page itself confirms, and the
//              audit names the key, its own role and the channel (web, operator+reviewer, page); MCP
//              confirm_script answers pending, the Scripts screen shows the AI assistant's request, and the
//              agent's next call says applied
//   open       (issue 24, label attack) `blendmq web --open` with a fake xdg-open/$BROWSER that records its
//              argv and every process's: no token in any; the one-time code signs in once; no browser: exit ≠ 0
//   scriptcancel (issue 29) Scripts: "Apply to live" of a long script (3 cubes, then a loop of about 5 s) shows
//              "Cancel this script"; pressed, the page shows cancelled and the executor's rollback message, and the live
//              scene's objects are those before. Over HTTP: POST /api/plans/SCRIPT_ID/cancel of a running script is
//              refused with a viewer token (403) and with another agent's key (403), answered 202 for its own key
//              (the apply then answers cancelled), 404 once it ended
//   reconnect  the gateway is killed (kill -9; `up` supervises it back): the page's live stream
//              reconnects with Last-Event-ID, shows the gap, and follows plans again
// Screenshots go to ./screenshots (the test's working dir).
import { createRequire } from 'node:module';
import { execFileSync } from 'node:child_process';
import { readFileSync, mkdirSync, statSync, unlinkSync, writeFileSync, chmodSync, mkdtempSync, existsSync } from 'node:fs';
import { createServer } from 'node:http';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const args = Object.fromEntries(process.argv.slice(3).reduce((acc, a, i, all) =>
  (a.startsWith('--') ? [...acc, [a.slice(2), all[i + 1]]] : acc), []));
const which = process.argv[2];
const require = createRequire(join(args.modules, 'noop.js'));
const { chromium } = require('playwright-core');
const axeSource = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
const { bin, url } = args;
const runDir = args['run-dir'];
mkdirSync('screenshots', { recursive: true });

let passed = 0, failed = 0;
function check(cond, what) {
  if (!cond) throw new Error(`expected: ${what}`);
  console.log(`ok   ${what}`);
}
const sleep = ms => new Promise(r => setTimeout(r, ms));
const token = name => readFileSync(join(runDir, 'keys', `${name}.token`), 'utf8').trim();
const blendmq = (...a) => execFileSync(join(bin, 'blendmq'), ['--run-dir', runDir, ...a], { encoding: 'utf8' });

// Every service alive and Blender connected (after a restart the validators and executor reconnect).
async function waitHealthy(ms = 30000) {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    try {
      const st = JSON.parse(blendmq('--json', 'status').split('\n')[0]);
      const s = st.services || [];
      const pool = s.find(x => x.name === 'validator');
      if (s.every(x => x.alive) && pool && pool.workers > 0
          && s.filter(x => x.name === 'executor').every(x => x.state === 'blender connected')) return;
    } catch { /* not yet */ }
    await sleep(250);
  }
  throw new Error('the stack did not become healthy in time');
}

// A browser context signed in the way a person is: the address `blendmq web` prints (a token) → session cookie.
async function signIn(browser, name) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
  const page = await context.newPage();
  const log = { console: [], failed: [], bad: [] };
  page.on('console', m => { if (m.type() === 'error' || m.type() === 'warning') log.console.push(`${m.type()}: ${m.text()}`); });
  page.on('pageerror', e => log.console.push(`pageerror: ${e.message}`));
  page.on('requestfailed', r => log.failed.push(`${r.method()} ${r.url()}: ${r.failure() && r.failure().errorText}`));
  page.on('response', r => { if (r.status() >= 400) log.bad.push(`${r.request().method()} ${r.url()}: ${r.status()}`); });
  const start = `${url}/?token=${token(name)}`;
  await page.goto(start);
  await page.getByText('Signed in as').waitFor();
  await page.getByText('Live updates: live').waitFor();
  return { context, page, log, start };
}

async function axe(page, label) {
  await page.evaluate(axeSource);          // through the DevTools protocol: the page's CSP stays as served
  const r = await page.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }));
  const grave = r.violations.filter(v => v.impact === 'serious' || v.impact === 'critical');
  for (const v of grave) console.log(`     axe ${v.impact} ${v.id}: ${v.help} (${v.nodes.map(n => n.target.join(' ')).slice(0, 3).join('; ')})`);
  check(!grave.length, `axe-core on ${label}: no serious or critical violations (${r.violations.length} minor or moderate)`);
}

const shot = (page, name) => page.screenshot({ path: `screenshots/${name}.png`, fullPage: true });
const screen = async (page, hash, heading) => {
  await page.goto(`${url}/#/${hash}`);
  await page.getByRole('heading', { level: 2, name: heading }).waitFor();
};

async function prompt(browser) {
  const { page, log } = await signIn(browser, 'web');
  check(await page.getByText('Signed in as web (operator+reviewer)').isVisible(),
    'signed in through the token URL as web (operator+reviewer): the page\'s key is not admin');
  check(!page.url().includes('token='), 'the token is gone from the address bar');
  await page.getByLabel('What should Blender build?').fill('build a red chair');
  await page.getByRole('button', { name: 'Build' }).click();
  const end = page.locator('.end-line');
  await end.waitFor({ timeout: 30000 });
  const line = await end.innerText();
  const m = /^done: (\d+)\/(\d+) steps in [0-9.]+ ms$/.exec(line);
  check(m && m[1] === m[2], `the end line is worded like the CLI: "${line}"`);
  const rows = await page.locator('table.steps tbody tr').count();
  check(rows === Number(m[1]), `the steps table has all ${rows} steps`);
  const ok = await page.locator('table.steps tbody tr.st-ok').count();
  check(ok === rows, 'every step is ok, with its duration');
  check(await page.locator('table.steps tbody tr').first().locator('td').nth(2).innerText() === 'chair', 'steps name their object');
  const bar = page.locator('progress');
  check(await bar.getAttribute('value') === await bar.getAttribute('max'), 'the progress bar is full');
  check(/offline recipe 'chair'/.test(await page.locator('.notes ol').innerText()), 'the planner\'s note is shown');
  // issue 29: the Prompt screen shows the result's picture, and says sizes and relations as the CLI does
  const pic = page.getByRole('img', { name: /Preview render of the live scene after plan/ });
  await pic.waitFor({ timeout: 20000 });
  check(await pic.evaluate(i => i.complete && i.naturalWidth === 640), 'the Prompt screen shows the result\'s picture (640×480)');
  await axe(page, 'the prompt screen after a plan');
  await shot(page, 'prompt');
  // a prompt nothing matches: answered 422 no_match (not 502), and the previous plan is no longer shown under it
  const noMatch = await page.evaluate(() => fetch('/api/web/chat', { method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ prompt: 'qwxzv plorble' }) }).then(r => r.status));
  check(noMatch === 422, `a prompt nothing matches is HTTP 422, not 502 (${noMatch})`);
  await page.getByLabel('What should Blender build?').fill('qwxzv plorble');
  await page.getByRole('button', { name: 'Build' }).click();
  await page.getByRole('alert').filter({ hasText: /no recipe|no_match/ }).first().waitFor({ timeout: 15000 });
  check(await page.locator('section.plan').count() === 0, 'the refusal shows alone: the previous plan is no longer under it');
  await screen(page, 'scene', 'Scene');
  const img = page.getByRole('img', { name: /Preview render of the live scene/ });
  await img.waitFor({ timeout: 20000 });
  check(await img.evaluate(i => i.complete && i.naturalWidth === 640), 'the Scene screen shows a 640×480 preview render');
  await page.getByRole('cell', { name: 'chair_seat', exact: true }).waitFor();
  check(true, 'the object list shows the chair\'s parts');
  await shot(page, 'scene');
  check(!log.console.some(l => !/status of 422/.test(l)), `no console errors but the no_match asked for above (${log.console.join(' | ')})`);
}

async function rollback(browser) {
  const { page, log } = await signIn(browser, 'web');
  await screen(page, 'plans', 'Plans');
  const area = page.getByLabel(/^Plan \(JSON/);
  await area.fill('[{"operation": "bpy.ops.mesh.primitive_cube_add", "name": "a"},\n'
    + ' {"operation": "object.material", "target": "ghost", "params": {"color": [1, 0, 0]}}]');
  await page.getByRole('button', { name: 'Validate' }).click();
  const errors = page.locator('table.errors tbody tr');
  await errors.first().waitFor();
  const cells = await errors.first().locator('td').allInnerTexts();
  check(cells[0] === '2' && cells[1] === 'target' && /ghost/.test(cells[2]), `a refused plan shows step, field and reason: ${cells.join(' | ')}`);
  check(/rejected: 1 problem\(s\); nothing was run/.test(await page.locator('.note.error').first().innerText()), 'and that nothing ran');
  await area.fill('[{"operation": "bpy.ops.mesh.primitive_cube_add", "name": "web_cube"},\n'
    + ' {"operation": "bpy.ops.object.light_add", "name": "web_light"},\n'
    + ' {"operation": "object.material", "target": "web_light", "params": {"color": [1, 0, 0]}}]');
  await page.getByRole('button', { name: 'Validate' }).click();
  await page.getByText('validated: 3 steps accepted').waitFor();
  check(true, 'a plan that only Blender can refuse passes validation');
  await page.getByRole('button', { name: 'Run' }).click();
  const failure = page.locator('.failure');
  await failure.waitFor({ timeout: 30000 });
  // the failed step's event comes first, the rollback with the plan's end: wait for what the page
  // shows once both are in (a slow executor, e.g. under ASan, leaves a moment between them)
  await failure.locator('.rollback').waitFor({ timeout: 30000 }).catch(() => {});
  const text = await failure.innerText();
  check(/Step 3 failed/.test(text) && /object\.material/.test(text) && /cannot hold materials/.test(text), `the failure names the step and the reason: ${text.split('\n')[0]}`);
  check(/rolled back: removed 2 object\(s\) \(web_cube, web_light\)/.test(text), 'and what was rolled back');
  const line = await page.locator('.end-line').innerText();
  check(/^failed: 2\/3 steps in [0-9.]+ ms — step 3/.test(line), `the end line: "${line.slice(0, 60)}…"`);
  check(await page.locator('table.steps tbody tr.st-failed').count() === 1, 'the failed step is marked in the table');
  const scene = await page.evaluate(() => fetch('/api/scene?limit=1000').then(r => r.json()));
  check(!scene.objects.some(o => o.name.startsWith('web_')), 'the live scene holds nothing of the failed plan');
  await axe(page, 'the plans screen with a failure');
  await shot(page, 'plans');
  // Cancel: 60 dense spheres take Blender long enough to stop them half way
  const big = Array.from({ length: 60 }, (_, i) => ({ operation: 'bpy.ops.mesh.primitive_uv_sphere_add', name: `web_s${i}`,
    params: { segments: 128, ring_count: 64, location: [i, 0, 0] } }));
  await area.fill(JSON.stringify(big));
  await page.getByRole('button', { name: 'Run' }).click();
  await page.locator('table.steps tbody tr.st-ok').first().waitFor({ timeout: 30000 });
  await page.getByRole('button', { name: 'Cancel this plan' }).click();
  const cancelled = page.locator('.end-line', { hasText: /^cancelled: / });
  await cancelled.waitFor({ timeout: 30000 });
  const cl = await cancelled.innerText();
  const cm = /^cancelled: (\d+)\/60 steps/.exec(cl);
  check(cm && Number(cm[1]) < 60, `Cancel stops a running plan: "${cl.slice(0, 70)}"`);
  check(/rolled back: removed \d+ object\(s\)/.test(await page.locator('.plan .rollback').innerText()), 'and rolls back what it built');
  check(!log.console.some(l => !/status of 422/.test(l)), `no console errors but the refused plan's 422 (${log.console.join(' | ')})`);
}

async function review(browser) {
  for (const [n, role] of [['web_alice', 'reviewer'], ['web_bob', 'operator']]) {
    try { statSync(join(runDir, 'keys', `${n}.token`)); } catch { blendmq('keys', 'add-client', n, '--role', role); }
  }
  const bob = await signIn(browser, 'web_bob');
  let page = bob.page;
  await screen(page, 'scripts', 'Scripts');
  await page.getByLabel(/^Script, or an AI reply/).fill('import os\nx = (1,\n');
  await page.getByRole('button', { name: 'Check script' }).click();
  const err = page.locator('table.errors tbody tr').first();
  await err.waitFor({ timeout: 30000 });
  const cells = await err.locator('td').allInnerTexts();
  check(cells[0] === '2' && cells[1] === '5' && cells[2] === 'syntax', `a rejected script shows line and column: ${cells.join(' | ')}`);
  await page.getByLabel(/^Script, or an AI reply/).fill('Here is the crate:\n```python\nimport bpy\n'
    + 'bpy.ops.mesh.primitive_cube_add(size=1, location=(4, 0, 0.5))\nbpy.context.active_object.name = "web_crate"\n```\nEnjoy!');
  await page.getByRole('button', { name: 'Check script' }).click();
  await page.getByRole('heading', { name: /ran cleanly in the sandbox/ }).waitFor({ timeout: 60000 });
  const result = await page.locator('section.card', { has: page.locator('#result-h') }).innerText();
  check(/line 1 of the reply is not part of the script/.test(result), 'the verdict lists the prose lines left out');
  check(/added: web_crate \(MESH\)/.test(result), 'the sandbox diff shows what the script adds');
  check(/bpy\.ops\.mesh\.primitive_cube_add\(size=1/.test(await page.getByLabel('The exact text that was validated').innerText()),
    'the exact validated text is shown');
  const link = page.getByRole('link', { name: /^Review script .* apply it/ });
  const id = (await link.getAttribute('href')).split('/').pop();
  await link.click();
  await page.getByRole('heading', { name: /^Review script/ }).waitFor();
  const sha = await page.locator('dl.facts code.sha').innerText();
  check(/^[0-9a-f]{64}$/.test(sha), 'the review shows the script\'s sha256');
  const apply = page.getByRole('button', { name: 'Apply to live' });
  check(await apply.isDisabled(), 'an operator gets no Apply to live button that works');
  check(/needs the reviewer role/.test(await page.locator('#apply-help').innerText()), 'and is told that it needs the reviewer role');
  const refused = await page.evaluate(([i, s]) => fetch(`/api/scripts/${i}/confirm`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ sha256: s }),
  }).then(async r => ({ status: r.status, body: await r.json() })), [id, sha]);
  check(refused.status === 403 && refused.body.error.code === 'forbidden', 'the gateway refuses the operator\'s confirm: 403 forbidden');
  await axe(page, 'the script review screen (operator)');
  await bob.context.close();

  const alice = await signIn(browser, 'web_alice');
  page = alice.page;
  await screen(page, 'scripts', 'Scripts');
  check(await page.getByLabel(/^Script, or an AI reply/).isDisabled(), 'a reviewer cannot submit scripts');
  const chat = await page.evaluate(() => fetch('/api/web/chat', { method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: '{"prompt": "build a cube"}' }).then(r => r.status));
  check(chat === 403, 'nor chat: POST /api/web/chat needs the operator role (403)');
  await page.getByRole('link', { name: `Review ${id.slice(0, 12)}…` }).click();
  await page.getByRole('heading', { name: /^Review script/ }).waitFor();
  check(await page.locator('dl.facts code.sha').innerText() === sha, 'the reviewer sees the same sha256 in the pending list\'s review');
  check(/web_crate/.test(await page.getByLabel(/the exact text that would run/).innerText()), 'and the exact text');
  await page.getByRole('button', { name: 'Apply to live' }).click();
  await page.getByText('applied live').waitFor({ timeout: 30000 });
  check(true, 'the reviewer applies it to the live scene');
  const scene = await page.evaluate(() => fetch('/api/scene?limit=1000').then(r => r.json()));
  check(scene.objects.some(o => o.name === 'web_crate'), 'web_crate is in the live scene');
  await axe(page, 'the script review screen (reviewer, applied)');
  await shot(page, 'scripts');
  check(!alice.log.console.some(l => !/status of 403/.test(l)),
    `no console errors for the reviewer but the 403 of the chat tried on purpose (${alice.log.console.join(' | ')})`);
}

async function load(browser) {
  blendmq('chat', 'build a red chair');       // a story for the audit screen, also when this test runs alone
  const stranger = await browser.newContext();
  const codes = await Promise.all(['/', '/web/app.js', '/api/web/status'].map(p => stranger.request.get(url + p).then(r => r.status())));
  check(codes.every(c => c === 401), `without a token or session the page and its files answer 401 (${codes.join(', ')})`);
  await stranger.close();
  const { page, log } = await signIn(browser, 'web');
  const fcp = await page.evaluate(() => {
    const e = performance.getEntriesByName('first-contentful-paint')[0];
    return e ? e.startTime : null;
  });
  const nav = await page.evaluate(() => { const n = performance.getEntriesByType('navigation')[0]; return n ? n.domContentLoadedEventEnd : null; });
  console.log(`     first-contentful-paint ${fcp == null ? '?' : fcp.toFixed(1)} ms, DOMContentLoaded ${nav == null ? '?' : nav.toFixed(1)} ms`);
  check(fcp != null && fcp < 2000, 'first contentful paint within 2 s');
  const screens = [['prompt', 'Prompt'], ['scene', 'Scene'], ['plans', 'Plans'], ['scripts', 'Scripts'], ['audit', 'Audit'], ['status', 'Status']];
  for (const [hash, title] of screens) {
    await page.getByRole('link', { name: title, exact: true }).click();
    await page.getByRole('heading', { level: 2, name: title }).waitFor();
    check(await page.evaluate(() => document.activeElement && document.activeElement.tagName) === 'H2', `${title}: moving to a screen puts the focus on its heading`);
    if (hash === 'scene') await page.getByRole('img', { name: /Preview render/ }).waitFor({ timeout: 20000 });
    if (hash === 'audit') await page.locator('table.audit tbody tr').first().waitFor();
    if (hash === 'status') await page.getByRole('cell', { name: 'planner', exact: true }).waitFor();
    if (hash === 'scripts') await page.getByRole('heading', { name: /Scripts waiting for a reviewer/ }).waitFor();
    await axe(page, `the ${title} screen`);
    // issue 29: nothing is wider than the 1,280 px window (tables wrap or scroll inside their card)
    const wide = await page.evaluate(() => {
      const out = [];
      if (document.documentElement.scrollWidth > window.innerWidth) out.push(`the page (${document.documentElement.scrollWidth} px)`);
      for (const t of document.querySelectorAll('table')) {
        const r = t.getBoundingClientRect();
        if (r.right > window.innerWidth + 0.5) out.push(`table.${t.className || '?'} (right edge at ${Math.round(r.right)} px)`);
      }
      return out;
    });
    check(!wide.length, `${title}: nothing overflows a 1,280 px window${wide.length ? ` (${wide.join(', ')})` : ''}`);
    await shot(page, `load-${hash}`);
  }
  const pool = await page.locator('dl.facts').first().innerText();
  check(/Workers\s+2/.test(pool), 'Status shows the validator pool: 2 workers');
  check(/blender connected/.test(await page.locator('section.card', { has: page.locator('#exec-h') }).innerText()), 'and the executor\'s Blender link');
  await shot(page, 'status');
  // keyboard: the tabs are links in order, reachable with Tab
  await page.keyboard.press('Home');
  await page.getByRole('link', { name: 'Prompt', exact: true }).focus();
  await page.keyboard.press('Tab');
  check(await page.evaluate(() => document.activeElement.textContent) === 'Scene', 'Tab moves along the screens');
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { level: 2, name: 'Scene' }).waitFor();
  check(true, 'Enter opens a screen');

  // the audit: a request's story, the filter, the export
  await screen(page, 'audit', 'Audit');
  await page.getByLabel('Kind').fill('request');
  await page.getByRole('button', { name: 'Show records' }).click();
  await page.locator('table.audit tbody tr').first().waitFor();
  // the table may still show the unfiltered page for a moment: give the filtered one time to replace it
  await page.waitForFunction(() => {
    const cells = [...document.querySelectorAll('table.audit tbody tr td:nth-child(2)')];
    return cells.length > 0 && cells.every(c => c.textContent === 'request');
  }, null, { timeout: 5000 }).catch(() => {});
  const kinds = await page.locator('table.audit tbody tr td:nth-child(2)').allInnerTexts();
  check(kinds.length > 0 && kinds.every(k => k === 'request'), `the kind filter keeps only requests (${kinds.length})`);
  const row = page.locator('table.audit tbody tr', { hasText: 'build a red chair' }).first();
  await row.getByRole('link', { name: /^Story/ }).click();
  await page.getByRole('heading', { name: /^Story of/ }).waitFor();
  await page.getByRole('heading', { level: 4, name: 'Outcome' }).waitFor();
  const phases = await page.locator('.story h4').allInnerTexts();
  check(['Request', 'Plan', 'Verdict', 'Steps', 'Outcome'].every(p => phases.includes(p)), `the story reads request → plan → verdict → steps → outcome (${phases.join(', ')})`);
  check(/outcome: done/.test(await page.locator('.story').innerText()), 'and ends with its outcome');
  await axe(page, 'an audit story');
  await shot(page, 'audit');
  await page.getByRole('link', { name: 'Back to the audit list' }).click();
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export as JSON lines' }).click()]);
  const text = readFileSync(await download.path(), 'utf8');
  const lines = text.trim().split('\n').map(l => JSON.parse(l));
  check(lines.length > 0 && lines.every(l => l.kind === 'request' && l.cid), `the export is JSON lines of the filtered records (${lines.length})`);
  check(!log.console.length, `no console errors or warnings (${log.console.join(' | ')})`);
  check(!log.failed.length, `no failed requests (${log.failed.join(' | ')})`);
  check(!log.bad.length, `no answer with an error status (${log.bad.join(' | ')})`);
}

async function reconnect(browser) {
  const { context, page, start } = await signIn(browser, 'web');
  await screen(page, 'prompt', 'Prompt');
  const before = await page.evaluate(() => sessionStorage.getItem('blendmq.lastEventId'));
  check(/^[0-9a-f]{16}-\d+$/.test(before || ''), `the page keeps its stream position (${before})`);
  const pid = Number(readFileSync(join(runDir, 'pids', 'gateway.pid'), 'utf8'));
  process.kill(pid, 'SIGKILL');
  console.log(`     killed the gateway (pid ${pid})`);
  await page.getByText(/Live updates: (reconnecting|signed out)/).waitFor({ timeout: 10000 });
  check(true, 'the page notices the stream is gone');
  await page.getByText(/Live updates: (live|signed out)/).waitFor({ timeout: 20000 });
  if (await page.getByText('Live updates: signed out').isVisible()) {
    // sessions live in the gateway's memory: a restart ends them. A person opens the link again,
    // in another tab of the same browser; this page, still open, reconnects with its Last-Event-ID.
    check(await page.getByText('Your session has ended.').isVisible(), 'the page says the session ended and how to sign in again');
    const tab = await context.newPage();
    await tab.goto(start);
    await tab.getByText('Signed in as').waitFor();
    await tab.close();
    await page.getByText('Live updates: live').waitFor({ timeout: 15000 });
  }
  check(true, 'the stream is live again after the restart');
  const gap = page.locator('.notices .note', { hasText: 'gateway restarted' });
  await gap.waitFor({ timeout: 10000 });
  check(true, `the page shows the gap: ${(await gap.innerText()).slice(0, 90)}…`);
  const after = await page.evaluate(() => sessionStorage.getItem('blendmq.lastEventId'));
  check(after && after.split('-')[0] !== before.split('-')[0], `its position now names the new gateway (${after})`);
  await waitHealthy();
  blendmq('chat', 'build a table');                // another client: only the live stream tells the page
  await page.locator('.activity li', { hasText: /done: \d+\/\d+ steps/ }).first().waitFor({ timeout: 20000 });
  check(true, 'a plan run from the CLI after the restart reaches the page over the stream');
  await page.getByLabel('What should Blender build?').fill('build a lamp');
  await page.getByRole('button', { name: 'Build' }).click();
  await page.locator('.end-line', { hasText: /^done: / }).waitFor({ timeout: 30000 });
  check(true, 'a prompt from the page runs to done after the restart');
  await shot(page, 'reconnect');
}

// With a bearer token, outside any browser (the agent's side, and the checks).
async function bearer(method, path, name, body) {
  const init = { method, headers: { Authorization: `Bearer ${token(name)}`, Accept: 'application/json' } };
  if (body !== undefined) { init.headers['Content-Type'] = 'application/json'; init.body = JSON.stringify(body); }
  const r = await fetch(url + path, init);
  return { status: r.status, data: await r.json().catch(() => null) };
}

async function sandboxed(name) {
  const r = await bearer('POST', '/api/scripts', 'mcp', {
    script: `import bpy\nbpy.ops.mesh.primitive_cube_add(size=0.5, location=(7, 0, 0.25))\nbpy.context.active_object.name = "${name}"\n` });
  if (r.status !== 200 || r.data.status !== 'sandboxed') throw new Error(`the agent's script did not sandbox: ${JSON.stringify(r)}`);
  const listed = await bearer('GET', `/api/scripts/${r.data.script_id}`, 'cli');
  const entry = (listed.data.scripts || [listed.data])[0];
  if (!entry || !/^[0-9a-f]{64}$/.test(entry.sha256)) throw new Error(`no sha256 for the agent's script: ${JSON.stringify(listed)}`);
  return { id: r.data.script_id, sha: entry.sha256 };
}

const confirmations = async id => {
  const r = await bearer('GET', `/api/audit?kind=script.confirm&cid=${encodeURIComponent(id)}&limit=50`, 'cli');
  return JSON.stringify(r.data || {});
};

async function crosssite(browser) {
  const { context, page } = await signIn(browser, 'web');
  const cookies = await context.cookies(url);
  const session = cookies.find(c => c.name === '__Host-blendmq_session');
  check(session && session.secure && session.path === '/' && session.httpOnly && session.sameSite === 'Strict',
    `Chromium keeps the __Host- session cookie (Secure, Path=/, HttpOnly, SameSite=Strict) on ${url}`);
  check(!cookies.some(c => c.name === 'blendmq_session'), 'and no cookie without the prefix');
  const agent = await sandboxed('agent_crate');
  // the attacker's page: another port on the same loopback address (same site for the browser)
  const evil = createServer((req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html' });
    res.end(`<!doctype html><title>cats</title><form id="f" method="POST" enctype="text/plain" target="sink"
      action="${url}/api/scripts/${agent.id}/confirm"><input name='{"sha256":"${agent.sha}","x":"' value='"}'></form>
      <iframe name="sink"></iframe><script>
      const target = ${JSON.stringify(`${url}/api/scripts/${agent.id}/confirm`)};
      const body = JSON.stringify({ sha256: ${JSON.stringify(agent.sha)} });
      window.results = {};
      (async () => {
        try { const r = await fetch(target, { method: 'POST', mode: 'no-cors', credentials: 'include', body: new Blob([body]) });
              window.results.nocors = r.type; } catch (e) { window.results.nocors = 'error ' + e.message; }
        try { const r = await fetch(target, { method: 'POST', credentials: 'include', headers: { 'Content-Type': 'application/json' }, body });
              window.results.json = r.status; } catch (e) { window.results.json = 'blocked'; }
        try { const r = await fetch(target, { method: 'POST', mode: 'no-cors', credentials: 'include',
              headers: { 'Content-Type': 'text/plain' }, body }); window.results.text = r.type; } catch (e) { window.results.text = 'error'; }
        document.getElementById('f').submit();
        window.results.done = true;
      })();
      </script>`);
  });
  await new Promise(r => evil.listen(0, '127.0.0.1', r));
  const evilUrl = `http://127.0.0.1:${evil.address().port}/`;
  try {
    const attack = await context.newPage();
    await attack.goto(evilUrl);
    await attack.waitForFunction(() => window.results && window.results.done, null, { timeout: 15000 });
    await sleep(2000);                                  // the form's POST, and anything the gateway would have run
    const results = await attack.evaluate(() => window.results);
    check(results.json === 'blocked', `the JSON fetch from ${evilUrl} is stopped by its preflight (${JSON.stringify(results)})`);
  } finally { evil.close(); }
  const listed = await bearer('GET', `/api/scripts/${agent.id}`, 'cli');
  const entry = (listed.data.scripts || [listed.data])[0] || listed.data;
  check(entry && entry.applied === false, `the agent's script was not applied (applied: ${entry && entry.applied})`);
  const trail = await confirmations(agent.id);
  check(!/"status":"confirmed"/.test(trail), 'the audit has no confirmation of it');
  const scene = await bearer('GET', '/api/scene?limit=1000', 'cli');
  check(!(scene.data.objects || []).some(o => o.name === 'agent_crate'), 'and its object is not in the live scene');
  // the agent asks over MCP (confirm_script): a person is asked on the page, not the agent
  const asked = await mcpConfirm(agent);
  check(asked.structuredContent && asked.structuredContent.status === 'pending' && !asked.isError,
    `MCP confirm_script answers pending and where to approve (${(asked.content || [{}])[0].text})`);
  await screen(page, 'scripts', 'Scripts');
  await page.getByRole('heading', { name: 'An AI assistant asks you to apply' }).waitFor();
  await axe(page, 'the Scripts screen with an AI assistant\'s request');
  await shot(page, 'scripts-asked');
  // the page itself, a person clicking Apply to live: confirmed, and the audit says who, as what, and how
  await page.locator('section', { has: page.getByRole('heading', { name: 'An AI assistant asks you to apply' }) })
    .getByRole('link', { name: `Review ${agent.id.slice(0, 12)}…` }).click();
  await page.getByRole('heading', { name: /^Review script/ }).waitFor();
  await page.getByRole('button', { name: 'Apply to live' }).click();
  await page.getByText('applied live').waitFor({ timeout: 30000 });
  const after = await confirmations(agent.id);
  check(/"status":"confirmed"/.test(after), 'the page\'s own confirmation applies it');
  check(/"confirmed_by":\{[^}]*"key":"web"/.test(after) && /"role":"operator\+reviewer"/.test(after) && /"channel":"page"/.test(after),
    'and the audit records the key (web), its own role (operator+reviewer) and the channel (page)');
  const outcome = await mcpConfirm(agent);
  check(outcome.structuredContent && outcome.structuredContent.status === 'applied', 'the agent\'s next confirm_script says applied');
}

// confirm_script over MCP Streamable HTTP with the `mcp` token (JSON answers), waiting 0 s.
async function mcpConfirm(agent) {
  const headers = { Authorization: `Bearer ${token('mcp')}`, 'Content-Type': 'application/json', Accept: 'application/json' };
  const init = await fetch(`${url}/mcp`, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: { elicitation: {} }, clientInfo: { name: 'web-test-agent', version: '1' } } }) });
  const sid = init.headers.get('mcp-session-id');
  const h = { ...headers, 'Mcp-Session-Id': sid, 'MCP-Protocol-Version': '2025-06-18' };
  await fetch(`${url}/mcp`, { method: 'POST', headers: h, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) });
  const r = await fetch(`${url}/mcp`, { method: 'POST', headers: h, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call',
    params: { name: 'confirm_script', arguments: { script_id: agent.id, sha256: agent.sha, wait_s: 0 } } }) });
  return (await r.json()).result || {};
}

async function open() {
  const dir = mkdtempSync(join(tmpdir(), 'bmq-open-'));
  const rec = join(dir, 'argv.txt'), procs = join(dir, 'procs.txt');
  // a stand-in browser: records its argv and every process's command line while it runs
  const fake = `#!/bin/sh
printf '%s\n' "$0" "$@" > '${rec}'
cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' ' ' > '${procs}'
exit \${FAKE_EXIT:-0}
`;
  writeFileSync(join(dir, 'xdg-open'), fake);
  chmodSync(join(dir, 'xdg-open'), 0o755);
  const run = (env) => spawnSync(join(bin, 'blendmq'), ['--run-dir', runDir, 'web', '--open'],
    { encoding: 'utf8', env: { ...process.env, BROWSER: '', ...env } });
  const ok = run({ PATH: `${dir}:${process.env.PATH}` });
  check(ok.status === 0, `blendmq web --open exits 0 when the browser opened (${ok.stderr.trim()})`);
  const argv = readFileSync(rec, 'utf8');
  const all = readFileSync(procs, 'utf8') + argv + ok.stdout + ok.stderr;
  for (const name of ['web', 'cli', 'mcp']) check(!all.includes(token(name)), `no process's argv (nor its output) holds the ${name} token`);
  const m = /\/\?code=([0-9a-f]+)/.exec(argv);
  check(m, `the opener got a one-time code: ${argv.replace(/\n/g, ' ').trim()}`);
  const first = await fetch(`${url}/?code=${m[1]}`, { redirect: 'manual' });
  check(first.status === 303 && /__Host-blendmq_session=web\./.test(first.headers.get('set-cookie') || ''), 'the code signs in as web');
  const again = await fetch(`${url}/?code=${m[1]}`, { redirect: 'manual' });
  check(again.status === 401, 'once: the same code again is refused (401)');
  const failed = run({ PATH: `${dir}:${process.env.PATH}`, FAKE_EXIT: '3' });
  check(failed.status !== 0, `an opener that fails: web --open exits ${failed.status}`);
  const none = run({ PATH: '/nonexistent', BROWSER: join(dir, 'no-such-browser') });
  check(none.status !== 0 && /no browser was opened/.test(none.stderr), `no opener at all: exit ${none.status}, said so`);
  check(existsSync(rec), 'done');
}

// issue 29: a live script is cancellable from the page (and over HTTP, by whom it may be)
async function scriptcancel(browser) {
  try { statSync(join(runDir, 'keys', 'web_vera.token')); } catch { blendmq('keys', 'add-client', 'web_vera', '--role', 'viewer'); }
  const objects = async () => ((await bearer('GET', '/api/scene?limit=1000', 'cli')).data.objects || [])
    .map(o => `${o.name}:${o.type}`).sort().join(',');
  // the loop is sized from a sandbox run of a short one (as cli.stop_script): about 5 s, well under the
  // sandbox's time limit (executor.script_timeout_ms, 20 s) on a loaded machine, long enough to cancel live
  const long = n => 'import bpy\nfor i in range(3):\n    bpy.ops.mesh.primitive_cube_add(size=0.5, location=(i * 2, -9, 0))\n'
    + `n = 0\nwhile n < ${n}:\n    n = n + 1\nprint(n)\n`;
  const probe = await bearer('POST', '/api/scripts', 'web', { script: long(2000000) });
  const ms = Number(probe.data && probe.data.sandbox && probe.data.sandbox.duration_ms) || 0;
  const count = Math.max(5000000, Math.min(ms > 0 ? Math.round(2000000 * 5000 / ms) : 50000000, 400000000));
  console.log(`     2,000,000 iterations took ${ms.toFixed(0)} ms in the sandbox: ${count} for about 5 s`);
  const sandboxed = async () => {
    const r = await bearer('POST', '/api/scripts', 'web', { script: long(count) });
    if (r.status !== 200 || r.data.status !== 'sandboxed') throw new Error(`the long script did not sandbox: ${JSON.stringify(r).slice(0, 400)}`);
    return r.data.script_id;
  };
  const before = await objects();

  // 1. the page: Apply to live, then Cancel this script
  const id = await sandboxed();
  const { page, log } = await signIn(browser, 'web');
  await page.goto(`${url}/#/scripts/${id}`);
  await page.getByRole('heading', { name: /^Review script/ }).waitFor();
  await page.getByRole('button', { name: 'Apply to live' }).click();
  const cancel = page.getByRole('button', { name: 'Cancel this script' });
  await cancel.waitFor({ timeout: 10000 });
  check(true, '"Cancel this script" is shown while the script is applied');
  await sleep(1500);                                   // the 3 cubes are made; it loops
  check(await cancel.isVisible(), 'the script is still running after 1.5 s');
  const t0 = Date.now();
  await cancel.click();
  const note = page.locator('.note', { hasText: /^cancelled/ });
  await note.waitFor({ timeout: 15000 });
  const text = await note.innerText();
  console.log(`     ${text}`);
  check(/^cancelled: the script was stopped /.test(text), `the page shows cancelled (${Date.now() - t0} ms after Cancel)`);
  check(/rolled back: removed 3 object\(s\) the script made \(Cube, Cube\.001, Cube\.002\); the scene's fingerprint equals the one before$/.test(text),
    'with the executor\'s rollback message: the 3 cubes removed, the fingerprint the one before');
  check(!(await cancel.isVisible()), 'and the Cancel button is gone');
  // one confirmation, one live run (script_jobs.c): a script stopped while it ran is sandboxed again to be applied again
  const live = page.locator('dl.facts dd', { hasText: /^cancelled while it ran, and rolled back/ });
  await live.waitFor({ timeout: 5000 });
  check(true, `the script's Live fact says so: "${await live.innerText()}"`);
  check(!(await page.getByRole('button', { name: 'Apply to live' }).isEnabled()), 'and Apply to live is off');
  const after = await objects();
  check(after === before, `the live scene's objects are those before (${before.split(',').length} objects)`);
  await axe(page, 'a script cancelled from the Scripts screen');
  await shot(page, 'scripts-cancelled');
  check(!log.console.some(l => !/status of 422/.test(l)), `no console errors but the apply's 422 (cancelled) (${log.console.join(' | ')})`);

  // 2. over HTTP: who may cancel a running script
  const id2 = await sandboxed();
  const sha2 = (await bearer('GET', `/api/scripts/${id2}`, 'web')).data;
  const sha = (sha2.scripts ? sha2.scripts[0] : sha2).sha256;
  const applying = bearer('POST', `/api/scripts/${id2}/confirm`, 'web', { sha256: sha });
  await sleep(1500);
  const viewer = await bearer('POST', `/api/plans/${id2}/cancel`, 'web_vera', {});
  check(viewer.status === 403, `a viewer token's cancel of a running script is refused: ${viewer.status} ${JSON.stringify(viewer.data)}`);
  const agent = await bearer('POST', `/api/plans/${id2}/cancel`, 'mcp', {});
  check(agent.status === 403 && /^script .* was started by key 'web'/.test(agent.data.error.message),
    `another agent's key is refused too: ${agent.status} ${agent.data && agent.data.error && agent.data.error.message}`);
  const own = await bearer('POST', `/api/plans/${id2}/cancel`, 'web', {});
  check(own.status === 202 && own.data.plan_id === id2 && own.data.state === 'cancelling', `its own key's cancel: ${own.status} ${JSON.stringify(own.data)}`);
  const applied = await applying;
  check(applied.data && applied.data.status === 'cancelled', `the apply answers cancelled: ${applied.status} ${JSON.stringify(applied.data).slice(0, 200)}`);
  const gone = await bearer('POST', `/api/plans/${id2}/cancel`, 'web', {});
  check(gone.status === 404, `once it ended, its cancel is 404: ${gone.status} ${gone.data && gone.data.error && gone.data.error.message}`);
  check(await objects() === before, 'and the live scene\'s objects are still those before');
}

// a scene command that changes the scene (`blendmq scene reset`): the open Scene screen shows it without a reload
async function reset(browser) {
  const { page } = await signIn(browser, 'web');
  await screen(page, 'scene', 'Scene');
  const caption = page.locator('table.objects caption');
  await caption.filter({ hasText: /of [1-9]/ }).waitFor({ timeout: 20000 });
  const before = await caption.textContent();
  blendmq('scene', 'reset');
  let shown = true;
  try { await caption.filter({ hasText: '(none)' }).waitFor({ timeout: 15000 }); } catch { shown = false; }
  check(shown, `after \`blendmq scene reset\` the open Scene screen lists no objects, without a reload (was: ${before})`);
  const live = await page.evaluate(() => fetch('/api/scene?limit=10').then(r => r.json()));
  check((live.count ?? -1) === 0, `and the live scene is empty (${live.count})`);
  await shot(page, 'scene-reset');
}

const tests = { prompt, rollback, review, load, crosssite, open, scriptcancel, reset, reconnect };
if (!tests[which]) { console.error(`unknown test ${which}: one of ${Object.keys(tests).join(', ')}`); process.exit(2); }
try { unlinkSync(`screenshots/FAILED-${which}.png`); } catch { /* none */ }
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true });
try {
  await tests[which](browser);
  passed++;
} catch (e) {
  failed++;
  console.log(`FAIL ${which}: ${e.message}`);
  try { for (const c of browser.contexts()) for (const p of c.pages()) await p.screenshot({ path: `screenshots/FAILED-${which}.png`, fullPage: true }); } catch { /* closed */ }
} finally {
  await browser.close();
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
