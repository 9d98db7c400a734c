"""blendmq add-on: a small, authenticated, length-prefixed command server inside Blender.

One file, two ways to run:
  * headless:  blender -b --factory-startup --python blendmq_addon.py -- \
                   --host 127.0.0.1 --port 0 --port-file F --token-file T [--token-env NAME] [--reset-scene]
    bpy.app.timers do not fire in background mode once the startup script returns, so the
    script serves from its own select() loop on the main thread until `shutdown` or SIGTERM/SIGINT.
  * GUI add-on: register() starts an I/O thread (accept, read frames, authenticate) that queues
    requests; a bpy.app.timers function drains the queue on the main thread. bpy is never
    touched off the main thread.

Frame (both directions): u32 BE json length H, u32 BE blob length B, H bytes UTF-8 JSON object,
B bytes blob. H <= 1 MiB, B <= 64 MiB (before `hello` succeeds: H <= 64 KiB, B = 0, so an
unauthenticated peer cannot make us buffer much). A bad frame gets an error reply (id 0) and
the connection is closed. One client at a time: a second connection gets {"id":0,"ok":false,
"error":"busy: ..."} and is closed.
"""

bl_info = {
    "name": "blendmq",
    "author": "blendmq",
    "version": (0, 1, 0),
    "blender": (3, 4, 0),
    "location": "Background service (TCP 127.0.0.1)",
    "description": "Runs validated blendmq plan steps sent over an authenticated local socket",
    "category": "System",
}
ADDON_VERSION = "0.1.0"

import hmac
import json
import math
import os
import queue
import re
import selectors
import shutil
import signal
import socket
import struct
import sys
import tempfile
import threading
import time

import bpy
from mathutils import Matrix, Quaternion, Vector

MAX_JSON = 1 << 20
MAX_BLOB = 64 << 20
PREAUTH_MAX_JSON = 64 << 10
HELLO_TIMEOUT_S = 10.0      # a silent peer must not hold the only client slot forever
SEND_TIMEOUT_S = 30.0       # a peer that stops reading must not wedge Blender's main thread
OP_RE = re.compile(r"^bpy\.ops\.[a-z_]+\.[a-z0-9_]+$")
SO_TIMESTAMPING = getattr(socket, "SO_TIMESTAMPING", 37)
TS_FLAGS = (1 << 3) | (1 << 4)  # SOF_TIMESTAMPING_RX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE


def log(msg):
    print("blendmq-addon: " + msg, file=sys.stderr, flush=True)


class CommandError(Exception):
    """An expected failure: its text is the reply's error message as is."""


class FrameError(Exception):
    """The peer broke framing; reply (id 0) and close."""


def s_reject_constant(name):
    raise ValueError("non-finite number " + name)


def s_encode(obj, blob=b""):
    js = json.dumps(obj, separators=(",", ":"), allow_nan=False).encode("utf-8")
    return struct.pack(">II", len(js), len(blob)) + js


# ---------------------------------------------------------------------------- connection

class Connection:
    """One client socket: incremental frame parser plus a locked writer (GUI replies come
    from the main thread while the I/O thread reads)."""

    def __init__(self, sock, server):
        self.sock, self.server = sock, server
        self.buf = bytearray()
        self.authed = False
        self.closed = False     # set by Server.drop_client (the socket is gone)
        self.dead = False       # a send failed: no more replies; the reader drops us on EOF
        self.opened = time.monotonic()
        self.lock = threading.Lock()
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.settimeout(SEND_TIMEOUT_S)
        # Kernel receive timestamps tell when a request really arrived, so a request that sat
        # in the socket buffer while a long command ran still honours its deadline_ms.
        try:
            sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPING, TS_FLAGS)
            self.stamped = True
        except OSError:
            self.stamped = False

    def send(self, reply, blob=b""):
        if self.closed or self.dead:
            return False
        try:
            with self.lock:
                self.sock.sendall(s_encode(reply, blob))
                if blob:
                    self.sock.sendall(blob)
            return True
        except (OSError, ValueError) as e:
            # Only the reading side closes sockets (in the GUI that is another thread): shut
            # the socket down so it sees EOF and drops us.
            log("send failed, dropping client: %s" % e)
            self.dead = True
            try:
                self.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return False

    def _recv(self):
        now = time.monotonic()
        if not self.stamped:
            return self.sock.recv(1 << 18), now
        data, anc, _flags, _addr = self.sock.recvmsg(1 << 18, socket.CMSG_SPACE(48))
        for level, kind, payload in anc:
            if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPING and len(payload) >= 16:
                sec, nsec = struct.unpack_from("qq", payload)
                if sec:
                    now -= max(0.0, time.time() - (sec + nsec / 1e9))
        return data, now

    def read(self):
        """Read what is available. Returns [(req, blob, arrival)]; raises EOFError/OSError when
        the peer is gone and FrameError on a bad frame."""
        data, arrival = self._recv()
        if not data:
            raise EOFError("peer closed")
        self.buf += data
        out = []
        while len(self.buf) >= 8:
            hlen, blen = struct.unpack_from(">II", self.buf)
            cap_h, cap_b = (MAX_JSON, MAX_BLOB) if self.authed else (PREAUTH_MAX_JSON, 0)
            if hlen > cap_h or blen > cap_b:
                raise FrameError("frame too large (json %d, blob %d bytes)" % (hlen, blen))
            if len(self.buf) < 8 + hlen + blen:
                break
            raw = bytes(self.buf[8:8 + hlen])
            blob = bytes(self.buf[8 + hlen:8 + hlen + blen])
            del self.buf[:8 + hlen + blen]
            try:
                req = json.loads(raw.decode("utf-8"), parse_constant=s_reject_constant)
            except (ValueError, RecursionError) as e:
                raise FrameError("invalid JSON: %s" % e)
            if not isinstance(req, dict):
                raise FrameError("request must be a JSON object")
            if not self.authed:
                self._hello(req)    # raises FrameError when refused
                continue
            out.append((req, blob, arrival))
        return out

    def _hello(self, req):
        rid = req.get("id") if isinstance(req.get("id"), int) else 0
        args = req.get("args") if isinstance(req.get("args"), dict) else {}
        token = args.get("token")
        ok = (req.get("cmd") == "hello" and isinstance(token, str)
              and hmac.compare_digest(token.encode("utf-8"), self.server.token.encode("utf-8")))
        if not ok:
            self.send({"id": rid, "ok": False, "error": "unauthorized", "bpy_ms": 0.0})
            raise FrameError(None)     # already replied
        self.authed = True
        self.send({"id": rid, "ok": True, "result": self.server.info, "bpy_ms": 0.0})


