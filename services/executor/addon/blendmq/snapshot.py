"""snapshot — scene_info and object_info answered without waiting for Blender's main loop.

In a GUI Blender every command waits for a timer tick on the main thread (milliseconds; under
Xvfb much more). Read-only queries instead read a snapshot: plain Python data built on the main
thread, published by one attribute assignment, read by the I/O thread, which never touches
bpy. Every change notice (depsgraph update, undo, redo, file load, and every command that is
not read-only) bumps `generation`; a snapshot is fresh while its generation is the current one.
A stale snapshot is rebuilt on the main thread: when a query finds it stale (the query then
waits for the main thread, like any command) or, in an idle tick, ahead of the next query.
The replies are the same as cmd_scene_info's and cmd_object_info's, key for key; the I/O
thread sends a well-formed query's reply from results encoded once per snapshot (JSON encoding
is most of what a query costs)."""
import json
import struct
import threading
import time

import bpy

from .args import CommandError
from .protocol import MAX_JSON
from .scene import s_names_reply, s_object_info_dict, s_object_name, s_page, scene_boxes

ENCODED_MAX = 256       # encoded results kept per snapshot (pages and objects asked for)


class SceneData:
    """One snapshot: objects by name (sorted), each as object_info reports it."""

    def __init__(self, generation, objects, boxes=None):
        self.generation = generation
        self.objects = objects                      # [(name, scene_info dict, object_info dict)]
        self.boxes = boxes or []                    # scene.scene_boxes of the same objects
        self.by_name = {name: info for name, _entry, info in objects}
        self.encoded = {}                           # (cmd, key) → result JSON bytes (I/O thread)

    def reply_frame(self, req, arrival):
        """The whole reply frame for a well-formed query, from results encoded once per
        snapshot (encoding is most of a query's cost); None for anything else, which then
        goes through handle_request and gets its usual reply or error. The bytes are what
        protocol.encode makes of handle_request's reply."""
        rid, cmd, args, deadline = req.get("id"), req.get("cmd"), req.get("args", {}), req.get("deadline_ms")
        if not isinstance(rid, int) or isinstance(rid, bool):
            return None
        if isinstance(deadline, (int, float)) and not isinstance(deadline, bool) and deadline > 0 \
                and time.monotonic() > arrival + deadline / 1000.0:
            return None
        args = {} if args is None else args
        if not isinstance(args, dict):
            return None
        t0 = time.perf_counter()
        if cmd == "scene_info":
            limit, offset = args.get("limit", 100), args.get("offset", 0)
            if not all(isinstance(v, int) and not isinstance(v, bool) for v in (limit, offset)):
                return None
            key = (min(max(limit, 0), 1000), min(max(offset, 0), 1 << 31))
            result = lambda: self.scene_info(args)[0]          # noqa: E731
        elif cmd == "object_info":
            key = args.get("name")
            if not isinstance(key, str) or key not in self.by_name:
                return None
            result = lambda: self.by_name[key]                 # noqa: E731
        else:
            return None
        text = self.encoded.get((cmd, key))
        if text is None:
            text = json.dumps(result(), separators=(",", ":"), allow_nan=False).encode("utf-8")
            if len(self.encoded) < ENCODED_MAX:
                self.encoded[(cmd, key)] = text
        if len(text) > MAX_JSON - 128:
            return None
        bpy_ms = (time.perf_counter() - t0) * 1000.0
        js = b'{"id":%d,"ok":true,"result":%s,"bpy_ms":%s}' % (rid, text, repr(bpy_ms).encode("ascii"))
        return struct.pack(">II", len(js), 0) + js

    def scene_info(self, args):
        limit, offset = s_page(args)
        page = self.objects[offset:offset + limit]
        return {"count": len(self.objects), "objects": [entry for _name, entry, _info in page]}, None

    def scene_names(self, args):
        reply = s_names_reply([name for name, _entry, _info in self.objects])
        reply["boxes"] = self.boxes
        return reply, None

    def object_info(self, args):
        name = s_object_name(args)
        info = self.by_name.get(name)
        if info is None:
            raise CommandError("no object named %s" % name)
        return dict(info), None


class SceneSnapshot:
    """The current SceneData and whether it is still true."""

    SCENE_KEYS = ("name", "type", "location", "rotation", "scale", "dimensions", "materials")

    def __init__(self):
        self.generation = 1
        self.data = None
        self.build_ms = 0.0
        self.build_cpu_ms = 0.0
        self.rebuilt = threading.Condition()    # notified by every rebuild (wait_fresh)

    def invalidate(self, *_args):
        self.generation += 1        # main thread only: no lost updates

    def fresh(self):
        """The snapshot if nothing changed since it was built, else None (any thread)."""
        data = self.data
        return data if data is not None and data.generation == self.generation else None

    def wait_fresh(self, timeout):
        """I/O thread: the snapshot once it is fresh again, waiting at most `timeout` seconds
        for the main thread's rebuild (a change notice rebuilds it at once when that is cheap);
        None when it is still stale."""
        with self.rebuilt:
            self.rebuilt.wait_for(lambda: self.fresh() is not None, timeout)
        return self.fresh()

    def rebuild(self, update=True, keep_if_same=False):
        """Main thread: read the scene now (update: evaluate the view layer first; not from a
        depsgraph handler, which runs right after an evaluation). Returns the new SceneData.

        keep_if_same (a change notice, issue 28): the snapshot is not marked stale first; the
        scene is read, and when what the snapshot says is unchanged (a redraw's evaluation of
        the state a write already published) the fresh snapshot stays as it is, so a read in
        flight never waits for a rebuild that changes nothing. Otherwise the new data is
        published under a new generation. A read meanwhile gets the snapshot as it was before
        the notice, as if it had come a moment earlier."""
        t0 = time.perf_counter()
        if update:
            bpy.context.view_layer.update()      # dimensions come from evaluated data
        c0 = time.thread_time()             # the read alone: a change notice's rebuild does no update()
        generation = self.generation         # after update(): its own depsgraph notice is included
        objects = []
        ordered = sorted(bpy.context.scene.objects, key=lambda o: o.name)
        for o in ordered:
            info = s_object_info_dict(o)
            entry = {k: info[k] for k in self.SCENE_KEYS}
            objects.append((o.name, entry, info))
        boxes = scene_boxes(ordered)
        with self.rebuilt:
            cur = self.data
            if keep_if_same and cur is not None and cur.generation == generation \
                    and cur.objects == objects and cur.boxes == boxes:
                data = cur
            else:
                if keep_if_same and cur is not None and cur.generation == generation:
                    self.generation = generation = generation + 1      # the change, published at once
                data = SceneData(generation, objects, boxes)
                self.data = data
            self.rebuilt.notify_all()
        self.build_ms = (time.perf_counter() - t0) * 1000.0
        # what reading the scene costs this thread, without the waits of a loaded machine and
        # without the evaluation update() may do: the cheap or costly decisions
        # (gui.EAGER_REBUILD_MAX_MS, NOTICE_REBUILD_MAX_MS) use this
        self.build_cpu_ms = (time.thread_time() - c0) * 1000.0
        return data

    def table(self, data):
        """A command table for handle_request answering from `data`."""
        return {"scene_info": data.scene_info, "object_info": data.object_info, "scene_names": data.scene_names}
