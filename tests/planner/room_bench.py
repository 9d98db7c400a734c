#!/usr/bin/python3
"""room_bench.py — the room descriptions of compose_prompts.json (entries with "expect"), planned by
the offline planner (compose_tool) and built in a real headless Blender (room_check_blender.py),
scored on what Blender really built, no model as judge:

  counts      each expected object (and each absent one, count 0) has exactly that many copies (roots by name)
  colours     an object asked in a colour has a mesh of that colour (each channel within 0.12)
  relations   each expected relation holds between world boxes, in the anchor's own frame (its recipe's
              front turned by its root's rotation): on, under, inside, above, next_to, left_of, right_of,
              in_front_of, behind, facing, both_sides, around; and each spot (against a wall, in a corner,
              on a wall, in the middle) against the room's walls
  collisions  share of objects with a mesh that overlaps another object's mesh by more than 1 cm on every
              axis (the room's floor and walls included; pairs the plan put one under or inside the other left out)
  supported   share of objects whose lowest point rests on the floor or on the top of a mesh under its centre,
              or (hung things) that touch a wall, or (in a room) hang from its ceiling: their top (a cord, a rod,
              a chain) at the walls' height, BMQ_ROOM_WALL_H
  inside      share of objects inside the room's walls
  not understood: share of prompts with a word or phrase the planner reported it could not use
  chat failures: share of prompts with no plan or a plan Blender could not run

    room_bench.py --compose-tool build/bin/compose_tool [--sample N] [--renders DIR] [--assert] [--json]
                  [--prompts FILE] [--bench NAME]

--prompts FILE scores another set (default compose_prompts.json; holdout_prompts.json is the held-out one,
written apart from the parser) and --bench NAME names its JSON lines.
--sample N scores every k-th room so that about N are scored (the ctest); --assert exits 1 when a
figure misses its aim (counts ≥ 85 %, colours ≥ 80 %, relations ≥ 60 %, collisions ≤ 1 %, supported
≥ 99 %, chat failures ≤ 1 %); --json prints the figures as bench JSON lines (deploy/bench.sh compose).
Exit 77 when there is no Blender.
"""
import argparse
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
AIMS = {"counts_met": (">=", 85), "colours_met": (">=", 80), "relations_met": (">=", 60), "collisions": ("<=", 1),
        "supported": (">=", 99), "chat_failures": ("<=", 1)}


def colours():
    table = {}
    text = open(os.path.join(ROOT, "services/planner/recipe_params.c"), encoding="utf-8").read()
    for m in re.finditer(r'\{ "([a-z]+)", ([0-9.]+), ([0-9.]+), ([0-9.]+) \}', text):
        table.setdefault(m.group(1), [float(m.group(i)) for i in (2, 3, 4)])
    return table


def ceiling():
    """The rooms' wall height (scene_room.h BMQ_ROOM_WALL_H): a room's ceiling."""
    text = open(os.path.join(ROOT, "services/planner/scene_room.h"), encoding="utf-8").read()
    return float(re.search(r"#define BMQ_ROOM_WALL_H\s+([0-9.]+)", text).group(1))


CEILING = ceiling()


def fronts():
    angle = {"-y": -math.pi / 2, "+y": math.pi / 2, "-x": math.pi, "+x": 0.0}
    out = {}
    d = os.path.join(ROOT, "services/planner/recipes")
    for f in os.listdir(d):
        if not f.endswith(".yaml"):
            continue
        text = open(os.path.join(d, f), encoding="utf-8").read()
        name = re.search(r"^name:\s*(\S+)", text, re.M)
        front = re.search(r"^front:\s*(\S+)", text, re.M)
        if name:
            out[name.group(1)] = angle.get(front.group(1), None) if front else -math.pi / 2
    return out


def recipe_of(root):
    return re.sub(r"\.\d{3}$", "", root)


class Obj:
    def __init__(self, name, data):
        self.name, self.recipe = name, recipe_of(name)
        self.rot = data["rotation_z"]
        self.meshes = data["meshes"]
        lo, hi = [1e9] * 3, [-1e9] * 3
        for m in self.meshes:
            for a in range(3):
                lo[a], hi[a] = min(lo[a], m["box"][0][a]), max(hi[a], m["box"][1][a])
        self.lo, self.hi = lo, hi

    def c(self, a):
        return (self.lo[a] + self.hi[a]) / 2


def gap(a, b):
    return max(a.lo[0] - b.hi[0], b.lo[0] - a.hi[0], a.lo[1] - b.hi[1], b.lo[1] - a.hi[1])