# ---------------------------------------------------------------------------- server (I/O)

class Server:
    """Listening socket + at most one client, driven by poll(); on_request(conn, req, blob,
    arrival) is called for each authenticated request, in order."""

    def __init__(self, host, port, token, on_request):
        self.token, self.on_request = token, on_request
        self.info = {"blender": bpy.app.version_string.split(" ")[0],
                     "background": bool(bpy.app.background), "addon": ADDON_VERSION}
        self.listener = socket.create_server((host, port), backlog=8)
        self.listener.setblocking(False)
        self.port = self.listener.getsockname()[1]
        self.wake_r, self.wake_w = socket.socketpair()
        self.wake_r.setblocking(False)
        self.wake_w.setblocking(False)
        self.sel = selectors.DefaultSelector()
        self.sel.register(self.listener, selectors.EVENT_READ, "listen")
        self.sel.register(self.wake_r, selectors.EVENT_READ, "wake")
        self.client = None
        self.stopping = False

    def wake(self):
        try:
            self.wake_w.send(b"x")
        except OSError:
            pass

    def poll(self, timeout=None):
        c = self.client
        if c and not c.authed:   # bound how long an unauthenticated peer may hold the slot
            left = c.opened + HELLO_TIMEOUT_S - time.monotonic()
            timeout = max(0.0, left) if timeout is None else min(timeout, max(0.0, left))
        events = self.sel.select(timeout)
        # The client first: its EOF must free the slot before a new connection is judged busy.
        for key, _mask in sorted(events, key=lambda e: e[0].data != "client"):
            if key.data == "client" and self.client and key.fileobj is self.client.sock:
                self._on_client()
            elif key.data == "wake":
                try:
                    while self.wake_r.recv(4096):
                        pass
                except OSError:
                    pass
            elif key.data == "listen":
                self._accept()
        c = self.client
        if c and not c.authed and time.monotonic() > c.opened + HELLO_TIMEOUT_S:
            log("client sent no hello in time, closing")
            self.drop_client(c)

    def _accept(self):
        try:
            sock, addr = self.listener.accept()
        except OSError:
            return
        if self.client and not self._alive(self.client):
            self.drop_client(self.client)
        if self.client:
            try:
                sock.settimeout(1.0)
                sock.sendall(s_encode({"id": 0, "ok": False, "bpy_ms": 0.0,
                                       "error": "busy: another client is connected"}))
            except OSError:
                pass
            sock.close()
            return
        self.client = Connection(sock, self)
        self.sel.register(sock, selectors.EVENT_READ, "client")

    @staticmethod
    def _alive(conn):
        try:
            if not selectors.select.select([conn.sock], [], [], 0)[0]:
                return True
            return conn.sock.recv(1, socket.MSG_PEEK) != b""
        except OSError:
            return False

    def _on_client(self):
        conn = self.client
        try:
            reqs = conn.read()
        except FrameError as e:
            reqs = None
            if e.args[0]:
                log("bad frame: %s" % e.args[0])
                conn.send({"id": 0, "ok": False, "error": e.args[0], "bpy_ms": 0.0})
        except (EOFError, OSError):
            reqs = None
        if reqs is None:
            self.drop_client(conn)
            return
        for req, blob, arrival in reqs:
            if conn.closed or conn.dead or self.stopping:
                break
            self.on_request(conn, req, blob, arrival)

    def drop_client(self, conn):
        if conn.closed:
            return
        conn.closed = True
        if self.client is conn:
            self.client = None
        try:
            self.sel.unregister(conn.sock)
        except (KeyError, ValueError, OSError):
            pass
        conn.sock.close()

    def close(self):
        if self.client:
            self.drop_client(self.client)
        self.sel.close()
        for s in (self.listener, self.wake_r, self.wake_w):
            s.close()


# ---------------------------------------------------------------------------- dispatch

