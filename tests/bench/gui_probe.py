"""gui_probe — loaded by bench_gui_plan into its GUI Blender, after the add-on's launcher:

  blender --python blendmq_addon.py --python gui_probe.py -- --port 0 ...
  (environment: BMQ_BENCH_PROBE_PORT_FILE, where the probe writes its port)

The executor holds the add-on's only client slot while a plan runs, so the main loop's counters
are read here instead: every connection to 127.0.0.1:<port> gets one JSON line and is closed,
  {"ticks": the add-on's timer passes (gui.GuiService.ticks),
   "busy_ticks": the passes that ran at least one main-thread request,
   "redraws": 3D viewport region redraws (a POST_PIXEL draw handler counts them)}
(-1 for the add-on's counters while its service is not running). The probe's thread reads plain
integers only and never touches bpy; it takes no input."""
import json
import os
import socket
import sys
import threading

import bpy

COUNTS = {"redraws": 0}


def s_on_draw():
    COUNTS["redraws"] += 1


def s_counters():
    gui = sys.modules.get("blendmq.gui")
    svc = getattr(gui, "SERVICE", None)
    return {"ticks": int(getattr(svc, "ticks", -1)), "busy_ticks": int(getattr(svc, "busy_ticks", -1)),
            "redraws": COUNTS["redraws"]}


def s_serve(listener):
    while True:
        try:
            conn, _addr = listener.accept()
        except OSError:
            return
        with conn:
            try:
                conn.settimeout(2.0)
                conn.sendall(json.dumps(s_counters()).encode("ascii") + b"\n")
            except OSError:
                pass


def s_start():
    port_file = os.environ.get("BMQ_BENCH_PROBE_PORT_FILE")
    if not port_file:
        print("gui_probe: BMQ_BENCH_PROBE_PORT_FILE is not set: not started", file=sys.stderr)
        return
    bpy.types.SpaceView3D.draw_handler_add(s_on_draw, (), "WINDOW", "POST_PIXEL")
    listener = socket.create_server(("127.0.0.1", 0), backlog=4)
    threading.Thread(target=s_serve, args=(listener,), name="bench-probe", daemon=True).start()
    tmp = port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % listener.getsockname()[1])
    os.replace(tmp, port_file)      # the bench never reads half a port


s_start()