def frame(a, b, front):
    """a's centre in b's frame: forward f, right r (as seen facing b's front), and b's half extents along them."""
    ang = (front if front is not None else -math.pi / 2) + b.rot
    ux, uy = math.cos(ang), math.sin(ang)
    dx, dy = a.c(0) - b.c(0), a.c(1) - b.c(1)
    f = dx * ux + dy * uy
    r = -(dx * uy - dy * ux)
    hx, hy = (b.hi[0] - b.lo[0]) / 2, (b.hi[1] - b.lo[1]) / 2
    hf = abs(ux) * hx + abs(uy) * hy
    hr = abs(uy) * hx + abs(ux) * hy
    return f, r, hf, hr


def top_under(b, x, y):
    top = None
    for m in b.meshes:
        lo, hi = m["box"]
        if lo[0] - 0.005 <= x <= hi[0] + 0.005 and lo[1] - 0.005 <= y <= hi[1] + 0.005:
            top = hi[2] if top is None else max(top, hi[2])
    return top


def holds(rel, a, b, front_b, front_a):
    inside_xy = b.lo[0] - 0.05 <= a.c(0) <= b.hi[0] + 0.05 and b.lo[1] - 0.05 <= a.c(1) <= b.hi[1] + 0.05
    g = gap(a, b)
    f, r, hf, hr = frame(a, b, front_b)
    if rel == "on":
        t = top_under(b, a.c(0), a.c(1))
        return inside_xy and t is not None and abs(a.lo[2] - t) <= 0.03
    if rel == "under":
        return inside_xy and a.hi[2] <= b.hi[2] + 0.01
    if rel == "inside":
        return inside_xy and a.lo[2] >= b.lo[2] - 0.01 and a.hi[2] <= b.hi[2] + 0.01
    if rel == "above":
        along = (b.lo[0] - 0.3 <= a.c(0) <= b.hi[0] + 0.3 and abs(a.c(1) - b.c(1)) < 1.5) or \
                (b.lo[1] - 0.3 <= a.c(1) <= b.hi[1] + 0.3 and abs(a.c(0) - b.c(0)) < 1.5)
        return along and a.lo[2] >= b.hi[2] - 0.02
    if rel in ("next_to", "around"):
        return -0.01 <= g <= 1.0
    if rel == "in_front_of":
        return f > hf - 0.01 and g > -0.01
    if rel == "behind":
        return -f > hf - 0.01 and g > -0.01
    if rel == "right_of":
        return r > hr - 0.01 and g > -0.01
    if rel == "left_of":
        return -r > hr - 0.01 and g > -0.01
    if rel == "facing":
        if not (f > hf - 0.01 and g > -0.01):
            return False
        if front_a is None:
            return True
        ang = front_a + a.rot
        dx, dy = b.c(0) - a.c(0), b.c(1) - a.c(1)
        n = math.hypot(dx, dy) or 1
        return (math.cos(ang) * dx + math.sin(ang) * dy) / n > 0.5
    return False


def spot_holds(spot, a, W, D):
    near = [a.lo[0] < -W / 2 + 0.06, a.hi[0] > W / 2 - 0.06, a.lo[1] < -D / 2 + 0.06, a.hi[1] > D / 2 - 0.06]
    if spot == "wall":
        return any(near)
    if spot == "corner":
        return (near[0] or near[1]) and (near[2] or near[3])
    if spot == "on_wall":
        return any(near) and a.lo[2] > 0.3
    if spot == "center":
        return abs(a.c(0)) < W / 4 + 0.05 and abs(a.c(1)) < D / 4 + 0.05
    return False