def handle_request(req, arrival):
    """Run one request on the main thread. Returns (reply, blob)."""
    rid = req.get("id")
    if not isinstance(rid, int) or isinstance(rid, bool):
        return {"id": 0, "ok": False, "error": "request id must be an integer", "bpy_ms": 0.0}, b""
    cmd, args = req.get("cmd"), req.get("args", {})
    if args is None:
        args = {}
    deadline = req.get("deadline_ms")
    if isinstance(deadline, (int, float)) and not isinstance(deadline, bool) and deadline > 0 \
            and time.monotonic() > arrival + deadline / 1000.0:
        return {"id": rid, "ok": False, "error": "deadline exceeded before start", "bpy_ms": 0.0}, b""
    fn = COMMANDS.get(cmd) if isinstance(cmd, str) else None
    if fn is None:
        return {"id": rid, "ok": False, "error": "unknown command %s" % str(cmd)[:80], "bpy_ms": 0.0}, b""
    t0 = time.perf_counter()
    try:
        if not isinstance(args, dict):
            raise CommandError("args must be an object")
        result, blob = fn(args)
        reply = {"id": rid, "ok": True, "result": result}
    except CommandError as e:
        reply, blob = {"id": rid, "ok": False, "error": str(e)}, b""
    except Exception as e:          # never let a command take the server down
        reply, blob = {"id": rid, "ok": False, "error": "%s: %s" % (type(e).__name__, e)}, b""
    reply["bpy_ms"] = (time.perf_counter() - t0) * 1000.0
    blob = blob or b""
    if len(blob) > MAX_BLOB:
        reply, blob = {"id": rid, "ok": False, "bpy_ms": reply["bpy_ms"],
                       "error": "reply blob too large (%d bytes)" % len(blob)}, b""
    try:
        if len(json.dumps(reply, allow_nan=False)) > MAX_JSON:
            raise ValueError("reply JSON over 1 MiB")
    except ValueError as e:
        reply, blob = {"id": rid, "ok": False, "bpy_ms": reply["bpy_ms"],
                       "error": "cannot encode reply: %s" % e}, b""
    return reply, blob



# ---------------------------------------------------------------------------- helpers

class StdoutCapture:
    """Blender prints operator reports (and render progress) to fd 1 from C, and a
    CANCELLED operator gives no other reason; so fd 1 is pointed at a reused temp file for
    the call. A few syscalls per call."""

    def __init__(self):
        self.file, self.saved, self.text = None, None, ""

    def __enter__(self):
        if self.file is None:
            self.file = tempfile.TemporaryFile()
        sys.stdout.flush()
        self.file.seek(0)
        self.file.truncate()
        self.saved = os.dup(1)
        os.dup2(self.file.fileno(), 1)
        return self

    def __exit__(self, *exc):
        sys.stdout.flush()
        os.dup2(self.saved, 1)
        os.close(self.saved)
        self.file.seek(0)
        self.text = self.file.read(4096).decode("utf-8", "replace").strip()
        return False


CAPTURE = StdoutCapture()


def s_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def s_vec3(params, key, where):
    v = params.get(key)
    if not (isinstance(v, list) and len(v) == 3 and all(s_num(x) for x in v)):
        raise CommandError("%s: %s must be [x, y, z] numbers" % (where, key))
    return Vector(v)


def s_unit(params, key, default, where):
    v = params.get(key, default)
    if not (s_num(v) and 0.0 <= v <= 1.0):
        raise CommandError("%s: %s must be a number in 0..1" % (where, key))
    return float(v)


def s_int_arg(args, key, default, lo, hi):
    v = args.get(key, default)
    if not isinstance(v, int) or isinstance(v, bool):
        raise CommandError("%s must be an integer" % key)
    return min(max(v, lo), hi)


def s_only(params, allowed, where):
    extra = sorted(set(params) - set(allowed))
    if extra:
        raise CommandError("%s: unknown parameter %s" % (where, extra[0]))


def s_tuples(v):
    """bpy wants sequences for vector properties; JSON gives lists."""
    if isinstance(v, list):
        return tuple(s_tuples(x) for x in v)
    if isinstance(v, dict):
        return {k: s_tuples(x) for k, x in v.items()}
    return v


def s_ensure_object_mode():
    active = bpy.context.view_layer.objects.active
    if active is not None and active.mode != "OBJECT":
        bpy.ops.object.mode_set(mode="OBJECT")


def s_select_only(name):
    vl = bpy.context.view_layer
    obj = vl.objects.get(name)
    if obj is None:
        raise CommandError("no object named %s" % name)
    s_ensure_object_mode()
    for o in list(vl.objects.selected):
        o.select_set(False)
    obj.select_set(True)
    vl.objects.active = obj
    return obj


def s_target_object(name):
    vl = bpy.context.view_layer
    obj = vl.objects.get(name) if name is not None else vl.objects.active
    if obj is None:
        raise CommandError("no object named %s" % name if name is not None
                           else "no target given and no active object")
    return obj


def s_round(v):
    return [round(float(x), 6) for x in v]


def s_obj_dict(o):
    return {"name": o.name, "type": o.type, "location": s_round(o.location),
            "rotation": s_round(o.rotation_euler), "scale": s_round(o.scale),
            "dimensions": s_round(o.dimensions),
            "materials": [s.material.name for s in o.material_slots if s.material]}


# ---------------------------------------------------------------------------- builtin steps

def s_builtin_material(obj, p):
    where = "object.material"
    s_only(p, ("color", "metallic", "roughness"), where)
    color = p.get("color")
    if not (isinstance(color, list) and len(color) in (3, 4)
            and all(s_num(c) and 0.0 <= c <= 1.0 for c in color)):
        raise CommandError("%s: color must be [r,g,b] or [r,g,b,a] in 0..1" % where)
    rgba = tuple(float(c) for c in color) + ((1.0,) if len(color) == 3 else ())
    metallic = s_unit(p, "metallic", 0.0, where)
    roughness = s_unit(p, "roughness", 0.5, where)
    if not hasattr(obj.data, "materials"):
        raise CommandError("%s: object %s (%s) cannot hold materials" % (where, obj.name, obj.type))
    name = obj.name + "_mat"
    mat = bpy.data.materials.get(name) or bpy.data.materials.new(name)   # re-colouring reuses it
    mat.use_nodes = True
    bsdf = next((n for n in mat.node_tree.nodes if n.type == "BSDF_PRINCIPLED"), None)
    if bsdf is not None:
        bsdf.inputs["Base Color"].default_value = rgba
        bsdf.inputs["Metallic"].default_value = metallic
        bsdf.inputs["Roughness"].default_value = roughness
    # Workbench (our preview renderer) and the solid viewport show these, not the nodes.
    mat.diffuse_color, mat.metallic, mat.roughness = rgba, metallic, roughness
    if obj.material_slots:
        obj.material_slots[0].material = mat
    else:
        obj.data.materials.append(mat)


