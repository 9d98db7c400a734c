"""blendmq add-on, headless launcher: runs the blendmq package (the folder next to this file).

  blender -b --factory-startup --python blendmq_addon.py -- \
      --host 127.0.0.1 --port 0 --port-file F --token-file T [--token-env NAME] [--reset-scene]

bpy.app.timers do not fire in background mode once the startup script returns, so the server
serves from its own select() loop on the main thread until `shutdown` or SIGTERM/SIGINT. In a
GUI Blender (no -b) the same command line starts the GUI runtime and the panel instead.

Imported as a module (tests do: importlib on this path), it offers the package's commands
under their old names (cmd_run_step, cmd_rna_info, CommandError, …). There is no hello then, so
the palette's bounds for run_step come from the palette file ($BLENDMQ_PALETTE, else the source
tree's proto/palette.yaml; bounds.load_palette_file); without it bounded steps are refused.
"""
import os
import sys

sys.dont_write_bytecode = True      # keep the source tree free of __pycache__
_here = os.path.dirname(os.path.abspath(__file__))
if _here not in sys.path:
    sys.path.insert(0, _here)

from blendmq import main                                                # noqa: E402,F401
from blendmq.args import CommandError                                   # noqa: E402,F401
from blendmq.commands import COMMANDS, READ_ONLY, cmd_ping, handle_request  # noqa: E402,F401
from blendmq.protocol import ADDON_VERSION, MAX_BLOB, MAX_JSON          # noqa: E402,F401
from blendmq.render import cmd_render_preview, cmd_save_blend, cmd_viewport_screenshot  # noqa: E402,F401
from blendmq.rna import cmd_rna_info                                    # noqa: E402,F401
from blendmq.scene import cmd_object_info, cmd_reset_scene, cmd_scene_info  # noqa: E402,F401
from blendmq.steps import BUILTINS, OP_RE, cmd_run_step                 # noqa: E402,F401
from blendmq.transaction import TXN, cmd_plan_begin, cmd_plan_commit, cmd_plan_rollback  # noqa: E402,F401

if __name__ != "__main__":          # direct calls: no link server, no hello
    from blendmq import bounds                                          # noqa: E402
    bounds.load_palette_file(os.environ.get("BLENDMQ_PALETTE")
                             or os.path.join(_here, "..", "..", "..", "proto", "palette.yaml"))

if __name__ == "__main__":
    if main(sys.argv):
        sys.exit(1)     # make a failed start visible in Blender's exit status
