// Subscriptions hear every committed plan, whoever ran it (issue 25), against a real stack:
//   A  an SDK client (Streamable HTTP, 2025-11-25) subscribed to the scene and to one object:
//      notified when the CLI (another key, `cli`) runs a plan, and when session B (another
//      SDK client) runs one through execute_plan; not notified for an object no plan touched.
//   S  an SDK client over stdio (`blendmq mcp`): notified of the CLI's plan too.
//   G  a raw GET stream of a raw session: the notification as SSE, with an id that resumes
//      (Last-Event-ID); GET without a session 400, an unknown one 404, a 2026-07-28 GET 405.
//   L  2026-07-28 subscriptions/listen: the acknowledgement first, then the notification
//      tagged with the request's id as subscriptionId; over HTTP and over stdio (`blendmq mcp`,
//      a client without a session: the bridge repeats the method in Mcp-Method).
//   bounds: a token's streams are bounded (http.streams_per_token): past them, 429.
//   audit: blendmq://audit/stories and .../{plan_id}: the agent's key (mcp) reads its own stories and not
//      the CLI's (not found); a person's key (cli, admin) reads both.
//
//   node listen_client.mjs MCP_URL BLENDMQ_BIN RUN_DIR     (BLENDMQ_TOKEN: the `mcp` token)
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { execFile, spawn } from "node:child_process";
import { writeFileSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const [url, bin, runDir] = process.argv.slice(2);
const token = process.env.BLENDMQ_TOKEN ?? "";
let passed = 0, failed = 0;
function check(name, ok, detail) {
  if (ok) passed++; else failed++;
  console.log(`${ok ? "ok  " : "FAIL"} listen: ${name}${ok || detail === undefined ? "" : " — " + JSON.stringify(detail).slice(0, 600)}`);
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function until(pred, ms) {
  for (const end = Date.now() + ms; Date.now() < end; await sleep(100)) if (pred()) return true;
  return pred();
}
const tag = `L${process.pid}`;
const sphere = (name, x) => ({ operation: "bpy.ops.mesh.primitive_uv_sphere_add", name, params: { radius: 0.3, location: [x, 5, 1] } });
const work = mkdtempSync(join(tmpdir(), "bmq-listen-"));
function cli(args) {                                        // `blendmq ...` with the CLI's own key
  return new Promise((resolve) => execFile(bin, ["--run-dir", runDir, "--json", ...args], { timeout: 120000 },
                                           (err, stdout, stderr) => resolve({ code: err ? err.code ?? 1 : 0, stdout, stderr })));
}
function cliPlan(name, x) {                                 // `blendmq plan run`
  const file = join(work, `${name}.json`);
  writeFileSync(file, JSON.stringify([sphere(name, x)]));
  return cli(["plan", "run", file]);
}
const auth = { requestInit: { headers: { Authorization: `Bearer ${token}` } } };
async function sdkClient(transport) {
  const client = new Client({ name: "blendmq-listen-test", version: "1.0.0" });
  const heard = [];
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => heard.push(n.params.uri));
  await client.connect(transport);
  return { client, heard };
}
const H = (extra = {}) => ({ Authorization: `Bearer ${token}`, ...extra });

// An SSE reader over fetch: messages (parsed data) and ids as they come.
function sse(response) {
  const events = [];
  let buf = "", done = false;
  const reader = response.body.getReader();
  (async () => {
    const dec = new TextDecoder();
    try {
      for (;;) {
        const { value, done: end } = await reader.read();
        if (end) break;
        buf += dec.decode(value, { stream: true });
        let i;
        while ((i = buf.indexOf("\n\n")) >= 0) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          const id = block.split("\n").find((l) => l.startsWith("id: "))?.slice(4);
          const data = block.split("\n").filter((l) => l.startsWith("data: ")).map((l) => l.slice(6)).join("\n");
          if (data) events.push({ id, msg: JSON.parse(data) });
        }
      }
    } catch { /* aborted */ }
    done = true;
  })();
  return { events, close: () => reader.cancel().catch(() => {}), ended: () => done };
}