def s_builtin_setter(attr):
    def apply(obj, p):
        where = "object." + {"rotation_euler": "rotation"}.get(attr, attr)
        s_only(p, ("value",), where)
        setattr(obj, attr, s_vec3(p, "value", where))
    return apply


BUILTINS = {
    "object.material": s_builtin_material,
    "object.location": s_builtin_setter("location"),
    "object.rotation": s_builtin_setter("rotation_euler"),
    "object.scale": s_builtin_setter("scale"),
}


# ---------------------------------------------------------------------------- bpy.ops steps

# Categories whose operators quit, load/save files, touch preferences or run code: never via
# a plan step, whatever the caller validated (defence in depth).
DENIED_CATEGORIES = {"wm", "script", "preferences", "text", "file", "buttons"}


def s_pivot(objs):
    return sum((o.location for o in objs), Vector()) / max(1, len(objs))


def s_fb_translate(objs, p):
    s_only(p, ("value",), "transform.translate")
    v = s_vec3(p, "value", "transform.translate")
    for o in objs:
        o.location += v


def s_rotation_matrix(o):
    if o.rotation_mode == "QUATERNION":
        return o.rotation_quaternion.to_matrix()
    if o.rotation_mode == "AXIS_ANGLE":
        angle, x, y, z = o.rotation_axis_angle
        return Quaternion((x, y, z), angle).to_matrix()
    return o.rotation_euler.to_matrix()


def s_fb_resize(objs, p):
    s_only(p, ("value",), "transform.resize")
    v, pivot = s_vec3(p, "value", "transform.resize"), s_pivot(objs)
    for o in objs:
        # Like the operator: scale along the global axes, keep the rotation, and take each
        # local scale from the length of the scaled local axis (a rotated object cannot
        # take a non-uniform global scale exactly; Blender approximates it the same way).
        rot = s_rotation_matrix(o)
        m = Matrix.Diagonal(v) @ rot @ Matrix.Diagonal(o.scale)
        o.scale = Vector(math.copysign(m.col[i].length, m.col[i].dot(rot.col[i])) for i in range(3))
        o.location = pivot + Vector(a * b for a, b in zip(o.location - pivot, v))


def s_fb_rotate(objs, p):
    s_only(p, ("value", "orient_axis"), "transform.rotate")
    angle, axis = p.get("value"), p.get("orient_axis", "Z")
    if not s_num(angle) or axis not in ("X", "Y", "Z"):
        raise CommandError("transform.rotate: value must be a number, orient_axis X/Y/Z")
    # Blender 3.4's operator turns by -value about the global axis (measured), so do the same.
    q = Quaternion({"X": (1, 0, 0), "Y": (0, 1, 0), "Z": (0, 0, 1)}[axis], -angle)
    pivot = s_pivot(objs)
    for o in objs:
        if o.rotation_mode == "QUATERNION":
            o.rotation_quaternion = q @ o.rotation_quaternion
        else:
            o.rotation_euler = (q.to_matrix() @ o.rotation_euler.to_matrix()).to_euler(
                o.rotation_mode if o.rotation_mode != "AXIS_ANGLE" else "XYZ", o.rotation_euler)
        o.location = pivot + q @ (o.location - pivot)


def s_fb_shade(smooth):
    def apply(objs, p):
        s_only(p, (), "object.shade_smooth" if smooth else "object.shade_flat")
        for o in objs:
            if o.type == "MESH":
                o.data.polygons.foreach_set("use_smooth", [smooth] * len(o.data.polygons))
                o.data.update()
    return apply


# Used only when the operator's poll() fails (no 3D view, e.g. a GUI timer context); on
# Blender 3.4.1 in -b they pass, measured. Data-API equivalents on the selected objects.
FALLBACKS = {
    "bpy.ops.transform.translate": s_fb_translate,
    "bpy.ops.transform.resize": s_fb_resize,
    "bpy.ops.transform.rotate": s_fb_rotate,
    "bpy.ops.object.shade_smooth": s_fb_shade(True),
    "bpy.ops.object.shade_flat": s_fb_shade(False),
}


def s_run_operator(operation, params):
    _bpy, _ops, category, name = operation.split(".")
    if category in DENIED_CATEGORIES:
        raise CommandError("operator %s is not allowed" % operation)
    try:
        fn = getattr(getattr(bpy.ops, category), name)
        fn.get_rna_type()
    except (AttributeError, KeyError):
        raise CommandError("unknown operator %s" % operation)
    if not fn.poll():
        fallback = FALLBACKS.get(operation)
        if fallback is None:
            raise CommandError("%s cannot run here: poll() failed (context is incorrect)" % operation)
        fallback(list(bpy.context.view_layer.objects.selected), params)
        return
    kwargs = {k: s_tuples(v) for k, v in params.items()}
    with CAPTURE:
        result = fn(**kwargs)
    if result != {"FINISHED"}:
        reports = CAPTURE.text[:1000]
        raise CommandError("%s returned %s%s" % (operation, "/".join(sorted(result)),
                                                 ": " + reports if reports else ""))


# ---------------------------------------------------------------------------- commands

