"""blendmq — the Blender side of blendmq: a small, authenticated, length-prefixed command
server inside Blender that runs validated plan steps, plus (in a GUI Blender) an N-panel.

Two ways to run:
  * headless (`blendmq up`): services/executor/addon/blendmq_addon.py, a launcher next to this
    package, calls main():
        blender -b --factory-startup --python blendmq_addon.py -- \\
            --host 127.0.0.1 --port 0 --port-file F --token-file T [--token-env NAME] [--reset-scene]
    and the server runs its own loop on the main thread (background.py).
  * GUI add-on: build/blendmq-addon.zip, installed from Preferences → Add-ons → Install.
    register() adds the panel (View3D → Sidebar → blendmq) and, unless turned off, starts the
    server: an I/O thread plus a timer on the main thread (gui.py).

Modules, one concept each:
  protocol    frames, limits, the wire format      server      socket, client slot, hello
  commands    the command table, request → reply   background  the headless loop
  gui         the GUI runtime (I/O thread, timer)  snapshot    read-only queries off the main thread
  steps       run_step: builtins and bpy.ops       scene       scene_info, object_info, reset_scene
  transaction atomic plans, one undo step per plan render      render_preview, viewport_screenshot, save_blend
  rna         rna_info                             bench       bench_direct
  settings    preferences + environment            tokens      the shared token
  panel       the N-panel and its operators        gateway_client  prompts to the gateway (HTTP)
  plan_run    run_plan: a plan's steps back to back look        contact sheet and topology numbers
  asset_stage   asset_stage: bundles (one frame or chunks) checked and kept in memory
  asset_import  the asset.import step (importers)
  args, capture, log: argument checks, Blender's stdout during a call, logging.
"""

bl_info = {
    "name": "blendmq",
    "author": "blendmq",
    "version": (0, 2, 0),
    "blender": (3, 4, 0),
    "location": "View3D > Sidebar > blendmq",
    "description": "Runs validated blendmq plans in this Blender (one undo step each) and sends prompts to the blendmq gateway",
    "category": "System",
}

import sys

import bpy

from . import durable, gui, panel, settings
from .background import run_background
from .log import log
from .scene import cmd_reset_scene
from .tokens import load_token


def register():
    panel.register()
    if settings.current().autostart:
        gui.start_configured()


def unregister():
    from . import gateway_client
    gui.stop()
    gateway_client.forget()
    panel.unregister()


def main(argv):
    """The launcher's entry: serve with the command line's settings. 0, or 1 on a bad start."""
    import argparse
    p = argparse.ArgumentParser(prog="blendmq_addon.py")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=9876, help="0 picks a free port")
    p.add_argument("--port-file", help="the actual port is written here once listening")
    p.add_argument("--socket", help="serve on this unix socket (0600) instead of TCP")
    p.add_argument("--token-file")
    p.add_argument("--token-env", default="BLENDMQ_TOKEN")
    p.add_argument("--reset-scene", action="store_true",
                   help="start from an empty scene (unless --state-dir holds a committed one)")
    p.add_argument("--state-dir", help="commits are saved here before they are acknowledged, and the "
                                       "last one is loaded at start (issue 23)")
    opts = p.parse_args(argv[argv.index("--") + 1:] if "--" in argv else [])
    try:
        token = load_token(opts.token_file, opts.token_env)
    except OSError as e:
        log("cannot read token file: %s" % e)
        return 1
    if not token:
        log("no token (use --token-file or set %s); not starting" % opts.token_env)
        return 1
    durable.configure(opts.state_dir)
    if durable.load_at_start() is None and opts.reset_scene:
        cmd_reset_scene({})
    if bpy.app.background:
        run_background(opts.host, opts.port, token, opts.port_file, opts.socket)
    else:       # a GUI Blender started with the launcher: the panel too, the server as asked
        panel.register()
        if gui.start(opts.host, opts.port, token, opts.port_file) is None:
            return 1
    return 0


if __name__ == "__main__":
    if main(sys.argv):
        sys.exit(1)
