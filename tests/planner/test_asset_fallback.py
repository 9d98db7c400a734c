#!/usr/bin/python3
"""planner.asset_fallback (issue 26: an unavailable asset never sinks a plan), on a real stack
(`up --ipc`, a confined headless Blender, the offline planner) on a machine where Poly Haven
cannot be reached:

  1. "a wooden table": the planner adds the recipe's Poly Haven wood texture with a declared
     fallback (the built-in wood look the table top already has); the executor cannot reach
     Poly Haven, applies the fallback instead, and the chat exits 0, its step line and the
     plan's end saying so ("note: wooden: Poly Haven unreachable, used the built-in wood
     look"); the table top's material in Blender is the built-in wood colour;
  2. "an oak desk" and "studio lighting, a wooden bench" (an HDRI falling back to a plain
     world colour) exit 0 too;
  3. an import asked for by id, with no fallback, still fails the plan, nothing run;
  4. a source that answers and refuses (HTTP 404 from a local server standing in for Poly
     Haven) fails the plan even with a fallback: only a source out of reach is guessed
     around (a second stack, its assets.polyhaven_base_url pointed at that server).

Poly Haven is made unreachable for step 1-3 by pointing assets.polyhaven_base_url at a closed
local port unless the machine already cannot resolve api.polyhaven.com (then the real default
is used): the result must not depend on the network. Usage: test_asset_fallback.py BIN_DIR.
Exit 77 without Blender or bubblewrap."""
import http.server
import json
import os
import shutil
import socket
import subprocess
import sys
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import stack_env  # noqa: E402

BIN, blender, work, R, env = stack_env.prepare(sys.argv[1], "bmq-fallback-")
failures = []
WOOD = (0.55, 0.36, 0.2)            # scene_words.c: "wooden"

COLOURS = r'''
import bpy, json, sys
out = {}
for o in bpy.data.objects:
    if o.type == "MESH" and o.active_material is not None:
        m = o.active_material
        bsdf = next((n for n in m.node_tree.nodes if n.type == "BSDF_PRINCIPLED"), None) if m.use_nodes else None
        images = [n.image.name for n in m.node_tree.nodes if n.type == "TEX_IMAGE" and n.image] if m.use_nodes else []
        out[o.name] = {"color": list(bsdf.inputs["Base Color"].default_value)[:3] if bsdf else None, "images": images}
w = bpy.context.scene.world
out["__world__"] = list(w.color) if w else None
open(sys.argv[sys.argv.index("--") + 1], "w").write(json.dumps(out))
'''