def cmd_ping(args):
    return {"pong": True}, None


def cmd_run_step(args):
    step = args.get("step")
    if not isinstance(step, dict):
        raise CommandError("run_step: args.step must be an object")
    operation, params = step.get("operation"), step.get("params") or {}
    name, target = step.get("name"), step.get("target")
    if not isinstance(operation, str):
        raise CommandError("run_step: operation must be a string")
    if not isinstance(params, dict):
        raise CommandError("run_step: params must be an object")
    if name is not None and not (isinstance(name, str) and name):
        raise CommandError("run_step: name must be a non-empty string")
    if target is not None and not isinstance(target, str):
        raise CommandError("run_step: target must be a string")
    if TXN.current is not None:
        TXN.current.touch_for_step(target)
    before = set(bpy.data.objects.keys())
    obj = None
    if operation in BUILTINS:
        obj = s_target_object(target)
        BUILTINS[operation](obj, params)
    elif OP_RE.match(operation):
        if target is not None:
            s_select_only(target)
        s_run_operator(operation, params)
    else:
        raise CommandError("unknown operation %s" % operation[:120])
    created = sorted(set(bpy.data.objects.keys()) - before)
    if obj is None:
        active = bpy.context.view_layer.objects.active
        if created and not (active is not None and active.name in created):
            active = bpy.data.objects.get(created[0])
        obj = active
    if name is not None and obj is not None:
        old = obj.name
        obj.name = name          # Blender may answer "name.001": report what it really is
        if old in created:
            created[created.index(old)] = obj.name
    return {"objects_created": created, "object": obj.name if obj is not None else None}, None


def cmd_scene_info(args):
    limit = s_int_arg(args, "limit", 100, 0, 1000)
    offset = s_int_arg(args, "offset", 0, 0, 1 << 31)
    bpy.context.view_layer.update()      # dimensions come from evaluated data
    objs = sorted(bpy.context.scene.objects, key=lambda o: o.name)
    return {"count": len(objs), "objects": [s_obj_dict(o) for o in objs[offset:offset + limit]]}, None


def cmd_object_info(args):
    name = args.get("name")
    if not isinstance(name, str):
        raise CommandError("object_info: name must be a string")
    obj = bpy.context.scene.objects.get(name)
    if obj is None:
        raise CommandError("no object named %s" % name)
    bpy.context.view_layer.update()
    out = s_obj_dict(obj)
    if obj.type == "MESH":
        out["vertices"], out["faces"] = len(obj.data.vertices), len(obj.data.polygons)
    return out, None


def cmd_reset_scene(args):
    s_ensure_object_mode()
    n = len(bpy.data.objects)
    for o in list(bpy.data.objects):
        bpy.data.objects.remove(o, do_unlink=True)
    purged = 0
    for _ in range(4):      # freeing meshes orphans their materials: go round until stable
        removed = 0
        for coll in (bpy.data.meshes, bpy.data.curves, bpy.data.metaballs, bpy.data.lattices,
                     bpy.data.armatures, bpy.data.cameras, bpy.data.lights, bpy.data.materials):
            for block in [b for b in coll if b.users == 0]:
                coll.remove(block)
                removed += 1
        purged += removed
        if not removed:
            break
    return {"objects_removed": n, "data_removed": purged}, None


class s_Settings:
    """Set attributes, remembering the first old value, and put them all back."""

    def __init__(self):
        self.saved = []

    def set(self, owner, attr, value):
        self.saved.append((owner, attr, getattr(owner, attr)))
        setattr(owner, attr, value)

    def restore(self):
        for owner, attr, value in reversed(self.saved):
            try:
                setattr(owner, attr, value)
            except Exception as e:      # keep restoring the rest
                log("could not restore %s: %s" % (attr, e))


def s_add_framing_camera(scene, width, height):
    bpy.context.view_layer.update()
    pts = [o.matrix_world @ Vector(c) for o in scene.objects
           if o.type == "MESH" and o.visible_get() for c in o.bound_box]
    if pts:
        lo = Vector(min(p[i] for p in pts) for i in range(3))
        hi = Vector(max(p[i] for p in pts) for i in range(3))
        center, radius = (lo + hi) / 2, max((hi - lo).length / 2, 0.01)
    else:
        center, radius = Vector((0, 0, 0)), 1.0
    data = bpy.data.cameras.new("blendmq_preview_cam")
    cam = bpy.data.objects.new("blendmq_preview_cam", data)
    scene.collection.objects.link(cam)
    # data.angle spans the longer image side (sensor_fit AUTO); fit the bounding sphere in
    # the shorter one.
    half = math.atan(math.tan(data.angle / 2) * min(width, height) / max(width, height))
    dist = radius / math.sin(half) * 1.05
    direction = Vector((1.0, -1.3, 0.8)).normalized()
    cam.location = center + direction * dist
    cam.rotation_euler = (-direction).to_track_quat("-Z", "Y").to_euler()
    data.clip_start = max(0.001, (dist - radius) * 0.5)
    data.clip_end = dist + radius * 2 + 1
    return cam


