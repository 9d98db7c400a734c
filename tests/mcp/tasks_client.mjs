// blendmq's long tools as tasks (2026-07-28, the io.modelcontextprotocol/tasks
// extension), with plain HTTP requests the way that revision sends them (no
// session; each request's _meta says who asks; Mcp-Method / Mcp-Name headers):
// a plan and a chat run as tasks and are polled to their end, another plan is
// cancelled mid-way, and a client without the extension gets the plain result.
//
//   node tasks_client.mjs MCP_URL      (BLENDMQ_TOKEN: the bearer token)
const [url] = process.argv.slice(2);
const token = process.env.BLENDMQ_TOKEN ?? "";
let passed = 0, failed = 0, rid = 1;
function check(name, ok, detail) {
  if (ok) passed++; else failed++;
  console.log(`${ok ? "ok  " : "FAIL"} tasks: ${name}${ok || detail === undefined ? "" : " — " + JSON.stringify(detail).slice(0, 600)}`);
}
const TASKS = "io.modelcontextprotocol/tasks";
async function rpc(method, params = {}, { tasks = true } = {}) {
  const meta = { "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                 "io.modelcontextprotocol/clientInfo": { name: "blendmq-tasks-test", version: "1" },
                 "io.modelcontextprotocol/clientCapabilities": tasks ? { extensions: { [TASKS]: {} } } : {} };
  const name = params.name ?? params.uri ?? params.taskId;
  const headers = { "Content-Type": "application/json", Accept: "application/json, text/event-stream",
                    "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method, Authorization: `Bearer ${token}` };
  if (name !== undefined) headers["Mcp-Name"] = name;
  const res = await fetch(url, { method: "POST", headers, body: JSON.stringify({ jsonrpc: "2.0", id: rid++, method, params: { ...params, _meta: meta } }) });
  const text = await res.text();
  const line = text.split("\n").filter((l) => l.startsWith("data:")).pop();
  return JSON.parse(line ? line.slice(5) : text);
}
async function settle(taskId, seconds = 120, seen = []) {
  const until = Date.now() + seconds * 1000;
  for (;;) {
    const r = (await rpc("tasks/get", { taskId })).result;
    if (r?.statusMessage) seen.push(r.statusMessage);
    if (!r || ["completed", "failed", "cancelled"].includes(r.status) || Date.now() > until) return r;
    await new Promise((ok) => setTimeout(ok, 200));
  }
}
const tag = `task${process.pid}`;
const cube = (i) => ({ operation: "bpy.ops.mesh.primitive_cube_add", name: `${tag}_${i}`, params: { size: 0.1, location: [i * 0.2, 6, 0] } });

try {
  const discover = (await rpc("server/discover")).result;
  check("server/discover advertises the tasks extension", !!discover?.capabilities?.extensions?.[TASKS], discover);

  let r = (await rpc("tools/call", { name: "execute_plan", arguments: { plan: [cube(0), cube(1), cube(2)] } })).result;
  check("execute_plan as a task: a CreateTaskResult", r?.resultType === "task" && typeof r.taskId === "string", r);
  const seen = [];
  let done = await settle(r.taskId, 120, seen);
  check("execute_plan task: completed with the plan's structured result", done?.status === "completed"
        && done.result?.structuredContent?.status === "done", done);
  check("execute_plan task: its steps showed as statusMessage", seen.some((m) => /step/.test(m)), seen);

  r = (await rpc("tools/call", { name: "chat", arguments: { prompt: "build a snowman" } })).result;
  check("chat as a task", r?.resultType === "task", r);
  done = await settle(r.taskId, 180);
  check("chat task: completed, plan done", done?.status === "completed" && done.result?.structuredContent?.status === "done", done);

  // the palette's most steps: a cancel may land while it runs, or come when it ran whole (plans are fast)
  const long = Array.from({ length: 200 }, (_, i) => cube(100 + i));
  r = (await rpc("tools/call", { name: "execute_plan", arguments: { plan: long } })).result;
  check("a long plan as a task", r?.resultType === "task", r);
  const until = Date.now() + 60000;
  let state;
  do { state = (await rpc("tasks/get", { taskId: r.taskId })).result; await new Promise((ok) => setTimeout(ok, 100)); }
  while (state?.status === "working" && !/step [1-9]/.test(state.statusMessage ?? "") && Date.now() < until);
  const ack = await rpc("tasks/cancel", { taskId: r.taskId });
  check("tasks/cancel mid-way: an empty ack", ack.result?.resultType === "complete" && !("status" in ack.result), ack);
  const after = await settle(r.taskId, 30);
  check("the cancelled task stays cancelled", after?.status === "cancelled", after);
  await new Promise((ok) => setTimeout(ok, 3000));
  const scene = (await rpc("tools/call", { name: "get_scene_info", arguments: { limit: 1000 } })).result;
  const left = (scene?.structuredContent?.objects ?? []).filter((o) => /_(\d+)$/.test(o.name ?? "") && o.name.startsWith(`${tag}_`)
                                                                  && Number(o.name.slice(tag.length + 1)) >= 100).length;
  check("the cancelled plan: rolled back, or had run whole (never half-built)", left === 0 || left === 200, left);
  console.log(`     tasks: the cancelled plan ${left === 0 ? "was stopped and rolled back" : left === 200 ? "had already run whole" : "is half-built"}`);

  const other = await rpc("tasks/get", { taskId: "0".repeat(32) });
  check("an unknown task: -32602", other.error?.code === -32602, other);
  const without = await rpc("tasks/get", { taskId: r.taskId }, { tasks: false });
  check("tasks/get without the extension: -32021", without.error?.code === -32021, without);
  r = (await rpc("tools/call", { name: "validate_plan", arguments: { plan: [cube(0)] } }, { tasks: false })).result;
  check("without the extension: a plain result", r?.resultType === "complete" && r.structuredContent?.accepted === true, r);
} catch (e) {
  check("no exception", false, String(e?.stack ?? e));
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