def score(entry, body, built, COL, FRONT, tally, fails):
    exp = entry["expect"]
    objs = [Obj(n, d) for n, d in built["roots"].items() if recipe_of(n) != "room"]
    by = {}
    for o in objs:
        by.setdefault(o.recipe, []).append(o)
    room = body.get("room") or {}
    W, D = room.get("width", 0), room.get("depth", 0)
    why = []
    for e in exp["objects"]:
        ok = len(by.get(e["name"], [])) == e["count"]
        tally["counts"].append(ok)
        if not ok:
            why.append("count %s %d != %d" % (e["name"], len(by.get(e["name"], [])), e["count"]))
        if e.get("colour"):
            want = COL.get(e["colour"])
            okc = bool(want) and any(m["colour"] and max(abs(m["colour"][i] - want[i]) for i in range(3)) <= 0.12
                                     for o in by.get(e["name"], []) for m in o.meshes)
            tally["colours"].append(okc)
            if not okc:
                why.append("colour %s %s" % (e["name"], e["colour"]))
    for x in exp["absent"]:
        ok = not by.get(x)
        tally["counts"].append(ok)
        if not ok:
            why.append("absent %s built" % x)
    for a, rel, b in exp["relations"]:
        A, B = by.get(a, []), by.get(b, [])
        ok = bool(A and B)
        if ok and rel == "both_sides":
            fb = FRONT.get(b)
            ok = False
            for bo in B:
                sides = [frame(ao, bo, fb)[1] for ao in A if -0.01 <= gap(ao, bo) <= 1.0]
                ok = ok or (any(s > 0 for s in sides) and any(s < 0 for s in sides))
        elif ok:
            ok = all(any(holds(rel, ao, bo, FRONT.get(b), FRONT.get(a)) for bo in B) for ao in A)
        tally["relations"].append(ok)
        tally["rel_" + rel].append(ok)
        if not ok:
            why.append("relation %s %s %s" % (a, rel, b))
    for a, spot in exp["spots"]:
        A = by.get(a, [])
        ok = bool(A) and W > 0 and all(spot_holds(spot, ao, W, D) for ao in A)
        tally["relations"].append(ok)
        tally["spot_" + spot].append(ok)
        if not ok:
            why.append("spot %s %s" % (a, spot))
    # collisions: mesh against mesh of another object, the room's floor and walls included
    planned = set()
    for p in body.get("parts", []):
        rel = p.get("relation") or {}
        if rel.get("type") in ("under", "inside"):
            planned.add((p["recipe"], rel["to"]))
            planned.add((rel["to"], p["recipe"]))
    every = [Obj(n, d) for n, d in built["roots"].items()]
    hit = set()
    for i, o in enumerate(every):
        for q in every[i + 1:]:
            if (o.recipe, q.recipe) in planned:
                continue
            if o.lo[0] > q.hi[0] or q.lo[0] > o.hi[0] or o.lo[1] > q.hi[1] or q.lo[1] > o.hi[1] or o.lo[2] > q.hi[2] or q.lo[2] > o.hi[2]:
                continue
            clash = False
            for m in o.meshes:
                for n in q.meshes:
                    if all(min(m["box"][1][x], n["box"][1][x]) - max(m["box"][0][x], n["box"][0][x]) > 0.01 for x in range(3)):
                        clash = True
                        break
                if clash:
                    break
            if clash:
                hit.update(x.name for x in (o, q) if x.recipe != "room")
                why.append("collision %s %s" % (o.name, q.name))
    for o in objs:
        tally["collisions"].append(o.name in hit)
        rest = abs(o.lo[2]) <= 0.02
        for q in every:
            if q is o or rest:
                continue
            t = top_under(q, o.c(0), o.c(1))
            rest = t is not None and abs(o.lo[2] - t) <= 0.03
        if not rest and W > 0:
            rest = spot_holds("wall", o, W, D) and o.lo[2] > 0.02
        if not rest and W > 0:      # hung from the ceiling: its top (a cord, a rod, a chain) at the walls' height
            rest = abs(o.hi[2] - CEILING) <= 0.03 and o.lo[2] > 0.02
        tally["supported"].append(rest)
        if not rest:
            why.append("unsupported %s" % o.name)
        if W > 0:
            inside = o.lo[0] >= -W / 2 - 0.03 and o.hi[0] <= W / 2 + 0.03 and o.lo[1] >= -D / 2 - 0.03 and o.hi[1] <= D / 2 + 0.03
            tally["inside"].append(inside)
    if why:
        fails.append((entry["prompt"], why))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--compose-tool", required=True)
    ap.add_argument("--blender", default=os.environ.get("BLENDMQ_BLENDER") or shutil.which("blender"))
    ap.add_argument("--sample", type=int, default=0)
    ap.add_argument("--renders", default="")
    ap.add_argument("--assert", dest="check", action="store_true")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--show", type=int, default=8, help="failing prompts to print")
    ap.add_argument("--prompts", default=os.path.join(HERE, "compose_prompts.json"), help="room descriptions (entries with \"expect\")")
    ap.add_argument("--bench", default="compose", help="bench name of the --json lines (compose_holdout for holdout_prompts.json)")
    o = ap.parse_args()
    if not o.blender:
        print("SKIPPED: no Blender (blender not on PATH, BLENDMQ_BLENDER unset)")
        return 77
    entries = [e for e in json.load(open(o.prompts, encoding="utf-8")) if "expect" in e]
    if o.sample and o.sample < len(entries):
        k = len(entries) / o.sample
        entries = [entries[int(i * k)] for i in range(o.sample)]
    bodies, failed_chat = {}, 0
    for i in range(0, len(entries), 40):
        chunk = entries[i:i + 40]
        run = subprocess.run([o.compose_tool] + [e["prompt"] for e in chunk], capture_output=True, text=True, timeout=600)
        lines = [json.loads(x) for x in run.stdout.splitlines() if x.strip()]
        for e, line in zip(chunk, lines):
            bodies[e["prompt"]] = line.get("body")
    jobs, keys = {}, {}
    renders = 0
    seen_kinds = set()
    if o.renders and os.path.isdir(o.renders):     # this run's five only: none left from an earlier sample
        for old in os.listdir(o.renders):
            if re.fullmatch(r"room_\d+_[a-z_]+\.png", old):
                os.remove(os.path.join(o.renders, old))
    for n, e in enumerate(entries):
        body = bodies.get(e["prompt"])
        if not body:
            continue
        render = None
        kind = e["expect"]["room"]
        if o.renders and renders < 5 and kind not in seen_kinds:
            os.makedirs(o.renders, exist_ok=True)
            render = os.path.join(o.renders, "room_%d_%s.png" % (renders + 1, kind.replace(" ", "_")))
            renders += 1
            seen_kinds.add(kind)
        jobs["p%d" % n] = {"plan": body["plan"], "render": render}
        keys["p%d" % n] = e
    with tempfile.TemporaryDirectory() as tmp:
        inp, out = os.path.join(tmp, "in.json"), os.path.join(tmp, "out.json")
        json.dump(jobs, open(inp, "w"))
        run = subprocess.run([o.blender, "-b", "--factory-startup", "--python", os.path.join(HERE, "room_check_blender.py"), "--",
                              os.path.join(ROOT, "services/executor/addon/blendmq_addon.py"), inp, out],
                             capture_output=True, text=True, timeout=3000)
        if not os.path.exists(out):
            sys.stderr.write(run.stdout[-3000:] + run.stderr[-3000:])
            print("room_bench: Blender did not run the plans (exit %d)" % run.returncode)
            return 1
        results = json.load(open(out))
    COL, FRONT = colours(), fronts()
    tally = {k: [] for k in ("counts", "colours", "relations", "collisions", "supported", "inside")}
    for k in list(tally):
        pass
    fails = []
    understood_not = 0
    for key, e in keys.items():
        built = results.get(key)
        body = bodies[e["prompt"]]
        understood_not += bool(body.get("not_understood"))
        if not built or not built["ok"]:
            failed_chat += 1
            fails.append((e["prompt"], ["blender: %s" % (built or {}).get("error")]))
            continue
        for name in ("counts", "colours", "relations", "collisions", "supported", "inside"):
            tally.setdefault(name, [])
        score(e, body, built, COL, FRONT, _Tally(tally), fails)
    failed_chat += sum(1 for e in entries if not bodies.get(e["prompt"]))

    def share(xs):
        return 100.0 * sum(xs) / len(xs) if xs else 100.0

    figures = {
        "prompts": len(entries),
        "counts_met": share(tally["counts"]), "colours_met": share(tally["colours"]), "relations_met": share(tally["relations"]),
        "collisions": share(tally["collisions"]), "supported": share(tally["supported"]), "inside_room": share(tally["inside"]),
        "chat_failures": 100.0 * failed_chat / max(1, len(entries)), "not_understood": 100.0 * understood_not / max(1, len(entries)),
    }
    per = {k: (share(v), len(v)) for k, v in sorted(tally.items()) if k.startswith("rel_") or k.startswith("spot_")}
    for p, why in fails[:o.show]:
        sys.stderr.write("  %s\n    %s\n" % (p[:160], "; ".join(why[:6])))
    sys.stderr.write("compose: %d room descriptions\n" % len(entries))
    for k in ("counts_met", "colours_met", "relations_met", "collisions", "supported", "inside_room", "chat_failures", "not_understood"):
        aim = AIMS.get(k)
        sys.stderr.write("  %-15s %6.1f %%%s\n" % (k, figures[k], "   (aim %s %d %%)" % aim if aim else ""))
    for k, (v, n) in per.items():
        sys.stderr.write("    %-22s %6.1f %%  of %d\n" % (k, v, n))
    if o.json:
        for k, v in figures.items():
            print(json.dumps({"bench": o.bench, "metric": k, "value": round(v, 2), "unit": "count" if k == "prompts" else "%"}))
        for k, (v, n) in per.items():
            print(json.dumps({"bench": o.bench, "metric": k, "value": round(v, 2), "unit": "%", "of": n}))
    missed = [k for k, (op, aim) in AIMS.items() if (figures[k] < aim if op == ">=" else figures[k] > aim)]
    if missed:
        sys.stderr.write("compose: below aim: %s\n" % ", ".join(missed))
    return 1 if (o.check and missed) else 0


class _Tally(dict):
    """A tally whose unknown keys start empty (rel_on, spot_corner, ...)."""

    def __init__(self, base):
        super().__init__()
        self.base = base

    def __getitem__(self, k):
        return self.base.setdefault(k, [])


if __name__ == "__main__":
    sys.exit(main())