def cli(run_dir, the_env, *args, timeout=180):
    p = subprocess.run([BIN, "--run-dir", run_dir] + list(args), capture_output=True, text=True, env=the_env,
                       timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def check(name, ok, detail=""):
    print(("ok    " if ok else "FAIL  ") + name + (f": {detail}" if detail else ""))
    if not ok:
        failures.append(name)


def materials(run_dir, the_env):
    path = os.path.join(work, "scene.blend")
    rc, out, err = cli(run_dir, the_env, "scene", "save", path)
    assert rc == 0, err
    script = os.path.join(work, "colours.py")
    with open(script, "w") as f:
        f.write(COLOURS)
    result = os.path.join(work, "colours.json")
    subprocess.run([blender, "-b", "--factory-startup", path, "--python", script, "--", result],
                   capture_output=True, timeout=120, check=True)
    with open(result) as f:
        return json.load(f)


def closed_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()                       # nothing listens there now: connections are refused
    return port


def resolvable(host):
    try:
        socket.getaddrinfo(host, 443)
        return True
    except OSError:
        return False


class Refuser(http.server.BaseHTTPRequestHandler):
    """Poly Haven's stand-in that answers and refuses: 404 for everything."""
    asked = 0

    def do_GET(self):
        Refuser.asked += 1
        body = b'{"error": "no such asset"}'
        self.send_response(404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def chat(run_dir, the_env, prompt):
    rc, out, err = cli(run_dir, the_env, "chat", prompt, timeout=240)
    return rc, out + err


env_a = dict(env)
env_a["BLENDMQ_ASSETS_RETRIES"] = "1"           # an unreachable source is given up on quickly
if resolvable("api.polyhaven.com"):             # an online machine: make Poly Haven out of reach here
    env_a["BLENDMQ_ASSETS_POLYHAVEN_BASE_URL"] = "http://127.0.0.1:%d" % closed_port()
    print("note: api.polyhaven.com resolves here: Poly Haven is pointed at a closed local port")
R2 = os.path.join(work, "run2")
os.mkdir(R2, 0o700)
server = None
try:
    rc, out, err = cli(R, env_a, "up", "--ipc", timeout=300)
    if rc != 0:
        print(out, err)
        sys.exit(1)
    rc, out = chat(R, env_a, "a wooden table")
    check("'a wooden table' exits 0", rc == 0 and "done:" in out, out[-600:])
    check("the planner says it adds the texture with a fallback", "wood texture on the table top" in out
          and "built-in look stays" in out, out[:800])
    check("the asset step's line says it fell back", "step " in out and "note: Poly Haven unreachable" in out
          and "used the built-in wood look instead of the texture wood_table_001 on table_top" in out, out[-900:])
    check("the plan's notes say why", "note: wooden: Poly Haven unreachable, used the built-in wood look" in out, out[-600:])
    mats = materials(R, env_a)
    top = mats.get("table_top") or {}
    colour = top.get("color") or []
    check("the table top has the built-in wood colour", len(colour) == 3
          and all(abs(c - w) < 1e-3 for c, w in zip(colour, WOOD)), top)
    check("and no texture image", top.get("images") == [], top)
    check("the legs are there too", sum(1 for n in mats if n.startswith("table_leg")) == 4, sorted(mats))

    rc, out = chat(R, env_a, "an oak desk")
    check("'an oak desk' exits 0", rc == 0 and "done:" in out, out[-600:])

    rc, out = chat(R, env_a, "studio lighting and a wooden bench")
    check("'studio lighting and a wooden bench' exits 0", rc == 0 and "done:" in out, out[-600:])
    check("the HDRI fell back to a plain world colour, said", "studio light: Poly Haven unreachable, used a plain "
          "studio-coloured world" in out, out[-900:])
    world = materials(R, env_a).get("__world__") or []
    check("the world has the studio colour", len(world) == 3 and abs(world[0] - 0.6) < 1e-3 and abs(world[2] - 0.62) < 1e-3,
          world)

    plan = os.path.join(work, "by_id.json")
    with open(plan, "w") as f:
        json.dump([{"operation": "bpy.ops.mesh.primitive_cube_add", "name": "crate_box", "params": {"size": 1.0}},
                   {"operation": "asset.import", "target": "crate_box",
                    "params": {"source": "polyhaven", "id": "wood_table_001", "type": "texture"}}], f)
    rc, out, err = cli(R, env_a, "plan", "run", plan, timeout=240)
    check("an import asked for by id (no fallback) still fails the plan", rc != 0 and "could not be fetched" in out + err
          and "nothing was run" in out + err, (out + err)[-600:])
    cli(R, env_a, "down", timeout=60)

    # A source that answers and refuses: the plan fails, fallback or not.
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Refuser)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    env_b = dict(env)
    env_b["BLENDMQ_ASSETS_POLYHAVEN_BASE_URL"] = "http://127.0.0.1:%d" % server.server_address[1]
    rc, out, err = cli(R2, env_b, "up", "--ipc", timeout=300)
    if rc != 0:
        print(out, err)
        sys.exit(1)
    rc, out = chat(R2, env_b, "a wooden table")
    check("a refusal (HTTP 404) is not guessed around: the plan fails", rc != 0 and "could not be fetched" in out
          and "404" in out and "unreachable" not in out, out[-600:])
    check("the refusing server was asked", Refuser.asked > 0, Refuser.asked)
finally:
    cli(R, env_a, "down", timeout=60)
    cli(R2, env, "down", timeout=60)
    if server:
        server.shutdown()
    if not failures:
        shutil.rmtree(work, ignore_errors=True)

print("%d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