def cmd_render_preview(args):
    width = s_int_arg(args, "width", 640, 16, 1920)
    height = s_int_arg(args, "height", 480, 16, 1080)
    scene = bpy.context.scene
    r, shading = scene.render, scene.display.shading
    st = s_Settings()
    tmp = tempfile.mkdtemp(prefix="blendmq-render-")
    cam = None
    try:
        for owner, attr, value in (
                (r, "engine", "BLENDER_WORKBENCH"), (r, "resolution_x", width),
                (r, "resolution_y", height), (r, "resolution_percentage", 100),
                (r, "use_file_extension", True), (r, "film_transparent", False),
                (r, "filepath", os.path.join(tmp, "preview")),
                (r.image_settings, "file_format", "PNG"), (r.image_settings, "color_mode", "RGB"),
                (r.image_settings, "color_depth", "8"), (r.image_settings, "compression", 15),
                (scene.display, "render_aa", "FXAA"),   # 8x AA costs ~2.5x the time for a preview
                (shading, "light", "STUDIO"), (shading, "color_type", "MATERIAL"),
                (scene.view_settings, "view_transform", "Standard"),
                (scene.view_settings, "look", "None")):
            st.set(owner, attr, value)
        if scene.camera is None:
            cam = s_add_framing_camera(scene, width, height)
            st.set(scene, "camera", cam)
        with CAPTURE:
            bpy.ops.render.render(write_still=True)
        path = os.path.join(tmp, "preview.png")
        if not os.path.exists(path):
            raise CommandError("render produced no image: %s" % CAPTURE.text[-500:])
        with open(path, "rb") as f:
            png = f.read()
    finally:
        st.restore()
        if cam is not None:
            data = cam.data
            bpy.data.objects.remove(cam, do_unlink=True)
            bpy.data.cameras.remove(data)
        shutil.rmtree(tmp, ignore_errors=True)
    return {"width": width, "height": height, "bytes": len(png)}, png


def cmd_save_blend(args):
    tmp = tempfile.mkdtemp(prefix="blendmq-save-")
    try:
        path = os.path.join(tmp, "scene.blend")
        with CAPTURE:
            result = bpy.ops.wm.save_as_mainfile(filepath=path, copy=True, compress=False)
        if result != {"FINISHED"} or not os.path.exists(path):
            raise CommandError("save failed: %s" % CAPTURE.text[-500:])
        with open(path, "rb") as f:
            data = f.read()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return {"bytes": len(data)}, data


class s_Flags:
    shutdown = False


def cmd_shutdown(args):
    s_Flags.shutdown = True
    return {}, None


# ---------------------------------------------------------------------------- plan transactions

class s_Transaction:
    """What a plan changed, so a failed plan can put the scene back as it was.

    At plan_begin the names of existing objects, meshes and materials are noted. Before a
    step acts on an object that existed before the plan, its transform, selection, material
    slots and a copy of its mesh (smooth flags and mesh-linked materials live there) are
    saved, once. Rollback deletes what the plan created and restores what it touched."""

    def __init__(self, plan_id):
        self.plan_id = plan_id
        self.objects = set(bpy.data.objects.keys())
        self.meshes = set(bpy.data.meshes.keys())
        self.materials = set(bpy.data.materials.keys())
        vl = bpy.context.view_layer
        self.active = vl.objects.active.name if vl.objects.active else None
        self.selected = [o.name for o in vl.objects.selected]
        self.saved = {}

    def touch(self, obj):
        if obj is None or obj.name not in self.objects or obj.name in self.saved:
            return
        mesh = obj.data.copy() if obj.type == "MESH" and obj.data is not None else None
        self.saved[obj.name] = {
            "location": obj.location.copy(), "rotation": obj.rotation_euler.copy(),
            "scale": obj.scale.copy(), "mesh": mesh,
            "slots": [(slot.link, slot.material) for slot in obj.material_slots],
        }

    def touch_for_step(self, target):
        vl = bpy.context.view_layer
        if target is not None:
            self.touch(vl.objects.get(target))
            return
        self.touch(vl.objects.active)
        for o in vl.objects.selected:
            self.touch(o)

    def rollback(self):
        s_ensure_object_mode()
        removed = [o.name for o in bpy.data.objects if o.name not in self.objects]
        for name in removed:
            bpy.data.objects.remove(bpy.data.objects[name], do_unlink=True)
        restored = []
        for name, st in self.saved.items():
            obj = bpy.data.objects.get(name)
            if obj is None:
                continue
            obj.location, obj.rotation_euler, obj.scale = st["location"], st["rotation"], st["scale"]
            if st["mesh"] is not None:
                changed = obj.data
                obj.data = st["mesh"]
                st["mesh"] = None
                if changed.users == 0:
                    bpy.data.meshes.remove(changed)
            for slot, (link, mat) in zip(obj.material_slots, st["slots"]):
                if link == "OBJECT":
                    slot.link, slot.material = link, mat
            restored.append(name)
        for coll, before in ((bpy.data.meshes, self.meshes), (bpy.data.materials, self.materials)):
            for block in [b for b in coll if b.name not in before and b.users == 0]:
                coll.remove(block)
        vl = bpy.context.view_layer
        for o in list(vl.objects.selected):
            o.select_set(False)
        for name in self.selected:
            if name in vl.objects:
                vl.objects[name].select_set(True)
        vl.objects.active = vl.objects.get(self.active) if self.active else None
        self.discard()
        return {"removed": sorted(removed), "restored": sorted(restored)}

    def discard(self):
        for st in self.saved.values():
            if st["mesh"] is not None and st["mesh"].users == 0:
                bpy.data.meshes.remove(st["mesh"])
                st["mesh"] = None


class TXN:
    current = None


def s_plan_id(args):
    plan_id = args.get("plan_id")
    if not isinstance(plan_id, str) or not plan_id or len(plan_id) > 64:
        raise CommandError("plan_id must be a string of 1..64 characters")
    return plan_id


def cmd_plan_begin(args):
    plan_id = s_plan_id(args)
    if TXN.current is not None:      # a plan the executor lost track of: keep its changes
        TXN.current.discard()
    TXN.current = s_Transaction(plan_id)
    return {"plan_id": plan_id, "objects": len(TXN.current.objects)}, None


