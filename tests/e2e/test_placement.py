#!/usr/bin/python3
"""e2e.placement (issue 29: new objects land on old ones): in a real stack
(`up --ipc`, a confined headless Blender, the offline planner), "build a
snowman" twice puts the second snowman beside the first, not inside it.

  1. the first chat builds a snowman; the executor publishes the scene's
     names and the world boxes of its things (scene.names.boxes), the gateway
     passes them to the planner with the next chat (plan.request.scene_boxes);
  2. the second chat's answer says where its work went ("placed beside what
     the scene already holds"), exit 0;
  3. every object the first chat made keeps its name, and no box of a thing
     the second chat made intersects a box of a thing the first made (world
     boxes read by Blender itself from a saved copy of the scene);
  4. a chat with an explicit position ("a red ball at 0 0 0") is not moved.

Usage: test_placement.py BIN_DIR. Exit 77 without Blender or bubblewrap."""
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import stack_env  # noqa: E402

BIN, blender, work, R, env = stack_env.prepare(sys.argv[1], "bmq-place-")
failures = []

BOXES = r'''
import bpy, json, sys
out = {}
for o in bpy.data.objects:
    if o.type != "MESH":
        continue
    m = o.matrix_world
    pts = [m @ __import__("mathutils").Vector(c) for c in o.bound_box]
    out[o.name] = [[min(p[a] for p in pts) for a in range(3)], [max(p[a] for p in pts) for a in range(3)]]
open(sys.argv[sys.argv.index("--") + 1], "w").write(json.dumps(out))
'''


def cli(*args, timeout=180):
    p = subprocess.run([BIN, "--run-dir", R] + list(args), capture_output=True, text=True, env=env, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def check(name, ok, detail=""):
    print(("ok    " if ok else "FAIL  ") + name + (f": {detail}" if detail else ""))
    if not ok:
        failures.append(name)


def names():
    rc, out, err = cli("--json", "scene")
    assert rc == 0, err
    return {o["name"] for o in json.loads(out)["objects"]}


def world_boxes():
    path = os.path.join(work, "scene.blend")
    rc, out, err = cli("scene", "save", path)
    assert rc == 0, err
    script = os.path.join(work, "boxes.py")
    with open(script, "w") as f:
        f.write(BOXES)
    result = os.path.join(work, "boxes.json")
    subprocess.run([blender, "-b", "--factory-startup", path, "--python", script, "--", result],
                   capture_output=True, timeout=120, check=True)
    with open(result) as f:
        return json.load(f)


def overlap(a, b, slack=1e-3):
    return all(a[0][k] < b[1][k] - slack and b[0][k] < a[1][k] - slack for k in range(3))


try:
    rc, out, err = cli("up", "--ipc", timeout=300)
    if rc != 0:
        print(out, err)
        sys.exit(1)
    rc, out, err = cli("chat", "build a snowman")
    check("the first snowman is built", rc == 0 and "done:" in out, (out + err)[-300:])
    first = names()
    first_boxes = world_boxes()
    rc, out, err = cli("chat", "build a snowman")
    check("the second snowman is built", rc == 0 and "done:" in out, (out + err)[-300:])
    check("its answer says where it went", "placed beside what the scene already holds" in out + err,
          (out + err)[:300])
    second = names()
    check("the first snowman's objects keep their names", first <= second, sorted(first - second))
    made = second - first
    boxes = world_boxes()
    # Blender 3.4, asked to give a new sphere an old sphere's name, renames the OLD one: names
    # alone would not show it, their places do
    moved = [n for n, b in first_boxes.items()
             if n not in boxes or any(abs(b[i][k] - boxes[n][i][k]) > 1e-4 for i in range(2) for k in range(3))]
    check("each of the first snowman's objects is where it was, under its own name", not moved, moved)
    old = {n: b for n, b in boxes.items() if n in first}
    new = {n: b for n, b in boxes.items() if n in made}
    check("the second chat made meshes", len(new) >= 4, sorted(new))
    clashes = [(n, o) for n, b in new.items() for o, c in old.items() if overlap(b, c)]
    check("no new mesh is inside or through an old one", not clashes, clashes[:5])

    before = names()
    rc, out, err = cli("chat", "a red ball at 0 0 0")
    check("a ball placed where asked is built", rc == 0 and "done:" in out, (out + err)[-300:])
    check("and is not moved aside", "placed beside" not in out + err, (out + err)[:300])
    balls = {n: b for n, b in world_boxes().items() if n in names() - before}
    centre = [[(b[0][k] + b[1][k]) / 2 for k in range(3)] for b in balls.values()]
    check("the ball is at 0 0 0 (within its radius)", centre and all(abs(c[0]) < 1.0 and abs(c[1]) < 1.0 for c in centre),
          centre)
finally:
    cli("down", timeout=60)
    if not failures:
        shutil.rmtree(work, ignore_errors=True)

print("%d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
