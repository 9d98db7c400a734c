// `blendmq mcp` with no stack in its run dir starts one (as `blendmq up`),
// says so on stderr, and serves; two clients started at once share that one
// stack; `--no-start` answers an error instead of starting one.
//
//   node mcp_autostart.mjs BLENDMQ_BINARY RUN_DIR   (RUN_DIR: absent or empty)
import { spawn, execFileSync } from "node:child_process";
import { readFileSync, existsSync } from "node:fs";

const [bin, runDir] = process.argv.slice(2);
let passed = 0, failed = 0;
function check(name, ok, detail) {
  if (ok) passed++; else failed++;
  console.log(`${ok ? "ok  " : "FAIL"} autostart: ${name}${ok || detail === undefined ? "" : " — " + String(detail).slice(0, 800)}`);
}

// One stdio client: initialize, initialized, tools/list; resolves with what it saw.
function client(extra = []) {
  return new Promise((resolve) => {
    // --ipc: the stack it starts uses sockets in the run dir (no fixed TCP ports: other stacks may run here);
    // BLENDMQ_GATEWAY_HTTP_PORT=0 (inherited by the stack): HTTP on a free port
    const p = spawn(bin, ["--run-dir", runDir, "--ipc", "mcp", ...extra],
                    { stdio: ["pipe", "pipe", "pipe"], env: { ...process.env, BLENDMQ_GATEWAY_HTTP_PORT: "0" } });
    let out = "", err = "", tools = null, stdoutClean = true;
    const timer = setTimeout(() => p.kill("SIGTERM"), 240000);
    p.stderr.on("data", (d) => { err += d; });
    p.stdout.on("data", (d) => {
      out += d;
      for (const line of out.split("\n").slice(0, -1)) {
        let msg;
        try { msg = JSON.parse(line); } catch { stdoutClean = false; continue; }
        if (msg.id === 2) { tools = msg.result?.tools ?? null; p.stdin.end(); }
      }
      out = out.slice(out.lastIndexOf("\n") + 1);
    });
    p.on("exit", (code) => { clearTimeout(timer); resolve({ code, err, tools, stdoutClean }); });
    p.stdin.write(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "autostart-test", version: "1" } } }) + "\n");
    p.stdin.write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n");
    p.stdin.write(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }) + "\n");
  });
}

const refused = await client(["--no-start"]);
check("--no-start with no stack: no tools, exit non-zero, says why", !refused.tools && refused.code !== 0
      && /stack|blendmq up/.test(refused.err), refused.err);
check("--no-start started nothing", !existsSync(`${runDir}/pids/supervisor.pid`));

const t0 = Date.now();
const [a, b] = await Promise.all([client(), client()]);
for (const [name, c] of [["first", a], ["second", b]]) {
  check(`${name} client: tools/list answered`, Array.isArray(c.tools) && c.tools.some((t) => t.name === "execute_plan"), c.err);
  check(`${name} client: stdout carries only JSON-RPC`, c.stdoutClean);
}
const said = [a, b].filter((c) => /starting one/.test(c.err)).length;
check("exactly one client started the stack and said so on stderr", said === 1, a.err + "\n---\n" + b.err);
const sup = readFileSync(`${runDir}/pids/supervisor.pid`, "utf8").trim();
check("one stack runs in the run dir (a supervisor)", /^\d+$/.test(sup), sup);
console.log(`autostart: both clients answered in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
const again = await client();
check("a later client uses the running stack (does not start another)", Array.isArray(again.tools) && !/starting one/.test(again.err), again.err);
try { execFileSync(bin, ["--run-dir", runDir, "down"], { stdio: "ignore" }); } catch {}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