const A = `${tag}_a`, B = `${tag}_b`, untouched = `${tag}_never`;
let a, b, s;
try {
  a = await sdkClient(new StreamableHTTPClientTransport(new URL(url), auth));
  await a.client.subscribeResource({ uri: "blendmq://scene" });
  await a.client.subscribeResource({ uri: `blendmq://objects/${encodeURIComponent(A)}` });
  await a.client.subscribeResource({ uri: `blendmq://objects/${encodeURIComponent(untouched)}` });
  s = await sdkClient(new StdioClientTransport({ command: bin, args: ["--run-dir", runDir, "mcp"], stderr: "inherit" }));
  await s.client.subscribeResource({ uri: "blendmq://scene" });

  // G: a raw session and its GET stream
  const init = await fetch(url, { method: "POST", headers: H({ "Content-Type": "application/json", Accept: "application/json, text/event-stream" }),
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {},
                                                                                    clientInfo: { name: "raw", version: "1" } } }) });
  const sid = init.headers.get("mcp-session-id");
  const post = (msg) => fetch(url, { method: "POST", headers: H({ "Content-Type": "application/json", Accept: "application/json",
                                                                   "Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25" }),
                                     body: JSON.stringify(msg) });
  await post({ jsonrpc: "2.0", method: "notifications/initialized" });
  await post({ jsonrpc: "2.0", id: 2, method: "resources/subscribe", params: { uri: "blendmq://scene" } });
  const get = await fetch(url, { headers: H({ Accept: "text/event-stream", "Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25" }) });
  check("GET /mcp: an SSE stream for the session", get.status === 200 && /text\/event-stream/.test(get.headers.get("content-type")),
        get.status);
  const g = sse(get);
  let r = await fetch(url, { headers: H({ Accept: "text/event-stream" }) });
  check("GET without Mcp-Session-Id: 400", r.status === 400, r.status);
  r = await fetch(url, { headers: H({ Accept: "text/event-stream", "Mcp-Session-Id": "0".repeat(32) }) });
  check("GET of an unknown session: 404", r.status === 404, r.status);
  r = await fetch(url, { headers: H({ Accept: "text/event-stream", "MCP-Protocol-Version": "2026-07-28" }) });
  check("GET with 2026-07-28: 405 (subscriptions/listen replaces it)", r.status === 405, r.status);

  // L: 2026-07-28 subscriptions/listen
  const meta = { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {} };
  const listenResp = await fetch(url, { method: "POST", headers: H({ "Content-Type": "application/json", Accept: "application/json, text/event-stream",
                                                                     "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "subscriptions/listen" }),
    body: JSON.stringify({ jsonrpc: "2.0", id: "listen-1", method: "subscriptions/listen",
                           params: { _meta: meta, notifications: { resourceSubscriptions: ["blendmq://scene", `blendmq://objects/${untouched}`] } } }) });
  const l = sse(listenResp);
  await until(() => l.events.length >= 1, 5000);
  const ack = l.events[0]?.msg;
  check("subscriptions/listen: acknowledged first, with its subscription id and what it honours",
        ack?.method === "notifications/subscriptions/acknowledged" && ack.params?._meta?.["io.modelcontextprotocol/subscriptionId"] === "listen-1"
        && ack.params.notifications?.resourceSubscriptions?.length === 2, l.events);

  // L over stdio: one JSON-RPC message per line, no initialize (2026-07-28)
  const bridge = spawn(bin, ["--run-dir", runDir, "mcp"], { stdio: ["pipe", "pipe", "inherit"] });
  const lines = [];
  let partial = "";
  bridge.stdout.on("data", (d) => {
    partial += d;
    for (let i; (i = partial.indexOf("\n")) >= 0; partial = partial.slice(i + 1)) lines.push(JSON.parse(partial.slice(0, i)));
  });
  bridge.stdin.write(JSON.stringify({ jsonrpc: "2.0", id: "stdio-listen", method: "subscriptions/listen",
                                      params: { _meta: meta, notifications: { resourceSubscriptions: ["blendmq://scene"] } } }) + "\n");
  bridge.stdin.write(JSON.stringify({ jsonrpc: "2.0", id: 5, method: "resources/read", params: { _meta: meta, uri: "blendmq://recipes" } }) + "\n");
  await until(() => lines.some((m) => m.method === "notifications/subscriptions/acknowledged") && lines.some((m) => m.id === 5), 10000);
  check("stdio, no session (2026-07-28): subscriptions/listen acknowledged",
        lines.some((m) => m.method === "notifications/subscriptions/acknowledged"
                   && m.params?._meta?.["io.modelcontextprotocol/subscriptionId"] === "stdio-listen"), lines);
  check("stdio, no session (2026-07-28): resources/read answers (Mcp-Method and Mcp-Name sent)",
        lines.some((m) => m.id === 5 && m.result?.contents?.length === 1), lines.filter((m) => m.id === 5));

  // B, a second session, and a stream too many
  b = await sdkClient(new StreamableHTTPClientTransport(new URL(url), auth));

  // the CLI (key `cli`) runs a plan
  let ran = await cliPlan(A, 0);
  check("blendmq plan run (the cli key) ran", ran.code === 0, ran);
  check("A (HTTP) hears the CLI's plan on the scene", await until(() => a.heard.includes("blendmq://scene"), 15000), a.heard);
  check("A hears of the object the plan made", await until(() => a.heard.includes(`blendmq://objects/${encodeURIComponent(A)}`), 5000), a.heard);
  check("S (stdio, `blendmq mcp`) hears the CLI's plan", await until(() => s.heard.includes("blendmq://scene"), 15000), s.heard);
  check("G (raw GET) hears the CLI's plan, with an event id",
        await until(() => g.events.some((e) => e.msg.method === "notifications/resources/updated" && e.id), 15000), g.events);
  check("L over stdio hears the CLI's plan",
        await until(() => lines.some((m) => m.method === "notifications/resources/updated"
                                     && m.params?._meta?.["io.modelcontextprotocol/subscriptionId"] === "stdio-listen"), 15000), lines.slice(-3));
  bridge.kill();
  check("L (listen) hears the CLI's plan, tagged with its subscription id",
        await until(() => l.events.some((e) => e.msg.method === "notifications/resources/updated" && e.msg.params.uri === "blendmq://scene"
                                        && e.msg.params._meta?.["io.modelcontextprotocol/subscriptionId"] === "listen-1"), 15000), l.events);
  const lastId = g.events.filter((e) => e.id).pop()?.id;
  const cliPlanId = /"plan_id":"(p-[A-Za-z0-9]+)"/.exec(ran.stdout)?.[1];

  // session B runs a plan through MCP
  a.heard.length = 0;
  s.heard.length = 0;
  const before = g.events.length;
  r = await b.client.callTool({ name: "execute_plan", arguments: { plan: [sphere(B, 1)] } }, undefined, { timeout: 120000 });
  check("session B: execute_plan done", !r.isError && r.structuredContent?.status === "done", r);
  check("A hears B's plan on the scene", await until(() => a.heard.includes("blendmq://scene"), 15000), a.heard);
  check("A is not told of its object B's plan did not touch", !a.heard.some((u) => u.includes(encodeURIComponent(A))), a.heard);
  check("S hears B's plan", await until(() => s.heard.includes("blendmq://scene"), 15000), s.heard);
  check("G hears B's plan", await until(() => g.events.length > before, 15000), g.events.slice(before));
  check("nobody is told of an object no plan touched",
        ![...a.heard, ...l.events.map((e) => e.msg.params?.uri ?? "")].some((u) => u.includes(untouched)), { a: a.heard, l: l.events });

  // audit stories: who reads which (2026-07-28 requests, no session: the key alone decides)
  const mcpPlanId = r.structuredContent?.plan_id;
  const personToken = readFileSync(join(runDir, "keys", "cli.token"), "utf8").trim();
  const read = async (tok, uri) => (await fetch(url, { method: "POST", headers: { Authorization: `Bearer ${tok}`, "Content-Type": "application/json",
      Accept: "application/json", "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "resources/read", "Mcp-Name": uri },
    body: JSON.stringify({ jsonrpc: "2.0", id: 9, method: "resources/read", params: { _meta: meta, uri } }) })).json();
  const stories = (x) => JSON.parse(x?.result?.contents?.[0]?.text ?? "{}").stories ?? [];
  let agentList = [], personList = [];
  for (let i = 0; i < 30; i++) {          // the audit stores records a moment after they happen
    agentList = stories(await read(token, "blendmq://audit/stories"));
    personList = stories(await read(personToken, "blendmq://audit/stories"));
    if (agentList.some((x) => x.plan_id === mcpPlanId) && personList.some((x) => x.plan_id === cliPlanId)) break;
    await sleep(200);
  }
  check("audit stories: the agent's key lists its own plan's story", !!mcpPlanId && agentList.some((x) => x.plan_id === mcpPlanId),
        { mcpPlanId, agentList: agentList.slice(0, 5) });
  check("audit stories: every story the agent's key lists is its own (not the CLI's)",
        agentList.length > 0 && agentList.every((x) => x.started_by === "mcp"), agentList.slice(0, 5));
  check("audit stories: a person's key lists the CLI's and the agent's, newest first",
        !!cliPlanId && personList.some((x) => x.plan_id === cliPlanId) && personList.some((x) => x.plan_id === mcpPlanId)
        && personList.every((x, i) => i === 0 || x.ts <= personList[i - 1].ts), { cliPlanId, personList: personList.slice(0, 5) });
  let one = await read(token, `blendmq://audit/stories/${cliPlanId}`);
  check("audit story: the agent's key cannot read the CLI's story (not found, -32602 in 2026-07-28)",
        one?.error?.code === -32602 && !one.result, one);
  one = await read(token, `blendmq://audit/stories/${mcpPlanId}`);
  const own = JSON.parse(one?.result?.contents?.[0]?.text ?? "{}");
  check("audit story: the agent's key reads its own story's records", own.started_by === "mcp"
        && own.records?.some((x) => x.kind === "plan.end"), one);
  one = await read(personToken, `blendmq://audit/stories/${cliPlanId}`);
  check("audit story: a person's key reads the CLI's story", JSON.parse(one?.result?.contents?.[0]?.text ?? "{}").started_by === "cli", one);

  // resume: a new GET with Last-Event-ID of before B's plan gets B's notification again; it replaces the old GET
  const again = await fetch(url, { headers: H({ Accept: "text/event-stream", "Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25",
                                                "Last-Event-ID": lastId }) });
  const g2 = sse(again);
  check("GET with Last-Event-ID: what came after it is told again",
        again.status === 200 && await until(() => g2.events.some((e) => e.msg.method === "notifications/resources/updated"), 10000), g2.events);
  check("a newer GET of the session ends the older one", await until(() => g.ended(), 5000));
  r = await fetch(url, { headers: H({ Accept: "text/event-stream", "Mcp-Session-Id": sid, "Last-Event-ID": "not-an-id" }) });
  check("GET with a malformed Last-Event-ID: 400", r.status === 400, r.status);
  g2.close();

  // bounds: a token's listen streams take at most half its event streams (http.streams_per_token, 16 by default):
  // past 8 a listen stream answers 429, and the token's tool calls still get their answer streams
  const extra = [];
  let refused = 0;
  for (let i = 0; i < 20 && !refused; i++) {
    const resp = await fetch(url, { method: "POST", headers: H({ "Content-Type": "application/json", Accept: "text/event-stream",
                                                                 "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "subscriptions/listen" }),
      body: JSON.stringify({ jsonrpc: "2.0", id: `x${i}`, method: "subscriptions/listen", params: { _meta: meta, notifications: {} } }) });
    if (resp.status === 429) refused++; else extra.push(sse(resp));
  }
  check("listen streams are bounded: past half the token's streams, 429", refused === 1 && extra.length >= 1 && extra.length <= 8,
        { open: extra.length });
  const calls = await Promise.all([0, 1, 2].map((i) => b.client.callTool({ name: "execute_plan", arguments: { plan: [sphere(`${tag}_c${i}`, 2 + i)] } },
                                                                          undefined, { timeout: 120000 })));
  check("with the listen streams at their bound, tool calls still run (3 at once)",
        calls.every((c) => !c.isError && c.structuredContent?.status === "done"), calls.map((c) => c.structuredContent));
  extra.forEach((x) => x.close());

  // a scene command that changes the scene (`blendmq scene reset`, the cli key): every object may have changed
  a.heard.length = 0;
  const reset = await cli(["scene", "reset"]);
  check("blendmq scene reset (the cli key) ran", reset.code === 0, reset);
  check("A hears the reset: on the scene, and on its object (a reset touches every object)",
        await until(() => a.heard.includes("blendmq://scene") && a.heard.includes(`blendmq://objects/${encodeURIComponent(A)}`), 15000),
        a.heard);
  l.close();
  g.close();
} catch (e) {
  check("no exception", false, String(e?.stack ?? e));
} finally {
  for (const c of [a, b, s]) await c?.client.close().catch(() => {});
}
console.log(`listen: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