def cmd_plan_commit(args):
    plan_id = s_plan_id(args)
    if TXN.current is not None and TXN.current.plan_id == plan_id:
        TXN.current.discard()
        TXN.current = None
    if not bpy.app.background:       # one undo step for the whole plan in the GUI
        try:
            bpy.ops.ed.undo_push(message="blendmq plan %s" % plan_id)
        except RuntimeError:
            pass
    return {"plan_id": plan_id}, None


def cmd_plan_rollback(args):
    plan_id = s_plan_id(args)
    if TXN.current is None or TXN.current.plan_id != plan_id:
        raise CommandError("no open transaction for plan %s" % plan_id)
    txn, TXN.current = TXN.current, None
    return txn.rollback(), None


# ---------------------------------------------------------------------------- benchmark

BENCH_OPS = ("primitive_cube_add", "primitive_uv_sphere_add", "primitive_cone_add", "primitive_cylinder_add")


def cmd_bench_direct(args):
    """The baseline of the pipeline benchmark: the same bpy calls a plan makes, run directly
    in a loop here, timed inside Blender. Only a fixed set of cheap primitives and a bounded
    count: nothing a client sends reaches bpy unchecked."""
    count = s_int_arg(args, "count", 50, 1, 500)
    op = args.get("operation", "primitive_cube_add")
    if op not in BENCH_OPS:
        raise CommandError("bench_direct: operation must be one of %s" % ", ".join(BENCH_OPS))
    fn = getattr(bpy.ops.mesh, op)
    t0 = time.perf_counter()
    for i in range(count):
        fn(location=(float(i), 0.0, 0.0))
    return {"count": count, "operation": "bpy.ops.mesh." + op,
            "direct_ms": (time.perf_counter() - t0) * 1000.0}, None


# ---------------------------------------------------------------------------- RNA introspection

def s_f32(v):
    """The shortest decimal that reads back as the same float32: RNA stores floats in single
    precision, so 0.001 comes out as 0.0010000000474974513; report 0.001."""
    if not (isinstance(v, float) and math.isfinite(v)):
        return v if s_num(v) else None
    try:
        want = struct.unpack("f", struct.pack("f", v))[0]
        for digits in range(6, 10):
            short = float("%.*g" % (digits, v))
            if struct.unpack("f", struct.pack("f", short))[0] == want:
                return short
    except (OverflowError, struct.error):
        pass
    return v


def s_rna_value(v):
    if isinstance(v, float):
        return s_f32(v)
    if isinstance(v, (bool, int, str)) or v is None:
        return v
    if isinstance(v, (set, frozenset)):
        return sorted(v)
    try:
        return [s_rna_value(x) for x in v]
    except TypeError:
        return str(v)


def s_rna_param(p):
    out = {"identifier": p.identifier, "name": p.name, "type": p.type, "subtype": p.subtype,
           "description": p.description, "hidden": bool(p.is_hidden),
           "required": bool(p.is_required)}
    if p.type in ("FLOAT", "INT", "BOOLEAN"):
        out["array_length"] = p.array_length
        out["default"] = s_rna_value(p.default_array if p.array_length else p.default)
    if p.type in ("FLOAT", "INT"):
        for key, attr in (("min", "hard_min"), ("max", "hard_max"),
                          ("soft_min", "soft_min"), ("soft_max", "soft_max")):
            out[key] = s_rna_value(getattr(p, attr))
    if p.type == "ENUM":
        out["enum_flag"] = bool(p.is_enum_flag)
        out["default"] = sorted(p.default_flag) if p.is_enum_flag else p.default
        # Items computed from context (dynamic enums) come back empty here.
        out["enum_items"] = [{"identifier": i.identifier, "name": i.name, "description": i.description}
                             for i in p.enum_items]
    if p.type == "STRING":
        out["default"] = p.default
        out["max_len"] = p.length_max
    return out


def cmd_rna_info(args):
    """One operator's description from Blender's RNA: bpy.ops.X.Y.get_rna_type() (3.4 has no
    bpy.types.X_OT_y for most operators). Read-only: nothing is run."""
    operation = args.get("operation")
    if not isinstance(operation, str) or not operation or len(operation) > 200:
        raise CommandError("rna_info: operation must be a name like bpy.ops.mesh.primitive_cube_add")
    if operation in BUILTINS:
        raise CommandError("%s is a blendmq builtin step (run by the add-on), not a Blender operator: it has"
                           " no RNA; its parameters are in the capability palette" % operation)
    full = operation if operation.startswith("bpy.ops.") else "bpy.ops." + operation
    if not OP_RE.match(full):
        raise CommandError("unknown operator %s: expected bpy.ops.CATEGORY.NAME (lower case)" % operation[:120])
    _bpy, _ops, category, name = full.split(".")
    try:
        rna = getattr(getattr(bpy.ops, category), name).get_rna_type()
    except (AttributeError, KeyError):
        raise CommandError("unknown operator %s: Blender %s has no such operator"
                           % (full, bpy.app.version_string.split(" ")[0]))
    return {"name": full, "identifier": rna.identifier, "label": rna.name,
            "description": rna.description,
            "blender": bpy.app.version_string.split(" ")[0],
            "params": [s_rna_param(p) for p in rna.properties if p.identifier != "rna_type"]}, None


