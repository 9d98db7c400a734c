# expect: static builtin
# SystemExit ends the live Blender (or is caught by an embedding that then misbehaves)
import bpy
raise SystemExit(0)
