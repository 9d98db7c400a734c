// The official MCP TypeScript SDK client against blendmq, over stdio
// (`blendmq mcp`) and Streamable HTTP (the gateway's /mcp): list the tools and
// call each one this build serves, against a real stack and headless Blender.
//
//   node sdk_client.mjs stdio BLENDMQ_BINARY RUN_DIR
//   node sdk_client.mjs http  MCP_URL        (BLENDMQ_TOKEN: the bearer token, the `mcp` client's)
//
// Every route needs a token (issue 12); over stdio `blendmq mcp` reads it from
// the run dir. confirm_script waits for a person (security.mcp_confirm: person,
// the default; issue 24): a client that declares elicitation and would accept
// its own question is never asked; the tool answers "pending" and where to
// approve; a person approves with the CLI (BLENDMQ_BIN, BLENDMQ_RUN_DIR) and the
// next call says "applied".
//
// Prints one line per check and "N passed, M failed"; exit 1 when any failed.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { LoggingMessageNotificationSchema, ElicitRequestSchema, ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { execFileSync } from "node:child_process";

const [mode, target, runDir] = process.argv.slice(2);
let passed = 0, failed = 0;
function check(name, ok, detail) {
  if (ok) passed++; else failed++;
  console.log(`${ok ? "ok  " : "FAIL"} ${mode}: ${name}${ok || detail === undefined ? "" : " — " + JSON.stringify(detail).slice(0, 600)}`);
}
const tag = `${mode}${process.pid}`;            // object names unique to this run
const step = (op, name, params) => ({ operation: op, name, params });
const smallPlan = [
  step("bpy.ops.mesh.primitive_uv_sphere_add", `${tag}_base`, { radius: 1.0, location: [0, 0, 1] }),
  step("bpy.ops.mesh.primitive_uv_sphere_add", `${tag}_head`, { radius: 0.5, location: [0, 0, 2.3] }),
  step("bpy.ops.mesh.primitive_cone_add", `${tag}_nose`, { radius1: 0.08, depth: 0.4, location: [0, -0.5, 2.3] }),
];

const auth = { requestInit: { headers: { Authorization: `Bearer ${process.env.BLENDMQ_TOKEN ?? ""}` } } };
const newTransport = () => mode === "stdio"
  ? new StdioClientTransport({ command: target, args: ["--run-dir", runDir, "mcp"], stderr: "inherit" })
  : new StreamableHTTPClientTransport(new URL(target), auth);
const transport = newTransport();
const client = new Client({ name: "blendmq-sdk-test", version: "1.0.0" });
const logs = [];
client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs.push(n.params));
const updated = [];
client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => updated.push(n.params.uri));