COMMANDS = {
    "ping": cmd_ping, "run_step": cmd_run_step, "scene_info": cmd_scene_info,
    "object_info": cmd_object_info, "reset_scene": cmd_reset_scene,
    "render_preview": cmd_render_preview, "save_blend": cmd_save_blend,
    "shutdown": cmd_shutdown,
    "bench_direct": cmd_bench_direct,
    "plan_begin": cmd_plan_begin, "plan_commit": cmd_plan_commit, "plan_rollback": cmd_plan_rollback,
    "rna_info": cmd_rna_info,
}


# ---------------------------------------------------------------------------- runtimes

def s_write_port_file(path, port):
    tmp = "%s.tmp.%d" % (path, os.getpid())
    with open(tmp, "w") as f:
        f.write("%d\n" % port)
    os.replace(tmp, path)       # readers never see a partial file


def run_background(host, port, token, port_file=None):
    """Serve on the main thread until shutdown or SIGTERM/SIGINT."""
    s_Flags.shutdown = False
    server = None

    def on_request(conn, req, blob, arrival):
        reply, rblob = handle_request(req, arrival)
        conn.send(reply, rblob)
        if s_Flags.shutdown:
            server.stopping = True

    def on_signal(signum, _frame):
        log("signal %d, stopping" % signum)
        server.stopping = True

    server = Server(host, port, token, on_request)
    old = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
    # The C-level handler writes to this fd, so select() returns at once on a signal.
    old_fd = signal.set_wakeup_fd(server.wake_w.fileno(), warn_on_full_buffer=False)
    try:
        if port_file:
            s_write_port_file(port_file, server.port)
        log("listening on %s:%d" % (host, server.port))
        while not server.stopping:
            server.poll()
    finally:
        signal.set_wakeup_fd(old_fd)
        for sig, handler in old.items():
            # None means Blender's own C handler was there, which Python cannot reinstate.
            signal.signal(sig, handler if handler is not None else signal.SIG_DFL)
        server.close()
        if port_file:
            try:
                os.unlink(port_file)    # a stale port file would point at a dead port
            except OSError:
                pass
    log("stopped")


class GuiService:
    """GUI Blender: an I/O thread queues requests; a timer runs them on the main thread."""

    def __init__(self, host, port, token, port_file=None):
        s_Flags.shutdown = False
        self.queue = queue.Queue()
        self.server = Server(host, port, token,
                             lambda conn, req, blob, arrival: self.queue.put((conn, req, arrival)))
        self.tick_fn = self._tick       # one object, so unregister finds it
        self.thread = threading.Thread(target=self._io, name="blendmq-io", daemon=True)
        self.thread.start()
        bpy.app.timers.register(self.tick_fn, first_interval=0.01, persistent=True)
        if port_file:
            s_write_port_file(port_file, self.server.port)
        log("listening on %s:%d" % (host, self.server.port))

    def _io(self):
        try:
            while not self.server.stopping:
                self.server.poll()
        except Exception as e:
            log("I/O thread failed: %s: %s" % (type(e).__name__, e))

    def _tick(self):
        budget_end = time.perf_counter() + 0.05     # keep the UI responsive under a burst
        while time.perf_counter() < budget_end:
            try:
                conn, req, arrival = self.queue.get_nowait()
            except queue.Empty:
                break
            reply, rblob = handle_request(req, arrival)
            conn.send(reply, rblob)
            if s_Flags.shutdown:
                self.stop(from_timer=True)
                return None
        return 0.01

    def stop(self, from_timer=False):
        self.server.stopping = True
        self.server.wake()
        self.thread.join(2.0)
        if not from_timer and bpy.app.timers.is_registered(self.tick_fn):
            bpy.app.timers.unregister(self.tick_fn)
        self.server.close()
        log("stopped")


def s_load_token(token_file=None, token_env="BLENDMQ_TOKEN"):
    if token_file:
        with open(token_file, "r", encoding="utf-8") as f:
            return f.read().strip()
    return os.environ.get(token_env or "BLENDMQ_TOKEN", "").strip()


_service = None


def register():
    global _service
    token = os.environ.get("BLENDMQ_TOKEN", "").strip()
    path = os.path.join(bpy.utils.user_resource("CONFIG"), "blendmq_token")
    if not token and os.path.exists(path):
        token = s_load_token(path)
    if not token:
        log("no token configured (set BLENDMQ_TOKEN or write one to %s); server not started" % path)
        return
    try:
        _service = GuiService(os.environ.get("BLENDMQ_HOST", "127.0.0.1"),
                              int(os.environ.get("BLENDMQ_PORT", "9876")), token)
    except (OSError, ValueError) as e:
        log("cannot start: %s" % e)


def unregister():
    global _service
    if _service is not None:
        _service.stop()
        _service = None


def main(argv):
    import argparse
    p = argparse.ArgumentParser(prog="blendmq_addon.py")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=9876, help="0 picks a free port")
    p.add_argument("--port-file", help="the actual port is written here once listening")
    p.add_argument("--token-file")
    p.add_argument("--token-env", default="BLENDMQ_TOKEN")
    p.add_argument("--reset-scene", action="store_true", help="start from an empty scene")
    opts = p.parse_args(argv[argv.index("--") + 1:] if "--" in argv else [])
    try:
        token = s_load_token(opts.token_file, opts.token_env)
    except OSError as e:
        log("cannot read token file: %s" % e)
        return 1
    if not token:
        log("no token (use --token-file or set %s); not starting" % opts.token_env)
        return 1
    if opts.reset_scene:
        cmd_reset_scene({})
    if bpy.app.background:
        run_background(opts.host, opts.port, token, opts.port_file)
    else:
        global _service
        _service = GuiService(opts.host, opts.port, token, opts.port_file)
    return 0


if __name__ == "__main__":
    if main(sys.argv):
        sys.exit(1)     # make a failed start visible in Blender's exit status