try {
  await client.connect(transport);
  // The SDK hands progress to the caller in a later microtask and forgets a
  // call's handler as soon as its response arrives, so a last notification that
  // shares a read with the response can be lost on the client side. What the
  // server sent is what this test checks: record it at the transport.
  const wireProgress = [];
  const deliver = transport.onmessage;
  transport.onmessage = (msg, extra) => {
    if (msg?.method === "notifications/progress") wireProgress.push(msg.params);
    deliver(msg, extra);
  };
  const info = client.getServerVersion();
  check("initialize: server blendmq, instructions given", info?.name === "blendmq" && !!client.getInstructions(), info);
  const pong = await client.ping();
  check("ping: an empty result", pong !== null && typeof pong === "object" && !Array.isArray(pong)
        && Object.keys(pong).filter((k) => k !== "_meta").length === 0, pong);

  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  const want = ["discover_capabilities", "inspect_tool", "validate_plan", "execute_plan", "chat",
                "get_scene_info", "get_object_info", "get_viewport_screenshot", "look", "search_assets", "import_asset"];
  check("tools/list has the tools this build serves", want.every((n) => names.includes(n)), names);
  check("every tool has a description and an object inputSchema",
        tools.every((t) => t.description && t.inputSchema?.type === "object"));
  // a budget for the client's context (issue 25): blendmq's own tools, without the conformance
  // suite's fixtures this test stack adds (gateway.mcp_test_tools)
  const own = tools.filter((t) => !/^Conformance test/.test(t.description ?? "") && t.name !== "json_schema_2020_12_tool");
  check("tools/list size (blendmq's tools) < 8000 bytes", JSON.stringify({ tools: own }).length < 8000, JSON.stringify({ tools: own }).length);
  console.log(`${mode}: tools/list of blendmq's ${own.length} tools: ${JSON.stringify({ tools: own }).length} bytes`);
  await client.setLoggingLevel("debug");

  let r = await client.callTool({ name: "discover_capabilities", arguments: {} });
  check("discover_capabilities: the palette", !r.isError && r.structuredContent?.palette?.["bpy.ops.mesh.primitive_cube_add"], r);
  r = await client.callTool({ name: "discover_capabilities", arguments: { form: "full" } });
  check("discover_capabilities full: descriptions",
        !r.isError && typeof r.structuredContent?.palette?.["bpy.ops.mesh.primitive_cube_add"] === "object", r);
  r = await client.callTool({ name: "inspect_tool", arguments: { tool_name: "bpy.ops.mesh.primitive_cube_add" } });
  check("inspect_tool: RNA of primitive_cube_add", !r.isError && typeof r.structuredContent?.tool === "object", r);
  r = await client.callTool({ name: "inspect_tool", arguments: { tool_name: "bpy.ops.mesh.no_such_thing" } });
  check("inspect_tool unknown name: isError with a message", r.isError === true && /no_such_thing|unknown|no such/i.test(r.content[0].text), r);
  r = await client.callTool({ name: "inspect_tool", arguments: {} });
  check("inspect_tool without tool_name: isError", r.isError === true && /tool_name/.test(r.content[0].text), r);

  r = await client.callTool({ name: "validate_plan", arguments: { plan: smallPlan } });
  check("validate_plan accepts a good plan", !r.isError && r.structuredContent?.accepted === true, r);
  r = await client.callTool({ name: "validate_plan", arguments: { plan: [step("bpy.ops.wm.quit_blender", "x", {})] } });
  check("validate_plan rejects an operation outside the palette",
        !r.isError && r.structuredContent?.accepted === false && r.structuredContent.errors.length >= 1, r);

  const sdkProgress = [];
  wireProgress.length = 0;
  logs.length = 0;
  r = await client.callTool({ name: "execute_plan", arguments: { plan: smallPlan } }, undefined,
                            { onprogress: (p) => sdkProgress.push(p), resetTimeoutOnProgress: true, timeout: 120000 });
  const progress = wireProgress.slice();
  check("execute_plan runs the plan", !r.isError && r.structuredContent?.status === "done" && r.structuredContent.steps_done === 3, r);
  check("execute_plan: notifications/progress for every step (increasing)",
        progress.length >= 3 && progress.every((p, i) => i === 0 || p.progress > progress[i - 1].progress) &&
        progress[progress.length - 1].progress === 3 && progress[progress.length - 1].total === 3 && sdkProgress.length >= 2, progress);
  check("execute_plan: notifications/message logs", logs.some((l) => /validated/.test(l.data)), logs);
  const done = r.structuredContent?.objects ?? [];
  check("execute_plan: objects created", done.includes(`${tag}_base`) && done.includes(`${tag}_nose`), done);

  r = await client.callTool({ name: "execute_plan", arguments: { plan: [step("bpy.ops.mesh.primitive_cube_add", "big", { size: 1e9 })] } });
  check("execute_plan with an invalid step: isError, rejected, nothing ran",
        r.isError === true && r.structuredContent?.status === "rejected" && /size/.test(r.content[0].text), r);
  r = await client.callTool({ name: "execute_plan", arguments: { plan: "not a plan" } });
  check("execute_plan with a malformed plan: isError", r.isError === true, r);

  r = await client.callTool({ name: "get_object_info", arguments: { name: `${tag}_head` } });
  check("get_object_info", !r.isError && r.structuredContent?.name === `${tag}_head`, r);
  r = await client.callTool({ name: "get_object_info", arguments: { name: `${tag}_missing` } });
  check("get_object_info for a missing object: isError", r.isError === true, r);
  r = await client.callTool({ name: "get_scene_info", arguments: { limit: 5 } });
  check("get_scene_info paginated", !r.isError && r.structuredContent?.count >= 3 && r.structuredContent.objects.length <= 5, r);
  r = await client.callTool({ name: "get_viewport_screenshot", arguments: { width: 160, height: 120 } });
  const img = r.content?.find((c) => c.type === "image");
  check("get_viewport_screenshot: a PNG image", !r.isError && img?.mimeType === "image/png" && img.data.startsWith("iVBORw0KGgo"), r.content?.[1]);
  r = await client.callTool({ name: "look", arguments: { angles: 2 } }, undefined, { timeout: 120000 });
  const sheet = r.content?.find((c) => c.type === "image");
  const stats = r.content?.find((c) => c.type === "text")?.text ?? "";
  check("look: a PNG contact sheet and each object's topology", !r.isError && sheet?.mimeType === "image/png"
        && sheet.data.startsWith("iVBORw0KGgo") && stats.includes(`- ${tag}_head (MESH): `) && stats.includes("totals: "), stats || r);

  // resources: the scene, subscribed (a notification after chat commits its plan), an object by template
  const { resources } = await client.listResources();
  check("resources/list: the scene", resources.some((x) => x.uri === "blendmq://scene"), resources.map((x) => x.uri));
  await client.subscribeResource({ uri: "blendmq://scene" });
  let scene = await client.readResource({ uri: "blendmq://scene" });
  const sceneObjects = JSON.parse(scene.contents[0].text).objects ?? [];
  check("resources/read blendmq://scene: the live objects", sceneObjects.some((o) => o.name === `${tag}_base`), scene.contents[0].text.slice(0, 300));
  const one = await client.readResource({ uri: `blendmq://objects/${encodeURIComponent(`${tag}_base`)}` });
  check("resources/read blendmq://objects/{name}", JSON.parse(one.contents[0].text).name === `${tag}_base`, one);
  const named = await client.complete({ ref: { type: "ref/resource", uri: "blendmq://objects/{name}" }, argument: { name: "name", value: tag } });
  check("completion: object names", named.completion.values.includes(`${tag}_base`), named);
  const prompt = await client.getPrompt({ name: "build", arguments: { what: "a lighthouse" } });
  check("prompts/get build", JSON.stringify(prompt.messages).includes("a lighthouse"), prompt);
  const chatProgress = [];
  r = await client.callTool({ name: "chat", arguments: { prompt: "build a snowman" } }, undefined,
                            { onprogress: (p) => chatProgress.push(p), resetTimeoutOnProgress: true, timeout: 120000 });
  check("chat: prompt → plan → run", !r.isError && r.structuredContent?.status === "done" && Array.isArray(r.structuredContent.plan), r);
  check("chat: progress per step", chatProgress.length >= 3, chatProgress.length);
  // Over HTTP the notification travels on the session's GET stream, the result on
  // the POST's: nothing orders the two, so it may arrive just after the result.
  // It must arrive, soon: wait up to 10 s for it.
  const chatEnded = Date.now();
  while (!updated.includes("blendmq://scene") && Date.now() - chatEnded < 10000) await new Promise((res) => setTimeout(res, 50));
  check("resources: notifications/resources/updated for the scene after chat (within 10 s of the result)", updated.includes("blendmq://scene"), updated);
  if (updated.includes("blendmq://scene")) console.log(`${mode}: resources/updated arrived ${Date.now() - chatEnded} ms after chat's result (50 ms polls)`);
  await client.unsubscribeResource({ uri: "blendmq://scene" });

  r = await client.callTool({ name: "confirm_script", arguments: { script_id: "x", sha256: "0".repeat(64) } });
  check("confirm_script of an unknown script id: a tool error", r.isError === true && /no sandboxed script x/.test(r.content[0].text), r);
  // A client that declares elicitation and would accept its own question (issue 24): never asked.
  const people = new Client({ name: "blendmq-sdk-person", version: "1.0.0" }, { capabilities: { elicitation: {} } });
  const asked = [];
  people.setRequestHandler(ElicitRequestSchema, async (req) => { asked.push(req.params); return { action: "accept", content: { confirm: true } }; });
  await people.connect(newTransport());
  r = await people.callTool({ name: "inject_bpy_script", arguments: { script: `import bpy\nbpy.ops.mesh.primitive_cube_add(size=0.2, location=(0, 0, 6))\n` } },
                            undefined, { timeout: 120000 });
  const sub = JSON.parse(r.content?.[0]?.text ?? "{}");
  const sha = sub.verdict?.script_sha256 ?? sub.sandbox?.script_sha256;
  if (sub.status === "sandboxed" && sub.script_id && sha) {
    const waits = [];
    r = await people.callTool({ name: "confirm_script", arguments: { script_id: sub.script_id, sha256: sha, wait_s: 2 } }, undefined,
                              { onprogress: (p) => waits.push(p), timeout: 30000 });
    check("confirm_script waits for a person: not applied, never asks the client, says where to approve",
          !r.isError && r.structuredContent?.status === "pending" && asked.length === 0
          && r.content[0].text.includes(`blendmq script apply ${sub.script_id} --confirm --sha256 ${sha}`) && /web page/.test(r.content[0].text),
          { r, asked });
    if (process.env.BLENDMQ_BIN && process.env.BLENDMQ_RUN_DIR) {
      execFileSync(process.env.BLENDMQ_BIN, ["--run-dir", process.env.BLENDMQ_RUN_DIR, "script", "apply", sub.script_id, "--confirm",
                                             "--sha256", sha], { encoding: "utf8", timeout: 120000 });
      r = await people.callTool({ name: "confirm_script", arguments: { script_id: sub.script_id, sha256: sha, wait_s: 5 } }, undefined,
                                { timeout: 30000 });
      check("a person approved it with the CLI: the next call says applied", !r.isError && r.structuredContent?.status === "applied"
            && asked.length === 0, r);
    }
  } else {
    // not a skip: the sandbox (bubblewrap, deploy/install-deps.sh) is part of the stack under test
    check("inject_bpy_script: sandboxed, with a script id and its sha256", false,
          { status: sub.status, text: r.content?.[0]?.text?.slice(0, 300) });
  }
  await people.close().catch(() => {});
  const confirmTool = tools.find((t) => t.name === "confirm_script");
  check("confirm_script requires the reviewed script's sha256",
        confirmTool?.inputSchema?.required?.includes("sha256") && confirmTool.inputSchema.properties?.sha256?.type === "string",
        confirmTool?.inputSchema);
  const recipeName = "sdk_" + String(mode).replace(/[^a-z]/g, "") + "_" + Date.now();
  r = await client.callTool({ name: "save_recipe", arguments: { name: recipeName, plan: smallPlan } });
  check("save_recipe stores a valid plan", !r.isError, r);
  r = await client.callTool({ name: "save_recipe", arguments: { name: "../escape", plan: smallPlan } });
  check("save_recipe refuses a path in the name", r.isError === true, r);
  r = await client.callTool({ name: "list_recipes", arguments: {} });
  check("list_recipes includes the saved recipe", !r.isError && JSON.stringify(r).includes(recipeName), r);
  let unknown;
  try { await client.callTool({ name: "no_such_tool", arguments: {} }); } catch (e) { unknown = e; }
  check("an unknown tool: a JSON-RPC error", unknown && /Unknown tool/.test(String(unknown)), String(unknown));

  // Cancellation: abort a longer plan after its first step; the server stays healthy.
  // (the palette's most steps: long enough that the cancel lands while it runs)
  const longPlan = Array.from({ length: 200 }, (_, i) =>
    step("bpy.ops.mesh.primitive_cube_add", `${tag}_c${i}`, { size: 0.1, location: [(i % 20) * 0.2, 3 + Math.floor(i / 20) * 0.2, 0] }));
  const ac = new AbortController();
  let aborted, abortedAt = 0, endedAt = 0;
  try {
    await client.callTool({ name: "execute_plan", arguments: { plan: longPlan } }, undefined,
                          { signal: ac.signal, timeout: 120000,
                            onprogress: (p) => { if (p.progress >= 1 && !abortedAt) { abortedAt = Date.now(); ac.abort("enough"); } } });
  } catch (e) { aborted = e; }
  endedAt = Date.now();
  check("cancel: the client's call ends at once (an abort, not an answer, within 2 s)",
        !!aborted && abortedAt > 0 && endedAt - abortedAt < 2000, { error: String(aborted), ms: abortedAt ? endedAt - abortedAt : null });
  // The server stops the plan after its current step and rolls it back (or, when the
  // cancel came too late, has run it whole): never half a plan. Wait for it to settle.
  const exists = async (name) => {
    const o = await client.callTool({ name: "get_object_info", arguments: { name } });
    return !o.isError && o.structuredContent?.name === name;
  };
  let first, last;
  for (let t0 = Date.now(); Date.now() - t0 < 30000; await new Promise((res) => setTimeout(res, 250))) {
    first = await exists(`${tag}_c0`);
    last = await exists(`${tag}_c199`);
    if (first === last) break;
  }
  check("cancel: the plan is rolled back (or was already whole), never half-built", first === last, { c0: first, c199: last });
  console.log(`     ${mode}: the cancelled plan ${first === last ? (first ? "had already run whole" : "was stopped and rolled back") : "is half-built"}`);
  r = await client.callTool({ name: "validate_plan", arguments: { plan: smallPlan } });
  check("cancel: the server goes on answering (validate_plan after the cancel)",
        !r.isError && r.structuredContent?.accepted === true, r);
} catch (e) {
  check("no exception", false, String(e?.stack ?? e));
} finally {
  await client.close().catch(() => {});
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
